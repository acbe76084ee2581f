"""The exceptions kvcli raises on bad input.

Every message is one line that names what is wrong (the key, the file) and how to fix it.
Each class carries the exit code of a command that fails with it (``exit_code``, as click's
exceptions carry theirs): 1 for a user error, 2 for a :class:`UsageError`. The CLI prints the
message in red with its advice and exits with that code (:mod:`kvcli.cli.failures`); anything
that is not a :class:`KVCliError` is a bug and keeps its traceback.
"""

from __future__ import annotations


def bad_param(error: type["KVCliError"], param: str, about: str, where: str = "", **fields: object) -> "KVCliError":
    """An ``error`` about the value of the Python parameter ``param``: its message is
    ``{where}{param} {about}`` (``depth 0: use a positive number of name parts``). The
    fields keep the parts, so a front end names the parameter its own way (the CLI: the
    flag, ``--depth 0: ...``); library messages never name a command-line flag."""
    return error(f"{where}{param} {about}", param=param, about=about, where=where, **fields)


class MXNetError(RuntimeError):
    """MXNet's error class (``mxnet.base.MXNetError``, a ``RuntimeError``), re-exported as
    ``kvcli.mx.base.MXNetError``: MXNet code that catches it also catches every kvcli error."""


class KVCliError(MXNetError):
    """Base class of every user-facing kvcli error (and so an :class:`MXNetError`).

    Keyword arguments are kept in :attr:`fields` (e.g. ``key=``, ``session=``, ``remedy=``):
    a front end (the CLI, the shell) reads them to word its own advice, so the message itself
    speaks Python only.
    """

    #: The exit code of a command that fails with this error: 1, a user error (what is wrong
    #: and the fix; nothing was changed).
    exit_code: int = 1

    def __init__(self, *args: object, **fields: object) -> None:
        super().__init__(*args)
        self.fields = fields

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else self.__class__.__name__


class UsageError(KVCliError):
    """A command line kvcli cannot run as typed (an unknown command or option, a value the
    option does not take, an option the command refuses): exit 2, as click's usage errors.
    ``fields``: ``command``, the command words whose help the advice names (None: kvcli's)."""

    exit_code = 2


class ConfigError(KVCliError, ValueError):
    """A ``KVCLI_*`` environment variable has a value kvcli cannot use (see :mod:`kvcli.config`)."""


class BadValueError(KVCliError, ValueError):
    """A value given as text (a command-line option, a ``KVCLI_*`` variable, a shell
    setting) does not convert: not a number of its kind, outside its range, not one of the
    choices. The message is the problem (``'x' is not a whole number``, ``is outside
    1..64``); the caller says where the text came from (:func:`kvcli.config.parse_number`)."""


class StoreError(KVCliError):
    """A KVStore operation was given input it cannot apply."""


class UnknownKeyError(StoreError, KeyError):
    """A key was pushed or pulled before ``init``."""


class KeyTypeError(StoreError, TypeError):
    """A key is not an int or str, or a store mixes int and str keys."""


class KeyTypeAssertionError(KeyTypeError, AssertionError):
    """A key that is not an int or str, or a list mixing int and str keys, given to
    ``kvcli.mx``'s KVStore: an ``AssertionError`` as MXNet's ``assert`` on keys raises."""


class StoreClosedError(StoreError, RuntimeError):
    """The store was closed; create a new one."""


class OutputError(StoreError, TypeError):
    """A pull's ``out`` cannot be written in place (not an array, or read-only)."""


class ValueTypeError(StoreError, TypeError):
    """A value is not a numeric array kvcli can store (strings, objects, ragged lists), or a
    count such as ``devices`` is out of range."""


class ShapeMismatchError(StoreError, ValueError):
    """A pushed or pulled array's shape differs from the stored one."""


class DTypeMismatchError(StoreError, TypeError):
    """A pushed or pulled array's dtype differs from the stored one."""


class ArityError(StoreError, ValueError):
    """Lists of keys, values or outputs do not pair up."""


