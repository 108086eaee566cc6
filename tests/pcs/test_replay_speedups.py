"""The replay speed-ups keep every float: Themis's hinted first sort and partial re-keys, and
WFQ's skipped class passes (the engines' outputs are compared in test_pcs_sim/test_engine_classes;
these check the pieces against their plain versions on adversarial inputs)."""

from __future__ import annotations

import numpy as np
import pytest

from schedlab.pcs import _engine_core as E
from schedlab.pcs._kernels_simple import _afs
from schedlab.pcs._kernels_themis import _hinted_pool, _themis, _themis_keys, _themis_sort, new_hint

KEYS = {
    "random": lambda rng, n: rng.normal(size=n),
    "ties": lambda rng, n: rng.integers(0, 4, n).astype(float),
    "some_ties": lambda rng, n: rng.integers(0, 80, n).astype(float),
    "nearly_sorted": lambda rng, n: np.sort(rng.normal(size=n))[::-1] + rng.normal(scale=1e-3, size=n),
    "nan": lambda rng, n: np.where(rng.random(n) < 0.05, np.nan, rng.normal(size=n)),
    "inf": lambda rng, n: np.where(rng.random(n) < 0.05, np.inf, rng.normal(size=n)),
}


def _near_order(rng, keys_by_pos):
    """The sorted order with every run of equal keys reversed and a few neighbours swapped:
    what the previous call may leave (cheap for the insertion sort, wrong on ties)."""
    order = np.argsort(-keys_by_pos, kind="mergesort")
    k = keys_by_pos[order]
    out, a = [], 0
    for b in range(1, len(order) + 1):
        if b == len(order) or not k[b] == k[a]:
            out.extend(order[a:b][::-1])
            a = b
    out = np.array(out)
    for q in rng.integers(0, len(out) - 1, 10):
        out[q], out[q + 1] = out[q + 1], out[q]
    return out


