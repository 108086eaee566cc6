"""Compiled event engine (numba): the same semantics as :mod:`schedlab.pcs.sim`, fast.

:mod:`schedlab.pcs.sim` is the readable reference (one ``heapq``, numpy arrays, policy
objects). This module runs the identical arithmetic in compiled loops: per-job state lives in
two 2-D arrays (floats ``F`` and ints ``I``, one row per field), the active list is an int
array in the authors' order, and policies are selected by a code. Because arrivals are
pre-sorted and only one completion is ever live, the event queue is the merge of an arrival
pointer with that single completion candidate (completion first at equal times) — the same
order the reference heap produces. Tests check both engines against each other and against
the authors' per-job files.

WFQ's class-level water-filling runs in exact fractions in Python (:func:`wfq_class_alloc`),
memoised per class-demand vector in a typed dict; the compiled loop calls it (object mode)
only for vectors it has not seen.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numba import njit, objmode, types
from numba.typed import Dict

# float fields
SVC, REM, EREM, ESVC, ALLOC, ERR = range(6)
NF = 6
# int fields
SUB, DEM, STAT, START, ENDT, CLS, AID, SEENS, SEENC, INITD = range(10)
NI = 10
SUBMITTED, ACTIVE, QUEUED, PREEMPTED, END = 1, 2, 3, 4, 5
INF = np.iinfo(np.int64).max
NEVER_S = 2.0e11
FIFO, SRSF, LAS, FS, AFS, WFQ, THEMIS = range(7)
CODES = {"FIFO": FIFO, "SRSF": SRSF, "LAS": LAS, "FS": FS, "AFS": AFS, "PCS": WFQ,
         "THEMIS": THEMIS}
MAXC = 8  # most WFQ classes supported by the compiled cache key


def wfq_class_alloc(class_demand, rates_num, rates_den, gpus) -> np.ndarray:
    """Exact (Fraction) water-filling of class weights over class demands, as floats."""
    nc = len(rates_num)
    rates = [Fraction(int(rates_num[i]), int(rates_den[i])) * int(gpus) for i in range(nc)]
    demand = [int(class_demand[i]) for i in range(nc)]
    alloc = [0] * nc
    total = sum(demand)
    residual = sum(rates)
    tries = 0
    while residual > 0 and total > 0:
        for i in range(nc):
            a = min(rates[i], demand[i])
            alloc[i] += a
            demand[i] -= a
            residual -= a
            total -= a
            if demand[i] == 0:
                rates[i] = 0
                demand[i] = 0
        if residual == 0 or total == 0:
            break
        r = sum(rates)
        if r > 0:
            rates = [Fraction(residual * rates[i], r) for i in range(nc)]
        tries += 1
        if tries > 100:
            break
    return np.array([float(a) for a in alloc], dtype=np.float64)


@njit(cache=True)
def _thr(row, a, d):
    if a > d:
        return row[d]
    ic = np.int64(np.ceil(a))
    i_f = np.int64(np.floor(a))
    m = row[ic] - row[i_f]
    c = row[ic] - (m * ic)
    return m * a + c


@njit(cache=True)
def _to_us(x):
    ip = np.trunc(x)
    return np.int64(ip) * 1000000 + np.int64(np.rint((x - ip) * 1e6))


@njit(cache=True)
def _progress(t, last, act, n, F, I, rows, use_err, count_seen):
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
def _next_end(t, act, n, F, I, rows):
    best_t = INF
    best = -1
    for k in range(n):
        i = act[k]
        rem = F[REM, i]
        al = F[ALLOC, i]
        if rem == 0:
            e = t
        elif al == 0:
            e = INF
        else:
            th = _thr(rows[i], al, I[DEM, i])
            if th == 0:
                e = INF
            else:
                x = rem / th
                if np.isfinite(x) and x < NEVER_S and x > -NEVER_S:
                    e = t + _to_us(x)
                else:
                    e = INF
        if best < 0 or e < best_t:
            best_t = e
            best = i
    return best_t, best


@njit(cache=True)
def _greedy(act, n, I, gpus, out):
    total = 0
    for k in range(n):
        total += I[DEM, act[k]]
    left = min(total, gpus)
    for k in range(n):
        d = I[DEM, act[k]]
        a = min(left, d)
        out[k] = a
        left -= a


@njit(cache=True)
def _fair(act, n, I, gpus, out):
    residual = float(gpus)
    dem = np.empty(n)
    share = np.empty(n)
    for k in range(n):
        out[k] = 0.0
        share[k] = residual / n
        dem[k] = I[DEM, act[k]]
    total = 0.0
    for k in range(n):
        total += I[DEM, act[k]]
    tries = 0
    while not abs(residual) <= 1e-6 and not abs(total) <= 1e-6:
        for k in range(n):
            a = min(share[k], dem[k])
            out[k] += a
            dem[k] -= a
            residual -= a
            total -= a
            if dem[k] == 0:
                share[k] = 0.0
        if abs(residual) <= 1e-6 or abs(total) <= 1e-6:
            break
        r = 0.0
        for k in range(n):
            r += share[k]
        if r > 0:
            for k in range(n):
                share[k] = residual * share[k] / r
        tries += 1
        if tries > 100:
            break


@njit(cache=True)
def _rt(row, a, d, est):
    th = row[d] if a > d else row[a]
    if th > 0:
        return est / th
    return np.inf


@njit(cache=True)
def _afs_terms(row, g, d, est, eps, k, RT, S0, S1, A, B):
    # per-job terms of the authors' pairwise test, recomputed only when the job's GPUs change
    RT[k] = _rt(row, g, d, est)
    s0 = 1.0 / (RT[k] + eps)
    s1 = 1.0 / (_rt(row, g + 1, d, est) + eps)
    S0[k] = s0
    S1[k] = s1
    A[k] = (s1 - s0) / s0 if s0 != 0 else 0.0  # only used when s0 != 0
    B[k] = (s1 - s0) / s1


@njit(cache=True)
def _afs(act, n, F, I, rows, gpus, out):
    """The authors' ``alg_c_concept``: each GPU goes to the winner of a left-to-right
    pairwise tournament. The pairwise test's terms are cached per job (same floats)."""
    eps = 1e-7
    tmp = np.zeros(n, dtype=np.int64)
    RT = np.empty(n)
    S0 = np.empty(n)
    S1 = np.empty(n)
    A = np.empty(n)
    B = np.empty(n)
    for k in range(n):
        i = act[k]
        _afs_terms(rows[i], 0, I[DEM, i], F[EREM, i], eps, k, RT, S0, S1, A, B)
    js = np.arange(n)
    m_js = n
    g = gpus
    while g > 0 and m_js > 0:
        cand = js[0]
        for q in range(1, m_js):
            m = js[q]
            if RT[m] < RT[cand]:
                lo, hi = m, cand
            else:
                lo, hi = cand, m
            if S0[lo] == 0:
                cand = lo if S1[lo] > S1[hi] else hi
            elif A[lo] > B[hi]:
                cand = lo
            else:
                cand = hi
        tmp[cand] += 1
        ic = act[cand]
        _afs_terms(rows[ic], tmp[cand], I[DEM, ic], F[EREM, ic], eps, cand, RT, S0, S1, A, B)
        if tmp[cand] == I[DEM, ic]:
            k = 0
            for q in range(m_js):
                if js[q] != cand:
                    js[k] = js[q]
                    k += 1
            m_js = k
        g -= 1
    for k in range(n):
        out[k] = tmp[k]


