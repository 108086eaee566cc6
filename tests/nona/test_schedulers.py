"""The schemes: placement semantics of section III-C, Opportunistic, Spark fair, table checks."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from schedlab.nona import sim
from schedlab.nona.schedulers import SchemeUnavailable, SparkFairScheduler, TableScheduler, make_scheduler
from schedlab.nona.tables import (
    TableError,
    branch_partition,
    check_tables_match,
    load_tables,
    opportunistic_tables,
)
from schedlab.nona.workload import JobClass, background_compute_class


def diamond_chain() -> JobClass:
    """r -> {a, b} -> m -> {c, d, e} -> z, with c -> d (so {c, d} is one branch)."""
    g = nx.DiGraph()
    for n in "rabmcdez":
        g.add_node(n, work_s=0.01)
    g.add_edges_from(
        [
            ("r", "a"),
            ("r", "b"),
            ("a", "m"),
            ("b", "m"),
            ("m", "c"),
            ("c", "d"),
            ("d", "z"),
            ("m", "e"),
            ("e", "z"),
        ],
        bytes=1e6,
    )
    return JobClass("dc", "inference", g, 1.0)


def compiled(job):
    return sim.compile_class(job, 0)


def tables_for(p_split: float) -> dict:
    return {
        "classes": {
            "dc": {
                "subgraphs": [
                    {
                        "source": "r",
                        "sink": "m",
                        "intermediate": ["a", "b"],
                        "options": [
                            {"partition": [["a"], ["b"]], "source_part": 1, "sink_part": 0, "p": p_split},
                            {"partition": [["a", "b"]], "source_part": 0, "sink_part": 0, "p": 1 - p_split},
                        ],
                    },
                    {
                        "source": "m",
                        "sink": "z",
                        "intermediate": ["c", "d", "e"],
                        "options": [
                            {"partition": [["c", "d", "e"]], "source_part": 0, "sink_part": 0, "p": 1.0}
                        ],
                    },
                ]
            }
        }
    }


def test_table_placement_follows_section_IIIC():
    cc = compiled(diamond_chain())
    sch = TableScheduler(tables_for(0.7))
    sch.prepare([cc], 50)
    stream = sim.UniformStream(np.random.default_rng(0))
    pos = cc.pos
    n, split, roots = 20_000, 0, []
    for _ in range(n):
        s = sch.place(cc, stream)
        r, a, b, m = (s[pos[x]] for x in "rabm")
        roots.append(r)
        if a != b:
            split += 1
            assert b == r  # source_part 1 = ["b"] runs with the source
            assert m == a  # sink_part 0 = ["a"] hosts the sink
        else:
            assert a == r == m
        # second subgraph: everything with its source m
        assert {s[pos[x]] for x in "cdez"} == {m}
    # split probability 0.7, binomial sd ~ 0.0032: 5 sd
    assert abs(split / n - 0.7) < 0.016
    # roots uniform over 50 servers: chi-square well below the 99.9% quantile (86.7 for 49 dof)
    counts = np.bincount(roots, minlength=50)
    chi2 = ((counts - n / 50) ** 2 / (n / 50)).sum()
    assert chi2 < 86.7


def test_opportunistic_branches_on_distinct_servers():
    job = diamond_chain()
    t = opportunistic_tables([job])
    subs = t["classes"]["dc"]["subgraphs"]
    assert [o["partition"] for s in subs for o in s["options"]] == [[["a"], ["b"]], [["c", "d"], ["e"]]]
    assert branch_partition(job.dag, ["c", "d", "e"]) == [["c", "d"], ["e"]]
    cc = compiled(job)
    sch = make_scheduler("opportunistic")
    sch.prepare([cc], 10)
    stream = sim.UniformStream(np.random.default_rng(1))
    pos = cc.pos
    for _ in range(2000):
        s = sch.place(cc, stream)
        r, a, b, m, c, d, e, z = (s[pos[x]] for x in "rabmcdez")
        assert a == r != b and m == r
        assert c == d == m != e and z == m


def test_table_errors(tmp_path):
    cc = compiled(diamond_chain())
    bad = tables_for(0.5)
    bad["classes"]["dc"]["subgraphs"][0]["options"][0]["partition"] = [["a"]]
    with pytest.raises(TableError, match="is not a partition"):
        TableScheduler(bad).prepare([cc], 10)
    bad = tables_for(0.5)
    bad["classes"]["dc"]["subgraphs"][0]["options"][0]["p"] = 0.9
    with pytest.raises(TableError, match="sum to 1.4"):
        TableScheduler(bad).prepare([cc], 10)
    bad = tables_for(0.5)
    del bad["classes"]["dc"]["subgraphs"][1]
    with pytest.raises(TableError, match="no table for the subgraph 'm' -> 'z'"):
        TableScheduler(bad).prepare([cc], 10)
    with pytest.raises(TableError, match="no table for job class 'dc'"):
        TableScheduler({"classes": {}}).prepare([cc], 10)
    with pytest.raises(TableError, match="needs 2 distinct servers"):
        TableScheduler(tables_for(0.5)).prepare([cc], 1)
    with pytest.raises(FileNotFoundError, match="schedlab nona solve"):
        make_scheduler("nona", tables=tmp_path / "missing.json")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(tables_for(1.0)))
    sch = make_scheduler("nona", tables=path)
    sch.prepare([cc], 10)
    assert load_tables(path)["_path"] == str(path)


def test_unknown_and_unavailable_schemes(tmp_path):
    with pytest.raises(ValueError, match="unknown scheme 'fair'"):
        make_scheduler("fair")
    try:
        make_scheduler("decima")
    except SchemeUnavailable as exc:
        assert "Decima" in str(exc)
    # the retrained weights are passed in: none given, or a missing file, says what to do
    with pytest.raises(SchemeUnavailable, match="pass decima_weights"):
        make_scheduler("decima_retrained")
    with pytest.raises(SchemeUnavailable, match="nona_decima_train"):
        make_scheduler("decima_retrained", decima_weights=tmp_path / "weights.npz")


def live_job(jid, n_runnable, running=0, unassigned=None):
    job = background_compute_class(1.0)
    cc = sim.compile_class(job, 0)
    return sim.LiveJob(
        job_id=jid,
        cls=cc,
        arrival=float(jid),
        runnable=list(range(n_runnable)),
        task_server=[-1] * max(n_runnable, 1),
        running=running,
        unassigned=n_runnable if unassigned is None else unassigned,
    )


def test_spark_fair_caps_and_round_robin():
    """decima-sim's dynamic partition: cap ceil(N / unfinished jobs), passes in arrival order."""
    jobs = {
        1: live_job(1, 5, running=2),
        2: live_job(2, 5),
        3: live_job(3, 1),
        4: live_job(4, 0, running=1, unassigned=0),
    }
    # 3 jobs with unassigned tasks -> cap ceil(8 / 3) = 3
    view = sim.LiveView(
        now=0.0,
        servers=8,
        free_servers=[0, 1, 2, 3, 4, 5],
        active=jobs,
        classes=[],
        unfinished=3,
        ready={k: v for k, v in jobs.items() if v.runnable},
        ready_order=[1, 2, 3],
    )
    out = SparkFairScheduler().schedule(view)
    # pass 1: job1 (2 running < 3), job2, job3; pass 2: job2; pass 3: job2 -> 5 servers, job1 capped
    assert [(j, t) for j, t, _ in out] == [(1, 0), (2, 0), (3, 0), (2, 1), (2, 2)]
    assert [s for _, _, s in out] == [5, 4, 3, 2, 1]  # most recently freed first
    assert view.free_servers == [0, 1, 2, 3, 4, 5]  # the view is not mutated


