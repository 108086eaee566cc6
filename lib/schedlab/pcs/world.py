"""The reference engine's state and steps: per-job arrays, progress, allocation, completion.

:func:`schedlab.pcs.sim.simulate` (``engine="reference"``) runs its event loop on these, and the
predictor replays a compact copy of the active jobs with them (:func:`replay`); replaceable
steps (:class:`schedlab.pcs.hooks.Hooks`) are built from them too. The semantics are those of
the authors' simulator (see :mod:`schedlab.pcs.sim`). The module needs nothing of the
policies but the :class:`Allocator` interface, so :mod:`schedlab.pcs.policies` and
:mod:`schedlab.pcs.hooks` can import it without a circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from schedlab.pcs.models import throughput_vec
from schedlab.pcs.workload import NEVER_S, seconds_to_us

# job status (the authors' App states)
SUBMITTED, ACTIVE, QUEUED, PREEMPTED, END = 1, 2, 3, 4, 5
#: event kinds, in the order they are handled at equal times (the authors' ``Event`` order)
COMPLETION, TICK, ARRIVAL = 0, 1, 2
INF = np.iinfo(np.int64).max


class SimulationError(RuntimeError):
    """The simulation cannot proceed (e.g. a job larger than the cluster that never runs)."""


class Allocator(Protocol):
    """What the reference engine's steps read of a policy
    (:class:`schedlab.pcs.policies.Policy` provides it)."""

    name: str
    now_us: int
    quantum_us: int | None
    replay_size: str
    replay_leases: bool
    replay_pending_tick: bool

    def allocate(self, world: "World") -> np.ndarray:
        """GPUs per active job, aligned with ``world.active`` after the call."""


@dataclass
class World:
    """Mutable per-job state in flat arrays (index = local job id) plus the active order.

    The main simulation holds every job; a predictor replay holds a compact copy of the
    active jobs only. Policies read these arrays and may reorder ``active``.
    """

    gpus: int
    app_id: np.ndarray
    submit_us: np.ndarray
    service: np.ndarray  # what the scheduler believes the size is (replay: estimate)
    rem: np.ndarray  # remaining single-GPU seconds
    est_rem: np.ndarray  # estimate of ``rem`` seen by size-based policies
    est_service: np.ndarray  # the authors overwrite this with est_rem at every update
    demand: np.ndarray  # int64, 0 once finished
    alloc: np.ndarray  # float
    status: np.ndarray  # int8
    start_us: np.ndarray
    end_us: np.ndarray
    cls: np.ndarray  # WFQ class
    rows: np.ndarray  # speedup tables, (n, width)
    active: list
    seen_sum: np.ndarray | None = None  # contention counters (the authors' num_apps_seen)
    seen_cnt: np.ndarray | None = None
    init_demand: np.ndarray | None = None
    last_us: int = 0

    def act(self) -> np.ndarray:
        """Active local ids in the authors' list order."""
        return np.fromiter(self.active, dtype=np.int64, count=len(self.active))

    def thrpt(self, idx: np.ndarray, alloc: np.ndarray | None = None) -> np.ndarray:
        """Throughput of jobs ``idx`` at ``alloc`` (default: current allocation)."""
        a = self.alloc[idx] if alloc is None else alloc
        return throughput_vec(self.rows[idx], a, self.demand[idx])


def advance(w: World, t_us: int, err: np.ndarray | None, seen: bool = True) -> None:
    """Advance every running job's remaining work to ``t_us`` (estimates: ``err`` factors)
    and count contention (``seen``)."""
    idx = w.act()
    if len(idx) == 0:
        w.last_us = t_us
        return
    dt = (t_us - w.last_us) / 1e6
    run = idx[w.status[idx] == ACTIVE]
    if len(run):
        w.rem[run] -= w.thrpt(run) * dt
        est = w.rem[run] if err is None else np.maximum(w.rem[run] * err[w.app_id[run]], 1e-2)
        w.est_rem[run] = est
        w.est_service[run] = est
    if seen:
        w.seen_sum[idx] += len(idx)
        w.seen_cnt[idx] += 1
    w.last_us = t_us


def apply_allocation(w: World, t_us: int, policy: Allocator) -> None:
    """Ask ``policy`` for the active jobs' GPUs and update allocations, starts and states."""
    if not w.active:
        return
    alloc = policy.allocate(w)  # aligned with w.active (possibly reordered by the policy)
    idx = w.act()
    a = np.minimum(alloc, w.demand[idx])
    w.alloc[idx] = a
    st = w.status[idx]
    pos = a > 0
    starting = pos & ((st == SUBMITTED) | (st == QUEUED))
    w.start_us[idx[starting]] = t_us
    new = st.copy()
    new[pos] = ACTIVE
    new[(~pos) & (st == SUBMITTED)] = QUEUED
    new[(~pos) & (st == ACTIVE)] = PREEMPTED
    w.status[idx] = new


