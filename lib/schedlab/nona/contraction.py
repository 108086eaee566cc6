"""Nona's DAG contraction (section III-D), bottleneck nodes and the subgraphs between them.

Contraction rule, exactly as the paper states it: an edge ``a -> b`` is contractible when
every other input of ``b`` is an input of ``a`` and every other output of ``a`` is an
output of ``b``::

    preds(b) - {a} <= preds(a)   and   succs(a) - {b} <= succs(b)

The merged node then has exactly ``preds(a)`` as inputs and ``succs(b)`` as outputs, so no
dependency is created or lost, and no cycle can form (a second path ``a -> x -> ... -> b``
would need ``b -> x``, a cycle in the input). The rule is applied until no edge qualifies.

Two schedules are provided: ``"rounds"`` (the paper's: find the whole set C of
contractible edges, contract all of it, repeat) and ``"sequential"`` (one edge at a time).
Both reach the same fixpoint on every graph we have tried, including random DAGs in the
property tests.

Attributes of the contracted graph. Each node is named after its first member in a
topological order of the input and carries ``members`` (tuple of original node ids, in
that order) plus sums of ``forward_ms``, ``backward_ms`` and ``parameter_bytes``. Each edge
``U -> V`` carries ``bytes``: the sum of ``activation_bytes`` over the distinct members of
``U`` that feed some member of ``V``. A tensor crosses the link once even when several
tasks of ``V`` consume it, and tensors that stay inside ``U`` never cross.

Examples
--------
>>> import networkx as nx
>>> chain = nx.DiGraph([("a", "b"), ("b", "c")])
>>> [d["members"] for _, d in contract(chain).nodes(data=True)]
[('a', 'b', 'c')]
>>> diamond = nx.DiGraph([("s", "x"), ("s", "y"), ("x", "t"), ("y", "t")])
>>> sorted(contract(diamond).nodes)
['s', 't', 'x', 'y']
>>> bottleneck_nodes(diamond)
['s', 't']
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import networkx as nx

Node = Hashable
SUMMED = ("forward_ms", "backward_ms", "parameter_bytes")


def _check_dag(g: nx.DiGraph) -> None:
    if not nx.is_directed_acyclic_graph(g):
        cycle = " -> ".join(str(u) for u, _ in nx.find_cycle(g))
        raise ValueError(f"contraction needs a DAG; found the cycle {cycle}")


def is_contractible(preds: dict, succs: dict, a: Node, b: Node) -> bool:
    """The paper's condition for the edge ``a -> b`` on adjacency sets ``preds``/``succs``."""
    pa, sb = preds[a], succs[b]
    return all(n == a or n in pa for n in preds[b]) and all(n == b or n in sb for n in succs[a])


def contraction_partition(
    g: nx.DiGraph, schedule: Literal["rounds", "sequential"] = "rounds"
) -> list[set[Node]]:
    """Member sets of the contracted nodes of ``g`` (a partition of its nodes)."""
    _check_dag(g)
    preds = {n: set(g.pred[n]) for n in g}
    succs = {n: set(g.succ[n]) for n in g}
    members: dict[Node, set[Node]] = {n: {n} for n in g}
    if schedule == "sequential":
        _contract_sequential(preds, succs, members)
    elif schedule == "rounds":
        _contract_rounds(preds, succs, members)
    else:
        raise ValueError(f"schedule must be 'rounds' or 'sequential', got {schedule!r}")
    return list(members.values())


def _merge(preds: dict, succs: dict, members: dict, keep: Node, gone: Node) -> None:
    """Merge node ``gone`` into ``keep``; the union of their neighbours, minus themselves."""
    for p in preds.pop(gone):
        succs[p].discard(gone)
        if p != keep:
            succs[p].add(keep)
            preds[keep].add(p)
    for s in succs.pop(gone):
        preds[s].discard(gone)
        if s != keep:
            preds[s].add(keep)
            succs[keep].add(s)
    preds[keep].discard(keep)
    succs[keep].discard(keep)
    members[keep] |= members.pop(gone)


