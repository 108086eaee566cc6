"""The servers' queues in Nona's model (``pricing="critical_path_queued"``).

The simulator enqueues every task in its server's FIFO buffer when its last input is ready; the
idle-cluster pricing (``critical_path``) has no such wait. ``critical_path_queued`` adds the
M/G/1 (Pollaczek-Khinchine) task wait W_s of a server (:func:`schedlab.nona.optimise.server_queue`)
once per task, at the moment it joins the queue. Checked here: the rows against an independent
per-option schedule, the limit W_s -> 0, W_s against M/D/1, Lindley's recursion and the event
simulator, the certificate, and the mean JCT of inception_v3 at load 0.5 against the simulator.
"""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from schedlab.nona import branches, tables
from schedlab.nona.decision import class_space
from schedlab.nona.optimise import (
    _subgraph_rows_critical,
    compile_problem,
    evaluate,
    server_queue,
    solve,
    theta_from_tables,
)
from schedlab.nona.queueing import lindley_wait, md1_wait, server_wait
from schedlab.nona.schedulers import TableScheduler
from schedlab.nona.sim import simulate
from schedlab.nona.workload import Cluster, JobClass, build_workload, inference_classes, job_f

MS = 1e-3
QUEUED = "critical_path_queued"


def diamond() -> JobClass:
    g = nx.DiGraph()
    for n, ms in {"s": 1, "a": 10, "b": 10, "t": 1}.items():
        g.add_node(n, work_s=ms * MS)
    for u, v in (("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")):
        g.add_edge(u, v, bytes=1e6)
    return JobClass("diamond", "inference", g)


def chain(k: int, ms: float, name: str = "chain") -> JobClass:
    g = nx.DiGraph()
    for i in range(k):
        g.add_node(i, work_s=ms * MS)
    for i in range(k - 1):
        g.add_edge(i, i + 1, bytes=0.0)
    return JobClass(name, "inference", g)


def random_dags(rng: np.random.Generator, n: int = 5):
    for _ in range(n):
        g = nx.gnp_random_graph(5, 0.5, seed=int(rng.integers(1 << 30)), directed=True)
        g = nx.DiGraph([(u, v) for u, v in g.edges if u < v])
        g.add_nodes_from(range(5))
        for x in range(5):
            g.add_edge("s", x)
            g.add_edge(x, "t")
        for x in g:
            g.nodes[x]["work_s"] = float(rng.uniform(0, 5)) * MS
        for u, v in g.edges:
            g.edges[u, v]["bytes"] = float(rng.choice([0.0, 1e6, 3e6]))
        yield g


def schedule_with_queues(dag, sub, option, mu: float, nu: float, phi: float, wait: float) -> float:
    """Independent per-option schedule: the sink's start after the source's completion.

    A task joins its part's server queue when its last input is ready (a same-server
    predecessor done, or its transfer arrived), waits ``wait`` there, and starts when also the
    previous task of its part (topological order) is done; a transfer waits ``phi`` on the FIFO
    link behind the job's earlier transfers. Written from the rules, not from the DP.
    """
    part = {x: i for i, p in enumerate(option.partition) for x in p}
    part[sub.source], part[sub.sink] = option.source_part, option.sink_part
    order = [*sub.intermediate, sub.sink]
    rank = {x: i for i, x in enumerate([sub.source, *order])}
    done, arrive, free = {sub.source: 0.0}, {}, {}
    link = -math.inf
    for x in [sub.source, *order]:
        if x != sub.source:
            ready = max(arrive.get((u, x), done[u]) for u in dag.pred[x] if u in done)
            start = ready + wait
            if x == sub.sink:
                return start
            start = max(start, free.get(part[x], -math.inf))
            done[x] = free[part[x]] = start + dag.nodes[x]["work_s"] / nu
        for v in sorted((v for v in dag.succ[x] if v in rank), key=rank.__getitem__):
            b = dag.edges[x, v]["bytes"]
            if part[x] != part[v] and b > 0:
                link = max(done[x] + phi, link) + b / mu
                arrive[x, v] = link
    raise AssertionError("the sink was not reached")


