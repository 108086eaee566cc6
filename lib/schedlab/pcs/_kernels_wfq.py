"""Compiled WFQ (PCS) kernel: class shares by water-filling, then FIFO with demand caps.

WFQ's class-level water-filling runs in exact fractions in Python (:func:`wfq_class_alloc`,
on :func:`schedlab.pcs.fairshare.water_fill`), memoised per class-demand vector in a typed
dict (hash key, verified on lookup, so any number of classes); the compiled loop calls it
(object mode) only for vectors it has not seen, and only when the weights' common
denominator is too large for the exact integer closed form (:func:`class_alloc_exact`, the
usual path; :func:`schedlab.pcs.fairshare.integer_weights`) or the authors' zero rule is on
(``WFQ.authors_code``: amounts within 1e-3 of 0 count as 0, which the closed form does not do). WFQ's predictor replay is
:mod:`schedlab.pcs._replay_wfq`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numba import njit, objmode

from schedlab.pcs._engine_core import refresh_stale_cache
from schedlab.pcs._engine_core import AID, CLS, DEM, OD_ROUNDS
from schedlab.pcs.fairshare import water_fill


def wfq_class_alloc(class_demand, rates_num, rates_den, gpus, zero_tolerance: float = 0.0) -> np.ndarray:
    """Exact (Fraction) water-filling of class weights over class demands, as floats
    (``zero_tolerance``: :func:`schedlab.pcs.fairshare.water_fill`).

    >>> wfq_class_alloc([1, 5], [3, 1], [4, 4], 4).tolist()
    [1.0, 3.0]
    """
    rates = [Fraction(int(n), int(d)) * int(gpus) for n, d in zip(rates_num, rates_den)]
    alloc = water_fill(rates, [int(c) for c in class_demand], float(zero_tolerance))
    return np.array([float(a) for a in alloc], dtype=np.float64)


@njit(cache=True)
def _class_alloc_cached(cd, rates_num, rates_den, gpus, cache, zero_tol=0.0):
    """Fraction water-filling memoised per class-demand vector, any number of classes.

    The key is a 64-bit hash of ``cd``; the stored value holds ``cd`` followed by the
    allocation, and a hit is used only if ``cd`` matches exactly (a collision recomputes).
    ``zero_tol`` is fixed for a run (one cache per run), so it is not part of the key.
    """
    nc = cd.shape[0]
    h = np.int64(nc)
    for c in range(nc):
        h = h * np.int64(1000003) + cd[c]  # wraps modulo 2**64, fine for a hash
    if h in cache:
        v = cache[h]
        same = True
        for c in range(nc):
            if v[c] != float(cd[c]):
                same = False
                break
        if same:
            return v[nc:]
    calloc = _class_alloc_py(cd.copy(), rates_num, rates_den, gpus, zero_tol)
    if h not in cache:
        v = np.empty(2 * nc)
        for c in range(nc):
            v[c] = float(cd[c])
            v[nc + c] = calloc[c]
        cache[h] = v
    return calloc


@njit(cache=True)
def _class_alloc_py(cd, rates_num, rates_den, gpus, zero_tol):
    """:func:`wfq_class_alloc` called from compiled code (object mode)."""
    with objmode(res="float64[:]"):
        res = wfq_class_alloc(cd, rates_num, rates_den, gpus, zero_tol)
    return res


@njit(cache=True)
def class_alloc_exact(cd, P, gpus):
    """Water-filling of integer weights ``P`` over class demands ``cd``, exactly.

    The authors' round-based Fraction procedure ends with every class either satisfied
    (gets its demand) or, for the unsatisfied set U, ``(G - D_sat) * P_i / sum_U P`` —
    classes unsatisfied at the end took part in every round with rates proportional to
    their weights. The satisfied set is found round by round with integer
    cross-multiplication (no rounding), and the final division of two integers < 2**53 is
    correctly rounded, as ``float(Fraction)`` is. Tested against :func:`wfq_class_alloc`.
    """
    nc = P.shape[0]
    out = np.zeros(nc)
    # a class of weight 0 never gets a share in the authors' rounds (its rate stays 0 and
    # leftovers are redistributed in proportion to the rates): it is left out entirely
    total = 0
    for i in range(nc):
        if P[i] > 0:
            total += cd[i]
    if total <= gpus:
        for i in range(nc):
            if P[i] > 0:
                out[i] = cd[i]
        return out
    sat = np.zeros(nc, dtype=np.bool_)
    for i in range(nc):
        if cd[i] == 0 or P[i] == 0:
            sat[i] = True
    rest = gpus
    while True:
        pu = 0
        for i in range(nc):
            if not sat[i]:
                pu += P[i]
        if pu == 0:
            break
        moved = False
        for i in range(nc):
            if not sat[i] and cd[i] * pu <= rest * P[i]:
                sat[i] = True
                moved = True
        if not moved:
            break
        # the whole round is satisfied simultaneously, as in the authors' rounds
        rest = gpus
        for i in range(nc):
            if sat[i] and P[i] > 0:
                rest -= cd[i]
    pu = 0
    for i in range(nc):
        if not sat[i]:
            pu += P[i]
    for i in range(nc):
        if P[i] == 0:
            out[i] = 0.0
        elif sat[i]:
            out[i] = cd[i]
        elif pu > 0:
            out[i] = float(rest * P[i]) / float(pu)
    return out


@njit(cache=True)
def _capped_demand(row, d, factor):
    """WFQ's demand cap: GPUs ``g`` up to the first whose per-GPU throughput falls below
    ``factor`` (all ``d`` if none does)."""
    for g in range(1, d + 1):
        if row[g] / float(g) < factor:
            return g - 1
    return d


@njit(cache=True)
def _class_shares(cd, rates_num, rates_den, gpus, cache, zero_tol):
    """WFQ's GPUs per class for class demands ``cd``. ``rates_den[0] == 0``: ``rates_num``
    holds the integer weights P (:func:`schedlab.pcs.fairshare.integer_weights`), exact
    closed form; otherwise the memoised Fraction water-filling (a view into ``cache``: copy
    it to keep it), which also applies the authors' zero rule when ``zero_tol > 0`` (the
    closed form is exact only without it: the engine passes num/den then,
    :func:`schedlab.pcs._engine.class_weights`)."""
    if rates_den[0] == 0:
        return class_alloc_exact(cd, rates_num, gpus)
    return _class_alloc_cached(cd, rates_num, rates_den, gpus, cache, zero_tol)


@njit(cache=True)
def _wfq(act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache, out, od, zero_tol):
    """WFQ over the active jobs ``act[:n]``: class shares by water-filling, then FIFO greedy
    with demand caps in each class, relaxed by ``delta`` while the share is not used up.
    ``od``: the run's demand-cap memo per main-array column (:func:`_wfq_class_pass`), or
    an empty array (local ids of a generic replay: no memo). ``zero_tol``: the class
    water-filling's zero rule (:func:`_class_shares`; 0: exact)."""
    nc = rates_num.shape[0]
    memo = od.shape[1] > 0
    cd = np.zeros(nc, dtype=np.int64)
    # members of each class, stable in active-list order (counting sort)
    first = np.zeros(nc + 1, dtype=np.int64)
    for k in range(n):
        c = I[CLS, act[k]]
        cd[c] += I[DEM, act[k]]
        first[c + 1] += 1
    for c in range(nc):
        first[c + 1] += first[c]
    fill = first[:nc].copy()
    pos = np.empty(n, dtype=np.int64)
    for k in range(n):
        c = I[CLS, act[k]]
        pos[fill[c]] = k
        fill[c] += 1
    calloc = _class_shares(cd, rates_num, rates_den, gpus, cache, zero_tol)
    for c in range(nc):
        lo = first[c]
        hi = first[c + 1]
        if lo == hi:
            continue
        if cd[c] > 0 and calloc[c] == float(cd[c]):
            # the whole demand: the relaxation ends with every member at its demand
            # (_wfq_class_pass), whatever their order
            for q in range(lo, hi):
                out[pos[q]] = float(I[DEM, act[pos[q]]])
            continue
        # FIFO within a class is app-id order; the active list is already in that order
        # unless a policy reordered it, so the stable sort is usually skipped
        srt = True
        for q in range(lo + 1, hi):
            if I[AID, act[pos[q]]] < I[AID, act[pos[q - 1]]]:
                srt = False
                break
        if not srt:
            aid = np.empty(hi - lo, dtype=np.int64)
            for q in range(lo, hi):
                aid[q - lo] = I[AID, act[pos[q]]]
            order = np.argsort(aid, kind="mergesort")
            seg = pos[lo:hi].copy()
            for q in range(hi - lo):
                pos[lo + q] = seg[order[q]]
        for q in range(lo, hi):
            out[pos[q]] = 0.0  # a class with no share gets nothing (reference: zeros)
        start = calloc[c]
        left = start
        factor = zeta
        rnd = 0
        while left > 0.0:
            left = start
            for q in range(lo, hi):
                k = pos[q]
                if left == 0.0:
                    # min(0, cap) = 0 for every job behind: skip the cap computation
                    out[k] = 0.0
                    continue
                i = act[k]
                # the memo lookup is written out here and in _wfq_class_pass on purpose: as a
                # shared njit helper (even inline="always") both loops ran 1.3-1.5x slower,
                # measured side by side with the same outputs
                if memo and rnd < OD_ROUNDS:
                    cap = od[rnd, i]
                    if cap < 0:
                        cap = _capped_demand(rows[i], I[DEM, i], factor)
                        od[rnd, i] = cap
                else:
                    cap = _capped_demand(rows[i], I[DEM, i], factor)
                a = min(left, float(cap))
                out[k] = a
                left -= a
            factor -= delta
            rnd += 1


@njit(cache=True)
def _wfq_class(size, thresholds):
    """First class whose threshold is >= ``size`` (the last class otherwise)."""
    nc = thresholds.shape[0]
    for q in range(nc):
        if size <= thresholds[q]:
            return q
    return nc - 1


refresh_stale_cache(globals())  # after every njit function of the module
