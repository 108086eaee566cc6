"""The branch-data axis (byte_scale), the profiled batch of every model, and the "where Nona's split
pays" map (schedlab.nona.branches): model vs simulator where Nona splits, the map's shape, the notebook."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from schedlab.nona import branches, optimise, profiles
from schedlab.nona.sim import idle_jct
from schedlab.nona.schedulers import TableScheduler
from schedlab.nona.workload import Cluster, build_workload, inference_classes, job_f, profiled_batch


# ------------------------------------------------------------------ byte_scale


@pytest.mark.parametrize("model", ["inception_v3", "resnet18"])
def test_byte_scale_scales_the_transfer_bytes_only(model):
    (a,), (b,) = inference_classes([model]), inference_classes([model], byte_scale=0.03)
    assert set(a.dag.edges) == set(b.dag.edges) and set(a.dag.nodes) == set(b.dag.nodes)
    assert any(d["bytes"] > 0 for *_, d in a.dag.edges(data=True))
    for e in a.dag.edges:
        assert b.dag.edges[e]["bytes"] == pytest.approx(0.03 * a.dag.edges[e]["bytes"], rel=1e-12)
    for n in a.dag.nodes:
        assert b.dag.nodes[n]["work_s"] == a.dag.nodes[n]["work_s"]


def test_byte_scale_leaves_rates_and_background_unchanged():
    cl = Cluster(servers=80, bandwidth_gbps=10)
    a = build_workload(["inception_v3"], load=0.5, cluster=cl, comm_load=0.05)
    b = build_workload(["inception_v3"], load=0.5, cluster=cl, comm_load=0.05, byte_scale=0.1)
    assert [(j.name, j.arrival_rate) for j in a] == [(j.name, j.arrival_rate) for j in b]
    assert a[-1].transfer_bytes == b[-1].transfer_bytes  # background transfers are not branch data
    assert sum(d["bytes"] for *_, d in b[0].dag.edges(data=True)) == pytest.approx(
        0.1 * sum(d["bytes"] for *_, d in a[0].dag.edges(data=True))
    )


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_byte_scale_must_be_positive_and_finite(bad):
    with pytest.raises(ValueError, match="byte_scale must be a positive finite number"):
        inference_classes(["resnet18"], byte_scale=bad)
    with pytest.raises(ValueError, match="byte_scale"):
        build_workload(["resnet18"], load=0.5, cluster=Cluster(servers=4), byte_scale=bad)


# ------------------------------------------------------------------ profiled batch


@pytest.mark.parametrize("model", profiles.ALL_MODELS)
def test_every_model_has_a_positive_integer_batch(model):
    b = profiled_batch(profiles.load(model))
    assert b >= 1 and b == int(b)


def test_batches_match_the_tensor_sizes():
    # README of the mirror: AlexNet/ResNet18 256, VGG16 128, DenseNet121 64 at 224x224; the logits 4*B*1000 bytes
    expect = {
        "alexnet": 256,
        "resnet18": 256,
        "vgg16": 128,
        "densenet121": 64,
        "inception_v3": 128,
        "nasnetamobile": 128,
        "gnmt": 32,
        "gpt2": 1,
    }
    assert {m: profiled_batch(profiles.load(m)) for m in expect} == expect
    g = profiles.load("inception_v3")
    (inp,) = [d for _, d in g.nodes(data=True) if d["desc"] == "Input"]
    assert (
        inp["activation_bytes"] == 4 * 128 * 3 * 299 * 299
    )  # inception_v3 reads 299x299 images, not 224x224


def test_an_input_that_disagrees_with_the_classifier_is_refused():
    g = nx.DiGraph(name="bad")
    g.add_node(1, desc="Input", activation_bytes=4 * 8 * 3 * 224 * 224 + 4)
    g.add_node(2, desc="Linear(in_features=10, out_features=1000, bias=True)", activation_bytes=4 * 8 * 1000)
    with pytest.raises(ValueError, match="bad: the Input holds"):
        profiled_batch(g)


# ------------------------------------------------------------------ model vs simulator


def test_nona_splits_job_f_and_the_simulator_agrees_with_the_model_at_near_zero_load():
    """On an almost idle cluster (load 0.002 per server, no background link traffic) the critical-path
    model's JCT of job f equals the simulated one within 1%, and both say the split beats keep-together
    (idle cluster, 80 Gbps: split 11 ms + transfers, together 22 ms)."""
    cl = Cluster(servers=8, bandwidth_gbps=80)
    wl = build_workload(classes=[job_f()], load=0.002, cluster=cl, comm_load=0.0, background_ratio=math.inf)
    rows = branches.compare_placements(wl, cl, seeds=[0, 1], duration=200.0, pricings=["critical_path"])
    (r,) = rows
    assert r["split_subgraphs"] == 1 and r["pred_gain"] < -0.3
    assert r["sim_gain_max"] < -0.3 and r["confirmed"] is True
    assert r["sim_nona_s"] == pytest.approx(r["pred_nona_s"], rel=0.01)
    assert r["sim_together_s"] == pytest.approx(r["pred_together_s"], rel=0.01)


def test_inception_split_is_confirmed_and_priced_exactly_on_an_idle_cluster():
    """inception_v3 with 1% of its branch data at 100 Gbps: critical-path Nona splits Inception modules;
    one job alone on the cluster runs exactly as priced, and the simulator at light load confirms the gain."""
    cl = Cluster(servers=80, bandwidth_gbps=100)
    wl = build_workload(
        ["inception_v3"], load=0.05, cluster=cl, comm_load=0.0, byte_scale=0.01, load_basis="cluster"
    )
    res = optimise.solve(wl, cl, method="global", pricing="critical_path", oversized="keep_together")
    assert optimise.placement_counts(res)["split_subgraphs"] >= 4
    doc = optimise.to_json(res)
    # a deterministic placement (one option per subgraph): the idle-cluster JCT is the model's at phi = 0
    assert all(len(s["options"]) == 1 for s in doc["classes"]["inception_v3"]["subgraphs"])
    alone = idle_jct(wl[0], cl, TableScheduler(doc), rng=np.random.default_rng(0))
    theta = optimise.theta_from_tables(res.problem, doc)
    at_zero = res.problem.const[0] + float(
        theta @ res.problem.A.max(axis=1)
    )  # each option's longest path at phi = 0
    assert alone == pytest.approx(at_zero, rel=1e-9)
    (r,) = branches.compare_placements(wl, cl, seeds=[0, 1], duration=100.0, pricings=["critical_path"])
    assert r["pred_gain"] < -0.05 and r["sim_gain_max"] < -0.05 and r["confirmed"] is True


# ------------------------------------------------------------------ the map


def test_gain_map_shape_columns_and_order():
    rows = branches.gain_map(
        [0.1, 0.5],
        [10.0, 100.0],
        [0.01],
        models=["inception_v3"],
        servers=80,
        workload={"load_basis": "cluster", "comm_load": 0.0},
        seeds=[0],
        duration=20.0,
        executor=1,
    )
    assert list(rows.columns) == list(branches.COLUMNS)
    assert len(rows) == 2 * 2 * 1 * len(branches.MAP_PRICINGS)
    assert rows[["bandwidth_gbps", "load"]].drop_duplicates().values.tolist() == [
        [10, 0.1],
        [10, 0.5],
        [100, 0.1],
        [100, 0.5],
    ]
    none = rows[rows.split_subgraphs == 0]
    assert (none.sim_gain == 0).all() and none.confirmed.isna().all() and (none.pred_gain.abs() < 1e-12).all()
    split = rows[rows.split_subgraphs > 0]
    assert len(split) and split.confirmed.notna().all()
    assert ((split.sim_gain_min <= split.sim_gain) & (split.sim_gain <= split.sim_gain_max)).all()
    json.dumps(branches.summary(rows))  # JSON-ready


def test_a_bad_grid_names_the_axis():
    with pytest.raises(ValueError, match="loads must be numbers in"):
        branches.check_grid([1.0], [10.0], [1.0])
    with pytest.raises(ValueError, match="bandwidths_gbps"):
        branches.check_grid([0.5], [], [1.0])


def test_baseline_points_pick_the_best_splits_and_one_without():
    rows = pd.DataFrame(
        {
            "pricing": ["critical_path"] * 4 + ["paper"],
            "load": [0.1, 0.5, 0.9, 0.9, 0.1],
            "bandwidth_gbps": [10.0] * 5,
            "byte_scale": [1.0] * 5,
            "comm_load": [0.05] * 5,
            "split_subgraphs": [0, 3, 3, 0, 8],
            "sim_gain": [0.0, -0.02, -0.09, 0.0, -0.5],
        }
    )
    pts = branches.baseline_points(rows, n_split=1)
    assert pts[["load", "why"]].values.tolist() == [[0.9, "splits"], [0.1, "no split"]]
    # n_split=None: every point where critical-path Nona splits
    every = branches.baseline_points(rows, n_split=None)
    assert every[["load", "why"]].values.tolist() == [[0.5, "splits"], [0.9, "splits"], [0.1, "no split"]]


# ------------------------------------------------------------------ the notebook


def test_notebook_runs_at_the_teaching_profile(tmp_path):
    """The teaching profile end to end, both maps (175 s wall at machine load 11 on 2 cores, 44 s CPU in
    this process)."""
    from schedlab.notebooks import runner

    runner.run(
        "nona/branches", output_root=tmp_path, executed=tmp_path / "executed.ipynb", profile="teaching"
    )
    rows = pd.read_csv(tmp_path / "results/nona/branches/map.csv")
    assert len(rows) == 2 * 2 * 2 * len(branches.MAP_PRICINGS)
    base = pd.read_csv(tmp_path / "results/nona/branches/baselines.csv")
    assert {"nona", "spark_fair", "opportunistic", "random", "expert", "decima"} <= set(base.scheme)
    assert (base[base.scheme == "nona"].ratio == 1.0).all()
    facts = json.loads((tmp_path / "results/nona/branches/summary.json").read_text())
    assert facts["critical_path"]["points"] == 8
    assert (tmp_path / "figures/nona/branches.png").is_file()
    # the link map: 2 background link loads x 1 byte scale at one load, baselines wherever Nona splits
    link = pd.read_csv(tmp_path / "results/nona/branches/link_map.csv")
    assert sorted(link.comm_load.unique()) == [0.1, 0.2] and len(link) == 2 * len(branches.MAP_PRICINGS)
    lb = pd.read_csv(tmp_path / "results/nona/branches/link_baselines.csv")
    split = link[(link.pricing == "critical_path") & (link.split_subgraphs > 0)]
    assert len(lb[(lb.scheme == "nona") & (lb.why == "splits")]) == len(split)
    assert facts["link"]["points"] == 2 and isinstance(facts["link"]["wins"], list)
    assert (tmp_path / "figures/nona/branches_link.png").is_file()