def test_spark_fair_gives_parallelism_when_idle():
    """A lone job with k parallel branches on an idle cluster runs them all at once."""
    g = nx.DiGraph()
    g.add_node("r", work_s=0.001)
    for k in range(4):
        g.add_node(f"b{k}", work_s=0.1)
        g.add_edge("r", f"b{k}", bytes=0.0)
    job = JobClass("fan", "inference", g, 0.01)
    cluster = type("C", (), {"servers": 8, "bandwidth_gbps": 10.0, "compute_rate": 1.0})()
    res = sim.simulate([job], cluster, SparkFairScheduler(), duration=2000, rng=np.random.default_rng(0))
    assert np.allclose(res.jobs.jct, 0.101)


# ------------------------------------------------------------------ optimiser tables end to end

from schedlab.nona import expert, optimise  # noqa: E402
from schedlab.nona.workload import Cluster, build_workload, job_f  # noqa: E402


def test_nona_runs_the_optimiser_json_and_matches_its_prediction_at_low_load(tmp_path):
    """Tables written by the optimiser, loaded from disk; with almost no queueing the simulated
    JCT of job f is the optimiser's prediction (its model differs only by server queueing)."""
    c = Cluster(servers=20, bandwidth_gbps=80)
    w = build_workload(classes=[job_f()], load=0.02, cluster=c, comm_load=0.0)
    r = optimise.solve(w, c)
    path = tmp_path / "tables.json"
    path.write_text(json.dumps(optimise.to_json(r, 0.02)))
    res = sim.simulate(
        w, c, make_scheduler("nona", tables=path), duration=3000, warmup=100, rng=np.random.default_rng(0)
    )
    f = res.jobs[res.jobs.job_class == "f"]
    assert abs(f.jct.mean() / r.tau["f"] - 1) < 0.05
    # f is split (the optimiser's choice at this load): every f job moves det_sparse's 20 MB + 8 B
    assert np.allclose(f.bytes_moved, 20e6 + 8)