def test_queued_rows_match_an_independent_schedule():
    rng = np.random.default_rng(7)
    (inc,) = inference_classes(["inception_v3"])
    inc_space = class_space("inc", inc.dag, oversized="keep_together")
    cases = [(diamond().dag, class_space("d", diamond().dag))]
    cases += [(g, class_space("r", g)) for g in random_dags(rng)]
    # two Inception modules (3-4 parallel branches, real task times and bytes)
    cases += [(inc.dag, inc_space)]
    checked = 0
    for dag, space in cases:
        pairs = list(zip(space.subgraphs, space.options))
        if dag is inc.dag:
            pairs = [p for p in pairs if 1 < len(p[0].intermediate) <= 7][:2]
        for (sub, opts), wait in itertools.product(pairs, (0.3 * MS, 5 * MS)):
            A, n, _, _ = _subgraph_rows_critical(dag, sub, opts, 1e9, 2.0, wait)
            for phi in (0.0, 0.7 * MS, 40 * MS):
                got = (A + n * phi).max(axis=1)
                want = np.array([schedule_with_queues(dag, sub, o, 1e9, 2.0, phi, wait) for o in opts])
                assert np.allclose(got, want, rtol=1e-12, atol=1e-15)
                checked += len(opts)
    assert checked > 1000


