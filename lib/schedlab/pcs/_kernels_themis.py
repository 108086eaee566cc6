"""Compiled Themis kernel: greedy by finish-time fairness ``rho``, re-sorted per hand-out.

The authors' ``AppThemisScheduler`` (:class:`schedlab.pcs.policies.Themis`), with the same
floats: keys are recomputed only for jobs whose ``min(left, demand)`` changed, and sorts
start from the previous order (:func:`new_hint`), which gives the mergesort's exact order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from schedlab.pcs._engine_core import refresh_stale_cache
from schedlab.pcs._engine_core import DEM, INITD, REM, SEENC, SEENS, SUB, SVC, _thr


@njit(cache=True)
def _themis_keys(t, act, pool, lo, m, residual, F, I, rows, gpus, speedup, keys, keyed=-1):
    """rho = t_shared / t_ideal of each pooled job ``pool[lo:m]`` if it got ``min(residual,
    demand)`` GPUs, into ``keys`` (aligned with ``pool``).

    ``keyed``: the residual the keys were last computed at (-1: none). A job whose
    ``min(residual, demand)`` is the same as at ``keyed`` would get the same key (same
    time, same inputs, same floats): it keeps it, so a re-key after a hand-out costs only
    the jobs that demand more than what is left.
    """
    for q in range(lo, m):
        i = act[pool[q]]
        ma = min(residual, I[DEM, i])
        if keyed >= 0 and ma == min(keyed, I[DEM, i]):
            continue
        if ma > 0:
            contention = I[SEENS, i] / I[SEENC, i]
            fair = min(gpus / contention, float(I[INITD, i]))
            if speedup:
                t_id = F[SVC, i] / _thr(rows[i], fair, I[DEM, i])
                t_sh = (t - I[SUB, i]) / 1e6 + F[REM, i] / _thr(rows[i], float(ma), I[DEM, i])
            else:
                t_id = F[SVC, i] / fair
                t_sh = (t - I[SUB, i]) / 1e6 + F[REM, i] / ma
            keys[q] = t_sh / t_id
        else:
            keys[q] = 1.0


@njit(cache=True)
def _insertion_sort_desc(pool, keys, lo, m, budget, ties_by_id=False):
    """Descending insertion sort of ``pool[lo:m]`` by ``keys``, in place, giving up after
    ``budget`` element moves (returns False: the caller then finishes with a mergesort).

    Stable (equal keys keep their order), or with ``ties_by_id`` ordered by key descending,
    then ``pool`` value ascending: a total order, so the result does not depend on the
    starting order.
    """
    moves = 0
    for a in range(lo + 1, m):
        k = keys[a]
        v = pool[a]
        b = a - 1
        # already in place (NaN keys: see the callers' checks)
        if not (keys[b] < k or (ties_by_id and keys[b] == k and pool[b] > v)):
            continue
        while b >= lo and (keys[b] < k or (ties_by_id and keys[b] == k and pool[b] > v)):
            keys[b + 1] = keys[b]
            pool[b + 1] = pool[b]
            b -= 1
            moves += 1
        keys[b + 1] = k
        pool[b + 1] = v
        if moves > budget:
            return False
    return True


@njit(cache=True)
def _themis_sort(act, pool, lo, m, I, keys, sufmax, ties_by_id=False):
    # descending sort of pool[lo:m] by keys: stable (Python's sorted(reverse=True) keeps
    # ties), or with ties_by_id ties by pool value (the stable sort of positions 0..n-1,
    # whatever order the pool starts in). Either result is unique, so an insertion sort
    # (cheap when the pool is nearly in order, as after a re-key of a few jobs or from the
    # previous event's order) gives the mergesort's exact order; past a move budget it stops
    # and the mergesort finishes. Equal keys never pass each other in a stable insertion
    # sort, so the mergesort of the half-sorted pool is the mergesort of the original one:
    # no copy is kept. sufmax[q]: the largest demand in pool[q:m].
    finite = True
    for q in range(lo, m):
        if not np.isfinite(keys[q]):
            finite = False
            break
    if not (finite and _insertion_sort_desc(pool, keys, lo, m, 4 * (m - lo) + 64, ties_by_id)):
        seg = pool[lo:m].copy()
        kseg = keys[lo:m].copy()
        if ties_by_id:  # into pool-value order first, so that the stable sort ties by it
            by_id = np.argsort(seg)
            seg = seg[by_id]
            kseg = kseg[by_id]
        order = np.argsort(-kseg, kind="mergesort")
        for q in range(m - lo):
            pool[lo + q] = seg[order[q]]
            keys[lo + q] = kseg[order[q]]
    mx = 0
    for q in range(m - 1, lo - 1, -1):
        d = I[DEM, act[pool[q]]]
        if d > mx:
            mx = d
        sufmax[q] = mx


@njit(cache=True)
def new_hint(cap):
    """Scratch for :func:`_themis` across calls on one active list whose job ids are below
    ``cap``: row 0 the last sorted order (ids), rows 1-2 an id -> position map and marks;
    column ``cap`` holds the order's length and the marks' stamp."""
    return np.zeros((3, cap + 1), dtype=np.int64)


@njit(cache=True)
def _hinted_pool(act, n, hint, pool):
    """Positions ``0..n-1`` of ``act`` in the order of the previous call's sort (jobs still
    active), then the jobs that were not in it, in active-list order."""
    cap = hint.shape[1] - 1
    stamp = hint[1, cap] + 2
    hint[1, cap] = stamp
    for k in range(n):
        hint[1, act[k]] = k
        hint[2, act[k]] = stamp
    c = 0
    for q in range(hint[0, cap]):
        i = hint[0, q]
        if hint[2, i] == stamp:
            pool[c] = hint[1, i]
            hint[2, i] = stamp + 1
            c += 1
    for k in range(n):
        if hint[2, act[k]] == stamp:
            pool[c] = k
            c += 1


@njit(cache=True)
def _themis(t, act, n, F, I, rows, gpus, speedup, out, hint):
    """The authors' greedy: re-sort by rho after every hand-out, take the top.

    ``speedup`` (see :class:`schedlab.pcs.policies.Themis`) values time through the job's
    speedup table (the version behind the paper's Fig. 7); without it ``remaining / GPUs``,
    the public code of 2024. The replay variants are arguments of :func:`_replay`.

    A job's rho only changes when ``min(left, demand)`` does, i.e. when some remaining
    demand exceeds what is left; otherwise the stable re-sort of an already sorted pool is
    the identity and is skipped (same result, O(n log n) per event instead of O(G n log n)).
    ``hint`` (:func:`new_hint`; one column: none) carries the first sort's order from one
    call to the next on the same active list, which the next first sort starts from.
    """
    total = 0
    for k in range(n):
        out[k] = 0.0
        total += I[DEM, act[k]]
    residual = min(total, gpus)
    pool = np.empty(n, dtype=np.int64)
    keys = np.empty(n)
    sufmax = np.zeros(n, dtype=np.int64)
    hinted = hint.shape[1] > 1
    if hinted:
        _hinted_pool(act, n, hint, pool)
    else:
        for k in range(n):
            pool[k] = k
    _themis_keys(t, act, pool, 0, n, residual, F, I, rows, gpus, speedup, keys)
    # the first sort ties by active-list position, whatever order the hint started from
    _themis_sort(act, pool, 0, n, I, keys, sufmax, True)
    if hinted:  # the next call starts from this order
        cap = hint.shape[1] - 1
        for q in range(n):
            hint[0, q] = act[pool[q]]
        hint[0, cap] = n
    keyed = residual
    p = 0
    while residual > 0:
        top = pool[p]
        a = min(residual, I[DEM, act[top]])
        out[top] = a
        residual -= a
        p += 1
        if residual > 0 and p < n and sufmax[p] > residual:
            _themis_keys(t, act, pool, p, n, residual, F, I, rows, gpus, speedup, keys, keyed)
            keyed = residual
            _themis_sort(act, pool, p, n, I, keys, sufmax)


refresh_stale_cache(globals())  # after every njit function of the module
