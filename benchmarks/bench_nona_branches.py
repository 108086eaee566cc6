"""Benchmark: where Nona splits a DAG with real parallel branches, model against simulator.

Workload ``parallel_branches`` (not in the paper): one inference class, PipeDream's
``inception_v3`` (eight Inception modules of 3-4 branches with 0.7-11 ms of compute each;
its auxiliary head gets a zero-cost virtual sink, and the 27-task subgraph it creates is kept
on one server, ``oversized="keep_together"``), background compute at 100:1, background link
load ``--comm-loads``, load read cluster-wide (``load_basis="cluster"``, the calibrated
default's reading). For each point and pricing: the certified optimum's tables and
"keep every subgraph together", the model's predicted mean JCT of the class for both, and the
simulator's (mean of ``--seeds`` runs with the same arrivals for both placements). Printed,
not asserted: the columns say whether the simulator confirms the sign of the predicted gain.

    .venv/bin/python benchmarks/bench_nona_branches.py [--duration 600] [--seeds 4]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time

import numpy as np

from schedlab.nona import optimise, tables
from schedlab.nona.schedulers import TableScheduler
from schedlab.nona.sim import simulate
from schedlab.nona.workload import Cluster, build_workload, inference_classes

MODEL = "inception_v3"


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"load average {os.getloadavg()}"


def simulated_mean(wl, cl, doc: dict, duration: float, seeds: int) -> float:
    """Mean JCT of the inference class over ``seeds`` runs (seed i: the same arrivals for every placement)."""
    means = []
    for seed in range(seeds):
        r = simulate(
            wl,
            cl,
            TableScheduler(doc),
            duration=duration,
            warmup=0.1 * duration,
            rng=np.random.default_rng(seed),
        )
        means.append(float(r.jobs[r.jobs.job_class == MODEL].jct.mean()))
    return float(np.mean(means))


def point(cls, bw: float, load: float, comm: float, a) -> list[str]:
    cl = Cluster(servers=80, bandwidth_gbps=bw)
    wl = build_workload(classes=[cls], load=load, cluster=cl, comm_load=comm, load_basis="cluster")
    together = tables.option_tables(wl, lambda *x: [tables.together_option(*x)])
    sim_t = simulated_mean(wl, cl, together, a.duration, a.seeds)
    rows = []
    for pricing in optimise.PRICINGS:
        res = optimise.solve(wl, cl, pricing=pricing, oversized="keep_together")
        doc = optimise.to_json(res)
        prob = res.problem
        model_t = float(optimise.evaluate(prob, optimise.theta_from_tables(prob, together)).tau[0])
        model_n = res.tau[MODEL]
        pc = optimise.placement_counts(res)
        sim_n = simulated_mean(wl, cl, doc, a.duration, a.seeds) if pc["split_subgraphs"] else sim_t
        pred, seen = model_n / model_t - 1, sim_n / sim_t - 1
        agree = "yes" if (pred < 0) == (seen < 0) or pc["split_subgraphs"] == 0 else "NO"
        rows.append(
            f"{bw:5.0f} {load:5.2f} {comm:5.2f} {pricing:>13s} {pc['split_subgraphs']:5d} {pc['mixed_subgraphs']:3d} "
            f"{model_n * 1e3:9.2f} {model_t * 1e3:9.2f} {sim_n * 1e3:9.2f} {sim_t * 1e3:9.2f} "
            f"{100 * pred:+8.2f} {100 * seen:+8.2f} {agree:>6s}"
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=600.0, help="measured window per run, s")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--bandwidths", default="10,25,100")
    ap.add_argument("--loads", default="0.1,0.5,0.9")
    ap.add_argument("--comm-loads", default="0,0.05")
    a = ap.parse_args()
    print(f"{platform.node()} {platform.machine()}, {os.cpu_count()} cpus; {uptime()}")
    print(
        f"workload parallel_branches: {MODEL}, 80 servers, cluster-wide load, window {a.duration:g} s, "
        f"{a.seeds} seeds"
    )
    print(
        f"{'Gbps':>5s} {'load':>5s} {'bg':>5s} {'pricing':>13s} {'split':>5s} {'mix':>3s} {'model ms':>9s} "
        f"{'together':>9s} {'sim ms':>9s} {'together':>9s} {'pred %':>8s} {'sim %':>8s} {'agree':>6s}"
    )
    (cls,) = inference_classes([MODEL])
    t0 = time.perf_counter()
    for bw in map(float, a.bandwidths.split(",")):
        for load in map(float, a.loads.split(",")):
            for comm in map(float, a.comm_loads.split(",")):
                for row in point(cls, bw, load, comm, a):
                    print(row, flush=True)
    print(f"done in {time.perf_counter() - t0:.0f} s; {uptime()}")


if __name__ == "__main__":
    main()
