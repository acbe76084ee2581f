"""The command-line layer's structure: its dispatch core is a leaf of the package (imports
inside functions count), and the typer app's start-up does not build the optimizer
list of ``set-updater``'s help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.test_architecture import import_graph

from .conftest import Runner, kvcli_env

def test_the_dispatch_core_is_a_leaf() -> None:
    """(No import cycle anywhere in kvcli, the cli package's included: tests/test_architecture.py.)"""
    graph = import_graph()
    cli = {name for name in graph if name.startswith("kvcli.cli.")}
    assert graph["kvcli.cli.core"] & cli <= {"kvcli.cli.output", "kvcli.cli.table"}
    assert not graph["kvcli.cli.output"] & cli and not graph["kvcli.cli.table"] & cli


def test_building_the_app_does_not_import_the_optimizers(tmp_path: Path) -> None:
    probe = ("import sys; from kvcli.cli.build import root_command; root_command(); "
             "print('kvcli.optim.spec' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], env=kvcli_env(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_set_updater_help_still_lists_the_optimizers(kv: Runner) -> None:
    for args in (("set-updater", "--help"), ("help", "set-updater")):
        shown = kv(*args)
        assert shown.code == 0, shown.err
        text = " ".join(shown.out.split())
        assert "nag lr=0.01 momentum=0" in text and "adam lr=0.001 beta1=0.9" in text, args
