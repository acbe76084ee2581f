"""Property-based fuzzing (hypothesis) of the three inputs users type or hand to kvcli.

* the value language (:func:`kvcli.values.parse_value`): any text gives a numpy array or a
  :class:`~kvcli.errors.KVCliError`, never another exception, never a hang;
* key names (:func:`kvcli.cli.keys.parse_key` / ``check_key``, a session, and ``kvcli init``):
  a valid key or a ``KVCliError``; the CLI exits 0 or 1 with one ``error:`` line and writes
  nothing outside the session folder;
* symbol JSON: mutations of the real models in ``tests/data`` through load, shape inference,
  summary and DOT rendering raise only ``KVCliError``; ``kvcli summary FILE --json`` exits 0/1
  with one error line.

Examples are derandomized (the same every run, no example database written); set
``KVCLI_STRESS_RANDOM=1`` to explore new ones.
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
import string
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvcli.errors import KVCliError

from .conftest import DATA, CaseTimeout, assert_one_json_error, assert_one_line_error, run_kvcli, time_limit

pytestmark = pytest.mark.slow

RANDOM = bool(os.environ.get("KVCLI_STRESS_RANDOM"))


def fuzz_settings(examples: int, **extra: Any) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=not RANDOM, database=None,
                    print_blob=True, **extra)


# ============================================================================ value language
LIMIT = 10**6  # element cap of the fuzzed expressions (the default cap is tested elsewhere)
CASE_SECONDS = 5.0
DTYPE_NAMES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
               "uint32", "uint64", "bool", "'int32'", "object", "'U10'", "str", "complex128", "'O'", "x"]

numbers = st.one_of(
    st.integers(-12, 12).map(str),
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["10**12", "1e308", "-1e308", "1e-308", "5e-324", "1e400", "inf", "-inf", "nan", "pi",
                     "e", "2**63", "2**64", "-2**63", "10**18", "0", "-0.0", "0.5", "1j", "True", "None",
                     "0x10", "1_000", "9" * 40, "2**-1074", "(-8)**(1/3)", "10**10**10"]),
)
shapes = st.lists(st.sampled_from(["0", "1", "2", "3", "-1", "4", "10**5", "10**12", "2.0", "2.5", "1e3"]),
                  max_size=4).map(lambda dims: "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")")
names = st.sampled_from(["__import__", "__builtins__", "os", "open", "eval", "exec", "x", "ones", "float32",
                         "print", "globals", "np", "numpy", "self", "__class__", "breakpoint", "getattr"])
atoms = st.one_of(numbers, shapes, names,
                  st.lists(numbers, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
                  st.text(alphabet=string.ascii_letters + "_'\"", max_size=8).map(repr))

FUNCTIONS = ["ones", "zeros", "full", "arange", "eye", "linspace", "array", "reshape", "open", "eval",
             "__import__", "range", "len", "exec", "getattr", "type"]
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>", "<", "==", " and ", " or "]
ATTRS = ["reshape", "astype", "T", "sum", "__class__", "tolist", "fill", "real", "shape", "__dict__",
         "__subclasses__", "ctypes", "data", "base", "dtype"]


def _compose(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    args = st.lists(children, max_size=3).map(", ".join)
    return st.one_of(
        st.builds(lambda f, a: f"{f}({a})", st.sampled_from(FUNCTIONS), args),
        st.builds(lambda f, a, d: f"{f}({a}, dtype={d})", st.sampled_from(FUNCTIONS[:7]), args,
                  st.sampled_from(DTYPE_NAMES)),
        st.builds(lambda f, s: f"{f}({s})", st.sampled_from(["ones", "zeros", "eye"]), shapes),
        st.builds(lambda s, v: f"full({s}, {v})", shapes, children),
        st.builds(lambda a, b: f"arange({a}, {b})", numbers, numbers),
        st.builds(lambda a, b, c: f"arange({a}, {b}, {c})", numbers, numbers, numbers),
        st.builds(lambda a, b, n: f"linspace({a}, {b}, num={n})", numbers, numbers, numbers),
        st.builds(lambda a, op, b: f"({a}){op}({b})", children, st.sampled_from(BINOPS), children),
        st.builds(lambda a, op, b: f"{a}{op}{b}", children, st.sampled_from(BINOPS), children),
        st.builds(lambda op, a: f"{op}({a})", st.sampled_from(["-", "+", "~", "not "]), children),
        st.builds(lambda a, attr, x: f"({a}).{attr}({x})", children, st.sampled_from(ATTRS), args),
        st.builds(lambda a, attr: f"({a}).{attr}", children, st.sampled_from(ATTRS)),
        st.builds(lambda a, d: f"({a}).astype({d})", children, st.sampled_from(DTYPE_NAMES)),
        st.builds(lambda a, s: f"({a}).reshape{s}", children, shapes),
        st.lists(children, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(children, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ",)"),
        st.builds(lambda a: f"(lambda x: {a})(1)", children),
        st.builds(lambda a: f"[{a} for x in range(3)]", children),
        st.builds(lambda a, b: f"({a})[{b}]", children, children),
        st.builds(lambda a, b, c: f"{a} if {b} else {c}", children, children, children),
        st.builds(lambda a, b: f"{{{a}: {b}}}", children, children),
        st.builds(lambda a: f"ones(*{a})", children),
        st.builds(lambda a: f"ones(**{{'shape': {a}}})", children),
        st.builds(lambda a: f"f'{{{a}}}'", children),
        st.builds(lambda a: f"(x := {a})", children),
        st.builds(lambda a, n: "[" * n + a + "]" * n, children, st.integers(1, 8)),
        st.builds(lambda a, n: "-" * n + a, children, st.integers(1, 8)),
    )


# st.deferred keeps the strategy's repr short (a st.recursive over this many branches has a
# repr of megabytes, which hypothesis builds when it reports); atoms outweigh compositions
# so that examples stay small (deep nesting is in EXPRESSION_EXAMPLES).
expressions: st.SearchStrategy[str] = st.deferred(
    lambda: st.one_of(atoms, atoms, atoms, _compose(expressions))
).filter(lambda text: len(text) <= 4000)

EXPRESSION_EXAMPLES = [
    "ones(10**12)", "zeros(50000,50000)", "ones(10**5)*ones(10**5,1)", "arange(10**11)", "full((10**6,10**6),1)",
    "ones(3)**ones(3)", "10**308", "1e308**2", "2**10**10", "(-1)**0.5", "arange(0, 1, 5e-324)",
    "arange(10, dtype=bool)", "arange(0, 10**18, 10**17, dtype=int8)", "arange(-5, 5, 0)", "arange(nan)",
    "linspace(0, 1, 10**7)", "eye(10**4)", "array([[1, 2], [3]])", "array([ones(3), 1])",
    "[" * 200 + "1" + "]" * 200, "(" * 200 + "1" + ")" * 200, "-" * 5000 + "1", "1" + "+1" * 10000,
    "__import__('os').system('true')", "ones(3).__class__", "(lambda: 1)()", "[x for x in (1, 2)]",
    "ones(2).astype(object)", "array([1], dtype='O')", "full(3, 10**18, dtype=uint8)", "full(3, nan, dtype=int32)",
    "ones(3, dtype=int8) ** -1", "ones(0).reshape(2**62, 2**62, 0)", "ones(4).reshape(-1, -1)", "9" * 5000,
    "@", "@/", "@.", "@/etc/passwd", "@/dev/null", "-", "", "   ", "\x00", "ones(3)\x00", "'a' * 10**9",
    "[ones(999999), ones(999999), ones(999999)]", "(ones(10**6), ones(10**6))", "array(ones(10**6).T)",
]


def check_value(text: str) -> None:
    """One case: an array within the cap, or a KVCliError; anything else fails the test."""
    try:
        with time_limit(CASE_SECONDS, f"value {text[:80]!r}"):
            result = _parse(text)
    except CaseTimeout:
        raise
    except KVCliError as error:
        assert str(error), type(error)
        return
    except BaseException as error:  # noqa: BLE001 - the point of the test
        raise AssertionError(f"value {text[:200]!r} raised {type(error).__name__}: {error}") from error
    from kvcli.values import DTYPES

    assert isinstance(result, np.ndarray), (text, type(result))
    assert result.dtype.name in DTYPES, (text, result.dtype)
    assert result.size <= LIMIT, (text, result.shape)
    assert result.flags.c_contiguous


def _parse(text: str) -> np.ndarray:
    from kvcli.values import parse_value

    return parse_value(text, stdin=io.BytesIO(b""), limit=LIMIT)


@pytest.mark.parametrize("text", EXPRESSION_EXAMPLES, ids=range(len(EXPRESSION_EXAMPLES)))
def test_value_language_known_nasty_inputs(text: str) -> None:
    check_value(text)


@fuzz_settings(400)
@given(text=st.text(max_size=120))
def test_value_language_random_text(text: str) -> None:
    check_value(text)


@fuzz_settings(300)
@given(text=st.text(alphabet="0123456789.eE+-*/%()[], _xaornsz=@'\"jlT", max_size=60))
def test_value_language_random_symbols(text: str) -> None:
    check_value(text)


@fuzz_settings(800, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(text=expressions)
def test_value_language_grammar(text: str) -> None:
    check_value(text)


# ============================================================================ key names
KEY_EXAMPLES = [
    "../x", "/etc/passwd", "..", ".", "-", "--", "-x", "\x00", "k\x00", "a" * 10_000, "a" * 128, "a" * 129,
    "1" * 18, "1" * 19, "-1", "0", "007", " k", "k ", "k\n", "k\t", "a/b", "a\\b", "~", "$HOME", "*", "?",
    "ключ", "ｋ", "k\u200b", "\u0661", "CON", "nul", "manifest.json", ".lock", "data", "a,b", "a,a", "5,7", ",",
    "", " ", "é", "\ud800", "k;rm -rf /", "`id`", "$(id)", "%s%n", "{}", "[0]",
]
key_text = st.one_of(st.sampled_from(KEY_EXAMPLES), st.text(max_size=40), st.text(max_size=20_000),
                     st.text(alphabet=string.ascii_letters + string.digits + "_.-/\\\x00 ,", max_size=140),
                     st.from_regex(r"[A-Za-z0-9_.-]{1,130}", fullmatch=True),  # mostly valid, some too long
                     st.from_regex(r"[0-9]{1,20}", fullmatch=True))
KEY_RE = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def check_parse_key(text: str) -> Any:
    from kvcli.cli.keys import parse_key
    from kvcli.session import check_key

    try:
        with time_limit(CASE_SECONDS, f"key {text[:40]!r}"):
            key = parse_key(text)
    except CaseTimeout:
        raise
    except KVCliError:
        return None
    except BaseException as error:  # noqa: BLE001
        raise AssertionError(f"parse_key({text[:100]!r}) raised {type(error).__name__}: {error}") from error
    if isinstance(key, int):
        assert not isinstance(key, bool) and re.fullmatch(r"[0-9]{1,18}", text) and int(text) == key, (text, key)
    else:
        assert isinstance(key, str) and KEY_RE.fullmatch(key) and key == text, (text, key)
        assert "/" not in key and "\x00" not in key
    assert check_key(key) == key
    return key


@fuzz_settings(600)
@given(text=key_text)
def test_parse_key_random_text(text: str) -> None:
    check_parse_key(text)


@fuzz_settings(200)
@given(value=st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-(2**70), 2**70), st.floats(),
                       st.binary(max_size=8), st.lists(st.integers(), max_size=2),
                       st.integers(0, 2**62).map(np.int64), st.integers(-5, 5).map(np.int8), key_text))
def test_check_key_any_object(value: Any) -> None:
    from kvcli.session import check_key

    try:
        key = check_key(value)
    except KVCliError:
        return
    assert isinstance(key, (int, str)) and not isinstance(key, bool)
    if isinstance(key, int):
        assert 0 <= key < 10**18
    else:
        assert KEY_RE.fullmatch(key)


def files_under(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def assert_only_session_files(root: Path) -> None:
    """Every file under ``root`` is a session's database, lock or data file."""
    allowed = re.compile(r"home/sessions/[^/]+/(session\.db(-wal|-shm)?|\.lock|data/[0-9a-f]{32}\.npy)")
    stray = sorted(str(p) for p in files_under(root) if not allowed.fullmatch(str(p)))
    assert not stray, stray


