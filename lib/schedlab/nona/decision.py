"""Nona's decision space (section III-C): Omega_t for every bottleneck subgraph.

A contracted DAG is split at its bottleneck nodes (nodes on every root-to-sink path) into
subgraphs with source ``t_0``, sink ``t_m`` and intermediate tasks ``T``. For each subgraph,

    Omega_t = {(pi, pi_k, pi_l) : pi a partition of T, pi_k, pi_l parts of pi}

``pi`` groups the intermediate tasks onto distinct servers, the source runs with part
``pi_k`` and the sink with part ``pi_l``. The decision variables are one probability
distribution theta_t on each Omega_t; the roots of the DAGs are placed uniformly (so they are
not variables). ``|Omega_t| = sum over partitions pi of |pi|^2`` (1, 5, 22, 99, ... for
|T| = 1, 2, 3, 4).

Counting convention. ``search_space`` is ``sum_t |Omega_t|`` and ``n_distributions`` the
number of subgraphs (distributions theta_t), both over all classes. Subgraphs with a single
intermediate task have a single option (the task runs with the source, nothing to decide);
they are counted, as the paper's "46 over 9" for the five models seems to (see the
optimiser notebook for our numbers next to the paper's).

Oversized subgraphs. |Omega_t| grows like the Bell numbers: NASNet-A mobile contracts to ONE
subgraph of 263 intermediate tasks (its cells take two earlier cells' outputs and its auxiliary
head ends early, so no single task is on every path), GNMT to one of 40, Inception-v3's tail to
one of 27. :func:`options` refuses such a subgraph, keeps it on one server
(``oversized="keep_together"``), or (``oversized="branches"``) decides over its parallel
branches: the options whose parts are unions of whole branches (:func:`subgraph_branches`, the
paper's "all branches in part pi_i"), all of them when they fit in ``max_branch_options``, else
those that move at most ``moved`` branches off the trunk's server (:func:`branch_options`,
:func:`branch_space_size`). Each is an ordinary :class:`Option`, priced and solved (with the
certificate) like any other. NASNet gets 119 branches and 473 options (one moved branch), GNMT
2 branches and 5 options, Inception-v3's tail 14 branches and 1,067 options (two moved).

Examples
--------
>>> [len(list(set_partitions("ab"))), len(list(set_partitions("abc")))]
[2, 5]
>>> [omega_size(n) for n in range(1, 5)]
[1, 5, 22, 99]
>>> import networkx as nx
>>> from schedlab.nona.contraction import Subgraph
>>> opts = options(Subgraph("s", "t", ("x", "y")))
>>> len(opts), opts[0]
(5, Option(partition=(('x', 'y'),), source_part=0, sink_part=0))
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import NamedTuple
from dataclasses import dataclass
from functools import lru_cache
from math import comb

import networkx as nx
import numpy as np

from schedlab.nona.contraction import Subgraph, bottleneck_subgraphs, branch_partition

Node = Hashable
DEFAULT_MAX_OPTIONS = 100_000


def set_partitions(items: Sequence) -> Iterator[tuple[tuple, ...]]:
    """All partitions of ``items`` (restricted growth strings; parts in first-appearance order).

    Examples
    --------
    >>> list(set_partitions([1, 2]))
    [((1, 2),), ((1,), (2,))]
    """
    items = list(items)
    n = len(items)
    if n == 0:
        yield ()
        return
    labels = [0] * n

    def rec(i: int, k: int) -> Iterator[tuple[tuple, ...]]:
        if i == n:
            parts: list[list] = [[] for _ in range(k)]
            for item, lab in zip(items, labels):
                parts[lab].append(item)
            yield tuple(tuple(p) for p in parts)
            return
        for lab in range(k + 1):
            labels[i] = lab
            yield from rec(i + 1, max(k, lab + 1))

    yield from rec(1, 1) if n else iter(())


def _stirling2(n: int, k: int) -> int:
    return sum((-1) ** i * comb(k, i) * (k - i) ** n for i in range(k + 1)) // _fact(k)


def _fact(k: int) -> int:
    out = 1
    for i in range(2, k + 1):
        out *= i
    return out


def omega_size(n: int) -> int:
    """|Omega_t| for ``n`` intermediate tasks: sum_k S(n, k) k^2 (Stirling numbers of the 2nd kind)."""
    return sum(_stirling2(n, k) * k * k for k in range(1, n + 1))


class Option(NamedTuple):
    """One element (pi, pi_k, pi_l) of Omega_t: parts of the intermediate tasks, source/sink part indices.

    A named tuple (immutable, hashable): the GPT-2 subgraphs have thousands of options each,
    and tuples are built several times faster than frozen dataclasses.
    """

    partition: tuple[tuple[Node, ...], ...]
    source_part: int
    sink_part: int


@lru_cache(maxsize=32)
def _index_partitions(n: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """All partitions of ``range(n)`` (a pure combinatorial table, computed once per n)."""
    return tuple(set_partitions(range(n)))


@lru_cache(maxsize=32)
def _index_options(n: int) -> tuple[tuple[tuple[tuple[int, ...], ...], int, int], ...]:
    """Omega for ``range(n)`` as (partition, source part, sink part) index triples, in order."""
    return tuple((pi, k, l) for pi in _index_partitions(n) for k in range(len(pi)) for l in range(len(pi)))


class _Options(Sequence):
    """A lazily built sequence of :class:`Option`: equal to any sequence of the same options."""

    __slots__ = ()

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Sequence)
            and len(self) == len(other)
            and all(a == b for a, b in zip(self, other))
        )

    __hash__ = None  # each subclass hashes what defines it


class OptionList(_Options):
    """Omega_t of one subgraph, built lazily from a per-size index table.

    A read-only sequence of :class:`Option` (all-together first), the same elements and
    order as the eager enumeration; an element is materialised when indexed or iterated,
    so compiling a problem with tens of thousands of options does not build them all.
    """

    __slots__ = ("_items", "_table")

    def __init__(self, items: Sequence[Node], together_only: bool = False):
        self._items = tuple(items)
        # together_only: Omega_t cut to its first option (see :func:`options`, ``oversized``)
        self._table = (
            (((tuple(range(len(self._items))),), 0, 0),)
            if together_only
            else _index_options(len(self._items))
        )

    @property
    def together_only(self) -> bool:
        """True when this list holds only the all-together option of a larger Omega_t."""
        return len(self._table) == 1 and len(self._items) > 1

    def __len__(self) -> int:
        return len(self._table)

    def _make(self, entry) -> Option:
        pi, k, l = entry
        return Option(tuple(tuple(self._items[i] for i in part) for part in pi), k, l)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._make(e) for e in self._table[i]]
        return self._make(self._table[i])

    def __iter__(self) -> Iterator[Option]:
        cache: dict = {}
        for pi, k, l in self._table:
            part = cache.get(pi)
            if part is None:
                part = cache[pi] = tuple(tuple(self._items[i] for i in p) for p in pi)
            yield Option(part, k, l)

    def __hash__(self) -> int:
        return hash((self._items, len(self._table)))

    def __repr__(self) -> str:
        return f"OptionList({list(self)!r})" if len(self) <= 10 else f"OptionList(<{len(self)} options>)"


# --------------------------------------------------------------------------------------
# the branch space of an oversized subgraph
# --------------------------------------------------------------------------------------

#: largest branch space :func:`options` builds for one oversized subgraph (``oversized="branches"``).
#: The critical-path pricing keeps a (tasks + 2) x options array per task and per crossing edge:
#: NASNet-A mobile's 263-task subgraph prices its 473 one-moved-branch options in ~1.1 s CPU and
#: ~0.8 GB (two moved branches would be 90,212 options); Inception-v3's 27-task tail gets two
#: moved branches of 14 (1,067 options, three would be 14,509), GNMT all 5 options of its 2 branches.
DEFAULT_MAX_BRANCH_OPTIONS = 2_000


def subgraph_branches(dag: nx.DiGraph, sub: Subgraph) -> tuple[tuple[Node, ...], ...]:
    """The parallel branches of subgraph ``sub``: a partition of its intermediate tasks, trunk first.

    1. Chains (:func:`schedlab.nona.contraction.branch_partition`, rule ``"chains"``, the Opportunistic
       scheme's branches): a maximal run ``u -> v`` with ``u`` having one successor and ``v`` one
       predecessor among the intermediate tasks is never cut; every successor of a fork but the
       first, and every task fed from outside the subgraph but the first, starts a branch; a join
       goes back to the oldest branch among its inputs. The first branch (the *trunk*) holds the
       subgraph's first task.
    2. A branch without compute (every task ``work_s == 0``: GNMT's unused LSTM states, NASNet's
       ``Size`` op) joins the branch of its first task's first predecessor (the trunk when that
       is the source): moving it to another server saves no compute and can only add transfers,
       so the option that moves it is never better than the one that keeps it (weakly dominated
       under both pricings).

    Branches are ordered by their first task and list their tasks in the subgraph's
    (topological) order. Every branch is a union of chains, so is every union of branches.

    Examples
    --------
    >>> g = nx.DiGraph([("s", "f"), ("f", "a"), ("f", "b"), ("f", "z"), ("a", "j"), ("b", "j"),
    ...                 ("z", "t"), ("j", "t")])
    >>> nx.set_node_attributes(g, 1.0, "work_s"); g.nodes["z"]["work_s"] = 0.0
    >>> subgraph_branches(g, Subgraph("s", "t", ("f", "a", "b", "z", "j")))
    (('f', 'a', 'z', 'j'), ('b',))
    """

    inner = list(sub.intermediate)
    rank = {x: i for i, x in enumerate(inner)}
    groups = [list(b) for b in branch_partition(dag, inner, "chains")]
    owner = {x: i for i, b in enumerate(groups) for x in b}
    for i, b in enumerate(groups):  # groups are in first-task order: a predecessor's branch is settled
        if i and not any(dag.nodes[x].get("work_s", 0.0) > 0 for x in b):
            preds = sorted((u for u in dag.pred[b[0]] if u in rank), key=rank.__getitem__)
            owner.update(dict.fromkeys(b, owner[preds[0]] if preds else 0))
    merged: dict[int, list] = {}
    for x in inner:
        merged.setdefault(owner[x], []).append(x)
    return tuple(tuple(b) for b in sorted(merged.values(), key=lambda b: rank[b[0]]))


def branch_space_size(m: int, moved: int | None = None) -> int:
    """Options of the branch space of ``m`` branches with at most ``moved`` branches off the trunk's part.

    ``sum_{j <= moved} C(m - 1, j) sum_p S(j, p) (p + 1)^2``: choose the ``j`` branches that leave
    the trunk's part, partition them into ``p`` parts, then place the source and the sink with any
    of the ``p + 1`` parts. ``moved=None`` (no cap) is ``omega_size(m)``.

    >>> [branch_space_size(4, j) for j in range(4)], omega_size(4)
    ([1, 13, 52, 99], 99)
    >>> branch_space_size(119, 1), branch_space_size(14, 3)
    (473, 14509)
    """
    if m < 1:
        raise ValueError(f"a subgraph has at least one branch, got m={m}")
    top = m - 1 if moved is None else min(moved, m - 1)
    inner = [sum(_stirling2_0(j, p) * (p + 1) ** 2 for p in range(j + 1)) for j in range(top + 1)]
    return sum(comb(m - 1, j) * inner[j] for j in range(top + 1))


def _stirling2_0(n: int, k: int) -> int:
    """S(n, k) with S(0, 0) = 1 (no moved branch: no extra part)."""
    return 1 if n == k == 0 else (_stirling2(n, k) if k else 0)


def branch_moves(m: int, max_options: int) -> int:
    """The largest ``moved`` (<= m - 1) whose branch space fits in ``max_options`` options.

    >>> branch_moves(119, 1_000), branch_moves(14, 1_000), branch_moves(4, 1_000)
    (1, 1, 3)
    """
    if max_options < 1:
        raise ValueError(f"max_branch_options must be >= 1, got {max_options}")
    moved = 0
    while moved < m - 1 and branch_space_size(m, moved + 1) <= max_options:
        moved += 1
    return moved


def _branch_label_rows(m: int, moved: int) -> list[tuple[int, ...]]:
    """Restricted growth strings over ``m`` branches with at most ``moved`` non-zero labels, in
    :func:`set_partitions` order (all-together first)."""
    out: list[tuple[int, ...]] = []
    labels = [0] * m

    def rec(i: int, k: int, off: int) -> None:
        if i == m:
            out.append(tuple(labels))
            return
        for lab in range(k + 1 if off < moved else 1):  # budget spent: the rest stays with the trunk
            labels[i] = lab
            rec(i + 1, max(k, lab + 1), off + (lab > 0))
        labels[i] = 0

    if m > 1:
        rec(1, 1, 0)  # branch 0 (the trunk) is part 0 by construction
    else:
        out.append((0,) * m)
    return out


class BranchOptionList(_Options):
    """The branch space of one subgraph: options whose parts are unions of whole branches.

    ``branches`` (a partition of the intermediate tasks, trunk first, in first-task order, as
    :func:`subgraph_branches`); the options are the partitions of the branches in which at most
    ``moved`` branches leave the trunk's part, each with every source part and sink part, in the
    order of :class:`OptionList` over the branches (all-together first). Each element is an
    ordinary :class:`Option` over the tasks (parts ordered by their first task), so the optimiser
    prices it like any option. :meth:`label_table` gives the per-task part labels the vectorised
    pricing reads.

    >>> sp = BranchOptionList((("a", "c"), ("b",)), moved=1, order=("a", "b", "c"))
    >>> len(sp), sp[0], sp[2]
    (5, Option(partition=(('a', 'b', 'c'),), source_part=0, sink_part=0), Option(partition=(('a', 'c'), ('b',)), source_part=0, sink_part=1))
    """

    together_only = False

    def __init__(
        self,
        branches: Sequence[Sequence[Node]],
        moved: int | None = None,
        order: Sequence[Node] | None = None,
    ):
        order = tuple(x for b in branches for x in b) if order is None else tuple(order)
        pos = {x: i for i, x in enumerate(order)}
        flat = [x for b in branches for x in b]
        if not branches or any(not b for b in branches) or len(flat) != len(pos) or set(flat) != set(pos):
            raise ValueError(
                f"branches must be non-empty groups partitioning the tasks {list(order)}, "
                f"got {[list(b) for b in branches]}"
            )
        # canonical: tasks in subgraph order, branches by first task (so parts come out ordered by first task)
        self.branches = tuple(
            sorted((tuple(sorted(b, key=pos.__getitem__)) for b in branches), key=lambda b: pos[b[0]])
        )
        m = len(self.branches)
        self.moved = m - 1 if moved is None else min(int(moved), m - 1)
        if self.moved < 0:
            raise ValueError(f"moved must be >= 0, got {moved}")
        self._tasks = order
        owner = {x: i for i, b in enumerate(self.branches) for x in b}
        self._branch_of = np.array([owner[x] for x in order], dtype=np.int64)
        self._rows = _branch_label_rows(m, self.moved)
        self._parts = [max(r) + 1 for r in self._rows]
        self._start = np.concatenate([[0], np.cumsum([k * k for k in self._parts])]).astype(np.int64)

    def __len__(self) -> int:
        return int(self._start[-1])

    def _locate(self, i: int) -> tuple[int, int, int]:
        if not -len(self) <= i < len(self):
            raise IndexError(f"option index {i} out of range for {len(self)} options")
        i %= len(self)
        r = int(np.searchsorted(self._start, i, side="right")) - 1
        k, l = divmod(i - int(self._start[r]), self._parts[r])
        return r, k, l

    def _partition(self, r: int) -> tuple[tuple[Node, ...], ...]:
        lab = self._rows[r]
        parts: list[list] = [[] for _ in range(self._parts[r])]
        for x, b in zip(self._tasks, self._branch_of):
            parts[lab[b]].append(x)
        return tuple(tuple(p) for p in parts)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        r, k, l = self._locate(i)
        return Option(self._partition(r), k, l)

    def __iter__(self) -> Iterator[Option]:
        for r, K in enumerate(self._parts):
            part = self._partition(r)
            for k in range(K):
                for l in range(K):
                    yield Option(part, k, l)

    def label_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(labels, parts per option, labels transposed): row ``o`` of labels is option ``o``'s part
        of every intermediate task (subgraph order), then its source part and sink part."""
        rows = np.asarray(self._rows, dtype=np.int64).reshape(len(self._rows), len(self.branches))
        task_lab = rows[:, self._branch_of]
        K = np.repeat(np.asarray(self._parts, dtype=np.int64), [k * k for k in self._parts])
        lab = np.repeat(task_lab, [k * k for k in self._parts], axis=0)
        kl = np.array([(k, l) for K_ in self._parts for k in range(K_) for l in range(K_)], dtype=np.int64)
        lab = np.concatenate([lab, kl.reshape(-1, 2)], axis=1)
        return lab, K, np.ascontiguousarray(lab.T)

    def __hash__(self) -> int:
        return hash((self.branches, self.moved))

    def __repr__(self) -> str:
        return (
            f"BranchOptionList(<{len(self.branches)} branches, moved <= {self.moved}, {len(self)} options>)"
        )