class ArityAssertionError(ArityError, AssertionError):
    """What MXNet's KVStore refuses with an ``assert`` before its engine runs (a list of keys
    and a list of values of other lengths, a ``pull`` or ``row_sparse_pull`` without ``out``,
    a ``row_sparse_pull`` without ``row_ids``): raised by ``kvcli.mx``, an ``AssertionError``
    as MXNet's is, so MXNet code that catches that catches it."""


class RowSparseError(StoreError, ValueError):
    """A row-sparse array or row id list is malformed (unsorted, repeated, out of range), or
    an operation needs row-sparse storage it did not get."""


class CSRError(KVCliError, ValueError):
    """A CSR array is malformed (indptr, unsorted or repeated columns, out of range), or a
    conversion MXNet does not support either (csr <-> row_sparse)."""


class SparseUnsupportedError(KVCliError, NotImplementedError, TypeError, ValueError):
    """An operation on a sparse NDArray that kvcli does not perform (MXNet's
    ``NotSupportedForSparseNDArray``, or what MXNet itself refuses on sparse storage). It is
    also each builtin class MXNet raises in these cases (``NotImplementedError``,
    ``TypeError``, ``ValueError``), so code that catches MXNet's error catches kvcli's."""


class UnsupportedError(StoreError, ValueError):
    """An MXNet feature kvcli does not provide for this store (a store type, a capability,
    gradient compression on ``local``); the message names what to use instead."""


class UpdaterError(KVCliError, ValueError):
    """An updater spec does not parse, or its code cannot be loaded."""


class OptimizerArgumentError(UpdaterError, TypeError):
    """``create_optimizer`` (``mx.optimizer.create``) got a keyword the optimizer does not take:
    a ``TypeError`` too, as MXNet's constructor raises."""


class OptimizerStateError(KVCliError, ValueError):
    """Optimizer state cannot be saved or loaded."""


class OptimizerStateAssertionError(OptimizerStateError, AssertionError):
    """``kvcli.mx``'s ``save_optimizer_states`` / ``load_optimizer_states`` on a store without
    an optimizer: an ``AssertionError`` as MXNet's ``assert self._updater is not None``."""


class DeviceError(StoreError, RuntimeError):
    """A device worker process failed or could not be started."""


class SharedMemoryError(DeviceError, MemoryError):
    """Shared memory (``/dev/shm``) cannot hold what a ``device`` store needs.

    Attributes:
        needed: bytes that were asked for.
        free: bytes free in ``/dev/shm`` when it was checked (None if unknown).
    """

    def __init__(self, message: str, needed: int, free: int | None = None) -> None:
        super().__init__(message)
        self.needed = needed
        self.free = free


class DistributedError(StoreError, RuntimeError):
    """The distributed store failed (Ray missing, a worker died, a timeout)."""


class SessionError(KVCliError):
    """The on-disk session cannot be read, locked or written."""


class UnsafePathError(KVCliError):
    """A folder or socket kvcli would use belongs to another user, or other users may write
    it (a home or session folder, the private runtime folder of the warm devices, a device
    socket served by someone else): kvcli refuses it rather than trust what is in it."""


class ValueLanguageError(KVCliError, ValueError):
    """A CLI value expression does not parse or is not allowed."""


class SymbolError(KVCliError, ValueError):
    """A symbol JSON file or a graph built in Python is malformed."""


class ShapeInferenceError(SymbolError):
    """Shapes given or inferred for a graph conflict."""


class LayoutTimeoutError(SymbolError):
    """graphviz's ``dot`` took longer than allowed (``layout_timeout``, or a trial's budget)."""


class GraphvizMissingError(SymbolError):
    """graphviz's ``dot`` program is not installed (the .dot source was written instead)."""


class ShapeSpecError(ShapeInferenceError):
    """A ``shape`` spec (``--shape`` of the CLI) does not parse or names no variable of the graph."""


