"""Replaceable steps of the reference engine, and the old simulator's versions of them.

:class:`Hooks` names the two steps :func:`schedlab.pcs.sim.simulate` (``engine="reference"``)
lets a caller or a policy replace: finding the next completion and the predictor.
:func:`next_end_heap` and :func:`coin_replay` are the authors' older simulator's versions,
which :class:`~schedlab.pcs.policies.RandomisedAFS` needs (its
:meth:`~schedlab.pcs.policies.RandomisedAFS.reference_hooks`). Built from the steps of
:mod:`schedlab.pcs.world`; imports no policy, so policies can import it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Callable

import numpy as np

from schedlab.pcs.world import (
    INF,
    NEVER_S,
    Allocator,
    SimulationError,
    World,
    advance,
    apply_allocation,
    finish,
    next_end,
    replay,
    snapshot,
)
from schedlab.pcs.workload import seconds_to_us


class _HeapEnd:
    """An end event that, like the authors' old ``Event``, compares by time only."""

    __slots__ = ("t", "j")

    def __init__(self, t: int, j: int):
        self.t, self.j = t, j

    def __lt__(self, other: "_HeapEnd") -> bool:
        return self.t < other.t


def next_end_heap(w: World, t_us: int) -> tuple[int, int]:
    """:func:`~schedlab.pcs.world.next_end` with equal times resolved as the authors' old
    event heap did.

    The old simulator pushed one end event per running job (active-list order), heapified
    and popped: among equal times the winner is whatever ``heapq`` leaves on top, not the
    first in the active list. Used by :class:`~schedlab.pcs.policies.RandomisedAFS`.
    """
    if not w.active:
        return INF, -1
    idx = w.act()
    rem, al = w.rem[idx], w.alloc[idx]
    ends = {}
    run = (rem != 0) & (al != 0)
    if run.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            x = rem[run] / w.thrpt(idx[run])
        ok = np.isfinite(x) & (x < NEVER_S) & (x > -NEVER_S)
        e = np.full(int(run.sum()), INF, dtype=np.int64)
        e[ok] = t_us + seconds_to_us(x[ok])
        ends = dict(zip(idx[run].tolist(), e.tolist()))
    heap = [
        _HeapEnd(t_us if rem[k] == 0 else ends[j], j)
        for k, j in enumerate(idx.tolist())
        if rem[k] == 0 or al[k] != 0
    ]
    if not heap:
        return INF, -1
    heapq.heapify(heap)
    return int(heap[0].t), int(heap[0].j)


def coin_replay(rng) -> Callable[[World, int, int, Allocator], tuple[int, int]]:
    """The authors' old in-process predictor, as a ``Hooks.replay``.

    Before each replay it draws one ``rng.uniform()`` (the old "predict this arrival?"
    coin, always true below 5000 apps); the replay copies the snapshot as
    :func:`~schedlab.pcs.world.replay`, runs completions in :func:`next_end_heap` order and
    re-divides once more at the target's own completion before it stops (this moves a
    randomised policy's stream).
    """

    def predictor(w: World, t_us: int, target: int, policy: Allocator) -> tuple[int, int]:
        rng.uniform()
        sub, idx = snapshot(w, t_us)
        tgt = int(np.flatnonzero(idx == target)[0])
        t_end, j = next_end_heap(sub, t_us)
        while True:
            if j < 0 or t_end == INF:
                raise SimulationError(f"prediction for job {w.app_id[target]} never completes")
            advance(sub, t_end, None)
            finish(sub, j, t_end)
            policy.now_us = t_end
            apply_allocation(sub, t_end, policy)  # also at the target's own end (old code)
            if j == tgt:
                return int(sub.start_us[tgt]), t_end
            t_end, j = next_end_heap(sub, t_end)

    return predictor


@dataclass(frozen=True)
class Hooks:
    """Replaceable steps of the reference engine (``simulate(..., engine="reference",
    hooks=Hooks(...))``), for variants of the authors' simulator; a policy can supply its
    own (:meth:`~schedlab.pcs.policies.Policy.reference_hooks`, e.g.
    :class:`~schedlab.pcs.policies.RandomisedAFS`: :func:`next_end_heap`,
    :func:`coin_replay`).

    Attributes
    ----------
    next_end : callable ``(world, t_us) -> (time_us, local id)``, optional
        The earliest projected completion (``(INF, -1)``: none); default
        :func:`~schedlab.pcs.world.next_end`.
        Used by the main loop and by the default ``replay``.
    replay : callable ``(world, t_us, target, policy) -> (start_us, end_us)``, optional
        The predictor, run right after each arrival is handled; default
        :func:`~schedlab.pcs.world.replay` (with ``next_end`` above). Building blocks (in
        :mod:`schedlab.pcs.world`): ``snapshot``, ``advance``, ``finish``,
        ``apply_allocation``.

    Examples
    --------
    >>> from schedlab.pcs.workload import Workload
    >>> from schedlab.pcs.policies import make_policy
    >>> from schedlab.pcs.sim import simulate
    >>> seen = []
    >>> def logged(w, t_us, target, policy):
    ...     seen.append(int(target))
    ...     return replay(w, t_us, target, policy)
    >>> w = Workload.from_arrays(submit_s=[0, 1], service=[4.0, 2.0], demand=[1, 1])
    >>> out = simulate(w, make_policy("FIFO"), 1, predict=True, engine="reference",
    ...                hooks=Hooks(replay=logged))
    >>> seen, out["estimated_end_time"].tolist()
    ([0, 1], [4.0, 6.0])
    """

    next_end: Callable[[World, int], tuple[int, int]] | None = None
    replay: Callable[[World, int, int, Allocator], tuple[int, int]] | None = None

    def resolved(self) -> tuple[Callable, Callable]:
        """``(next_end, replay)`` with the library's defaults filled in."""
        find_end = self.next_end or next_end
        if self.replay is not None:
            return find_end, self.replay
        return find_end, lambda w, t_us, target, pol: replay(w, t_us, target, pol, find_end)
