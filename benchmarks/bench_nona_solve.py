"""Benchmark: Nona's optimiser, the three solvers side by side (printed, not asserted).

Prints, for each workload, each solver's wall time and process CPU time (decision space
compiled + solved, as ``solve_seconds``; graph files read once beforehand), the objective and
the excess over the certified `global` lower bound. Workloads: the five models of section IV
(with our module-granularity GPT-2 trace), the four PipeDream models alone (the paper's
workload minus GPT-2), and job f of section II. Then Table III's sweep: the five-model
workload on 16..128 servers (load 0.5, 10 Gbps), every solver.
Reference: the paper's single-threaded solver took 13 s (Table III); the issue's target is
<= 0.1 s for `global` and `local`. The machine may be shared: compare the columns of one run.

    .venv/bin/python benchmarks/bench_nona_solve.py [--repeats 3] [--penalty-max-iter 20000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from schedlab.nona.optimise import compile_problem, solve
from schedlab.nona.workload import Cluster, build_workload, inference_classes, job_f

METHODS = ("global", "local", "penalty")


def timed(wl, cl, method, reps, opts):
    runs, cpu = [], []
    for _ in range(reps):
        c0 = time.process_time()
        runs.append(solve(wl, cl, method=method, **opts))
        cpu.append(time.process_time() - c0)
    return runs[-1], statistics.median(r.solve_seconds for r in runs), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--penalty-max-iter", type=int, default=20_000)
    ap.add_argument("--sweep-penalty-max-iter", type=int, default=2_000,
                    help="penalty iterations in the servers sweep (each full run takes minutes)")
    ap.add_argument("--no-sweep", action="store_true", help="skip the 16..128 servers sweep")
    a = ap.parse_args()
    c80 = Cluster(servers=80, bandwidth_gbps=10)
    c2 = Cluster(servers=2, bandwidth_gbps=80)
    five = inference_classes()
    workloads = {
        "five models (gpt2 traced)": (build_workload(classes=five, load=a.load, cluster=c80), c80),
        "four PipeDream models": (build_workload(classes=five[1:], load=a.load, cluster=c80), c80),
        "job f, 2 servers, load 0.6": (build_workload(classes=[job_f()], load=0.6, cluster=c2,
                                                      background_comm_bytes=20e6), c2),
    }
    print(f"{'workload':28s} {'options':>8s} {'dists':>5s} {'method':8s} {'wall s':>8s} {'cpu s':>8s} "
          f"{'objective':>12s} {'excess vs LB':>12s} info")
    for name, (wl, cl) in workloads.items():
        prob = compile_problem(wl, cl)
        lb = None
        for method in METHODS:
            opts = {"max_iter": a.penalty_max_iter} if method == "penalty" else {}
            r, t, cpu = timed(wl, cl, method, 1 if method == "penalty" else a.repeats, opts)
            if method == "global":
                lb = r.lower_bound
            info = {k: v for k, v in r.info.items()
                    if k in ("lps", "decoupled", "starts", "evaluations", "iterations", "rounds", "active_options")}
            print(f"{name:28s} {prob.n_options:8d} {prob.n_distributions:5d} {method:8s} {t:8.4f} {cpu:8.4f} "
                  f"{r.objective:12.6g} {r.objective - lb:12.3g} {info}")
    if not a.no_sweep:
        print(f"\nTable III sweep: five models, load {a.load}, 10 Gbps (wall s / cpu s; median of {a.repeats}, "
              "penalty once)")
        print(f"{'servers':>7s} " + " ".join(f"{m + ' wall':>13s} {m + ' cpu':>12s}" for m in METHODS))
        for n in range(16, 129, 16):
            cl = Cluster(servers=n, bandwidth_gbps=10)
            wl = build_workload(classes=five, load=a.load, cluster=cl)
            cells = []
            for method in METHODS:
                opts = {"max_iter": a.sweep_penalty_max_iter} if method == "penalty" else {}
                _, t, cpu = timed(wl, cl, method, 1 if method == "penalty" else a.repeats, opts)
                cells.append(f"{t:13.4f} {cpu:12.4f}")
            print(f"{n:7d} " + " ".join(cells))
    print("paper (Table III): 13 s per solve, single-threaded, at every cluster size")


if __name__ == "__main__":
    main()
