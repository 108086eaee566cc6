"""The compiled RandomisedAFS loop (``_engine_rafs``) against numpy and the reference engine."""

from __future__ import annotations

import heapq

import numpy as np
import pandas as pd
import pytest

from schedlab.pcs import _engine_rafs as R
from schedlab.pcs.artifacts import compare, load_run
from schedlab.pcs.generators import authors_rng, generate
from schedlab.pcs.policies import AFS, RandomisedAFS
from schedlab.pcs.hooks import _HeapEnd
from schedlab.pcs.sim import fig8_afs_run, simulate, simulate_randomised_afs
from schedlab.pcs.workload import Workload

_AFS = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/AFS_64_1.2_gavel-contsingle_{}.csv.gz"
FIG8_SEEDS = (1954, 3266, 5897, 6359, 9005)


def _copy(rng: np.random.RandomState) -> np.random.RandomState:
    out = np.random.RandomState()
    out.set_state(rng.get_state())
    return out


def _same_state(a: np.random.RandomState, b: np.random.RandomState) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a.get_state(), b.get_state()))


def _mt(rng: np.random.RandomState) -> np.ndarray:
    return R.mt_from_randomstate(rng)[0]


# --- the legacy RandomState draws -------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1954, 2**32 - 1])
def test_raw_words_and_state_equal_numpy(seed):
    # three refills of the key; a full-range uint32 randint draws exactly one word each
    rng = np.random.RandomState(seed)
    rng.uniform()  # start mid-key (pos != 624)
    mt = _mt(rng)
    ours = [R.mt_next32(mt) for _ in range(2000)]
    theirs = rng.randint(0, 2**32, size=2000, dtype=np.uint32)
    assert ours == theirs.tolist()
    mirror = np.random.RandomState()
    R.mt_to_randomstate(mirror, mt, rng.get_state(legacy=False))
    assert _same_state(mirror, rng)


def _ranges() -> list[int]:
    powers = [2**k for k in range(32)] + [2**32]
    near = [p + d for p in powers[1:32] for d in (-1, 1)]
    rs = np.random.RandomState(7)
    return (
        [1, 2, 3, 5, 7, 64, 100, 3000]
        + list(range(1, 70))
        + powers
        + near
        + rs.randint(1, 2**32, size=40).tolist()
    )


def test_choice_equals_numpy_for_many_ranges():
    # interleaved ranges: values and the words consumed (state) must both match
    rng = np.random.RandomState(12345)
    mt = _mt(rng)
    for n in _ranges() * 20:
        assert R.legacy_choice(mt, n) == int(rng.choice(n)), n
    mirror = np.random.RandomState()
    R.mt_to_randomstate(mirror, mt, rng.get_state(legacy=False))
    assert _same_state(mirror, rng)


def test_choice_of_one_draws_nothing():
    rng = np.random.RandomState(3)
    mt = _mt(rng)
    before = mt.copy()
    assert R.legacy_choice(mt, 1) == 0 and int(rng.choice(1)) == 0
    assert np.array_equal(mt, before) and np.array_equal(mt, _mt(rng))


def test_uniform_equals_numpy_bitwise():
    rng = np.random.RandomState(99)
    mt = _mt(rng)
    for k in range(1500):
        if k % 3 == 0:
            assert R.legacy_choice(mt, 37) == int(rng.choice(37))
        assert R.legacy_uniform(mt) == rng.uniform()
    assert np.array_equal(mt, _mt(rng))


def test_only_legacy_mt19937_streams():
    with pytest.raises(TypeError, match="RandomState"):
        R.mt_from_randomstate(np.random.default_rng(0))
    with pytest.raises(TypeError, match="PCG64"):
        R.mt_from_randomstate(np.random.RandomState(np.random.PCG64(0)))


# --- the old event heap ---------------------------------------------------------------------


@pytest.mark.parametrize("m", [0, 1, 2, 3, 7, 64, 65, 500, 2600])
def test_heapify_top_and_order_equal_heapq(m):
    # few distinct times: most comparisons are ties, whose order heapq decides
    rs = np.random.RandomState(m)
    for _ in range(5):
        t = rs.randint(0, 4, size=m).astype(np.int64)
        heap = [_HeapEnd(int(x), j) for j, x in enumerate(t)]
        heapq.heapify(heap)
        ht, hj = t.copy(), np.arange(m, dtype=np.int64)
        R.heapify(ht, hj, m)
        assert hj.tolist() == [h.j for h in heap]
        assert ht.tolist() == [h.t for h in heap]


# --- whole runs: compiled vs reference ------------------------------------------------------


