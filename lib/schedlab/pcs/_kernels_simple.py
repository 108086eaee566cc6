"""Compiled kernels of the simple policies: FIFO, SRSF and LAS (priority, then greedy),
Max-Min fair share and AFS-L's tournament.

Each kernel writes the GPUs of the active jobs ``act[:n]`` into ``out`` (aligned with
``act``, which the priority kernel may reorder), with the same float operations as the
policy's reference code in :mod:`schedlab.pcs.policies`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from schedlab.pcs._engine_core import refresh_stale_cache
from schedlab.pcs._engine_core import DEM, EREM, FIFO, REM, SRSF, SUB, SVC


@njit(cache=True)
def _greedy(act, n, I, gpus, out):
    """Each job of ``act[:n]`` in order takes ``min(left, demand)``."""
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
    """Max-Min fair share: the authors' float water-filling over ``act[:n]``."""
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
    """AFS's remaining time of a job with estimate ``est`` at ``a`` GPUs."""
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
def _priority(pcode, act, n, F, I, rows, gpus, out):
    """FIFO, SRSF or LAS: a stable sort of ``act[:n]`` by the policy's key (in place, as the
    authors' ``sorted(self._active_apps, ...)``), then each job in turn takes
    ``min(left, demand)``."""
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


refresh_stale_cache(globals())  # after every njit function of the module
