"""Compiled event engine (numba): the same semantics as :mod:`schedlab.pcs.sim`, fast.

:mod:`schedlab.pcs.sim` is the readable reference (one ``heapq``, numpy arrays, policy
objects). This module runs the identical arithmetic in a compiled main loop (:func:`_run`)
over the core's per-job arrays and steps (:mod:`schedlab.pcs._engine_core`); policies are
selected by a code: each policy hands its code, parameters and variant flags over in one
:class:`~schedlab.pcs.policies.KernelSpec` (``Policy.kernel()``), from which
:func:`engine_args` builds one typed bundle (:class:`EngineArgs`) for :func:`run`. The
policy kernels are per family (:mod:`~schedlab.pcs._kernels_simple`,
:mod:`~schedlab.pcs._kernels_wfq`, :mod:`~schedlab.pcs._kernels_themis`, one entry
:mod:`~schedlab.pcs._kernels`), the predictor replays in :mod:`~schedlab.pcs._replay` (generic,
FIFO window) and :mod:`~schedlab.pcs._replay_wfq`.

Because arrivals are pre-sorted and only one completion is ever live, the event queue is the
merge of an arrival pointer with that single completion candidate and the lease tick
(completion first at equal times) — the same order the reference heap produces. Tests check
both engines against each other and against the authors' per-job files.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit, types
from numba.typed import Dict

from schedlab.pcs._engine_core import refresh_stale_cache
from schedlab.pcs._engine_core import (
    AID,
    ARRIVAL,
    CLS,
    CODES,
    COMPLETION,
    ENDT,
    EREM,
    ERR,
    ESVC,
    FIFO,
    INF,
    INITD,
    LEASES_NONE,
    LEASES_PENDING,
    LEASES_REARM,
    NEVER_FINISHES,
    NF,
    NI,
    OD_ROUNDS,
    OK,
    REM,
    REPLAY_SIZES,
    START,
    SUB,
    SVC,
    THEMIS,
    WFQ,
    WORK_LEFT,
    DEM,
    _arrive,
    _complete,
    _next_end,
    _next_event,
    _progress,
    _work_left,
)
from schedlab.pcs._kernels import _apply
from schedlab.pcs._kernels_themis import new_hint
from schedlab.pcs._kernels_wfq import _wfq_class
from schedlab.pcs._replay import _fifo_window_ok, _replay, _replay_fifo
from schedlab.pcs._replay_wfq import _replay_wfq
from schedlab.pcs.fairshare import integer_weights
from schedlab.pcs.workload import Workload

if TYPE_CHECKING:  # annotations only: the engine does not load the policies
    from schedlab.pcs.policies import KernelSpec


class EngineArgs(NamedTuple):
    """Everything one compiled run needs, typed, in the order of :func:`_run`'s arguments.

    Built by :func:`engine_args`; :func:`run` passes the fields on (numba takes arrays and
    scalars). ``F``, ``I``, ``est_start``, ``est_end`` and ``counters`` are written by the run.
    """

    F: np.ndarray  #: float fields x jobs (:data:`~schedlab.pcs._engine_core.NF` rows)
    I: np.ndarray  #: int fields x jobs (:data:`~schedlab.pcs._engine_core.NI` rows)
    rows: np.ndarray  #: speedup table of each job (jobs x width)
    pcode: int  #: policy code (:data:`~schedlab.pcs._engine_core.CODES`)
    gpus: int  #: cluster size
    predict: np.ndarray  #: uint8 per job (arrival order): predict it at its arrival
    use_err: bool  #: the scheduler sees sizes through ``F[ERR]`` (job-size error)
    thresholds: np.ndarray  #: WFQ class thresholds (GPU-s, last inf)
    rates_num: np.ndarray  #: WFQ weights: numerators, or integer weights P (then den 0)
    rates_den: np.ndarray  #: WFQ weights: denominators (``[0] == 0``: integer weights)
    zeta: float  #: WFQ's demand cap
    delta: float  #: WFQ's relaxation step
    cache: Dict  #: WFQ's class-allocation memo (:func:`new_cache`)
    est_start: np.ndarray  #: out: predicted start (us) per job, -1 if not predicted
    est_end: np.ndarray  #: out: predicted end (us) per job, -1 if not predicted
    counters: np.ndarray  #: out: [main-loop events, predictor-replay events]
    quantum: int  #: lease tick (us; 0: none)
    speedup: bool  #: Themis values time through the speedup table
    replay_size: int  #: what replays keep in ``service`` (``REPLAY_*`` of the core)
    replay_leases: int  #: lease ticks in Themis's replays (``LEASES_*`` of the core)
    fifo_window: bool = True  #: FIFO replays through the window replay (False: generic)
    zero_tol: float = 0.0  #: WFQ: amounts within this of 0 count as 0 (0: exact)


def new_cache() -> Dict:
    """An empty class-allocation cache for :func:`run` (any number of classes)."""
    return Dict.empty(key_type=types.int64, value_type=types.float64[:])


def engine_arrays(workload: Workload, err: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The compiled engines' per-job state: float fields ``F`` and int fields ``I`` (rows
    named in :mod:`schedlab.pcs._engine_core`), as at the start of a run; ``err``: the
    per-job size-error factors (``None``: none)."""
    n = len(workload)
    F = np.zeros((NF, n))
    I = np.zeros((NI, n), dtype=np.int64)
    svc = workload.service.astype(float)
    for f in (SVC, REM, EREM, ESVC):
        F[f] = svc
    F[ERR] = 1.0 if err is None else err
    I[SUB] = workload.submit_us
    I[DEM] = workload.demand
    I[START] = INF
    I[ENDT] = INF
    I[AID] = np.arange(n)
    I[INITD] = workload.demand
    return F, I


