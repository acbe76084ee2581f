"""Sparse NDArrays against MXNet 1.9.1, bit for bit, on random inputs
(tests/data/make_mxnet_sparse_ops_reference.py): every recorded function, method and operator
on csr and row_sparse inputs of several shapes and dtypes, every constructor form, and the
``.params`` files MXNet wrote.

A result matches when it has MXNet's class, storage type, dtype and shape, the same bits
(every nan counts as one value) and, for a sparse result, the same stored positions. Where
MXNet raises, kvcli must raise. Two tables name every exception, each with its reason:
:data:`DEVIATIONS` (MXNet's answer is wrong; kvcli's answer, or its refusal, is checked
against numpy instead) and :data:`ULP_TOLERANCE` (values within one unit in the last place).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx.ndarray.sparse.base import MXNET_NDARRAY_ATTRIBUTES

DATA = Path(__file__).resolve().parents[1] / "data"
REF = json.loads((DATA / "mxnet_sparse_ops_reference.json").read_text())
PARAMS = DATA / "mxnet_params_sparse"
nd = mx.nd

Inputs = dict[str, Any]  # one recorded case: "stype", "dtype", "shape" and the dense inputs "x", "y", "d", ...


@dataclass(frozen=True)
class Deviation:
    """Where MXNet 1.9.1's recorded answer is wrong and kvcli's differs on purpose."""

    applies: Callable[[Inputs], bool]  # to which recorded inputs
    why: str
    #: kvcli's answer, from numpy: (storage type, dense values); None: kvcli refuses (raises)
    expect: Callable[[Inputs], tuple[str, np.ndarray]] | None


def _csr_row_vs_row(v: Inputs) -> bool:
    """A 1-row csr array with a (1, n) dense operand, n > 1."""
    return v["stype"] == "csr" and v["shape"][0] == 1 and v["shape"][1] > 1


def _on_stored(op: Callable[[np.ndarray, np.ndarray], np.ndarray], other: str) -> Callable[[Inputs], Any]:
    """``x op other`` on x's stored (non-zero) elements, zero elsewhere: a csr kernel's answer."""
    def expect(v: Inputs) -> tuple[str, np.ndarray]:
        with np.errstate(all="ignore"):
            return "csr", np.where(v["x"] != 0, op(v["x"], v[other]), 0).astype(v["dtype"])
    return expect


_COLUMN = "MXNet reads the (1, n) dense operand of a 1-row csr array as a column and applies its first value to " \
          "every stored element; kvcli broadcasts the row over the stored elements, as MXNet does for any other csr"
#: MXNet's L2 norm of integers (its dense fallback) divides in integers: kvcli refuses it.
_INT_L2 = Deviation(lambda v: v["dtype"].startswith("int"),
                    "MXNet's L2 norm of integers scales by the running maximum in integer division ([0, -2, -4, 4] "
                    "gives 5): kvcli refuses integer L2 norms", None)
#: The same where only a row_sparse array takes the fallback (MXNet's csr kernel refuses integers).
_RSP_INT_L2 = Deviation(lambda v: v["stype"] == "row_sparse" and v["dtype"].startswith("int"), _INT_L2.why, None)
#: case name -> its deviations, the first that applies to an input counts (kvcli's answer is
#: then checked against numpy, or its refusal).
DEVIATIONS: dict[str, tuple[Deviation, ...]] = {
    "retain method": (Deviation(
        lambda v: v["stype"] == "row_sparse",
        "MXNet's RowSparseNDArray.retain drops self (it calls retain(indices)) and returns (0,); kvcli retains the rows",
        lambda v: ("row_sparse", np.where(np.arange(v["shape"][0])[:, None] == v["shape"][0] - 1, v["x"], 0))),),
    "retain bad keyword": (Deviation(
        lambda v: v["stype"] == "row_sparse",
        "MXNet's retain ignores an unknown keyword; kvcli refuses it, so a misspelt argument is never dropped "
        "silently (docs/mxnet-layer.md: a keyword an nd function does not take is an error)", None),),
    "nd.norm axis1": (_RSP_INT_L2,),
    "norm axis0": (_RSP_INT_L2,),
    "norm axis1 keepdims": (_INT_L2,),
    "norm axis-1": (_INT_L2,),
    "nd.multiply xd": (Deviation(_csr_row_vs_row, _COLUMN, _on_stored(np.multiply, "d")),),
    "broadcast_mul row": (Deviation(_csr_row_vs_row, _COLUMN, _on_stored(np.multiply, "row")),),
    "x/d": (Deviation(_csr_row_vs_row, _COLUMN, _on_stored(np.divide, "d")),),
    "broadcast_div row": (Deviation(_csr_row_vs_row, _COLUMN, _on_stored(np.divide, "row")),),
    "slice neg": (Deviation(
        lambda v: v["stype"] == "csr" and v["shape"][0] == 1,
        "MXNet's csr slice from begin=-2 of a 1-row array gives zeros; kvcli gives the row, as numpy and MXNet's "
        "row_sparse slice do", lambda v: ("csr", v["x"])),),
    "slice dense": (Deviation(
        lambda v: v["dtype"] == "float32" and v["shape"][1] == 1,
        "MXNet's float32 dense slice (oneDNN) fails on an empty selection, where its other dtypes give an empty "
        "array; kvcli gives the empty array for every dtype", lambda v: ("default", v["d"][0:2, 1:])),),
}
#: case name -> (the dtypes it covers, the most units in the last place kvcli's values may differ by, why).
ULP_TOLERANCE: dict[str, tuple[tuple[str, ...], int, str]] = {
    case: (("float64",), 1, "MXNet's dense dot (the storage fallback) is its BLAS, which sums with fused multiply-adds; "
           "kvcli's dense dot is numpy's") for case in ("dot", "dot xT", "dot dense csrT")
}


#: Constructor forms where MXNet builds an invalid array silently (or dies on it) and kvcli refuses.
REFUSED_INVALID = {
    "rsp shape rows < max index", "rsp unsorted indices", "rsp repeated indices", "csr rows mismatch",
    "csr columns too few", "csr unsorted columns", "csr repeated columns",
}


def dec(desc: dict[str, Any]) -> np.ndarray:
    raw = base64.b64decode(desc["b64"])
    return np.frombuffer(raw, dtype=desc["dtype"]).reshape(desc["shape"]).copy()


def same_bits(got: np.ndarray, want: np.ndarray, ulps: int = 0) -> bool:
    """Equal dtype, shape and bits (every nan counts as one value), or within ``ulps`` units in
    the last place."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind == "f":
        nan = np.isnan(got) & np.isnan(want)
        signed = f"i{got.itemsize}"
        steps = np.abs(got.view(signed).astype(np.int64) - want.view(signed).astype(np.int64))
        same_sign = np.signbit(got) == np.signbit(want)
        return bool(np.all(nan | (same_sign & (steps <= ulps)) | (got.view(signed) == want.view(signed))))
    return bool(np.array_equal(got, want))


