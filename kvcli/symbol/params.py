"""A model's weights (MXNet ``.params``) checked against its graph, and described per tensor.

:func:`load_params` reads the file with the project's pickle-free, bounded reader
(:mod:`kvcli.arrays.mxparams`); names may carry MXNet's checkpoint prefixes ``arg:`` (learnable
parameters) and ``aux:`` (auxiliary states), as ``save_checkpoint`` and Gluon's ``export``
write them, or none (Gluon's ``save_parameters``). :func:`check_params` compares every
parameter and auxiliary state of the graph with the file: one :class:`Problem` per missing,
extra or wrong-shaped array. :func:`tensor_stats` gives what the viewer shows of one array.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional, Union

from kvcli.errors import SymbolError, bad_param
from kvcli.symbol.names import short_name as cut
from kvcli.symbol.shapes import ShapeResult, format_shape
from kvcli.symbol.summary import AUX, INPUT, LABEL, PARAM, variable_roles

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

#: Values of each tensor the viewer page carries unless told otherwise (``kvcli viz --values``).
DEFAULT_VALUES = 1000
#: Bins of the histogram the viewer draws per tensor.
HIST_BINS = 24
#: Values listed per tensor ("first values").
FIRST = 8
_KINDS = {"arg": PARAM, "aux": AUX}


@dataclass
class Tensor:
    """One array of the file: its name without prefix, the kind its prefix says (or ``None``)."""

    name: str
    key: str  # the name as stored (``arg:conv1_weight``)
    kind: Optional[str]
    value: np.ndarray


@dataclass
class Problem:
    """One disagreement between the file and the graph, said in one line."""

    kind: str  # "missing", "extra", "shape", "role"
    name: str
    text: str


@dataclass
class ParamsCheck:
    """The result of :func:`check_params`: what matched and what did not."""

    source: str
    tensors: dict[str, Tensor]
    expected: int  # parameters + auxiliary states the graph has
    matched: int
    problems: list[Problem] = field(default_factory=list)
    unchecked: int = 0  # present, but the graph's shape is unknown (no --shape given)
    #: arrays holding NaN or infinity: name -> how many of their values are not finite
    nonfinite: dict[str, int] = field(default_factory=dict)
    #: for a session's weights (:class:`Weights`): name -> the key's version (its load or
    #: init is 1, each push adds 1)
    versions: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every array the graph needs is there with its shape and nothing else is."""
        return not self.problems

    def nonfinite_line(self, source: Optional[str] = None) -> Optional[str]:
        """The line naming the arrays that hold NaN or infinity (``None`` when none does)."""
        if not self.nonfinite:
            return None
        named = ", ".join(f"{cut(name)!r} ({count:,} of {self.tensors[name].value.size:,})"
                          for name, count in list(self.nonfinite.items())[:5])
        more = f" and {len(self.nonfinite) - 5:,} more" if len(self.nonfinite) > 5 else ""
        arrays = "array holds" if len(self.nonfinite) == 1 else "arrays hold"
        return f"{source or self.source}: {len(self.nonfinite):,} {arrays} NaN or infinity: {named}{more}"

    def lines(self, source: Optional[str] = None) -> list[str]:
        """One line per problem, one for NaN or infinity, one for arrays left unchecked, or
        one line saying everything matched; each starts with ``source`` (default: the file's path)."""
        name = source or self.source
        lines = [f"{name}: {p.text}" for p in self.problems]
        bad_values = self.nonfinite_line(name)
        if bad_values is not None:
            lines.append(bad_values)
        if self.unchecked:
            lines.append(f"{name}: {self.unchecked:,} of {self.expected:,} arrays not checked: their shapes "
                         "are unknown")
        if self.ok and not self.unchecked:
            lines.append(f"{name}: all {self.matched:,} parameters and auxiliary states match the graph's shapes")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.source, "expected": self.expected, "matched": self.matched, "unchecked": self.unchecked,
                "arrays": len(self.tensors),
                "problems": [{"kind": p.kind, "name": p.name, "text": p.text} for p in self.problems],
                "nonfinite": dict(self.nonfinite), **({"versions": dict(self.versions)} if self.versions else {})}