@fuzz_settings(150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=key_text)
def test_session_init_random_keys(tmp_path: Path, text: str) -> None:
    """Session.init with the parsed key: the key's value is stored, no file lands elsewhere."""
    from kvcli.session import Session

    key = check_parse_key(text)
    if key is None:
        return
    test_session_init_random_keys.count = getattr(test_session_init_random_keys, "count", 0) + 1
    name = f"s{test_session_init_random_keys.count}"
    with Session(name, tmp_path / "home") as session:
        session.init([key], [np.full(2, 7, np.float32)])
        assert session.keys() == [key]
        [[array]] = session.pull([key])
    assert array.tolist() == [7.0, 7.0]
    assert_only_session_files(tmp_path)


CLI_KEYS = [k for k in KEY_EXAMPLES if "\x00" not in k and "\ud800" not in k]


@fuzz_settings(20, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=st.one_of(st.sampled_from(CLI_KEYS), st.text(st.characters(codec="utf-8", exclude_characters="\x00"),
                                                         max_size=30)))
def test_cli_init_random_keys(tmp_path: Path, text: str) -> None:
    """``kvcli --session sN init -- KEY 1``: exit 0 for valid keys (as parse_keys says), else
    exit 1 with one error line; only session files appear under the temporary folder."""
    from kvcli.cli.keys import parse_keys

    test_cli_init_random_keys.count = getattr(test_cli_init_random_keys, "count", 0) + 1
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    proc = run_kvcli(tmp_path / "home", "--session", f"s{test_cli_init_random_keys.count}", "init", "--", text, "1",
                     cwd=cwd, timeout=60)
    try:
        keys = parse_keys(text)  # KEY may be a list "a,b": each gets the value
    except KVCliError:
        keys = None
    valid = keys is not None and len({type(k) for k in keys}) == 1  # one kind of key per session
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    if proc.returncode == 0:
        assert valid, (text, proc.stderr)
    else:
        assert_one_line_error(proc)
        assert not valid, (text, proc.stderr)
    assert_only_session_files(tmp_path)


