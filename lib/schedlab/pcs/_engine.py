"""Compiled event engine (numba): the same semantics as :mod:`schedlab.pcs.sim`, fast.

:mod:`schedlab.pcs.sim` is the readable reference (one ``heapq``, numpy arrays, policy
objects). This module runs the identical arithmetic in compiled loops: per-job state lives in
two 2-D arrays (floats ``F`` and ints ``I``, one row per field), the active list is an int
array in the authors' order, and policies are selected by a code: each policy hands its code,
parameters and variant flags over in one :class:`~schedlab.pcs.policies.KernelSpec`
(``Policy.kernel()``), which :func:`schedlab.pcs.sim.simulate` passes to :func:`run` as
plain arguments. Because arrivals are pre-sorted and only one completion is ever live, the
event queue is the merge of an arrival pointer with that single completion candidate
(completion first at equal times) — the same order the reference heap produces. Tests check
both engines against each other and against the authors' per-job files.

WFQ's class-level water-filling runs in exact fractions in Python (:func:`wfq_class_alloc`),
memoised per class-demand vector in a typed dict (hash key, verified on lookup, so any number
of classes); the compiled loop calls it (object mode) only for vectors it has not seen, and
only when the weights' common denominator is too large for the exact integer closed form
(:func:`class_alloc_exact`, the usual path). WFQ's predictor replays run in
:func:`_replay_wfq`, whose per-event work grows with the running jobs, not the queue.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numba import njit, objmode, types
from numba.typed import Dict

from schedlab.pcs.policies import water_fill

# float fields
SVC, REM, EREM, ESVC, ALLOC, ERR = range(6)
NF = 6
# int fields
SUB, DEM, STAT, START, ENDT, CLS, AID, SEENS, SEENC, INITD = range(10)
NI = 10
SUBMITTED, ACTIVE, QUEUED, PREEMPTED, END = 1, 2, 3, 4, 5
INF = np.iinfo(np.int64).max
NEVER_S = 2.0e11
#: relaxation rounds of a WFQ class pass whose demand caps a run memoises per job
OD_ROUNDS = 8
FIFO, SRSF, LAS, FS, AFS, WFQ, THEMIS = range(7)
#: :attr:`schedlab.pcs.policies.KernelSpec.code` -> the compiled loop's policy code
CODES = {"FIFO": FIFO, "SRSF": SRSF, "LAS": LAS, "FS": FS, "AFS": AFS, "WFQ": WFQ,
         "THEMIS": THEMIS}


def wfq_class_alloc(class_demand, rates_num, rates_den, gpus) -> np.ndarray:
    """Exact (Fraction) water-filling of class weights over class demands, as floats."""
    rates = [Fraction(int(n), int(d)) * int(gpus) for n, d in zip(rates_num, rates_den)]
    alloc = water_fill(rates, [int(c) for c in class_demand])
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
    pairwise tournament. The pairwise test's terms are cached per job (same floats).

    The tournament is a left fold over the candidates; handing a GPU out changes only the
    winner's terms (or removes it), so the fold's running candidates before the winner's
    position are the same for the next GPU: each GPU's tournament resumes at the winner's
    position from the candidate saved there instead of starting over (same winners).
    """
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
    # pref[q], ppos[q]: the fold's candidate after js[0..q], and its position in js
    pref = np.empty(n, dtype=np.int64)
    ppos = np.empty(n, dtype=np.int64)
    m_js = n
    g = gpus
    resume = 0
    while g > 0 and m_js > 0:
        if resume == 0:
            cand = js[0]
            cpos = 0
            pref[0] = cand
            ppos[0] = 0
            resume = 1
        else:
            cand = pref[resume - 1]
            cpos = ppos[resume - 1]
        for q in range(resume, m_js):
            m = js[q]
            if RT[m] < RT[cand]:
                lo, hi = m, cand
            else:
                lo, hi = cand, m
            if S0[lo] == 0:
                win = lo if S1[lo] > S1[hi] else hi
            elif A[lo] > B[hi]:
                win = lo
            else:
                win = hi
            if win != cand:
                cand = win
                cpos = q
            pref[q] = cand
            ppos[q] = cpos
        tmp[cand] += 1
        ic = act[cand]
        _afs_terms(rows[ic], tmp[cand], I[DEM, ic], F[EREM, ic], eps, cand, RT, S0, S1, A, B)
        if tmp[cand] == I[DEM, ic]:
            for q in range(cpos, m_js - 1):
                js[q] = js[q + 1]
            m_js -= 1
        resume = cpos
        g -= 1
    for k in range(n):
        out[k] = tmp[k]