class Weights:
    """Named arrays to check against a graph that are not read from a ``.params`` file: a
    session's committed values (``kvcli viz --session``), with each key's version.

    ``source`` names them in messages (``session 'exp'``); ``arrays`` are ``(key, array)``
    pairs, keys with or without MXNet's ``arg:``/``aux:`` prefix; ``versions`` maps a key to
    its version."""

    def __init__(self, source: str, arrays: Iterable[tuple[str, "np.ndarray"]],
                 versions: Optional[dict[str, int]] = None) -> None:
        self.source = source
        self.arrays = list(arrays)
        self.versions = dict(versions or {})

    def __repr__(self) -> str:
        return f"Weights({self.source!r}, {len(self.arrays)} arrays)"

    def check(self, result: ShapeResult) -> ParamsCheck:
        """The check of these arrays against ``result``'s graph (see :func:`check_params`)."""
        tensors = tensors_of(self.arrays, where=f"{self.source}: ")
        check = check_params(result, tensors, self.source)
        check.versions = {t.name: self.versions[t.key] for t in tensors.values() if t.key in self.versions}
        return check


_SYMBOL_SUFFIX = "-symbol.json"


def find_checkpoint(symbol: Union[str, "os.PathLike[str]"]) -> Optional[Path]:
    """The ``.params`` file MXNet's ``save_checkpoint``/``load_checkpoint`` pair with a
    ``PREFIX-symbol.json``: ``PREFIX-NNNN.params`` beside it, the newest (highest) epoch;
    ``None`` when there is none or ``symbol`` is not named that way."""
    path = Path(symbol)
    if not path.name.endswith(_SYMBOL_SUFFIX) or len(path.name) == len(_SYMBOL_SUFFIX):
        return None
    prefix = path.name[:-len(_SYMBOL_SUFFIX)]
    pattern = re.compile(re.escape(prefix) + r"-(\d{4,})\.params")  # '%s-%04d.params', epochs past 9999 longer
    try:
        names = os.listdir(path.parent)
    except OSError:
        return None
    epochs = [(int(m.group(1)), name) for name in names if (m := pattern.fullmatch(name))]
    found = [(epoch, name) for epoch, name in epochs if (path.parent / name).is_file()]
    return path.parent / max(found)[1] if found else None


def load_params(path: Union[str, "os.PathLike[str]"]) -> dict[str, Tensor]:
    """The arrays of an MXNet ``.params`` file by name (prefix removed); errors are one line."""
    from kvcli.arrays import mxparams
    from kvcli.errors import ParamsFileError

    try:
        with mxparams.open_file(path) as params:
            if params.names is None:
                raise bad_param(SymbolError, "params", f"{path}: the file holds {len(params.entries)} unnamed arrays; "
                                "a model's parameters are saved by name (mx.model.save_checkpoint, or Gluon's export)")
            pairs = [(key, mxparams.to_dense(params.value(entry))) for key, entry in params.items() if key is not None]
    except ParamsFileError as error:
        raise bad_param(SymbolError, "params", f"{path}: {error}") from None
    return tensors_of(pairs, where=f"{path}: ")


def tensors_of(arrays: Iterable[tuple[str, "np.ndarray"]], where: str = "") -> dict[str, Tensor]:
    """:class:`Tensor` values by name (``arg:``/``aux:`` prefix removed) of ``(key, array)``
    pairs: a file's arrays, or a session's keys (``where`` names them in an error)."""
    tensors: dict[str, Tensor] = {}
    for key, value in arrays:
        prefix, sep, rest = key.partition(":")
        kind = _KINDS.get(prefix) if sep else None
        name = rest if kind is not None else key
        if name in tensors:
            raise bad_param(SymbolError, "params", f"{where}{name!r} is stored twice ({tensors[name].key!r} and "
                            f"{key!r})")
        tensors[name] = Tensor(name=name, key=key, kind=kind, value=value)
    return tensors


