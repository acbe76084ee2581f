"""Generated symbol graphs of any size, for the tests and for ``bench/scale.py``."""

from __future__ import annotations

from pathlib import Path


def unrolled(steps: int, layers: int = 1) -> dict:
    """An unrolled RNN-like graph: l{L}_t{T} = tanh(FC(prev) + x) with auto-named adds."""
    nodes = [{"op": "null", "name": "data", "inputs": []}]
    prev = {layer: 0 for layer in range(layers)}
    for t in range(steps):
        below = 0
        for layer in range(layers):
            nodes.append({"op": "null", "name": f"l{layer}_t{t}_w_weight", "inputs": []})
            nodes.append({"op": "FullyConnected", "name": f"l{layer}_t{t}",
                          "attrs": {"num_hidden": "8", "no_bias": "True"},
                          "inputs": [[prev[layer], 0, 0], [len(nodes) - 1, 0, 0]]})
            nodes.append({"op": "elemwise_add", "name": f"_plus{len(nodes)}",
                          "inputs": [[len(nodes) - 1, 0, 0], [below, 0, 0]]})
            nodes.append({"op": "Activation", "name": f"activation{len(nodes)}",
                          "attrs": {"act_type": "tanh"}, "inputs": [[len(nodes) - 1, 0, 0]]})
            prev[layer] = below = len(nodes) - 1
    return {"nodes": nodes, "heads": [[len(nodes) - 1, 0, 0]]}


def big_chain(path: Path, target_bytes: int) -> int:
    """A valid chain graph of about ``target_bytes`` (relu after relu), written streaming."""
    line = ',\n{"op": "Activation", "name": "activation_layer_%07d", "attrs": {"act_type": "relu"}, "inputs": [[%d, 0, 0]]}'
    n = target_bytes // (len(line) + 6)
    with path.open("w", encoding="utf-8") as f:
        f.write('{"nodes": [{"op": "null", "name": "data", "inputs": []}')
        f.writelines(line % (i, i - 1) for i in range(1, n))
        f.write('], "heads": [[%d, 0, 0]]}' % (n - 1))
    return n


def fan_in(n: int) -> dict:
    """``n`` inputs summed by one ``add_n`` node."""
    nodes = [{"op": "null", "name": f"x{i}", "inputs": []} for i in range(n)]
    nodes.append({"op": "add_n", "name": "sum", "attrs": {"num_args": str(n)},
                  "inputs": [[i, 0, 0] for i in range(n)]})
    return {"nodes": nodes, "heads": [[n, 0, 0]]}


def long_name(length: int) -> dict:
    """data -> relu named with ``length`` letters -> FullyConnected(3)."""
    return {"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "Activation", "name": "a" * length, "attrs": {"act_type": "relu"}, "inputs": [[0, 0, 0]]},
        {"op": "null", "name": "fc_weight", "inputs": []},
        {"op": "null", "name": "fc_bias", "inputs": []},
        {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "3"},
         "inputs": [[1, 0, 0], [2, 0, 0], [3, 0, 0]]}],
        "heads": [[4, 0, 0]]}


def distinct_chain(n: int) -> dict:
    """data -> ``n`` relu nodes named ``act{i}x`` (no two alike: nothing folds)."""
    spec = {"nodes": [{"op": "null", "name": "data", "inputs": []}], "heads": [[n, 0, 0]]}
    for i in range(n):
        spec["nodes"].append({"op": "Activation", "name": f"act{i}x", "attrs": {"act_type": "relu"},
                              "inputs": [[i, 0, 0]]})
    return spec
