"""Validation of the Nona simulator against closed forms and hand-computed schedules."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from schedlab.nona import sim
from schedlab.nona.schedulers import RandomScheduler, SparkFairScheduler, TableScheduler
from schedlab.nona.workload import (
    Cluster,
    JobClass,
    background_comm_class,
    background_compute_class,
    build_workload,
    job_f,
)


def comm_only(rho: float, s: float, cluster: Cluster) -> list[JobClass]:
    return [background_comm_class(s * cluster.link_bytes_per_s).with_rate(rho / s)]


@pytest.mark.parametrize("rho", [0.5, 0.7, 0.9])
def test_link_is_md1(rho):
    """Communication jobs only: the link's mean wait is Pollaczek-Khinchine's M/D/1 value."""
    cluster = Cluster(servers=1, bandwidth_gbps=8.0)
    s = 1e-3
    jobs = 2_000_000 if rho == 0.9 else 300_000  # rho 0.9: ~1% std of the mean at 2M jobs
    res = sim.simulate(
        comm_only(rho, s, cluster),
        cluster,
        RandomScheduler(),
        duration=jobs * s / rho,
        warmup=2000 * s,
        rng=np.random.default_rng(7),
    )
    wait = res.jobs.jct.to_numpy() - s
    pk = rho * s / (2 * (1 - rho))
    assert wait.min() >= -1e-12
    assert abs(wait.mean() / pk - 1) < 0.03, (wait.mean(), pk)


def test_single_server_is_mg1():
    """One server, two compute classes (two-point service law): M/G/1 mean wait (PK)."""
    cluster = Cluster(servers=1, bandwidth_gbps=10.0)
    lam = (3.0, 1.0)
    works = (0.05, 0.35)
    classes = []
    for k, (l, w) in enumerate(zip(lam, works)):
        c = background_compute_class(w).with_rate(l)
        classes.append(JobClass(f"c{k}", c.kind, c.dag, l))
    rho = sum(l * w for l, w in zip(lam, works))
    es2 = sum(l * w * w for l, w in zip(lam, works)) / sum(lam)
    pk = sum(lam) * es2 / (2 * (1 - rho))
    res = sim.simulate(
        classes, cluster, RandomScheduler(), duration=60_000, warmup=100, rng=np.random.default_rng(3)
    )
    service = res.jobs.job_class.map({"c0": works[0], "c1": works[1]}).astype(float)
    wait = res.jobs.jct - service
    assert rho == pytest.approx(0.5)
    assert abs(wait.mean() / pk - 1) < 0.03, (wait.mean(), pk)


def one_option(dag, parts, sp=0, kp=0):
    return {
        "classes": {
            "f": {
                "subgraphs": [
                    {
                        "source": "sum",
                        "sink": "add",
                        "intermediate": ["det", "det_sparse"],
                        "options": [{"partition": parts, "source_part": sp, "sink_part": kp, "p": 1.0}],
                    }
                ]
            }
        }
    }


@pytest.mark.parametrize(
    "parts,sp,kp,expect_ms",
    [
        ([["det", "det_sparse"]], 0, 0, 22.0),  # all on one server: 1 + 10 + 10 + 1
        ([["det_sparse"], ["det"]], 0, 0, 1 + 20 + 10 + 1),  # det moved: 200 MB at 10 GB/s = 20 ms
        ([["det"], ["det_sparse"]], 0, 0, 1 + 2 + 10 + 1),  # 20 MB = 2 ms, in parallel with det
    ],
)
def test_isolated_job_f_matches_hand_schedule(parts, sp, kp, expect_ms):
    """Fig. 1's job f alone on an 80 Gbps link: JCT from the placement, by hand (section II)."""
    cluster = Cluster(servers=4, bandwidth_gbps=80.0)
    f = job_f().with_rate(0.001)  # ~ one job per 1000 s: jobs never meet
    res = sim.simulate(
        [f],
        cluster,
        TableScheduler(one_option(f.dag, parts, sp, kp)),
        duration=20_000,
        rng=np.random.default_rng(0),
    )
    result_ms = 8 / cluster.link_bytes_per_s * 1e3  # the 8-byte result of the remote det
    extra = result_ms if len(parts) == 2 else 0.0
    assert len(res.jobs) > 5
    assert np.allclose(
        res.jobs.jct * 1e3, expect_ms + extra, rtol=0, atol=1e-7
    )  # float64 at t ~ 1e4 s: ~1e-12 s
    moved = 0.0 if len(parts) == 1 else (200e6 if parts[1] == ["det"] else 20e6) + 8
    assert np.allclose(res.jobs.bytes_moved, moved)


def small_workload(load=0.6, servers=8):
    cluster = Cluster(servers=servers, bandwidth_gbps=80.0)
    return build_workload(
        classes=[job_f()], load=load, cluster=cluster, background_ratio=20, comm_load=0.2
    ), cluster


