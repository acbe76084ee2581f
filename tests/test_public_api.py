"""`import kvcli` is light and shows only its public API; errors, Session and
device_array come on first use."""

from __future__ import annotations

import subprocess
import sys


def test_dir_shows_only_the_public_api() -> None:
    import kvcli
    import kvcli.errors

    names = set(dir(kvcli))
    assert {"create", "KVStore", "Session", "device_array", "errors", "KVCliError", "StoreError"} <= names
    assert not names & {"Any", "TYPE_CHECKING", "annotations", "importlib"}
    assert kvcli.StoreError is kvcli.errors.StoreError and kvcli.Session.__name__ == "Session"


def test_import_kvcli_loads_no_numpy() -> None:
    code = "import sys, kvcli; print('numpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
