"""Compiled :class:`~schedlab.pcs.policies.RandomisedAFS` runs (numba), bit-identical.

The readable specification is the reference engine with the policy's hooks
(:func:`schedlab.pcs.sim.simulate` with ``engine="reference"``:
:meth:`RandomisedAFS.allocate <schedlab.pcs.policies.RandomisedAFS.allocate>`,
:func:`~schedlab.pcs.hooks.next_end_heap`, :func:`~schedlab.pcs.hooks.coin_replay`). This
module runs the same steps in compiled loops on the flat ``F``/``I`` arrays of
:mod:`schedlab.pcs._engine_core`, whose event steps (next event, progress, arrival,
completion, commit, snapshot) and return codes it shares with the general loop
(:mod:`schedlab.pcs._engine`), so the floats are the same operations in the same order.

The policy draws from a legacy :class:`numpy.random.RandomState`; the compiled loop cannot
call it, so it carries the generator's MT19937 state itself (:func:`mt_from_randomstate`,
an int64 array: 624 key words, then the position) and reproduces numpy's legacy draws word
for word: ``choice(n)`` is the masked-rejection bounded integer (:func:`legacy_choice`) and
``uniform()`` the 53-bit double from two words (:func:`legacy_uniform`). Afterwards the
stream is handed back (:func:`mt_to_randomstate`), exactly where the reference run leaves it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from schedlab.pcs import _engine_core as E
from schedlab.pcs._engine_core import NEVER_FINISHES, OK, PREDICTION_NEVER_ENDS, WORK_LEFT

MT_N, MT_M = 624, 397
MATRIX_A, UPPER_MASK, LOWER_MASK = 0x9908B0DF, 0x80000000, 0x7FFFFFFF
#: index of the key position in the state array of :func:`mt_from_randomstate`
MT_POS = MT_N
# return codes (OK, NEVER_FINISHES, WORK_LEFT, PREDICTION_NEVER_ENDS) and their ERRORS
# messages: the core's, one set for both compiled loops


# --- numpy's legacy MT19937 draws
# 32-bit words are held in int64 so that numba never mixes signed and unsigned types (which
# it would promote to float); every value stays below 2**32 by construction.


@njit(cache=True)
def _mt_twist(mt: np.ndarray, i: int, j: int, k: int) -> None:
    """One recurrence step: word ``i`` from words ``i``, ``j`` (= i + 1) and ``k``."""
    y = (mt[i] & UPPER_MASK) | (mt[j] & LOWER_MASK)
    mt[i] = mt[k] ^ (y >> 1) ^ ((y & 1) * MATRIX_A)


@njit(cache=True)
def _mt_refill(mt: np.ndarray) -> None:
    """Regenerate all 624 key words (numpy's ``mt19937_gen``)."""
    for i in range(MT_N - MT_M):
        _mt_twist(mt, i, i + 1, i + MT_M)
    for i in range(MT_N - MT_M, MT_N - 1):
        _mt_twist(mt, i, i + 1, i + MT_M - MT_N)
    _mt_twist(mt, MT_N - 1, 0, MT_M - 1)
    mt[MT_POS] = 0


@njit(cache=True)
def mt_next32(mt: np.ndarray) -> int:
    """The next 32-bit output word (numpy's ``mt19937_next``: refill, then tempering)."""
    if mt[MT_POS] >= MT_N:
        _mt_refill(mt)
    pos = mt[MT_POS]
    y = mt[pos]
    mt[MT_POS] = pos + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y


@njit(cache=True)
def legacy_uniform(mt: np.ndarray) -> float:
    """``RandomState.uniform()``: a 53-bit double in [0, 1) from two words."""
    a = mt_next32(mt) >> 5
    b = mt_next32(mt) >> 6
    return (a * 67108864.0 + b) / 9007199254740992.0


@njit(cache=True)
def legacy_choice(mt: np.ndarray, n: int) -> int:
    """``RandomState.choice(n)`` (= ``randint(0, n)``) for ``1 <= n <= 2**32``.

    Legacy bounded integers use masked rejection: draw words, keep the low bits up to the
    smallest all-ones mask covering ``n - 1``, retry while above ``n - 1``. ``n = 1`` draws
    nothing.
    """
    top = n - 1
    if top == 0:
        return 0
    mask = top
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    while True:
        v = mt_next32(mt) & mask
        if v <= top:
            return v


def mt_from_randomstate(rng: np.random.RandomState) -> tuple[np.ndarray, dict]:
    """The MT19937 state of ``rng`` as the compiled loop's array, and the full state dict.

    Raises
    ------
    TypeError
        ``rng`` is not a legacy ``RandomState`` on MT19937 (e.g. a ``Generator``).
    """
    if not isinstance(rng, np.random.RandomState):
        raise TypeError(
            f"the compiled RandomisedAFS needs a numpy RandomState, not "
            f"{type(rng).__name__}; use engine='reference'"
        )
    state = rng.get_state(legacy=False)
    if state["bit_generator"] != "MT19937":
        raise TypeError(
            f"the compiled RandomisedAFS emulates MT19937, not "
            f"{state['bit_generator']}; use engine='reference'"
        )
    mt = np.empty(MT_N + 1, dtype=np.int64)
    mt[:MT_N] = state["state"]["key"]
    mt[MT_POS] = state["state"]["pos"]
    return mt, state


def mt_to_randomstate(rng: np.random.RandomState, mt: np.ndarray, state: dict) -> None:
    """Put the key words and position ``mt`` back into ``rng`` (Gaussian cache unchanged:
    neither draw touches it)."""
    new = dict(state)
    new["state"] = {"key": mt[:MT_N].astype(np.uint32), "pos": int(mt[MT_POS])}
    rng.set_state(new)


# --- the allocator


@njit(cache=True)
def _gpu_gain(p: int, d: int) -> float:
    """Relative gain of one more GPU by GPU count (zero at full demand); as the policy's."""
    p1 = p + 1 if p < d else p
    return (p1 - p) / p1


@njit(cache=True)
def _top_priority(mt: np.ndarray, n: int, rem: np.ndarray, dem: np.ndarray, cur: np.ndarray) -> int:
    """The winner for the next GPU (``RandomisedAFS._top_priority``, same draws).

    The winner's side of each pairwise comparison (GPUs, remaining work, time per GPU and
    gain of one more GPU) only changes when the winner does: it is computed once per
    winner, not once per challenger; the same operations on the same values, so the same
    winner.
    """
    a = legacy_choice(mt, n)
    while dem[a] == 0:
        a = legacy_choice(mt, n)
    c_a, r_a = cur[a], rem[a]
    t_a = r_a / c_a if c_a != 0 else np.inf
    g_a = _gpu_gain(c_a, dem[a])
    for b in range(n):
        if b == a or dem[b] == 0:
            continue
        c_b, r_b = cur[b], rem[b]
        if c_a == 0 and c_b == 0:
            if not r_a < r_b:
                a, r_a, g_a = b, r_b, _gpu_gain(c_b, dem[b])
            continue
        t_b = r_b / c_b if c_b != 0 else np.inf
        if t_a >= t_b:
            g_b = _gpu_gain(c_b, dem[b])
            if not g_a > g_b:
                a, c_a, r_a, t_a, g_a = b, c_b, r_b, t_b, g_b
    return a


@njit(cache=True)
def _allocate(
    mt: np.ndarray,
    act: np.ndarray,
    n: int,
    F: np.ndarray,
    I: np.ndarray,
    gpus: int,
    rem: np.ndarray,
    dem: np.ndarray,
    cur: np.ndarray,
    out: np.ndarray,
) -> None:
    """``RandomisedAFS.allocate`` over ``act[:n]`` into ``out``; ``rem``, ``dem``, ``cur``
    are scratch arrays of length >= n (allocated once per run: this is called per event)."""
    total = 0
    for k in range(n):
        i = act[k]
        rem[k] = F[E.REM, i]
        dem[k] = I[E.DEM, i]
        cur[k] = 0
        total += dem[k]
    residual = min(total, gpus)
    while residual > 0:
        a = _top_priority(mt, n, rem, dem, cur)
        if cur[a] < dem[a]:  # a full winner wastes the draw, as in the policy
            cur[a] += 1
            residual -= 1
    for k in range(n):
        out[k] = float(cur[k])


@njit(cache=True)
def _apply(
    t: int,
    mt: np.ndarray,
    act: np.ndarray,
    n: int,
    F: np.ndarray,
    I: np.ndarray,
    gpus: int,
    scratch_f: np.ndarray,
    scratch_i: np.ndarray,
    out: np.ndarray,
) -> None:
    """Allocate and commit (the reference ``apply_allocation``); no-op without active jobs."""
    if n == 0:
        return
    _allocate(mt, act, n, F, I, gpus, scratch_f, scratch_i[0], scratch_i[1], out)
    E._commit(t, act, n, F, I, out)


# --- the old simulator's event heap


@njit(cache=True)
def _siftdown(ht: np.ndarray, hj: np.ndarray, startpos: int, pos: int) -> None:
    """``heapq._siftdown`` on parallel arrays, comparing times only (``<``)."""
    nt, nj = ht[pos], hj[pos]
    while pos > startpos:
        parent = (pos - 1) >> 1
        if not nt < ht[parent]:
            break
        ht[pos], hj[pos] = ht[parent], hj[parent]
        pos = parent
    ht[pos], hj[pos] = nt, nj


@njit(cache=True)
def _siftup(ht: np.ndarray, hj: np.ndarray, endpos: int, pos: int) -> None:
    """``heapq._siftup``: move the smaller child up to a leaf, then sift down."""
    startpos = pos
    nt, nj = ht[pos], hj[pos]
    child = 2 * pos + 1
    while child < endpos:
        right = child + 1
        if right < endpos and not ht[child] < ht[right]:
            child = right
        ht[pos], hj[pos] = ht[child], hj[child]
        pos = child
        child = 2 * pos + 1
    ht[pos], hj[pos] = nt, nj
    _siftdown(ht, hj, startpos, pos)


@njit(cache=True)
def heapify(ht: np.ndarray, hj: np.ndarray, m: int) -> None:
    """``heapq.heapify`` of ``m`` entries (times ``ht``, payload ``hj``), in place.

    CPython's C heapify visits subtrees in another order above 2500 entries, but each
    sift only touches its own subtree, so the result is the same.
    """
    for i in range(m // 2 - 1, -1, -1):
        _siftup(ht, hj, m, i)


@njit(cache=True)
def _next_end_heap(
    t: int,
    act: np.ndarray,
    n: int,
    F: np.ndarray,
    I: np.ndarray,
    rows: np.ndarray,
    ht: np.ndarray,
    hj: np.ndarray,
) -> tuple[int, int]:
    """:func:`schedlab.pcs.hooks.next_end_heap`: the top of the heapified end events of the
    running jobs (and of jobs with nothing left), pushed in active order."""
    m = 0
    for k in range(n):
        i = act[k]
        rem, al = F[E.REM, i], F[E.ALLOC, i]
        if rem == 0 or al != 0:
            ht[m] = E._end_time(t, rem, al, rows[i], I[E.DEM, i])
            hj[m] = i
            m += 1
    if m == 0:
        return E.INF, -1
    heapify(ht, hj, m)
    return ht[0], hj[0]


# --- predictor and main loop


@njit(cache=True)
def _coin_replay(
    t: int,
    act: np.ndarray,
    n: int,
    F: np.ndarray,
    I: np.ndarray,
    rows: np.ndarray,
    target: int,
    gpus: int,
    mt: np.ndarray,
    scratch_f: np.ndarray,
    scratch_i: np.ndarray,
    counters: np.ndarray,
) -> tuple[int, int, int]:
    """:func:`schedlab.pcs.hooks.coin_replay`'s predictor after its coin: ``(code, start,
    end)`` of ``target`` (``code``: ``OK``, ``PREDICTION_NEVER_ENDS`` or ``WORK_LEFT``)."""
    F2, I2, rows2, tgt = E._snapshot(act, n, F, I, rows, target, E.REPLAY_ESTIMATE)
    act2 = np.arange(n)
    out = np.zeros(n)
    ht = np.empty(n, dtype=np.int64)
    hj = np.empty(n, dtype=np.int64)
    m = n
    last = t
    t_end, j = _next_end_heap(t, act2, m, F2, I2, rows2, ht, hj)
    while True:
        if j < 0 or t_end == E.INF:
            return PREDICTION_NEVER_ENDS, -1, -1
        counters[1] += 1
        E._progress(t_end, last, act2, m, F2, I2, rows2, False, False)
        last = t_end
        if E._work_left(F2, j):
            return WORK_LEFT, -1, -1
        m = E._complete(j, t_end, act2, m, F2, I2)
        # the old code re-divides at the target's own completion too (moves the stream)
        _apply(t_end, mt, act2, m, F2, I2, gpus, scratch_f, scratch_i, out)
        if j == tgt:
            return OK, I2[E.START, tgt], t_end
        t_end, j = _next_end_heap(t_end, act2, m, F2, I2, rows2, ht, hj)


@njit(cache=True)
def run(
    F: np.ndarray,
    I: np.ndarray,
    rows: np.ndarray,
    gpus: int,
    predict: np.ndarray,
    use_err: bool,
    mt: np.ndarray,
    est_start: np.ndarray,
    est_end: np.ndarray,
    counters: np.ndarray,
) -> int:
    """The main loop of a RandomisedAFS run; returns ``OK`` or a failure code (the core's
    return codes, :data:`~schedlab.pcs._engine_core.ERRORS`).

    ``F``, ``I``, ``rows``, ``predict``, ``use_err``, ``est_*``, ``counters``: as
    :class:`schedlab.pcs._engine.EngineArgs`; ``mt``: the policy's stream
    (:func:`mt_from_randomstate`), advanced in place.
    """
    N = F.shape[1]
    act = np.empty(N, dtype=np.int64)
    out = np.zeros(N)
    ht = np.empty(N, dtype=np.int64)
    hj = np.empty(N, dtype=np.int64)
    scratch_f = np.empty(N)
    scratch_i = np.empty((2, N), dtype=np.int64)
    n = 0
    ptr = 0
    last = I[E.SUB, 0]
    cand_t = E.INF
    cand = -1
    while ptr < N or cand >= 0:
        # no lease ticks: arrivals merged with the one live completion (first at equal times)
        kind, t = E._next_event(ptr, N, I, cand, cand_t, E.INF)
        arrival = kind == E.ARRIVAL
        i = ptr if arrival else cand
        counters[0] += 1
        E._progress(t, last, act, n, F, I, rows, use_err, True)
        last = t
        if arrival:
            ptr += 1
            n = E._arrive(i, act, n, F, I, use_err)
        else:
            if E._work_left(F, i):
                return WORK_LEFT
            n = E._complete(i, t, act, n, F, I)
        _apply(t, mt, act, n, F, I, gpus, scratch_f, scratch_i, out)
        cand_t, cand = _next_end_heap(t, act, n, F, I, rows, ht, hj)
        if cand >= 0 and cand_t == E.INF:
            cand = -1
        if arrival and predict[i]:
            legacy_uniform(mt)  # the old "predict this arrival?" coin, always true
            rc, s0, e0 = _coin_replay(t, act, n, F, I, rows, i, gpus, mt, scratch_f, scratch_i, counters)
            if rc != OK:
                return rc
            est_start[i] = s0
            est_end[i] = e0
    return NEVER_FINISHES if n > 0 else OK


E.refresh_stale_cache(globals())  # after every njit function of the module
