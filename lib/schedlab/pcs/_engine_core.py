"""The compiled engines' core (numba): per-job state, named codes and the shared event steps.

Per-job state lives in two 2-D arrays, floats ``F`` and ints ``I``, one row per field (the
row names below), one column per job in arrival order; the active list is an int array in
the authors' order. Both compiled loops, the general one (:mod:`schedlab.pcs._engine`) and
the randomised-AFS one (:mod:`schedlab.pcs._engine_rafs`), are built from the steps here:
choosing the next event (:func:`_next_event`), progress (:func:`_progress`), arrival
(:func:`_arrive`), completion (:func:`_work_left`, :func:`_complete`), committing an
allocation (:func:`_commit`), projected completions (:func:`_next_end`) and the predictor's
snapshot (:func:`_snapshot`). The policy kernels live in ``_kernels_*`` modules, the
predictor replays in ``_replay*`` modules.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np
from numba import njit
from numba.core.caching import Cache
from numba.core.dispatcher import Dispatcher

# job states, event kinds (in their order at equal times), "never" and the horizon: the
# reference engine's, one set for both engines
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
)

# float fields (rows of F)
SVC, REM, EREM, ESVC, ALLOC, ERR = range(6)
NF = 6
# int fields (rows of I)
SUB, DEM, STAT, START, ENDT, CLS, AID, SEENS, SEENC, INITD = range(10)
NI = 10
#: relaxation rounds of a WFQ class pass whose demand caps a run memoises per job
OD_ROUNDS = 8
#: policy codes of the compiled loop
FIFO, SRSF, LAS, FS, AFS, WFQ, THEMIS = range(7)
#: :attr:`schedlab.pcs.policies.KernelSpec.code` -> the compiled loop's policy code
CODES = {"FIFO": FIFO, "SRSF": SRSF, "LAS": LAS, "FS": FS, "AFS": AFS, "WFQ": WFQ, "THEMIS": THEMIS}
#: what a predictor replay keeps in ``service`` (Themis's ``t_ideal``, LAS's attained service):
#: the estimated remaining size, the true size, or attained + estimated remaining size
REPLAY_ESTIMATE, REPLAY_TRUE, REPLAY_ATTAINED = range(3)
#: :attr:`schedlab.pcs.policies.KernelSpec.replay_size` -> the replay's size code
REPLAY_SIZES = {"estimate": REPLAY_ESTIMATE, "true": REPLAY_TRUE, "attained+estimate": REPLAY_ATTAINED}
#: lease ticks inside a Themis replay: none, re-armed from the first replay event on, or
#: also the main loop's pending tick (``quantum`` after the arrival) from the start
LEASES_NONE, LEASES_REARM, LEASES_PENDING = range(3)
#: return codes of the compiled loops and their replays (``OK``: success)
OK, NEVER_FINISHES, WORK_LEFT, PREDICTION_NEVER_ENDS = 0, -1, -2, -3
#: what each failure code means (the reference engine's SimulationError)
ERRORS = {
    NEVER_FINISHES: "some active jobs can never finish (cluster too small?)",
    WORK_LEFT: "a job completed with remaining work > 0.01",
    PREDICTION_NEVER_ENDS: "a prediction never completes",
}


@njit(cache=True)
def _thr(row, a, d):
    """Throughput at ``a`` GPUs from the speedup ``row`` (linear between integer counts;
    above the demand ``d``: the demand's)."""
    if a > d:
        return row[d]
    ic = np.int64(np.ceil(a))
    i_f = np.int64(np.floor(a))
    m = row[ic] - row[i_f]
    c = row[ic] - (m * ic)
    return m * a + c


@njit(cache=True)
def _to_us(x):
    """``x`` seconds as integer microseconds (the fraction rounded half to even)."""
    ip = np.trunc(x)
    return np.int64(ip) * 1000000 + np.int64(np.rint((x - ip) * 1e6))


@njit(cache=True)
def _progress(t, last, act, n, F, I, rows, use_err, count_seen):
    """Advance the running jobs of ``act[:n]`` from ``last`` to ``t`` (the estimates through
    the error factors with ``use_err``) and, with ``count_seen``, count contention."""
    dt = (t - last) / 1e6
    for k in range(n):
        i = act[k]
        if I[STAT, i] == ACTIVE:
            F[REM, i] -= _thr(rows[i], F[ALLOC, i], I[DEM, i]) * dt
            if use_err:
                e = max(F[REM, i] * F[ERR, i], 1e-2)
            else:
                e = F[REM, i]
            F[EREM, i] = e
            F[ESVC, i] = e
        if count_seen:
            I[SEENS, i] += n
            I[SEENC, i] += 1


@njit(cache=True)
def _end_time_thr(t, rem, al, th):
    """:func:`_end_time` with the throughput ``th`` at ``al`` GPUs already known."""
    if rem == 0:
        return t
    if al == 0 or th == 0:
        return INF
    x = rem / th
    if np.isfinite(x) and x < NEVER_S and x > -NEVER_S:
        return t + _to_us(x)
    return INF


@njit(cache=True)
def _end_time(t, rem, al, row, d):
    """Projected completion (us) of a job with ``rem`` left at ``al`` GPUs (``INF``: never)."""
    if rem == 0:
        return t
    if al == 0:
        return INF
    return _end_time_thr(t, rem, al, _thr(row, al, d))


@njit(cache=True)
def _next_end(t, act, n, F, I, rows):
    """Earliest projected completion ``(time, job)`` of ``act[:n]`` (ties: the first in the
    list; job ``-1`` only for an empty list)."""
    best_t = INF
    best = -1
    for k in range(n):
        i = act[k]
        e = _end_time(t, F[REM, i], F[ALLOC, i], rows[i], I[DEM, i])
        if best < 0 or e < best_t:
            best_t = e
            best = i
    return best_t, best


@njit(cache=True)
def _commit(t: int, act: np.ndarray, n: int, F: np.ndarray, I: np.ndarray, out: np.ndarray) -> None:
    """Store the allocation ``out`` (aligned with ``act[:n]``), capped at each job's demand,
    and update starts and states (the reference engine's ``apply_allocation``)."""
    for k in range(n):
        i = act[k]
        a = min(out[k], float(I[DEM, i]))
        F[ALLOC, i] = a
        st = I[STAT, i]
        if a > 0:
            if st == SUBMITTED or st == QUEUED:
                I[START, i] = t
            I[STAT, i] = ACTIVE
        else:
            if st == SUBMITTED:
                I[STAT, i] = QUEUED
            elif st == ACTIVE:
                I[STAT, i] = PREEMPTED


@njit(cache=True)
def _remove(act, n, i):
    """Drop job ``i`` from ``act[:n]``, keeping the order; returns the new length."""
    k = 0
    for q in range(n):
        if act[q] != i:
            act[k] = act[q]
            k += 1
    return k


@njit(cache=True)
def _running(act, n, F, runi):
    """Jobs of ``act[:n]`` with an allocation or nothing left, in order, into ``runi``."""
    r = 0
    for k in range(n):
        i = act[k]
        if F[ALLOC, i] > 0 or F[REM, i] == 0:
            runi[r] = i
            r += 1
    return r


@njit(cache=True)
def _snapshot(act, n, F, I, rows, target, size_mode):
    """A predictor replay's compact copy of the active jobs ``act[:n]``.

    Local id ``k`` is the job's position in the active list. Remaining sizes are replaced
    by their estimates; ``service`` (Themis's ``t_ideal``, LAS's attained service) becomes,
    by ``size_mode``: the estimated remaining size (``REPLAY_ESTIMATE``), the true size
    (``REPLAY_TRUE``) or attained + estimated remaining size (``REPLAY_ATTAINED``, the
    authors' ``estimated_service`` at 62a6ca3, computed as they do). Returns
    ``(F2, I2, rows2, local id of target)``.
    """
    F2 = np.empty((NF, n))
    I2 = np.empty((NI, n), dtype=np.int64)
    # throughputs are only read at 0..demand GPUs: copy that many columns, not the whole
    # table (1001 wide once the linear model is loaded)
    width = 1
    for k in range(n):
        width = max(width, I[DEM, act[k]] + 1)
    width = min(width, rows.shape[1])
    rows2 = np.empty((n, width))
    tgt = -1
    for k in range(n):
        i = act[k]
        for f in range(NF):
            F2[f, k] = F[f, i]
        for f in range(NI):
            I2[f, k] = I[f, i]
        rows2[k] = rows[i, :width]
        if i == target:
            tgt = k
        if size_mode == REPLAY_ESTIMATE:
            F2[SVC, k] = F[ESVC, i]
        elif size_mode == REPLAY_ATTAINED:
            # same expression, same order as the authors' estimate_app_service_time
            F2[SVC, k] = (F[SVC, i] - F[REM, i]) + F[EREM, i]
        F2[REM, k] = F[EREM, i]
    return F2, I2, rows2, tgt


@njit(cache=True)
def _next_event(ptr, N, I, cand, cand_t, tick):
    """``(kind, time)`` of the next event: the arrival of job ``ptr`` (none once
    ``ptr == N``), the lease tick at ``tick`` (``INF``: none) or the completion of ``cand``
    at ``cand_t`` (``cand < 0``: none). At equal times completion < tick < arrival."""
    t = I[SUB, ptr] if ptr < N else INF
    kind = ARRIVAL
    if tick <= t:  # a lease tick before an arrival at the same time
        kind = TICK
        t = tick
    if cand >= 0 and cand_t <= t:
        kind = COMPLETION
        t = cand_t
    return kind, t


@njit(cache=True)
def _arrive(i, act, n, F, I, use_err):
    """Job ``i`` joins the active list ``act[:n]``; returns the new length. With
    ``use_err`` the scheduler sees its size through the job's error factor."""
    act[n] = i
    n += 1
    I[STAT, i] = SUBMITTED
    I[SEENS, i] = n
    I[SEENC, i] = 1
    if use_err:
        e = max(F[REM, i] * F[ERR, i], 1e-2)
        F[EREM, i] = e
        F[ESVC, i] = e
    return n


@njit(cache=True)
def _work_left(F, i):
    """Whether job ``i`` still has work left at its completion (the authors' tolerance)."""
    return abs(F[REM, i]) > 0.01


@njit(cache=True)
def _complete(i, t, act, n, F, I):
    """Job ``i`` completes at ``t`` and leaves the active list; returns the new length."""
    I[DEM, i] = 0
    I[STAT, i] = END
    I[ENDT, i] = t
    return _remove(act, n, i)


# --- numba's cache across the engine's modules

#: the compiled engine's modules, and ``world`` whose constants it compiles in: an edit of
#: any of them makes every engine module recompile
ENGINE_MODULES = (
    "_engine_core",
    "_kernels",
    "_kernels_simple",
    "_kernels_themis",
    "_kernels_wfq",
    "_replay",
    "_replay_wfq",
    "_engine",
    "_engine_rafs",
    "world",
)


@lru_cache(maxsize=1)
def _sources_digest() -> str:
    """SHA-256 of the sources of :data:`ENGINE_MODULES`.

    >>> len(_sources_digest())
    64
    """
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in ENGINE_MODULES:
        h.update((here / f"{name}.py").read_bytes())
    return h.hexdigest()


def refresh_stale_cache(namespace: dict) -> None:
    """Drop the cached machine code of the njit functions of one engine module (its
    ``globals()``) when the engine's sources changed since it was compiled.

    Numba keys a cached function on its own file and bytecode only: a function calling into
    another module keeps running the callee it was compiled with after that module is
    edited. Every engine module calls this at its end, so an edit of any of them makes all
    recompile, as when the engine was one file. The stamp lives beside the module's numba
    cache; a cache directory nobody can write to means numba caches nothing there either.
    """
    name = namespace["__name__"]
    caches = [
        f._cache
        for f in namespace.values()
        if isinstance(f, Dispatcher)
        and f.py_func.__module__ == name
        and isinstance(getattr(f, "_cache", None), Cache)
    ]
    if not caches:
        return
    stamp = Path(caches[0].cache_path) / f"{name.rpartition('.')[2]}.sources-sha256"
    digest = _sources_digest()
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass  # no stamp yet: compiled from unknown sources
    for cache in caches:
        cache.flush()
    try:
        stamp.write_text(digest)
    except OSError:
        pass


refresh_stale_cache(globals())
