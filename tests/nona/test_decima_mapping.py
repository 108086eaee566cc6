"""Nona -> Decima observation mapping (closed-form features) and the simulator plug-in."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from types import SimpleNamespace as NS

from schedlab.nona import workload as W
from schedlab.nona.decima import features as F
from schedlab.nona.decima import DecimaScheduler, LABEL
from schedlab.nona.decima.scheduler import ReferenceDecimaScheduler
from schedlab.nona.sim import simulate


def _chain_job(work=(0.002, 0.003, 0.004), name="chain", rate=20.0):
    g = nx.DiGraph()
    names = [f"t{i}" for i in range(len(work))]
    for a, b in zip(names, names[1:]):
        g.add_edge(a, b, bytes=5e8)
    for v, w in zip(names, work):
        g.add_node(v, work_s=w)
    return NS(name=name, kind="inference", dag=g, arrival_rate=rate)


def _cluster(servers):
    return NS(servers=servers, bandwidth_gbps=10.0, compute_rate=1.0, link_bytes_per_s=1.25e9)


def test_label():
    assert LABEL == "Decima (public TPC-H-trained weights)"


def test_node_features_closed_form():
    """Two jobs, E = 10, 4 committable, job 1 is the source; every entry worked out by hand."""
    j0 = F.JobState(
        edges=[[0, 1]], waiting=[True, True], runnable=[True, False], duration_ms=[20.0, 50.0], supply=8
    )
    j1 = F.JobState(edges=np.zeros((0, 2)), waiting=[False], runnable=[False], duration_ms=[7.0], supply=3)
    state = F.ClusterState(jobs=(j0, j1), num_executors=10, num_committable=4, source_job=1)
    x = F.node_features(state)
    # cap(j0) = min(max(10 - 8, 0), 4) = 2; cap(j1) = committable = 4 (source job)
    expected = [
        [0.2, -1.0, 0.8, 1 / 200, 1 * 20.0 / 1e5],
        [0.2, -1.0, 0.8, 1 / 200, 1 * 50.0 / 1e5],
        [0.4, 1.0, 0.3, 0.0, 0.0],  # running: no remaining task, no remaining work
    ]
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-15)
    obs = F.to_observation(state)
    assert obs.exec_caps.tolist() == [2, 4]
    assert obs.stage_mask.tolist() == [True, False, False]
    assert obs.job_ptr.tolist() == [0, 2, 3]
    assert obs.exec_mask.sum(1).tolist() == [2, 4]


def test_commit_caps_general_pool():
    assert F.commit_caps(np.array([0, 9, 12]), 3, 10, None).tolist() == [3, 1, 0]


def test_job_state_from_contracted_resnet18():
    """ResNet-18's contracted DAG: finished tasks leave, runnable = children of finished, durations in ms."""
    (res,) = W.inference_classes(("resnet18",))
    g = res.dag
    order = list(nx.topological_sort(g))
    s0 = F.job_state(g, finished=(), running=(), compute_rate=2.0, order=order)
    assert s0.num_nodes == g.number_of_nodes() == 10
    assert s0.edges.shape[0] == g.number_of_edges()
    assert s0.runnable.tolist() == [g.in_degree(v) == 0 for v in order]
    np.testing.assert_allclose(s0.duration_ms, [g.nodes[v]["work_s"] * 500.0 for v in order])
    first = order[0]
    kids = set(g.successors(first))
    s1 = F.job_state(g, finished={first}, running=(), order=order)
    assert first not in s1.tasks and s1.num_nodes == 9
    assert {t for t, r in zip(s1.tasks, s1.runnable) if r} == {
        k for k in kids if set(g.predecessors(k)) == {first}
    }
    # network-blind: edge bytes never reach the observation
    h = g.copy()
    nx.set_edge_attributes(h, 1.0, "bytes")
    a = F.to_observation(F.ClusterState((s1,), 80, 5))
    b = F.to_observation(F.ClusterState((F.job_state(h, finished={first}, running=(), order=order),), 80, 5))
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.edges, b.edges)
    with pytest.raises(ValueError, match="before all its parents"):
        F.job_state(g, finished=(), running={order[-1]})


