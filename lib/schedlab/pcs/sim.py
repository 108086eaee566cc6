"""The event simulator: elastic jobs, one event heap, a policy, and the JCT predictor.

Semantics follow the PCS authors' simulator (``GenericScheduler.run``), read for facts:

* Time is an integer number of **microseconds** (their clock is a ``datetime``; every
  projected completion is ``now + timedelta(seconds=remaining/throughput)``, rounded to the
  microsecond half-to-even, see :func:`~schedlab.pcs.workload.seconds_to_us`).
* One heap of ``(time, kind, seq, ...)`` entries: the single earliest projected completion
  (kind 0), the policy's next re-division tick if it has a quantum (Themis, kind 1) and the
  arrivals (kind 2, in ``app_id`` order): at equal times completion < tick < arrival, the
  authors' ``Event`` order. Completion and tick entries carry a version; stale ones are
  skipped.
* Per event, in this order: advance every running job's remaining work by
  ``throughput(allocation) * dt``; record contention (``num_apps_seen``); handle the event
  (arrival: append to the active list; completion: remove the job); ask the policy for the
  allocations of all active jobs; recompute the earliest completion (ties: the first job in
  the active list; one completion is handled per event, a second one at the same time comes
  next with ``dt = 0``).
* Predictor (``predict=True``): right after an arrival is handled, the active jobs are
  copied (compact arrays, sizes replaced by their *estimates*, no future arrivals) and
  replayed with the same policy until the new job finishes; its replayed start and end are
  the prediction (the authors replay the whole snapshot; the new job's times do not depend on
  what happens after it ends, so stopping there gives identical numbers). Themis replays
  follow :class:`~schedlab.pcs.policies.Themis` (``replay_size``, ``replay_leases``): by
  default the true size stays in ``t_ideal`` and only completions re-divide, as in the
  authors' runs behind Fig. 8 (per-job exact).
* Job-size error (``p_error``): at arrival a job draws ``e ~ U(1-p, 1+p)`` once (the authors
  use Python's unseeded ``random``; here an explicit :class:`numpy.random.Generator`); the
  scheduler sees ``max(remaining*e, 0.01)``. As in the authors' code the error is only
  applied when predictions are on.

Examples
--------
>>> from schedlab.pcs.workload import Workload
>>> from schedlab.pcs.policies import make_policy
>>> w = Workload.from_arrays(submit_s=[0, 0], service=[10.0, 20.0], demand=[1, 1])
>>> out = simulate(w, make_policy("FIFO"), gpus=1)
>>> out["end_time"].tolist()
[10.0, 30.0]
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import pandas as pd

from schedlab.pcs.models import throughput_vec
from schedlab.pcs.policies import KernelSpec, NoKernelError, Policy
from schedlab.pcs.workload import US, Workload, seconds_to_us

# job status (the authors' App states)
SUBMITTED, ACTIVE, QUEUED, PREEMPTED, END = 1, 2, 3, 4, 5
INF = np.iinfo(np.int64).max
#: datetime.max is ~2.5e11 s after 2020; farther projected ends are "never" for the authors.
NEVER_S = 2.0e11

OUTPUT_COLUMNS = ["app_id", "submit_time", "start_time", "end_time", "estimated_start_time",
                  "estimated_end_time", "fair_act", "service", "num_apps_seen_diff"]


class SimulationError(RuntimeError):
    """The simulation cannot proceed (e.g. a job larger than the cluster that never runs)."""


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


def apply_allocation(w: World, t_us: int, policy: Policy) -> None:
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


def snapshot(w: World, t_us: int, true_size: bool = False) -> tuple[World, np.ndarray]:
    """A predictor's copy of the active jobs (compact arrays) and their indices in ``w``.

    Remaining sizes are replaced by their estimates; ``service`` (Themis's ``t_ideal``, LAS's
    attained service) is the estimate too unless ``true_size``.
    """
    idx = w.act()
    est = w.est_rem[idx].copy()
    sub = World(
        gpus=w.gpus, app_id=w.app_id[idx], submit_us=w.submit_us[idx],
        service=(w.service if true_size else w.est_service)[idx].copy(), rem=est,
        est_rem=est.copy(),
        est_service=w.est_service[idx].copy(), demand=w.demand[idx].copy(),
        alloc=w.alloc[idx].copy(), status=w.status[idx].copy(),
        start_us=w.start_us[idx].copy(), end_us=np.full(len(idx), INF, dtype=np.int64),
        cls=w.cls[idx], rows=w.rows[idx], active=list(range(len(idx))),
        seen_sum=w.seen_sum[idx].copy(), seen_cnt=w.seen_cnt[idx].copy(),
        init_demand=w.init_demand[idx], last_us=t_us)
    return sub, idx


def replay(w: World, t_us: int, target: int, policy: Policy,
           next_end: Callable[[World, int], tuple[int, int]] = next_end) -> tuple[int, int]:
    """Predict ``(start_us, end_us)`` of local job ``target`` with no future arrivals.

    Copies only the active jobs (compact arrays), with remaining sizes replaced by their
    estimates, and runs completions until ``target`` ends. ``next_end`` finds each next
    completion (:class:`Hooks`).
    """
    # the authors' snapshot copies sizes as their estimates; their Themis and LAS runs behind
    # Fig. 8 kept the true size (replay_size="true")
    sub, idx = snapshot(w, t_us, policy.replay_size == "true")
    tgt = int(np.flatnonzero(idx == target)[0])
    quantum = policy.quantum_us
    # Themis leases inside a replay only if asked (Themis.replay_leases); contention is
    # still counted at every replay event
    leases = quantum is not None and policy.replay_leases
    tick = INF  # the authors' snapshot has no pending re-division tick
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


class _HeapEnd:
    """An end event that, like the authors' old ``Event``, compares by time only."""

    __slots__ = ("t", "j")

    def __init__(self, t: int, j: int):
        self.t, self.j = t, j

    def __lt__(self, other: "_HeapEnd") -> bool:
        return self.t < other.t