def branch_options(
    dag: nx.DiGraph, sub: Subgraph, max_options: int = DEFAULT_MAX_BRANCH_OPTIONS
) -> BranchOptionList:
    """The branch space of ``sub``: partitions of its branches (:func:`subgraph_branches`), capped.

    All partitions of the ``m`` branches (``omega_size(m)`` options) when they fit in
    ``max_options``; otherwise those in which at most ``moved`` branches leave the trunk's part,
    ``moved`` the largest that fits (:func:`branch_moves`; size :func:`branch_space_size`).
    Every option's parts are unions of whole branches, hence of whole chains.

    >>> g = nx.DiGraph([("s", "a"), ("s", "b"), ("s", "c"), ("a", "t"), ("b", "t"), ("c", "t")])
    >>> nx.set_node_attributes(g, 1.0, "work_s")
    >>> sub = Subgraph("s", "t", ("a", "b", "c"))
    >>> len(branch_options(g, sub)), len(branch_options(g, sub, max_options=13)), omega_size(3)
    (22, 9, 22)
    """
    branches = subgraph_branches(dag, sub)
    return BranchOptionList(branches, branch_moves(len(branches), max_options), order=sub.intermediate)


#: what :func:`options` does with a subgraph whose Omega_t exceeds ``max_options``: refuse it, keep
#: it on one server, or decide over its parallel branches (:func:`branch_options`)
OVERSIZED = ("error", "keep_together", "branches")