def test_without_load_the_queued_pricing_is_the_critical_path_pricing():
    cl = Cluster(servers=4, bandwidth_gbps=8)
    # no compute arrivals: W_s = 0 and the two pricings compile to the same arrays, bit for bit
    idle = [job_f().with_rate(0.0), diamond().with_rate(0.0)]
    a, b = compile_problem(idle, cl, pricing="critical_path"), compile_problem(idle, cl, pricing=QUEUED)
    assert b.server_wait == 0.0 and b.server_load == 0.0
    for f in ("A", "n", "S1", "S2", "const", "phi_coef"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    # vanishing load: the queued rows exceed the idle ones by at most (tasks on a path) x W_s -> 0
    for load in (1e-3, 1e-6):
        wl = build_workload(classes=[job_f(), diamond()], load=load, cluster=cl, comm_load=0.01)
        a, b = compile_problem(wl, cl, pricing="critical_path"), compile_problem(wl, cl, pricing=QUEUED)
        fin = np.isfinite(a.A)
        d = b.A[fin] - a.A[fin]
        assert d.min() >= 0 and d.max() <= 4 * b.server_wait and b.server_wait < 0.05 * load
        assert np.array_equal(a.n, b.n)  # the transfers on a path do not change


def test_server_wait_md1_and_lindley():
    # one class of one deterministic task on one server: M/D/1
    rho, w = server_wait(np.array([40.0]), np.array([0.02]), np.array([0.02**2]), servers=1)
    assert rho == pytest.approx(0.8) and w == pytest.approx(md1_wait(40.0, 0.02), rel=1e-12)
    # several classes with several tasks each, spread over 8 servers: each task a Poisson customer
    cl = Cluster(servers=8, bandwidth_gbps=10)
    wl = build_workload(classes=[job_f(), diamond(), chain(3, 4.0)], load=0.6, cluster=cl, comm_load=0.0)
    rho, w = server_queue(wl, cl)
    assert rho == pytest.approx(0.6, rel=1e-12)
    rates = [j.arrival_rate / 8 for j in wl for _ in j.dag]
    times = [d["work_s"] for j in wl for _, d in j.dag.nodes(data=True)]
    sim = lindley_wait(np.array(rates), np.array(times), 300_000, np.random.default_rng(0))
    assert sim == pytest.approx(w, rel=0.05)  # measured: within 2% at this seed


def test_server_wait_refuses_bad_input():
    with pytest.raises(ValueError, match="servers must be a positive integer"):
        server_wait(np.array([1.0]), np.array([0.1]), np.array([0.01]), servers=0)
    with pytest.raises(ValueError, match="per-server compute load 1.2 >= 1"):
        server_wait(np.array([12.0]), np.array([0.1]), np.array([0.01]), servers=1)
    with pytest.raises(ValueError, match="service times must be finite"):
        server_wait(np.array([1.0]), np.array([-0.1]), np.array([0.01]), servers=1)


def simulated_class_means(wl, cl, seeds=(0, 1), duration=150.0) -> dict[str, float]:
    """Mean JCT per class of keep-together runs, averaged over ``seeds``."""
    out: dict[str, list[float]] = {}
    for s in seeds:
        jobs = simulate(
            wl,
            cl,
            TableScheduler(branches.together_tables(wl)),
            duration=duration,
            warmup=0.1 * duration,
            rng=np.random.default_rng(s),
        ).jobs
        for c, g in jobs.groupby("job_class", observed=True):
            out.setdefault(str(c), []).append(float(g.jct.mean()))
    return {c: float(np.mean(v)) for c, v in out.items()}


def modelled(wl, cl, pricing: str) -> dict[str, float]:
    prob = compile_problem(wl, cl, pricing=pricing)
    return dict(zip([c.name for c in prob.classes], evaluate(prob, prob.local_theta()).tau))


def test_one_task_jobs_wait_the_md1_wait_in_the_simulator():
    # one-task jobs on uniformly random servers: each server is exactly an M/D/1 queue
    cl = Cluster(servers=4, bandwidth_gbps=10)
    wl = build_workload(classes=[chain(1, 5.0)], load=0.5, cluster=cl, comm_load=0.0)
    rho, w = server_queue(wl, cl)
    assert w == pytest.approx(md1_wait(wl[0].arrival_rate / 4, 0.005), rel=0.02)  # + background compute
    assert modelled(wl, cl, QUEUED)["chain"] == pytest.approx(0.005 + w, rel=1e-12)
    assert simulated_class_means(wl, cl)["chain"] == pytest.approx(0.005 + w, rel=0.03)  # measured +1.3%


def test_chained_tasks_wait_more_than_w_when_every_job_is_a_chain():
    # a chain of 4 tasks of 5 ms at load 0.5: measured 37.2 ms; queued pricing 30.3 ms (-19%),
    # critical_path 20 ms (-46%). When every job is a chain, a server's tasks arrive in bursts
    # (not Poisson), so a task waits ~1.7 W_s: the per-task PK wait is a lower estimate here
    # (on inception_v3's workload it is within 0.8-1.2 W_s; see the inception test below)
    cl = Cluster(servers=4, bandwidth_gbps=10)
    wl = build_workload(classes=[chain(4, 5.0)], load=0.5, cluster=cl, comm_load=0.0)
    _, w = server_queue(wl, cl)
    queued, idle = modelled(wl, cl, QUEUED)["chain"], modelled(wl, cl, "critical_path")["chain"]
    assert queued == pytest.approx(0.020 + 4 * w, rel=1e-12) and idle == pytest.approx(0.020)
    sim = simulated_class_means(wl, cl)["chain"]
    assert -0.3 < queued / sim - 1 < 0
    assert abs(queued / sim - 1) < abs(idle / sim - 1) / 2


@pytest.mark.parametrize("load", [0.2, 0.6])
def test_certificate_under_the_queued_pricing(load):
    c2 = Cluster(servers=2, bandwidth_gbps=80)
    wl = build_workload(classes=[job_f(), diamond()], load=load, cluster=c2, background_comm_bytes=20e6)
    prob = compile_problem(wl, c2, pricing=QUEUED)
    assert prob.server_wait > 0
    g = solve(prob, method="global")
    tol = 1e-6 * g.objective + 1e-12
    assert g.info["converged"] and g.lower_bound <= g.objective <= g.lower_bound + tol
    for method in ("local", "penalty"):
        assert g.objective <= solve(prob, method=method).objective + tol, method


def split_branches(dag, s, t, inner) -> list[dict]:
    """Every parallel branch of an Inception module on its own server; the 27-task subgraph kept."""
    if len(inner) > 12:
        return [tables.together_option(dag, s, t, inner)]
    return [tables.split_option(dag, s, t, inner)]


def test_inception_mean_jct_at_load_half_queued_is_closer_than_critical_path():
    # 16 servers at load 0.5 each, no background transfers (the link's own model is not under test);
    # measured model / simulator - 1: queued +7.2% (together), -3.2% (split);
    # critical_path -59% and -70% (it prices an idle cluster)
    cl = Cluster(servers=16, bandwidth_gbps=100)
    wl = build_workload(
        ["inception_v3"], load=0.5, cluster=cl, byte_scale=0.01, load_basis="server", comm_load=0.0
    )
    docs = {"together": branches.together_tables(wl), "split": tables.option_tables(wl, split_branches)}
    err = {}
    for name, doc in docs.items():
        sim = branches.simulated_means(wl, cl, doc, seeds=[0, 1, 2], duration=30.0).mean()
        for pricing in ("critical_path", QUEUED):
            prob = compile_problem(wl, cl, pricing=pricing, oversized="keep_together")
            err[name, pricing] = evaluate(prob, theta_from_tables(prob, doc)).tau[0] / sim - 1
    for name in docs:
        assert abs(err[name, QUEUED]) < 0.12, (name, err)
        assert abs(err[name, QUEUED]) < abs(err[name, "critical_path"]) / 3, (name, err)
