"""Decima's NumPy forward pass against PyTorch reference activations of spark-sched-sim's model.pt.

The fixture (tests/fixtures/decima/reference.npz) is made by tools/make_decima_fixture.py, an
independent PyTorch reading of the architecture loaded strictly from model.pt. When torch is
importable the same reference is also recomputed live, on the fixture's inputs and on fresh
random observations.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from schedlab import data
from schedlab.nona.decima import policy as P

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "decima" / "reference.npz"
TOOL = ROOT / "tools" / "make_decima_fixture.py"
ATOL = 1e-9  # float64 on both sides; measured agreement ~1e-14
KEYS = ("h_node", "h_dag", "h_glob", "stage_scores", "exec_scores")


@pytest.fixture(scope="module")
def weights():
    return P.load_weights()


@pytest.fixture(scope="module")
def ref():
    with np.load(FIXTURE) as z:
        return {k: z[k] for k in z.files}


def _obs(ref, i) -> P.DecimaObservation:
    return P.DecimaObservation(
        x=ref[f"obs{i}/x"],
        edges=ref[f"obs{i}/edges"],
        job_ptr=ref[f"obs{i}/job_ptr"],
        stage_mask=ref[f"obs{i}/stage_mask"],
        exec_caps=ref[f"obs{i}/exec_caps"],
        num_executors=int(ref[f"obs{i}/num_executors"]),
    )


def _ours(w, obs, variant) -> dict:
    out = P.forward(w, obs, variant)
    ex = [P.exec_scores(w, obs, out, j) for j in range(obs.num_jobs)]
    return dict(
        h_node=out.h_node,
        h_dag=out.h_dag,
        h_glob=out.h_glob,
        stage_scores=out.stage_scores,
        exec_scores=np.concatenate(ex),
        exec_ptr=np.concatenate([[0], np.cumsum([len(e) for e in ex])]),
    )


def test_fixture_made_from_the_shipped_model():
    with np.load(FIXTURE) as z:
        sha = str(z["model_pt_sha256"])
    assert sha == data.entry("decima/model.pt").sha256
    assert sha == hashlib.sha256(data.require("decima/model.pt").read_bytes()).hexdigest()


def test_weights_match_layout(weights):
    assert weights.num_parameters == 20802  # README: 20,802 float parameters
    for prefix, (_, shapes) in P.LAYOUT.items():
        assert [w.shape for w in weights[prefix].weights] == list(shapes)


@pytest.mark.parametrize("variant,tag", [("spark-sched-sim", ""), ("exact", "exact/")])
def test_forward_matches_pytorch_reference(weights, ref, variant, tag):
    n = int(ref["num_observations"])
    assert n >= 5
    for i in range(n):
        mine = _ours(weights, _obs(ref, i), variant)
        np.testing.assert_array_equal(mine["exec_ptr"], ref[f"out{i}/{tag}exec_ptr"])
        for k in KEYS:
            theirs = ref[f"out{i}/{tag}{k}"]
            assert mine[k].shape == theirs.shape, (i, k)
            np.testing.assert_allclose(mine[k], theirs, rtol=0, atol=ATOL, err_msg=f"obs {i} {variant} {k}")


def test_fixture_exercises_every_branch(ref):
    """No-edge batch (no message passing), a skip connection where the variants differ, big batches."""
    edges = [ref[f"obs{i}/edges"].shape[0] for i in range(int(ref["num_observations"]))]
    assert 0 in edges and max(edges) > 100
    diff = np.abs(ref["out0/h_node"] - ref["out0/exact/h_node"]).max()
    assert diff > 1e-3  # the code's generation masks differ from the paper's recursion here
    no_edge = edges.index(0)
    np.testing.assert_array_equal(ref[f"out{no_edge}/h_node"], ref[f"out{no_edge}/exact/h_node"])


def test_variants_agree_on_trees(weights):
    """On out-trees no node has children both inside and outside a generation's children."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        n = int(rng.integers(2, 25))
        edges = np.array([(int(rng.integers(0, v)), v) for v in range(1, n)])
        obs = P.DecimaObservation(
            x=rng.normal(size=(n, 5)),
            edges=edges,
            job_ptr=[0, n],
            stage_mask=rng.random(n) < 0.5,
            exec_caps=[3],
            num_executors=10,
        )
        a, b = P.forward(weights, obs, "spark-sched-sim"), P.forward(weights, obs, "exact")
        np.testing.assert_allclose(a.h_node, b.h_node, atol=1e-12)