def test_single_server_chain_is_exact():
    """One server: no transfer ever, jobs in sequence; an isolated chain's JCT is its work sum."""
    job = _chain_job(rate=1.0)
    res = simulate([job], _cluster(1), DecimaScheduler(rng=0), duration=30.0, rng=np.random.default_rng(5))
    jct = res.jobs.jct.to_numpy()
    assert len(jct) > 10 and res.stats["link_bytes"] == 0
    assert np.all(jct >= 0.009 - 1e-12)
    gaps = np.diff(res.jobs.arrival.to_numpy())
    isolated = np.r_[True, gaps > 0.01] & np.r_[gaps > 0.01, True]
    np.testing.assert_allclose(jct[isolated], 0.009, atol=1e-12)


def test_plugin_observes_the_live_state():
    """After a fan-out root finishes on server s, the next decision sees the root gone and two runnable tasks.

    Checked on the reference plug-in (it builds the observation); the fast one makes the same
    decisions (tests/nona/test_decima_speed.py)."""
    g = nx.DiGraph()
    g.add_edge("a", "b", bytes=0.0)
    g.add_edge("a", "c", bytes=0.0)
    nx.set_node_attributes(g, {"a": 0.010, "b": 0.020, "c": 0.030}, "work_s")
    job = NS(name="fan", kind="inference", dag=g, arrival_rate=1.0)
    sched = ReferenceDecimaScheduler(rng=1)
    seen, now = [], [None]
    act, schedule = sched.policy.act, sched.schedule

    def spy_act(obs, rng=None):  # every decision's observation, with the simulator's clock
        seen.append((now[0], obs))
        return act(obs, rng)

    def spy_schedule(view):
        now[0] = view.now
        return schedule(view)

    sched.policy.act, sched.schedule = spy_act, spy_schedule
    res = simulate([job], _cluster(4), sched, duration=0.5, rng=np.random.default_rng(0))
    assert len(res.jobs) >= 1
    t0, obs0 = seen[0]
    assert obs0.x.shape[0] == 3 and obs0.stage_mask.tolist() == [True, False, False]
    np.testing.assert_allclose(obs0.x[:, 4], [10 / 1e5 * 1, 20 / 1e5, 30 / 1e5])
    assert obs0.x[0, 0] == 1.0  # first round: 4 free servers, none held, cap = 4 / E
    t1, obs1 = seen[1]
    np.testing.assert_allclose(t1, t0 + 0.010)
    assert obs1.x.shape[0] == 2 and obs1.stage_mask.tolist() == [True, True]
    assert obs1.x[:, 1].tolist() == [1.0, 1.0]  # job 0 freed the server: it is the source job
    assert obs1.x[0, 2] == 0.0 and obs1.x[0, 0] == 1.0  # nothing held; source cap = 4 committable
    t2, obs2 = seen[2]  # same round, one of b/c now committed: supply 1, one runnable left
    assert t2 == t1 and obs2.stage_mask.sum() == 1 and obs2.x[0, 2] == 0.25 and obs2.x[0, 0] == 0.75
    assert sched.stats["decisions"] == 3 * len(res.jobs)


def test_plugin_runs_nona_workload_reproducibly():
    c = W.Cluster(servers=8)
    wl = W.build_workload(models=("alexnet", "resnet18"), load=0.3, cluster=c)
    runs = []
    for _ in range(2):
        sched = DecimaScheduler(rng=3, compute_rate=c.compute_rate)
        res = simulate(wl, c, sched, duration=0.3, warmup=0.05, rng=np.random.default_rng(9))
        runs.append((res.jobs.jct.to_numpy(), sched.stats["decisions"]))
        assert res.jobs.completion.notna().all()
        tasks = res.jobs.tasks.sum()
        assert sched.stats["decisions"] >= tasks  # every measured task went through Decima
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1]


def test_plugin_options_and_consistency_check():
    job = _chain_job(rate=30.0)
    for kw in ({"greedy": True}, {"message_passing": "exact"}):
        for cls in (DecimaScheduler, ReferenceDecimaScheduler):
            res = simulate([job], _cluster(3), cls(**kw), duration=0.3, rng=np.random.default_rng(2))
            assert res.jobs.completion.notna().all() and (res.jobs.jct >= 0.009 - 1e-12).all()
    sched = DecimaScheduler(rng=0)
    sched.prepare([NS(n=1, is_comm=False, children=[[]], work=[0.001], index=0)], 2)
    live = NS(job_id=0, cls=NS(index=0), runnable=[], task_server=[1], running=1)  # a task it never assigned
    with pytest.raises(RuntimeError, match="runs 1 tasks"):
        sched.schedule(NS(free_servers=[0], active={0: live}))