# ============================================================================ symbol JSON
#: Every kept model (file under tests/data) with input shapes that make every shape known.
MODELS: dict[str, dict[str, tuple[int, ...]]] = {
    name: {k: tuple(v) for k, v in entry["inputs"].items()}
    for name, entry in json.loads((DATA / "mxnet_model_reference.json").read_text(encoding="utf-8"))["models"].items()
}
SYMBOL_SECONDS = 20.0

ATTR_KEYS = ["num_hidden", "kernel", "stride", "pad", "num_filter", "num_group", "dilate", "axis", "axes",
             "shape", "num_outputs", "num_args", "state_size", "num_layers", "input_dim", "output_dim",
             "target_shape", "p", "eps", "pool_type", "layout", "no_bias", "global_pool", "mode",
             "pooling_convention", "dim", "begin", "end", "squeeze_axis", "keepdims", "bidirectional",
             "__shape__", "__dtype__", "__lr_mult__", "act_type", "flatten", "use_global_stats", "fix_gamma",
             "sizes", "ratios", "reverse", "label_length", "input_length", "num_outputs", "pad_width"]
ATTR_VALUES = ["1000000000000000000000000000000", "(0,0)", "(0, 0)", "(-1,-1)", "(-1, 3)", "-5", "0", "1e400",
               "nan", "inf", "-inf", "(" * 500, ")" * 3, "(1,2,3,4,5,6,7,8,9)", "", "True", "garbage\x00",
               "ключ", "(1e30, 2)", "(10000000000000000000000000000000, 1)", "[]", "()", "(,)", "None",
               "(2147483648, 2147483648)", "max", "avg", "full", "NCHW", "NHWC", "lstm", "gru", "-1",
               "999999999999", "0.5", "1.5", "(3,)", "3" * 5000, "(0,)", "(1, 0, 0, 1)", "(2, -2)"]