def mismatch(got: Any, want: dict[str, Any], ulps: int = 0) -> str | None:
    """Why ``got`` is not MXNet's recorded result (values within ``ulps``), or None."""
    if "error" in want:
        return None if isinstance(got, BaseException) else f"MXNet raised {want['error']}: {want['message']}, kvcli gave a value"
    if isinstance(got, BaseException):
        return f"kvcli raised {type(got).__name__}: {got}"
    if want["type"] == "list":
        if not isinstance(got, (list, tuple)) or len(got) != len(want["items"]):
            return f"kvcli gave {type(got).__name__}, MXNet a list of {len(want['items'])}"
        return next((m for g, w in zip(got, want["items"]) if (m := mismatch(g, w, ulps))), None)
    if want["type"] == "python":
        return None if got == want["value"] else f"{got!r} != {want['value']!r}"
    if not isinstance(got, nd.NDArray):
        return f"kvcli gave {type(got).__name__}"
    for field, value in (("type", type(got).__name__), ("stype", got.stype), ("dtype", np.dtype(got.dtype).name),
                         ("shape", list(got.shape)), ("context", str(got.context))):
        if value != want[field]:
            return f"{field} {value} != {want[field]}"
    if not same_bits(got.asnumpy(), dec(want["dense"]), ulps):
        return f"values {got.asnumpy().tolist()} != {dec(want['dense']).tolist()}"
    if got.stype == "csr":
        rows = np.repeat(np.arange(got.shape[0]), np.diff(want["indptr"]))
        theirs = sorted(zip(rows.tolist(), want["indices"]))
        if got.indptr.asnumpy().tolist() != want["indptr"] or \
                sorted(zip(got._rows().tolist(), got.indices.asnumpy().tolist())) != theirs:
            return f"stored positions differ: indptr {got.indptr.asnumpy().tolist()} != {want['indptr']}"
    if got.stype == "row_sparse" and got.indices.asnumpy().tolist() != want["indices"]:
        return f"stored rows {got.indices.asnumpy().tolist()} != {want['indices']}"
    return None


