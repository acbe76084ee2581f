"""Make a big :class:`~kvcli.symbol.plan.Plan` small enough to lay out and to read.

* :func:`fold_repeats` merges repeated blocks and unrolled time steps: nodes whose names
  differ only in one number (``t0_l0_i2h`` ... ``t29_l0_i2h``; the number position with the
  most distinct values is chosen per name pattern) become one node labelled
  ``t0_l0_i2h … t29_l0_i2h (×30)``. Auto-named nodes (``activation965``, ``_mul580``) follow
  the nearest such block among their inputs, matched by op and order within the block, so a
  whole unrolled LSTM cell folds into one cell.
* :func:`collapse_patterns` merges every node matching a glob (``--collapse 'stage3_*'``).
* :func:`collapse_depth` merges nodes by their first N name parts (``--depth N``).
* :func:`focus` keeps the nodes within K edges of one node (``--focus NODE --radius K``).

All are linear in nodes + edges (plus sorting member names).
"""

from __future__ import annotations

import fnmatch
import re
from collections import deque
from typing import Hashable, Optional, Sequence

from kvcli.errors import SymbolError, bad_param
from kvcli.symbol.plan import KIND_COLOUR, OUTPUT_OP, DrawEdge, DrawNode, Plan, cut, wrapped_name
from kvcli.symbol import ops

#: A name pattern must repeat at least this often to be folded.
MIN_REPEAT = 3
_RUN = re.compile(r"\d+")
_SEP = re.compile(r"[_/.:-]")
_NATURAL = re.compile(r"(\d+)")


def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in _NATURAL.split(name))


#: Longer names never fold or group (no model names its repeated blocks so; splitting a
#: 50 MB name into its parts would cost seconds and gigabytes for nothing).
MAX_FOLD_NAME = 1000
_TWO_PARTS = re.compile(r"[^_/.:-][_/.:-]+[^_/.:-]")


def _foldable(name: str) -> bool:
    """Names with at least two parts carry block/step numbers; ``activation965`` is a counter."""
    return (len(name) <= MAX_FOLD_NAME and _TWO_PARTS.search(name) is not None
            and _RUN.search(name) is not None)


def name_templates(names: Sequence[str]) -> dict[str, tuple[str, int]]:
    """For each foldable name, ``(template, number)``: the name with its most-varying number as ``*``."""
    skeletons: dict[str, list[set[str]]] = {}
    runs_of: dict[str, list[re.Match[str]]] = {}
    for name in names:
        if not _foldable(name):
            continue
        runs = list(_RUN.finditer(name))
        runs_of[name] = runs
        skeleton = _RUN.sub("#", name)
        values = skeletons.setdefault(skeleton, [set() for _ in runs])
        for j, m in enumerate(runs):
            values[j].add(m.group())
    out: dict[str, tuple[str, int]] = {}
    for name, runs in runs_of.items():
        values = skeletons[_RUN.sub("#", name)]
        j = max(range(len(runs)), key=lambda j: (len(values[j]), -j))
        if len(values[j]) < MIN_REPEAT:
            continue
        m = runs[j]
        out[name] = (name[:m.start()] + "*" + name[m.end():], int(m.group()))
    return out