@pytest.mark.parametrize("scheduler", [RandomScheduler, SparkFairScheduler])
def test_conservation(scheduler):
    """Every job completes exactly once, after it arrives; bytes per job add up to the link's bytes."""
    w, cluster = small_workload()
    res = sim.simulate(
        w, cluster, scheduler(), duration=30.0, warmup=0.0, cooldown=0.0, rng=np.random.default_rng(11)
    )
    j = res.jobs
    assert len(j) == res.stats["generated_jobs"]  # no warm-up/cool-down: every job is measured
    assert j.job_id.is_unique
    assert np.isfinite(j.completion).all() and (j.jct >= 0).all()
    assert j.bytes_moved.sum() == pytest.approx(res.stats["link_bytes"], rel=1e-12)
    assert res.stats["task_events"] == j.tasks.sum()
    comm = j[j.kind == "background_comm"]
    assert np.allclose(comm.bytes_moved, w[-1].transfer_bytes)
    # inference bytes are sums of f's edge sizes; a job never moves more than all its edges
    inf = j[j.kind == "inference"]
    assert (inf.bytes_moved <= 200e6 + 20e6 + 16 + 1e-6).all()


@pytest.mark.parametrize("scheduler", [RandomScheduler, SparkFairScheduler])
def test_same_seed_same_records(scheduler):
    w, cluster = small_workload()
    a = sim.simulate(w, cluster, scheduler(), duration=10.0, warmup=1.0, rng=np.random.default_rng(5)).jobs
    b = sim.simulate(w, cluster, scheduler(), duration=10.0, warmup=1.0, rng=np.random.default_rng(5)).jobs
    c = sim.simulate(w, cluster, scheduler(), duration=10.0, warmup=1.0, rng=np.random.default_rng(6)).jobs
    pd.testing.assert_frame_equal(a, b)
    assert not (len(a) == len(c) and np.allclose(a.jct.to_numpy(), c.jct.to_numpy()))


def test_schemes_share_arrivals():
    """Arrivals and placements use separate streams: same seed -> same arrivals for every scheme."""
    w, cluster = small_workload()
    a = sim.simulate(w, cluster, RandomScheduler(), duration=5.0, rng=np.random.default_rng(2)).jobs
    b = sim.simulate(w, cluster, SparkFairScheduler(), duration=5.0, rng=np.random.default_rng(2)).jobs
    assert np.array_equal(a.arrival.to_numpy(), b.arrival.to_numpy())


def test_live_single_server_fifo_matches_oblivious():
    """With one server and single-task jobs, Spark (no buffer, arrival-order pool) is FIFO too."""
    cluster = Cluster(servers=1, bandwidth_gbps=10.0)
    c = background_compute_class(0.1).with_rate(6.0)
    a = sim.simulate([c], cluster, RandomScheduler(), duration=500, rng=np.random.default_rng(9)).jobs
    b = sim.simulate([c], cluster, SparkFairScheduler(), duration=500, rng=np.random.default_rng(9)).jobs
    assert np.allclose(a.jct.to_numpy(), b.jct.to_numpy())


def test_bad_input_is_refused_before_running():
    cluster = Cluster(servers=2, bandwidth_gbps=10.0)
    empty = JobClass.__new__(JobClass)
    object.__setattr__(empty, "name", "empty")
    object.__setattr__(empty, "kind", "inference")
    object.__setattr__(empty, "dag", nx.DiGraph())
    object.__setattr__(empty, "arrival_rate", 1.0)
    with pytest.raises(sim.SimInputError, match="'empty': its DAG has no tasks"):
        sim.simulate([empty], cluster, RandomScheduler(), duration=1, rng=np.random.default_rng(0))
    heavy = background_compute_class(1.0).with_rate(2.5)  # load 1.25 on 2 servers
    with pytest.raises(sim.SimInputError, match="compute load"):
        sim.simulate([heavy], cluster, RandomScheduler(), duration=1, rng=np.random.default_rng(0))

    class BadCluster:
        servers, bandwidth_gbps, compute_rate = 2, 0.0, 1.0

    with pytest.raises(sim.SimInputError, match="bandwidth_gbps must be > 0"):
        sim.simulate(
            [background_compute_class(0.1).with_rate(1)],
            BadCluster(),
            RandomScheduler(),
            duration=1,
            rng=np.random.default_rng(0),
        )
    with pytest.raises(sim.SimInputError, match="duration"):
        sim.simulate([heavy], cluster, RandomScheduler(), duration=0, rng=np.random.default_rng(0))


def test_compute_load_definition():
    w, cluster = small_workload(load=0.45)
    res = sim.simulate(w, cluster, RandomScheduler(), duration=1.0, rng=np.random.default_rng(0))
    assert res.stats["compute_load"] == pytest.approx(0.45)
    assert res.stats["link_background_load"] == pytest.approx(0.2)
    assert math.isfinite(res.stats["events_per_s"])
