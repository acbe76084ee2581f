"""Write ``mxnet_training_loops_reference.json``: the final weights of MXNet 1.9.1 after the
training loops of ``tools/mxnet_training_loops.py`` (model.py's and gluon.Trainer's KVStore
call patterns; 8 patterns x local/device x sgd/adam/nag, 20 steps on two CPU devices) and of
its per-device Adam example (two ``get_updater`` on cpu(0) and cpu(1), three steps).

Run with MXNet's own interpreter (kvcli never imports MXNet), from the repository root::

    /path/to/mxnet-1.9.1/python tests/data/make_mxnet_training_loops_reference.py

The loops are kvcli's own code (tools/), the numbers MXNet's; tests/optim/test_training_loops.py
replays them on kvcli.mx.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import mxnet as mx

HERE = Path(__file__).resolve().parent
OUT = HERE / "mxnet_training_loops_reference.json"
TOOL = HERE.parent.parent / "tools" / "mxnet_training_loops.py"


def main() -> None:
    spec = importlib.util.spec_from_file_location("mxnet_training_loops", TOOL)
    assert spec is not None and spec.loader is not None
    loops = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loops  # its dataclasses look their module up
    spec.loader.exec_module(loops)
    results = loops.run_all(mx)
    failed = {k: v["error"] for k, v in results["runs"].items() if "error" in v}
    if failed:
        raise SystemExit(f"MXNet failed runs: {failed}")
    results = {"mxnet_version": mx.__version__, "steps": loops.STEPS, "num_devices": loops.NUM_DEVICES, **results}
    OUT.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {OUT} ({len(results['runs'])} runs)")


if __name__ == "__main__":
    main()