BIG_VALUES = ["1" + "0" * 30, "2147483648", "9223372036854775808", "-9223372036854775809", "100000", "-1",
              "0", "(100000, 100000)", "(1000000000000000000000000000000,)", "1e30"]
JSON_GARBAGE = [None, True, False, 0, -1, 10**30, 1e308, -1.5, "", "x", "null", [], {}, [[]], [None],
                [-1, 0, 0], [10**30, 0, 0], [0, 10**30, 0], [0, -1, 0], [0, 0], [0], ["0", 0, 0], [0.5, 0, 0],
                [True, 0, 0], {"a": 1}, "(" * 100, [0, 0, 0, 0]]


@lru_cache(maxsize=None)
def model_text(data_dir: Path, name: str) -> str:
    return (data_dir / name).read_text(encoding="utf-8")


def mutate(doc: dict[str, Any], data: st.DataObject) -> dict[str, Any] | str:
    """Apply 1-4 random structural mutations to a decoded symbol file (or garble its text)."""
    nodes = doc.get("nodes") if isinstance(doc.get("nodes"), list) else []
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        n = len(nodes)
        kind = data.draw(st.sampled_from([
            "drop_top", "type_top", "drop_node_field", "type_node_field", "bad_input", "cycle", "self_loop",
            "attr", "attr", "attr", "op", "heads", "shape_hint", "duplicate_node", "truncate_nodes",
            "swap_nodes", "node_row_ptr", "text",
        ]), label="kind")
        i = data.draw(st.integers(0, max(n - 1, 0)), label="node") if n else 0
        node = nodes[i] if n and isinstance(nodes[i], dict) else None
        if kind == "drop_top":
            doc.pop(data.draw(st.sampled_from(["nodes", "heads", "arg_nodes", "node_row_ptr", "attrs"])), None)
        elif kind == "type_top":
            doc[data.draw(st.sampled_from(["nodes", "heads", "attrs"]))] = data.draw(st.sampled_from(JSON_GARBAGE))
        elif kind == "drop_node_field" and node is not None:
            node.pop(data.draw(st.sampled_from(["op", "name", "inputs", "attrs", "attr", "param"])), None)
        elif kind == "type_node_field" and node is not None:
            node[data.draw(st.sampled_from(["op", "name", "inputs", "attrs", "attr", "param"]))] = \
                data.draw(st.sampled_from(JSON_GARBAGE))
        elif kind == "bad_input" and node is not None:
            entry = data.draw(st.one_of(
                st.sampled_from(JSON_GARBAGE),
                st.tuples(st.integers(-3, n + 3), st.integers(-2, 5), st.integers(-1, 2)).map(list)))
            inputs = node.get("inputs") if isinstance(node.get("inputs"), list) else []
            if inputs and data.draw(st.booleans()):
                inputs[data.draw(st.integers(0, len(inputs) - 1))] = entry
            else:
                inputs.append(entry)
            node["inputs"] = inputs
        elif kind == "cycle" and node is not None and n > 1:
            j = data.draw(st.integers(0, n - 1))
            if isinstance(nodes[j], dict):  # j reads i and i reads j
                nodes[j].setdefault("inputs", [])
                node.setdefault("inputs", [])
                if isinstance(nodes[j]["inputs"], list) and isinstance(node["inputs"], list):
                    nodes[j]["inputs"].append([i, 0, 0])
                    node["inputs"].append([j, 0, 0])
        elif kind == "self_loop" and node is not None:
            if isinstance(node.get("inputs"), list):
                node["inputs"].append([i, 0, 0])
        elif kind == "attr" and node is not None:
            field = "param" if "param" in node else "attr" if "attr" in node and "attrs" not in node else "attrs"
            attrs = node.get(field) if isinstance(node.get(field), dict) else {}
            existing = sorted(attrs)
            key = data.draw(st.sampled_from(existing) if existing and data.draw(st.booleans())
                            else st.sampled_from(ATTR_KEYS))
            attrs[key] = data.draw(st.one_of(st.sampled_from(ATTR_VALUES), st.text(max_size=12),
                                             st.sampled_from(JSON_GARBAGE)))
            node[field] = attrs
        elif kind == "op" and node is not None:
            node["op"] = data.draw(st.sampled_from([
                "null", "FullyConnected", "Convolution", "Pooling", "Reshape", "Concat", "SliceChannel",
                "BatchNorm", "RNN", "Embedding", "SoftmaxOutput", "elemwise_add", "broadcast_mul", "transpose",
                "Deconvolution", "LeakyReLU", "Flatten", "expand_dims", "squeeze", "sum", "WarpCTC",
                "_contrib_MultiBoxPrior", "_contrib_MultiBoxTarget", "_contrib_MultiBoxDetection",
                "NoSuchOp", "", "__import__"]))
        elif kind == "heads":
            doc["heads"] = data.draw(st.lists(st.one_of(
                st.sampled_from(JSON_GARBAGE),
                st.tuples(st.integers(-2, n + 2), st.integers(-1, 4), st.integers(0, 1)).map(list)), max_size=3))
        elif kind == "shape_hint" and n:
            var = [k for k, v in enumerate(nodes) if isinstance(v, dict) and v.get("op") == "null"] or [i]
            target = nodes[data.draw(st.sampled_from(var))]
            if isinstance(target, dict):
                dims = data.draw(st.lists(st.sampled_from([0, 1, 3, -1, -(10**6), 10**30, 2**63, 7]), max_size=5))
                attrs = target.get("attrs") if isinstance(target.get("attrs"), dict) else {}
                attrs["__shape__"] = "(" + ", ".join(map(str, dims)) + ")"
                target["attrs"] = attrs
        elif kind == "duplicate_node" and node is not None:
            nodes.insert(data.draw(st.integers(0, n)), copy.deepcopy(node))
        elif kind == "truncate_nodes" and n:
            del nodes[data.draw(st.integers(0, n - 1)):]
        elif kind == "swap_nodes" and n > 1:
            j = data.draw(st.integers(0, n - 1))
            nodes[i], nodes[j] = nodes[j], nodes[i]
        elif kind == "node_row_ptr":
            doc["node_row_ptr"] = data.draw(st.sampled_from(JSON_GARBAGE))
        elif kind == "text":
            text = json.dumps(doc)
            cut = data.draw(st.integers(0, len(text)))
            how = data.draw(st.sampled_from(["truncate", "insert", "bytes"]))
            if how == "truncate":
                return text[:cut]
            if how == "insert":
                return text[:cut] + data.draw(st.text(max_size=10)) + text[cut:]
            return text[:cut] + "\ufffd\x00\x7f" + text[cut + 3:]
    return doc