def fold_repeats(plan: Plan) -> Plan:
    """Fold repeated blocks and unrolled steps (see the module docstring)."""
    templates = name_templates([n.name for n in plan.nodes])
    inputs: list[list[int]] = [[] for _ in plan.nodes]
    for e in plan.edges:
        inputs[e.head].append(e.tail)
    # Draw nodes are in topological order (build_plan keeps the graph's order).
    anchor: list[Optional[tuple[str, int]]] = [None] * len(plan.nodes)
    ordinal: dict[tuple[str, int], int] = {}
    keys: list[Optional[Hashable]] = [None] * len(plan.nodes)
    for i, node in enumerate(plan.nodes):
        if node.op == OUTPUT_OP:
            continue
        hit = templates.get(node.name)
        if hit is not None:
            anchor[i] = hit
            keys[i] = ("repeat", hit[0])
            continue
        if _foldable(node.name):
            continue  # a named node that does not repeat stays itself
        for src in inputs[i]:
            if anchor[src] is not None:
                anchor[i] = anchor[src]
                break
        block = anchor[i]
        if block is None:
            continue
        n = ordinal.get(block, 0)
        ordinal[block] = n + 1
        keys[i] = ("follow", block[0], node.op, n)
    # A "follow" group exists only if the same (block, op, ordinal) repeats.
    sizes: dict[Hashable, int] = {}
    for key in keys:
        if key is not None:
            sizes[key] = sizes.get(key, 0) + 1
    final: list[Optional[Hashable]] = [k if k is not None and sizes[k] >= MIN_REPEAT else None for k in keys]
    final = _truthful(plan, final, sizes)
    # The output-shape labels of folded heads fold too (129 per-step outputs: one label).
    outs: list[Optional[Hashable]] = [None] * len(plan.nodes)
    for i, node in enumerate(plan.nodes):
        if node.op == OUTPUT_OP and len(inputs[i]) == 1 and final[inputs[i][0]] is not None:
            outs[i] = ("outputs", final[inputs[i][0]])
            sizes[outs[i]] = sizes.get(outs[i], 0) + 1
    for i, key in enumerate(outs):
        if key is not None and sizes[key] >= MIN_REPEAT:
            final[i] = key
    folded = merge(plan, final, "repeat")
    if folded.drawn_boxes < plan.drawn_boxes:
        folded.notes.append(f"folded repeated blocks: {plan.drawn_members:,} nodes drawn as {folded.drawn_boxes:,} boxes")
    return folded


def _truthful(plan: Plan, keys: list[Optional[Hashable]], sizes: dict[Hashable, int]) -> list[Optional[Hashable]]:
    """``keys`` without the folds that would draw a wrong picture.

    Folding merges nodes; an edge between two folds then stands for many edges. That stays
    true when the folds are steps of one repeated cell: any cycle the folds form (the
    recurrence of an unrolled RNN, a dense block's layers) runs through folds of the same
    number of members. A cycle through folds of different sizes, or through a node that is
    not folded (DenseNet's stem and transitions merged into "conv0 … conv3 (×4)" and
    "pool0 … pool4 (×5)"), says that blocks feed blocks they do not feed: the smallest folds
    on such a cycle are undone, round after round, until no such cycle is left.
    """
    keys = list(keys)
    for _ in range(len(plan.nodes)):  # each round undoes at least one fold
        unit = [("one", i) if k is None else k for i, k in enumerate(keys)]
        ids: dict[Hashable, int] = {}
        for u in unit:
            ids.setdefault(u, len(ids))
        succ: list[set[int]] = [set() for _ in ids]
        for e in plan.edges:
            a, b = ids[unit[e.tail]], ids[unit[e.head]]
            if a != b:
                succ[a].add(b)
        bad: set[Hashable] = set()
        single = {ids[u] for u, k in zip(unit, keys) if k is None}
        by_id = list(ids)
        for component in _cycles(succ):
            folds = [by_id[c] for c in component if c not in single]
            if folds and (len({sizes[k] for k in folds}) > 1 or len(folds) < len(component)):
                # undo the smallest folds first: they are the ones spanning blocks (a
                # network's few transitions), while a block's many layers form its cells
                least = min(sizes[k] for k in folds)
                bad.update(k for k in folds if sizes[k] == least)
        if not bad:
            return keys
        keys = [None if k in bad else k for k in keys]
    return keys


def _cycles(succ: list[set[int]]) -> list[list[int]]:
    """Strongly connected components of more than one vertex (Tarjan's, without recursion)."""
    index: list[int] = [-1] * len(succ)
    low = [0] * len(succ)
    on_stack = [False] * len(succ)
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(len(succ)):
        if index[root] >= 0:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, children = work[-1]
            advanced = False
            for w in children:
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(succ[w])))
                    advanced = True
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(component)
    return out


