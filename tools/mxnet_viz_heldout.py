"""Held-out differential check of kvcli's visualisation half against real MXNet 1.9.1.

Models the test suite does not use (gluon model zoo networks exported untrained, and graphs
built with ``mx.sym`` from less common operators) are recorded with MXNet, then replayed on
kvcli, and every answer is compared exactly:

1. ``mx.viz.print_summary(sym, shape=...)``: the printed table, line by line;
2. ``mx.viz.plot_network(sym, ...).source`` (the graphviz source) with and without shapes,
   with ``hide_weights=False``, ``save_format``, ``node_attrs`` and ``title``;
3. ``sym.infer_shape(...)``, ``list_arguments()`` / ``list_outputs()`` /
   ``list_auxiliary_states()``, and ``tojson()`` of the loaded symbol; the hand-built graphs
   are also built with ``kvcli.mx.sym`` by the same builder, and their JSON compared;
4. ``kvcli summary MODEL-symbol.json --shape ... --json`` totals against MXNet's
   ``print_summary`` "Total params" and the sum of MXNet's ``infer_shape`` argument sizes.

    .venv/bin/python tools/mxnet_viz_heldout.py --mxnet-python /path/to/mxnet/python   # record, then compare
    /path/to/mxnet/python tools/mxnet_viz_heldout.py --framework mxnet --record DIR   # record only
    .venv/bin/python tools/mxnet_viz_heldout.py --record DIR                           # compare a record

The MXNet side runs only in the MXNet Python given; kvcli never imports mxnet. This is a
measuring tool, not part of the test suite; the differences it found are pinned by tests
that read ``tests/data/``.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent

# gluon model zoo networks (name, input shape); none of them is in tests/data/
ZOO = [
    ("vgg11_bn", (1, 3, 224, 224)),
    ("alexnet", (1, 3, 224, 224)),
    ("squeezenet1.1", (1, 3, 224, 224)),
    ("mobilenetv2_1.0", (1, 3, 224, 224)),
    ("mobilenetv2_0.25", (2, 3, 160, 160)),
    ("resnet18_v2", (1, 3, 224, 224)),
    ("resnet34_v1", (1, 3, 224, 224)),
    ("densenet121", (1, 3, 224, 224)),
    ("inceptionv3", (1, 3, 299, 299)),
]


def deconv_leaky(sym: Any) -> tuple[Any, dict[str, tuple[int, ...]]]:
    """Deconvolution (adj, target_shape, no_bias), every LeakyReLU act_type, global and 'full'
    pooling, Concat, SliceChannel and broadcast ops."""
    data = sym.Variable("data")
    d1 = sym.Deconvolution(data, kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_filter=8, name="up1")
    d2 = sym.Deconvolution(data, kernel=(3, 3), stride=(2, 2), adj=(1, 1), pad=(1, 1), num_filter=4,
                           no_bias=True, name="up2")
    d3 = sym.Deconvolution(data, kernel=(3, 3), stride=(2, 2), target_shape=(16, 16), num_filter=4,
                           name="up3")
    acts = [sym.LeakyReLU(d1, act_type="leaky", slope=0.1, name="lrelu"),
            sym.LeakyReLU(d1, act_type="elu", name="elu"),
            sym.LeakyReLU(d1, act_type="prelu", name="prelu"),
            sym.LeakyReLU(d1, act_type="selu", name="selu"),
            sym.LeakyReLU(d1, act_type="gelu", name="gelu"),
            sym.LeakyReLU(d1, act_type="rrelu", name="rrelu")]
    acts[-1] = sym.broadcast_mul(acts[-1][0], acts[-1][1], name="masked")  # rrelu's output and its mask
    cat = sym.Concat(*acts, d2, d3, dim=1, name="cat")
    full = sym.Pooling(cat, kernel=(3, 3), stride=(2, 2), pool_type="max", pooling_convention="full",
                       name="pool_full")
    valid = sym.Pooling(cat, kernel=(3, 3), stride=(2, 2), pool_type="avg", name="pool_valid")
    gap = sym.Pooling(full, kernel=(1, 1), pool_type="avg", global_pool=True, name="gap")
    parts = sym.SliceChannel(valid, num_outputs=4, axis=1, name="slice")
    mixed = sym.broadcast_add(parts[0], parts[3], name="badd")
    mixed = sym.broadcast_mul(mixed, sym.Pooling(parts[1], kernel=(1, 1), pool_type="max",
                                                 global_pool=True, name="gmp"), name="bmul")
    mixed = sym.broadcast_maximum(mixed, parts[2], name="bmax")
    conv = sym.Convolution(mixed, kernel=(1, 1), num_filter=6, name="proj")
    scale = sym.sum(gap, axis=1, keepdims=True, name="gap_sum")
    flat = sym.Flatten(sym.broadcast_div(sym.Pooling(conv, kernel=(1, 1), pool_type="sum", global_pool=True,
                                                     name="gsp"), scale, name="bdiv"), name="flat")
    fc = sym.FullyConnected(flat, num_hidden=5, name="fc")
    return sym.SoftmaxOutput(fc, name="softmax"), {"data": (2, 3, 8, 8)}


def rnn_graph(sym: Any) -> tuple[Any, dict[str, tuple[int, ...]]]:
    """Fused RNN ops (LSTM, bidirectional GRU, rnn_tanh with state outputs) on embeddings."""
    data = sym.Variable("data")
    emb = sym.Embedding(data, input_dim=100, output_dim=16, name="embed")
    tnc = sym.SwapAxis(emb, dim1=0, dim2=1, name="tnc")
    lstm = sym.RNN(tnc, sym.Variable("lstm_params"), sym.Variable("lstm_h0"), sym.Variable("lstm_c0"),
                   state_size=12, num_layers=2, mode="lstm", name="lstm")
    gru = sym.RNN(lstm, sym.Variable("gru_params"), sym.Variable("gru_h0"), state_size=6, num_layers=1,
                  mode="gru", bidirectional=True, name="gru")
    tanh = sym.RNN(gru, sym.Variable("tanh_params"), sym.Variable("tanh_h0"), state_size=5, num_layers=1,
                   mode="rnn_tanh", state_outputs=True, name="rnn_tanh")
    last = sym.mean(tanh[0], axis=0, name="last")
    fc = sym.FullyConnected(last, num_hidden=3, name="fc")
    head = sym.FullyConnected(sym.Reshape(tanh[1], shape=(-1, 5)), num_hidden=3, name="state_fc")
    return sym.Group([sym.SoftmaxOutput(fc, name="softmax"), head]), {
        "data": (4, 7), "lstm_h0": (2, 4, 12), "lstm_c0": (2, 4, 12), "gru_h0": (2, 4, 6),
        "tanh_h0": (1, 4, 5)}


def misc_ops(sym: Any) -> tuple[Any, dict[str, tuple[int, ...]]]:
    """Norms, element-wise and reduction ops, Cast, clip, stack, transpose, expand_dims."""
    data = sym.Variable("data")
    conv = sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=3, name="gconv")
    inorm = sym.InstanceNorm(conv, name="inorm")
    lnorm = sym.LayerNorm(conv, axis=1, name="lnorm")
    l2 = sym.L2Normalization(conv, mode="channel", name="l2")
    summed = sym.ElementWiseSum(inorm, lnorm, l2, name="esum")
    lrn = sym.LRN(sym.Activation(summed, act_type="softrelu", name="softrelu"), nsize=3, name="lrn")
    clip = sym.clip(lrn, a_min=-1.0, a_max=1.0, name="clip")
    half = sym.Cast(clip, dtype="float16", name="half")
    back = sym.Cast(half, dtype="float32", name="back")
    pooled = sym.Pooling(back, kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2, name="lppool")
    red = sym.sum(pooled, axis=(2, 3), name="red")
    mean = sym.mean(pooled, axis=(2, 3), keepdims=False, name="avg")
    st = sym.stack(red, mean, axis=1, name="stk")
    tr = sym.transpose(st, axes=(0, 2, 1), name="tr")
    ex = sym.expand_dims(sym.flatten(tr, name="fl"), axis=1, name="ex")
    fc = sym.FullyConnected(ex, num_hidden=4, flatten=False, name="fc_nf")
    out = sym.add_n(sym.sigmoid(fc, name="sig"), sym.tanh(fc, name="th"), sym.softsign(fc, name="ss"),
                    name="addn")
    return sym.LinearRegressionOutput(sym.Flatten(out, name="flat2"), name="lro"), {"data": (2, 3, 10, 10)}


BUILT: dict[str, Callable[[Any], tuple[Any, dict[str, tuple[int, ...]]]]] = {
    "deconv_leaky": deconv_leaky,
    "rnn_graph": rnn_graph,
    "misc_ops": misc_ops,
}

NODE_ATTRS = {"shape": "box", "fixedsize": "false", "fontsize": "8", "color": "red"}


def plot_variants(shape: dict[str, tuple[int, ...]]) -> list[dict[str, Any]]:
    """The plot_network argument sets compared for every symbol."""
    return [
        {},
        {"shape": shape},
        {"shape": shape, "hide_weights": False},
        {"hide_weights": False, "save_format": "png", "title": "held out"},
        {"shape": shape, "node_attrs": NODE_ATTRS, "save_format": "svg"},
    ]


def _lists(shapes: Any) -> Any:
    return [None if s is None else [list(x) for x in s] for s in shapes]


def capture(fn: Callable[[], Any]) -> dict[str, Any]:
    """stdout of fn(), its result, or its exception as (class name, first line)."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = fn()
    except Exception as e:  # recorded, compared on both sides
        first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
        return {"error": [type(e).__name__, first]}
    return {"stdout": out.getvalue(), "value": value}