def options(
    sub: Subgraph,
    max_options: int = DEFAULT_MAX_OPTIONS,
    oversized: str = "error",
    dag: nx.DiGraph | None = None,
    max_branch_options: int | None = None,
) -> Sequence[Option]:
    """Omega_t of subgraph ``sub``, all-together option first (a lazy sequence of :class:`Option`).

    Raises ``ValueError`` if the subgraph has no source or sink (a DAG with several roots
    or sinks) or, with ``oversized="error"`` (default), if |Omega_t| exceeds ``max_options``
    (the enumeration is exponential). ``oversized="keep_together"`` instead keeps such a
    subgraph on one server: its list holds the all-together option only (no decision; the
    list's ``together_only`` is True). ``oversized="branches"`` gives such a subgraph the
    branch space of :func:`branch_options` (partitions of its parallel branches, at most
    ``max_branch_options`` options, default :data:`DEFAULT_MAX_BRANCH_OPTIONS`); it needs the
    subgraph's ``dag``. A subgraph within ``max_options`` keeps its full Omega_t under every mode.
    """
    if sub.source is None or sub.sink is None:
        raise ValueError(
            f"subgraph {sub} has no single source/sink: Nona needs one root and one sink per DAG"
        )
    if oversized not in OVERSIZED:
        raise ValueError(f"oversized must be one of {OVERSIZED}, got {oversized!r}")
    n = omega_size(len(sub.intermediate))
    if n > max_options:
        if oversized == "keep_together":
            return OptionList(sub.intermediate, together_only=True)
        if oversized == "branches":
            if dag is None:
                raise ValueError("oversized='branches' needs the subgraph's dag (options(..., dag=...))")
            cap = DEFAULT_MAX_BRANCH_OPTIONS if max_branch_options is None else max_branch_options
            return branch_options(dag, sub, cap)
        raise ValueError(
            f"subgraph {sub.source}->{sub.sink} has {len(sub.intermediate)} intermediate tasks: "
            f"|Omega_t| = {n} options exceeds max_options={max_options} (oversized='keep_together' "
            "keeps such a subgraph on one server instead, oversized='branches' decides over its "
            "parallel branches)"
        )
    return OptionList(sub.intermediate)


