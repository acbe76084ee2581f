"""The declarative command table: every option, argument and command of ``kvcli``, once.

Nothing here imports typer: :mod:`kvcli.cli.build` turns these tables into typer's click
objects (parsing, help, completion) and :meth:`Opt.convert` converts every option's value. A
range, a short flag or a help text is written here and nowhere else.

A command names its implementation as ``"module:function"`` so that importing the table
imports no command code; the function is called as ``function(global_options, **values)``
with one keyword per :class:`Arg`/:class:`Opt` ``dest``.
"""

from __future__ import annotations

from types import MappingProxyType
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Optional

from kvcli import config
from kvcli.errors import BadValueError
from kvcli.store import REGISTRY, SESSION_OPTION_SPECS

STORE_TYPES = tuple(REGISTRY)


class Opt(NamedTuple):
    """One ``--option``.

    ``kind`` is ``flag``, ``str``, ``int``, ``float``, ``path`` or ``choice``; ``low``/``high``
    bound an ``int`` or ``float`` (inclusive); ``envvar`` names the ``KVCLI_*`` variable
    (:mod:`kvcli.config`) the library reads when the option is not given (the parsers never
    read it themselves: the variable is read and checked in one place); ``complete`` names
    what completion offers (``session``, ``key``, ``file``, ``updater``, ``store_type``).
    """

    flags: tuple[str, ...]
    dest: str
    help: str
    kind: str = "str"
    default: Any = None
    low: Optional[float] = None
    high: Optional[float] = None
    choices: tuple[str, ...] = ()
    metavar: Optional[str] = None
    envvar: Optional[str] = None
    required: bool = False
    multiple: bool = False
    complete: Optional[str] = None

    @property
    def long(self) -> str:
        return next(f for f in self.flags if f.startswith("--"))

    @property
    def short(self) -> Optional[str]:
        return next((f for f in self.flags if not f.startswith("--")), None)

    @property
    def takes_value(self) -> bool:
        return self.kind != "flag"

    def shown_metavar(self) -> str:
        """What help shows after the flag: nothing for a flag, else a word (never a type)."""
        if self.kind == "flag":
            return ""
        if self.metavar:
            return self.metavar
        if self.kind == "choice":
            return "[" + "|".join(self.choices) + "]"
        return {"int": "N", "float": "X", "path": "PATH"}.get(self.kind, "TEXT")

    def bounds(self) -> str:
        """A number's range as help says it (``(at least 1)``, ``(1 to 64)``); "" for none."""
        low, high = (_number(b) if b is not None else None for b in (self.low, self.high))
        if self.kind not in ("int", "float") or (low is None and high is None):
            return ""
        return f"(at least {low})" if high is None else f"(at most {high})" if low is None else f"({low} to {high})"

    def range_text(self) -> str:
        """What the help adds after the option's text: its range and its variable."""
        text = f" {self.bounds()}" if self.bounds() else ""
        if self.envvar:  # escaped: the help is rich markup
            text += f" \\[env var: {self.envvar}]"
        return text

    def convert(self, text: Any) -> Any:
        """The value of ``text`` for this option (numbers through the one parser,
        :func:`kvcli.config.parse_number`); :class:`~kvcli.errors.BadValueError` when it
        does not convert. A value that is not text (a default) is returned as it is."""
        if not isinstance(text, str):
            return text
        if self.kind in ("int", "float"):
            try:
                return config.parse_number(text, self.kind, self.low, self.high)
            except BadValueError as error:
                raise BadValueError(f"{text!r} {error}", text=text, option=self.long) from None
        if self.kind == "choice":
            lowered = text.lower()
            if lowered not in self.choices:
                choices = ", ".join(repr(choice) for choice in self.choices)
                raise BadValueError(f"{text!r} is not one of {choices}", text=text, option=self.long)
            return lowered
        if self.kind == "path":
            return Path(text)
        return text


