"""Compiled predictor replays: the generic one (any policy) and FIFO's window replay.

A replay predicts ``(start, end)`` of the job that just arrived from a copy of the active
jobs, with estimated sizes and no further arrivals, and returns ``(code, start, end)``
(``code``: :data:`~schedlab.pcs._engine_core.OK` or
:data:`~schedlab.pcs._engine_core.PREDICTION_NEVER_ENDS`). WFQ's replay is
:mod:`schedlab.pcs._replay_wfq`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from schedlab.pcs._engine_core import refresh_stale_cache
from schedlab.pcs._engine_core import (
    ACTIVE,
    ALLOC,
    DEM,
    END,
    EREM,
    INF,
    LEASES_NONE,
    LEASES_PENDING,
    OD_ROUNDS,
    OK,
    PREDICTION_NEVER_ENDS,
    PREEMPTED,
    QUEUED,
    START,
    STAT,
    SUBMITTED,
    THEMIS,
    _end_time,
    _next_end,
    _progress,
    _remove,
    _running,
    _snapshot,
    _thr,
)
from schedlab.pcs._kernels import _apply
from schedlab.pcs._kernels_themis import new_hint


@njit(cache=True)
def _replay(
    t,
    act,
    n,
    F,
    I,
    rows,
    target,
    pcode,
    speedup,
    size_mode,
    leases,
    gpus,
    rates_num,
    rates_den,
    zeta,
    delta,
    cache,
    counters,
    quantum,
    zero_tol,
):
    """Predict ``(code, start, end)`` of ``target`` from the active jobs, no arrivals,
    estimated sizes.

    ``size_mode``: what the replay keeps in ``service`` (:func:`_snapshot`); ``leases``
    (with a ``quantum``): ``LEASES_NONE``, no lease tick inside the replay; ``LEASES_REARM``,
    a tick ``quantum`` after every replay event; ``LEASES_PENDING``, the same plus the main
    loop's pending tick (``quantum`` after the arrival) from the start, as the authors'
    snapshot copies it since their code of 2024-05-31.
    """
    F2, I2, rows2, tgt = _snapshot(act, n, F, I, rows, target, size_mode)
    act2 = np.arange(n)
    out = np.zeros(n)
    m = n
    last = t
    tick = INF
    if quantum > 0 and leases == LEASES_PENDING:
        tick = t + quantum  # the arrival re-armed the lease in the main loop
    # Without a quantum only running jobs (allocation > 0, i.e. ACTIVE) progress, and only
    # they or a job with nothing left can complete next: both loops visit just those, in
    # active-list order (same ties), instead of every queued job.
    hint = new_hint(n if pcode == THEMIS else 0)
    no_od = np.full((OD_ROUNDS, 0), -1, dtype=np.int64)  # local ids: no demand-cap memo
    runi = act2.copy()
    r = n if quantum > 0 else _running(act2, m, F2, runi)
    t_end, j = _next_end(t, runi, r, F2, I2, rows2)
    while True:
        has_end = j >= 0 and t_end != INF
        if not has_end and tick == INF:
            return PREDICTION_NEVER_ENDS, -1, -1
        is_end = has_end and t_end <= tick
        tt = t_end if is_end else tick
        counters[1] += 1
        if quantum > 0:
            _progress(tt, last, act2, m, F2, I2, rows2, False, True)
        else:
            _progress(tt, last, runi, r, F2, I2, rows2, False, False)
        last = tt
        if is_end:
            I2[DEM, j] = 0
            I2[STAT, j] = END
            m = _remove(act2, m, j)
            if j == tgt:
                return OK, I2[START, tgt], tt
        if quantum > 0 and leases != LEASES_NONE:
            tick = tt + quantum if m > 0 else INF
        _apply(
            tt,
            pcode,
            speedup,
            act2,
            m,
            F2,
            I2,
            rows2,
            gpus,
            rates_num,
            rates_den,
            zeta,
            delta,
            cache,
            out,
            hint,
            no_od,
            zero_tol,
        )
        if quantum > 0:
            t_end, j = _next_end(tt, act2, m, F2, I2, rows2)
        else:
            r = _running(act2, m, F2, runi)
            t_end, j = _next_end(tt, runi, r, F2, I2, rows2)


@njit(cache=True)
def _fifo_window_ok(act, n, F, I):
    """Whether :func:`_replay_fifo` applies to the active jobs ``act[:n]``.

    It needs the FIFO invariants: every job demands a GPU, the allocated jobs form a prefix
    of the active list and no job beyond that prefix has an estimated remaining size of 0
    (the generic replay would complete such a queued job at once).
    """
    q = 0
    while q < n and F[ALLOC, act[q]] > 0:
        q += 1
    for k in range(n):
        i = act[k]
        if I[DEM, i] <= 0:
            return False
        if k >= q and (F[ALLOC, i] > 0 or F[EREM, i] == 0):
            return False
    return True


@njit(cache=True)
def _join_window(k, i, win, rem, alloc, dem, stat, start, F, I):
    """Copy job ``i``'s state from the main arrays into slot ``k`` of the FIFO window."""
    win[k] = i
    rem[k] = F[EREM, i]
    alloc[k] = F[ALLOC, i]
    dem[k] = I[DEM, i]
    stat[k] = I[STAT, i]
    start[k] = I[START, i]


