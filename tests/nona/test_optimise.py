"""Nona's formulation (I)-(XII) by hand, exact gradients, and the three solvers against brute force."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from schedlab.nona.decision import Option
from schedlab.nona.optimise import (
    InfeasibleError,
    compile_problem,
    evaluate,
    solve,
    to_json,
)
from schedlab.nona.queueing import UnstableLinkError
from schedlab.nona.workload import (
    Cluster,
    JobClass,
    background_comm_class,
    background_compute_class,
    build_workload,
    inference_classes,
    job_f,
)

MS = 1e-3
F_CLUSTER = Cluster(servers=2, bandwidth_gbps=80)  # mu = 1e10 B/s: 200 MB = 20 ms, 20 MB = 2 ms


def theta_for(prob, picks: dict[tuple[str, int], list[tuple[Option, float]]]) -> np.ndarray:
    """theta with the given (option, probability) lists for (class, subgraph index)."""
    th = np.zeros(prob.n_options)
    k = 0
    for j, sp in zip(prob.classes, prob.spaces):
        if sp is None or j.dag.number_of_nodes() == 1:
            continue
        for si, opts in enumerate(sp.options):
            chosen = dict(picks.get((j.name, si), [(opts[0], 1.0)]))
            for i, o in enumerate(opts):
                th[k + i] = chosen.get(o, 0.0)
            k += len(opts)
    return th


def f_workload(beta=20.0, bg_rate=2.0, bg_bytes=5e6):
    return [
        job_f().with_rate(beta),
        background_comm_class(bg_bytes).with_rate(bg_rate),
        background_compute_class(0.004).with_rate(0.5),
    ]


ALLOC2 = Option((("det",), ("det_sparse",)), 0, 0)  # Fig. 1c: det_sparse alone on the other server
ALLOC1 = Option((("det",), ("det_sparse",)), 1, 1)  # Fig. 1b: det alone (200 MB crosses)
TOGETHER = Option((("det", "det_sparse"),), 0, 0)


def test_job_f_objective_by_hand():
    prob = compile_problem(f_workload(), F_CLUSTER)
    beta, lb, sb = 20.0, 2.0, 5e6 / 1e10
    s20, s8 = 20e6 / 1e10, 8 / 1e10
    # all on one server: tau_f = 22 ms, only the background transfers use the link
    ev = evaluate(prob, theta_for(prob, {("f", 0): [(TOGETHER, 1.0)]}))
    phi0 = lb * sb**2 / (2 * (1 - lb * sb))
    assert ev.phi == pytest.approx(phi0)
    assert ev.tau[0] == pytest.approx(22 * MS)
    assert ev.objective == pytest.approx(beta * 22 * MS + lb * (phi0 + sb) + 0.5 * 0.004)
    # allocation 2 half of the time: sum->det_sparse (20 MB) and det_sparse->add (8 B) cross
    th = theta_for(prob, {("f", 0): [(TOGETHER, 0.5), (ALLOC2, 0.5)]})
    ev = evaluate(prob, th)
    rho = lb * sb + 0.5 * beta * (s20 + s8)
    phi = (lb * sb**2 + 0.5 * beta * (s20**2 + s8**2)) / (2 * (1 - rho))
    chi_alloc2 = max(10 * MS, 10 * MS + (phi + s20) + (phi + s8))
    tau = 1 * MS + 0.5 * 20 * MS + 0.5 * chi_alloc2 + 1 * MS
    assert ev.rho == pytest.approx(rho) and ev.phi == pytest.approx(phi)
    assert ev.tau[0] == pytest.approx(tau)
    assert ev.objective == pytest.approx(beta * tau + lb * (phi + sb) + 0.5 * 0.004)
    # allocation 1 pays the 200 MB transfer (20 ms): worse than allocation 2 (section II)
    ev1 = evaluate(prob, theta_for(prob, {("f", 0): [(ALLOC1, 1.0)]}))
    ev2 = evaluate(prob, theta_for(prob, {("f", 0): [(ALLOC2, 1.0)]}))
    assert ev1.tau[0] - ev2.tau[0] == pytest.approx(18 * MS, abs=2 * (ev1.phi - ev2.phi) + 1e-9)
    assert ev1.tau[0] > ev2.tau[0]


def two_branch(direct: bool = True) -> JobClass:
    g = nx.DiGraph(name="two")
    for n, ms in {"s": 2, "a": 4, "b": 6, "t": 1}.items():
        g.add_node(n, work_s=ms * MS)
    for (u, v), mb in {("s", "a"): 1, ("s", "b"): 2, ("a", "t"): 3, ("b", "t"): 4}.items():
        g.add_edge(u, v, bytes=mb * 1e6)
    if direct:
        g.add_edge("s", "t", bytes=5e6)
    return JobClass("two", "inference", g, arrival_rate=10.0)


@pytest.mark.parametrize("direct_edge_branch", [True, False])
def test_two_branch_dag_by_hand(direct_edge_branch):
    c = Cluster(bandwidth_gbps=8)  # 1e9 B/s: 1 MB = 1 ms
    # the paper's (X)-(XI) by hand: each part priced on its own, kappa the max over parts
    prob = compile_problem([two_branch()], c, direct_edge_branch=direct_edge_branch, pricing="paper")
    opt = Option((("a",), ("b",)), 0, 1)  # s with a, t with b
    ev = evaluate(prob, theta_for(prob, {("two", 0): [(opt, 1.0)]}))
    # crossing: s->b (2 ms), a->t (3 ms), s->t (5 ms, k != l)
    rho = 10 * (2 + 3 + 5) * MS
    phi = 10 * ((2 * MS) ** 2 + (3 * MS) ** 2 + (5 * MS) ** 2) / (2 * (1 - rho))
    chi_a = 4 * MS + phi + 3 * MS
    chi_b = 6 * MS + phi + 2 * MS
    branches = [chi_a, chi_b] + ([phi + 5 * MS] if direct_edge_branch else [])
    assert ev.rho == pytest.approx(rho)
    assert ev.tau[0] == pytest.approx(2 * MS + max(branches) + 1 * MS)
    assert ev.objective == pytest.approx(10 * ev.tau[0])


def small_problems():
    c8 = Cluster(bandwidth_gbps=8)
    yield (
        "f_low",
        build_workload(classes=[job_f()], load=0.2, cluster=F_CLUSTER, background_comm_bytes=20e6),
        F_CLUSTER,
    )
    yield (
        "f_high",
        build_workload(classes=[job_f()], load=0.6, cluster=F_CLUSTER, background_comm_bytes=20e6),
        F_CLUSTER,
    )
    yield (
        "f_alone",
        build_workload(classes=[job_f()], load=0.5, cluster=F_CLUSTER, background_ratio=math.inf),
        F_CLUSTER,
    )
    two = two_branch()
    yield "two_f", [two, job_f().with_rate(40.0), background_comm_class(3e6).with_rate(30.0)], c8


def brute_force_pure(prob) -> float:
    best = math.inf
    ranges = [range(s) for s in prob.size]
    for pick in itertools.product(*ranges):
        th = np.zeros(prob.n_options)
        th[prob.starts + np.array(pick)] = 1.0
        try:
            best = min(best, evaluate(prob, th).objective)
        except UnstableLinkError:
            pass
    return best


@pytest.mark.parametrize(
    "name, wl, cluster", list(small_problems()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_global_is_certified_and_not_beaten(name, wl, cluster):
    prob = compile_problem(wl, cluster)
    g = solve(prob, method="global")
    assert g.info["converged"]
    tol = 1e-6 * g.objective + 1e-12
    assert g.lower_bound <= g.objective <= g.lower_bound + tol
    pure = brute_force_pure(prob)
    assert g.objective <= pure + tol
    # no random mixed strategy beats it either
    rng = np.random.default_rng(1)
    for _ in range(300):
        th = np.concatenate([rng.dirichlet(np.ones(s) * 0.3) for s in prob.size])
        try:
            assert evaluate(prob, th).objective >= g.lower_bound - tol
        except UnstableLinkError:
            pass
    for method in ("local", "penalty"):
        other = solve(prob, method=method)
        assert g.objective <= other.objective + tol, method
    # the scipy.linprog path solves the same LPs
    assert solve(prob, method="global", lp="scipy").objective == pytest.approx(g.objective, rel=1e-9)


def test_global_equals_brute_force_where_pure_is_optimal():
    # job f alone on an idle link: distributing along the sparse branch, sink with det, is best
    wl = build_workload(classes=[job_f()], load=0.3, cluster=F_CLUSTER, background_ratio=math.inf)
    prob = compile_problem(wl, F_CLUSTER)
    g = solve(prob)
    assert g.objective == pytest.approx(brute_force_pure(prob), rel=1e-6)
    ((sub, opts),) = g.distributions()["f"]
    best = max(opts, key=lambda op: op[1])[0]
    assert best.partition == (("det",), ("det_sparse",)) and best.source_part == 0 and best.sink_part == 1


def test_gradient_matches_finite_differences():
    c = Cluster(bandwidth_gbps=10)
    wl = inference_classes(["resnet18", "densenet121"])
    wl = [j.with_rate(0.5) for j in wl] + [
        job_f().with_rate(5.0),
        background_comm_class(2e8).with_rate(1.0),
        background_compute_class(0.1).with_rate(1.0),
    ]
    prob = compile_problem(wl, c)
    rng = np.random.default_rng(3)
    th = np.concatenate([rng.dirichlet(np.ones(s)) for s in prob.size]) * 0.5
    ev = evaluate(prob, th, grad=True)
    h = 1e-7
    for o in range(prob.n_options):
        e = np.zeros(prob.n_options)
        e[o] = h
        fd = (evaluate(prob, th + e).objective - evaluate(prob, th - e).objective) / (2 * h)
        assert ev.grad[o] == pytest.approx(fd, rel=1e-5, abs=1e-7), o


def test_unstable_and_infeasible_errors():
    c = Cluster(bandwidth_gbps=8)
    wl = [two_branch(), background_comm_class(1e9).with_rate(1.2)]  # 1.2 s of transfers per second
    with pytest.raises(InfeasibleError, match="rho = 1.2"):
        solve(wl, c)
    prob = compile_problem([two_branch()], c)
    th = np.zeros(prob.n_options)
    th[prob.starts + 4] = 1e3  # absurd mass on a distributing option -> rho >= 1
    with pytest.raises(UnstableLinkError, match="constraint VII"):
        evaluate(prob, th)


def test_bad_inputs():
    with pytest.raises(ValueError, match="bandwidth_gbps"):
        Cluster(bandwidth_gbps=0)
    with pytest.raises(ValueError, match="arrival_rate"):
        job_f().with_rate(-1.0)
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a")])
    nx.set_node_attributes(g, 0.001, "work_s")
    nx.set_edge_attributes(g, 1.0, "bytes")
    with pytest.raises(ValueError, match="cycle"):
        solve([JobClass("cyc", "inference", g)], Cluster())
    with pytest.raises(ValueError, match="load"):
        build_workload(classes=[job_f()], load=1.5, cluster=Cluster())
    with pytest.raises(ValueError, match="method"):
        solve([job_f().with_rate(1.0)], Cluster(), method="newton")
    with pytest.raises(ValueError, match="unique"):
        solve([job_f(), job_f()], Cluster())


def test_json_output_schema():
    wl = build_workload(["resnet18", "alexnet"], load=0.5, cluster=Cluster())
    r = solve(wl, Cluster(), method="global")
    out = to_json(r, load=0.5)
    for key in ("method", "objective", "link_load", "search_space", "n_distributions", "classes"):
        assert key in out
    # the tables are simulation inputs: no wall-clock time in them, so a re-solve is the same file
    assert "solve_seconds" not in out
    assert to_json(solve(wl, Cluster(), method="global"), load=0.5) == out
    assert out["search_space"] == 15 and out["n_distributions"] == 3
    rn = out["classes"]["resnet18"]
    assert rn["kind"] == "inference" and len(rn["subgraphs"]) == 3
    for sg in rn["subgraphs"]:
        assert sum(o["p"] for o in sg["options"]) == pytest.approx(1.0)
        assert all(o["p"] >= 0 for o in sg["options"])
    assert out["classes"]["alexnet"]["subgraphs"] == []
    assert out["classes"]["background_comm"]["kind"] == "background_comm"
    assert out["link_load"] == pytest.approx(r.rho)


def _random_subgraph_dag(rng):
    """A source, a sink and 1..5 intermediate tasks with random edges (acyclic by index)."""
    m = int(rng.integers(1, 6))
    g = nx.DiGraph()
    names = ["s", *[f"x{i}" for i in range(m)], "t"]
    for n in names:
        g.add_node(n, work_s=float(rng.uniform(0, 0.01)))
    for i in range(m):
        g.add_edge("s", f"x{i}", bytes=float(rng.uniform(0, 1e7)))
        g.add_edge(f"x{i}", "t", bytes=float(rng.uniform(0, 1e7)))
        for k in range(i + 1, m):
            if rng.random() < 0.3:
                g.add_edge(f"x{i}", f"x{k}", bytes=float(rng.uniform(0, 1e7)))
    if rng.random() < 0.5:
        g.add_edge("s", "t", bytes=float(rng.uniform(0, 1e7)))
    return g


@pytest.mark.parametrize("direct_edge_branch", [True, False])
def test_vectorised_rows_match_the_per_option_loop(direct_edge_branch):
    from schedlab.nona.decision import class_space
    from schedlab.nona.optimise import _subgraph_rows, _subgraph_rows_reference

    rng = np.random.default_rng(11)
    dags = [_random_subgraph_dag(rng) for _ in range(25)] + [two_branch().dag, job_f().dag]
    dags += [j.dag for j in inference_classes(["resnet18"])]
    for dag in dags:
        sp = class_space("x", dag)
        for sub, opts in zip(sp.subgraphs, sp.options):
            A, cnt, s1, s2 = _subgraph_rows(dag, sub, opts, 1e9, 2.0, direct_edge_branch)
            rA, rn, r1, r2 = _subgraph_rows_reference(dag, sub, opts, 1e9, 2.0, direct_edge_branch)
            np.testing.assert_allclose(s1, r1, rtol=1e-12, atol=1e-18)
            np.testing.assert_allclose(s2, r2, rtol=1e-12, atol=1e-24)
            for o in range(len(opts)):
                # the same multiset of branches (columns are padded with -inf / 0)
                got = sorted(zip(A[o][np.isfinite(A[o])], cnt[o][np.isfinite(A[o])]))
                want = sorted(zip(rA[o], rn[o]))
                np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-12, atol=1e-15)


def test_cli_solve_json_and_errors():
    import json

    from click.testing import CliRunner

    from schedlab.cli import main

    runner = CliRunner()
    res = runner.invoke(main, ["nona", "solve", "--load", "0.4", "--models", "resnet18,alexnet", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["method"] == "global" and doc["load"] == 0.4 and doc["servers"] == 80
    assert doc["search_space"] == 15 and doc["n_distributions"] == 3
    assert doc["gap"] <= 1e-6 * doc["objective"]
    assert {"resnet18", "alexnet", "background_compute", "background_comm"} == set(doc["classes"])
    res = runner.invoke(main, ["nona", "solve", "--load", "0.4", "--models", "resnet18", "--method", "local"])
    assert res.exit_code == 0 and "local: objective" in res.output
    bad = runner.invoke(main, ["nona", "solve", "--load", "1.2", "--models", "resnet18"])
    assert bad.exit_code != 0 and "load must be in (0, 1)" in bad.output
    bad = runner.invoke(main, ["nona", "solve", "--bandwidth-gbps", "0", "--models", "resnet18"])
    assert bad.exit_code != 0 and "bandwidth_gbps" in bad.output


def test_local_active_set_grows_until_kkt_holds():
    # job f at load 0.6: the optimum is an interior mix. Start the active set with the
    # all-together option only: the KKT check must bring in the options the optimum uses.
    wl = build_workload(classes=[job_f()], load=0.6, cluster=F_CLUSTER, background_comm_bytes=20e6)
    prob = compile_problem(wl, F_CLUSTER)
    g = solve(prob, method="global")
    loc = solve(prob, method="local", initial_per_distribution=0)
    assert loc.info["kkt"] and loc.info["rounds"] > 1
    assert loc.objective == pytest.approx(g.objective, rel=1e-5)
    # the mix: distributing f with a probability strictly inside (0, 1)
    ((sub, opts),) = loc.distributions()["f"]
    together = sum(p for o, p in opts if len(o.partition) == 1)
    assert 0.05 < together < 0.95


def test_local_active_set_matches_the_full_space_run():
    c = Cluster(bandwidth_gbps=10)
    wl = build_workload(
        ["resnet18", "densenet121"],
        load=0.5,
        cluster=c,
        comm_load=0.2,
        classes=[j.with_rate(0.0) for j in inference_classes(["resnet18", "densenet121"])] + [job_f()],
    )
    prob = compile_problem(wl, c)
    full = solve(prob, method="local", active_set=False)
    act = solve(prob, method="local")
    g = solve(prob, method="global")
    assert act.info["active_set"] and act.info["kkt"] and not full.info["active_set"]
    tol = 1e-5 * g.objective
    assert g.lower_bound - tol <= act.objective <= full.objective + tol
    # KKT over all options at the answer: no option has a lower partial derivative than its
    # distribution's theta-weighted mean (by more than the tolerance)
    gr = evaluate(prob, act.theta, grad=True).grad
    lam = np.add.reduceat(act.theta * gr, prob.starts)
    assert np.all(gr - lam[prob.dist] >= -1e-6 * np.abs(lam[prob.dist]) - 1e-12)


def test_solution_does_not_depend_on_the_hash_seed():
    """Pipeline outputs are deterministic: compiling and solving in processes with different string
    hash seeds gives the same bits (the subgraph edges were once listed in set order)."""
    import subprocess
    import sys

    code = (
        "import hashlib; from schedlab.nona.workload import Cluster, build_workload; "
        "from schedlab.nona import optimise; c = Cluster(servers=80, bandwidth_gbps=10); "
        "w = build_workload(load=0.7, cluster=c, comm_load=0.05); r = optimise.solve(w, c); "
        "p = r.problem; print(hashlib.md5(r.theta.tobytes() + p.S1.tobytes() + p.S2.tobytes()).hexdigest())"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**__import__("os").environ, "PYTHONHASHSEED": str(s)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for s in (1, 2, 3)
    }
    assert len(outs) == 1, outs
