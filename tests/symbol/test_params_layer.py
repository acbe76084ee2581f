"""``kvcli viz/summary`` read ``.params`` files through the values layer's codec
(:mod:`kvcli.arrays.mxparams`), not the MXNet layer: reading one loads a handful of modules,
none of ``kvcli.mx``, the optimizers, the engine or the session; and a session's weights
(``--session``) are checked against a graph as a file's are, keys with or without ``arg:``/``aux:``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from kvcli.symbol.params import Weights, load_params
from kvcli.symbol.pipeline import summarize_file
from kvcli.symbol.viewer.weights import params_data

DATA = Path(__file__).resolve().parents[1] / "data" / "mxnet_checkpoint"


def test_reading_a_params_file_loads_no_layer_above_the_values() -> None:
    code = ("import json, sys; from kvcli.symbol.params import load_params; before = set(sys.modules); "
            "found = load_params(sys.argv[1]); "
            "print(json.dumps([sorted(set(sys.modules) - before), sorted(found)]))")
    out = subprocess.run([sys.executable, "-c", code, str(DATA / "small_cnn-0000.params")], capture_output=True,
                         text=True, check=True).stdout
    loaded, names = json.loads(out)
    assert len(names) == 10 and "fc1_weight" in names
    above = [m for m in loaded if m.startswith(("kvcli.mx", "kvcli.optim", "kvcli.store", "kvcli.session", "kvcli.cli"))]
    assert above == []
    assert len([m for m in loaded if m.startswith("kvcli")]) <= 8


def test_a_sessions_weights_check_as_the_file_does_with_or_without_prefixes() -> None:
    tensors = load_params(DATA / "small_cnn-0000.params")
    # half the keys as load-params names them, half without the prefix
    arrays = [(t.key if i % 2 else t.name, t.value) for i, t in enumerate(tensors.values())]
    versions = {key: 3 if key.endswith("fc1_weight") else 1 for key, _ in arrays}
    weights = Weights("session 'cnn'", arrays, versions)
    found = summarize_file(DATA / "small_cnn-symbol.json", shape=["data=1,1,8,8"], params=weights)
    assert found.params is not None and found.params.ok and found.params.matched == 10
    assert found.params.lines() == ["session 'cnn': all 10 parameters and auxiliary states match the graph's shapes"]
    assert found.params.versions["fc1_weight"] == 3 and set(found.params.versions.values()) == {1, 3}
    page = params_data(found.params)
    assert page["file"] == "session 'cnn'" and page["versions"]["fc1_weight"] == 3


def test_a_sessions_missing_and_extra_weights_are_named() -> None:
    tensors = load_params(DATA / "small_cnn-0000.params")
    arrays = [(t.key, t.value) for t in tensors.values() if t.name != "fc2_bias"]
    arrays.append(("w", np.zeros(3, np.float32)))
    found = summarize_file(DATA / "small_cnn-symbol.json", shape=["data=1,1,8,8"],
                           params=Weights("session 'cnn'", arrays))
    assert found.params is not None and not found.params.ok
    assert found.params.lines() == ["session 'cnn': missing parameter 'fc2_bias' (3)",
                                    "session 'cnn': extra array 'w' (3): not in the graph"]
