"""The certified search's compiled loops against their NumPy / scipy versions, and the lazy bound.

:mod:`schedlab.nona._lagrange` runs its per-option loops compiled (numba). Each compiled loop here
must give the same answer as the array (or scipy) version it replaces: exactly where only
comparisons, minima and the same per-entry float operations are involved, and to the line
search's own tolerance for the Brent search (its objective's sums are BLAS sums on both sides).
The fixed-multiplier bound is built and evaluated only when the caller's decision needs it; the
search must then return exactly what it returns when both bounds are always evaluated.
"""

from __future__ import annotations

import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from schedlab.nona import _lagrange, profiles
from schedlab.nona.optimise import compile_problem
from schedlab.nona.workload import (
    Cluster,
    JobClass,
    background_comm_class,
    build_workload,
    inference_classes,
    job_f,
)

REPO = Path(__file__).resolve().parents[2]
needs_gpt2 = pytest.mark.skipif(
    not (REPO / "data/generated/nona/gpt2/graph.txt").exists(),
    reason="needs data/generated/nona/gpt2/graph.txt",
)


def fork_join(rng, name: str, rate: float, m: int) -> JobClass:
    """Source, ``m`` parallel tasks, sink (random work and bytes): a few dozen options."""
    g = nx.DiGraph(name=name)
    names = ["s", *[f"x{i}" for i in range(m)], "t"]
    for x in names:
        g.add_node(x, work_s=float(rng.uniform(1e-3, 1e-2)))
    for i in range(m):
        g.add_edge("s", f"x{i}", bytes=float(rng.uniform(1e5, 2e7)))
        g.add_edge(f"x{i}", "t", bytes=float(rng.uniform(1e5, 2e7)))
    return JobClass(name, "inference", g, arrival_rate=rate)


def small_instances():
    f_cl = Cluster(servers=2, bandwidth_gbps=80)
    for load in (0.2, 0.6, 0.9):
        wl = build_workload(classes=[job_f()], load=load, cluster=f_cl, background_comm_bytes=20e6)
        yield f"f_{load}", wl, f_cl
    rng = np.random.default_rng(11)
    c8 = Cluster(servers=8, bandwidth_gbps=8)
    for k in range(3):
        wl = [fork_join(rng, f"r{k}{j}", float(rng.uniform(5, 40)), m=3) for j in range(2)]
        wl.append(background_comm_class(float(rng.uniform(1e6, 5e6))).with_rate(float(rng.uniform(5, 60))))
        yield f"fork_join{k}", wl, c8


def random_blocks(rng, n_dist: int = 12, max_size: int = 9):
    sizes = rng.integers(1, max_size + 1, n_dist)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return sizes, starts, np.repeat(np.arange(n_dist), sizes), int(sizes.sum())


@pytest.mark.parametrize("seed", range(5))
def test_fused_lp_passes_equal_the_array_versions(seed):
    rng = np.random.default_rng(seed)
    sizes, starts, dist, n = random_blocks(rng)
    # coarse values: exact ties in both the cost and the row
    c = rng.integers(0, 4, n).astype(float) + rng.choice([0.0, 1e-13], n)
    g = rng.integers(0, 3, n).astype(float)
    S0, gmin, cinf = _lagrange._knapsack_ends(c, g, starts)
    assert np.array_equal(S0, _lagrange.select(c, g, starts, dist, largest=False))
    assert np.array_equal(gmin, np.minimum.reduceat(g, starts))
    assert np.array_equal(cinf, np.minimum.reduceat(np.where(g <= gmin[dist], c, np.inf), starts))
    Sm, Sp = _lagrange._select_both(c, g, starts)
    assert np.array_equal(Sm, _lagrange.select(c, g, starts, dist, largest=True))
    assert np.array_equal(Sp, _lagrange.select(c, g, starts, dist, largest=False))
    AT, nT = rng.integers(0, 3, (4, n)).astype(float), rng.integers(0, 3, (4, n)).astype(float)
    beta, a, r = rng.uniform(0.1, 3.0, n), rng.uniform(0.0, 1.0, n), rng.uniform(0.0, 1.0, n)
    M, s, cc, gg = _lagrange._terms(AT, nT, beta, a, r, 0.37)
    M_ref, s_ref = _lagrange._branches(AT, nT, 0.37)
    assert np.array_equal(M, M_ref) and np.array_equal(s, s_ref)
    assert np.array_equal(cc, beta * M_ref) and np.array_equal(gg, a + 2.0 * 0.37 * r)


