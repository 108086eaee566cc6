"""Nona's model against its simulator on an idle cluster, and the dependency-aware pricing.

On an idle cluster the link wait phi is 0 and no other job queues anywhere, so the model's
predicted JCT of one placement is arithmetic; the simulator (:func:`schedlab.nona.sim.idle_jct`)
runs the same placement through its event loop. Under ``pricing="critical_path"`` the two
agree to rounding: it prices each part's tasks in sequence, a task's wait for its predecessors
in other parts, and the job's own transfers queueing one after another at the FIFO link.
The paper's typeset pricing (``"paper"``: kappa = max over parts, a part's chi ignores its
predecessors' compute in other parts, transfers never queue behind each other) misprices
dependent parts, and on GPT-2's attention chain it predicts a gain the simulator refutes.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from schedlab.nona import tables
from schedlab.nona.decision import class_space
from schedlab.nona.optimise import (
    DEFAULT_PRICING,
    PRICINGS,
    _subgraph_rows_critical,
    _subgraph_rows_critical_reference,
    compile_problem,
    evaluate,
    placement_counts,
    solve,
    theta_from_tables,
    to_json,
)
from schedlab.nona.schedulers import TableScheduler
from schedlab.nona.sim import SimInputError, idle_jct
from schedlab.nona.workload import (
    Cluster,
    JobClass,
    background_comm_class,
    build_workload,
    inference_classes,
    job_f,
)

MS = 1e-3
C8 = Cluster(servers=8, bandwidth_gbps=8)  # 1e9 B/s: 1 MB = 1 ms


def diamond() -> JobClass:
    """Two truly parallel branches of 10 ms each, 1 MB in and out of each."""
    g = nx.DiGraph(name="diamond")
    for n, ms in {"s": 1, "a": 10, "b": 10, "t": 1}.items():
        g.add_node(n, work_s=ms * MS)
    for u, v in (("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")):
        g.add_edge(u, v, bytes=1e6)
    return JobClass("diamond", "inference", g)


def dependent() -> JobClass:
    """s -> a -> b -> t with a skip s -> b and a -> t: a and b are intermediate but b waits for a."""
    g = nx.DiGraph(name="dep")
    for n, ms in {"s": 1, "a": 8, "b": 9, "t": 1}.items():
        g.add_node(n, work_s=ms * MS)
    for (u, v), mb in {("s", "a"): 1, ("s", "b"): 1, ("a", "b"): 2, ("a", "t"): 1, ("b", "t"): 1}.items():
        g.add_edge(u, v, bytes=mb * 1e6)
    return JobClass("dep", "inference", g)


def one_option_tables(job: JobClass, option: dict) -> dict:
    """Tables placing every subgraph of ``job`` with ``option`` (partition given by task names)."""
    return {
        "classes": {
            job.name: {
                "subgraphs": [
                    {"source": s, "sink": t, "intermediate": list(inner), "options": [dict(option, p=1.0)]}
                    for s, t, inner in tables.segments(job.dag)
                    if inner
                ]
            }
        }
    }


def predicted(job: JobClass, cluster: Cluster, doc: dict, pricing: str) -> tuple[float, float]:
    """(model JCT at phi = 0, sum of the crossing service times) of the placement ``doc``."""
    prob = compile_problem([job], cluster, pricing=pricing, oversized="keep_together")  # rate 0: phi = 0
    theta = theta_from_tables(prob, doc)
    ev = evaluate(prob, theta)
    assert ev.phi == 0.0
    return float(ev.tau[0]), float(prob.S1 @ theta)


def simulated(job: JobClass, cluster: Cluster, doc: dict) -> float:
    return idle_jct(job, cluster, TableScheduler(doc), rng=np.random.default_rng(0))


@pytest.mark.parametrize(
    "job, option, expected_ms",
    [
        (diamond(), {"partition": [["a", "b"]], "source_part": 0, "sink_part": 0}, 22.0),
        (diamond(), {"partition": [["a"], ["b"]], "source_part": 0, "sink_part": 0}, 1 + 1 + 10 + 1 + 1),
        (diamond(), {"partition": [["a"], ["b"]], "source_part": 1, "sink_part": 0}, 1 + 1 + 10 + 1),
        (dependent(), {"partition": [["a", "b"]], "source_part": 0, "sink_part": 0}, 19.0),
        (dependent(), {"partition": [["a"], ["b"]], "source_part": 0, "sink_part": 0}, 1 + 8 + 2 + 9 + 1 + 1),
        (
            job_f(),
            {"partition": [["det"], ["det_sparse"]], "source_part": 0, "sink_part": 0},
            1 + 20 + 10 + 8e-6 + 1,
        ),
    ],
    ids=[
        "diamond-together",
        "diamond-split",
        "diamond-split-source-away",
        "dep-together",
        "dep-split",
        "f-split",
    ],
)
def test_critical_path_model_equals_the_idle_simulator(job, option, expected_ms):
    # one transfer on the link at a time in each case: exact agreement, and the hand-computed value
    doc = one_option_tables(job, option)
    model, _ = predicted(job, C8, doc, "critical_path")
    sim = simulated(job, C8, doc)
    assert sim == pytest.approx(expected_ms * MS, rel=1e-12)
    assert model == pytest.approx(sim, rel=1e-12, abs=1e-15)


def test_a_jobs_own_transfers_queue_at_the_link():
    # s sends 3 MB to a and 3 MB to b on two other servers at once: the second waits for the first
    g = nx.DiGraph(name="fan")
    for n, ms in {"s": 1, "a": 5, "b": 5, "c": 1, "t": 1}.items():
        g.add_node(n, work_s=ms * MS)
    for (u, v), mb in {
        ("s", "a"): 3,
        ("s", "b"): 3,
        ("s", "c"): 1,
        ("a", "t"): 1,
        ("b", "t"): 1,
        ("c", "t"): 1,
    }.items():
        g.add_edge(u, v, bytes=mb * 1e6)
    job = JobClass("fan", "inference", g)
    doc = one_option_tables(job, {"partition": [["a"], ["b"], ["c"]], "source_part": 2, "sink_part": 2})
    sim = simulated(job, C8, doc)
    model, _ = predicted(job, C8, doc, "critical_path")
    paper, _ = predicted(job, C8, doc, "paper")
    # link: s->a 1-4 ms, s->b 4-7, a->t 9-10, b->t 12-13; t runs 13-14 ms
    assert sim == pytest.approx(14 * MS, rel=1e-12) and model == pytest.approx(sim, rel=1e-12)
    assert paper == pytest.approx(11 * MS, rel=1e-12)  # as if b's input arrived at 4 ms


def test_paper_pricing_ignores_a_predecessor_in_another_part():
    # b waits for a's 8 ms on the other server; (X)-(XI) as typeset price b's part without it
    doc = one_option_tables(dependent(), {"partition": [["a"], ["b"]], "source_part": 0, "sink_part": 0})
    paper, _ = predicted(dependent(), C8, doc, "paper")
    critical, _ = predicted(dependent(), C8, doc, "critical_path")
    sim = simulated(dependent(), C8, doc)
    assert critical == pytest.approx(sim, rel=1e-12)
    assert sim - paper == pytest.approx(7 * MS, rel=1e-9)  # a's 8 ms minus the 1 ms s -> b overlap


def gpt2_chain_split(dag, s, t, inner) -> list[dict]:
    """GPT-2's attention subgraphs cut as the paper pricing's optimum cuts them:
    [[ln_1+c_attn, q, k, v], [scores/softmax], [value matmul]], sink with the last part."""
    if len(inner) == 6:
        return [
            {"partition": [inner[:4], [inner[4]], [inner[5]]], "source_part": 0, "sink_part": 2, "p": 1.0}
        ]
    return [tables.together_option(dag, s, t, inner)]


@pytest.fixture(scope="module")
def gpt2() -> JobClass:
    return inference_classes(["gpt2"])[0]


@pytest.mark.parametrize("gbps", [10.0, 100.0])
def test_gpt2_chain_split_model_vs_simulator(gpt2, gbps):
    cluster = Cluster(servers=80, bandwidth_gbps=gbps)
    together = tables.option_tables([gpt2], lambda *a: [tables.together_option(*a)])
    split = tables.option_tables([gpt2], gpt2_chain_split)
    rows = {}
    for name, doc in (("together", together), ("split", split)):
        paper, _ = predicted(gpt2, cluster, doc, "paper")
        critical, crossing = predicted(gpt2, cluster, doc, "critical_path")
        rows[name] = paper, critical, crossing, simulated(gpt2, cluster, doc)
    p_t, c_t, x_t, s_t = rows["together"]
    p_s, c_s, x_s, s_s = rows["split"]
    assert x_t == 0 and p_t == pytest.approx(s_t, rel=1e-12) and c_t == pytest.approx(s_t, rel=1e-12)
    assert x_s > 0 and c_s == pytest.approx(s_s, rel=1e-12)
    assert s_s > s_t and c_s > c_t  # splitting the chain is slower, and the critical path says so
    assert p_s < p_t - 0.08  # the paper pricing predicts a ~0.1 s gain that the simulator refutes


def test_critical_rows_match_the_schedule_oracle(gpt2):
    rng = np.random.default_rng(3)
    cases = [(gpt2.dag, s) for s in class_space("gpt2", gpt2.dag).subgraphs[:2]]
    for _ in range(6):  # random DAGs with one root and one sink, random times and bytes
        g = nx.gnp_random_graph(6, 0.5, seed=int(rng.integers(1 << 30)), directed=True)
        g = nx.DiGraph([(u, v) for u, v in g.edges if u < v])
        g.add_nodes_from(range(6))
        for x in range(6):
            g.add_edge("s", x)
            g.add_edge(x, "t")
        for x in g:
            g.nodes[x]["work_s"] = float(rng.uniform(0, 5)) * MS
        for u, v in g.edges:
            g.edges[u, v]["bytes"] = float(rng.choice([0.0, 1e6, 3e6]))
        cases += [(g, s) for s in class_space("rand", g).subgraphs]
    for dag, sub in cases:
        opts = class_space("x", dag).options[
            [s.source for s in class_space("x", dag).subgraphs].index(sub.source)
        ]
        A, n, _, _ = _subgraph_rows_critical(dag, sub, opts, 1e9, 2.0)
        for phi in (0.0, 0.7 * MS, 40 * MS):
            ref = np.array(_subgraph_rows_critical_reference(dag, sub, opts, 1e9, 2.0, phi))
            assert np.allclose((A + n * phi).max(axis=1), ref, rtol=1e-12, atol=1e-15)


def test_certificate_holds_under_both_pricings():
    c2 = Cluster(servers=2, bandwidth_gbps=80)
    jobs = [job_f(), diamond(), dependent()]
    for pricing, load in itertools.product(PRICINGS, (0.2, 0.6)):
        wl = build_workload(classes=jobs, load=load, cluster=c2, background_comm_bytes=20e6)
        prob = compile_problem(wl, c2, pricing=pricing)
        g = solve(prob, method="global")
        tol = 1e-6 * g.objective + 1e-12
        assert g.info["converged"] and g.lower_bound <= g.objective <= g.lower_bound + tol
        loc = solve(prob, method="local")
        pen = solve(prob, method="penalty")
        assert g.objective <= loc.objective + tol and g.objective <= pen.objective + tol, (pricing, load)


def test_pricing_is_validated_and_recorded():
    c2 = Cluster(servers=2, bandwidth_gbps=80)
    wl = [job_f().with_rate(1.0), background_comm_class(1e6).with_rate(1.0)]
    assert DEFAULT_PRICING in PRICINGS
    assert compile_problem(wl, c2).pricing == DEFAULT_PRICING
    with pytest.raises(ValueError, match="pricing must be one of"):
        compile_problem(wl, c2, pricing="max")
    with pytest.raises(ValueError, match="oversized must be one of"):
        compile_problem(wl, c2, oversized="drop")
    with pytest.raises(ValueError, match="direct_edge_branch=False applies to pricing='paper'"):
        solve(wl, c2, pricing="critical_path", direct_edge_branch=False)
    prob = compile_problem(wl, c2, pricing="critical_path")
    assert solve(prob).problem.pricing == "critical_path"
    with pytest.raises(ValueError, match="was priced 'critical_path'"):
        solve(prob, pricing="paper")


def test_idle_jct_refuses_live_schemes():
    from schedlab.nona.schedulers import make_scheduler

    with pytest.raises(SimInputError, match="oblivious"):
        idle_jct(diamond(), C8, make_scheduler("spark_fair"), rng=np.random.default_rng(0))


def test_root_relaxation_certifies_where_only_the_background_wait_tempts_a_split():
    # the benchmark point where the Lagrangian search alone ran 5,000 nodes without closing its gap
    from schedlab.nona import profiles
    from schedlab.nona.optimise import _interval_cost

    cl = Cluster(servers=80, bandwidth_gbps=10)
    wl = build_workload(classes=inference_classes(profiles.MODELS), load=0.9, cluster=cl, comm_load=0.1)
    prob = compile_problem(wl, cl, pricing="critical_path")
    g = solve(prob)
    assert g.info["converged"] and g.info.get("root_relaxation")
    assert g.gap <= 1e-6 * g.objective
    assert g.objective <= solve(prob, method="local").objective + 1e-6 * g.objective
    # the root bound is below the objective of any stable theta (it is a relaxation)
    c, k = _interval_cost(prob, prob.phi_min())
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(200):
        th = np.concatenate([rng.dirichlet(np.ones(s) * 0.2) for s in prob.size])
        th = 0.05 * th + 0.95 * prob.local_theta()  # mostly together, so that the link stays stable
        if prob.rho0 + prob.r @ th < 1:
            assert c @ th + k <= evaluate(prob, th).objective + 1e-9
            checked += 1
    assert checked >= 20


def test_cli_pricing_choices_are_the_library_pricings():
    from schedlab.cli.nona import nona_solve

    opt = next(p for p in nona_solve.params if p.name == "pricing")
    assert tuple(opt.type.choices) == PRICINGS


def test_cli_oversized_choices_are_the_library_ones():
    from schedlab.cli.nona import nona_solve
    from schedlab.nona.decision import OVERSIZED

    opt = next(p for p in nona_solve.params if p.name == "oversized")
    assert tuple(opt.type.choices) == OVERSIZED


def test_inception_v3_real_branches_model_equals_simulator_and_split_pays():
    # PipeDream's inception_v3: the 27-task subgraph its auxiliary head creates is kept together
    from schedlab.nona.sim import simulate

    (inc,) = inference_classes(["inception_v3"])
    cl = Cluster(servers=80, bandwidth_gbps=100)
    with pytest.raises(ValueError, match="oversized='keep_together'"):
        compile_problem([inc], cl)
    wl = build_workload(classes=[inc], load=0.5, cluster=cl, comm_load=0.0, load_basis="cluster")
    res = solve(wl, cl, pricing="critical_path", oversized="keep_together")
    sizes = [len(o) for o in res.problem.spaces[0].options]
    assert sorted(sizes)[-1] == 99 and sizes.count(1) == 1  # 4-branch modules: 99 options; the big one: 1
    assert res.info["converged"]
    doc = to_json(res)
    together = tables.option_tables(wl, lambda *a: [tables.together_option(*a)])
    assert placement_counts(res)["split_subgraphs"] >= 1
    # on an idle cluster the model's price of Nona's placement is what the simulator measures
    assert predicted(inc, cl, doc, "critical_path")[0] == pytest.approx(simulated(inc, cl, doc), rel=1e-12)
    # and under load the simulator confirms the gain over keeping every subgraph together
    means = {}
    for name, tab in (("nona", doc), ("together", together)):
        r = simulate(wl, cl, TableScheduler(tab), duration=200.0, warmup=20.0, rng=np.random.default_rng(0))
        means[name] = float(r.jobs.query("job_class == 'inception_v3'").jct.mean())
    assert means["nona"] < 0.97 * means["together"]
    assert (
        res.tau["inception_v3"]
        < 0.95 * evaluate(res.problem, theta_from_tables(res.problem, together)).tau[0]
    )
