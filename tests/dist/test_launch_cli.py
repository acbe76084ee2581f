"""``kvcli launch -n W -- python script.py`` and the example, end to end on Ray."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

import typer  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from kvcli.cli import launch_cmd  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(150)]

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import numpy as np
    import kvcli

    with kvcli.create("dist_sync") as kv:
        kv.init("w", np.zeros(2))
        kv.push("w", np.full(2, kv.rank + 1.0))
        value = kv.pull("w").tolist()
        with open(os.path.join(sys.argv[1], f"rank{kv.rank}.json"), "w") as handle:
            json.dump({"rank": kv.rank, "num_workers": kv.num_workers, "value": value}, handle)
        kv.barrier()
        print(f"worker {kv.rank} done")
    sys.exit(int(sys.argv[2]) if kv.rank == 1 else 0)
    """
)


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """kvcli (the launch command alone, as app.py registers it)."""

    launch_cmd.register(app)
    return app


@pytest.mark.parametrize("exit_code", [0, 3])
def test_launch_runs_the_command_on_w_ranks(ray_cluster, tmp_path, exit_code):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    result = CliRunner().invoke(
        _app(), ["launch", "-n", "2", "--servers", "2", "--", sys.executable, str(script), str(tmp_path), str(exit_code)]
    )
    assert result.exit_code == exit_code, result.output
    for rank in range(2):
        record = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert record == {"rank": rank, "num_workers": 2, "value": [3.0, 3.0]}


def test_example_two_workers_converge_to_one_worker(ray_cluster, monkeypatch):
    # The Ray workers find examples/ through PYTHONPATH (conftest.py); this process too:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "examples"))
    import dist_linear_regression as example

    two = example.train(2, steps=60)
    one = example.train(1, steps=60)
    assert np.array_equal(two, one)
    _, _, w_true = example.make_data()
    assert np.abs(two - w_true).max() < 0.05


def test_readme_launch_block_runs_the_worker_example(tmp_path):
    # the dist blocks of README.md and docs/ are skipped by tests/cli/test_readme.py and run here, as written
    from tests.cli.test_readme import REPO, doc_blocks, run_block

    blocks = [b for b in doc_blocks() if b.kind == "dist"]
    assert blocks and all("kvcli launch" in b.body for b in blocks)
    for block in blocks:
        result = run_block(block, REPO, tmp_path)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "2 workers: w = [" in result.stdout  # rank 0's line, once: the job ran once
        assert result.stdout.count("workers: w =") == 1


def test_json_launch_to_a_pipe_is_json_without_ray_decorations(tmp_path):
    from tests.runner import run_kvcli

    result = run_kvcli("--json", "launch", "-n", "2", "--", sys.executable, "-c", "print('hello from a rank')",
                       home=tmp_path, cwd=tmp_path, timeout=140)
    assert result.returncode == 0, result.stderr
    # stdout is the one JSON line; the workers' output went to stderr
    assert json.loads(result.stdout) == {"num_workers": 2, "servers": 1, "exit_codes": [0, 0], "failed_ranks": []}
    assert sum("hello from a rank" in line for line in result.stderr.splitlines()) == 2
    assert "\x1b[" not in result.stdout + result.stderr  # no colour codes in a pipe
    assert "Token authentication is enabled" not in result.stderr


def test_a_one_shot_dist_command_without_a_cluster_shows_ray_starting(tmp_path):
    # on a terminal: the one-line note naming `kvcli cluster up`, then a spinner whose seconds
    # count up while Ray starts (it took 16-27 s on a busy 2-core machine, said to be ~10 s)
    pexpect = pytest.importorskip("pexpect")
    from tests.runner import KVCLI, kvcli_env

    env = kvcli_env(tmp_path, TERM="xterm", KVCLI_DIST_IDLE="0")
    env.pop("NO_COLOR")
    child = pexpect.spawn(str(KVCLI), ["--type", "dist_sync", "init", "k", "ones(3)"], env=env,
                          encoding="utf-8", timeout=140, dimensions=(40, 250))
    child.expect("this command starts a Ray runtime of its own")
    child.expect("`kvcli cluster up` keeps one running")
    child.expect(r"starting a Ray runtime for this command \(5 to 30 s[^)]*\)\S* \S*[2-9] s")  # counting
    child.expect("initialised key k")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
