"""Compiled WFQ predictor replay, with per-event work proportional to the running jobs.

Same results as the generic replay (:func:`schedlab.pcs._replay._replay`; tested against the
reference engine), returned the same way: ``(code, start, end)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from schedlab.pcs._engine_core import refresh_stale_cache
from schedlab.pcs._engine_core import (
    ACTIVE,
    ALLOC,
    CLS,
    DEM,
    END,
    EREM,
    INF,
    OD_ROUNDS,
    OK,
    PREDICTION_NEVER_ENDS,
    PREEMPTED,
    QUEUED,
    START,
    STAT,
    SUBMITTED,
    _end_time_thr,
    _thr,
)
from schedlab.pcs._kernels_wfq import _capped_demand, _class_shares


@njit(cache=True)
def _wfq_class_pass(
    c, members, cs, cl, touched, gid, I, rows, alloc, thr, stat, start, calloc, cdc, zeta, delta, t, out, od
):
    """WFQ inside class ``c`` of a replay, touching only the jobs that can change.

    Same arithmetic as :func:`_wfq` for one class: FIFO greedy with demand caps, relaxed by
    ``delta`` while the class's share is not used up. Once ``left`` is 0 every later member
    gets 0, so only members up to the last one that held GPUs before (``touched[c]``) need
    visiting (a class given its whole demand ``cdc`` goes straight to the last pass). The
    final pass's allocations are then applied with :func:`_apply`'s status
    rules; the status of a member that never held GPUs is not advanced from SUBMITTED to
    QUEUED, which nothing in a replay distinguishes (both start the job's clock on its first
    GPUs). Replay state is per local id (``alloc``, ``thr``: throughput at it, ``stat``,
    ``start``); ``gid`` maps a local id to the job's column of the main arrays (demand,
    throughput row). ``od`` memoises, per job of the run, the demand caps of the first
    :data:`OD_ROUNDS` relaxation rounds (-1: not yet known): a cap depends only on the job's
    row and the round's factor. Returns the new ``touched[c]``.
    """
    share = calloc[c]
    factor = zeta
    visited = cl
    rnd = 0
    whole = cdc > 0 and share == float(cdc)
    if whole:
        # every relaxation round short of full caps leaves GPUs over, so the passes end with
        # each member at its demand (integers: exact): go there directly
        for q in range(cl):
            k = members[cs + q]
            out[k] = float(I[DEM, gid[k]])
    while not whole:
        left = share
        visited = cl
        for q in range(cl):
            if left == 0.0 and q >= touched[c]:
                visited = q
                break
            k = members[cs + q]
            if left == 0.0:
                out[k] = 0.0
                continue
            i = gid[k]
            if rnd < OD_ROUNDS:
                cap = od[rnd, i]
                if cap < 0:
                    cap = _capped_demand(rows[i], I[DEM, i], factor)
                    od[rnd, i] = cap
            else:
                cap = _capped_demand(rows[i], I[DEM, i], factor)
            a = min(left, float(cap))
            out[k] = a
            left -= a
        if not left > 0.0:
            break
        factor -= delta
        rnd += 1
    stop = 0
    for q in range(visited):
        k = members[cs + q]
        i = gid[k]
        a = min(out[k], float(I[DEM, i]))
        if a != alloc[k]:
            alloc[k] = a
            thr[k] = _thr(rows[i], a, I[DEM, i]) if a > 0 else 0.0
        st = stat[k]
        if a > 0:
            if st == SUBMITTED or st == QUEUED:
                start[k] = t
            stat[k] = ACTIVE
            stop = q + 1
        elif st == SUBMITTED:
            stat[k] = QUEUED
        elif st == ACTIVE:
            stat[k] = PREEMPTED
    return stop


@njit(cache=True)
def _wfq_running(members, cs, cl, touched, zero, nz, rem, alloc, stat, runi):
    """Replay jobs that can progress or complete next into ``runi`` (in no particular
    order: :func:`_first_end` breaks ties by local id, as :func:`_next_end` does by
    active-list order)."""
    r = 0
    for c in range(cl.shape[0]):
        for q in range(touched[c]):
            k = members[cs[c] + q]
            if alloc[k] > 0 or rem[k] == 0:
                runi[r] = k
                r += 1
    for z in range(nz):
        k = zero[z]
        if stat[k] != END and not alloc[k] > 0 and rem[k] == 0:
            runi[r] = k
            r += 1
    return r


@njit(cache=True)
def _first_end(t, runi, r, rem, alloc, thr):
    """:func:`_next_end` over ``runi[:r]`` with cached throughputs; equal times go to the
    smallest local id (the first in active-list order, as :func:`_next_end` picks)."""
    best_t = INF
    best = -1
    for q in range(r):
        k = runi[q]
        e = _end_time_thr(t, rem[k], alloc[k], thr[k])
        if best < 0 or e < best_t or (e == best_t and k < best):
            best_t = e
            best = k
    return best_t, best


@njit(cache=True)
def _replay_wfq(
    t, act, n, F, I, rows, target, gpus, rates_num, rates_den, zeta, delta, cache, counters, od, zero_tol
):
    """:func:`_replay` for WFQ, with per-event work proportional to the running jobs.

    Identical results (tested against the reference engine): the class of every job and the
    FIFO order within a class do not change in a replay (no arrivals), so members are kept
    per class, class demands are updated on completions, and each class pass stops after
    the last member that can change (:func:`_wfq_class_pass`). A class whose share is the
    one its current allocation was computed from, and which lost no member, would get the
    same allocation again: its pass is skipped. The replay copies only what changes in it
    (estimated remaining size, allocation, status, start; demands and throughput rows are
    read from the main arrays), caches throughputs while an allocation stands and does not
    sort the running jobs (ties go to the smaller local id). ``od``: the run's demand-cap
    memo (:func:`_wfq_class_pass`); ``zero_tol``: the class water-filling's zero rule
    (:func:`schedlab.pcs._kernels_wfq._class_shares`).
    """
    nc = rates_num.shape[0]
    gid = act[:n].copy()  # local id k (active-list position) -> main-array column
    rem = np.empty(n)
    alloc = np.empty(n)
    thr = np.zeros(n)
    stat = np.empty(n, dtype=np.int64)
    start = np.empty(n, dtype=np.int64)
    cd = np.zeros(nc, dtype=np.int64)
    cs = np.zeros(nc + 1, dtype=np.int64)
    tgt = -1
    for k in range(n):
        i = gid[k]
        rem[k] = F[EREM, i]  # the authors' snapshot: sizes are their estimates
        alloc[k] = F[ALLOC, i]
        stat[k] = I[STAT, i]
        start[k] = I[START, i]
        if i == target:
            tgt = k
        cd[I[CLS, i]] += I[DEM, i]
        cs[I[CLS, i] + 1] += 1
    for c in range(nc):
        cs[c + 1] += cs[c]
    cl = np.zeros(nc, dtype=np.int64)
    members = np.empty(n, dtype=np.int64)
    touched = np.zeros(nc, dtype=np.int64)
    for k in range(n):
        i = gid[k]
        c = I[CLS, i]
        members[cs[c] + cl[c]] = k
        cl[c] += 1
        if alloc[k] > 0:
            touched[c] = cl[c]
            thr[k] = _thr(rows[i], alloc[k], I[DEM, i])
    # the shares the snapshot's allocation was computed from (the main loop's, same demands)
    shares = _class_shares(cd, rates_num, rates_den, gpus, cache, zero_tol).copy()
    # jobs with nothing left but no GPUs (only a zero-size job can be one) stay candidates
    zero = np.empty(n, dtype=np.int64)
    nz = 0
    for k in range(n):
        if rem[k] == 0 and not alloc[k] > 0:
            zero[nz] = k
            nz += 1
    runi = np.empty(n, dtype=np.int64)
    out = np.zeros(n)
    r = _wfq_running(members, cs, cl, touched, zero, nz, rem, alloc, stat, runi)
    last = t
    t_end, j = _first_end(t, runi, r, rem, alloc, thr)
    while True:
        if j < 0 or t_end == INF:
            return PREDICTION_NEVER_ENDS, -1, -1
        tt = t_end
        counters[1] += 1
        dt = (tt - last) / 1e6
        for q in range(r):  # _progress of the running jobs (a replay needs only the size)
            k = runi[q]
            if stat[k] == ACTIVE:
                rem[k] -= thr[k] * dt
        last = tt
        c = I[CLS, gid[j]]
        cd[c] -= I[DEM, gid[j]]
        stat[j] = END
        alloc[j] = 0.0
        thr[j] = 0.0
        if j == tgt:
            return OK, start[tgt], tt
        # remove j from its class, keeping the order: completed jobs sit near the class's
        # head (they held GPUs), so shift the members before j one slot back and move the
        # class start, instead of shifting the (possibly long) queue behind j forward
        q0 = cs[c]
        while members[q0] != j:
            q0 += 1
        pos = q0 - cs[c]
        for q in range(q0, cs[c], -1):
            members[q] = members[q - 1]
        cs[c] += 1
        cl[c] -= 1
        if pos < touched[c]:
            touched[c] -= 1
        calloc = _class_shares(cd, rates_num, rates_den, gpus, cache, zero_tol)
        for c2 in range(nc):
            if cl[c2] > 0 and (c2 == c or calloc[c2] != shares[c2]):
                touched[c2] = _wfq_class_pass(
                    c2,
                    members,
                    cs[c2],
                    cl[c2],
                    touched,
                    gid,
                    I,
                    rows,
                    alloc,
                    thr,
                    stat,
                    start,
                    calloc,
                    cd[c2],
                    zeta,
                    delta,
                    tt,
                    out,
                    od,
                )
            shares[c2] = calloc[c2]
        r = _wfq_running(members, cs, cl, touched, zero, nz, rem, alloc, stat, runi)
        t_end, j = _first_end(tt, runi, r, rem, alloc, thr)


refresh_stale_cache(globals())  # after every njit function of the module