@njit(cache=True)
def _class_alloc_cached(cd, rates_num, rates_den, gpus, cache):
    """Fraction water-filling memoised per class-demand vector, any number of classes.

    The key is a 64-bit hash of ``cd``; the stored value holds ``cd`` followed by the
    allocation, and a hit is used only if ``cd`` matches exactly (a collision recomputes).
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
    calloc = _class_alloc_py(cd.copy(), rates_num, rates_den, gpus)
    if h not in cache:
        v = np.empty(2 * nc)
        for c in range(nc):
            v[c] = float(cd[c])
            v[nc + c] = calloc[c]
        cache[h] = v
    return calloc


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
def _class_shares(cd, rates_num, rates_den, gpus, cache):
    """WFQ's GPUs per class for class demands ``cd``. ``rates_den[0] == 0``: ``rates_num``
    holds the integer weights P (:func:`integer_weights`), exact closed form; otherwise the
    memoised Fraction water-filling (a view into ``cache``: copy it to keep it)."""
    if rates_den[0] == 0:
        return class_alloc_exact(cd, rates_num, gpus)
    return _class_alloc_cached(cd, rates_num, rates_den, gpus, cache)


@njit(cache=True)
def _wfq(act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache, out, od):
    """WFQ over the active jobs ``act[:n]``: class shares by water-filling, then FIFO greedy
    with demand caps in each class, relaxed by ``delta`` while the share is not used up.
    ``od``: the run's demand-cap memo per main-array column (:func:`_wfq_class_pass`), or
    an empty array (local ids of a generic replay: no memo)."""
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
    calloc = _class_shares(cd, rates_num, rates_den, gpus, cache)
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


@njit(cache=True)
def _allocate(t, pcode, speedup, act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta,
              cache, out, hint, od):
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
        _themis(t, act, n, F, I, rows, gpus, speedup, out, hint)
    else:
        _wfq(act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache, out, od)


@njit(cache=True)
def _apply(t, pcode, speedup, act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta,
           cache, out, hint, od):
    if n == 0:
        return
    _allocate(t, pcode, speedup, act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta,
              cache, out, hint, od)
    _commit(t, act, n, F, I, out)


@njit(cache=True)
def _commit(t: int, act: np.ndarray, n: int, F: np.ndarray, I: np.ndarray,
            out: np.ndarray) -> None:
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
def _snapshot(act, n, F, I, rows, target, true_size):
    """A predictor replay's compact copy of the active jobs ``act[:n]``.

    Local id ``k`` is the job's position in the active list. Remaining sizes are replaced
    by their estimates; ``service`` (Themis's ``t_ideal``, LAS's attained service) is the
    estimate too unless ``true_size``. Returns ``(F2, I2, rows2, local id of target)``.
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
        if not true_size:
            F2[SVC, k] = F[ESVC, i]
        F2[REM, k] = F[EREM, i]
    return F2, I2, rows2, tgt


@njit(cache=True)
def _replay(t, act, n, F, I, rows, target, pcode, speedup, true_size, leases, gpus, rates_num,
            rates_den, zeta, delta, cache, counters, quantum):
    """Predict (start, end) of ``target`` from the active jobs, no arrivals, estimated sizes.

    ``true_size``: the replay keeps true sizes in ``service`` (:func:`_snapshot`);
    ``leases``: with a ``quantum``, lease ticks also fall inside the replay.
    """
    # the authors' snapshot copies sizes as their estimates (Themis, LAS: only if asked)
    F2, I2, rows2, tgt = _snapshot(act, n, F, I, rows, target, true_size)
    act2 = np.arange(n)
    out = np.zeros(n)
    m = n
    last = t
    tick = INF  # the authors' snapshot has no pending re-division tick
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
            return -1, -1
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
                return I2[START, tgt], tt
        if quantum > 0 and leases:
            tick = tt + quantum if m > 0 else INF
        _apply(tt, pcode, speedup, act2, m, F2, I2, rows2, gpus, rates_num, rates_den, zeta,
               delta, cache, out, hint, no_od)
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
    win = np.empty(cap, dtype=np.int64)   # main-array job ids, in active-list order
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
            return -1, -1
        tt = best_t
        counters[1] += 1
        dt = (tt - last) / 1e6
        for k in range(w):
            if stat[k] == ACTIVE:
                rem[k] -= _thr(rows[win[k]], alloc[k], dem[k]) * dt
        last = tt
        if win[best] == target:
            return start[best], tt
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


