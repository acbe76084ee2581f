"""The optimizer layer runs without the MXNet layer: it never imports kvcli.mx; SGLD's noise
comes from the random streams both share; a user optimizer gets NDArrays from views the
MXNet layer installs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.errors import UpdaterError
from kvcli.optim.spec import parse_updater

ROOT = Path(__file__).resolve().parents[2]

_SGLD_WITHOUT_MX = """
import json, sys
import numpy as np
from kvcli.optim.spec import parse_updater
sgld = parse_updater("sgld:lr=0.5")
weight = np.ones(4, np.float32)
sgld(0, np.full(4, 0.25, np.float32), weight)
print(json.dumps({"loaded_mx": any(m == "kvcli.mx" or m.startswith("kvcli.mx.") for m in sys.modules),
                  "weight": weight.tolist()}))
"""


def _run(code: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def test_sgld_runs_without_the_mxnet_layer_and_draws_mx_random_stream() -> None:
    alone = _run(_SGLD_WITHOUT_MX)
    assert alone["loaded_mx"] is False
    # the same update here, after mx.random.seed(0) (a fresh process's streams start from seed 0)
    mx.random.seed(0)
    sgld = parse_updater("sgld:lr=0.5")
    weight = np.ones(4, np.float32)
    sgld(0, np.full(4, 0.25, np.float32), weight)
    assert alone["weight"] == weight.tolist()
    # and the noise is a normal draw of scale sqrt(lr) from cpu(0)'s stream, as nd.random's
    mx.random.seed(0)
    noise = mx.nd.random.normal(0, np.sqrt(0.5), shape=(4,)).asnumpy()
    expected = np.ones(4, np.float32) + np.float32(-0.25) * np.float32(0.25) + noise
    np.testing.assert_array_equal(weight, expected.astype(np.float32))


def test_sgld_noise_follows_the_current_context() -> None:
    mx.random.seed(3)
    with mx.cpu(1):
        sgld = parse_updater("sgld:lr=0.5")
        weight = np.zeros(3, np.float32)
        sgld(0, np.zeros(3, np.float32), weight)
    mx.random.seed(3)
    drawn = mx.nd.random.normal(0, np.sqrt(0.5), shape=(3,), ctx=mx.cpu(1)).asnumpy()
    np.testing.assert_array_equal(weight, drawn)


def test_user_optimizer_without_the_mxnet_layer_is_refused_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    from kvcli.optim import views
    from kvcli.optim.base import Optimizer

    class Halve(Optimizer):
        def update(self, index, weight, grad, state):  # type: ignore[no-untyped-def]
            weight[:] = weight - 0.5 * grad

    monkeypatch.setattr(views, "_installed", [])
    with pytest.raises(UpdaterError, match=r"subclass kvcli.mx.optimizer.Optimizer"):
        Halve()(0, np.ones(2, np.float32), np.ones(2, np.float32))


def test_user_optimizer_sees_ndarrays() -> None:
    seen = []

    class Halve(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):  # type: ignore[no-untyped-def]
            seen.append((type(weight), type(grad)))
            weight[:] = weight - 0.5 * grad

    stored = np.ones(2, np.float32)
    Halve()(0, np.full(2, 0.5, np.float32), stored)
    assert seen == [(mx.nd.NDArray, mx.nd.NDArray)]
    np.testing.assert_array_equal(stored, [0.75, 0.75])


_USER_MODULE = """
from kvcli.optim.base import Optimizer

SEEN = []


class Halve(Optimizer):
    def update(self, index, weight, grad, state):
        SEEN.append(type(weight).__module__ + "." + type(weight).__name__)
        weight[:] = weight - 0.5 * grad
"""


def test_user_optimizer_pickled_to_a_process_without_mx_brings_its_views(tmp_path: Path) -> None:
    """A dist server unpickles the user's optimizer without ever importing kvcli.mx itself:
    the optimizer names its NDArray views, so unpickling loads them."""
    (tmp_path / "userop.py").write_text(_USER_MODULE)
    blob = tmp_path / "opt.pickle"
    make = ("import pickle, kvcli.mx, userop\n"
            f"pickle.dump(userop.Halve(learning_rate=0.1), open({str(blob)!r}, 'wb'))\n"
            "print('{}')")
    use = ("import json, pickle, sys\nimport numpy as np\nimport userop\n"
           "before = 'kvcli.mx' in sys.modules\n"
           f"opt = pickle.load(open({str(blob)!r}, 'rb'))\n"
           "weight = np.ones(2, np.float32)\nopt(0, np.full(2, 0.5, np.float32), weight)\n"
           "print(json.dumps({'before': before, 'seen': userop.SEEN, 'weight': weight.tolist()}))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    subprocess.run([sys.executable, "-c", make], check=True, env=env, capture_output=True)
    done = subprocess.run([sys.executable, "-c", use], check=True, env=env, capture_output=True, text=True)
    got = json.loads(done.stdout)
    assert got == {"before": False, "seen": ["kvcli.mx.ndarray.ndarray.NDArray"], "weight": [0.75, 0.75]}