def evaluate(expr: str, env: dict[str, Any]) -> Any:
    try:
        return eval(expr, dict(env))  # noqa: S307 - the recorded expressions of our own generator
    except Exception as error:  # noqa: BLE001 - a refusal is compared with MXNet's
        return error


def test_reference_is_mxnet_191_and_attributes_match() -> None:
    assert REF["mxnet"] == "1.9.1"
    assert set(REF["ndarray_attributes"]) == MXNET_NDARRAY_ATTRIBUTES


def case_env(case: dict[str, Any]) -> dict[str, Any]:
    """The names a recorded expression reads, as kvcli arrays of the recorded inputs."""
    env: dict[str, Any] = {"mx": mx, "nd": nd, "np": np}
    env.update({k: nd.array(dec(v), dtype=case["dtype"]) for k, v in case["inputs"].items()})
    env["x"], env["y"] = env["x"].tostype(case["stype"]), env["y"].tostype(case["stype"])
    return env


def inputs(case: dict[str, Any]) -> Inputs:
    return {"stype": case["stype"], "dtype": case["dtype"], "shape": case["shape"],
            **{k: dec(v) for k, v in case["inputs"].items()}}


def deviation_of(case: dict[str, Any], name: str) -> Deviation | None:
    """The deviation listed for this case and input, if any."""
    values = inputs(case)
    return next((d for d in DEVIATIONS.get(name, ()) if d.applies(values)), None)


def deviation_problem(case: dict[str, Any], deviation: Deviation, got: Any) -> str | None:
    """Why ``got`` is not kvcli's answer for a listed deviation (numpy's, or a refusal), or None."""
    values = inputs(case)
    if deviation.expect is None:
        return None if isinstance(got, BaseException) else f"kvcli must refuse ({deviation.why})"
    if isinstance(got, BaseException):
        return f"kvcli raised {type(got).__name__}: {got}"
    stype, dense = deviation.expect(values)
    if got.stype != stype or not same_bits(got.asnumpy(), np.asarray(dense, case["dtype"])):
        return f"{got.stype} {got.asnumpy().tolist()} != numpy's {stype} {np.asarray(dense).tolist()}"
    return None


def tolerance(case: dict[str, Any], name: str) -> int:
    """The ulps a case may differ by (:data:`ULP_TOLERANCE`)."""
    dtypes, ulps, _why = ULP_TOLERANCE.get(name, ((), 0, ""))
    return ulps if case["dtype"] in dtypes else 0


@pytest.mark.parametrize("index", range(len(REF["ops"])),
                         ids=[f"{c['stype']}-{c['dtype']}-{'x'.join(map(str, c['shape']))}" for c in REF["ops"]])
