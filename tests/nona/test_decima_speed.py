"""The fast Decima path (engine + incremental scheduler) against the tested references.

* :mod:`schedlab.nona.decima.engine` (both backends) against the PyTorch fixture at 1e-9;
* :class:`DecimaScheduler` against :class:`ReferenceDecimaScheduler` (full forward pass at
  every decision): the same decisions, log-probabilities and JCTs on Nona workloads.
Speed itself is measured by benchmarks/bench_decima.py, not here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from schedlab.nona import workload as W
from schedlab.nona.decima import policy as P
from schedlab.nona.decima.engine import Engine, forward_fast, job_plan
from schedlab.nona.decima.scheduler import DecimaScheduler, ReferenceDecimaScheduler
from schedlab.nona.sim import simulate

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "decima" / "reference.npz"


@pytest.fixture(scope="module")
def weights():
    return P.load_weights()


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("variant,tag", [("spark-sched-sim", ""), ("exact", "exact/")])
def test_engine_matches_pytorch_fixture(weights, backend, variant, tag):
    with np.load(FIXTURE) as z:
        ref = {k: z[k] for k in z.files}
    eng = Engine(weights, variant, backend=backend)
    for i in range(int(ref["num_observations"])):
        obs = P.DecimaObservation(
            x=ref[f"obs{i}/x"],
            edges=ref[f"obs{i}/edges"],
            job_ptr=ref[f"obs{i}/job_ptr"],
            stage_mask=ref[f"obs{i}/stage_mask"],
            exec_caps=ref[f"obs{i}/exec_caps"],
            num_executors=int(ref[f"obs{i}/num_executors"]),
        )
        out = forward_fast(eng, obs)
        for name, mine in (
            ("h_node", out.h_node),
            ("h_dag", out.h_dag),
            ("h_glob", out.h_glob),
            ("stage_scores", out.stage_scores),
            ("exec_scores", np.concatenate(out.exec_scores)),
        ):
            np.testing.assert_allclose(
                mine,
                ref[f"out{i}/{tag}{name}"],
                rtol=0,
                atol=1e-9,
                err_msg=f"{backend} {variant} obs {i} {name}",
            )


def test_engine_on_random_dags_both_backends(weights):
    """Random multi-job observations with skip edges: numba == numpy == reference forward."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        sizes = list(rng.integers(1, 15, size=int(rng.integers(1, 6))))
        ptr = np.concatenate([[0], np.cumsum(sizes)])
        edges = [
            (ptr[j] + u, ptr[j] + v)
            for j, s in enumerate(sizes)
            for u in range(s)
            for v in range(u + 1, s)
            if rng.random() < 0.3
        ]
        n = int(ptr[-1])
        obs = P.DecimaObservation(
            x=rng.normal(size=(n, 5)),
            edges=np.array(edges, dtype=np.int64).reshape(-1, 2),
            job_ptr=ptr,
            stage_mask=rng.random(n) < 0.5,
            exec_caps=rng.integers(0, 9, len(sizes)),
            num_executors=8,
        )
        for variant in ("spark-sched-sim", "exact"):
            ref = P.forward(weights, obs, variant)
            for backend in ("numba", "numpy"):
                out = forward_fast(Engine(weights, variant, backend=backend), obs)
                np.testing.assert_allclose(out.h_node, ref.h_node, rtol=0, atol=1e-9)
                np.testing.assert_allclose(out.stage_scores, ref.stage_scores, rtol=0, atol=1e-9)
                for j in range(obs.num_jobs):
                    np.testing.assert_allclose(
                        out.exec_scores[j], P.exec_scores(weights, obs, ref, j), rtol=0, atol=1e-9
                    )


def test_job_plan_closed_form():
    # a -> b -> c with the skip a -> c: generation 0 = {a}: edges among {a, b, c} (all three);
    # generation 1 = {b}: edge b -> c (spark-sched-sim); the paper's recursion: a's edges, then b's
    p = job_plan(np.array([[0, 1], [1, 2], [0, 2]]), 3, "spark-sched-sim")
    assert p.leaves.tolist() == [2] and p.num_edges == 3
    assert [s.receivers.tolist() for s in p.steps] == [[0, 1], [1]]
    assert [s.senders.tolist() for s in p.steps] == [[1, 2], [2]]
    q = job_plan(np.array([[0, 1], [1, 2], [0, 2]]), 3, "exact")
    assert [s.receivers.tolist() for s in q.steps] == [[0], [1]]
    assert [s.senders.tolist() for s in q.steps] == [[1, 2], [2]]