def run_pipeline(text: str | bytes, inputs: dict[str, tuple[int, ...]], source: str) -> None:
    """What ``kvcli summary`` and ``kvcli viz`` do, in-process; only KVCliError may escape."""
    from rich.console import Console

    from kvcli.errors import ShapeInferenceError
    from kvcli.symbol.catalog import unknown_operators
    from kvcli.symbol.graph import load_json
    from kvcli.symbol.pipeline import shape_notes
    from kvcli.symbol.render import drawn_nodes, to_digraph
    from kvcli.symbol.shapes import infer_shapes
    from kvcli.symbol.shapespec import resolve_shapes
    from kvcli.symbol.summary import print_table, summarize

    graph = load_json(text, source=source)
    unknown_operators(graph)
    specs = [(name, shape) for name, shape in inputs.items()]
    try:
        given = resolve_shapes(graph, specs)
    except ShapeInferenceError:  # the mutation removed an input the shapes name
        given = {}
    result = infer_shapes(graph, given)
    shape_notes(source, result, shape_given=False)  # builds every note
    summary = summarize(result)
    json.dumps(summary.to_dict(), default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v))
    print_table(summary, Console(file=io.StringIO(), width=160), title="fuzz")
    drawn_nodes(graph, hide_weights=True)
    to_digraph(graph, result, title="fuzz", rankdir="TB", hide_weights=True, caption=None)