def observe(mx: Any, symbol: Any, shape: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """Everything compared, as seen through module ``mx`` (MXNet or kvcli.mx)."""
    rec: dict[str, Any] = {
        "arguments": symbol.list_arguments(),
        "outputs": symbol.list_outputs(),
        "aux": symbol.list_auxiliary_states(),
        "infer_shape": capture(lambda: _lists(symbol.infer_shape(**shape)))
    }
    rec["summary"] = capture(lambda: mx.viz.print_summary(symbol, shape=shape))
    rec["summary"].pop("value", None)
    rec["plots"] = []
    for kwargs in plot_variants(shape):
        got = capture(lambda kw=kwargs: mx.viz.plot_network(symbol, **kw))  # type: ignore[misc]
        dot = got.pop("value", None)
        if dot is not None:
            got = {"source": dot.source, "format": dot.format, "name": dot.name}
        rec["plots"].append({"kwargs": kwargs, **got})
    return rec


def record(out_dir: Path) -> None:
    """MXNet side: export the zoo models and build the graphs, write symbols and record.json."""
    import mxnet as mx
    from mxnet import gluon

    out_dir.mkdir(parents=True, exist_ok=True)
    cases: dict[str, Any] = {}
    for name, shape in ZOO:
        net = gluon.model_zoo.vision.get_model(name)
        net.initialize()
        net.hybridize()
        net(mx.nd.zeros(shape))
        prefix = out_dir / name
        net.export(str(prefix))
        os.unlink(f"{prefix}-0000.params")
        symbol = mx.sym.load(f"{prefix}-symbol.json")
        cases[name] = {"file": f"{name}-symbol.json", "shape": {"data": list(shape)}}
    for name, build in BUILT.items():
        symbol, shape = build(mx.sym)
        (out_dir / f"{name}-symbol.json").write_text(symbol.tojson())
        cases[name] = {"file": f"{name}-symbol.json", "shape": {k: list(v) for k, v in shape.items()},
                       "built": True}
    for name, case in cases.items():
        symbol = mx.sym.load(str(out_dir / case["file"]))
        shape = {k: tuple(v) for k, v in case["shape"].items()}
        case["tojson"] = symbol.tojson()
        case.update(observe(mx, symbol, shape))
        args, _, _ = symbol.infer_shape(**shape)
        case["infer_params"] = int(sum(_size(s) for n, s in zip(symbol.list_arguments(), args)
                                       if n not in shape and not n.endswith("label")))
        print(name, "recorded", file=sys.stderr)
    (out_dir / "record.json").write_text(json.dumps(cases, indent=1))


def _size(shape: Any) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _total_params(summary_text: str) -> int | None:
    for line in summary_text.splitlines():
        if line.startswith("Total params:"):
            return int(line.split(":")[1].replace(",", ""))
    return None


def _diff(label: str, want: str, got: str, limit: int = 12) -> list[str]:
    if want == got:
        return []
    lines = list(difflib.unified_diff(want.splitlines(), got.splitlines(), "mxnet", "kvcli", lineterm="", n=0))
    return [f"  {label}: differs ({len(lines)} diff lines)"] + ["    " + ln for ln in lines[:limit]]


def compare(rec_dir: Path) -> int:
    """kvcli side: replay every recorded case and print the differences; returns their count."""
    import kvcli.mx as kmx

    cases = json.loads((rec_dir / "record.json").read_text())
    problems = 0
    for name, case in cases.items():
        shape = {k: tuple(v) for k, v in case["shape"].items()}
        path = rec_dir / case["file"]
        symbol = kmx.sym.load(str(path))
        mine = observe(kmx, symbol, shape)
        report: list[str] = []
        for key in ("arguments", "outputs", "aux", "infer_shape"):
            if mine[key] != case[key]:
                report.append(f"  {key}: mxnet {str(case[key])[:300]} kvcli {str(mine[key])[:300]}")
        # kvcli writes one node per line, MXNet one key per line: only the JSON value counts
        if json.loads(symbol.tojson()) != json.loads(case["tojson"]):
            report += _diff("tojson of the loaded symbol", json.dumps(json.loads(case["tojson"]), sort_keys=True),
                            json.dumps(json.loads(symbol.tojson()), sort_keys=True))
        if case.get("built"):
            built, _ = BUILT[name](kmx.sym)
            if json.loads(built.tojson()) != json.loads(case["tojson"]):
                report += _diff("built with kvcli.mx.sym, tojson",
                                json.dumps(json.loads(case["tojson"]), indent=1, sort_keys=True),
                                json.dumps(json.loads(built.tojson()), indent=1, sort_keys=True))
        s_want, s_got = case["summary"], mine["summary"]
        if "error" in s_want or "error" in s_got:
            if s_want.get("error") != s_got.get("error"):
                report.append(f"  print_summary: mxnet {s_want.get('error')} kvcli {s_got.get('error')}")
        else:
            report += summary_diff(s_want["stdout"], s_got["stdout"], case["infer_params"])
        for want, got in zip(case["plots"], mine["plots"]):
            tag = f"plot_network({json.dumps(want['kwargs'])})"
            if "error" in want or "error" in got:
                if want.get("error") != got.get("error"):
                    report.append(f"  {tag}: mxnet {want.get('error')} kvcli {got.get('error')}")
                continue
            # graphviz >= 0.10 ends .source with a newline, MXNet's graphviz 0.8 did not
            report += _diff(tag, want["source"].rstrip("\n"), got["source"].rstrip("\n"))
            for k in ("format", "name"):
                if want[k] != got[k]:
                    report.append(f"  {tag} .{k}: mxnet {want[k]!r} kvcli {got[k]!r}")
        report += cli_totals(path, shape, case)
        # notes are MXNet's own miscounts that kvcli corrects on purpose (docs/viz.md)
        differs = any(not line.startswith(("  note:", "    ")) for line in report)
        problems += differs
        print(f"{name}: {'DIFFERENCES' if differs else 'identical' + (' but for notes' if report else '')}")
        for line in report:
            print(line)
    return problems


PARAM_COLUMN = slice(int(120 * .64), int(120 * .74))  # print_summary's default positions


def summary_diff(want: str, got: str, infer_params: int) -> list[str]:
    """Differences of print_summary's tables. Rows that differ only in the Param # column are
    MXNet's miscounts that kvcli corrects on purpose (docs/viz.md): listed as a note, and
    kvcli's total must then equal MXNet's infer_shape sum."""
    w, g = want.splitlines(), got.splitlines()
    if len(w) != len(g):
        return _diff("print_summary", want, got)
    out, fixed = [], []
    for a, b in zip(w, g):
        if a == b:
            continue
        if a.startswith("Total params:") and b.startswith("Total params:"):
            if b != f"Total params: {infer_params}":
                out.append(f"  print_summary: kvcli {b!r}, MXNet's infer_shape sums {infer_params}")
            continue
        cut = PARAM_COLUMN
        if a[:cut.start] == b[:cut.start] and a[cut.stop:] == b[cut.stop:]:
            fixed.append(f"{a[:cut.start].split()[0]} {a[cut].strip()}->{b[cut].strip()}")
            continue
        out += [f"  print_summary line: mxnet {a!r}", f"                     kvcli {b!r}"]
    if fixed:
        out.append(f"  note: Param # corrected (MXNet->kvcli): {', '.join(fixed)}")
    return out


def cli_totals(path: Path, shape: dict[str, tuple[int, ...]], case: dict[str, Any]) -> list[str]:
    """``kvcli summary --json`` totals against MXNet's numbers."""
    cmd = [sys.executable, "-m", "kvcli", "summary", str(path), "--no-params", "--json"]
    for k, v in shape.items():
        cmd += ["--shape", f"{k}={','.join(map(str, v))}"]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if run.returncode != 0:
        return [f"  kvcli summary: exit {run.returncode}: {run.stderr.strip()[:300]}"]
    totals = json.loads(run.stdout)["totals"]
    out = []
    if totals["params"] != case["infer_params"] or not totals["exact"]:
        out.append(f"  kvcli summary: params {totals['params']} + aux {totals['aux']} "
                   f"(exact={totals['exact']}) vs MXNet infer_shape sum {case['infer_params']}")
    printed = _total_params(case["summary"].get("stdout", ""))
    if printed is not None and printed != case["infer_params"]:
        out.append(f"  note: MXNet's print_summary says Total params {printed:,}, its infer_shape sums "
                   f"{case['infer_params']:,} (kvcli summary: {totals['params']:,} + aux {totals['aux']:,})")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=["kvcli", "mxnet"], default="kvcli")
    parser.add_argument("--record", type=Path, help="folder of the MXNet record (written or read)")
    parser.add_argument("--mxnet-python", help="a Python with mxnet 1.9.1: record with it first")
    args = parser.parse_args()
    if args.framework == "mxnet":
        record(args.record or Path("mxnet_viz_heldout"))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        rec_dir = args.record or Path(tmp)
        if args.mxnet_python:
            subprocess.run([args.mxnet_python, __file__, "--framework", "mxnet", "--record", str(rec_dir)],
                           check=True)
        if not (rec_dir / "record.json").exists():
            parser.error("give --mxnet-python, or --record DIR holding a record.json")
        problems = compare(rec_dir)
    print(f"{problems} case(s) with differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