def _both(w: Workload, policy_rng: np.random.RandomState, gpus: int, **kw):
    """Both engines on copies of ``policy_rng``; ``kw`` values that are callables (the
    size-error stream) are called once per engine, so each gets a fresh stream."""
    r1, r2 = _copy(policy_rng), _copy(policy_rng)
    kw1 = {k: (v() if callable(v) else v) for k, v in kw.items()}
    kw2 = {k: (v() if callable(v) else v) for k, v in kw.items()}
    ref = simulate(w, RandomisedAFS(r1), gpus, engine="reference", **kw1)
    fast = simulate_randomised_afs(w, RandomisedAFS(r2), gpus, **kw2)
    return ref, fast, r1, r2


def _assert_identical(ref: pd.DataFrame, fast: pd.DataFrame) -> None:
    assert ref.columns.tolist() == fast.columns.tolist()
    for c in ref.columns:  # == on every job's value (no tolerance)
        assert (ref[c].to_numpy() == fast[c].to_numpy()).all(), c
    pd.testing.assert_frame_equal(ref, fast, check_exact=True)


@pytest.mark.parametrize(
    "seed, n, gpus", [(9005, 150, 64), (1954, 120, 16), (2, 60, 4), (3266, 80, 8), (6359, 100, 64)]
)
def test_compiled_equals_reference_on_fig8_prefixes(seed, n, gpus):
    rng = authors_rng(seed)
    w = generate("gavel", 3000, rng, load=1.2).head(n)
    ref, fast, r1, r2 = _both(w, rng, gpus, predict=True)
    _assert_identical(ref, fast)
    assert _same_state(r1, r2)


def test_compiled_equals_reference_with_equal_end_times():
    # equal sizes, submits and demands: many completions at the same microsecond, so the
    # old heap's tie order (not the active order) picks which job ends first
    rs = np.random.RandomState(5)
    n = 60
    w = Workload.from_arrays(
        submit_s=np.repeat(np.arange(12) * 5.0, 5),
        service=rs.choice([10.0, 20.0, 40.0], size=n),
        demand=rs.choice([1, 2, 4], size=n),
    )
    for seed in (0, 1, 2):
        ref, fast, r1, r2 = _both(w, np.random.RandomState(seed), 8, predict=True)
        _assert_identical(ref, fast)
        assert _same_state(r1, r2)


@pytest.mark.parametrize(
    "kw",
    [
        {"predict": False},
        {"predict": True, "p_error": 20.0, "rng": lambda: np.random.default_rng(4)},
        {"predict": True, "predict_sample": 30, "rng": lambda: np.random.default_rng(8)},
    ],
)
def test_compiled_equals_reference_options(kw):
    rng = authors_rng(5897)
    w = generate("gavel", 3000, rng, load=1.2).head(100)
    ref, fast, r1, r2 = _both(w, rng, 16, **kw)
    _assert_identical(ref, fast)
    assert _same_state(r1, r2)


def test_compiled_refuses_other_policies_and_streams():
    w = generate("gavel", 40, authors_rng(2), load=1.2)
    with pytest.raises(TypeError, match="not a RandomisedAFS"):
        simulate_randomised_afs(w, AFS(), 8)
    with pytest.raises(TypeError, match="Generator"):
        simulate_randomised_afs(w, RandomisedAFS(np.random.default_rng(0)), 8)
    with pytest.raises(ValueError, match="unknown engine"):
        fig8_afs_run(1954, 10, engine="numba")


@pytest.mark.parametrize("seed", FIG8_SEEDS)
def test_fig8_afs_run_fast_is_the_authors_run(seed):
    # the whole stored run of every seed, now cheap (about 2 s each on the compiled loop)
    agree = compare(fig8_afs_run(seed), load_run(_AFS.format(seed)), rtol=1e-6)
    bad = {c: (a.n_bad, a.max_rel, a.first_bad) for c, a in agree.items() if not a.ok()}
    assert not bad, bad


@pytest.mark.long
@pytest.mark.timeout(3600)  # about 3 min idle, 19.5 min measured at load 4-6 on 2 cores
def test_fig8_run_reference_equals_compiled():
    # one whole Fig. 8 seed on both engines, stream included (about 3 minutes: reference)
    rng = authors_rng(1954)
    w = generate("gavel", 3000, rng, load=1.2)
    ref, fast, r1, r2 = _both(w, rng, 64, predict=True)
    _assert_identical(ref, fast)
    assert _same_state(r1, r2)


def test_fig8_run_reference_equals_compiled_300_jobs():
    # the long test above at a tenth of its size (same generator, seed, load and 64 GPUs), so the
    # fast tier still runs a whole Fig. 8-style workload to its end on both engines
    rng = authors_rng(1954)
    w = generate("gavel", 300, rng, load=1.2)
    ref, fast, r1, r2 = _both(w, rng, 64, predict=True)
    assert len(ref) == 300
    _assert_identical(ref, fast)
    assert _same_state(r1, r2)
