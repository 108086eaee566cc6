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
  what happens after it ends, so stopping there gives identical numbers). Themis and LAS
  replays follow the policy's ``replay_size`` (estimated remaining, true, or attained +
  estimated remaining size), Themis's also ``replay_leases`` and ``replay_pending_tick``
  (lease ticks inside the replay; whether the main loop's pending tick carries over): each
  variant reproduces one version of the authors' code, see
  :class:`~schedlab.pcs.policies.Themis`.
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
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np
import pandas as pd

from schedlab.pcs.generators import authors_rng, generate
from schedlab.pcs.hooks import Hooks
from schedlab.pcs.policies import NoKernelError, Policy, RandomisedAFS
from schedlab.pcs.workload import Workload

# the reference engine's state and steps, importable from here as before (public API of
# ``hooks``: a user's Hooks are built from them)
from schedlab.pcs.world import (
    ACTIVE,
    ARRIVAL,
    COMPLETION,
    END,
    INF,
    NEVER_S,
    PREEMPTED,
    QUEUED,
    SUBMITTED,
    TICK,
    SimulationError,
    World,
    advance,
    apply_allocation,
    finish,
    next_end,
    replay,
    snapshot,
)

if TYPE_CHECKING:  # annotations only: numba is imported when a compiled run starts
    from schedlab.pcs._engine import EngineArgs

__all__ = [
    "ACTIVE",
    "ARRIVAL",
    "COMPLETION",
    "END",
    "EventCounts",
    "Hooks",
    "INF",
    "NEVER_S",
    "OUTPUT_COLUMNS",
    "PREEMPTED",
    "QUEUED",
    "SUBMITTED",
    "SimulationError",
    "TICK",
    "World",
    "advance",
    "apply_allocation",
    "choose_engine",
    "fig8_afs_run",
    "finish",
    "next_end",
    "prediction_mask",
    "replay",
    "simulate",
    "simulate_counted",
    "simulate_randomised_afs",
    "snapshot",
]

OUTPUT_COLUMNS = [
    "app_id",
    "submit_time",
    "start_time",
    "end_time",
    "estimated_start_time",
    "estimated_end_time",
    "fair_act",
    "service",
    "num_apps_seen_diff",
]


class EventCounts(NamedTuple):
    """Events one compiled run processed (:func:`simulate_counted`).

    >>> EventCounts(main=10, replay=32).total
    42
    """

    main: int  #: main-loop events (arrivals, completions, lease ticks)
    replay: int  #: predictor-replay events

    @property
    def total(self) -> int:
        """Main-loop plus replay events."""
        return self.main + self.replay


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
        raise TypeError(
            f"{policy!r} is not a schedlab.pcs.policies.Policy (subclass it and implement allocate(world))"
        )
    if _randomised_afs_loop(policy):
        return "fast"
    try:
        policy.kernel()
    except NoKernelError:
        (notify or log.warning)(
            f"policy {policy.name!r} ({type(policy).__name__}) has no compiled "
            "kernel: running on the reference engine"
        )
        return "reference"
    return "fast"


def _randomised_afs_loop(policy: Policy) -> bool:
    """Whether ``policy`` runs on the compiled loop of :mod:`schedlab.pcs._engine_rafs`: a
    :class:`~schedlab.pcs.policies.RandomisedAFS` drawing from a legacy ``RandomState`` on
    MT19937 (the stream that loop emulates word for word)."""
    return (
        isinstance(policy, RandomisedAFS)
        and isinstance(policy.rng, np.random.RandomState)
        and policy.rng.get_state(legacy=False)["bit_generator"] == "MT19937"
    )


def prediction_mask(
    n: int, predict: bool, predict_sample: int | None, rng: np.random.Generator | None
) -> np.ndarray:
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
        raise ValueError(
            f"predict_sample = {predict_sample}: expected a positive number of arrivals to predict"
        )
    if rng is None:
        raise ValueError("predict_sample needs an explicit numpy.random.Generator (rng)")
    p = min(int(predict_sample) / n, 1.0)
    if p >= 1.0:  # the authors' coin is always true below predict_sample apps
        return np.ones(n, dtype=np.uint8)
    return (rng.random(n) < p).astype(np.uint8)


def _checked_inputs(
    workload: Workload,
    gpus: int,
    predict: bool,
    p_error: float | None,
    rng: np.random.Generator | None,
    predict_sample: int | None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Validate :func:`simulate`'s arguments (non-empty ``workload``); return the prediction
    mask and the per-job size-error factors (``None``: no error), drawn from ``rng``."""
    n = len(workload)
    if int(workload.demand.max(initial=0)) <= 0:
        raise SimulationError("no job demands a GPU")
    if int(gpus) < 1:
        raise SimulationError(f"gpus = {gpus}: the cluster needs at least 1 GPU")
    if p_error is not None and not (np.isfinite(p_error) and 0 <= p_error < 100):
        raise ValueError(f"p_error = {p_error}: expected a job-size error in percent, 0 <= p_error < 100")
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


def simulate(
    workload: Workload,
    policy: Policy,
    gpus: int = 64,
    *,
    predict: bool = False,
    p_error: float | None = None,
    rng: np.random.Generator | None = None,
    predict_sample: int | None = None,
    progress: bool = False,
    engine: str = "auto",
    hooks: Hooks | None = None,
) -> pd.DataFrame:
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
        raise ValueError("hooks replace steps of the reference engine: pass engine='reference'")
    if engine == "auto":
        engine = choose_engine(policy)
    if engine == "fast":
        return _simulate_compiled(workload, policy, gpus, mask, err)[0]
    return _simulate_reference(workload, policy, gpus, mask, err, hooks, progress)


def simulate_counted(
    workload: Workload,
    policy: Policy,
    gpus: int = 64,
    *,
    predict: bool = False,
    p_error: float | None = None,
    rng: np.random.Generator | None = None,
    predict_sample: int | None = None,
) -> tuple[pd.DataFrame, EventCounts]:
    """:func:`simulate` on the compiled engine, with the events it processed.

    Parameters
    ----------
    workload, policy, gpus, predict, p_error, rng, predict_sample
        As :func:`simulate`; the policy must run on a compiled engine (a
        :meth:`~schedlab.pcs.policies.Policy.kernel`, or a
        :class:`~schedlab.pcs.policies.RandomisedAFS` on a ``RandomState``), else
        :class:`~schedlab.pcs.policies.NoKernelError`.

    Returns
    -------
    tuple of pandas.DataFrame and EventCounts
        The outputs (as :func:`simulate`'s) and the main-loop and predictor-replay events.

    Examples
    --------
    >>> from schedlab.pcs.policies import make_policy
    >>> w = Workload.from_arrays(submit_s=[0, 1], service=[4.0, 2.0], demand=[1, 1])
    >>> out, events = simulate_counted(w, make_policy("FIFO"), 1, predict=True)
    >>> out["end_time"].tolist(), events
    ([4.0, 6.0], EventCounts(main=4, replay=3))
    """
    if len(workload) == 0:
        return pd.DataFrame(columns=OUTPUT_COLUMNS), EventCounts(0, 0)
    mask, err = _checked_inputs(workload, gpus, predict, p_error, rng, predict_sample)
    return _simulate_compiled(workload, policy, gpus, mask, err)


def _simulate_compiled(
    workload: Workload, policy: Policy, gpus: int, mask: np.ndarray, err: np.ndarray | None
) -> tuple[pd.DataFrame, EventCounts]:
    """The compiled engine that runs ``policy``: the randomised-AFS loop or the general one."""
    if _randomised_afs_loop(policy):
        return _simulate_randomised_afs(workload, policy, gpus, mask, err)
    return _simulate_fast(workload, policy, gpus, mask, err)


def _simulate_reference(
    workload: Workload,
    policy: Policy,
    gpus: int,
    mask: np.ndarray,
    err: np.ndarray | None,
    hooks: Hooks | None,
    progress: bool,
) -> pd.DataFrame:
    """The reference engine's event loop (:func:`simulate` after its checks)."""
    if hooks is None:
        hooks = policy.reference_hooks() if isinstance(policy, Policy) else None
    find_end, predictor = (hooks or Hooks()).resolved()
    n = len(workload)
    service = workload.service.astype(float)
    w = World(
        gpus=int(gpus),
        app_id=np.arange(n),
        submit_us=workload.submit_us.copy(),
        service=service.copy(),
        rem=service.copy(),
        est_rem=service.copy(),
        est_service=service.copy(),
        demand=workload.demand.astype(np.int64).copy(),
        alloc=np.zeros(n),
        status=np.zeros(n, dtype=np.int8),
        start_us=np.full(n, INF, dtype=np.int64),
        end_us=np.full(n, INF, dtype=np.int64),
        cls=np.zeros(n, dtype=np.int64),
        rows=workload.rows(),
        active=[],
    )
    w.init_demand = w.demand.copy()
    w.seen_sum = np.zeros(n, dtype=np.int64)
    w.seen_cnt = np.zeros(n, dtype=np.int64)
    est_start = np.full(n, -1, dtype=np.int64)
    est_end = np.full(n, -1, dtype=np.int64)
    heap: list = [(int(t), ARRIVAL, i, i) for i, t in enumerate(workload.submit_us)]
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
        if (kind == COMPLETION and seq != version) or (kind == TICK and seq != tick_version):
            continue  # stale completion / tick
        advance(w, t_us, err)
        if kind == ARRIVAL:
            w.active.append(i)
            w.status[i] = SUBMITTED
            w.seen_sum[i] = len(w.active)
            w.seen_cnt[i] = 1
            if err is not None:
                e = max(w.rem[i] * err[i], 1e-2)
                w.est_rem[i] = w.est_service[i] = e
            policy.on_arrival(w, i)
        elif kind == COMPLETION:
            finish(w, i, t_us)
            done += 1
            if bar is not None:
                bar.update(1)
        if quantum is not None:
            # every event re-arms the tick; with no active job ticks change nothing
            tick_version += 1
            if w.active:
                heapq.heappush(heap, (t_us + quantum, TICK, tick_version, -1))
        policy.now_us = t_us
        apply_allocation(w, t_us, policy)
        t_end, j = find_end(w, t_us)
        version += 1
        if j >= 0 and t_end != INF:
            heapq.heappush(heap, (t_end, COMPLETION, version, j))
        elif w.active and not heap:
            raise SimulationError(f"{len(w.active)} active jobs can never finish (cluster too small?)")
        if kind == ARRIVAL and mask[i]:
            est_start[i], est_end[i] = predictor(w, t_us, i, policy)
    if bar is not None:
        bar.close()
    if done != n:
        raise SimulationError(f"only {done} of {n} jobs finished")
    return _output(
        workload,
        gpus,
        w.submit_us,
        w.start_us,
        w.end_us,
        est_start,
        est_end,
        w.seen_sum,
        w.seen_cnt,
        w.init_demand,
    )


def _output(
    workload, gpus, submit_us, start_us, end_us, est_start, est_end, seen_sum, seen_cnt, init_demand
) -> pd.DataFrame:
    n = len(workload)
    diff = seen_sum / seen_cnt
    # the authors' fair finish time: size / min(G / mean contention, initial demand)
    fair_act = workload.service / np.minimum(gpus / diff, init_demand)
    to_s = lambda a: np.where(a == -1, -1.0, a / 1e6)  # noqa: E731
    return pd.DataFrame(
        {
            "app_id": np.arange(n),
            "submit_time": submit_us / 1e6,
            "start_time": start_us / 1e6,
            "end_time": end_us / 1e6,
            "estimated_start_time": to_s(est_start),
            "estimated_end_time": to_s(est_end),
            "fair_act": fair_act,
            "service": workload.service,
            "num_apps_seen_diff": diff,
        }
    )


def _simulate_fast(
    workload: Workload,
    policy: Policy,
    gpus: int,
    mask: np.ndarray,
    err: np.ndarray | None,
    fifo_window: bool = True,
    runner: Callable[[EngineArgs], int] | None = None,
) -> tuple[pd.DataFrame, EventCounts]:
    """The general compiled engine's run: outputs and event counts. ``runner``: what runs
    the bundle (default :func:`schedlab.pcs._engine.run`; ``benchmarks/bench_pcs_replay.py``
    passes an older commit's loop to time both side by side)."""
    # imported here, not at the top: numba loads only when a compiled run starts
    from schedlab.pcs import _engine as E
    from schedlab.pcs._engine_core import ENDT, ERRORS, OK, SEENC, SEENS, START, SUB

    if not isinstance(policy, Policy):
        raise TypeError(
            f"{policy!r} is not a schedlab.pcs.policies.Policy: the compiled "
            "engine runs policies through Policy.kernel(); use engine='reference'"
        )
    spec = policy.kernel()  # NoKernelError (naming the policy) if it has no compiled code
    args = E.engine_args(workload, spec, gpus, mask, err, fifo_window)
    rc = (runner or E.run)(args)
    if rc != OK:
        raise SimulationError(ERRORS[rc])
    I = args.I
    out = _output(
        workload,
        gpus,
        I[SUB],
        I[START],
        I[ENDT],
        args.est_start,
        args.est_end,
        I[SEENS],
        I[SEENC],
        workload.demand.astype(np.int64).copy(),
    )
    return out, EventCounts(*(int(c) for c in args.counters))


def simulate_randomised_afs(
    workload: Workload,
    policy: Policy,
    gpus: int = 64,
    *,
    predict: bool = False,
    p_error: float | None = None,
    rng: np.random.Generator | None = None,
    predict_sample: int | None = None,
) -> pd.DataFrame:
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
    if not isinstance(policy, RandomisedAFS):
        raise TypeError(f"{policy!r} is not a RandomisedAFS; use simulate()")
    if len(workload) == 0:
        return pd.DataFrame(columns=OUTPUT_COLUMNS)
    mask, err = _checked_inputs(workload, gpus, predict, p_error, rng, predict_sample)
    return _simulate_randomised_afs(workload, policy, gpus, mask, err)[0]


def _simulate_randomised_afs(
    workload: Workload, policy: Policy, gpus: int, mask: np.ndarray, err: np.ndarray | None
) -> tuple[pd.DataFrame, EventCounts]:
    """:func:`simulate_randomised_afs` after the argument checks (shared with :func:`simulate`)."""
    # imported here, not at the top: numba loads only when a compiled run starts
    from schedlab.pcs import _engine_rafs as R
    from schedlab.pcs._engine import engine_arrays
    from schedlab.pcs._engine_core import ENDT, ERRORS, OK, SEENC, SEENS, START, SUB

    mt, state = R.mt_from_randomstate(policy.rng)
    n = len(workload)
    F, I = engine_arrays(workload, err)
    est_start = np.full(n, -1, dtype=np.int64)
    est_end = np.full(n, -1, dtype=np.int64)
    counters = np.zeros(2, dtype=np.int64)
    rc = R.run(F, I, workload.rows(), int(gpus), mask, err is not None, mt, est_start, est_end, counters)
    # hand the stream back even on failure: the reference run has drawn as far by then
    R.mt_to_randomstate(policy.rng, mt, state)
    if rc != OK:
        raise SimulationError(ERRORS[rc])
    out = _output(
        workload,
        gpus,
        I[SUB],
        I[START],
        I[ENDT],
        est_start,
        est_end,
        I[SEENS],
        I[SEENC],
        workload.demand.astype(np.int64).copy(),
    )
    return out, EventCounts(*(int(c) for c in counters))


def fig8_afs_run(
    seed: int,
    num_apps: int = 3000,
    *,
    load: float = 1.2,
    gpus: int = 64,
    workload: str = "gavel",
    predict: bool = True,
    engine: str = "fast",
) -> pd.DataFrame:
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
    if engine not in ("fast", "reference"):
        raise ValueError(f"unknown engine {engine!r}; use 'fast' or 'reference'")
    rng = authors_rng(seed)
    w = generate(workload, num_apps, rng, load=load, gpus=gpus)  # leaves rng where theirs was
    if engine == "fast":
        return simulate_randomised_afs(w, RandomisedAFS(rng), gpus, predict=predict)
    return simulate(w, RandomisedAFS(rng), gpus, predict=predict, engine="reference")
