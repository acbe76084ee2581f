"""``docs/mxnet.md``, the compatibility page, generated from kvcli.mx's scope table
(:mod:`kvcli.mx.scope_table`)::

    python -m kvcli.mx.docs docs/mxnet.md    (without a path: print it)
"""

from __future__ import annotations

import sys
from typing import Sequence

from kvcli.mx.scope_table import TABLE, Module


def _short(module: Module) -> str:
    return "mx" + module.mxnet[len("mxnet"):]


def markdown() -> str:
    """The compatibility page (``docs/mxnet.md``), generated from the table."""
    supported = sum(len(m.supported) for m in TABLE)
    unsupported = sum(len(g.names) for m in TABLE for g in m.unsupported)
    lines = [
        "# kvcli.mx and MXNet 1.9.1: what is supported",
        "",
        "<!-- generated from kvcli/mx/scope_table.py by `python -m kvcli.mx.docs docs/mxnet.md`;"
        " do not edit -->",
        "",
        "`import kvcli.mx as mx` provides the MXNet 1.9.1 modules below. For each, every public name of",
        "MXNet's module is listed: supported (with MXNet's behaviour; notes say where numbers are not",
        "MXNet's and why), or outside kvcli's scope, with what to use instead. Using a name outside the",
        "scope raises one error (`kvcli.errors.OutOfScopeError`, an `AttributeError`; on `import`, an",
        "`ImportError`) that says so. The lists hold every public name these MXNet modules have",
        "(recorded from MXNet 1.9.1: `tests/data/mxnet_public_names.json`).",
        "",
        f"{supported} names supported, {unsupported} outside the scope, in {len(TABLE)} modules.",
        "",
        "| module | kvcli module | supported | outside the scope |",
        "|---|---|---|---|",
    ]
    for m in TABLE:
        lines.append(f"| `{m.mxnet}` | `{m.kvcli}` | {len(m.supported)} | {sum(len(g.names) for g in m.unsupported)} |")
    for m in TABLE:
        lines += ["", f"## `{m.mxnet}` (`{_short(m)}`)", "", "Supported: " + ", ".join(f"`{n}`" for n in m.supported)
                  + "."]
        if m.notes or m.tolerances:
            lines += ["", "Notes:", ""]
            for name in sorted({*m.notes, *m.tolerances}):
                parts = [m.notes[name]] if name in m.notes else []
                if name in m.tolerances:
                    t = m.tolerances[name]
                    parts.append(f"tested to rtol {t.rtol:g}, atol {t.atol:g}: {t.why}")
                lines.append(f"- `{name}`: " + "; ".join(parts) + ".")
        if m.unsupported:
            lines += ["", "Outside the scope:", ""]
            for g in m.unsupported:
                lines.append("- " + ", ".join(f"`{n}`" for n in g.names) + f": {g.advice}.")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kvcli.mx.docs [PATH]``: write ``docs/mxnet.md`` to PATH, or print it."""
    args = list(sys.argv[1:] if argv is None else argv)
    text = markdown()
    if len(args) > 1:
        print("usage: python -m kvcli.mx.docs [PATH]", file=sys.stderr)
        return 2
    if args:
        with open(args[0], "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