def collapse_patterns(plan: Plan, patterns: Sequence[str]) -> Plan:
    """Merge all nodes whose name matches each glob in ``patterns`` into one node per glob."""
    keys: list[Optional[Hashable]] = []
    regexes = [(p, re.compile(fnmatch.translate(p))) for p in patterns]
    hits = {p: 0 for p in patterns}
    for node in plan.nodes:
        key = None
        for p, rx in regexes if node.op != OUTPUT_OP else ():
            if rx.match(node.name):
                key = ("pattern", p)
                hits[p] += 1
                break
        keys.append(key)
    unused = [p for p, n in hits.items() if n == 0]
    if unused:
        raise bad_param(SymbolError, "collapse", f"{cut(unused[0])!r} matches no drawn node; "
                        "patterns are globs on node names, e.g. 'stage3_*'")
    out = merge(plan, keys, "pattern")
    out.notes.append(f"collapsed {', '.join(cut(p) for p in patterns)}: {plan.drawn_members:,} nodes drawn as "
                     f"{out.drawn_boxes:,} boxes")
    return out


def collapse_depth(plan: Plan, depth: int) -> Plan:
    """Merge nodes whose names share their first ``depth`` parts (split at ``_ / . : -``)."""
    if depth < 1:
        raise bad_param(SymbolError, "depth", f"{depth}: use a positive number of name parts, e.g. 2")
    keys: list[Optional[Hashable]] = []
    for node in plan.nodes:
        parts = [p for p in _SEP.split(node.name) if p] if len(node.name) <= MAX_FOLD_NAME else [node.name]
        grouped = len(parts) > depth and node.op != OUTPUT_OP
        keys.append(("depth", "_".join(parts[:depth])) if grouped else None)
    sizes: dict[Hashable, int] = {}
    for key in keys:
        if key is not None:
            sizes[key] = sizes.get(key, 0) + 1
    keys = [k if k is not None and sizes[k] > 1 else None for k in keys]
    out = merge(plan, keys, "depth")
    out.notes.append(f"grouped by the first {depth} name parts: {plan.drawn_members:,} nodes drawn as "
                     f"{out.drawn_boxes:,} boxes")
    return out


def focus(plan: Plan, name: str, radius: int) -> Plan:
    """Keep the nodes at most ``radius`` edges (either direction) from the node called ``name``."""
    if radius < 0:
        raise bad_param(SymbolError, "radius", f"{radius}: use 0 or more edges")
    start = [i for i, n in enumerate(plan.nodes) if n.name == name]
    if not start:
        want = name.strip().lower()
        close = [cut(n.name) for n in plan.nodes if want and want in n.name.lower()][:3]
        hint = f"; similar: {', '.join(close)}" if close else ""
        raise bad_param(SymbolError, "focus", f"{cut(name)!r}: no drawn node has that name{hint}")
    adj: list[list[int]] = [[] for _ in plan.nodes]
    for e in plan.edges:
        adj[e.head].append(e.tail)
        adj[e.tail].append(e.head)
    dist = {start[0]: 0}
    todo = deque(start[:1])
    while todo:
        i = todo.popleft()
        if dist[i] == radius:
            continue
        for j in adj[i]:
            if j not in dist:
                dist[j] = dist[i] + 1
                todo.append(j)
    keep = sorted(dist)
    new_index = {old: new for new, old in enumerate(keep)}
    nodes = [plan.nodes[i] for i in keep]
    edges = [DrawEdge(new_index[e.head], new_index[e.tail], e.label) for e in plan.edges
             if e.head in new_index and e.tail in new_index]
    kept = Plan(plan.graph, plan.shapes, nodes, edges, list(plan.notes))
    kept.notes.append(f"showing {kept.drawn_members:,} of {plan.drawn_members:,} nodes within {radius} "
                      f"edges of {cut(name)!r}")
    return kept


def merge(plan: Plan, keys: Sequence[Optional[Hashable]], how: str) -> Plan:
    """Merge draw nodes sharing a non-``None`` key; edges are remapped and de-duplicated."""
    new_of: list[int] = []
    group_of: dict[Hashable, int] = {}
    groups: list[list[int]] = []
    for i, key in enumerate(keys):
        if key is None:
            new_of.append(len(groups))
            groups.append([i])
            continue
        g = group_of.get(key)
        if g is None:
            g = group_of[key] = len(groups)
            groups.append([])
        groups[g].append(i)
        new_of.append(g)
    group_key = {g: k for k, g in group_of.items()}
    nodes = [plan.nodes[m[0]] if len(m) == 1 and g not in group_key else
             _merged([plan.nodes[i] for i in m], group_key.get(g), how)
             for g, m in enumerate(groups)]
    edge_labels: dict[tuple[int, int], set[str]] = {}
    order: list[tuple[int, int]] = []
    for e in plan.edges:
        pair = (new_of[e.head], new_of[e.tail])
        labels = edge_labels.get(pair)
        if labels is None:
            labels = edge_labels[pair] = set()
            order.append(pair)
        if len(labels) < 2:
            labels.add(e.label)
    edges = [DrawEdge(h, t, next(iter(edge_labels[(h, t)])) if len(edge_labels[(h, t)]) == 1 else "")
             for h, t in order]
    return Plan(plan.graph, plan.shapes, nodes, edges, list(plan.notes))