def class_weights(spec: KernelSpec, gpus: int, demand_bound: int) -> tuple[np.ndarray, np.ndarray]:
    """WFQ class weights for the compiled loop: exact integers ``P`` (``den = 0`` marks them)
    when every product ``L * allocation`` stays below 2**53, else (or with the authors' zero
    rule, ``spec.zero_tolerance > 0``) numerators/denominators.

    >>> from schedlab.pcs.policies import KernelSpec
    >>> num, den = class_weights(KernelSpec("WFQ", rates=(Fraction(1, 4), Fraction(3, 4))), 64, 100)
    >>> num.tolist(), den.tolist()
    ([1, 3], [0, 0])
    """
    num = np.array([Fraction(r).numerator for r in spec.rates], dtype=np.int64)
    den = np.array([Fraction(r).denominator for r in spec.rates], dtype=np.int64)
    if spec.code != "WFQ" or spec.zero_tolerance > 0:
        # the closed form is exact water-filling only: the zero rule runs in fractions
        return num, den
    P, L = integer_weights(num, den)
    if L * max(int(gpus), demand_bound) < 2**53:
        # exact integer closed form in the compiled loop (den[0] = 0 marks it)
        return P, np.zeros_like(den)
    return num, den


def engine_args(
    workload: Workload,
    spec: KernelSpec,
    gpus: int,
    predict: np.ndarray,
    err: np.ndarray | None,
    fifo_window: bool = True,
) -> EngineArgs:
    """The bundle of one run of ``workload`` under the policy ``spec`` on ``gpus`` GPUs.

    Parameters
    ----------
    workload : Workload
    spec : KernelSpec
        The policy's compiled code and parameters (``Policy.kernel()``).
    gpus : int
    predict : numpy.ndarray
        uint8 per job: predict it at its arrival.
    err : numpy.ndarray or None
        Per-job size-error factors (``None``: none).
    fifo_window : bool
        FIFO replays through the window replay (False: the generic one, for tests).
    """
    if spec.code not in CODES:
        raise ValueError(f"engine_args: unknown policy code {spec.code!r}; known: {', '.join(CODES)}")
    n = len(workload)
    F, I = engine_arrays(workload, err)
    num, den = class_weights(spec, gpus, int(workload.demand.sum()) + 1)
    return EngineArgs(
        F,
        I,
        workload.rows(),
        CODES[spec.code],
        int(gpus),
        np.asarray(predict, np.uint8),
        err is not None,
        np.asarray(spec.thresholds, dtype=float),
        num,
        den,
        float(spec.zeta_min),
        float(spec.delta),
        new_cache(),
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
        np.zeros(2, dtype=np.int64),
        int(spec.quantum_us),
        bool(spec.speedup_valuation),
        REPLAY_SIZES[spec.replay_size],
        _leases_code(spec),
        bool(fifo_window),
        float(spec.zero_tolerance),
    )


def _leases_code(spec: KernelSpec) -> int:
    """The replay's lease mode (``LEASES_*``) from the spec's two flags."""
    if not spec.replay_leases:
        return LEASES_NONE
    return LEASES_PENDING if spec.replay_pending_tick else LEASES_REARM