def next_end(w: World, t_us: int) -> tuple[int, int]:
    """Earliest projected completion ``(time_us, local id)``; ``(INF, -1)`` if none."""
    if not w.active:
        return INF, -1
    idx = w.act()
    rem = w.rem[idx]
    al = w.alloc[idx]
    ends = np.full(len(idx), INF, dtype=np.int64)
    zero_rem = rem == 0
    ends[zero_rem] = t_us
    calc = (~zero_rem) & (al != 0)
    if calc.any():
        ci = idx[calc]
        with np.errstate(divide="ignore", invalid="ignore"):
            x = rem[calc] / w.thrpt(ci)
        ok = np.isfinite(x) & (x < NEVER_S) & (x > -NEVER_S)
        e = np.full(len(ci), INF, dtype=np.int64)
        e[ok] = t_us + seconds_to_us(x[ok])
        ends[calc] = e
    k = int(np.argmin(ends))  # first of equal minima = first in the active list
    return int(ends[k]), int(idx[k])


def finish(w: World, i: int, t_us: int) -> None:
    """Job ``i`` completes at ``t_us`` (leaves the active list)."""
    if abs(w.rem[i]) > 0.01:  # the authors assert the same tolerance
        raise SimulationError(f"job {w.app_id[i]} completes with remaining {w.rem[i]}")
    w.demand[i] = 0
    w.status[i] = END
    w.end_us[i] = t_us
    w.active.remove(i)


def snapshot(w: World, t_us: int, size: str = "estimate") -> tuple[World, np.ndarray]:
    """A predictor's copy of the active jobs (compact arrays) and their indices in ``w``.

    Remaining sizes are replaced by their estimates; ``service`` (Themis's ``t_ideal``, LAS's
    attained service) is, by ``size``: ``"estimate"`` the estimated remaining size,
    ``"true"`` the true size, ``"attained+estimate"`` attained + estimated remaining size
    (the authors' ``estimated_service`` at 62a6ca3, same expression).
    """
    idx = w.act()
    est = w.est_rem[idx].copy()
    if size == "true":
        service = w.service[idx].copy()
    elif size == "attained+estimate":
        service = (w.service[idx] - w.rem[idx]) + est
    elif size == "estimate":
        service = w.est_service[idx].copy()
    else:
        raise ValueError(f"snapshot: size {size!r}: expected 'estimate', 'true' or 'attained+estimate'")
    sub = World(
        gpus=w.gpus,
        app_id=w.app_id[idx],
        submit_us=w.submit_us[idx],
        service=service,
        rem=est,
        est_rem=est.copy(),
        est_service=w.est_service[idx].copy(),
        demand=w.demand[idx].copy(),
        alloc=w.alloc[idx].copy(),
        status=w.status[idx].copy(),
        start_us=w.start_us[idx].copy(),
        end_us=np.full(len(idx), INF, dtype=np.int64),
        cls=w.cls[idx],
        rows=w.rows[idx],
        active=list(range(len(idx))),
        seen_sum=w.seen_sum[idx].copy(),
        seen_cnt=w.seen_cnt[idx].copy(),
        init_demand=w.init_demand[idx],
        last_us=t_us,
    )
    return sub, idx


def replay(
    w: World,
    t_us: int,
    target: int,
    policy: Allocator,
    next_end: Callable[[World, int], tuple[int, int]] = next_end,
) -> tuple[int, int]:
    """Predict ``(start_us, end_us)`` of local job ``target`` with no future arrivals.

    Copies only the active jobs (compact arrays), with remaining sizes replaced by their
    estimates, and runs completions until ``target`` ends. ``next_end`` finds each next
    completion (:class:`schedlab.pcs.hooks.Hooks`).
    """
    # what the replay keeps as each job's size: Policy.replay_size (Themis, LAS)
    sub, idx = snapshot(w, t_us, policy.replay_size)
    tgt = int(np.flatnonzero(idx == target)[0])
    quantum = policy.quantum_us
    # Themis leases inside a replay only if asked (Themis.replay_leases); contention is
    # still counted at every replay event
    leases = quantum is not None and policy.replay_leases
    # the authors' snapshot copies the pending lease tick since their code of 2024-05-31
    pending = leases and getattr(policy, "replay_pending_tick", False)
    tick = t_us + quantum if pending else INF
    t_end, j = next_end(sub, t_us)
    while True:
        if (j < 0 or t_end == INF) and tick == INF:
            raise SimulationError(f"prediction for job {w.app_id[target]} never completes")
        is_end = j >= 0 and t_end != INF and t_end <= tick
        t = t_end if is_end else tick
        advance(sub, t, None)
        if is_end:
            finish(sub, j, t)
            if j == tgt:
                return int(sub.start_us[tgt]), t
        if leases:
            tick = t + quantum if sub.active else INF
        policy.now_us = t
        apply_allocation(sub, t, policy)
        t_end, j = next_end(sub, t)