_SEPARATORS = "_/.:-"


def shared_prefix(first: str, last: str) -> int:
    """How many leading characters ``last`` shares with ``first`` up to and including a
    separator (``_ / . : -``), when that shared part has a letter or digit: a fold's label
    writes them once (``resnetv10_stage1_conv0 … stage4_conv2``); ``0`` when nothing is shared."""
    n = 0
    limit = min(len(first), len(last))
    while n < limit and first[n] == last[n]:
        n += 1
    end = max(first.rfind(c, 0, n) for c in _SEPARATORS) + 1
    shared = first[:end]
    return end if end < len(last) and shared.strip(_SEPARATORS) else 0


def span_lines(first: str, last: str, count: str) -> tuple[str, str]:
    """A fold's names as a label (wrapped, two lines at least) and as one line (its title):
    ``t0_l0_i2h … t128_l0_i2h (×129)``, the part both names share written once."""
    rest = last[shared_prefix(first, last):]
    return (f"{wrapped_name(first)} …\n{wrapped_name(rest)} ({count})",
            f"{cut(first)} … {cut(rest)} ({count})")


def _merged(members: list[DrawNode], key: Optional[Hashable], how: str) -> DrawNode:
    """One node standing for ``members``: its label says what was folded and how many."""
    graph_members = [i for m in members for i in m.members]
    names = sorted((m.name for m in members), key=_natural)
    if all(m.op == OUTPUT_OP for m in members):  # output-shape labels: names, count, shape
        shapes = {m.label.rsplit("\n", 1)[-1] for m in members}
        shape_text = shapes.pop() if len(shapes) == 1 else "(shapes differ)"
        names_label, title = span_lines(names[0], names[-1], f"×{len(members)} outputs")
        return DrawNode(label=f"{names_label}\n{shape_text}", fill=members[0].fill, shape=members[0].shape,
                        members=[], name=names[0], op=OUTPUT_OP, fold=how, title=title)
    count = len(graph_members)
    group = str(key[1]) if isinstance(key, tuple) and len(key) > 1 else None  # the glob or name prefix
    if how == "pattern" and group is not None:
        span, title = f"{wrapped_name(group)} (×{count})", f"{cut(group)} (×{count})"
    elif how == "depth" and group is not None:
        span, title = f"{wrapped_name(group)}_* (×{count})", f"{cut(group)}_* (×{count})"
    else:
        span, title = span_lines(names[0], names[-1], f"×{count}")
    op_set = {m.op for m in members}
    op = op_set.pop() if len(op_set) == 1 else "(mixed)"
    fills = {m.fill for m in members}
    fill = fills.pop() if len(fills) == 1 else KIND_COLOUR[ops.OTHER]
    details = {m.detail for m in members}
    detail = details.pop() if len(details) == 1 else op if op != "(mixed)" else "(mixed ops)"
    label = f"{span}\n{detail}" if detail else span
    shape = "oval" if all(m.shape == "oval" for m in members) else "box"
    return DrawNode(label=label, fill=fill, shape=shape, members=graph_members,
                    name=names[0] if how == "repeat" or group is None else group,
                    op=op, detail=detail, fold=how, title=title)


def apply_options(plan: Plan, collapse: Sequence[str] = (), depth: Optional[int] = None,
                  focus_on: Optional[str] = None, radius: int = 2) -> Plan:
    """The user's explicit reductions, in order: ``--focus``, ``--collapse``, ``--depth``."""
    if focus_on is not None:
        plan = focus(plan, focus_on, radius)
    if collapse:
        plan = collapse_patterns(plan, collapse)
    if depth is not None:
        plan = collapse_depth(plan, depth)
    return plan


