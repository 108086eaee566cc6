"""The LP-free global solver (``lp="lagrange"``, the default) against the HiGHS path and brute force.

Structure checked here (module docstring of :mod:`schedlab.nona._lagrange`): for a fixed wait
the problem is a multiple-choice knapsack LP with one coupling row, solved exactly without an
LP solver, and a basic optimum mixes two options in at most one distribution; so does the
global optimum. Result on the five-model workload (10 Gbps, load 0.5, background link load
0.05): exactly 1 of the 17 subgraph distributions mixes (a GPT-2 attention block), as
:func:`test_five_models_issue_loads` asserts.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import linprog, minimize_scalar

from schedlab.nona import _lagrange, profiles
from schedlab.nona.optimise import (
    _HighsIntervalLP,
    _interval_lp,
    _relaxed_interval_bound,
    compile_problem,
    evaluate,
    solve,
    solve_point,
)
from schedlab.nona.queueing import UnstableLinkError
from schedlab.nona.workload import (
    Cluster,
    JobClass,
    background_comm_class,
    build_workload,
    job_f,
)

REPO = Path(__file__).resolve().parents[2]
HAVE_GPT2 = (REPO / "data/generated/nona/gpt2/graph.txt").exists()
needs_gpt2 = pytest.mark.skipif(not HAVE_GPT2, reason="needs data/generated/nona/gpt2/graph.txt")


def n_mixed(prob, theta: np.ndarray) -> int:
    """Distributions with more than one option of positive probability."""
    return int(np.sum(np.add.reduceat((theta > 0).astype(int), prob.starts) > 1))


# --------------------------------------------------------------------------- the knapsack LP


def random_mckp(rng, n_dist: int, max_size: int):
    sizes = rng.integers(1, max_size + 1, n_dist)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    dist = np.repeat(np.arange(n_dist), sizes)
    c = rng.uniform(0, 1, sizes.sum())
    g = rng.uniform(0, 1, sizes.sum())
    g[starts] = 0.0  # every distribution has a "local" option (as Nona's all-together option)
    if rng.random() < 0.5:  # exact duplicates and ties, as the symmetric options of real subgraphs
        c[-1], g[-1] = c[starts[-1]], g[starts[-1]]
    b = float(rng.uniform(0, 1) * np.maximum.reduceat(g, starts).sum())
    return c, g, b, starts, dist


def test_mckp_is_the_lp_optimum_with_at_most_one_mixed_distribution():
    rng = np.random.default_rng(5)
    for _ in range(200):
        c, g, b, starts, dist = random_mckp(rng, int(rng.integers(1, 8)), 6)
        sol = _lagrange.mckp(c, g, b, starts, dist)
        A_eq = np.zeros((len(starts), len(c)))
        A_eq[dist, np.arange(len(c))] = 1
        ref = linprog(
            c,
            A_ub=g[None, :],
            b_ub=[b],
            A_eq=A_eq,
            b_eq=np.ones(len(starts)),
            bounds=(0, None),
            method="highs",
        )
        assert ref.status == 0
        assert sol.value == pytest.approx(ref.fun, rel=1e-9, abs=1e-12)
        assert sol.dual <= ref.fun + 1e-12  # weak duality
        th = _lagrange.theta_of(len(c), sol)
        assert np.allclose(np.add.reduceat(th, starts), 1) and th.min() >= 0
        assert g @ th <= b + 1e-12
        assert c @ th == pytest.approx(sol.value, rel=1e-12, abs=1e-12)
        assert np.sum(np.add.reduceat((th > 0).astype(int), starts) > 1) <= 1


def test_mckp_infeasible_and_slack_rows():
    c, g = np.array([1.0, 0.0]), np.array([1.0, 2.0])
    assert math.isinf(_lagrange.mckp(c, g, 0.5, np.array([0]), np.array([0, 0])).value)
    sol = _lagrange.mckp(c, g, 5.0, np.array([0]), np.array([0, 0]))
    assert sol.value == 0.0 and sol.lam == 0.0 and sol.mixed is None


# --------------------------------------------------------------------------- small instances


def random_dag_class(rng, name: str, rate: float) -> JobClass:
    m = 2  # two parallel tasks (a chain would be contracted away): 5 options, brute force stays cheap
    g = nx.DiGraph(name=name)
    names = ["s", *[f"x{i}" for i in range(m)], "t"]
    for x in names:
        g.add_node(x, work_s=float(rng.uniform(1e-3, 1e-2)))
    for i in range(m):
        g.add_edge("s", f"x{i}", bytes=float(rng.uniform(1e5, 2e7)))
        g.add_edge(f"x{i}", "t", bytes=float(rng.uniform(1e5, 2e7)))
    if rng.random() < 0.5:
        g.add_edge("s", "t", bytes=float(rng.uniform(1e5, 2e7)))
    return JobClass(name, "inference", g, arrival_rate=rate)


def small_instances():
    c8 = Cluster(bandwidth_gbps=8)
    f_cl = Cluster(servers=2, bandwidth_gbps=80)
    for load in (0.2, 0.6, 0.9):
        yield (
            f"f_{load}",
            build_workload(classes=[job_f()], load=load, cluster=f_cl, background_comm_bytes=20e6),
            f_cl,
        )
    yield (
        "f_alone",
        build_workload(classes=[job_f()], load=0.9, cluster=f_cl, background_ratio=math.inf),
        f_cl,
    )
    rng = np.random.default_rng(7)
    for k in range(6):
        wl = [
            random_dag_class(rng, f"r{k}a", float(rng.uniform(5, 40))),
            random_dag_class(rng, f"r{k}b", float(rng.uniform(5, 40))),
        ]
        if k % 2:
            wl.append(
                background_comm_class(float(rng.uniform(1e6, 5e6))).with_rate(float(rng.uniform(5, 60)))
            )
        yield f"random{k}", wl, c8


def brute_force(prob) -> float:
    """Best pure selection, and best with one distribution mixing two options (the optimum's form)."""
    best = math.inf
    ranges = [range(s) for s in prob.size]
    picks = [np.array(p, dtype=int) for p in itertools.product(*ranges)]

    def f(th):
        try:
            return evaluate(prob, th).objective
        except UnstableLinkError:
            return math.inf

    for pick in picks:
        th = np.zeros(prob.n_options)
        th[prob.starts + pick] = 1.0
        best = min(best, f(th))
    for pick in picks:  # one distribution d mixes pick[d] with another option
        for d in range(len(prob.size)):
            for other in range(prob.size[d]):
                if other == pick[d]:
                    continue
                base = np.zeros(prob.n_options)
                base[prob.starts + pick] = 1.0
                o1, o2 = prob.starts[d] + pick[d], prob.starts[d] + other

                def along(x, base=base, o1=o1, o2=o2):
                    th = base.copy()
                    th[o1], th[o2] = 1 - x, x
                    return f(th)

                xs = np.linspace(0, 1, 21)
                vals = [along(x) for x in xs]
                i = int(np.argmin(vals))
                if math.isfinite(vals[i]):
                    with np.errstate(invalid="ignore"):  # inf (unstable) values near the bracket ends
                        r = minimize_scalar(
                            along,
                            bounds=(xs[max(i - 1, 0)], xs[min(i + 1, 20)]),
                            method="bounded",
                            options={"xatol": 1e-12},
                        )
                    best = min(best, vals[i], float(r.fun))
    return best


@pytest.mark.parametrize(
    "name, wl, cluster", list(small_instances()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_small_instances_against_highs_and_brute_force(name, wl, cluster):
    prob = compile_problem(wl, cluster)
    new = solve(prob, method="global")
    ref = solve(prob, method="global", lp="highspy")
    assert new.info["lp"] == "lagrange" and new.info["converged"] and ref.info["converged"]
    tol = 1e-6 * abs(new.objective) + 1e-12
    assert new.lower_bound <= new.objective <= new.lower_bound + tol
    # both certificates hold for both answers
    assert new.objective <= ref.lower_bound + tol + 1e-6 * abs(ref.objective)
    assert ref.objective >= new.lower_bound - 1e-12
    # brute force over the optimum's form (pure, or one distribution mixing two options)
    bf = brute_force(prob)
    assert new.objective <= bf + tol
    assert new.lower_bound <= bf + 1e-12
    assert n_mixed(prob, new.theta) <= 1
    # random mixed strategies never beat the certified lower bound
    rng = np.random.default_rng(3)
    for _ in range(200):
        th = np.concatenate([rng.dirichlet(np.ones(s) * 0.3) for s in prob.size])
        try:
            assert evaluate(prob, th).objective >= new.lower_bound - 1e-12
        except UnstableLinkError:
            pass


def test_relaxed_interval_bound_is_below_the_interval_lp():
    # the documented fallback when HiGHS ends without an answer: the one-row relaxation
    wl = build_workload(
        classes=[job_f()], load=0.6, cluster=Cluster(servers=2, bandwidth_gbps=80), background_comm_bytes=20e6
    )
    prob = compile_problem(wl, Cluster(servers=2, bandwidth_gbps=80))
    lo0 = prob.phi_min()
    for lo, hi in [(lo0, lo0 * 1.5), (lo0 * 1.2, lo0 * 3), (lo0 * 2, math.inf)]:
        _, lp = _interval_lp(prob, lo, hi, with_lower=lo > lo0)
        th, relaxed = _relaxed_interval_bound(prob, lo, hi)
        assert relaxed <= lp + 1e-12
        assert th is not None and np.allclose(np.add.reduceat(th, prob.starts), 1)


def test_highs_prints_nothing_on_stdout(capfd):
    wl = build_workload(
        classes=[job_f()], load=0.6, cluster=Cluster(servers=2, bandwidth_gbps=80), background_comm_bytes=20e6
    )
    prob = compile_problem(wl, Cluster(servers=2, bandwidth_gbps=80))
    lp = _HighsIntervalLP(prob)
    lp(prob.phi_min(), 2 * prob.phi_min(), with_lower=False)
    solve(prob, lp="highspy")
    _interval_lp(prob, prob.phi_min(), 2 * prob.phi_min(), with_lower=False)  # scipy's HiGHS
    solve(prob)
    out, _ = capfd.readouterr()
    assert out == ""


# --------------------------------------------------------------------------- five models


@needs_gpt2
@pytest.mark.parametrize("comm_load", [0.01, 0.05, 0.1])
def test_five_models_issue_loads(comm_load):
    res, doc = solve_point(0.5, bandwidth_gbps=10, method="global", workload_kwargs={"comm_load": comm_load})
    prob = res.problem
    assert res.info["converged"] and 0 <= res.gap <= 1e-6 * res.objective
    assert prob.n_distributions == 17
    mixed = n_mixed(prob, res.theta)
    assert mixed <= 1
    if comm_load == 0.05:
        assert mixed == 1  # the documented result: 1 of 17 subgraphs mixes two options


@needs_gpt2
def test_five_models_against_the_highs_path():
    # one instance where splitting pays (under the paper's pricing; the dependency-aware one keeps
    # everything together here and settles it at the root) and the reference is quick
    res, _ = solve_point(
        0.1, bandwidth_gbps=10, method="global", workload_kwargs={"comm_load": 0.05}, pricing="paper"
    )
    ref = solve(res.problem, method="global", lp="highspy")
    assert abs(ref.objective - res.objective) <= 1e-6 * res.objective
    assert res.lower_bound <= ref.objective + 1e-12 and ref.lower_bound <= res.objective + 1e-12
    assert res.info["nodes"] < ref.info["lps"]


@needs_gpt2
@pytest.mark.parametrize("load", [0.9, 0.95])
def test_five_models_no_background_high_load_does_not_crash(load):
    # the HiGHS path raised "HiGHS failed ... Unknown" at load 0.9 without background transfers
    res, _ = solve_point(load, bandwidth_gbps=10, method="global", workload_kwargs={"comm_load": 0.0})
    assert res.info["converged"] and 0 <= res.gap <= 1e-6 * res.objective
    assert res.rho < 1 and n_mixed(res.problem, res.theta) <= 1
    local = evaluate(res.problem, res.problem.local_theta()).objective
    assert res.objective <= local


GRID = [
    (cl, load, bw)
    for cl in (0.0, 0.01, 0.05, 0.1, 0.3)
    for load in (0.1, 0.5, 0.9, 0.95)
    for bw in (1, 10, 100)
]


@pytest.mark.slow
@needs_gpt2
@pytest.mark.parametrize("comm_load, load, bw", GRID)
def test_five_models_grid_against_highs(comm_load, load, bw):
    cl = Cluster(servers=80, bandwidth_gbps=bw)
    prob = compile_problem(build_workload(profiles.MODELS, load=load, cluster=cl, comm_load=comm_load), cl)
    new = solve(prob)
    ref = solve(prob, lp="highspy")
    tol = 1e-6 * new.objective
    assert new.info["converged"] and new.gap <= tol
    assert new.objective <= ref.objective + tol
    assert new.lower_bound <= ref.objective + 1e-12 and ref.lower_bound <= new.objective + 1e-12
    assert n_mixed(prob, new.theta) <= 1


# --------------------------------------------------------------------------- CLI


def run_cli(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("schedlab")
    return subprocess.run(
        [str(exe), "nona", "solve", *args], capture_output=True, text=True, cwd=REPO, timeout=300
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--load", "0.4", "--models", "resnet18,alexnet"),
        ("--load", "0.9", "--comm-load", "0", "--models", "resnet18,densenet121", "--method", "local"),
        pytest.param(("--load", "0.9", "--comm-load", "0"), marks=needs_gpt2),
        pytest.param(("--load", "0.5", "--comm-load", "0.05"), marks=needs_gpt2),
    ],
)
def test_cli_json_stdout_is_one_object(args):
    res = run_cli(*args, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)  # the whole of stdout is one JSON object
    assert isinstance(doc, dict) and res.stdout.count("\n") == 1
    assert doc["objective"] > 0 and doc["link_load"] < 1


def test_cli_invalid_input_is_a_clear_error():
    res = run_cli("--load", "1.2", "--models", "resnet18", "--json")
    assert res.returncode != 0 and res.stdout == ""
    assert "load must be in (0, 1)" in res.stderr
    res = run_cli("--load", "0.5", "--comm-load", "1.0", "--models", "resnet18", "--json")
    assert res.returncode != 0 and res.stdout == ""
    assert "comm_load must be in [0, 1)" in res.stderr


def _select_arrays(v, key, starts, dist, largest):
    """The array version of ``_lagrange.select`` (numpy reductions): the compiled one must agree."""
    vmin = np.minimum.reduceat(v, starts)
    tie = v <= vmin[dist] + _lagrange.TIE_RTOL * np.abs(vmin[dist])
    k = np.where(tie, -key if largest else key, np.inf)
    kmin = np.minimum.reduceat(k, starts)
    cand = np.flatnonzero(tie & (k == kmin[dist]))
    dc = dist[cand]
    first = np.ones(len(cand), dtype=bool)
    first[1:] = dc[1:] != dc[:-1]
    return cand[first]


@pytest.mark.parametrize("seed", range(5))
def test_compiled_option_loops_equal_the_array_versions(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, size=12)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    dist = np.repeat(np.arange(len(sizes)), sizes)
    n = int(sizes.sum())
    # coarse values: many exact ties, and near-ties inside the relative tolerance
    v = rng.integers(0, 4, n).astype(float) + rng.choice([0.0, 1e-13, 1e-9], n)
    key = rng.integers(0, 3, n).astype(float)
    for largest in (False, True):
        assert np.array_equal(
            _lagrange.select(v, key, starts, dist, largest), _select_arrays(v, key, starts, dist, largest)
        )
    lam = 0.37
    vv, vmin, gm, gp = _lagrange._dual_pieces(v, key, lam, starts)
    ref = v + lam * key
    ref_min = np.minimum.reduceat(ref, starts)
    tie = ref <= (ref_min + _lagrange.TIE_RTOL * np.abs(ref_min))[dist]
    assert np.array_equal(vv, ref) and np.array_equal(vmin, ref_min)
    assert np.array_equal(gm, np.maximum.reduceat(np.where(tie, key, -np.inf), starts))
    assert np.array_equal(gp, np.minimum.reduceat(np.where(tie, key, np.inf), starts))
    AT, nT = rng.integers(0, 3, (4, n)).astype(float), rng.integers(0, 3, (4, n)).astype(float)
    M, s = _lagrange._branches(AT, nT, 0.5)
    lines = AT + nT * 0.5
    assert np.array_equal(M, lines.max(axis=0))
    assert np.array_equal(s, nT[np.argmax(lines, axis=0), np.arange(n)])  # the first line attaining the max
    # the bound's quadratics and their per-distribution minima: the same floats as the numpy versions,
    # with exact duplicates of the choice (ties) so that the mask matters
    beta, a, r = (rng.integers(1, 4, n) * rng.choice([1.0, 0.1], n) for _ in range(3))
    sel = starts + rng.integers(0, sizes)
    for kappa in (0.0, -0.3):
        args = (beta, M, s, a, r, 0.7, 1.3, kappa)
        got = _lagrange._quadratics(*args, sel, starts)
        want = _lagrange.quadratics_reference(*args, sel, dist)
        assert all(np.array_equal(x, y) for x, y in zip(got, want)) and got[3][sel].all()
        got_m = _lagrange._minima(*got, starts, 0.2, 0.9)
        want_m = _lagrange.minima_reference(*[x.copy() for x in want], starts, 0.2, 0.9)
        assert all(np.array_equal(x, y) for x, y in zip(got_m, want_m))