@pytest.mark.parametrize("seed", range(5))
def test_compiled_chord_test_equals_numpy(seed):
    rng = np.random.default_rng(seed)
    k = 40
    r_lo, r_hi = rng.normal(size=k), rng.normal(size=k)
    r_lo[:3] = r_hi[:3] = np.inf  # distributions with a single option: NaN inside, answer False
    e0, e1, e2 = rng.normal(size=k), rng.normal(size=k), -np.abs(rng.normal(size=k))
    e2[5:9] = 0.0  # linear choice: the minimum of the difference is at an end
    for lo, hi in ((0.0, 1.0), (0.3, 0.3000001), (2.0, 5.0)):
        got = _lagrange._above(r_lo, r_hi, e0, e1, e2, lo, hi)
        want = _lagrange.above_reference(r_lo, r_hi, e0, e1, e2, lo, hi)
        assert np.array_equal(got, want)
        assert not got[:3].any()
    assert _lagrange._above(r_lo, r_hi, e0, e1, e2, 0.0, 1.0).any()  # not all False: the test can tell


def supports(prob, rng, count: int):
    """Random sparse supports: one option per distribution, the last distribution's two options mixed."""
    for _ in range(count):
        pick = prob.starts + rng.integers(0, prob.size)
        d = int(rng.integers(0, len(prob.starts)))
        if prob.size[d] < 2:
            continue
        o1 = pick[d]
        o2 = prob.starts[d] + (o1 - prob.starts[d] + 1 + rng.integers(0, prob.size[d] - 1)) % prob.size[d]
        idx = np.concatenate([np.delete(pick, d), [o1, o2]])
        yield idx, np.ones(len(idx))


@pytest.mark.parametrize(
    "name, wl, cluster", list(small_instances()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_compiled_line_search_equals_scipy(name, wl, cluster):
    prob = compile_problem(wl, cluster)
    sup = _lagrange.Support(prob)
    rng = np.random.default_rng(3)
    n = 0
    for idx, w in supports(prob, rng, 40):
        x = sup.line_min(idx, w.copy())
        x_ref = _lagrange.line_min_reference(sup, idx, w.copy())
        assert 0.0 <= x <= 1.0
        f_at = lambda y: sup.objective(idx, np.concatenate([w[:-2], [1.0 - y, y]]))[0]  # noqa: E731
        f, f_ref = f_at(x), f_at(x_ref)
        # the same Brent steps on the same objective: the same point, up to the sums' rounding
        assert (
            abs(x - x_ref) <= 1e-9
            or (math.isinf(f) and math.isinf(f_ref))
            or abs(f - f_ref) <= 1e-12 * abs(f_ref)
        )
        # and with the segment's ends (the search evaluates them too) a minimum of F along the segment:
        # no grid point is lower (Brent stops within ~1e-7 in x: at an end that is first order in F)
        grid = [f_at(y) for y in np.linspace(0.0, 1.0, 201)]
        if math.isfinite(f_ref):
            best = min(f, f_at(0.0), f_at(1.0))
            assert best <= min(grid) + 1e-9 * abs(best)
        n += 1
    assert n >= 10


@needs_gpt2
@pytest.mark.parametrize("bw", [4.0, 6.0])
def test_lazy_fixed_multiplier_bound_changes_nothing(bw, monkeypatch):
    """The slowest points of the benchmark grid: the search with the second bound built only when the
    decision needs it returns the same theta, objective, bound and statistics as with both always."""
    cl = Cluster(servers=80, bandwidth_gbps=bw)
    prob = compile_problem(
        build_workload(classes=inference_classes(profiles.MODELS), load=0.9, cluster=cl, comm_load=0.0), cl
    )
    lazy = _lagrange.solve_global(prob)
    calls = {"full": 0}
    bound_fn = _lagrange._Search.bound_fn

    def eager(self, t):
        f = bound_fn(self, t)

        def both(lo, hi, done=None):
            calls["full"] += 1
            return f(lo, hi)  # no ``done``: both bounds, as before the lazy evaluation

        return both

    monkeypatch.setattr(_lagrange._Search, "bound_fn", eager)
    full = _lagrange.solve_global(prob)
    assert calls["full"] > 0 and lazy.info["nodes"] >= 10  # the search ran, with many intervals
    assert np.array_equal(lazy.theta, full.theta)
    assert lazy.objective == full.objective and lazy.lower_bound == full.lower_bound
    strip = lambda r: {k: v for k, v in r.info.items() if k != "kernel_load_s"}  # noqa: E731
    assert strip(lazy) == strip(full)
    assert lazy.info["converged"] and lazy.objective - lazy.lower_bound <= 1e-6 * lazy.objective


def test_job_f_search_is_certified_with_the_compiled_line_search():
    c = Cluster(servers=2, bandwidth_gbps=80)
    prob = compile_problem(
        build_workload(classes=[job_f()], load=0.6, cluster=c, background_comm_bytes=20e6), c
    )
    g = _lagrange.solve_global(prob)
    assert g.info["converged"] and g.objective - g.lower_bound <= 1e-6 * g.objective
