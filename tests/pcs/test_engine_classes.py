"""The compiled engine's WFQ with any number of classes: bit-identical to the
reference engine beyond the former 8-class cap, on both class-allocation paths."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from schedlab.pcs import _engine as E
from schedlab.pcs import _kernels_wfq as K
from schedlab.pcs.fairshare import integer_weights
from schedlab.pcs.artifacts import trace_0e4a51
from schedlab.pcs.configs import WFQConfig, heuristic_config
from schedlab.pcs.policies import make_policy
from schedlab.pcs.sim import SimulationError, simulate


@pytest.fixture(scope="module")
def w150():
    return trace_0e4a51(150)


def _both(w, cfg, gpus=64):
    a = simulate(w, make_policy("PCS", cfg), gpus, predict=True, engine="reference")
    b = simulate(w, make_policy("PCS", cfg), gpus, predict=True, engine="fast")
    return a, b


def test_many_classes_exact_path_equals_reference(w150):
    # T = 0.05 splits the 150 sizes into many classes; W = 0.1 keeps every weight > 0
    cfg = heuristic_config(w150.service, T=0.05, W=0.1, zeta_min=0.5, delta=0.3)
    assert cfg.num_classes > 8
    P, L = integer_weights(
        [Fraction(r).numerator for r in cfg.rates], [Fraction(r).denominator for r in cfg.rates]
    )
    assert L * int(w150.demand.sum() + 1) < 2**53  # the integer closed form is used
    a, b = _both(w150, cfg)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    # the classes really matter: a one-class run differs
    c = simulate(w150, make_policy("PCS", WFQConfig.default()), 64, predict=True)
    assert not np.array_equal(a.end_time, c.end_time)


def _prime_weights(k: int) -> tuple:
    """``k`` weights with pairwise-coprime denominators (huge common denominator)."""
    primes = [101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157]
    rates = [Fraction(7, p) for p in primes[: k - 1]]
    return tuple(rates) + (1 - sum(rates),)


def test_many_classes_fraction_path_equals_reference(w150):
    # 10 classes whose weights' common denominator forces the Fraction fallback (cached)
    rates = _prime_weights(10)
    assert all(r > 0 for r in rates)
    P, L = integer_weights([r.numerator for r in rates], [r.denominator for r in rates])
    assert L * 64 >= 2**53
    thr = np.quantile(w150.service, np.linspace(0.1, 0.9, 9)).astype(int).astype(float)
    cfg = WFQConfig(tuple(thr) + (math.inf,), rates, 0.3, 0.2, "primes")
    a, b = _both(w150, cfg)
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_zero_weight_class_fails_on_both_engines(w150):
    # the authors' rounds never give a weight-0 class anything: a job there never runs
    cfg = WFQConfig((1000.0, math.inf), (Fraction(0), Fraction(1)), 0.1, 0.1, "zero")
    assert (w150.service <= 1000).any()
    for engine in ("reference", "fast"):
        with pytest.raises(SimulationError):
            simulate(w150, make_policy("PCS", cfg), 64, predict=True, engine=engine)


def test_exact_allocation_many_and_zero_weights():
    rng = np.random.default_rng(1)
    for _ in range(1500):
        nc = int(rng.integers(1, 15))
        num = rng.integers(0, 60, size=nc) * (rng.random(nc) < 0.8)
        num[rng.integers(nc)] += 1
        den = np.full(nc, int(num.sum()))
        P, _ = integer_weights(num, den)
        cd = rng.integers(0, 40, size=nc) * rng.integers(0, 2, size=nc)
        g = int(rng.integers(1, 128))
        a = K.wfq_class_alloc(cd, num, den, g)
        b = K.class_alloc_exact(cd.astype(np.int64), P, g)
        assert a.tolist() == b.tolist(), (num.tolist(), cd.tolist(), g)


def test_class_alloc_cache_survives_hash_collision():
    num = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], dtype=np.int64)
    den = np.full(11, 66, dtype=np.int64)
    cd = np.array([3, 0, 5, 1, 0, 2, 9, 4, 0, 7, 6], dtype=np.int64)
    want = K.wfq_class_alloc(cd, num, den, 16)
    cache = E.new_cache()
    got = K._class_alloc_cached(cd, num, den, 16, cache)
    assert got.tolist() == want.tolist() and len(cache) == 1
    assert K._class_alloc_cached(cd, num, den, 16, cache).tolist() == want.tolist()
    # plant a wrong entry under the same key with a different demand vector: not used
    (key,) = list(cache.keys())
    fake = np.concatenate([cd[::-1].astype(float), np.full(11, 99.0)])
    cache[key] = fake
    assert K._class_alloc_cached(cd, num, den, 16, cache).tolist() == want.tolist()


@pytest.mark.parametrize("which", ["one_class", "three_classes"])
def test_queued_replays_with_relaxed_caps_equal_reference(w150, which):
    # 16 GPUs: long queues; ζ_min high and δ small: the demand caps bind and are relaxed
    # over several passes, so a job can hold GPUs in an early pass and none in the final one
    # (the compiled replay must not start its clock then)
    if which == "one_class":
        cfg = WFQConfig((math.inf,), (Fraction(1),), 0.95, 0.01, "one")
    else:
        cfg = heuristic_config(w150.service, T=0.8, W=0.3, zeta_min=0.9, delta=0.02)
        assert cfg.num_classes == 3
    a, b = _both(w150, cfg, gpus=16)
    pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.parametrize("gpus", [24, 40, 128])
def test_classes_given_their_whole_demand_equal_reference(w150, gpus):
    # a class whose share is its whole demand goes straight to the last relaxation pass (every
    # member at its demand) in the main loop and in replays; with ζ_min high and δ small the
    # passes it skips are many. From 24 GPUs (few classes whole) to 128 (most)
    cfg = heuristic_config(w150.service, T=0.8, W=0.3, zeta_min=0.9, delta=0.02)
    a, b = _both(w150, cfg, gpus=gpus)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