def check_params(result: ShapeResult, tensors: dict[str, Tensor], source: str) -> ParamsCheck:
    """Compare the file's arrays with the graph's parameters and auxiliary states (shapes inferred)."""
    graph = result.graph
    roles = variable_roles(graph, set(result.given))
    wanted: dict[str, tuple[str, Optional[tuple[int, ...]]]] = {}
    others: dict[str, str] = {}
    for i, role in roles.items():
        name = graph.nodes[i].name
        if role in (PARAM, AUX):
            wanted.setdefault(name, (role, result.entry(i, 0)))
        else:
            others.setdefault(name, role)
    problems: list[Problem] = []
    matched = unchecked = 0
    for name, (role, shape) in wanted.items():
        what = "parameter" if role == PARAM else "auxiliary state"
        tensor = tensors.get(name)
        if tensor is None:
            need = f" ({format_shape(shape)})" if shape is not None else ""
            problems.append(Problem("missing", name, f"missing {what} {cut(name)!r}{need}"))
            continue
        bad = False
        if shape is None:
            unchecked += 1
        elif tuple(tensor.value.shape) != tuple(shape):
            problems.append(Problem("shape", name, f"{cut(tensor.key)!r} is {format_shape(tensor.value.shape)}; "
                                                   f"the graph needs {format_shape(shape)}"))
            bad = True
        if tensor.kind is not None and tensor.kind != role:
            problems.append(Problem("role", name, f"{cut(tensor.key)!r} is stored as a "
                                                  f"{'parameter' if tensor.kind == PARAM else 'auxiliary state'}; "
                                                  f"the graph uses it as a{'n' if role == AUX else ''} {what}"))
            bad = True
        matched += not bad and shape is not None
    for name, tensor in tensors.items():
        if name in wanted:
            continue
        used_as = others.get(name)
        why = (f"an {'input' if used_as == INPUT else 'label'} of the graph, not a parameter" if used_as in (INPUT, LABEL)
               else "not in the graph")
        problems.append(Problem("extra", name, f"extra array {cut(tensor.key)!r} "
                                               f"({format_shape(tensor.value.shape)}): {why}"))
    return ParamsCheck(source=source, tensors=tensors, expected=len(wanted), matched=matched, problems=problems,
                       unchecked=unchecked, nonfinite=nonfinite_counts(tensors))


def nonfinite_counts(tensors: dict[str, Tensor]) -> dict[str, int]:
    """Per array holding NaN or infinity, how many of its values are (integer arrays never are)."""
    import numpy as np

    out: dict[str, int] = {}
    for name, tensor in tensors.items():
        value = tensor.value
        if value.dtype.kind in "fc" and value.size:
            bad = int(value.size - np.count_nonzero(np.isfinite(value)))
            if bad:
                out[name] = bad
    return out


def _num(x: float) -> Optional[float]:
    """A JSON-safe float (``None`` for NaN or infinity), rounded to float32's precision."""
    x = float(x)
    return float(f"{x:.7g}") if math.isfinite(x) else None


def tensor_stats(value: np.ndarray) -> dict[str, Any]:
    """Shape, dtype, min/max/mean/std (of the finite values), share of zeros, non-finite
    count, a :data:`HIST_BINS`-bin histogram over [min, max] and the first :data:`FIRST` values."""
    import numpy as np

    flat = np.asarray(value).reshape(-1)
    out: dict[str, Any] = {"shape": format_shape(value.shape), "dtype": str(value.dtype), "size": int(flat.size)}
    if flat.dtype == np.bool_:
        flat = flat.astype(np.uint8)
    out["first"] = [_num(x) for x in flat[:FIRST].tolist()]
    if flat.size == 0:
        return out
    numbers = flat.astype(np.float64, copy=False)
    finite = np.isfinite(numbers)
    nonfinite = int(flat.size - np.count_nonzero(finite))
    good = numbers if nonfinite == 0 else numbers[finite]
    out["zeros"] = float(np.count_nonzero(numbers == 0)) / flat.size
    if nonfinite:
        out["nonfinite"] = nonfinite
    if good.size == 0:
        return out
    lo, hi = float(good.min()), float(good.max())
    # Values near float64's limits (1e308) overflow a sum or a bin width: the statistics are
    # taken of the values divided by the largest magnitude, then scaled back.
    scale = max(abs(lo), abs(hi))
    scale = scale if scale > _LARGE else 1.0
    unit = good / scale if scale != 1.0 else good
    out.update(min=_num(lo), max=_num(hi), mean=_num(float(unit.mean()) * scale),
               std=_num(float(unit.std()) * scale))
    out["hist"] = _histogram(unit, lo / scale, hi / scale)
    return out


#: Above this magnitude the statistics are computed on scaled values (see :func:`tensor_stats`).
_LARGE = 1e150


def _histogram(values: np.ndarray, lo: float, hi: float) -> list[int]:
    """Counts of ``values`` in :data:`HIST_BINS` equal bins over [lo, hi] (the last bin
    closed), or one bin when all are equal; never fails, however close lo and hi are."""
    import numpy as np

    if not lo < hi:
        return [int(values.size)]
    position = (values - lo) / (hi - lo) * HIST_BINS
    index = np.clip(np.floor(position), 0, HIST_BINS - 1).astype(np.intp)
    return [int(c) for c in np.bincount(index, minlength=HIST_BINS)]
