"""Nona workload: task times from profiles, transfer bytes, arrival rates from the load."""

from __future__ import annotations

import math

import networkx as nx
import pytest

from schedlab.nona import profiles, workload
from schedlab.nona.workload import Cluster, JobClass, build_workload, inference_classes, job_f

PIPEDREAM = ["densenet121", "vgg16", "alexnet", "resnet18"]


def test_cluster_link_rate_and_validation():
    assert Cluster(bandwidth_gbps=10).link_bytes_per_s == 1.25e9
    with pytest.raises(ValueError, match="bandwidth_gbps"):
        Cluster(bandwidth_gbps=0)
    with pytest.raises(ValueError, match="servers"):
        Cluster(servers=0)
    with pytest.raises(ValueError, match="compute_rate"):
        Cluster(compute_rate=-1)


def test_task_times_drop_input_loading_time():
    (alex,) = inference_classes(["alexnet"])
    # README: AlexNet forward sum without the Input node is 44.80 ms (Input: 635.9 ms loading)
    assert alex.service_s(Cluster()) == pytest.approx(0.044801, abs=1e-9)
    assert alex.dag.number_of_nodes() == 1
    assert alex.service_s(Cluster(compute_rate=2.0)) == pytest.approx(0.044801 / 2)


def test_bytes_are_contracted_activation_sizes():
    (rn,) = inference_classes(["resnet18"])
    g = profiles.load("resnet18")
    for u, v, d in rn.dag.edges(data=True):
        # each contracted edge is fed by members of u; its bytes are their activation sizes
        feeders = {
            a for a in rn.dag.nodes[u]["members"] for b in rn.dag.nodes[v]["members"] if g.has_edge(a, b)
        }
        assert d["bytes"] == pytest.approx(sum(g.nodes[a]["activation_bytes"] for a in feeders))


def test_query_scale_and_per_sample():
    (a1,) = inference_classes(["resnet18"])
    (a2,) = inference_classes(["resnet18"], query_scale=3.0)
    (a3,) = inference_classes(["resnet18"], per_sample=True)
    c = Cluster()
    assert a2.service_s(c) == pytest.approx(3 * a1.service_s(c))
    assert a3.service_s(c) == pytest.approx(a1.service_s(c) / 256)  # ResNet18 profiled at B=256
    e = next(iter(a1.dag.edges))
    assert a2.dag.edges[e]["bytes"] == pytest.approx(3 * a1.dag.edges[e]["bytes"])
    with pytest.raises(ValueError, match="query_scale"):
        inference_classes(["alexnet"], query_scale=0)


@pytest.mark.parametrize("load", [0.1, 0.5, 0.9])
def test_rates_give_the_compute_load_and_ratio(load):
    c = Cluster(servers=80, bandwidth_gbps=10)
    w = build_workload(PIPEDREAM, load=load, cluster=c)
    assert sum(j.arrival_rate * j.service_s(c) for j in w) / c.servers == pytest.approx(load)
    inf = [j for j in w if j.kind == "inference"]
    bc = next(j for j in w if j.kind == "background_compute")
    bm = next(j for j in w if j.kind == "background_comm")
    assert len({j.arrival_rate for j in inf}) == 1
    assert sum(j.arrival_rate for j in inf) == pytest.approx(100 * bc.arrival_rate)
    assert bm.arrival_rate == pytest.approx(bc.arrival_rate)
    # default comm_load = load: the background transfers occupy that share of the link
    assert bm.arrival_rate * bm.transfer_bytes / c.link_bytes_per_s == pytest.approx(load)
    assert bm.service_s(c) == 0.0
    assert bc.dag.number_of_nodes() == 1


def test_job_f_and_no_background():
    c = Cluster(servers=2, bandwidth_gbps=80)
    f = job_f()
    assert f.service_s(c) == pytest.approx(0.022)
    assert f.dag.edges["sum", "det"]["bytes"] / c.link_bytes_per_s == pytest.approx(0.020)  # 20 ms (sec. II)
    w = build_workload(classes=[f], load=0.5, cluster=c, background_ratio=math.inf)
    assert [j.name for j in w] == ["f"]
    assert w[0].arrival_rate == pytest.approx(0.5 * 2 / 0.022)


def test_cluster_load_basis_is_the_literal_formula():
    """load_basis="cluster": sum_j lambda_j S_j equals the load itself (section IV-B's formula),
    so every rate is the per-server reading's divided by the number of servers."""
    c = Cluster(servers=80, bandwidth_gbps=10)
    per_server = build_workload(PIPEDREAM, load=0.5, cluster=c)
    literal = build_workload(PIPEDREAM, load=0.5, cluster=c, load_basis="cluster")
    assert sum(
        j.arrival_rate * j.service_s(c) for j in literal if j.kind != "background_comm"
    ) == pytest.approx(0.5)
    for a, b in zip(per_server, literal):
        assert b.arrival_rate == pytest.approx(a.arrival_rate / 80)
    with pytest.raises(ValueError, match="load_basis"):
        build_workload(PIPEDREAM, load=0.5, cluster=c, load_basis="rack")