def _run(cls, wl, cluster, duration, seed=0, **kw):
    sched = cls(rng=seed, compute_rate=cluster.compute_rate, **kw)
    actions = []
    if cls is ReferenceDecimaScheduler:
        act = sched.policy.act

        def spy(obs, rng=None):
            a = act(obs, rng)
            actions.append(a.log_prob)
            return a

        sched.policy.act = spy
    res = simulate(
        wl, cluster, sched, duration=duration, warmup=0.1 * duration, rng=np.random.default_rng(seed)
    )
    return res, sched, actions


@pytest.mark.parametrize("kw", [{}, {"message_passing": "exact"}])
def test_fast_scheduler_makes_the_reference_decisions(kw):
    """Same JCTs and log-probabilities, decision by decision, on a Nona workload with skip edges.

    (Not ``greedy``: two jobs in the same state tie exactly in the fast path, which shares
    their embedding, but may differ by an ulp in the reference's batched matmul, so argmax
    can break the tie differently; sampling is insensitive to that.)"""
    cluster = W.Cluster(servers=12)
    wl = W.build_workload(models=("densenet121", "alexnet", "resnet18"), load=0.6, cluster=cluster)
    ref, rs, ref_lp = _run(ReferenceDecimaScheduler, wl, cluster, 0.6, **kw)
    record: list = []
    fast, fs, _ = _run(DecimaScheduler, wl, cluster, 0.6, record=record, **kw)
    assert rs.stats["decisions"] == fs.stats["decisions"] == len(record) > 100
    np.testing.assert_array_equal(fast.jobs.jct.to_numpy(), ref.jobs.jct.to_numpy())
    np.testing.assert_allclose([r.log_prob for r in record], ref_lp, rtol=0, atol=1e-9)
    assert fs.stats["cache_hits"] > fs.stats["embedded_jobs"]  # the cache is used


def test_fast_scheduler_with_gpt2_and_a_tiny_cache():
    """GPT-2's deep DAG (if its graph exists) and cache clearing at every miss: same JCTs."""
    from schedlab.nona import profiles

    models = ("gpt2", "resnet18") if profiles.graph_path("gpt2") is not None else ("resnet18", "densenet121")
    cluster = W.Cluster(servers=16)
    wl = W.build_workload(models=models, load=0.5, cluster=cluster)
    ref, _, _ = _run(ReferenceDecimaScheduler, wl, cluster, 0.25, seed=4)
    fast, fs, _ = _run(DecimaScheduler, wl, cluster, 0.25, seed=4, cache_size=1)
    np.testing.assert_array_equal(fast.jobs.jct.to_numpy(), ref.jobs.jct.to_numpy())
    assert fs.stats["decisions"] > 100


def test_job_finishing_several_tasks_between_calls():
    """Two tasks of a job end with no decision in between (the job leaves): state stays consistent."""
    import networkx as nx
    from types import SimpleNamespace as NS

    g = nx.DiGraph()
    g.add_edge("a", "b", bytes=0.0)
    g.add_edge("a", "c", bytes=0.0)
    nx.set_node_attributes(g, {"a": 0.004, "b": 0.002, "c": 0.002}, "work_s")
    job = NS(name="fan", kind="inference", dag=g, arrival_rate=40.0)
    cluster = NS(servers=4, bandwidth_gbps=10.0, compute_rate=1.0, link_bytes_per_s=1.25e9)
    runs = []
    for cls in (DecimaScheduler, ReferenceDecimaScheduler):
        res = simulate([job], cluster, cls(rng=2), duration=1.0, rng=np.random.default_rng(3))
        runs.append(res.jobs.jct.to_numpy())
    assert len(runs[0]) > 20
    np.testing.assert_array_equal(runs[0], runs[1])
