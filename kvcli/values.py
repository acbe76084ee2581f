"""The safe value language of the CLI: ``"ones(3,3)*8"``, ``"[[1,2],[3,4]]"``, ``"@w.npy"``.

A value is one of

* an expression over numbers, nested lists and a few numpy-like constructors:
  ``ones(3,3)*2``, ``zeros((2,2))``, ``full((2,2), 0.5)``, ``arange(9).reshape(3,3)``,
  ``eye(3)``, ``linspace(0, 1, 5)``, ``array([1,2], dtype=int32)``, ``-ones(2)**2 / 4``;
* ``@FILE.npy``: an array read from a ``.npy`` file (never unpickled), dtype kept;
* ``-``: a ``.npy`` read from standard input.

The expression is parsed with :mod:`ast` and walked over a whitelist; nothing is ever
``eval``-ed. Arrays are ``float32`` unless a ``dtype=`` says otherwise (as in MXNet).
Every array an expression would create is sized *before* it is allocated and refused
above ``KVCLI_MAX_ELEMENTS`` elements (default 2**27), so ``ones(10**12)`` is an error,
not an out-of-memory kill; integers, exponents and nesting depth are capped as well.
"""

from __future__ import annotations

import ast
import math
import sys
from pathlib import Path
from typing import IO, Any

import numpy as np

from kvcli import config
from kvcli.errors import ValueLanguageError, NpyError
from kvcli.arrays.kinds import DTYPES
from kvcli.arrays.npyio import read_array
from kvcli.wrapping import cast_problem, int_overflows

DEFAULT_DTYPE = "float32"
DEFAULT_MAX_ELEMENTS = config.MAX_ELEMENTS.default
MAX_TEXT = 1 << 20  # characters of one expression
MAX_DEPTH = 64  # nesting of the expression tree
MAX_NODES = 200_000
MAX_NDIM = 32
MAX_INT = 1 << 63  # |integers| in the expression (shapes, exponents, constants)


FUNCTIONS = ("ones", "zeros", "full", "arange", "eye", "linspace", "array")
METHODS = ("reshape", "astype")
CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}

HELP = (
    "VALUE is an expression such as 'ones(3,3)*8', 'zeros(2,2)', 'full((2,2),0.5)', "
    "'arange(9).reshape(3,3)', 'eye(3)', '[[1,2],[3,4]]' or '2.5' (float32 unless "
    "dtype=int32/float64/... is given, as in MXNet), '@file.npy' to read a .npy file, "
    "or '-' for a .npy on stdin. Only these names and + - * / // % ** are allowed."
)


def max_elements() -> int:
    """The element cap: ``KVCLI_MAX_ELEMENTS`` or 2**27 (512 MiB of float32)."""
    return int(config.get(config.MAX_ELEMENTS))


def check_dtype(name: Any, where: str = "dtype") -> np.dtype:
    """``np.dtype(name)`` for the whitelisted numeric dtypes; a clear error otherwise."""
    text = name.name if isinstance(name, np.dtype) else str(name)
    if text not in DTYPES:
        raise ValueLanguageError(f"{where} {text!r} is not allowed: use one of {', '.join(DTYPES)}")
    return np.dtype(text)


def parse_value(
    text: str,
    *,
    dtype: str | None = None,
    default_dtype: Any = DEFAULT_DTYPE,
    stdin: IO[bytes] | None = None,
    limit: int | None = None,
) -> np.ndarray:
    """Turn one CLI value into a numpy array.

    Args:
        text: the expression, ``@FILE.npy`` or ``-``.
        dtype: convert the result to this dtype (the ``--dtype`` option).
        default_dtype: the dtype of arrays the expression builds without ``dtype=``
            (float32; a push passes the stored dtype so ``ones(3)`` fits an int key).
        stdin: where ``-`` reads from (default ``sys.stdin.buffer``).
        limit: element cap (default :func:`max_elements`).
    """
    target = check_dtype(dtype, "--dtype") if dtype is not None else None
    default = check_dtype(default_dtype)
    if text == "-":
        array = load_npy(stdin if stdin is not None else sys.stdin.buffer, "standard input", limit)
    elif text.startswith("@"):
        array = load_npy_file(text[1:], limit)
    else:
        array = evaluate(text, default_dtype=default, limit=limit)
    if target is not None and array.dtype != target:
        problem = cast_problem(array, target)
        if problem:
            raise ValueLanguageError(f"--dtype {target}: {problem}")
        with np.errstate(over="raise", invalid="raise"):
            try:
                array = array.astype(target)
            except FloatingPointError:
                raise ValueLanguageError(f"--dtype {target}: a value does not fit {target}; use a wider dtype") from None
    return array


