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

from schedlab.nona.contraction import Subgraph, bottleneck_subgraphs

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


class OptionList(Sequence):
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

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Sequence)
            and len(self) == len(other)
            and all(a == b for a, b in zip(self, other))
        )

    def __hash__(self) -> int:
        return hash((self._items, len(self._table)))

    def __repr__(self) -> str:
        return f"OptionList({list(self)!r})" if len(self) <= 10 else f"OptionList(<{len(self)} options>)"


#: what :func:`options` does with a subgraph whose Omega_t exceeds ``max_options``
OVERSIZED = ("error", "keep_together")


def options(sub: Subgraph, max_options: int = DEFAULT_MAX_OPTIONS, oversized: str = "error") -> OptionList:
    """Omega_t of subgraph ``sub``, all-together option first (a lazy sequence of :class:`Option`).

    Raises ``ValueError`` if the subgraph has no source or sink (a DAG with several roots
    or sinks) or, with ``oversized="error"`` (default), if |Omega_t| exceeds ``max_options``
    (the enumeration is exponential). ``oversized="keep_together"`` instead keeps such a
    subgraph on one server: its list holds the all-together option only (no decision; the
    list's ``together_only`` is True).
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
        raise ValueError(
            f"subgraph {sub.source}->{sub.sink} has {len(sub.intermediate)} intermediate tasks: "
            f"|Omega_t| = {n} options exceeds max_options={max_options} (oversized='keep_together' "
            "keeps such a subgraph on one server instead)"
        )
    return OptionList(sub.intermediate)


@dataclass(frozen=True)
class ClassSpace:
    """The subgraphs of one class and their option lists."""

    name: str
    subgraphs: tuple[Subgraph, ...]
    options: tuple[OptionList, ...]


def class_space(
    name: str, dag: nx.DiGraph, max_options: int = DEFAULT_MAX_OPTIONS, oversized: str = "error"
) -> ClassSpace:
    """Split ``dag`` (contracted) at bottlenecks and enumerate Omega_t per subgraph (``oversized``:
    see :func:`options`)."""
    roots = [n for n in dag if dag.in_degree(n) == 0]
    sinks = [n for n in dag if dag.out_degree(n) == 0]
    if len(roots) != 1 or len(sinks) != 1:
        raise ValueError(
            f"{name}: Nona needs a DAG with exactly one root and one sink, got roots {roots} "
            f"and sinks {sinks}; schedlab.nona.workload.close_dag adds a zero-cost virtual root "
            "and sink (inference_classes does it for every model)"
        )
    subs = tuple(bottleneck_subgraphs(dag))
    return ClassSpace(name, subs, tuple(options(s, max_options, oversized) for s in subs))


def space_size(spaces: Sequence[ClassSpace]) -> tuple[int, int]:
    """(search_space, n_distributions) = (sum_t |Omega_t|, number of subgraphs)."""
    return sum(len(o) for s in spaces for o in s.options), sum(len(s.options) for s in spaces)