@pytest.mark.parametrize("dense,expect", [(2e3, 1.0), (2e9, 0.0)])
def test_expert_search_picks_the_better_placement(dense, expect):
    """Tiny transfers: splitting f's two 10 ms branches halves its JCT; huge ones: keep it together."""
    c = Cluster(servers=8, bandwidth_gbps=80)
    w = build_workload(
        classes=[job_f(dense_bytes=dense, sparse_bytes=dense / 10)], load=0.1, cluster=c, comm_load=0.0
    )
    res = expert.search(w, c, duration=200, warmup=10, budget=6, search_seed=3)
    assert res.p == {("f", "sum", "add"): expect}
    assert res.evaluations <= 6
    assert res.score == min(e["mean_jct_s"] for e in res.log)


def test_tables_for_another_point_are_refused():
    c = Cluster(servers=20, bandwidth_gbps=80)
    w = build_workload(classes=[job_f()], load=0.2, cluster=c, comm_load=0.0)
    doc = optimise.to_json(optimise.solve(w, c), 0.2)
    w2 = build_workload(classes=[job_f()], load=0.4, cluster=c, comm_load=0.0)
    with pytest.raises(TableError, match="solved at arrival rate"):
        check_tables_match(doc, w2, c)
    with pytest.raises(TableError, match="bandwidth_gbps"):
        check_tables_match(doc, w, Cluster(servers=20, bandwidth_gbps=10))
    check_tables_match(doc, w2, c, same_point=False)  # Nona*: any point


def test_module_doctests():
    import doctest

    from schedlab.nona import expert as e, experiments as x, schedulers as s, sim as m, tables as t

    for mod in (m, s, e, t, x):
        failed, _ = doctest.testmod(mod)
        assert failed == 0, mod.__name__


def _random_dag(rng: np.random.Generator, n: int) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for u in range(n):
        for v in range(u + 1, n):
            if rng.random() < 0.25:
                g.add_edge(u, v)
    return g


@pytest.mark.parametrize("seed", range(30))
def test_chain_branches_count_forks_and_entries(seed):
    """Counted edge by edge: one part per entry task (no predecessor inside the subgraph) and one
    per edge u -> x where x has u as its only predecessor but is not u's first successor (a fork's
    other branches); the tasks of a series edge (u has one successor, x one predecessor) share a
    part; every task of a part is in one connected component."""
    rng = np.random.default_rng(seed)
    g = _random_dag(rng, int(rng.integers(2, 12)))
    inner = list(nx.topological_sort(g))
    rank = {x: i for i, x in enumerate(inner)}
    parts = branch_partition(g, inner)
    assert sorted(x for p in parts for x in p) == sorted(inner)
    entries = sum(1 for x in inner if g.in_degree(x) == 0)
    branch_offs = sum(
        1 for u, x in g.edges if g.in_degree(x) == 1 and x != min(g.successors(u), key=rank.get)
    )
    assert len(parts) == entries + branch_offs
    part_of = {x: i for i, p in enumerate(parts) for x in p}
    for u, x in g.edges:
        if g.out_degree(u) == 1 and g.in_degree(x) == 1:
            assert part_of[u] == part_of[x]
    comp_of = {x: i for i, c in enumerate(branch_partition(g, inner, rule="components")) for x in c}
    assert all(len({comp_of[x] for x in p}) == 1 for p in parts)


def test_gpt2_attention_forks_split_under_chains():
    """The paper distributes all parallel branches: GPT-2's q/k/v fork gives three parts in every
    attention subgraph; the component rule keeps each subgraph whole."""
    from schedlab.nona.tables import segments
    from schedlab.nona.workload import Cluster, build_workload

    w = build_workload(load=0.5, cluster=Cluster(servers=80, bandwidth_gbps=10))
    gpt2 = next(j for j in w if j.name == "gpt2")
    subs = [list(inner) for _, _, inner in segments(gpt2.dag) if inner]
    chains = [len(branch_partition(gpt2.dag, s)) for s in subs]
    comps = [len(branch_partition(gpt2.dag, s, rule="components")) for s in subs]
    assert sum(n == 3 for n in chains) >= 12 and max(comps[1:]) == 1


def test_unknown_branch_rule_is_refused():
    with pytest.raises(ValueError, match="branch rule"):
        branch_partition(diamond_chain().dag, ["a", "b"], rule="lines")