def run(args: EngineArgs) -> int:
    """Run the compiled main loop on ``args`` (written in place); returns
    :data:`~schedlab.pcs._engine_core.OK` or a failure code
    (:data:`~schedlab.pcs._engine_core.ERRORS` says what it means)."""
    return int(_run(*args))


@njit(cache=True)
def _predict(
    t,
    act,
    n,
    F,
    I,
    rows,
    i,
    pcode,
    gpus,
    rates_num,
    rates_den,
    zeta,
    delta,
    cache,
    counters,
    quantum,
    speedup,
    replay_size,
    replay_leases,
    fifo_window,
    od,
    zero_tol,
):
    """``(code, start, end)`` of job ``i`` just after its arrival: the policy's replay."""
    if pcode == FIFO and quantum == 0 and fifo_window and _fifo_window_ok(act, n, F, I):
        return _replay_fifo(t, act, n, F, I, rows, i, gpus, counters)
    if pcode == WFQ and quantum == 0:
        return _replay_wfq(
            t, act, n, F, I, rows, i, gpus, rates_num, rates_den, zeta, delta, cache, counters, od, zero_tol
        )
    return _replay(
        t,
        act,
        n,
        F,
        I,
        rows,
        i,
        pcode,
        speedup,
        replay_size,
        replay_leases,
        gpus,
        rates_num,
        rates_den,
        zeta,
        delta,
        cache,
        counters,
        quantum,
        zero_tol,
    )


@njit(cache=True)
def _run(
    F,
    I,
    rows,
    pcode,
    gpus,
    predict,
    use_err,
    thresholds,
    rates_num,
    rates_den,
    zeta,
    delta,
    cache,
    est_start,
    est_end,
    counters,
    quantum,
    speedup,
    replay_size,
    replay_leases,
    fifo_window=True,
    zero_tol=0.0,
):
    """The main loop (arguments: the fields of :class:`EngineArgs`). Returns ``OK``,
    ``NEVER_FINISHES`` (some job never finishes), ``WORK_LEFT`` (a job completes with work
    left) or ``PREDICTION_NEVER_ENDS`` (a prediction never completes: the run stops there).
    """
    N = F.shape[1]
    act = np.empty(N, dtype=np.int64)
    out = np.zeros(N)
    n = 0
    ptr = 0
    last = I[SUB, 0]
    cand_t = INF
    cand = -1
    tick = INF
    hint = new_hint(N if pcode == THEMIS else 0)
    od = np.full((OD_ROUNDS, N if pcode == WFQ else 0), -1, dtype=np.int64)
    while ptr < N or cand >= 0:
        kind, t = _next_event(ptr, N, I, cand, cand_t, tick)
        counters[0] += 1
        _progress(t, last, act, n, F, I, rows, use_err, True)
        last = t
        i = -1
        if kind == ARRIVAL:
            i = ptr
            ptr += 1
            n = _arrive(i, act, n, F, I, use_err)
            if pcode == WFQ:
                I[CLS, i] = _wfq_class(F[ESVC, i], thresholds)
        elif kind == COMPLETION:
            i = cand
            if _work_left(F, i):
                return WORK_LEFT
            n = _complete(i, t, act, n, F, I)
        if quantum > 0:
            tick = t + quantum if n > 0 else INF
        _apply(
            t,
            pcode,
            speedup,
            act,
            n,
            F,
            I,
            rows,
            gpus,
            rates_num,
            rates_den,
            zeta,
            delta,
            cache,
            out,
            hint,
            od,
            zero_tol,
        )
        cand_t, cand = _next_end(t, act, n, F, I, rows)
        if cand >= 0 and cand_t == INF:
            cand = -1
            if ptr >= N:
                return NEVER_FINISHES
        if kind == ARRIVAL and predict[i]:
            rc, s0, e0 = _predict(
                t,
                act,
                n,
                F,
                I,
                rows,
                i,
                pcode,
                gpus,
                rates_num,
                rates_den,
                zeta,
                delta,
                cache,
                counters,
                quantum,
                speedup,
                replay_size,
                replay_leases,
                fifo_window,
                od,
                zero_tol,
            )
            if rc != OK:
                return rc  # a prediction never completes: the run is invalid, stop early
            est_start[i] = s0
            est_end[i] = e0
    return OK


refresh_stale_cache(globals())  # after every njit function of the module