@njit(cache=True)
def _class_alloc_py(cd, rates_num, rates_den, gpus):
    with objmode(res="float64[:]"):
        res = wfq_class_alloc(cd, rates_num, rates_den, gpus)
    return res


def integer_weights(rates_num, rates_den):
    """Class weights as integers ``P`` over a common denominator ``L`` (``w_i = P_i/L``)."""
    import math

    L = 1
    for d in rates_den:
        L = L * int(d) // math.gcd(L, int(d))
    P = np.array([int(n) * (L // int(d)) for n, d in zip(rates_num, rates_den)], dtype=np.int64)
    return P, L


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
    total = 0
    for i in range(nc):
        total += cd[i]
    if total <= gpus:
        for i in range(nc):
            out[i] = cd[i]
        return out
    sat = np.zeros(nc, dtype=np.bool_)
    for i in range(nc):
        if cd[i] == 0:
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
            if sat[i]:
                rest -= cd[i]
    pu = 0
    for i in range(nc):
        if not sat[i]:
            pu += P[i]
    for i in range(nc):
        if sat[i]:
            out[i] = cd[i]
        elif pu > 0:
            out[i] = float(rest * P[i]) / float(pu)
    return out


@njit(cache=True)
def _wfq(act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache, out):
    nc = rates_num.shape[0]
    cd = np.zeros(MAXC, dtype=np.int64)
    for k in range(n):
        i = act[k]
        cd[I[CLS, i]] += I[DEM, i]
    if rates_den[0] == 0:
        # rates_num holds the integer weights P (see integer_weights): exact closed form
        calloc = class_alloc_exact(cd[:nc], rates_num, gpus)
    else:
        key = (cd[0], cd[1], cd[2], cd[3], cd[4], cd[5], cd[6], cd[7])
        if key in cache:
            calloc = cache[key]
        else:
            calloc = _class_alloc_py(cd[:nc].copy(), rates_num, rates_den, gpus)
            cache[key] = calloc
    # members of each class in app-id order
    for c in range(nc):
        m = 0
        for k in range(n):
            if I[CLS, act[k]] == c:
                m += 1
        if m == 0:
            continue
        pos = np.empty(m, dtype=np.int64)
        aid = np.empty(m, dtype=np.int64)
        q = 0
        for k in range(n):
            if I[CLS, act[k]] == c:
                pos[q] = k
                aid[q] = I[AID, act[k]]
                q += 1
        order = np.argsort(aid, kind="mergesort")
        start = calloc[c]
        left = start
        factor = zeta
        while left > 0.0:
            left = start
            for q in range(m):
                k = pos[order[q]]
                i = act[k]
                d = I[DEM, i]
                od = d
                for g in range(1, d + 1):
                    if rows[i, g] / float(g) < factor:
                        od = g - 1
                        break
                a = min(left, float(od))
                out[k] = a
                left -= a
            factor -= delta


@njit(cache=True)
def _themis_keys(t, act, pool, lo, m, residual, F, I, gpus, keys):
    for q in range(lo, m):
        i = act[pool[q]]
        ma = min(residual, I[DEM, i])
        if ma > 0:
            contention = I[SEENS, i] / I[SEENC, i]
            t_id = F[SVC, i] / min(gpus / contention, float(I[INITD, i]))
            t_sh = (t - I[SUB, i]) / 1e6 + F[REM, i] / ma
            keys[q] = t_sh / t_id
        else:
            keys[q] = 1.0


@njit(cache=True)
def _themis_sort(act, pool, lo, m, I, keys, sufmax):
    # stable descending sort of pool[lo:m] (Python's sorted(reverse=True) keeps ties)
    order = np.argsort(-keys[lo:m], kind="mergesort")
    seg = pool[lo:m].copy()
    kseg = keys[lo:m].copy()
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
def _themis(t, act, n, F, I, gpus, out):
    """The authors' greedy: re-sort by rho after every hand-out, take the top.

    A job's rho only changes when ``min(left, demand)`` does, i.e. when some remaining
    demand exceeds what is left; otherwise the stable re-sort of an already sorted pool is
    the identity and is skipped (same result, O(n log n) per event instead of O(G n log n)).
    """
    total = 0
    for k in range(n):
        out[k] = 0.0
        total += I[DEM, act[k]]
    residual = min(total, gpus)
    pool = np.arange(n)
    keys = np.empty(n)
    sufmax = np.zeros(n, dtype=np.int64)
    _themis_keys(t, act, pool, 0, n, residual, F, I, gpus, keys)
    _themis_sort(act, pool, 0, n, I, keys, sufmax)
    p = 0
    while residual > 0:
        top = pool[p]
        a = min(residual, I[DEM, act[top]])
        out[top] = a
        residual -= a
        p += 1
        if residual > 0 and p < n and sufmax[p] > residual:
            _themis_keys(t, act, pool, p, n, residual, F, I, gpus, keys)
            _themis_sort(act, pool, p, n, I, keys, sufmax)


@njit(cache=True)
def _allocate(t, pcode, act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache,
              out):
    if pcode == FIFO or pcode == SRSF or pcode == LAS:
        keys = np.empty(n)
        for k in range(n):
            i = act[k]
            if pcode == FIFO:
                keys[k] = I[SUB, i]
            elif pcode == SRSF:
                d = I[DEM, i]
                keys[k] = (d * F[EREM, i]) / rows[i, d]
            else:
                keys[k] = F[SVC, i] - F[REM, i]
        srt = True
        for k in range(1, n):
            if keys[k] < keys[k - 1]:
                srt = False
                break
        if not srt:  # a stable sort of sorted keys is the identity: skip it
            order = np.argsort(keys, kind="mergesort")
            tmp = act[:n].copy()
            for k in range(n):
                act[k] = tmp[order[k]]
        _greedy(act, n, I, gpus, out)
    elif pcode == FS:
        _fair(act, n, I, gpus, out)
    elif pcode == AFS:
        _afs(act, n, F, I, rows, gpus, out)
    elif pcode == THEMIS:
        _themis(t, act, n, F, I, gpus, out)
    else:
        _wfq(act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache, out)


@njit(cache=True)
def _apply(t, pcode, act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache, out):
    if n == 0:
        return
    _allocate(t, pcode, act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache,
              out)
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
    k = 0
    for q in range(n):
        if act[q] != i:
            act[k] = act[q]
            k += 1
    return k


@njit(cache=True)
def _replay(t, act, n, F, I, rows, target, pcode, gpus, rates_num, rates_den, zeta, delta,
            cache, counters, quantum):
    """Predict (start, end) of ``target`` from the active jobs, no arrivals, estimated sizes."""
    F2 = np.empty((NF, n))
    I2 = np.empty((NI, n), dtype=np.int64)
    rows2 = np.empty((n, rows.shape[1]))
    act2 = np.arange(n)
    tgt = -1
    for k in range(n):
        i = act[k]
        for f in range(NF):
            F2[f, k] = F[f, i]
        for f in range(NI):
            I2[f, k] = I[f, i]
        rows2[k] = rows[i]
        if i == target:
            tgt = k
        # the authors' snapshot copies sizes as their estimates
        F2[SVC, k] = F[ESVC, i]
        F2[REM, k] = F[EREM, i]
    out = np.zeros(n)
    m = n
    last = t
    tick = INF  # the authors' snapshot has no pending re-division tick
    t_end, j = _next_end(t, act2, m, F2, I2, rows2)
    while True:
        has_end = j >= 0 and t_end != INF
        if not has_end and tick == INF:
            return -1, -1
        is_end = has_end and t_end <= tick
        tt = t_end if is_end else tick
        counters[1] += 1
        _progress(tt, last, act2, m, F2, I2, rows2, False, quantum > 0)
        last = tt
        if is_end:
            I2[DEM, j] = 0
            I2[STAT, j] = END
            m = _remove(act2, m, j)
            if j == tgt:
                return I2[START, tgt], tt
        if quantum > 0:
            tick = tt + quantum if m > 0 else INF
        _apply(tt, pcode, act2, m, F2, I2, rows2, gpus, rates_num, rates_den, zeta, delta,
               cache, out)
        t_end, j = _next_end(tt, act2, m, F2, I2, rows2)


@njit(cache=True)
def run(F, I, rows, pcode, gpus, predict, use_err, thresholds, rates_num, rates_den, zeta,
        delta, cache, est_start, est_end, counters, quantum):
    """The main loop. Returns 0 on success, -1 if some job never finishes."""
    N = F.shape[1]
    act = np.empty(N, dtype=np.int64)
    out = np.zeros(N)
    n = 0
    ptr = 0
    last = I[SUB, 0]
    cand_t = INF
    cand = -1
    nc = thresholds.shape[0]
    tick = INF
    while ptr < N or cand >= 0:
        # at equal times: completion < re-division tick < arrival (the authors' Event order)
        t_arr = I[SUB, ptr] if ptr < N else INF
        kind = 2
        t = t_arr
        if tick < t:
            kind = 1
            t = tick
        if cand >= 0 and cand_t <= t:
            kind = 0
            t = cand_t
        arrival = kind == 2
        if kind == 0:
            i = cand
        elif kind == 2:
            i = ptr
            ptr += 1
        else:
            i = -1
        counters[0] += 1
        _progress(t, last, act, n, F, I, rows, use_err, True)
        last = t
        if arrival:
            act[n] = i
            n += 1
            I[STAT, i] = SUBMITTED
            I[SEENS, i] = n
            I[SEENC, i] = 1
            if use_err:
                e = max(F[REM, i] * F[ERR, i], 1e-2)
                F[EREM, i] = e
                F[ESVC, i] = e
            if pcode == WFQ:
                s = F[ESVC, i]
                c = nc - 1
                for q in range(nc):
                    if s <= thresholds[q]:
                        c = q
                        break
                I[CLS, i] = c
        elif kind == 0:
            if abs(F[REM, i]) > 0.01:
                return -2
            I[DEM, i] = 0
            I[STAT, i] = END
            I[ENDT, i] = t
            n = _remove(act, n, i)
        if quantum > 0:
            tick = t + quantum if n > 0 else INF
        _apply(t, pcode, act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache,
               out)
        cand_t, cand = _next_end(t, act, n, F, I, rows)
        if cand >= 0 and cand_t == INF:
            cand = -1
            if ptr >= N:
                return -1
        if arrival and predict:
            s0, e0 = _replay(t, act, n, F, I, rows, i, pcode, gpus, rates_num, rates_den,
                             zeta, delta, cache, counters, quantum)
            est_start[i] = s0
            est_end[i] = e0
    return 0


def new_cache():
    """An empty class-allocation cache for :func:`run`."""
    return Dict.empty(key_type=types.UniTuple(types.int64, MAXC),
                      value_type=types.float64[:])