def check_symbol(text: str | bytes, inputs: dict[str, tuple[int, ...]], source: str) -> None:
    try:
        with time_limit(SYMBOL_SECONDS, f"symbol case from {source}"):
            run_pipeline(text, inputs, source)
    except CaseTimeout:
        raise
    except KVCliError as error:
        assert str(error)
    except BaseException as error:  # noqa: BLE001
        raise AssertionError(f"{source}: mutated file raised {type(error).__name__}: {error}") from error


def one_op_graph(op: str, attrs: dict[str, Any], n_inputs: int, index: int = 0) -> str:
    """``data`` -> one ``op`` node (reading ``data`` n_inputs times) -> head ``[1, index]``."""
    return json.dumps({
        "nodes": [{"op": "null", "name": "data", "inputs": []},
                  {"op": op, "name": "node", "attrs": attrs, "inputs": [[0, 0, 0]] * n_inputs}],
        "heads": [[1, index, 0]],
    })


def _rule_ops() -> list[str]:
    from kvcli.symbol.ops import REGISTRY

    return sorted(name for name, spec in REGISTRY.items() if spec.shape_rule is not None)


class _KeyRecorder(dict):
    """An attribute dict that remembers every key an operator's code looks up."""

    def __init__(self, values: dict[str, str], seen: set[str]) -> None:
        super().__init__(values)
        self.seen = seen

    def get(self, key: Any, default: Any = None) -> Any:
        self.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.seen.add(key)
        return super().__getitem__(key)