@njit(cache=True)
def _replay_fifo(t, act, n, F, I, rows, target, gpus, counters):
    """:func:`_replay` for FIFO without a quantum, in O(events x running jobs).

    In a FIFO replay (no arrivals) the running jobs are a prefix of the active list and a
    job, once running, never loses a GPU: completions only free capacity for the jobs
    behind. So only that prefix (the *window*, at most ``gpus`` jobs) is copied and
    updated; the queue behind it is read from the main arrays when a job joins the
    window. Every float operation, and its order, is the generic replay's: outputs are
    identical (tested), the per-event work no longer grows with the queue.
    """
    cap = min(n, gpus + 1)
    win = np.empty(cap, dtype=np.int64)  # main-array job ids, in active-list order
    rem = np.empty(cap)
    alloc = np.empty(cap)
    dem = np.empty(cap, dtype=np.int64)
    stat = np.empty(cap, dtype=np.int64)
    start = np.empty(cap, dtype=np.int64)
    tail_dem = 0  # demand of the jobs behind the window
    w = 0
    p = 0  # next job of act[:n] to join the window
    while p < n and F[ALLOC, act[p]] > 0:
        _join_window(w, act[p], win, rem, alloc, dem, stat, start, F, I)
        w += 1
        p += 1
    for k in range(p, n):
        tail_dem += I[DEM, act[k]]
    last = t
    while True:
        # next completion: first running job (allocation > 0 or nothing left) in order
        best_t = INF
        best = -1
        for k in range(w):
            if not (alloc[k] > 0 or rem[k] == 0):
                continue
            e = _end_time(last, rem[k], alloc[k], rows[win[k]], dem[k])
            if best < 0 or e < best_t:
                best_t = e
                best = k
        if best < 0 or best_t == INF:
            return PREDICTION_NEVER_ENDS, -1, -1
        tt = best_t
        counters[1] += 1
        dt = (tt - last) / 1e6
        for k in range(w):
            if stat[k] == ACTIVE:
                rem[k] -= _thr(rows[win[k]], alloc[k], dem[k]) * dt
        last = tt
        if win[best] == target:
            return OK, start[best], tt
        for k in range(best, w - 1):  # the completed job leaves the window
            win[k] = win[k + 1]
            rem[k] = rem[k + 1]
            alloc[k] = alloc[k + 1]
            dem[k] = dem[k + 1]
            stat[k] = stat[k + 1]
            start[k] = start[k + 1]
        w -= 1
        # greedy in FIFO order (_greedy + _apply), the queue joining while GPUs are left
        total = tail_dem
        for k in range(w):
            total += dem[k]
        left = min(total, gpus)
        k = 0
        while k < w or (left > 0 and p < n):
            if k == w:  # the next queued job joins the window with its current state
                _join_window(w, act[p], win, rem, alloc, dem, stat, start, F, I)
                tail_dem -= dem[w]
                w += 1
                p += 1
            a = float(min(left, dem[k]))
            left -= min(left, dem[k])
            alloc[k] = a
            if a > 0:
                if stat[k] == SUBMITTED or stat[k] == QUEUED:
                    start[k] = tt
                stat[k] = ACTIVE
            elif stat[k] == SUBMITTED:
                stat[k] = QUEUED
            elif stat[k] == ACTIVE:
                stat[k] = PREEMPTED
            k += 1


refresh_stale_cache(globals())  # after every njit function of the module