@njit(cache=True)
def _wfq_class_pass(c, members, cs, cl, touched, gid, I, rows, alloc, thr, stat, start,
                    calloc, cdc, zeta, delta, t, out, od):
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
def _replay_wfq(t, act, n, F, I, rows, target, gpus, rates_num, rates_den, zeta, delta,
                cache, counters, od):
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
    memo (:func:`_wfq_class_pass`).
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
    shares = _class_shares(cd, rates_num, rates_den, gpus, cache).copy()
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
            return -1, -1
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
            return start[tgt], tt
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
        calloc = _class_shares(cd, rates_num, rates_den, gpus, cache)
        for c2 in range(nc):
            if cl[c2] > 0 and (c2 == c or calloc[c2] != shares[c2]):
                touched[c2] = _wfq_class_pass(c2, members, cs[c2], cl[c2], touched, gid, I,
                                              rows, alloc, thr, stat, start, calloc, cd[c2],
                                              zeta, delta, tt, out, od)
            shares[c2] = calloc[c2]
        r = _wfq_running(members, cs, cl, touched, zero, nz, rem, alloc, stat, runi)
        t_end, j = _first_end(tt, runi, r, rem, alloc, thr)


@njit(cache=True)
def run(F, I, rows, pcode, gpus, predict, use_err, thresholds, rates_num, rates_den, zeta,
        delta, cache, est_start, est_end, counters, quantum, speedup, replay_true_size,
        replay_leases, fifo_window=True):
    """The main loop. Returns 0 on success, -1 if some job never finishes, -2 if a job
    completes with work left, -3 if a prediction never completes.

    ``predict``: one flag per job (uint8, arrival order): predict that job at its arrival.
    ``fifo_window``: FIFO replays through :func:`_replay_fifo` (False: the generic
    :func:`_replay`, kept to test one against the other).

    ``pcode``: one of :data:`CODES`; ``thresholds``, ``rates_num``/``rates_den`` (WFQ class
    weights; ``rates_den[0] == 0`` marks integer weights, :func:`integer_weights`),
    ``zeta``, ``delta``: WFQ's parameters; ``quantum``: lease tick (us, 0: none);
    ``speedup``, ``replay_true_size``, ``replay_leases``: the Themis/LAS variant flags of
    :class:`schedlab.pcs.policies.KernelSpec`.
    """
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
    hint = new_hint(N if pcode == THEMIS else 0)
    od = np.full((OD_ROUNDS, N if pcode == WFQ else 0), -1, dtype=np.int64)
    while ptr < N or cand >= 0:
        # at equal times: completion < re-division tick < arrival (the authors' Event order)
        t_arr = I[SUB, ptr] if ptr < N else INF
        kind = 2
        t = t_arr
        if tick <= t:  # a lease tick before an arrival at the same time
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
        _apply(t, pcode, speedup, act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta,
               cache, out, hint, od)
        cand_t, cand = _next_end(t, act, n, F, I, rows)
        if cand >= 0 and cand_t == INF:
            cand = -1
            if ptr >= N:
                return -1
        if arrival and predict[i]:
            if pcode == FIFO and quantum == 0 and fifo_window and _fifo_window_ok(act, n, F, I):
                s0, e0 = _replay_fifo(t, act, n, F, I, rows, i, gpus, counters)
            elif pcode == WFQ and quantum == 0:
                s0, e0 = _replay_wfq(t, act, n, F, I, rows, i, gpus, rates_num, rates_den,
                                     zeta, delta, cache, counters, od)
            else:
                s0, e0 = _replay(t, act, n, F, I, rows, i, pcode, speedup, replay_true_size,
                                 replay_leases, gpus, rates_num, rates_den, zeta, delta,
                                 cache, counters, quantum)
            est_start[i] = s0
            est_end[i] = e0
            if e0 == -1:
                return -3  # a prediction never completes: the run is invalid, stop early
    return 0


def new_cache():
    """An empty class-allocation cache for :func:`run` (any number of classes)."""
    return Dict.empty(key_type=types.int64, value_type=types.float64[:])