class ParamsFileError(KVCliError, ValueError):
    """A ``.params`` file is damaged, truncated or not an MXNet NDArray file, or data cannot
    be written in that format."""


class NDArrayError(KVCliError, ValueError):
    """An ``nd`` operation was given operands it cannot combine (dtypes, shapes)."""


class OutOfScopeError(KVCliError, AttributeError):
    """An MXNet 1.9.1 name kvcli.mx does not provide (``mx.gluon``, ``mx.nd.crop``): declared in
    kvcli's scope table (:mod:`kvcli.mx.scope_table`), whose message says what to use. An
    ``AttributeError``, so ``hasattr(mx, "gluon")`` is False as for any missing name.
    ``fields``: ``module`` (MXNet's module path), ``name``."""


class OutOfScopeImportError(KVCliError, ImportError):
    """``import kvcli.mx.gluon`` of an MXNet module kvcli.mx does not provide: the same
    message as :class:`OutOfScopeError`, as the ``ImportError`` an import statement raises."""


class NotImplementedForSymbol(KVCliError):
    """MXNet's ``mxnet.base.NotImplementedForSymbol``: an NDArray-only function called on a
    Symbol. ``NotImplementedForSymbol(function, alias, *args)`` as in MXNet."""

    def __init__(self, function: object, alias: object = None, *args: object) -> None:
        super().__init__(_only_in_ndarray(function, alias, args, "is not implemented for Symbol"))
        self.function, self.alias = getattr(function, "__name__", str(function)), alias


class NotSupportedForSparseNDArray(KVCliError):
    """MXNet's ``mxnet.base.NotSupportedForSparseNDArray``: a dense-only function called on a
    sparse array. ``NotSupportedForSparseNDArray(function, alias, *args)`` as in MXNet."""

    def __init__(self, function: object, alias: object = None, *args: object) -> None:
        super().__init__(_only_in_ndarray(function, alias, args, "is not supported for SparseNDArray"))
        self.function, self.alias = getattr(function, "__name__", str(function)), alias


def _only_in_ndarray(function: object, alias: object, args: tuple[object, ...], problem: str) -> str:
    """MXNet's wording: ``Function f (namely operator "op") with arguments (...) <problem> and
    only available in NDArray.``"""
    text = f"Function {getattr(function, '__name__', str(function))}"
    if alias:
        text += f' (namely operator "{alias}")'
    if args:
        text += " with arguments (" + ", ".join(str(type(a)) for a in args) + ")"
    return f"{text} {problem} and only available in NDArray."


class DiskError(SessionError):
    """A session file could not be written (a full, read-only or failing disk)."""

    def __init__(self, message: str, errno_: int | None) -> None:
        super().__init__(message)
        self.errno = errno_

    @property
    def no_space(self) -> bool:
        import errno

        return self.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


class CompressionError(StoreError, ValueError):
    """Gradient compression parameters are malformed."""


class StdoutClosed(Exception):
    """The reader of stdout left (``kvcli pull w | head``): the command ends quietly, exit 0.
    Not an ``OSError``, so click does not turn it into its own exit 1 on the way out."""


# ---------------------------------------------------------------------- internal problems
# Raised and caught inside kvcli, then reworded with the file or message they are about
# (a user sees a SymbolError, SessionError or DeviceError, never these).


class AttrError(ValueError):
    """An attribute value does not have the type its operator expects."""


class NpyError(Exception):
    """A ``.npy`` problem: ``kind`` is ``pickle``, ``missing``, ``not-regular``, ``limit``,
    ``size`` (a ``.npz`` member declares too many bytes), ``timeout``, ``mismatch``, ``io``
    (reading failed) or ``bad``; ``str()`` is the problem, without the file name."""

    def __init__(self, problem: str, kind: str = "bad") -> None:
        super().__init__(problem)
        self.kind = kind


class ManifestProblem(ValueError):
    """What is wrong with a manifest (one line, without the file name)."""


class ProtocolError(ValueError):
    """A message that is not a JSON array of the expected shape."""