def load_npy_file(path: str, limit: int | None = None) -> np.ndarray:
    """Read a ``.npy`` file (or FIFO) without unpickling, within the element cap; errors name it."""
    if not path:
        raise ValueLanguageError("'@' needs a file name: write @weights.npy")
    try:
        return read_array(Path(path).expanduser(), limit=max_elements() if limit is None else limit)
    except NpyError as error:
        raise ValueLanguageError(f"value file {path!r} {error}") from None


def load_npy(handle: IO[bytes], name: str, limit: int | None = None) -> np.ndarray:
    """Read one ``.npy`` array from an open binary stream (stdin), refusing pickles and objects,
    more elements than the cap, and a stream that stays silent (see :mod:`kvcli.arrays.npyio`)."""
    try:
        return read_array(handle, limit=max_elements() if limit is None else limit)
    except NpyError as error:
        raise ValueLanguageError(f"{name} {error}") from None


# ---------------------------------------------------------------------- expressions
def evaluate(text: str, *, default_dtype: Any = DEFAULT_DTYPE, limit: int | None = None) -> np.ndarray:
    """Evaluate an expression of the value language (see the module docs)."""
    if len(text) > MAX_TEXT:
        raise ValueLanguageError(f"value expression is {len(text)} characters long; the limit is {MAX_TEXT}: use @file.npy")
    source = text.strip()
    if not source:
        raise ValueLanguageError("empty value: give an expression such as 'ones(3,3)' or '[1, 2]'")
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError) as error:
        reason = error.msg if isinstance(error, SyntaxError) else error
        raise ValueLanguageError(f"value {_short(text)} does not parse ({reason}): {HELP}") from None
    except (RecursionError, MemoryError):
        raise ValueLanguageError(f"value {_short(text)} is nested too deeply") from None
    evaluator = _Evaluator(text, check_dtype(default_dtype), max_elements() if limit is None else limit)
    # numpy would only warn (on stderr, mid-output) and go on with inf or nan: a number that
    # does not fit its dtype, or an invalid operation, is the user's mistake to hear about
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            return evaluator.finish(evaluator.run(tree))
        except FloatingPointError as error:
            raise evaluator.fail(_floating_point_problem(str(error))) from None


def _floating_point_problem(numpy_message: str) -> str:
    if "overflow" in numpy_message:
        return "a number does not fit the dtype: use a wider one such as dtype=float64, or smaller numbers"
    if "divide by zero" in numpy_message:
        return "division by zero"
    return f"an undefined result ({numpy_message}, e.g. 0/0 or inf-inf)"


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