def test_permutation_invariance(weights):
    """Relabelling nodes inside jobs and reordering jobs permutes the outputs and nothing else."""
    rng = np.random.default_rng(3)
    sizes = [5, 1, 7]
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    edges = np.array(
        [
            (ptr[j] + u, ptr[j] + v)
            for j, s in enumerate(sizes)
            for u in range(s)
            for v in range(u + 1, s)
            if rng.random() < 0.4
        ]
    )
    n = ptr[-1]
    x = rng.normal(size=(n, 5))
    x[:, :3] = np.repeat(rng.normal(size=(len(sizes), 3)), sizes, axis=0)  # job-level features, as built
    obs = P.DecimaObservation(
        x=x, edges=edges, job_ptr=ptr, stage_mask=np.ones(n, bool), exec_caps=[2, 4, 1], num_executors=8
    )
    order = [2, 0, 1]  # new job k is old job order[k]
    perm = np.concatenate(
        [ptr[j] + rng.permutation(sizes[j]) for j in order]
    )  # new node i = old node perm[i]
    inv = np.empty(n, dtype=int)
    inv[perm] = np.arange(n)
    obs2 = P.DecimaObservation(
        x=obs.x[perm],
        edges=inv[edges],
        job_ptr=np.concatenate([[0], np.cumsum([sizes[j] for j in order])]),
        stage_mask=np.ones(n, bool),
        exec_caps=obs.exec_caps[order],
        num_executors=8,
    )
    for variant in ("spark-sched-sim", "exact"):
        a, b = P.forward(weights, obs, variant), P.forward(weights, obs2, variant)
        np.testing.assert_allclose(b.h_node, a.h_node[perm], atol=1e-12)
        np.testing.assert_allclose(b.h_dag, a.h_dag[order], atol=1e-12)
        np.testing.assert_allclose(b.h_glob, a.h_glob, atol=1e-12)
        np.testing.assert_allclose(b.stage_scores, a.stage_scores[perm], atol=1e-12)
        for k, j in enumerate(order):
            np.testing.assert_allclose(
                P.exec_scores(weights, obs2, b, k), P.exec_scores(weights, obs, a, j), atol=1e-12
            )


def test_policy_samples_the_softmax(weights, ref):
    obs = _obs(ref, 1)
    out = P.forward(weights, obs)
    p = P.softmax(out.stage_scores)
    pol = P.DecimaPolicy(weights)
    rng = np.random.default_rng(11)
    nodes = np.flatnonzero(obs.stage_mask)
    counts = np.zeros(nodes.size)
    for _ in range(3000):
        a = pol.act(obs, rng)
        counts[np.searchsorted(nodes, a.node)] += 1
        assert 1 <= a.num_executors <= obs.exec_caps[a.job]
        assert obs.job_ptr[a.job] <= a.node < obs.job_ptr[a.job + 1]
    # binomial standard error at n = 3000 is <= 0.0092; allow 5 of them
    assert np.abs(counts / 3000 - p).max() < 0.046
    g = P.DecimaPolicy(weights, greedy=True).act(obs)
    assert g.node == nodes[np.argmax(out.stage_scores)]
    assert g.num_executors == 1 + int(np.argmax(P.exec_scores(weights, obs, out, g.job)))


def test_bad_inputs_are_named(weights, tmp_path):
    state = {f"{p}.{i}.{k}": np.zeros(1) for p in P.LAYOUT for i in (0, 2, 4) for k in ("weight", "bias")}
    with pytest.raises(ValueError, match=r"mlp_prep\.0 has weight"):
        P.weights_from_state_dict(state, "x.npz")
    with pytest.raises(ValueError, match="missing"):
        P.weights_from_state_dict({}, "x.npz")
    kw = dict(x=np.zeros((3, 5)), job_ptr=[0, 2, 3], stage_mask=[True] * 3, exec_caps=[1, 1], num_executors=4)
    with pytest.raises(ValueError, match="joins two jobs"):
        P.DecimaObservation(edges=[[1, 2]], **kw)
    with pytest.raises(ValueError, match="cycle"):
        P.DecimaObservation(edges=[[0, 1], [1, 0]], **kw)
    with pytest.raises(ValueError, match=r"x: expected shape"):
        P.DecimaObservation(edges=[], **{**kw, "x": np.zeros((3, 4))})
    with pytest.raises(ValueError, match="exec_caps"):
        P.DecimaObservation(edges=[], **{**kw, "exec_caps": [5, 1]})


# ---------------------------------------------------------------------- live PyTorch
def _tool():
    spec = importlib.util.spec_from_file_location("make_decima_fixture", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_live_torch_reference(weights, ref):
    pytest.importorskip(
        "torch", reason="torch is the optional 'trace' extra; the stored fixture is checked above"
    )
    tool = _tool()
    actor = tool.load_actor(data.require("decima/model.pt"))
    # the fixture's inputs are reproducible from the seed
    for i, obs in enumerate(tool.observations()):
        for k, v in obs.items():
            np.testing.assert_array_equal(np.asarray(v), ref[f"obs{i}/{k}"])
    # fresh observations, never stored
    rng = np.random.default_rng(2024)
    fresh = [
        tool.random_observation(rng, list(rng.integers(1, 12, size=int(rng.integers(1, 6)))), int(E), 0.3)
        for E in (10, 50, 80)
    ]
    for obs in fresh:
        for variant in ("spark-sched-sim", "exact"):
            theirs = tool.reference_outputs(actor, obs, variant)
            mine = _ours(
                weights, P.DecimaObservation(**{**obs, "num_executors": int(obs["num_executors"])}), variant
            )
            for k in KEYS:
                np.testing.assert_allclose(mine[k], theirs[k], rtol=0, atol=ATOL, err_msg=f"{variant} {k}")