@pytest.mark.parametrize("case", sorted(KEYS))
@pytest.mark.parametrize("start", ["random", "near"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hinted_first_sort_is_the_stable_sort_of_positions(case, start, seed):
    # whatever order the previous call left, the first sort must give the stable
    # descending mergesort of the active-list positions (what Themis's re-sort from
    # positions 0..n-1 gave), and remember it for the next call
    rng = np.random.default_rng(seed)
    n = 250
    keys_by_pos = KEYS[case](rng, n)
    act = rng.permutation(1000)[:n].astype(np.int64)  # job ids, not positions
    I = np.zeros((E.NI, 1000), dtype=np.int64)
    I[E.DEM] = rng.integers(1, 9, 1000)
    hint = new_hint(1000)
    # an older order (random, or nearly the answer: cheap enough for the insertion sort),
    # without the jobs that are new since
    older = rng.permutation(n) if start == "random" else _near_order(rng, keys_by_pos)
    prev = act[older[older < n - (20 if start == "random" else 2)]]
    hint[0, : len(prev)] = prev
    hint[0, 1000] = len(prev)
    pool = np.empty(n, dtype=np.int64)
    _hinted_pool(act, n, hint, pool)
    assert sorted(pool.tolist()) == list(range(n))
    keys = keys_by_pos[pool].copy()
    sufmax = np.zeros(n, dtype=np.int64)
    _themis_sort(act, pool, 0, n, I, keys, sufmax, True)
    want = np.argsort(-keys_by_pos, kind="mergesort")
    np.testing.assert_array_equal(pool, want)
    np.testing.assert_array_equal(keys, keys_by_pos[want])
    dem = I[E.DEM, act[pool]]
    np.testing.assert_array_equal(sufmax, np.maximum.accumulate(dem[::-1])[::-1])


def _themis_state(rng, n_max=60):
    """Active jobs with GPUs, queued jobs, ties (copied jobs) and a few zero sizes."""
    N = n_max
    F = np.zeros((E.NF, N))
    I = np.zeros((E.NI, N), dtype=np.int64)
    I[E.DEM] = rng.choice([1, 1, 2, 4, 8, 16], N)
    I[E.INITD] = I[E.DEM]
    I[E.SUB] = np.sort(rng.integers(0, 10_000_000, N))
    F[E.SVC] = rng.exponential(3000.0, N)
    F[E.REM] = F[E.SVC] * rng.random(N)
    F[E.REM, rng.random(N) < 0.05] = 0.0
    I[E.SEENS] = rng.integers(1, 500, N)
    I[E.SEENC] = rng.integers(1, 50, N)
    dup = rng.integers(0, N, N // 4)  # exact copies of other jobs: equal keys
    for a, b in zip(dup[::2], dup[1::2]):
        F[:, b], I[:, b] = F[:, a], I[:, a]
    rows = np.zeros((N, 17))
    g = np.arange(17, dtype=float)
    for i in range(N):
        rows[i] = g ** rng.uniform(0.6, 1.0)
    return F, I, rows


@pytest.mark.parametrize("speedup", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_themis_with_a_hint_allocates_as_without(speedup, seed):
    # a sequence of calls on an active list that loses and gains jobs, time moving on:
    # the hinted allocation equals the plain one at every call
    rng = np.random.default_rng(seed)
    F, I, rows = _themis_state(rng)
    N = F.shape[1]
    alive = list(range(20))
    nxt = 20
    hint = new_hint(N)
    none = new_hint(0)
    t = 10_000_000
    for _ in range(40):
        act = np.array(alive, dtype=np.int64)
        n = len(act)
        a, b = np.zeros(n), np.zeros(n)
        _themis(t, act, n, F, I, rows, 32, speedup, a, hint)
        _themis(t, act, n, F, I, rows, 32, speedup, b, none)
        np.testing.assert_array_equal(a, b)
        # the call leaves its first sort's order (every active job once) for the next one
        assert hint[0, N] == n and sorted(hint[0, :n].tolist()) == sorted(act.tolist())
        t += int(rng.integers(0, 900_000_000))
        if alive and rng.random() < 0.5:
            alive.pop(int(rng.integers(len(alive))))
        if nxt < N and rng.random() < 0.6:
            alive.append(nxt)
            nxt += 1
        I[E.SEENS, act] += n
        I[E.SEENC, act] += 1


def test_partial_rekey_equals_a_full_rekey():
    rng = np.random.default_rng(5)
    F, I, rows = _themis_state(rng)
    n = F.shape[1]
    act = np.arange(n, dtype=np.int64)
    pool = rng.permutation(n).astype(np.int64)
    t = 50_000_000_000
    for keyed, residual in [(32, 7), (7, 3), (16, 16), (8, 1)]:
        full, part = np.empty(n), np.empty(n)
        _themis_keys(t, act, pool, 0, n, keyed, F, I, rows, 32, True, part)
        _themis_keys(t, act, pool, 0, n, residual, F, I, rows, 32, True, part, keyed)
        _themis_keys(t, act, pool, 0, n, residual, F, I, rows, 32, True, full)
        np.testing.assert_array_equal(part, full)


@pytest.mark.parametrize("seed", range(6))
def test_resumed_afs_tournament_equals_the_reference_policy(seed):
    # the compiled tournament resumes at each winner's position; the reference policy
    # (schedlab.pcs.policies.AFS, plain Python) replays the whole fold for every GPU
    from types import SimpleNamespace

    from schedlab.pcs.policies import AFS

    rng = np.random.default_rng(seed)
    n, gpus = 40, int(rng.choice([8, 64, 200]))
    F = np.zeros((E.NF, n))
    I = np.zeros((E.NI, n), dtype=np.int64)
    I[E.DEM] = rng.choice([1, 2, 4, 8, 16], n)
    F[E.EREM] = rng.exponential(2000.0, n)
    F[E.EREM, rng.random(n) < 0.1] = 0.0
    dup = rng.integers(0, n, 10)  # equal jobs: ties in the pairwise test
    F[E.EREM, dup[1::2]] = F[E.EREM, dup[::2]]
    I[E.DEM, dup[1::2]] = I[E.DEM, dup[::2]]
    rows = np.zeros((n, 17))
    g = np.arange(17, dtype=float)
    for i in range(n):
        rows[i] = g ** rng.uniform(0.5, 1.0)
    rows[dup[1::2]] = rows[dup[::2]]
    act = rng.permutation(n).astype(np.int64)
    out = np.zeros(n)
    _afs(act, n, F, I, rows, gpus, out)
    world = SimpleNamespace(act=lambda: act, rows=rows, demand=I[E.DEM], est_rem=F[E.EREM], gpus=gpus)
    want = AFS().allocate(world)
    np.testing.assert_array_equal(out, want)
    assert out.sum() == min(gpus, I[E.DEM].sum())