class _Evaluator:
    """Walks the whitelisted AST; values are Python numbers, lists/tuples or ndarrays."""

    def __init__(self, text: str, default: np.dtype, limit: int) -> None:
        self.text = text
        self.default = default
        self.limit = limit
        self.explicit = False  # a dtype= or astype() chose the dtype
        self.nodes = 0
        #: elements of the values evaluated so far that are still needed (left operands,
        #: earlier list items) while the rest of the expression is evaluated
        self.held = 0

    # -- driver ------------------------------------------------------------------
    def run(self, tree: ast.Expression) -> Any:
        return self.eval(tree.body, 0)

    def finish(self, value: Any) -> np.ndarray:
        array = self.to_array(value)
        if not self.explicit and array.dtype != self.default and np.can_cast(array.dtype, self.default, "same_kind"):
            array = self.cast(array, self.default)
        return array if array.flags.c_contiguous else np.array(array, order="C")

    def fail(self, message: str) -> ValueLanguageError:
        return ValueLanguageError(f"value {_short(self.text)}: {message}")

    def eval(self, node: ast.AST, depth: int) -> Any:
        self.nodes += 1
        if depth > MAX_DEPTH or self.nodes > MAX_NODES:
            raise self.fail("expression is too deeply nested or too long: use @file.npy for big data")
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.fail(f"{_describe(node)} is not allowed. {HELP}")
        return method(node, depth + 1)

    # -- leaves ------------------------------------------------------------------
    def _Constant(self, node: ast.Constant, depth: int) -> Any:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if isinstance(value, str):
                raise self.fail(f"the string {value!r} is only allowed as a dtype (dtype='int32')")
            raise self.fail(f"{value!r} is not a number")
        return self.check_int(value)

    def _Name(self, node: ast.Name, depth: int) -> Any:
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        if node.id in DTYPES:
            raise self.fail(f"{node.id} is a dtype: use it as dtype={node.id} or .astype({node.id})")
        if node.id in FUNCTIONS:
            raise self.fail(f"{node.id} is a function: call it, e.g. {node.id}(3)")
        raise self.fail(f"unknown name {node.id!r}: use numbers, lists, {', '.join(FUNCTIONS)}, .reshape(), .astype()")

    def _List(self, node: ast.List, depth: int) -> Any:
        return self.eval_items(node.elts, depth, "the list")

    def _Tuple(self, node: ast.Tuple, depth: int) -> Any:
        return tuple(self.eval_items(node.elts, depth, "the tuple"))

    def eval_items(self, nodes: list[ast.expr], depth: int, what: str) -> list[Any]:
        """Evaluate list items or call arguments, refusing as soon as they hold more than the
        cap in total: each array is capped on its own, and many of them must not add up to
        an out-of-memory kill (such a list could never become an array within the cap)."""
        items, count, held_here = [], 0, 0
        try:
            for item in nodes:
                value = self.eval(item, depth)
                size = _count(value)
                count += size
                if count > self.limit:
                    raise self.fail(
                        f"{what} would hold more than {self.limit:,} elements "
                        "(set KVCLI_MAX_ELEMENTS to raise the limit, or use @file.npy)"
                    )
                self.held += size
                held_here += size
                items.append(value)
        finally:
            self.held -= held_here
        return items

    # -- operators ---------------------------------------------------------------
    def _UnaryOp(self, node: ast.UnaryOp, depth: int) -> Any:
        operand = self.eval(node.operand, depth)
        if isinstance(node.op, ast.USub):
            if _is_number(operand):
                return self.check_int(-operand)
            array = self.to_array(operand)
            if array.dtype.kind in "iu" and array.size and (
                array.min() == np.iinfo(array.dtype).min if array.dtype.kind == "i" else array.max() > 0
            ):
                raise self.fail(f"-x does not fit {array.dtype} (integers would wrap around): use a wider or signed dtype")
            return np.negative(array)
        if isinstance(node.op, ast.UAdd):
            return operand if _is_number(operand) else self.to_array(operand)
        raise self.fail(f"operator {type(node.op).__name__} is not allowed: use + - * / // % **")

    _BINOPS = {
        ast.Add: ("+", np.add),
        ast.Sub: ("-", np.subtract),
        ast.Mult: ("*", np.multiply),
        ast.Div: ("/", np.true_divide),
        ast.FloorDiv: ("//", np.floor_divide),
        ast.Mod: ("%", np.remainder),
        ast.Pow: ("**", np.power),
    }

    def _BinOp(self, node: ast.BinOp, depth: int) -> Any:
        entry = self._BINOPS.get(type(node.op))
        if entry is None:
            raise self.fail(f"operator {type(node.op).__name__} is not allowed: use + - * / // % **")
        symbol, ufunc = entry
        left = self.eval(node.left, depth)
        left_size = _count(left)
        self.held += left_size
        try:
            right = self.eval(node.right, depth)
        finally:
            self.held -= left_size
        if _is_number(left) and _is_number(right):
            return self.scalar_op(symbol, left, right)
        a, b = self.operand(left), self.operand(right)
        shape_a = np.shape(a)
        shape_b = np.shape(b)
        try:
            shape = np.broadcast_shapes(shape_a, shape_b)
        except ValueError:
            raise self.fail(f"shapes {shape_a} and {shape_b} do not broadcast for {symbol}") from None
        operands = left_size + _count(right)
        self.held += operands
        try:
            self.check_size(shape, f"the result of {symbol}")
        finally:
            self.held -= operands
        try:
            with np.errstate(under="ignore"):
                result = ufunc(a, b)
        except (ValueError, OverflowError, TypeError) as error:
            raise self.fail(f"{symbol} failed: {error}") from None
        if isinstance(result, np.ndarray) and result.dtype.kind in "iu" and int_overflows(symbol, a, b, result):
            raise self.fail(f"the result of {symbol} does not fit {result.dtype} (integers would wrap around): "
                            f"use a wider dtype (int64, float64) or smaller numbers")
        return result

    def scalar_op(self, symbol: str, a: float, b: float) -> float:
        try:
            if symbol == "**":
                if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
                    if b * math.log2(abs(a)) > 63:
                        raise self.fail(f"{a}**{b} is too large (integers are limited to 2**63)")
                if isinstance(b, int) and b < 0 and isinstance(a, int):
                    a = float(a)
                return self.check_int(a**b)
            result = {
                "+": lambda: a + b,
                "-": lambda: a - b,
                "*": lambda: a * b,
                "/": lambda: a / b,
                "//": lambda: a // b,
                "%": lambda: a % b,
            }[symbol]()
        except ZeroDivisionError:
            raise self.fail(f"division by zero in {a} {symbol} {b}") from None
        except OverflowError:
            raise self.fail(f"{a} {symbol} {b} overflows") from None
        if isinstance(result, complex):
            raise self.fail(f"{a} {symbol} {b} is a complex number")
        # The array rule (numpy errstate) for scalars too: nan or inf may be written, but an
        # operation on other numbers that makes one is refused, as ones(2)*inf - inf is.
        if isinstance(result, float) and not math.isfinite(result):
            operands_finite = all(math.isfinite(x) for x in (a, b))
            if math.isnan(result) and not any(math.isnan(x) for x in (a, b)):
                raise self.fail(f"{a} {symbol} {b}: {_floating_point_problem('invalid value')}")
            if math.isinf(result) and operands_finite:
                raise self.fail(f"{a} {symbol} {b} overflows")
        return self.check_int(result)

    def check_int(self, value: Any) -> Any:
        if isinstance(value, complex):
            raise self.fail("complex numbers are not supported")
        if isinstance(value, int) and abs(value) >= MAX_INT:
            raise self.fail(f"the integer {value if value.bit_length() < 200 else '...'} is too large (limit 2**63)")
        return value

    # -- calls -------------------------------------------------------------------
    def _Attribute(self, node: ast.Attribute, depth: int) -> Any:
        if node.attr == "T":
            return self.to_array(self.eval(node.value, depth)).T
        raise self.fail(f"attribute .{node.attr} is not allowed: use .reshape(...), .astype(...) or .T")

    def _Call(self, node: ast.Call, depth: int) -> Any:
        if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
            raise self.fail("* and ** arguments are not allowed")
        func = node.func
        if isinstance(func, ast.Name):
            if func.id not in FUNCTIONS:
                raise self.fail(f"unknown function {func.id!r}: use {', '.join(FUNCTIONS)}")
            name, target = func.id, None
        elif isinstance(func, ast.Attribute):
            if func.attr not in METHODS:
                raise self.fail(f"method .{func.attr}() is not allowed: use .reshape(...) or .astype(...)")
            name, target = func.attr, self.to_array(self.eval(func.value, depth))
            if name == "astype":  # the argument is a dtype name, not a value
                if len(node.args) + len(node.keywords) != 1 or (node.keywords and node.keywords[0].arg != "dtype"):
                    raise self.fail("astype takes one dtype name: .astype(int32)")
                return self.cast(target, self.dtype_arg(node.args[0] if node.args else node.keywords[0].value))
        else:
            raise self.fail(f"{_describe(func)} cannot be called")
        args = self.eval_items(node.args, depth, f"the arguments of {name}()")
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg == "dtype":
                kwargs["dtype"] = self.dtype_arg(keyword.value)
            elif name == "linspace" and keyword.arg == "num":
                kwargs["num"] = self.eval(keyword.value, depth)
            else:
                raise self.fail(f"{name}() has no keyword {keyword.arg!r} (only dtype=)")
        if target is not None:
            return self.call_reshape(target, args, kwargs)
        return getattr(self, "call_" + name)(args, kwargs)

    def dtype_arg(self, node: ast.AST) -> np.dtype:
        self.explicit = True
        if isinstance(node, ast.Name):
            return check_dtype(node.id)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return check_dtype(node.value)
        raise self.fail(f"dtype must be a name such as float32 or 'int32', not {_describe(node)}")

    def dtype_of(self, kwargs: dict[str, Any]) -> np.dtype:
        return kwargs.get("dtype", self.default)

    def call_ones(self, args: list[Any], kwargs: dict[str, Any]) -> np.ndarray:
        shape = self.shape_of(args, "ones")
        return np.ones(shape, self.dtype_of(kwargs))

    def call_zeros(self, args: list[Any], kwargs: dict[str, Any]) -> np.ndarray:
        shape = self.shape_of(args, "zeros")
        return np.zeros(shape, self.dtype_of(kwargs))

    def call_full(self, args: list[Any], kwargs: dict[str, Any]) -> np.ndarray:
        if len(args) != 2 or not _is_number(args[1]):
            raise self.fail("full takes a shape and a number: full((2,2), 0.5)")
        shape = self.shape_of([args[0]], "full")
        self.check_fits([args[1]], self.dtype_of(kwargs), "full")
        try:
            return np.full(shape, args[1], self.dtype_of(kwargs))
        except (OverflowError, ValueError) as error:
            raise self.fail(f"full: {error}") from None

    def call_arange(self, args: list[Any], kwargs: dict[str, Any]) -> np.ndarray:
        if not 1 <= len(args) <= 3 or not all(_is_number(a) for a in args):
            raise self.fail("arange takes 1 to 3 numbers: arange(stop), arange(start, stop[, step])")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        if step == 0:
            raise self.fail("arange step must not be 0")
        if not all(math.isfinite(x) for x in (start, stop, step)):
            raise self.fail("arange needs finite numbers")
        try:
            count = max(0, math.ceil((stop - start) / step))
        except OverflowError:  # a tiny step: (stop - start) / step is inf
            raise self.fail(f"arange({start}, {stop}, {step}) would have too many elements") from None
        self.check_size((count,), "arange")
        dtype = self.dtype_of(kwargs)
        if count:
            self.check_fits([start, start + (count - 1) * step], dtype, "arange")
        if count == 0:  # numpy overflows on some empty ranges, e.g. arange(0, -1e19)
            return np.zeros(0, dtype)
        try:
            return np.arange(start, stop, step, dtype=dtype)
        except (ValueError, TypeError, OverflowError) as error:  # e.g. 1000 in int8, arange(9, dtype=bool)
            raise self.fail(f"arange: {error}") from None

    def call_eye(self, args: list[Any], kwargs: dict[str, Any]) -> np.ndarray:
        if not 1 <= len(args) <= 2:
            raise self.fail("eye takes N or N, M: eye(3)")
        n = self.dim(args[0], "eye")
        m = self.dim(args[1], "eye") if len(args) == 2 else n
        self.check_size((n, m), "eye")
        return np.eye(n, m, dtype=self.dtype_of(kwargs))

    def call_linspace(self, args: list[Any], kwargs: dict[str, Any]) -> np.ndarray:
        if "num" in kwargs:
            args = [*args, kwargs["num"]]
        if len(args) not in (2, 3) or not all(_is_number(a) for a in args):
            raise self.fail("linspace takes start, stop[, num]: linspace(0, 1, 5)")
        num = self.dim(args[2], "linspace") if len(args) == 3 else 50
        self.check_size((num,), "linspace")
        self.check_fits(args[:2], self.dtype_of(kwargs), "linspace")
        return np.linspace(args[0], args[1], num, dtype=self.dtype_of(kwargs))

    def call_array(self, args: list[Any], kwargs: dict[str, Any]) -> np.ndarray:
        if len(args) != 1:
            raise self.fail("array takes one list: array([1, 2], dtype=int32)")
        return self.to_array(args[0], self.dtype_of(kwargs))

    def call_reshape(self, target: np.ndarray, args: list[Any], kwargs: dict[str, Any]) -> np.ndarray:
        if kwargs:
            raise self.fail("reshape takes only a shape")
        if len(args) == 1 and isinstance(args[0], (tuple, list)):
            args = list(args[0])
        if not args or not all(isinstance(a, int) and a >= -1 for a in args) or len(args) > MAX_NDIM:
            raise self.fail("reshape takes whole numbers (one may be -1): .reshape(3, 3)")
        try:
            return target.reshape(args)
        except ValueError as error:
            raise self.fail(f"cannot reshape an array of shape {target.shape}: {error}") from None

    # -- helpers ----------------------------------------------------------------------
    def cast(self, array: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """``array.astype(dtype)``, refusing values the integer dtype cannot hold (numpy would wrap)."""
        problem = cast_problem(array, dtype)
        if problem:
            raise self.fail(problem)
        return array.astype(dtype)

    def check_fits(self, numbers: list[Any], dtype: np.dtype, what: str) -> None:
        """Refuse numbers an integer dtype cannot hold (``arange(1000, dtype=int8)``)."""
        if dtype.kind not in "iu":
            return
        info = np.iinfo(dtype)
        for number in numbers:
            if not math.isfinite(number) or not info.min <= math.trunc(number) <= info.max:
                raise self.fail(
                    f"{what}: {number} does not fit {dtype} ({info.min} to {info.max}); use a wider dtype such as int64"
                )

    def dim(self, value: Any, what: str) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or value < 0:
            raise self.fail(f"{what} needs whole, non-negative sizes, not {value!r}")
        return value

    def shape_of(self, args: list[Any], what: str) -> tuple[int, ...]:
        if len(args) == 1 and isinstance(args[0], (tuple, list)):
            args = list(args[0])
        if len(args) > MAX_NDIM:
            raise self.fail(f"{what}: at most {MAX_NDIM} dimensions")
        shape = tuple(self.dim(a, what) for a in args)
        self.check_size(shape, what)
        return shape

    def check_size(self, shape: tuple[int, ...], what: str) -> None:
        """Refuse, before allocating, an array over the cap, or one that would take the
        arrays alive at once over LIVE_FACTOR times the cap (a+(b+(c+...)) keeps every left
        operand while the right side is evaluated)."""
        count = math.prod(shape)
        # numpy refuses a shape whose non-zero dimensions overflow, even with a 0 among them
        # (ones((0, 10**12, 10**12))): cap that product too, so the refusal is ours.
        spread = math.prod(d for d in shape if d)
        if count == 0 and spread > self.limit:
            raise self.fail(
                f"{what}: its non-zero dimensions multiply to {spread:,}, more than the limit of "
                f"{self.limit:,}, even though the array is empty (use smaller dimensions)"
            )
        if count > self.limit:
            raise self.fail(
                f"{what} would have {count:,} elements, more than the limit of {self.limit:,} "
                "(set KVCLI_MAX_ELEMENTS to raise it, or use @file.npy)"
            )
        if count + self.held > LIVE_FACTOR * self.limit:
            raise self.fail(
                f"{what} would bring the arrays held at once to {count + self.held:,} elements, more than "
                f"{LIVE_FACTOR} x the limit of {self.limit:,} (simplify the expression, set "
                "KVCLI_MAX_ELEMENTS to raise the limit, or use @file.npy)"
            )

    def operand(self, value: Any) -> Any:
        return value if _is_number(value) else self.to_array(value)

    def to_array(self, value: Any, dtype: np.dtype | None = None) -> np.ndarray:
        if isinstance(value, np.ndarray):
            return value if dtype is None or value.dtype == dtype else self.cast(value, dtype)
        self.check_size((_count(value),), "the list")
        try:
            array = np.array(value, dtype=dtype or self.default)
        except (ValueError, TypeError, OverflowError) as error:
            raise self.fail(f"the list is not a regular array ({error})") from None
        return array


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


#: How many times the element cap the arrays alive at once during one evaluation may hold:
#: room for an operation's operands and its result (``ones(n) + ones(n)``), not for
#: arbitrarily deep nesting.
LIVE_FACTOR = 3


def _count(value: Any) -> int:
    """Elements of a nested list/tuple of numbers and arrays (without building it)."""
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, (list, tuple)):
        return sum(_count(item) for item in value) if value else 0
    return 1


def _describe(node: ast.AST) -> str:
    try:
        return repr(ast.unparse(node)[:40])
    except Exception:  # pragma: no cover
        return type(node).__name__