def test_time_scale_scales_one_model_times_not_bytes():
    plain = {j.name: j for j in inference_classes(["alexnet", "resnet18"])}
    scaled = {j.name: j for j in inference_classes(["alexnet", "resnet18"], time_scale={"resnet18": 0.25})}
    c = Cluster()
    assert scaled["resnet18"].service_s(c) == pytest.approx(0.25 * plain["resnet18"].service_s(c))
    assert scaled["alexnet"].service_s(c) == pytest.approx(plain["alexnet"].service_s(c))
    edge_bytes = {name: [d["bytes"] for *_, d in j.dag.edges(data=True)] for name, j in scaled.items()}
    assert edge_bytes["resnet18"] == [d["bytes"] for *_, d in plain["resnet18"].dag.edges(data=True)]
    with pytest.raises(ValueError, match="not in the workload"):
        inference_classes(["alexnet"], time_scale={"gpt2": 0.5})
    with pytest.raises(ValueError, match="positive"):
        inference_classes(["alexnet"], time_scale={"alexnet": 0.0})


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(load=1.0), "load"),
        (dict(load=-0.1), "load"),
        (dict(load=0.5, comm_load=1.2), "comm_load"),
        (dict(load=0.5, background_ratio=-1), "background_ratio"),
    ],
)
def test_bad_workload_inputs(kw, match):
    with pytest.raises(ValueError, match=match):
        build_workload(classes=[job_f()], cluster=Cluster(), **kw)


def test_bad_job_classes():
    g = nx.DiGraph([("a", "b"), ("b", "a")])
    nx.set_node_attributes(g, 0.1, "work_s")
    nx.set_edge_attributes(g, 1.0, "bytes")
    with pytest.raises(ValueError, match="cycle"):
        JobClass("cyc", "inference", g)
    with pytest.raises(ValueError, match="arrival_rate"):
        JobClass("neg", "inference", job_f().dag, arrival_rate=-1.0)
    h = job_f().dag.copy()
    h.nodes["sum"]["work_s"] = -1
    with pytest.raises(ValueError, match="work_s"):
        JobClass("negwork", "inference", h)
    with pytest.raises(ValueError, match="kind"):
        JobClass("x", "batch", job_f().dag)


def test_gpt2_missing_graph_is_an_error(monkeypatch):
    monkeypatch.setattr(profiles, "graph_path", lambda m: None)
    with pytest.raises(FileNotFoundError, match="gpt2"):
        workload.inference_classes(["gpt2"])


def test_close_dag_adds_a_zero_cost_virtual_root_and_sink():
    g = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d"), ("c", "e")])
    nx.set_node_attributes(g, 0.002, "work_s")
    nx.set_edge_attributes(g, 1e6, "bytes")
    h = workload.close_dag(g)
    assert [n for n in h if h.in_degree(n) == 0] == [workload.VIRTUAL_ROOT]
    assert [n for n in h if h.out_degree(n) == 0] == [workload.VIRTUAL_SINK]
    assert sorted(h.succ[workload.VIRTUAL_ROOT]) == ["a", "b"] and sorted(h.pred[workload.VIRTUAL_SINK]) == [
        "d",
        "e",
    ]
    assert h.nodes[workload.VIRTUAL_ROOT]["work_s"] == 0 and h.nodes[workload.VIRTUAL_SINK]["work_s"] == 0
    assert all(
        h.edges[e]["bytes"] == 0 for e in h.edges if workload.VIRTUAL_ROOT in e or workload.VIRTUAL_SINK in e
    )
    assert g.number_of_nodes() == 5  # the input is not modified
    closed = nx.DiGraph([("s", "x"), ("x", "t")])
    assert workload.close_dag(closed) is closed
    clash = nx.DiGraph([(workload.VIRTUAL_ROOT, "c"), ("b", "c")])
    with pytest.raises(ValueError, match="already has a node named"):
        workload.close_dag(clash)


# (model, profile nodes, after contraction, after closing: +1 per side with several roots/sinks)
PARALLEL = [("inception_v3", 326, 67, 68), ("nasnetamobile", 921, 264, 265), ("gnmt", 48, 40, 42)]


@pytest.mark.parametrize("model, pre, post, closed", PARALLEL)
def test_models_with_parallel_branches_load_and_close(model, pre, post, closed):
    import numpy as np

    from schedlab.nona import tables
    from schedlab.nona.contraction import contract
    from schedlab.nona.schedulers import TableScheduler
    from schedlab.nona.sim import idle_jct

    assert model in profiles.ALL_MODELS and model not in profiles.MODELS
    g = profiles.load(model, drop_input_time=True)
    assert (g.number_of_nodes(), contract(g).number_of_nodes()) == (pre, post)
    (cls,) = inference_classes([model])
    dag = cls.dag
    assert dag.number_of_nodes() == closed
    assert sum(dag.in_degree(n) == 0 for n in dag) == 1 and sum(dag.out_degree(n) == 0 for n in dag) == 1
    profile_ms = sum(d["forward_ms"] for _, d in g.nodes(data=True))
    assert cls.service_s(Cluster()) == pytest.approx(profile_ms / 1e3, rel=1e-12)
    # the virtual nodes cost nothing: the whole job on one idle server takes exactly its compute
    doc = tables.option_tables([cls], lambda *a: [tables.together_option(*a)])
    jct = idle_jct(cls, Cluster(servers=4), TableScheduler(doc), rng=np.random.default_rng(0))
    assert jct == pytest.approx(cls.service_s(Cluster()), rel=1e-12)