@dataclass(frozen=True)
class ClassSpace:
    """The subgraphs of one class and their option lists."""

    name: str
    subgraphs: tuple[Subgraph, ...]
    options: tuple[Sequence[Option], ...]  # OptionList, or BranchOptionList (oversized="branches")


def class_space(
    name: str,
    dag: nx.DiGraph,
    max_options: int = DEFAULT_MAX_OPTIONS,
    oversized: str = "error",
    max_branch_options: int | None = None,
) -> ClassSpace:
    """Split ``dag`` (contracted) at bottlenecks and enumerate Omega_t per subgraph (``oversized``,
    ``max_branch_options``: see :func:`options`)."""
    roots = [n for n in dag if dag.in_degree(n) == 0]
    sinks = [n for n in dag if dag.out_degree(n) == 0]
    if len(roots) != 1 or len(sinks) != 1:
        raise ValueError(
            f"{name}: Nona needs a DAG with exactly one root and one sink, got roots {roots} "
            f"and sinks {sinks}; schedlab.nona.workload.close_dag adds a zero-cost virtual root "
            "and sink (inference_classes does it for every model)"
        )
    subs = tuple(bottleneck_subgraphs(dag))
    return ClassSpace(
        name, subs, tuple(options(s, max_options, oversized, dag, max_branch_options) for s in subs)
    )


def space_size(spaces: Sequence[ClassSpace]) -> tuple[int, int]:
    """(search_space, n_distributions) = (sum_t |Omega_t|, number of subgraphs)."""
    return sum(len(o) for s in spaces for o in s.options), sum(len(s.options) for s in spaces)