def may_be_slow(plan: Plan) -> bool:
    """Whether the exact layout could take ``dot`` long (the size and widest-rank estimate of
    :func:`kvcli.symbol.layout.too_costly`); below it, ``dot`` always takes about a second."""
    from kvcli.symbol.layout import too_costly
    from kvcli.symbol.plan import rank_width

    return too_costly(len(plan.nodes), len(plan.edges), rank_width(plan))


def fold_reason(plan: Plan, tried: Optional[float] = None, max_nodes: Optional[int] = None) -> str:
    """Why ``plan`` is not laid out exactly, in measured terms: the trial that did not finish,
    or the counts that put it past what kvcli tries (never a guess at how long it would take)."""
    from kvcli.symbol.layout import COST_LIMIT, TRIAL_MAX_BOXES, TRIAL_MAX_WIDTH_COST, WIDTH_LIMIT
    from kvcli.symbol.plan import rank_width

    if tried is not None:
        return f"the exact layout did not finish in {tried:g} s"
    boxes = plan.drawn_boxes
    limit = min(TRIAL_MAX_BOXES, max_nodes) if max_nodes is not None else TRIAL_MAX_BOXES
    if boxes > limit:
        return f"more than the {limit:,} boxes whose exact layout kvcli tries"
    width = rank_width(plan)
    if len(plan.nodes) * width > TRIAL_MAX_WIDTH_COST:
        return (f"up to {width:,} side by side: {len(plan.nodes) * width:,} boxes × side by side, more than the "
                f"{TRIAL_MAX_WIDTH_COST:,} whose exact layout kvcli tries")
    # prepare() decides by the size alone (no trial)
    if len(plan.nodes) + len(plan.edges) > COST_LIMIT:
        return (f"{len(plan.nodes) + len(plan.edges):,} boxes and edges, more than the {COST_LIMIT:,} that are "
                "drawn exactly without a trial")
    return f"up to {width:,} side by side, more than the {WIDTH_LIMIT:,} that are drawn exactly without a trial"


def fold_for_layout(plan: Plan, tried: Optional[float] = None, max_nodes: Optional[int] = None) -> tuple[Plan, bool]:
    """Fold repeated blocks (:func:`fold_repeats`) for a layout that would be slow, and say so.

    ``tried``: the exact layout was tried and did not finish in this many seconds (else the
    counts of :func:`fold_reason` decided; ``max_nodes`` lowers the most boxes tried). Returns
    the plan and whether ``dot`` must still run with bounded settings. One note says what was
    done and why, counting graph nodes and drawn boxes.
    """
    from kvcli.symbol.layout import BOUND_NODES, too_costly
    from kvcli.symbol.plan import rank_width

    why = fold_reason(plan, tried, max_nodes)
    notes = list(plan.notes)
    folded = fold_repeats(plan)
    did_fold = folded.drawn_boxes < plan.drawn_boxes
    if not did_fold:
        folded = plan
    bounded = too_costly(len(folded.nodes), len(folded.edges), rank_width(folded)) or len(folded.nodes) > BOUND_NODES
    done = []
    if did_fold:
        done.append(f"drew repeated blocks folded into {folded.drawn_boxes:,} boxes")
    if bounded:
        done.append("laid out with bounded graphviz settings (straight edges)")
    if done:
        folded = Plan(folded.graph, folded.shapes, folded.nodes, folded.edges,
                      notes + [f"{plan.drawn_members:,} nodes ({why}): {'; '.join(done)}"])
    return folded, bounded


def prepare(plan: Plan, full: bool = False, collapse: Sequence[str] = (), depth: Optional[int] = None,
            focus_on: Optional[str] = None, radius: int = 2) -> tuple[Plan, bool]:
    """Apply the user's folding options, then fold if the size estimate says the layout may be slow.

    Returns the plan to draw and whether ``dot`` must run with bounded settings. ``full``
    draws every node exactly (only the explicit options apply). What was done is appended to
    ``plan.notes`` as one line each. (``kvcli viz`` tries the exact layout first and folds only
    when it really takes long: see :func:`may_be_slow` and :func:`fold_for_layout`.)
    """
    plan = apply_options(plan, collapse, depth, focus_on, radius)
    if full or not may_be_slow(plan):
        return plan, False
    return fold_for_layout(plan)