@lru_cache(maxsize=None)
def attribute_keys(op: str) -> tuple[str, ...]:
    """The attributes ``op``'s shape rule and op table entry read (found by running them on
    a recording dict, adding each key found and running again)."""
    from kvcli.symbol import ops
    from kvcli.symbol.attrs import Attrs

    seen: set[str] = set()
    for _ in range(6):
        before = set(seen)
        values = {key: "1" for key in seen if key != "__op__"}
        values["__op__"] = op
        attrs = Attrs(_KeyRecorder(values, seen))
        spec = ops.spec(op)
        # default arguments bind this iteration's attrs and spec (the calls run right here)
        for call in ((lambda attrs=attrs: ops.REGISTRY[op].shape_rule(attrs, [(2, 3, 8, 8)] * 5, [None] * 3)),
                     (lambda attrs=attrs, spec=spec: spec.inputs(attrs)) if spec else None,
                     (lambda attrs=attrs, spec=spec: spec.outputs(attrs)) if spec else None):
            if call is None:
                continue
            try:
                call()
            except Exception:  # noqa: BLE001 - only the keys matter here
                pass
        if seen == before:
            break
    return tuple(sorted(seen - {"__op__"}))


@st.composite
def op_with_attributes(draw: Any) -> tuple[str, dict[str, str]]:
    op = draw(st.sampled_from(_rule_ops()))
    keys = list(attribute_keys(op)) or ATTR_KEYS
    values = st.one_of(st.sampled_from(ATTR_VALUES), st.integers(-3, 10).map(str), st.sampled_from(BIG_VALUES))
    attrs = draw(st.dictionaries(st.sampled_from(keys), values, max_size=4))
    attrs.update(draw(st.dictionaries(st.sampled_from(ATTR_KEYS), values, max_size=2)))
    return op, attrs


INPUT_SHAPES = [(), (4,), (2, 3), (2, 3, 8, 8), (1, 3, 5, 5, 5), (5, 1, 8), (1, 0, 3), (10**30, 2), (2**63, 1),
                tuple([2] * 40)]