def test_functions_methods_and_operators_match_mxnet(index: int) -> None:
    case = REF["ops"][index]
    env = case_env(case)
    expressions = dict(REF["cases"])
    problems = []
    for name, want in case["results"].items():
        got = evaluate(expressions[name], env)
        deviation = deviation_of(case, name)
        if deviation is not None:
            why = deviation_problem(case, deviation, got)
        else:
            why = mismatch(got, want, tolerance(case, name))
        if why:
            problems.append(f"{name} [{expressions[name]}]: {why}")
    assert not problems, "\n".join(problems)


def test_each_deviation_is_needed() -> None:
    """Each deviation differs from MXNet's record on some input it applies to (MXNet raises,
    or its answer is not numpy's there): a deviation MXNet's record does not show fails here."""
    shown: set[int] = set()
    for case in REF["ops"]:
        for name, want in case["results"].items():
            deviation = deviation_of(case, name)
            if deviation is None:
                continue
            if deviation.expect is None or "error" in want:
                shown.add(id(deviation))
                continue
            stype, dense = deviation.expect(inputs(case))
            if want.get("stype") != stype or not same_bits(dec(want["dense"]), np.asarray(dense, case["dtype"])):
                shown.add(id(deviation))
    stale = [(name, d.why) for name, listed in DEVIATIONS.items() for d in listed if id(d) not in shown]
    assert not stale, f"deviations MXNet's record does not show: {stale}"


@pytest.mark.parametrize("name", sorted(ULP_TOLERANCE))
def test_each_tolerance_is_needed(name: str) -> None:
    """A tolerance no recorded value needs is stale (e.g. the fmath entries once the
    elementwise kernels are MXNet's): this fails until it is removed."""
    dtypes, _ulps, _why = ULP_TOLERANCE[name]
    expression = dict(REF["cases"])[name]
    needed = [f"{c['stype']}-{c['dtype']}-{c['shape']}" for c in REF["ops"] if c["dtype"] in dtypes
              and name in c["results"] and deviation_of(c, name) is None
              and mismatch(evaluate(expression, case_env(c)), c["results"][name]) is not None]
    assert needed, f"ULP_TOLERANCE[{name!r}] is not needed any more: kvcli gives MXNet's bits, remove the entry"


@pytest.mark.parametrize("name", sorted(REF["constructors"]))
def test_constructors_match_mxnet(name: str) -> None:
    case = REF["constructors"][name]
    spsp = pytest.importorskip("scipy.sparse") if "spsp" in case["expr"] else None
    env = {"mx": mx, "nd": nd, "np": np, "S": nd.sparse, "D": np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32),
           "spsp": spsp}
    got = evaluate(case["expr"], env)
    if name in REFUSED_INVALID:
        assert isinstance(got, BaseException), f"{name}: MXNet builds an invalid array; kvcli must refuse it"
        return
    why = mismatch(got, case["result"])
    assert why is None, f"{case['expr']}: {why}"


@pytest.mark.parametrize("name", sorted(REF["params"]))
def test_params_files_written_by_mxnet_load_and_are_written_back_byte_for_byte(name: str, tmp_path: Path) -> None:
    desc = REF["params"][name]
    loaded = nd.load(str(PARAMS / name))
    items = list(loaded.items()) if isinstance(loaded, dict) else list(enumerate(loaded))
    wanted = desc["arrays"] if desc["kind"] == "dict" else dict(enumerate(desc["arrays"]))
    for key, array in items:
        why = mismatch(array, wanted[key])
        assert why is None, f"{name}[{key}]: {why}"
    nd.save(str(tmp_path / name), loaded if isinstance(loaded, dict) else loaded)
    original = (PARAMS / name).read_bytes()
    if name == "csr_on_cpu2.params":  # MXNet loads onto cpu(0), so the saved context differs
        return
    assert (tmp_path / name).read_bytes() == original