def _number(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


class Arg(NamedTuple):
    """One positional argument (``many``: one or more)."""

    dest: str
    metavar: str
    help: str
    many: bool = False
    required: bool = True
    kind: str = "str"
    complete: Optional[str] = None

    def convert(self, text: Any) -> Any:
        """The value of ``text`` for this argument: a :class:`~pathlib.Path` for a path (read by
        the command, which says what is wrong with it), else the text."""
        return Path(text) if self.kind == "path" and isinstance(text, str) else text


class Command(NamedTuple):
    """One command: its words, its implementation and how it may be run."""

    name: str
    run: str
    help: str
    examples: tuple[str, ...] = ()
    args: tuple[Arg, ...] = ()
    opts: tuple[Opt, ...] = ()
    #: can run inside ``kvcli shell`` (shell and launch cannot)
    in_shell: bool = True
    #: the session must exist (read-only commands say so and list the sessions)
    needs_session: bool = False
    #: sub-commands (``sessions delete NAME``); the command itself runs when none is given
    children: tuple["Command", ...] = ()
    #: everything after the options is the command's (``launch -- python train.py``)
    passthrough: bool = False
    #: read-only settings of one command (``refused``: the global options it refuses, and why)
    extra: Mapping[str, Any] = MappingProxyType({})

    def option(self, flag: str) -> Optional[Opt]:
        return next((o for o in self.opts if flag in o.flags), None)


# ---------------------------------------------------------------------- shared pieces
DEVICES_RANGE = (1, 1024)  # devices of one push/pull (MXNet lists of per-device arrays)
NUM_DEVICES_RANGE = (SESSION_OPTION_SPECS["num_devices"].low, SESSION_OPTION_SPECS["num_devices"].high)

KEYS_HELP = "A key (3, fc1.weight) or a comma-separated list of keys (5,7,9)."
VALUE_HELP = (
    "An expression like 'ones(3,3)*8', 'zeros(2,2)', 'full((2,2),0.5)', 'arange(9).reshape(3,3)', "
    "'[[1,2],[3,4]]' (float32 unless dtype=int32/... is given, as in MXNet), '@file.npy', or '-' "
    "for a .npy (or the JSON of kvcli pull KEY --json) on stdin. Quote it for the shell; put -- before a value "
    "that starts with '-'."
)
YES = Opt(("--yes", "-y"), "yes", "Do not ask for confirmation (needed without a terminal to ask on).", kind="flag")
KEY_ARG = Arg("keys", "KEY", KEYS_HELP, complete="key")
DTYPE = Opt(("--dtype",), "dtype", "Convert the value(s) to this dtype (float32, int32, ...).", metavar="DTYPE")

MODEL_ARG = Arg("file", "FILE", "MXNet symbol JSON file (any version, 0.8 to 1.9); - reads standard input.",
                kind="path", complete="file")
SHAPE = Opt(("--shape",), "shape", "Input shape NAME=D1,D2,... (repeatable; NAME may be a glob such as 'l*_init_*'). "
            "Without it, __shape__ hints stored in the file are used.", multiple=True, metavar="NAME=D1,D2,...")
STRICT = Opt(("--strict",), "strict", "Exit 1 if an op is unknown or shapes are incomplete.", kind="flag")
PARAMS = Opt(("--params",), "params", "MXNet .params file of the model (e.g. MODEL-0000.params): every parameter and "
             "auxiliary state is checked against the inferred shapes (a missing, extra or wrong-shaped array is named "
             "in one line each); the HTML viewer shows each tensor's statistics.", kind="path", metavar="FILE",
             complete="file")
VALUES = Opt(("--values",), "values", "With the .params file, how many values of each tensor the HTML viewer "
             "carries (to page through beside its statistics): a number, or all. Default: the first 1000.",
             metavar="N|all")
NO_PARAMS = Opt(("--no-params",), "no_params", "Do not read the newest MODEL-NNNN.params beside a "
                "MODEL-symbol.json file (read without --params, as MXNet's load_checkpoint names them).", kind="flag")
PARTIAL = Opt(("--partial",), "partial", "Accept --shape values that do not fit the graph (the wrong rank, a kernel "
              "larger than the input): show what can be inferred, with a warning. Without it that is an error.",
              kind="flag")
ALLOW_UNKNOWN = Opt(("--allow-unknown-ops",), "allow_unknown_ops", "Accept ops that are not MXNet operators (custom "
                    "plugin builds): they are drawn with unknown shapes and totals become lower bounds. Without it such "
                    "a file is refused.", kind="flag")

SESSION_WEIGHTS_HELP = ("With --session NAME the session's weights are checked against the graph instead of a .params "
                        "file (keys with or without arg:/aux:, as kvcli load-params names them); the HTML viewer also "
                        "shows each key's version.")

GLOBAL_OPTIONS: tuple[Opt, ...] = (
    Opt(("--session", "-s"), "session", "Session name (default: 'default').", envvar=config.SESSION.name,
        metavar="NAME", complete="session"),
    Opt(("--home",), "home", "Folder that holds the sessions.", kind="path", envvar=config.HOME.name, metavar="DIR",
        complete="dir"),
    Opt(("--json",), "json", "Print JSON for scripts (errors too, on stderr).", kind="flag"),
    Opt(("--type", "-t"), "store_type", "Store type of a new session (remembered; `reset --type` changes it).",
        kind="choice", choices=STORE_TYPES, metavar="TYPE", complete="store_type"),
    Opt(("--num-devices",), "num_devices", "Device processes of a 'device' store.", kind="int",
        low=NUM_DEVICES_RANGE[0], high=NUM_DEVICES_RANGE[1]),
    Opt(("--ray-address",), "ray_address", "Ray cluster of a dist_sync/dist_async store (e.g. auto).",
        metavar="ADDRESS"),
    Opt(("--num-servers",), "num_servers", "Server actors of a dist_sync/dist_async store.", kind="int",
        low=SESSION_OPTION_SPECS["num_servers"].low, high=SESSION_OPTION_SPECS["num_servers"].high),
)

VERSION_FLAGS = ("--version", "-V")
HELP_FLAGS = ("--help", "-h")

SESSION_COMMANDS: tuple[Command, ...] = (
    Command(
        "init", "kvcli.cli.commands:run_init",
        "Initialise KEY with VALUE.\n\n"
        "A key the session has already is re-initialised (reset to VALUE, its optimizer state starts afresh) only "
        "after a question on a terminal; --yes skips it (needed in scripts).",
        ("kvcli init 3 'ones(3,3)*2'", "kvcli init 5,7,9 'ones(2,2)'", "kvcli init w @w.npy",
         "kvcli init w 'zeros(3)' --yes"),
        args=(KEY_ARG, Arg("values", "VALUE", VALUE_HELP + " One for all keys, or one per key.", many=True,
                           complete="value")),
        opts=(DTYPE, YES),
    ),
    Command(
        "push", "kvcli.cli.commands:run_push",
        "Push VALUE to KEY: the updater (default: assign) combines it with the stored value.\n\n"
        "Several values, or one value with --devices N, are a push from several devices: they are summed "
        "first, as in MXNet. Values are built in the key's dtype.",
        ("kvcli push 3 'ones(3,3)*8'", "kvcli push 3 'ones(3,3)' --devices 4", "kvcli push 10,11,12 'ones(2,2)' -d 2"),
        args=(KEY_ARG, Arg("values", "VALUE", VALUE_HELP + " Several values = one per device.", many=True,
                           complete="value")),
        opts=(Opt(("--devices", "-d"), "devices", "Push the value from N devices (N copies, summed first).",
                  kind="int", low=DEVICES_RANGE[0], high=DEVICES_RANGE[1]), DTYPE),
        needs_session=True,
    ),
    Command(
        "pull", "kvcli.cli.commands:run_pull",
        "Print the value of KEY as numpy prints it (or as JSON, or into a .npy file).",
        ("kvcli pull 3", "kvcli pull 3 --json", "kvcli pull 3 -o w.npy", "kvcli pull 3 -o - > w.npy",
         "kvcli pull 11 --devices 2"),
        args=(KEY_ARG,),
        opts=(Opt(("--devices", "-d"), "devices", "Pull into N devices (N copies).", kind="int", default=1,
                  low=DEVICES_RANGE[0], high=DEVICES_RANGE[1]),
              Opt(("--output", "-o"), "out", "Write the value to this .npy file instead ('-': stdout); a file that "
                  "exists is replaced only after a question (--yes).", kind="path", metavar="FILE", complete="file"),
              YES),
        needs_session=True,
    ),
    Command(
        "set-updater", "kvcli.cli.commands:run_set_updater",
        "Choose how a push changes the stored value; the session remembers it.\n\n"
        "assign (default): stored = pushed  ·  sum: stored += pushed  ·  scale-add:K: stored += K*pushed  ·  "
        "sgd:lr=..,momentum=..,wd=.. and adam:lr=..,beta1=..,beta2=..,eps=.. (MXNet's optimizers; their state "
        "is saved in the session)  ·  python:FILE.py:FUNC calls FUNC(key, input, stored).\n\n"
        "The same spec again keeps the saved optimizer state; another spec drops it, which is asked first on "
        "a terminal (--yes skips the question, needed in scripts).",
        ("kvcli set-updater scale-add:2", "kvcli set-updater adam:lr=0.01 --yes"),
        args=(Arg("spec", "SPEC", "assign, sum, scale-add:K, sgd:lr=0.1,momentum=0.9, adam:lr=0.001, "
                  "python:FILE.py:FUNC", complete="updater"),),
        opts=(YES,),
    ),
    Command(
        "set-compression", "kvcli.cli.commands:run_set_compression",
        "Compress pushed gradients with MXNet's 2-bit scheme (device and dist stores); the session "
        "remembers it, and each key's residual (kept when the threshold changes).\n\n"
        "none turns compression off and drops the residuals, which is asked first on a terminal (--yes skips "
        "the question, needed in scripts).",
        ("kvcli set-compression 2bit:threshold=0.5", "kvcli set-compression none --yes"),
        args=(Arg("spec", "SPEC", "2bit, 2bit:threshold=0.5, or none"),), opts=(YES,),
    ),
    Command("keys", "kvcli.cli.commands:run_keys", "List the session's keys, one a line (--json: a list).",
            ("kvcli keys",), needs_session=True),
    Command("show", "kvcli.cli.commands:run_show",
            "Show the session: store type, updater, and each key's shape, dtype, version and size.",
            ("kvcli --session exp1 show",), needs_session=True),
    Command("delete", "kvcli.cli.commands:run_delete",
            "Delete KEY (and its optimizer state) from the session.\n\n"
            "Asks first on a terminal; --yes skips the question (needed in scripts).",
            ("kvcli delete 3", "kvcli delete 5,7,9 --yes"), args=(KEY_ARG,), opts=(YES,), needs_session=True),
    Command(
        "reset", "kvcli.cli.commands:run_reset",
        "Delete every key, the updater and its state; also repairs a damaged session.\n\n"
        "The store type stays unless --type is given (with --num-devices, --ray-address, --num-servers). "
        "Asks first on a terminal; --yes skips the question (needed in scripts).",
        ("kvcli reset", "kvcli reset --type device --num-devices 4 --yes"),
        opts=(YES,),
    ),
    Command("export", "kvcli.cli.commands:run_export", "Copy the session (keys, updater, optimizer state) into DIR.",
            ("kvcli export backup/  &&  kvcli --session copy import backup/",),
            args=(Arg("folder", "DIR", "A new or empty folder.", kind="path", complete="dir"),), needs_session=True),
    Command("import", "kvcli.cli.commands:run_import",
            "Replace the session's keys, updater and optimizer state by those exported in DIR (all checked "
            "first).\n\nWhen the session has keys, says which are replaced and dropped and asks first on a "
            "terminal; --yes skips the question (needed in scripts). --merge imports only the exported keys' "
            "values and keeps the session's other keys, its updater and its state.",
            ("kvcli --session restored import backup/", "kvcli import backup/ --merge --yes"),
            args=(Arg("folder", "DIR", "A folder written by kvcli export.", kind="path", complete="dir"),),
            opts=(Opt(("--merge",), "merge", "Import only the exported keys (each set as init sets it: its optimizer "
                      "state starts afresh); keep the session's other keys, its updater and its state.", kind="flag"),
                  YES)),
    Command(
        "load-params", "kvcli.cli.commands:run_load_params",
        "Put every array of an MXNet .params file (save_checkpoint, Gluon's export or save_parameters) into the "
        "session, one key per array named as in the file (arg:conv0_weight, aux:bn0_moving_mean), in one commit: "
        "all or nothing.\n\n"
        "Keys the session has already are replaced only after a question on a terminal; --yes skips it (needed "
        "in scripts). A replaced key starts afresh, as init starts it (its optimizer state goes).",
        ("kvcli load-params resnet50-0000.params", "kvcli load-params model.params --keys 'arg:fc*' --yes",
         "kvcli load-params net.params --strip-prefix arg: --strip-prefix aux: --prefix r50."),
        args=(Arg("file", "FILE", "An MXNet .params file.", kind="path", complete="file"),),
        opts=(Opt(("--prefix",), "prefix", "Put this in front of every key (after --strip-prefix).", metavar="TEXT"),
              Opt(("--strip-prefix",), "strip_prefix", "Remove this from the start of every name that has it "
                  "(repeatable: the first that matches is removed).", multiple=True, metavar="TEXT"),
              Opt(("--keys",), "keys", "Only the arrays whose names (as in the file) match: a comma-separated list "
                  "of names or glob patterns, e.g. 'arg:*'.", metavar="NAMES"),
              YES),
    ),
    Command(
        "save-params", "kvcli.cli.commands:run_save_params",
        "Write the session's values (every key, or KEY...) to OUT in MXNet's .params format, named as stored "
        "(int keys by their digits): mx.nd.load and mx.model.load_checkpoint read it.\n\n"
        "Written whole or not at all, readable by you only (0600). An existing OUT is replaced only after a "
        "question on a terminal; --yes skips it (needed in scripts).",
        ("kvcli save-params trained-0001.params", "kvcli save-params fc.params arg:fc1_weight arg:fc1_bias --yes"),
        args=(Arg("out", "OUT", "The .params file to write.", kind="path", complete="file"),
              Arg("keys", "KEY", "Keys to save, in this order (default: every key, in the session's order).",
                  many=True, required=False, complete="key")),
        opts=(YES,), needs_session=True,
    ),
    Command(
        "sessions", "kvcli.cli.commands:run_sessions", "List the sessions in the home folder (or delete one).",
        ("kvcli --home ./kv sessions", "kvcli sessions delete exp1 --yes"),
        children=(
            Command("delete", "kvcli.cli.commands:run_sessions_delete",
                    "Delete session NAME and everything in it (asks first on a terminal).",
                    ("kvcli sessions delete exp1", "kvcli sessions delete exp1 --yes"),
                    args=(Arg("name", "NAME", "The session to delete.", complete="session"),), opts=(YES,)),
        ),
    ),
    Command(
        "cluster", "kvcli.cli.cluster_cmds:run_status",
        "Keep a local Ray cluster running for this home, so commands on dist sessions join it in about a "
        "second instead of starting Ray each time (shows its status when no sub-command is given).",
        ("kvcli cluster up --cpus 2", "kvcli cluster status", "kvcli cluster down"),
        children=(
            Command("up", "kvcli.cli.cluster_cmds:run_up",
                    "Start the home's Ray cluster in the background (nothing happens if it runs already).",
                    ("kvcli cluster up", "kvcli cluster up --cpus 4"),
                    opts=(Opt(("--cpus",), "cpus", "CPUs Ray may use (default: all of this machine).", kind="int",
                              low=1, high=4096),)),
            Command("status", "kvcli.cli.cluster_cmds:run_status", "Show the home's Ray cluster (address, CPUs, age).",
                    ("kvcli cluster status", "kvcli cluster status --json")),
            Command("down", "kvcli.cli.cluster_cmds:run_down", "Stop the home's Ray cluster.",
                    ("kvcli cluster down",)),
        ),
    ),
    Command(
        "shell", "kvcli.cli.shell:run_shell_command",
        "Start an interactive shell on the session (tab completion, history, Ctrl-D exits).\n\n"
        "The shell keeps the store running (device workers stay up) and commits after every command, so "
        "other terminals see each change. Its commands are kvcli's, without \"kvcli\" (type help there). "
        "Ctrl-C cancels the running command. Reading a script (a pipe, or --file) it stops at the first "
        "error with exit 1, unless --keep-going.",
        ("kvcli --session exp1 shell", "kvcli shell --file setup.kv", "kvcli shell < setup.kv"),
        opts=(Opt(("--file", "-f"), "file", "Run the commands of this file ('-': stdin) instead of a prompt.",
                  kind="path", metavar="FILE", complete="file"),
              Opt(("--keep-going", "-k"), "keep_going",
                  "In a script, go on after an error (exit 1 at the end, with the count).", kind="flag")),
        in_shell=False,
    ),
    Command(
        "help", "kvcli.cli.build:run_help", "Show the help of kvcli, or of COMMAND.",
        ("kvcli help", "kvcli help push", "kvcli help sessions delete"),
        args=(Arg("words", "COMMAND", "A command (and sub-command).", many=True, required=False,
                  complete="command"),),
    ),
    Command(
        "launch", "kvcli.cli.launch_cmd:run_launch",
        "Run COMMAND as W workers of a dist_sync/dist_async job, with S key servers.",
        ("kvcli launch -n 2 -- python train.py", "kvcli launch -n 4 --servers 2 -- python train.py"),
        args=(Arg("command", "-- COMMAND...", "The worker command, after --, e.g. -- python train.py", many=True),),
        opts=(Opt(("--num-workers", "-n"), "num_workers", "Number of workers (W).", kind="int", low=1,
                  required=True),
              Opt(("--servers",), "servers", "Number of key servers (S; default 1; --num-servers S is the same).",
                  kind="int", low=1),
              Opt(("--address",), "address", "Ray cluster to use ('auto', 'host:port'; --ray-address is the same); "
                  "default: start a local one.", envvar=config.RAY_ADDRESS.name, metavar="ADDRESS"),
              Opt(("--timeout",), "timeout", "Seconds a worker waits for the others before failing (default 60).",
                  kind="float", envvar=config.DIST_TIMEOUT.name, metavar="SECONDS",
                  low=config.DIST_TIMEOUT.low, high=config.DIST_TIMEOUT.high)),
        in_shell=False, passthrough=True,
        extra={
            # global options launch has no use for: refused when typed, left out of its help.
            # MXNet's tools/launch.py reads -s as its servers; here -s is --session
            "refused": {
                "session": "launch runs no session, and -s is --session: for S key servers write --servers S "
                           "(MXNet's launch.py -s S)",
                "home": "launch opens no session: the workers' scripts open theirs (they inherit KVCLI_HOME)",
                "store_type": "the workers choose dist_sync or dist_async in their kvcli.create(...) or "
                              "mx.kv.create(...)",
                "num_devices": "launch's workers are Ray processes, not device processes: give W workers with -n W",
            },
        },
    ),
    Command(
        "viz", "kvcli.cli.symbol_cmds:run_viz",
        "Draw FILE like mx.viz.plot_network, with shapes on the edges when known.\n\n"
        "Inputs are ovals; ops are boxes coloured by kind (the MXNet palette), labelled with their name and op; "
        "weights and biases are hidden unless --show-weights. Graphs too big for graphviz to lay out in seconds "
        "are drawn with repeated blocks folded (said in one line; --full draws everything). Needs graphviz's "
        "`dot` for .svg/.pdf/.png; without it the .dot file is written and the command says how to install graphviz.\n\n"
        + SESSION_WEIGHTS_HELP,
        ("kvcli viz resnet-50-symbol.json --shape data=1,3,224,224", "kvcli viz model.json -o out/model.pdf --rankdir LR",
         "kvcli viz resnet-50-symbol.json -o resnet.html", "kvcli viz char-lstm.json --focus t5_l0_i2h --radius 3",
         "kvcli viz resnet-50-symbol.json --collapse 'stage3_*' --depth 2", "cat model.json | kvcli viz - -o - --format dot"),
        args=(MODEL_ARG,),
        opts=(Opt(("--output", "-o"), "out", "Output file; the extension picks the format: .svg .pdf .png .dot, or .html "
                  "(an interactive viewer: zoom, search, node details, groups, summary); - writes SVG (or --format dot) "
                  "to standard output. Default: FILE's name with .svg, in the current folder. A file that exists is "
                  "replaced only after a question (--yes).", kind="path", metavar="FILE", complete="file"),
              SHAPE,
              Opt(("--title",), "title", "Title drawn above the graph.", metavar="TEXT"),
              Opt(("--rankdir",), "rankdir", "The side the inputs are drawn on, the data flowing to the other: tb "
                  "(top), bt (bottom), lr (left), rl (right).", kind="choice", choices=("tb", "lr", "bt", "rl"),
                  default="tb"),
              Opt(("--show-weights",), "show_weights", "Also draw weight/bias/moving-stat variables.", kind="flag"),
              Opt(("--full",), "full", "Draw every node exactly, even when graphviz will take long (big graphs are "
                  "otherwise drawn with repeated blocks folded).", kind="flag"),
              Opt(("--collapse",), "collapse", "Draw all nodes whose name matches this glob as one node (repeatable), "
                  "e.g. --collapse 'stage3_*'.", multiple=True, metavar="GLOB"),
              Opt(("--depth",), "depth", "Group nodes by their first N name parts (split at _ / . : -), e.g. --depth 1 "
                  "draws one node per stage.", kind="int", low=1),
              Opt(("--focus",), "focus_on", "Draw only the neighbourhood of this node.", metavar="NODE"),
              Opt(("--radius",), "radius", "With --focus: how many edges away to draw.", kind="int", low=0, default=2),
              Opt(("--layout-timeout",), "layout_timeout", "Stop graphviz after this many seconds (no file is written).",
                  kind="float", default=60.0, metavar="SECONDS"),
              Opt(("--open",), "open_browser", "Write the HTML viewer to a temporary file and open it in the web "
                  "browser.", kind="flag"),
              Opt(("--format",), "fmt", "Output format when -o is - .", kind="choice", choices=("svg", "dot")),
              Opt(("--dtype",), "dtype", "Input dtype NAME=TYPE (repeatable, e.g. data=float16): edges show dtypes.",
                  multiple=True, metavar="NAME=TYPE"),
              Opt(("--max-nodes",), "max_nodes", "Refuse to lay out more boxes than this, counted after folding "
                  "repeated blocks; .dot output is never limited.", kind="int", low=1, default=20000),
              PARAMS, NO_PARAMS, VALUES, STRICT, PARTIAL, ALLOW_UNKNOWN, YES),
    ),
    Command(
        "summary", "kvcli.cli.symbol_cmds:run_summary",
        "Per-layer table (layer, op, output shape, params, aux, MACs, output bytes, previous layers) and correct "
        "totals.\n\n"
        "Learnable parameters and auxiliary states (BatchNorm moving statistics) are totalled separately; each "
        "shared weight is counted once. The totals equal the sum of MXNet's infer_shape argument shapes (inputs and "
        "labels excluded). When an op is unknown or a parameter's shape cannot be inferred, the totals say \"at least\".\n\n"
        + SESSION_WEIGHTS_HELP,
        ("kvcli summary resnet-50-symbol.json --shape data=1,3,224,224",
         "kvcli summary model.json --shape data=32,784 --json | jq .totals",
         "kvcli summary char-lstm.json --shape 'data/*=32' --shape 'l*_init_*=32,512'"),
        args=(MODEL_ARG,), opts=(SHAPE, PARAMS, NO_PARAMS, STRICT, PARTIAL, ALLOW_UNKNOWN),
    ),
)



def commands() -> tuple[Command, ...]:
    """Every table command, in help order."""
    return SESSION_COMMANDS


def find(name: str) -> Optional[Command]:
    return next((c for c in SESSION_COMMANDS if c.name == name), None)


def global_option(flag: str) -> Optional[Opt]:
    return next((o for o in GLOBAL_OPTIONS if flag in o.flags), None)


def check_short_flags(extra: dict[str, list[str]] | None = None) -> list[str]:
    """Short flags with more than one meaning across the globals and every command:
    ``["-s: --session, --shape (viz)"]``. ``extra`` adds other commands' ``{name: [(short, long)]}``."""
    meanings: dict[str, set[str]] = {}
    for opt in GLOBAL_OPTIONS:
        if opt.short:
            meanings.setdefault(opt.short, set()).add(opt.long)
    meanings.setdefault("-V", set()).add("--version")
    meanings.setdefault("-h", set()).add("--help")

    def walk(command: Command) -> None:
        for opt in command.opts:
            if opt.short:
                meanings.setdefault(opt.short, set()).add(opt.long)
        for child in command.children:
            walk(child)

    for command in SESSION_COMMANDS:
        walk(command)
    for pairs in (extra or {}).values():
        for short, long in pairs:  # type: ignore[str-unpack]  # each pair is (short, long)
            meanings.setdefault(short, set()).add(long)
    return [f"{short}: {', '.join(sorted(longs))}" for short, longs in sorted(meanings.items()) if len(longs) > 1]