@fuzz_settings(1500, suppress_health_check=[HealthCheck.too_slow])
@given(case=op_with_attributes(), n_inputs=st.integers(0, 6), shape=st.sampled_from(INPUT_SHAPES),
       index=st.integers(0, 3))
def test_symbol_every_shape_rule_with_odd_attributes(case: tuple[str, dict[str, str]], n_inputs: int,
                                                     shape: tuple[int, ...], index: int) -> None:
    """Each operator kvcli infers shapes for, with odd values of the attributes it reads, odd
    input counts and input shapes."""
    op, attrs = case
    check_symbol(one_op_graph(op, attrs, n_inputs, index), {"data": shape}, f"{op} {attrs}")


def test_symbol_every_attribute_of_every_rule_with_each_odd_value() -> None:
    """Exhaustive companion of the random test: each (operator, attribute it reads, odd value)
    on a small graph, the input 4-d or 2-d in turn; failures are collected and listed."""
    failures = []
    cases = 0
    for op in _rule_ops():
        for key in attribute_keys(op):
            for value in BIG_VALUES + ATTR_VALUES:
                shape = ((2, 3, 8, 8), (4, 6))[cases % 2]
                cases += 1
                try:
                    check_symbol(one_op_graph(op, {key: value}, 1), {"data": shape}, f"{op} {key}={value[:40]!r}")
                except AssertionError as error:
                    failures.append(str(error)[:300])
    assert cases > 1000, cases
    assert not failures, f"{len(failures)} of {cases} cases failed:\n" + "\n".join(failures[:20])


def draw_mutant(data_dir: Path, data: st.DataObject) -> tuple[str, str | dict[str, Any], dict[str, tuple[int, ...]]]:
    name = data.draw(st.sampled_from(sorted(MODELS)), label="model")
    doc = json.loads(model_text(data_dir, name))
    inputs = dict(MODELS[name])
    if data.draw(st.booleans(), label="odd input shapes"):
        inputs = {k: tuple(data.draw(st.lists(st.sampled_from([1, 2, 3, 7, 10**6, 10**30, 2**63]), min_size=1,
                                              max_size=5))) for k in inputs}
    return name, mutate(doc, data), inputs


@fuzz_settings(250, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_symbol_json_mutations(data_dir: Path, data: st.DataObject) -> None:
    name, mutant, inputs = draw_mutant(data_dir, data)
    text = mutant if isinstance(mutant, str) else json.dumps(mutant)
    check_symbol(text, inputs, name)


def test_symbol_json_unmutated_models_are_complete(data_dir: Path) -> None:
    """The baseline the mutations start from: every model loads and infers every shape."""
    from kvcli.symbol.graph import load_json
    from kvcli.symbol.shapes import infer_shapes
    from kvcli.symbol.shapespec import resolve_shapes

    for name, inputs in MODELS.items():
        graph = load_json(model_text(data_dir, name), source=name)
        result = infer_shapes(graph, resolve_shapes(graph, list(inputs.items())))
        assert not result.problems, (name, result.problems)
        check_symbol(model_text(data_dir, name), inputs, name)


@fuzz_settings(20, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                          HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_symbol_json_mutations_cli(data_dir: Path, tmp_path: Path, data: st.DataObject) -> None:
    """``kvcli summary FILE --json`` on a mutated file: exit 0 with JSON, or 1 with one error line."""
    name, mutant, inputs = draw_mutant(data_dir, data)
    text = mutant if isinstance(mutant, str) else json.dumps(mutant)
    path = tmp_path / "mutant-symbol.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    args = ["summary", str(path), "--json"]
    for input_name, shape in inputs.items():
        if data.draw(st.booleans(), label=f"--shape {input_name}"):
            args += ["--shape", f"{input_name}={','.join(map(str, shape))}"]
    proc = run_kvcli(tmp_path / "home", *args, timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    if proc.returncode == 0:
        json.loads(proc.stdout)
        assert all(line.startswith("warning:") for line in proc.stderr.splitlines()), proc.stderr[-2000:]
    else:
        assert_one_json_error(proc)