def _contract_sequential(preds: dict, succs: dict, members: dict) -> None:
    changed = True
    while changed:
        changed = False
        for a in list(succs):
            if a not in succs:
                continue
            for b in list(succs[a]):
                if b in succs.get(a, ()) and is_contractible(preds, succs, a, b):
                    _merge(preds, succs, members, a, b)
                    changed = True


def _contract_rounds(preds: dict, succs: dict, members: dict) -> None:
    while True:
        batch = [(a, b) for a in succs for b in succs[a] if is_contractible(preds, succs, a, b)]
        if not batch:
            return
        # contract all of C at once: each connected component of C becomes one node
        uf = nx.utils.UnionFind()
        for a, b in batch:
            uf.union(a, b)
        for group in uf.to_sets():
            keep, *rest = sorted(group, key=str)
            for gone in rest:
                _merge(preds, succs, members, keep, gone)


def contract(g: nx.DiGraph, schedule: Literal["rounds", "sequential"] = "rounds") -> nx.DiGraph:
    """Contract ``g`` to the fixpoint of Nona's rule; see the module docstring for attributes."""
    parts = contraction_partition(g, schedule)
    rank = {n: i for i, n in enumerate(nx.lexicographical_topological_sort(g, key=str))}
    parts = sorted((sorted(p, key=rank.__getitem__) for p in parts), key=lambda p: rank[p[0]])
    owner = {n: p[0] for p in parts for n in p}
    h = nx.DiGraph(**g.graph)
    for p in parts:
        attrs = {"members": tuple(p)}
        for key in SUMMED:
            attrs[key] = float(sum(g.nodes[n].get(key, 0.0) for n in p))
        h.add_node(p[0], **attrs)
    feeders: dict[tuple[Node, Node], set[Node]] = {}
    for u, v in g.edges:
        cu, cv = owner[u], owner[v]
        if cu != cv:
            feeders.setdefault((cu, cv), set()).add(u)
    for (cu, cv), us in feeders.items():
        h.add_edge(cu, cv, bytes=float(sum(g.nodes[u].get("activation_bytes", 0.0) for u in us)))
    return h


def bottleneck_nodes(g: nx.DiGraph) -> list[Node]:
    """Nodes on every root-to-sink path, in topological order.

    With several roots or sinks, paths run from any root to any sink: a virtual source and
    sink are added and the bottlenecks are the dominators of the virtual sink.
    """
    _check_dag(g)
    if g.number_of_nodes() == 0:
        return []
    src, snk = object(), object()
    h = nx.DiGraph(g.edges)
    h.add_nodes_from(g.nodes)
    h.add_edges_from((src, n) for n in g if g.in_degree(n) == 0)
    h.add_edges_from((n, snk) for n in g if g.out_degree(n) == 0)
    idom = nx.immediate_dominators(h, src)
    chain = []
    n = idom[snk]
    while n is not src:
        chain.append(n)
        n = idom[n]
    return chain[::-1]


@dataclass(frozen=True)
class Subgraph:
    """The part of a DAG between two consecutive bottleneck nodes.

    ``source``/``sink`` are the bottlenecks (``None`` at an end of a DAG with several roots
    or sinks before the first / after the last bottleneck); ``intermediate`` are the tasks
    strictly between them, in topological order.
    """

    source: Node | None
    sink: Node | None
    intermediate: tuple[Node, ...]


def bottleneck_runs(g: nx.DiGraph) -> list[tuple[Node | None, Node | None, tuple[Node, ...]]]:
    """``(source, sink, intermediate)`` for every pair of consecutive bounds of ``g``.

    The bounds are ``None``, the bottleneck nodes in topological order, ``None``; runs with no
    intermediate task are kept (two adjacent bottlenecks).

    Examples
    --------
    >>> import networkx as nx
    >>> bottleneck_runs(nx.DiGraph([("a", "b")]))
    [(None, 'a', ()), ('a', 'b', ()), ('b', None, ())]
    """
    cuts = bottleneck_nodes(g)
    order = list(nx.lexicographical_topological_sort(g, key=str))
    pos = {n: i for i, n in enumerate(order)}
    bounds = [None, *cuts, None]
    runs = []
    for s, t in zip(bounds, bounds[1:]):
        lo = pos[s] if s is not None else -1
        hi = pos[t] if t is not None else len(order)
        runs.append((s, t, tuple(order[lo + 1 : hi])))  # bottlenecks cut the topological order into runs
    return runs