def next_end_heap(w: World, t_us: int) -> tuple[int, int]:
    """:func:`next_end` with equal times resolved as the authors' old event heap did.

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
    heap = [_HeapEnd(t_us if rem[k] == 0 else ends[j], j)
            for k, j in enumerate(idx.tolist()) if rem[k] == 0 or al[k] != 0]
    if not heap:
        return INF, -1
    heapq.heapify(heap)
    return int(heap[0].t), int(heap[0].j)


def coin_replay(rng) -> Callable[[World, int, int, Policy], tuple[int, int]]:
    """The authors' old in-process predictor, as a ``Hooks.replay``.

    Before each replay it draws one ``rng.uniform()`` (the old "predict this arrival?"
    coin, always true below 5000 apps); the replay copies the snapshot as :func:`replay`,
    runs completions in :func:`next_end_heap` order and re-divides once more at the target's
    own completion before it stops (this moves a randomised policy's stream).
    """

    def predictor(w: World, t_us: int, target: int, policy: Policy) -> tuple[int, int]:
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
        The earliest projected completion (``(INF, -1)``: none); default :func:`next_end`.
        Used by the main loop and by the default ``replay``.
    replay : callable ``(world, t_us, target, policy) -> (start_us, end_us)``, optional
        The predictor, run right after each arrival is handled; default :func:`replay`
        (with ``next_end`` above). Building blocks: :func:`snapshot`, :func:`advance`,
        :func:`finish`, :func:`apply_allocation`.

    Examples
    --------
    >>> from schedlab.pcs.workload import Workload
    >>> from schedlab.pcs.policies import make_policy
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
    replay: Callable[[World, int, int, Policy], tuple[int, int]] | None = None

    def resolved(self) -> tuple[Callable, Callable]:
        """``(next_end, replay)`` with the library's defaults filled in."""
        find_end = self.next_end or next_end
        if self.replay is not None:
            return find_end, self.replay
        return find_end, lambda w, t_us, target, pol: replay(w, t_us, target, pol, find_end)


log = logging.getLogger("schedlab.pcs")


def choose_engine(policy: Policy, notify: Callable[[str], None] | None = None) -> str:
    """``"fast"`` if the compiled engine has a kernel for ``policy``, else ``"reference"``
    after a one-line notice naming the policy: ``notify(message)``, by default a WARNING on
    the ``schedlab.pcs`` logger (the CLI prints it to stderr).

    >>> from schedlab.pcs.policies import make_policy
    >>> choose_engine(make_policy("FIFO"))
    'fast'
    """
    if not isinstance(policy, Policy):
        raise TypeError(f"{policy!r} is not a schedlab.pcs.policies.Policy (subclass it and "
                        "implement allocate(world))")
    if _randomised_afs_loop(policy):
        return "fast"
    try:
        policy.kernel()
    except NoKernelError:
        (notify or log.warning)(f"policy {policy.name!r} ({type(policy).__name__}) has no compiled "
                                "kernel: running on the reference engine")
        return "reference"
    return "fast"


def _randomised_afs_loop(policy: Policy) -> bool:
    """Whether ``policy`` runs on the compiled loop of :mod:`schedlab.pcs._engine_rafs`: a
    :class:`~schedlab.pcs.policies.RandomisedAFS` drawing from a legacy ``RandomState`` on
    MT19937 (the stream that loop emulates word for word)."""
    from schedlab.pcs.policies import RandomisedAFS

    return (isinstance(policy, RandomisedAFS) and isinstance(policy.rng, np.random.RandomState)
            and policy.rng.get_state(legacy=False)["bit_generator"] == "MT19937")


def prediction_mask(n: int, predict: bool, predict_sample: int | None,
                    rng: np.random.Generator | None) -> np.ndarray:
    """Which of ``n`` arrivals the predictor runs for (uint8 flags, arrival order).

    >>> prediction_mask(4, True, None, None).tolist()
    [1, 1, 1, 1]
    >>> int(prediction_mask(10_000, True, 500, np.random.default_rng(0)).sum())
    503
    """
    if predict_sample is None:
        return np.full(n, 1 if predict else 0, dtype=np.uint8)
    if not predict:
        raise ValueError("predict_sample only applies with predict=True")
    if int(predict_sample) < 1:
        raise ValueError(f"predict_sample = {predict_sample}: expected a positive number of "
                         "arrivals to predict")
    if rng is None:
        raise ValueError("predict_sample needs an explicit numpy.random.Generator (rng)")
    p = min(int(predict_sample) / n, 1.0)
    if p >= 1.0:  # the authors' coin is always true below predict_sample apps
        return np.ones(n, dtype=np.uint8)
    return (rng.random(n) < p).astype(np.uint8)


def _checked_inputs(workload: Workload, gpus: int, predict: bool, p_error: float | None,
                    rng: np.random.Generator | None,
                    predict_sample: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Validate :func:`simulate`'s arguments (non-empty ``workload``); return the prediction
    mask and the per-job size-error factors (``None``: no error), drawn from ``rng``."""
    n = len(workload)
    if int(workload.demand.max(initial=0)) <= 0:
        raise SimulationError("no job demands a GPU")
    if int(gpus) < 1:
        raise SimulationError(f"gpus = {gpus}: the cluster needs at least 1 GPU")
    if p_error is not None and not (np.isfinite(p_error) and 0 <= p_error < 100):
        raise ValueError(f"p_error = {p_error}: expected a job-size error in percent, "
                         "0 <= p_error < 100")
    if p_error and not predict:
        # the authors apply the size error only inside their predictor set-up; refusing
        # here avoids a silently error-free run
        raise ValueError("p_error only applies with predict=True (as in the authors' code)")
    err = None
    if p_error and predict:
        if rng is None:
            raise ValueError("p_error needs an explicit numpy.random.Generator (rng)")
        # one factor per job in arrival order (the authors draw it at the job's arrival)
        err = 1.0 + rng.uniform(-p_error / 100.0, p_error / 100.0, size=n)
    return prediction_mask(n, predict, predict_sample, rng), err


def simulate(workload: Workload, policy: Policy, gpus: int = 64, *, predict: bool = False,
             p_error: float | None = None, rng: np.random.Generator | None = None,
             predict_sample: int | None = None, progress: bool = False,
             engine: str = "auto", hooks: Hooks | None = None) -> pd.DataFrame:
    """Run ``workload`` under ``policy`` on ``gpus`` GPUs; one output row per job.

    Parameters
    ----------
    workload : Workload
    policy : Policy
        ``allocate(world) -> allocation`` (see :mod:`schedlab.pcs.policies`); the fast
        engine runs its :meth:`~schedlab.pcs.policies.Policy.kernel`.
    gpus : int
        Cluster size.
    predict : bool
        Run the predictor at every arrival (``estimated_*`` columns; ``-1`` otherwise).
    p_error : float, optional
        Job-size estimation error in percent, ``0 <= p_error < 100`` (needs
        ``predict=True`` and ``rng``).
    rng : numpy.random.Generator, optional
        Source of the per-job error factors, then of the ``predict_sample`` draws.
    predict_sample : int, optional
        Predict only a random subset of arrivals, as the authors did on long traces: each
        arrival is predicted with probability ``min(predict_sample / len(workload), 1)``
        (their ``p_of_estimate = min(5000/len(app_list), 1)``, drawn per arrival from
        Python's unseeded ``random``; here one ``rng.random(n)`` vector after the error
        factors). Unpredicted jobs keep ``-1`` estimates, which the metrics skip. Needs
        ``predict=True`` and ``rng``; ``None`` (default): every arrival.
    progress : bool
        Show a tqdm bar over events (reference engine only).
    engine : {"auto", "fast", "reference"}
        ``"fast"``: the compiled engine (:mod:`schedlab.pcs._engine`), for policies with a
        :meth:`~schedlab.pcs.policies.Policy.kernel` (else :class:`NoKernelError`);
        ``"reference"``: the readable pure-Python/numpy loop below. Both give identical
        outputs (tested). ``"auto"`` (default): ``"fast"`` when the policy has a kernel,
        else ``"reference"`` with a one-line notice (logger ``schedlab.pcs``, level
        WARNING) -- a user's own policy runs without further ado.
    hooks : Hooks, optional
        Replace the reference engine's next-completion rule and predictor (reference
        engine only; ``"auto"`` with hooks is an error, as with ``"fast"``). Default: the
        policy's :meth:`~schedlab.pcs.policies.Policy.reference_hooks`, else the library's.

    Returns
    -------
    pandas.DataFrame
        The authors' columns (:data:`OUTPUT_COLUMNS`), seconds since the first arrival,
        rows in ``app_id`` order.
    """
    if len(workload) == 0:
        return pd.DataFrame(columns=OUTPUT_COLUMNS)
    mask, err = _checked_inputs(workload, gpus, predict, p_error, rng, predict_sample)
    if engine not in ("auto", "fast", "reference"):
        raise ValueError(f"unknown engine {engine!r}; use 'auto', 'fast' or 'reference'")
    if engine != "reference" and hooks is not None:
        raise ValueError("hooks replace steps of the reference engine: pass "
                         "engine='reference'")
    if engine == "auto":
        engine = choose_engine(policy)
    if engine == "fast" and _randomised_afs_loop(policy):
        return _simulate_randomised_afs(workload, policy, gpus, mask, err)
    if engine == "fast":
        return _simulate_fast(workload, policy, gpus, mask, err)
    if hooks is None:
        hooks = policy.reference_hooks() if isinstance(policy, Policy) else None
    find_end, predictor = (hooks or Hooks()).resolved()
    n = len(workload)
    service = workload.service.astype(float)
    w = World(
        gpus=int(gpus), app_id=np.arange(n), submit_us=workload.submit_us.copy(),
        service=service.copy(), rem=service.copy(), est_rem=service.copy(),
        est_service=service.copy(), demand=workload.demand.astype(np.int64).copy(),
        alloc=np.zeros(n), status=np.zeros(n, dtype=np.int8),
        start_us=np.full(n, INF, dtype=np.int64), end_us=np.full(n, INF, dtype=np.int64),
        cls=np.zeros(n, dtype=np.int64), rows=workload.rows(), active=[])
    w.init_demand = w.demand.copy()
    w.seen_sum = np.zeros(n, dtype=np.int64)
    w.seen_cnt = np.zeros(n, dtype=np.int64)
    est_start = np.full(n, -1, dtype=np.int64)
    est_end = np.full(n, -1, dtype=np.int64)
    heap: list = [(int(t), 2, i, i) for i, t in enumerate(workload.submit_us)]
    heapq.heapify(heap)
    quantum = policy.quantum_us
    version = 0
    tick_version = 0
    done = 0
    bar = None
    if progress:
        from schedlab.progress import bar as progress_bar

        bar = progress_bar(total=n, desc=policy.name, unit="job")
    policy.reset(w)
    while heap:
        t_us, kind, seq, i = heapq.heappop(heap)
        if (kind == 0 and seq != version) or (kind == 1 and seq != tick_version):
            continue  # stale completion / tick
        advance(w, t_us, err)
        if kind == 2:
            w.active.append(i)
            w.status[i] = SUBMITTED
            w.seen_sum[i] = len(w.active)
            w.seen_cnt[i] = 1
            if err is not None:
                e = max(w.rem[i] * err[i], 1e-2)
                w.est_rem[i] = w.est_service[i] = e
            policy.on_arrival(w, i)
        elif kind == 0:
            finish(w, i, t_us)
            done += 1
            if bar is not None:
                bar.update(1)
        if quantum is not None:
            # every event re-arms the tick; with no active job ticks change nothing
            tick_version += 1
            if w.active:
                heapq.heappush(heap, (t_us + quantum, 1, tick_version, -1))
        policy.now_us = t_us
        apply_allocation(w, t_us, policy)
        t_end, j = find_end(w, t_us)
        version += 1
        if j >= 0 and t_end != INF:
            heapq.heappush(heap, (t_end, 0, version, j))
        elif w.active and not heap:
            raise SimulationError(f"{len(w.active)} active jobs can never finish "
                                  "(cluster too small?)")
        if kind == 2 and mask[i]:
            est_start[i], est_end[i] = predictor(w, t_us, i, policy)
    if bar is not None:
        bar.close()
    if done != n:
        raise SimulationError(f"only {done} of {n} jobs finished")
    return _output(workload, gpus, w.submit_us, w.start_us, w.end_us, est_start, est_end,
                   w.seen_sum, w.seen_cnt, w.init_demand)


def _output(workload, gpus, submit_us, start_us, end_us, est_start, est_end, seen_sum,
            seen_cnt, init_demand) -> pd.DataFrame:
    n = len(workload)
    diff = seen_sum / seen_cnt
    # the authors' fair finish time: size / min(G / mean contention, initial demand)
    fair_act = workload.service / np.minimum(gpus / diff, init_demand)
    to_s = lambda a: np.where(a == -1, -1.0, a / 1e6)  # noqa: E731
    return pd.DataFrame({
        "app_id": np.arange(n), "submit_time": submit_us / 1e6,
        "start_time": start_us / 1e6, "end_time": end_us / 1e6,
        "estimated_start_time": to_s(est_start), "estimated_end_time": to_s(est_end),
        "fair_act": fair_act, "service": workload.service, "num_apps_seen_diff": diff})


#: events processed by the last fast run: [main-loop events, predictor-replay events]
LAST_EVENT_COUNTS = [0, 0]


def _simulate_fast(workload: Workload, policy: Policy, gpus: int, mask: np.ndarray,
                   err: np.ndarray | None, fifo_window: bool = True,
                   kernels: Any = None) -> pd.DataFrame:
    """The compiled engine's run. ``kernels``: the module of compiled loops (default
    :mod:`schedlab.pcs._engine`; ``benchmarks/bench_pcs_replay.py`` passes an older one to
    time both side by side)."""
    from schedlab.pcs import _engine

    E = _engine if kernels is None else kernels

    if not isinstance(policy, Policy):
        raise TypeError(f"{policy!r} is not a schedlab.pcs.policies.Policy: the compiled "
                        "engine runs policies through Policy.kernel(); use engine='reference'")
    spec = policy.kernel()  # NoKernelError (naming the policy) if it has no compiled code
    n = len(workload)
    F, I = _engine_arrays(workload, err)
    init_demand = workload.demand.astype(np.int64).copy()
    num, den = _class_weights(spec, gpus, int(workload.demand.sum()) + 1)
    est_start = np.full(n, -1, dtype=np.int64)
    est_end = np.full(n, -1, dtype=np.int64)
    counters = np.zeros(2, dtype=np.int64)
    rc = E.run(F, I, workload.rows(), E.CODES[spec.code], int(gpus), mask,
               err is not None, np.asarray(spec.thresholds, dtype=float), num, den,
               float(spec.zeta_min), float(spec.delta), E.new_cache(), est_start, est_end,
               counters, int(spec.quantum_us), bool(spec.speedup_valuation),
               bool(spec.replay_true_size), bool(spec.replay_leases), fifo_window)
    LAST_EVENT_COUNTS[:] = counters.tolist()
    if rc == -1:
        raise SimulationError("some active jobs can never finish (cluster too small?)")
    if rc == -2:
        raise SimulationError("a job completed with remaining work > 0.01")
    if (est_end[mask.astype(bool)] == -1).any():
        raise SimulationError("a prediction never completes")
    return _output(workload, gpus, I[E.SUB], I[E.START], I[E.ENDT], est_start, est_end,
                   I[E.SEENS], I[E.SEENC], init_demand)


def simulate_randomised_afs(workload: Workload, policy: Policy, gpus: int = 64, *,
                            predict: bool = False, p_error: float | None = None,
                            rng: np.random.Generator | None = None,
                            predict_sample: int | None = None) -> pd.DataFrame:
    """:class:`~schedlab.pcs.policies.RandomisedAFS` on the compiled loop
    (:mod:`schedlab.pcs._engine_rafs`): the same outputs as ``simulate(workload, policy,
    gpus, ..., engine="reference")`` job by job, and ``policy.rng`` left in the same state
    (tested), some 45 times faster (``benchmarks/bench_pcs_afs.py``).

    ``simulate(..., engine="auto" | "fast")`` runs such a policy here too. It is a loop of its
    own, not a :class:`~schedlab.pcs.policies.KernelSpec` of the general engine: the policy's
    stream is a legacy ``RandomState`` that the loop emulates word for word, and the old
    simulator's heap ties and coin replays come with it.

    Parameters
    ----------
    workload, gpus, predict, p_error, rng, predict_sample
        As :func:`simulate` (``rng`` is the size-error stream, not the policy's).
    policy : RandomisedAFS
        Its ``rng`` must be a ``numpy.random.RandomState`` on MT19937 (else
        :class:`TypeError`; a ``Generator`` runs on ``simulate(..., engine="reference")``).

    Returns
    -------
    pandas.DataFrame
        As :func:`simulate`.
    """
    from schedlab.pcs.policies import RandomisedAFS

    if not isinstance(policy, RandomisedAFS):
        raise TypeError(f"{policy!r} is not a RandomisedAFS; use simulate()")
    if len(workload) == 0:
        return pd.DataFrame(columns=OUTPUT_COLUMNS)
    mask, err = _checked_inputs(workload, gpus, predict, p_error, rng, predict_sample)
    return _simulate_randomised_afs(workload, policy, gpus, mask, err)


def _simulate_randomised_afs(workload: Workload, policy: Policy, gpus: int, mask: np.ndarray,
                             err: np.ndarray | None) -> pd.DataFrame:
    """:func:`simulate_randomised_afs` after the argument checks (shared with :func:`simulate`)."""
    from schedlab.pcs import _engine as E
    from schedlab.pcs import _engine_rafs as R

    mt, state = R.mt_from_randomstate(policy.rng)
    n = len(workload)
    F, I = _engine_arrays(workload, err)
    est_start = np.full(n, -1, dtype=np.int64)
    est_end = np.full(n, -1, dtype=np.int64)
    counters = np.zeros(2, dtype=np.int64)
    rc = R.run(F, I, workload.rows(), int(gpus), mask, err is not None, mt, est_start,
               est_end, counters)
    # hand the stream back even on failure: the reference run has drawn as far by then
    R.mt_to_randomstate(policy.rng, mt, state)
    LAST_EVENT_COUNTS[:] = counters.tolist()
    if rc != 0:
        raise SimulationError(R.ERRORS[rc])
    return _output(workload, gpus, I[E.SUB], I[E.START], I[E.ENDT], est_start, est_end,
                   I[E.SEENS], I[E.SEENC], workload.demand.astype(np.int64).copy())


def _engine_arrays(workload: Workload,
                   err: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The compiled engines' per-job state: float fields ``F`` and int fields ``I``
    (rows named in :mod:`schedlab.pcs._engine`), as at the start of a run."""
    from schedlab.pcs import _engine as E

    n = len(workload)
    F = np.zeros((E.NF, n))
    I = np.zeros((E.NI, n), dtype=np.int64)
    svc = workload.service.astype(float)
    for f in (E.SVC, E.REM, E.EREM, E.ESVC):
        F[f] = svc
    F[E.ERR] = 1.0 if err is None else err
    I[E.SUB] = workload.submit_us
    I[E.DEM] = workload.demand
    I[E.START] = INF
    I[E.ENDT] = INF
    I[E.AID] = np.arange(n)
    I[E.INITD] = workload.demand
    return F, I


def _class_weights(spec: KernelSpec, gpus: int,
                   demand_bound: int) -> tuple[np.ndarray, np.ndarray]:
    """WFQ class weights for the compiled loop: exact integers ``P`` (``den = 0`` marks them)
    when every product ``L * allocation`` stays below 2**53, else numerators/denominators."""
    from schedlab.pcs import _engine as E

    num = np.array([Fraction(r).numerator for r in spec.rates], dtype=np.int64)
    den = np.array([Fraction(r).denominator for r in spec.rates], dtype=np.int64)
    if spec.code != "WFQ":
        return num, den
    P, L = E.integer_weights(num, den)
    if L * max(int(gpus), demand_bound) < 2**53:
        # exact integer closed form in the compiled loop (den[0] = 0 marks it)
        return P, np.zeros_like(den)
    return num, den


def fig8_afs_run(seed: int, num_apps: int = 3000, *, load: float = 1.2, gpus: int = 64,
                 workload: str = "gavel", predict: bool = True,
                 engine: str = "fast") -> pd.DataFrame:
    """AFS as the authors' stored workload-3 run of ``seed`` (Fig. 8): per-job outputs.

    The workload is ``generate(workload, num_apps, authors_rng(seed), load=load,
    gpus=gpus)`` and :class:`~schedlab.pcs.policies.RandomisedAFS` continues that same
    stream, as the authors' code did. With the defaults this equals
    ``artifact_runs/workload3_gavel_load1.2_5seeds/AFS_64_1.2_gavel-contsingle_<seed>`` job
    by job.

    Parameters
    ----------
    seed, num_apps, load, gpus, workload, predict
        The run (see above).
    engine : {"fast", "reference"}
        ``"fast"`` (default): :func:`simulate_randomised_afs`, about 4 s for 3000 jobs;
        ``"reference"``: the readable specification, ``simulate(..., engine="reference")``
        (about 3 minutes). Identical outputs.
    """
    from schedlab.pcs.generators import authors_rng, generate
    from schedlab.pcs.policies import RandomisedAFS

    if engine not in ("fast", "reference"):
        raise ValueError(f"unknown engine {engine!r}; use 'fast' or 'reference'")
    rng = authors_rng(seed)
    w = generate(workload, num_apps, rng, load=load, gpus=gpus)  # leaves rng where theirs was
    if engine == "fast":
        return simulate_randomised_afs(w, RandomisedAFS(rng), gpus, predict=predict)
    return simulate(w, RandomisedAFS(rng), gpus, predict=predict, engine="reference")
