"""The parser: the command table (:mod:`kvcli.cli.table`) as typer's click objects, of which
only the invoked command is built (the startup fast path, :mod:`kvcli.cli.fast`, reads the
plain command lines from the same table without importing typer).

The root is a click group (:class:`TableGroup`) whose ``commands`` mapping names every table
command but builds one only when it is looked up: ``kvcli pull k`` builds ``pull`` and nothing
else, ``kvcli --help`` and completion build what they list. Each table
:class:`~kvcli.cli.table.Command` becomes a plain function taking ``**values`` whose
``__signature__`` lists one ``typer.Option``/``typer.Argument`` per table entry: typer reads a
command's parameters from its function's signature and has no other public way to declare them;
setting ``__signature__`` (no ``exec``, no generated source) is how the table stays the one
place an option is written. typer then parses, completes and prints help. The global options
are accepted before the command (on the root) and after it (copies on each table command, in
their own help panel).

The table converts the values (``Opt.convert``, ``Arg.convert``), not typer: typer converts
each value through a pydantic ``TypeAdapter``, and importing pydantic and building the adapters
costs more than importing numpy. So each built parameter's ``process_value`` (click's step from
the parsed text to the value) is the table's (:func:`_fit`), as on the fast path; typer's
remains for what the table does not declare (``--help``, completion) and words the error of a
missing argument.

The optimizer list in ``set-updater``'s help imports the optimizers (and numpy): it is
filled in only when that help is printed (:class:`_LazyHelpCommand`), not at start-up.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any, Callable, List, Optional, Union

import typer
from typer.core import TyperCommand, TyperGroup

from kvcli import __version__
from kvcli.cli import output, table
from kvcli.cli.core import GlobalOptions, dispatch, make_global_options
from kvcli.cli.table import Arg, Command, Opt
from kvcli.errors import BadValueError

APP_HELP = "MXNet's KVStore and network visualisation, without MXNet."
GLOBAL_PANEL = "Global options (before or after the command)"
_apps: dict[bool, Any] = {}


def global_options(ctx: Any) -> GlobalOptions:
    """The :class:`GlobalOptions` of the running command (``ctx``: its typer Context)."""
    root = ctx.find_root()
    return root.obj if isinstance(root.obj, GlobalOptions) else GlobalOptions()


# ---------------------------------------------------------------------- table -> typer parameters
_enums: dict[tuple[str, ...], Any] = {}


def _choice_enum(choices: tuple[str, ...]) -> Any:
    """typer's way to declare a choice: an Enum of the table's strings (made once)."""
    from enum import Enum

    if choices not in _enums:
        _enums[choices] = Enum("Choice_" + "_".join(choices), {c: c for c in choices}, type=str)
    return _enums[choices]


def _plain(value: Any) -> Any:
    """An Enum member (a choice) as its string; anything else as it is."""
    from enum import Enum

    return value.value if isinstance(value, Enum) else value


def _annotation(kind: str, many: bool = False, required: bool = True, choices: tuple[str, ...] = ()) -> Any:
    base = {"int": int, "float": float, "path": Path, "flag": bool}.get(kind, str)
    if kind == "choice":
        base = _choice_enum(choices)
    if many:
        return List[base]  # type: ignore[valid-type]
    return base if required or kind == "flag" else Optional[base]


def _completer(what: Optional[str]) -> Optional[Callable[..., Any]]:
    if what is None:
        return None
    from kvcli.cli import completion

    return completion.typer_completer(what)


def _option(opt: Opt, panel: Optional[str] = None, hidden: bool = False) -> tuple[Any, Any]:
    """typer's Option for table ``opt``. Numbers are converted and range-checked by the
    table's own :meth:`~kvcli.cli.table.Opt.convert` (itself
    :func:`kvcli.config.parse_number`), not by typer's ``min``/``max``; and typer never reads
    the option's ``KVCLI_*`` variable: left unset, the option is None and the library
    reads and checks the variable (:func:`kvcli.config.get`)."""
    default: Any = ... if opt.required else (False if opt.kind == "flag" else opt.default)
    extra: dict[str, Any] = {}
    if opt.kind in ("int", "float", "path"):  # a path: no click check (it would differ from ours)
        extra["parser"] = opt.convert
    if opt.kind == "choice":
        extra["case_sensitive"] = False
    if opt.kind != "flag":
        extra["metavar"] = opt.shown_metavar()
    completer = _completer(opt.complete)
    if completer is not None:
        extra["autocompletion"] = completer
    info = typer.Option(
        default, *opt.flags, help=opt.help + opt.range_text(), rich_help_panel=panel,
        show_default=opt.kind not in ("flag",) and opt.default is not None, hidden=hidden, **extra,
    )
    if opt.multiple:
        return _annotation(opt.kind, many=True), info
    return _annotation(opt.kind, required=opt.required or opt.default is not None, choices=opt.choices), info


def _argument(arg: Arg) -> tuple[Any, Any]:
    extra: dict[str, Any] = {}
    if arg.kind == "path":  # read by the command, which says what is wrong with it (exit 1)
        extra["parser"] = arg.convert
    completer = _completer(arg.complete)
    if completer is not None:
        extra["autocompletion"] = completer
    info = typer.Argument(... if arg.required else None, metavar=arg.metavar, help=arg.help, show_default=False, **extra)
    return _annotation(arg.kind, arg.many, arg.required), info


def command_function(command: Command, with_globals: bool = True, for_shell: bool = False) -> Callable[..., None]:
    """A typer command function for ``command``: its signature comes from the table."""
    parameters = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)]
    for arg in command.args:
        annotation, info = _argument(arg)
        parameters.append(inspect.Parameter(arg.dest, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation))
    own = {o.dest for o in command.opts}
    for opt in command.opts:
        annotation, info = _option(opt)
        parameters.append(inspect.Parameter(opt.dest, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation))
    globals_ = [o for o in table.GLOBAL_OPTIONS if o.dest not in own] if with_globals else []
    refused: dict[str, str] = dict(command.extra.get("refused", {}))
    for opt in globals_:  # a refused one is parsed (to be refused in words) but not listed
        annotation, info = _option(opt, GLOBAL_PANEL, hidden=opt.dest in refused)
        parameters.append(
            inspect.Parameter("g_" + opt.dest, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation)
        )

    def function(ctx: typer.Context, **values: Any) -> None:
        if command.children and ctx.invoked_subcommand is not None:
            return  # `sessions delete NAME`: the sub-command runs
        after = {k[2:]: _plain(values.pop(k)) for k in list(values) if k.startswith("g_")}
        for dest, reason in refused.items():  # typed before or after the command
            if after.get(dest) not in (None, False) or _from_command_line(ctx.find_root(), dest):
                from kvcli.errors import UsageError

                flag = next(o.long for o in table.GLOBAL_OPTIONS if o.dest == dest)
                raise UsageError(f"{command.name} {flag}: {reason}", command=command.name)
        dispatch(command, merge_globals(global_options(ctx), after), {k: _plain(v) for k, v in values.items()})

    function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    function.__annotations__ = {p.name: p.annotation for p in parameters}
    function.__name__ = command.name.replace("-", "_") + "_command"
    function.__doc__ = command.help + _examples(command, for_shell)
    return function


def _examples(command: Command, for_shell: bool = False) -> str:
    examples = command.examples
    if for_shell:  # typed at the shell's prompt: no "kvcli", and no shell redirections
        examples = tuple(e.removeprefix("kvcli ") for e in examples if ">" not in e and "&&" not in e)
    if not examples:
        return ""
    word = "Examples" if len(examples) > 1 else "Example"
    return f"\n\n[bold]{word}:[/]  " + "  ·  ".join(examples)


def merge_globals(base: GlobalOptions, after: dict[str, Any]) -> GlobalOptions:
    """``base`` with the global options given after the command (those win)."""
    given = {k: v for k, v in after.items() if v not in (None, False)}
    if not given:
        return base
    store_options = dict(base.store_options)
    for name, dest in output.STORE_OPTION_DESTS.items():
        if dest in given:
            store_options[name] = given[dest]
    return GlobalOptions(
        session=given.get("session", base.session),
        home=given.get("home", base.home),
        json=base.json or bool(given.get("json")),
        store_type=given.get("store_type", base.store_type),
        store_options=store_options,
        live=base.live,
    )


# ---------------------------------------------------------------------- the app
def _print_version(ctx: typer.Context, value: bool) -> None:
    if value:
        # --json anywhere on the line (run_click passes it in ctx.obj: -V is read before it)
        if isinstance(ctx.obj, GlobalOptions) and ctx.obj.json:
            output.print_json({"version": __version__})
        else:
            print(f"kvcli {__version__}")
        raise typer.Exit()


def _root_callback() -> Callable[..., None]:
    parameters = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)]
    for opt in table.GLOBAL_OPTIONS:
        annotation, info = _option(opt)
        parameters.append(inspect.Parameter(opt.dest, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation))
    version = typer.Option(False, *table.VERSION_FLAGS, callback=_print_version, is_eager=True,
                           help="Print the version and exit.")
    parameters.append(inspect.Parameter("version", inspect.Parameter.KEYWORD_ONLY, default=version, annotation=bool))

    def callback(ctx: typer.Context, **values: Any) -> None:
        values.pop("version", None)
        values = {k: _plain(v) for k, v in values.items()}
        prior = ctx.obj if isinstance(ctx.obj, GlobalOptions) else None
        if prior is not None and prior.live is not None:
            # in the shell, only a --session/--home typed on the line leaves its session
            for name in ("session", "home"):
                if not _from_command_line(ctx, name):
                    values[name] = None
        ctx.obj = make_global_options(prior, values)
        if ctx.invoked_subcommand is None:  # bare `kvcli`: help, exit 0 (as `kvcli help`)
            print_help([], for_shell=ctx.obj.live is not None)
            raise typer.Exit(0)

    callback.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    callback.__annotations__ = {p.name: p.annotation for p in parameters}
    callback.__doc__ = APP_HELP
    return callback


def _from_command_line(ctx: Any, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return getattr(source, "name", "") == "COMMANDLINE"


def _typer(help_text: str, **extra: Any) -> typer.Typer:
    return typer.Typer(
        help=help_text, add_completion=False, pretty_exceptions_enable=False, rich_markup_mode="rich",
        context_settings={"help_option_names": list(table.HELP_FLAGS)}, **extra,
    )


class _LazyHelpCommand(TyperCommand):
    """A command whose SPEC argument's help ends with the optimizers and their arguments
    (:func:`kvcli.optim.spec.spec_help`, from the optimizers' one table). Building that text
    imports every optimizer, so it is added when the help is formatted, not when the app is
    built: a one-shot ``kvcli pull`` never pays for it."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from kvcli.optim.spec import spec_help

        command = table.find(self.name or "")
        dests = {arg.dest for arg in command.args if arg.complete == "updater"} if command else set()
        for param in self.params:
            if param.name in dests:  # from the table's help each time, so it is added once
                text = next(arg.help for arg in command.args if arg.dest == param.name)  # type: ignore[union-attr]
                param.help = f"{text}. {spec_help()}"  # type: ignore[attr-defined]
        super().format_help(ctx, formatter)


def _group(command: Command, for_shell: bool) -> typer.Typer:
    """The typer group of table ``command`` with children (``sessions``: ``sessions delete``)."""
    group = _typer(command.help + _examples(command, for_shell), name=command.name, invoke_without_command=True)
    group.callback()(command_function(command, for_shell=for_shell))
    for child in command.children:
        add_command(group, child, for_shell)
    return group


def add_command(app: typer.Typer, command: Command, for_shell: bool = False) -> None:
    """Register table ``command`` (and its sub-commands) on ``app``."""
    if command.children:
        app.add_typer(_group(command, for_shell), name=command.name)
        return
    settings: dict[str, Any] = {}
    if command.passthrough:
        settings = {"ignore_unknown_options": True, "allow_interspersed_args": False}
    lazy = any(arg.complete == "updater" for arg in command.args)
    app.command(command.name, context_settings=settings or None, cls=_LazyHelpCommand if lazy else None)(
        command_function(command, for_shell=for_shell))


def build_command(command: Command, for_shell: bool = False) -> Any:
    """The click command of table ``command`` alone (a group when it has sub-commands), made
    kvcli's by :func:`_fit`."""
    from typer.main import get_command

    if command.children:
        built = get_command(_group(command, for_shell))
    else:
        app = _typer(APP_HELP)
        add_command(app, command, for_shell)
        built = get_command(app)  # one command and no callback: typer gives that command
    _fit(built, command)
    return built


class _TableCommands(MutableMapping[str, Any]):
    """The root's commands: every table command's name, in the table's order; a command is
    built (:func:`build_command`) the first time it is looked up. ``for_shell`` leaves out
    the commands that cannot run in ``kvcli shell``."""

    def __init__(self, for_shell: bool) -> None:
        self.for_shell = for_shell
        self.names = [c.name for c in table.commands() if c.in_shell or not for_shell]
        self.built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            entry = table.find(name)
            if entry is None or name not in self.names:
                raise KeyError(name)
            self.built[name] = build_command(entry, self.for_shell)
        return self.built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.built[name] = command
        if name not in self.names:
            self.names.append(name)

    def __delitem__(self, name: str) -> None:
        self.names.remove(name)
        self.built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


class TableGroup(TyperGroup):
    """The root command (``kvcli``): it lists every table command and builds only the one a
    command line invokes (click looks commands up in ``commands``)."""

    for_shell = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _TableCommands(self.for_shell)

    def get_params(self, ctx: Any) -> list[Any]:
        # fitted here, where click reads them: typer appends its completion options after
        # it has made the group
        params: list[Any] = super().get_params(ctx)
        _fit_params(params, _items(None))
        return params

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names, without building every command


class ShellTableGroup(TableGroup):
    """The root of ``kvcli shell``'s lines: without the commands that cannot run there."""

    for_shell = True


def build_app(for_shell: bool = False) -> typer.Typer:
    """The typer app (built once per mode): the root's global options and callback; its
    commands are the table's, built when invoked (:class:`TableGroup`). ``for_shell`` leaves
    out the commands that cannot run in ``kvcli shell`` (shell, launch) and the completion
    options."""
    if for_shell in _apps:
        return _apps[for_shell]
    app = typer.Typer(
        name="kvcli", help=APP_HELP, add_completion=not for_shell, pretty_exceptions_enable=False,
        rich_markup_mode="rich", invoke_without_command=True, cls=ShellTableGroup if for_shell else TableGroup,
        context_settings={"help_option_names": list(table.HELP_FLAGS)},
    )
    app.callback()(_root_callback())
    _apps[for_shell] = app
    return app


_roots: dict[bool, Any] = {}


def root_command(for_shell: bool = False) -> Any:
    """The click command of the app (what runs a command line), built once per mode."""
    if for_shell not in _roots:
        from typer.main import get_command

        _roots[for_shell] = get_command(build_app(for_shell))
    return _roots[for_shell]


# ---------------------------------------------------------------------- typer's objects made kvcli's
def _items(command: Optional[Command]) -> dict[str, Union[Opt, Arg]]:
    """The table entry of each parameter of ``command``'s click object (None: the root's)."""
    if command is None:
        return {opt.dest: opt for opt in table.GLOBAL_OPTIONS}
    items: dict[str, Union[Opt, Arg]] = {arg.dest: arg for arg in command.args}
    items.update({opt.dest: opt for opt in command.opts})
    items.update({"g_" + opt.dest: opt for opt in table.GLOBAL_OPTIONS if opt.dest not in items})
    return items


def _process_value(param: Any, item: Optional[Union[Opt, Arg]], typers: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """click's ``process_value`` for ``param``: a value typed for a table ``item`` is converted
    by the table (a bad one is click's usage error, with the table's words); what is not typed
    (None), a flag's True/False and a parameter typer adds itself (``item`` None: ``--help``,
    completion) need no table; ``typers`` (typer's own step) words a missing argument."""
    many = bool(param.multiple) or param.nargs == -1

    def process_value(ctx: Any, value: Any) -> Any:
        if value is not None and not isinstance(value, bool):
            if item is None:
                return typers(ctx, value)
            try:
                value = tuple(item.convert(v) for v in value) if many else item.convert(value)
            except BadValueError as error:
                raise typer.BadParameter(str(error), ctx=ctx, param=param) from None
        if param.required and param.value_is_missing(value):
            return typers(ctx, value)  # raises typer's "Missing argument 'KEY'"
        if many and value is None:
            value = ()
        return param.callback(ctx, param, value) if param.callback is not None else value

    process_value.from_table = True  # type: ignore[attr-defined]
    return process_value


def _fit(command: Any, entry: Command) -> None:
    """Make typer's click object of table ``entry`` kvcli's (:func:`_fit_params`), its
    sub-commands too."""
    ctx = typer.Context(command, info_name="kvcli", help_option_names=list(table.HELP_FLAGS))
    _fit_params(command.get_params(ctx), _items(entry))
    for child in entry.children:
        _fit(command.commands[child.name], child)


def _fit_params(params: list[Any], items: dict[str, Union[Opt, Arg]]) -> None:
    """Make typer's click ``params`` kvcli's (once each): the table converts their values
    (:func:`_process_value`; ``items``: the table entry of each by name), and help shows
    plain words.

    Help shows a flag as just its name and a value as its metavar (``N``, ``FILE``), never
    typer's type placeholders (``<bool>``, ``<list[str]>``): ranges are in the help text,
    from the table. typer's public API has no setting to hide a parameter's type column (an
    option's ``metavar`` replaces the type but an argument's and a flag's do not), and its
    usage line puts a required argument in braces (``{KEY}``). So those display methods
    (click's public ``get_usage_pieces`` for the usage line) are replaced on the instance."""
    for param in params:
        if getattr(param.process_value, "from_table", False):
            continue
        param.process_value = _process_value(param, items.get(param.name or ""), param.process_value)
        if getattr(param, "is_flag", False) or getattr(param, "param_type_name", "") == "argument":
            param.display_type_rich = lambda ctx: None
        if getattr(param, "param_type_name", "") == "argument":  # `KEY VALUE...`, not `{KEY} {VALUE}...`
            param.get_usage_pieces = lambda ctx, shown=usage_word(param): [shown]


def usage_word(param: Any) -> str:
    """An argument as a usage line shows it: its metavar, ``...`` when it takes several
    (never twice), in brackets when it may be left out."""
    word = param.metavar or param.name.upper()
    if param.nargs != 1 and not word.endswith("..."):
        word += "..."
    return word if param.required else f"[{word}]"


def print_help(words: list[str], for_shell: bool = False) -> None:
    """Print the help of the command ``words`` (``[]``: kvcli itself), as ``--help`` does."""
    root = root_command(for_shell)
    if for_shell and not words:
        _print_shell_commands(root)
        return
    # in the shell, usage lines read "push [OPTIONS] KEY", as the command is typed there
    ctx = root.make_context("" if for_shell else "kvcli", [], resilient_parsing=True)
    command = root
    for word in words:
        sub = command.get_command(ctx, word) if hasattr(command, "commands") else None
        if sub is None:  # the front end adds its words for the list (`kvcli help`, `help`)
            from kvcli.errors import UsageError

            raise UsageError(f"no command {' '.join(words)!r}", command=None)
        ctx = sub.make_context(word, [], parent=ctx, resilient_parsing=True)
        command = sub
    typer.echo(ctx.get_help())  # as --help prints it


def _print_shell_commands(root: Any) -> None:
    """``help`` in the shell: its commands, one a line (no "Usage: kvcli", no global options)."""
    from rich.table import Table

    listing = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    for name, command in root.commands.items():
        summary = (command.help or "").strip().split("\n")[0]
        listing.add_row(f"[bold]{name}[/]", summary)
    console = output.stdout_console()
    console.print(listing)
    console.print("Type help CMD for one command's arguments and options (also CMD --help); Tab completes; "
                  "Ctrl-C cancels a running command; clear wipes the screen; Ctrl-D or exit [N] leaves.")


def run_help(options: GlobalOptions, words: Optional[list[str]] = None) -> None:
    """``kvcli help [COMMAND [SUB]]``: the same text as ``--help``."""
    print_help(list(words or []), for_shell=options.live is not None)
