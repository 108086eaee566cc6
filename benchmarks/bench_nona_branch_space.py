"""Benchmark: Nona's branch space for subgraphs too large for Omega_t (``oversized="branches"``).

nasnetamobile (one 263-task subgraph) and gnmt (one 40-task subgraph) have a single bottleneck
subgraph each whose set-partition space is astronomically large, so ``oversized="keep_together"``
keeps them on one server; inception_v3's last subgraph (27 tasks, behind its auxiliary head) too.
``oversized="branches"`` decides over partitions of the subgraph's parallel branches instead
(:func:`schedlab.nona.decision.branch_options`). On the branches map instance (params.yaml
``nona.branches``: 80 servers, load per server, background link load 0.05, background 100:1),
this prints

1. the space: subgraphs, tasks, branches, moved-branch budget, options, under both modes;
2. over loads x bandwidths x byte scales (critical-path pricing, the default): options, compile
   and certified-solve CPU, split/mixed subgraphs, the predicted gain over keep-together;
3. at the ``--points`` point(s) per model and load with the largest predicted gain: the simulated gain over
   keep-together, paired per seed (seed i gives both placements the same arrivals), min/median/max,
   and ``idle %``: the simulator's gain for one job alone on the cluster (no queue but its own).

    .venv/bin/python benchmarks/bench_nona_branch_space.py [--duration 40] [--seeds 5] [--points 1]
        [--out benchmarks/results/nona_branch_space.txt]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import _report
from _report import say
from schedlab.nona import branches, optimise
from schedlab.nona.decision import DEFAULT_MAX_BRANCH_OPTIONS, BranchOptionList, class_space
from schedlab.nona.schedulers import TableScheduler
from schedlab.nona.sim import idle_jct
from schedlab.nona.workload import Cluster, build_workload, inference_classes, job_f

MODELS = ("nasnetamobile", "gnmt", "inception_v3")
# params.yaml nona.branches (copied, not read: this script measures the library, not the pipeline)
WORKLOAD = {"load_basis": "server", "comm_load": 0.05, "background_ratio": 100.0}
SERVERS = 80
LOADS, BANDWIDTHS, BYTE_SCALES = (0.1, 0.5, 0.9), (10.0, 25.0, 100.0), (0.01, 0.1, 1.0)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def space_table() -> None:
    say("\n1. decision space per model (subgraphs with one task have one option)")
    say(
        f"{'model':>14s} {'subgraphs':>9s} {'tasks':>6s} {'branches':>8s} {'moved':>5s} "
        f"{'options keep_together':>21s} {'options branches':>16s}"
    )
    for c in inference_classes(list(MODELS)):
        kt = class_space(c.name, c.dag, oversized="keep_together")
        br = class_space(c.name, c.dag, oversized="branches")
        for sub, a, b in zip(br.subgraphs, kt.options, br.options):
            if isinstance(b, BranchOptionList):
                say(
                    f"{c.name:>14s} {'1 of ' + str(len(br.subgraphs)):>9s} {len(sub.intermediate):6d} "
                    f"{len(b.branches):8d} {b.moved:5d} {len(a):21d} {len(b):16d}"
                )
        say(
            f"{c.name:>14s} {'all ' + str(len(br.subgraphs)):>9s} {'':>6s} {'':>8s} {'':>5s} "
            f"{sum(map(len, kt.options)):21d} {sum(map(len, br.options)):16d}"
        )


def grid_row(model: str, load: float, bw: float, bs: float) -> dict:
    cl = Cluster(servers=SERVERS, bandwidth_gbps=bw)
    wl = build_workload([model], load=load, cluster=cl, byte_scale=bs, **WORKLOAD)
    t0 = time.process_time()
    prob = optimise.compile_problem(wl, cl, oversized="branches")
    t1 = time.process_time()
    res = optimise.solve(prob, cl, method="global")
    t2 = time.process_time()
    together = optimise.evaluate(prob, optimise.theta_from_tables(prob, branches.together_tables(wl)))
    pc = optimise.placement_counts(res)
    return {
        "model": model,
        "load": load,
        "bw": bw,
        "bs": bs,
        "options": prob.n_options,
        "compile_cpu": t1 - t0,
        "solve_cpu": t2 - t1,
        "gap": res.gap,
        **pc,
        "pred_gain": res.tau[model] / float(together.tau[0]) - 1,
        "wl": wl,
        "cl": cl,
        "res": res,
    }


def grid(models) -> list[dict]:
    say(
        "\n2. certified Nona with the branch space, critical-path pricing (pred gain: model's JCT vs keep-together)"
    )
    say(
        f"{'model':>14s} {'load':>5s} {'Gbps':>5s} {'bytes':>5s} {'options':>7s} {'compile s':>9s} "
        f"{'solve s':>8s} {'gap':>8s} {'split':>5s} {'mix':>3s} {'pred %':>8s}"
    )
    rows = []
    for model in models:
        for bs, bw, load in itertools.product(BYTE_SCALES, BANDWIDTHS, LOADS):
            r = grid_row(model, load, bw, bs)
            say(
                f"{model:>14s} {load:5.2f} {bw:5.0f} {bs:5.2f} {r['options']:7d} {r['compile_cpu']:9.3f} "
                f"{r['solve_cpu']:8.3f} {r['gap']:8.1e} {r['split_subgraphs']:5d} {r['mixed_subgraphs']:3d} "
                f"{100 * r['pred_gain']:+8.3f}"
            )
            rows.append(r)
    for model in models:
        mine = [r for r in rows if r["model"] == model]
        split = [r for r in mine if r["split_subgraphs"]]
        sc = sorted(r["solve_cpu"] for r in mine)
        cc = sorted(r["compile_cpu"] for r in mine)
        say(
            f"{model}: splits at {len(split)} of {len(mine)} points; solve CPU min/median/max "
            f"{sc[0]:.3f}/{np.median(sc):.3f}/{sc[-1]:.3f} s; compile CPU {cc[0]:.2f}/{np.median(cc):.2f}/{cc[-1]:.2f} s; "
            "predicted gain over split points "
            + (
                f"{100 * min(r['pred_gain'] for r in split):+.3f}..{100 * max(r['pred_gain'] for r in split):+.3f} %"
                if split
                else "none"
            )
        )
    return rows


def chosen_points(rows: list[dict], n_points: int) -> list[dict]:
    """Per model and load, the ``n_points`` split points with the largest predicted gain (the load
    decides the servers' queueing, which the critical-path pricing does not see)."""
    out = []
    for model, load in dict.fromkeys((r["model"], r["load"]) for r in rows):
        split = [r for r in rows if (r["model"], r["load"]) == (model, load) and r["split_subgraphs"]]
        out += sorted(split, key=lambda r: r["pred_gain"])[:n_points]
    return out


def simulate_points(rows: list[dict], n_points: int, seeds: int, duration: float) -> None:
    say(
        f"\n3. simulated gain vs keep-together at the {n_points} point(s) per model and load with the largest "
        f"predicted gain (paired seeds 0..{seeds - 1}, window {duration:g} s, warm-up 10 %; gain < 0: Nona faster)"
    )
    say(
        f"{'model':>14s} {'load':>5s} {'Gbps':>5s} {'bytes':>5s} {'pred %':>8s} {'idle %':>8s} {'sim nona s':>10s} "
        f"{'together s':>10s} {'gain min %':>10s} {'median %':>9s} {'max %':>8s} {'verdict':>10s}"
    )
    for r in chosen_points(rows, n_points):
        seed_list = list(range(seeds))
        doc = optimise.to_json(r["res"])
        sim_n = branches.simulated_means(r["wl"], r["cl"], doc, seeds=seed_list, duration=duration)
        sim_t = branches.simulated_means(
            r["wl"], r["cl"], branches.together_tables(r["wl"]), seeds=seed_list, duration=duration
        )
        g = sim_n / sim_t - 1
        idle = idle_gain(r["wl"][0], r["cl"], doc)
        say(
            f"{r['model']:>14s} {r['load']:5.2f} {r['bw']:5.0f} {r['bs']:5.2f} {100 * r['pred_gain']:+8.3f} "
            f"{100 * idle:+8.3f} {sim_n.mean():10.4f} {sim_t.mean():10.4f} {100 * g.min():+10.2f} "
            f"{100 * np.median(g):+9.2f} {100 * g.max():+8.2f} {branches.verdict(r['pred_gain'], g, True):>10s}"
        )


def idle_gain(job_class, cl: Cluster, doc: dict, draws: int = 16) -> float:
    """One job alone on the cluster (no queue but its own), Nona's tables against keep-together:
    the simulator's gain with no other traffic (a mixed table is averaged over ``draws`` placements)."""
    together = branches.together_tables([job_class])
    nona = [idle_jct(job_class, cl, TableScheduler(doc), rng=np.random.default_rng(i)) for i in range(draws)]
    alone = idle_jct(job_class, cl, TableScheduler(together), rng=np.random.default_rng(0))
    return float(np.mean(nona)) / alone - 1


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=40.0, help="simulated window per seed, s")
    ap.add_argument("--seeds", type=int, default=5, help="paired seeds per point")
    ap.add_argument("--points", type=int, default=1, help="simulated points per model and load")
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--out", type=Path, default=None, help="also write the lines to this file (replaced)")
    a = ap.parse_args(argv)
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text("")
        _report.OUT = a.out
    say(f"{platform.machine()}, python {sys.version.split()[0]}; {uptime()}")
    say(
        f"branch space cap DEFAULT_MAX_BRANCH_OPTIONS = {DEFAULT_MAX_BRANCH_OPTIONS}; "
        f"instance: {SERVERS} servers, {WORKLOAD}"
    )
    space_table()
    # the solver's compiled kernels load on first use (~0.5 s): warm them so solve CPU is the solve's
    cl = Cluster(servers=2, bandwidth_gbps=80.0)
    optimise.solve(build_workload(classes=[job_f()], load=0.3, cluster=cl, comm_load=0.0), cl)
    rows = grid(a.models)
    simulate_points(rows, a.points, a.seeds, a.duration)
    say(f"peak RSS {_report.peak_rss_gb():.2f} GB; {uptime()}")


if __name__ == "__main__":
    main()