def bottleneck_subgraphs(g: nx.DiGraph) -> list[Subgraph]:
    """Split ``g`` at its bottleneck nodes (only parts with intermediate tasks are returned).

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (3, 5), (4, 6), (5, 6)])
    >>> [(s.source, s.sink, s.intermediate) for s in bottleneck_subgraphs(g)]
    [(0, 3, (1, 2)), (3, 6, (4, 5))]
    """
    return [Subgraph(s, t, inner) for s, t, inner in bottleneck_runs(g) if inner]


#: how :func:`branch_partition` finds a subgraph's parallel branches (see there)
BRANCH_RULES = ("chains", "components")


def branch_partition(dag: nx.DiGraph, intermediate: Sequence, rule: str = "chains") -> list[list]:
    """Parallel branches of a subgraph, as a partition of its intermediate tasks; the part of the
    first task in ``intermediate`` (topological) order first, the others by their first task.

    ``rule="chains"`` (default; the paper distributes *all* parallel branches): the tasks are cut
    into chains (maximal runs ``u -> v`` with ``u`` having one successor and ``v`` one
    predecessor among the intermediate tasks). A chain that starts a new branch gets a part of
    its own: every chain fed only from outside the subgraph but the first, and every successor
    of a fork but the first. The first successor of a fork stays with the fork and a join goes
    to the oldest branch among its inputs (the lowest part), so branches merge back. GPT-2's attention fork into q, k and v gives
    three parts. ``rule="components"``: one part per weakly connected component of the
    intermediate tasks (a fork inside a component is not split).

    >>> g = nx.DiGraph([("s", "f"), ("f", "q"), ("f", "k"), ("f", "v"), ("q", "j"), ("k", "j"), ("j", "o"),
    ...                 ("v", "o"), ("o", "t")])
    >>> branch_partition(g, ["f", "q", "k", "v", "j", "o"])
    [['f', 'q', 'j', 'o'], ['k'], ['v']]
    >>> branch_partition(g, ["f", "q", "k", "v", "j", "o"], rule="components")
    [['f', 'q', 'k', 'v', 'j', 'o']]
    """
    if rule not in BRANCH_RULES:
        raise ValueError(f"branch rule must be one of {BRANCH_RULES}, got {rule!r}")
    rank = {x: i for i, x in enumerate(intermediate)}
    sub = dag.subgraph(intermediate)
    if rule == "components":
        comps = [sorted(c, key=rank.__getitem__) for c in nx.weakly_connected_components(sub)]
        return sorted(comps, key=lambda c: rank[c[0]])
    part: dict = {}
    n_parts = 0
    for x in intermediate:  # topological order: every predecessor already has its part
        preds = sorted(sub.predecessors(x), key=rank.__getitem__)
        if not preds:  # fed from outside the subgraph: a new branch, except the very first one
            part[x] = 0 if n_parts == 0 else n_parts
        elif len(preds) > 1:  # a join goes back to the oldest branch among its inputs
            part[x] = min(part[u] for u in preds)
        else:
            u = preds[0]
            first_succ = min(sub.successors(u), key=rank.__getitem__)
            part[x] = part[u] if first_succ == x else n_parts  # a fork's other successors branch off
        n_parts = max(n_parts, part[x] + 1)
    groups: dict[int, list] = {}
    for x in intermediate:
        groups.setdefault(part[x], []).append(x)
    return sorted(groups.values(), key=lambda g: rank[g[0]])
