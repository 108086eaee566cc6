"""Benchmark: Nona's optimiser, the solvers side by side (printed, not asserted).

Default run (issue 14, "solver where it matters"): the five-model workload of section IV
(80 servers, with our module-granularity GPT-2 trace) on the grid background link load
{0, 0.01, 0.05, 0.1, 0.3} x compute load {0.1, 0.5, 0.9, 0.95} x bandwidth {1, 10, 100} Gbps.
Per point: wall seconds (``solve_seconds``: decision space compiled + solved; graphs read
once beforehand) of

* ``global`` (new default, ``lp="lagrange"``: Lagrangian bounds, no LP solver; median of
  ``--repeats``), its certified gap, nodes and knapsack LPs, the number of distributions that
  mix two options;
* ``global`` with the HiGHS interval LPs (``lp="highspy"``, the reference; once) and its LPs;
* ``local`` (once);
* ``penalty`` (the paper's approach, section IV-F; once) on a representative subset only:
  the three background loads where splitting pays (0.01, 0.05, 0.1) at load 0.5 and 10 Gbps
  (``--penalty-points``), with ``--penalty-max-iter`` iterations (one 20,000-iteration run
  takes minutes on the full workload).

``compile`` is the part of every solver's time spent building the arrays (also median).
The machine may be shared: the ``uptime`` lines give its load; compare columns of one run.

    .venv/bin/python benchmarks/bench_nona_solve.py [--repeats 5] [--penalty-max-iter 2000]
    .venv/bin/python benchmarks/bench_nona_solve.py --classic   # the earlier workloads + Table III sweep
    .venv/bin/python benchmarks/bench_nona_solve.py --pricings paper,critical_path   # global only, side by side

``--pricings`` times only the certified ``global`` solve under each pricing of
``schedlab.nona.optimise.PRICINGS`` at every grid point, interleaved (same load on the machine),
with the ratio critical_path / paper of median CPU seconds.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time

from schedlab.nona import profiles
from schedlab.nona.optimise import PRICINGS, compile_problem, placement_counts, solve
from schedlab.nona.workload import Cluster, build_workload, inference_classes, job_f

METHODS = ("global", "local", "penalty")
COMM_LOADS = (0.0, 0.01, 0.05, 0.1, 0.3)
LOADS = (0.1, 0.5, 0.9, 0.95)
BANDWIDTHS = (1.0, 10.0, 100.0)
PENALTY_POINTS = ((0.01, 0.5, 10.0), (0.05, 0.5, 10.0), (0.1, 0.5, 10.0))


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"load average {os.getloadavg()}"


def timed(wl, cl, method, reps, opts):
    runs, cpu = [], []
    for _ in range(reps):
        c0 = time.process_time()
        runs.append(solve(wl, cl, method=method, **opts))
        cpu.append(time.process_time() - c0)
    return runs[-1], statistics.median(r.solve_seconds for r in runs), statistics.median(cpu)


def n_mixed(res) -> int:
    """Subgraphs placed at random, counted as the Table III notebook counts them."""
    return placement_counts(res)["mixed_subgraphs"]


def compile_seconds(wl, cl, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        compile_problem(wl, cl)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def grid(a) -> None:
    five = inference_classes(profiles.MODELS)  # GPT-2's graph read once
    print(f"five-model workload, 80 servers; global(new) median of {a.repeats}; highspy, local, penalty once; "
          f"penalty max_iter {a.penalty_max_iter} on {len(PENALTY_POINTS)} points")
    head = (f"{'bg link':>7s} {'load':>5s} {'Gbps':>5s} {'compile':>8s} {'new s':>7s} {'new cpu':>7s} {'gap':>8s} {'nodes':>5s} "
            f"{'LPs':>4s} {'mix':>3s} {'highspy s':>9s} {'LPs':>4s} {'local s':>8s} {'penalty s':>9s} "
            f"{'new obj':>11s} {'highspy-new':>11s} {'local-new':>10s} {'penalty-new':>11s}")
    print(head)
    worst, worst_cpu = {}, {}
    for cl_load in COMM_LOADS:
        for load in LOADS:
            for bw in BANDWIDTHS:
                cl = Cluster(servers=80, bandwidth_gbps=bw)
                wl = build_workload(classes=five, load=load, cluster=cl, comm_load=cl_load)
                comp = compile_seconds(wl, cl, a.repeats)
                new, t_new, c_new = timed(wl, cl, "global", a.repeats, {})
                ref, t_ref, _ = timed(wl, cl, "global", 1, {"lp": "highspy"}) if not a.no_highspy else (None, None, None)
                loc, t_loc, _ = timed(wl, cl, "local", 1, {})
                pen = t_pen = None
                if (cl_load, load, bw) in PENALTY_POINTS:
                    pen, t_pen, _ = timed(wl, cl, "penalty", 1, {"max_iter": a.penalty_max_iter})
                worst[cl_load] = max(worst.get(cl_load, 0.0), t_new)
                worst_cpu[cl_load] = max(worst_cpu.get(cl_load, 0.0), c_new)

                def cell(x, fmt):
                    width = int("".join(ch for ch in fmt.split(".")[0] if ch.isdigit()))
                    return format(x, fmt) if x is not None else f"{'-':>{width}}"

                print(f"{cl_load:7.2f} {load:5.2f} {bw:5.0f} {comp:8.4f} {t_new:7.4f} {c_new:7.4f} {new.gap:8.1e} "
                      f"{new.info.get('nodes', 0):5d} {new.info.get('lps', 0):4d} {n_mixed(new):3d} "
                      f"{cell(t_ref, '9.3f')} {cell(ref.info['lps'] if ref else None, '4d')} {t_loc:8.4f} "
                      f"{cell(t_pen, '9.3f')} {new.objective:11.6f} "
                      f"{cell(ref.objective - new.objective if ref else None, '11.1e')} "
                      f"{loc.objective - new.objective:10.1e} {cell(pen.objective - new.objective if pen else None, '11.1e')}",
                      flush=True)
    print("slowest global (new) per background link load, wall: "
          + ", ".join(f"{k:g}: {v:.4f} s" for k, v in worst.items()))
    print("slowest global (new) per background link load, CPU (what an idle core would take): "
          + ", ".join(f"{k:g}: {v:.4f} s" for k, v in worst_cpu.items()))


def pricings(a) -> None:
    """Certified global solve under each pricing, side by side, at every grid point."""
    names = a.pricings.split(",")
    bad = [p for p in names if p not in PRICINGS]
    if bad:
        raise SystemExit(f"--pricings: unknown {bad}; choose from {PRICINGS}")
    five = inference_classes(profiles.MODELS)
    print(f"five-model workload, 80 servers; global, median of {a.repeats} (wall s / CPU s per pricing)")
    print(f"{'bg link':>7s} {'load':>5s} {'Gbps':>5s} " + " ".join(
        f"{p + ' wall':>18s} {p + ' cpu':>17s} {'gap':>8s} {'split':>5s} {'mix':>3s}" for p in names)
        + (f" {'cpu ratio':>9s}" if len(names) == 2 else ""))
    cpus: dict[str, list[float]] = {p: [] for p in names}
    for cl_load in COMM_LOADS:
        for load in LOADS:
            for bw in BANDWIDTHS:
                cl = Cluster(servers=80, bandwidth_gbps=bw)
                wl = build_workload(classes=five, load=load, cluster=cl, comm_load=cl_load)
                cells, row = [], {}
                for p in names:
                    r, t, c = timed(wl, cl, "global", a.repeats, {"pricing": p})
                    row[p] = c
                    cpus[p].append(c)
                    pc = placement_counts(r)
                    cells.append(f"{t:18.4f} {c:17.4f} {r.gap:8.1e} {pc['split_subgraphs']:5d} "
                                 f"{pc['mixed_subgraphs']:3d}")
                ratio = f" {row[names[1]] / row[names[0]]:9.2f}" if len(names) == 2 else ""
                print(f"{cl_load:7.2f} {load:5.2f} {bw:5.0f} " + " ".join(cells) + ratio, flush=True)
    for p in names:
        xs = sorted(cpus[p])
        print(f"{p}: CPU s min {xs[0]:.4f} median {statistics.median(xs):.4f} max {xs[-1]:.4f} "
              f"over {len(xs)} points")


def classic(a) -> None:
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
                    if k in ("lps", "nodes", "starts", "evaluations", "iterations", "rounds", "active_options")}
            print(f"{name:28s} {prob.n_options:8d} {prob.n_distributions:5d} {method:8s} {t:8.4f} {cpu:8.4f} "
                  f"{r.objective:12.6g} {r.objective - lb:12.3g} {info}")
    print(f"\nTable III sweep: five models, load {a.load}, 10 Gbps (wall s / cpu s; median of {a.repeats}, "
          "penalty once)")
    print(f"{'servers':>7s} " + " ".join(f"{m + ' wall':>13s} {m + ' cpu':>12s}" for m in METHODS))
    for n in range(16, 129, 16):
        cl = Cluster(servers=n, bandwidth_gbps=10)
        wl = build_workload(classes=five, load=a.load, cluster=cl)
        cells = []
        for method in METHODS:
            opts = {"max_iter": a.penalty_max_iter} if method == "penalty" else {}
            _, t, cpu = timed(wl, cl, method, 1 if method == "penalty" else a.repeats, opts)
            cells.append(f"{t:13.4f} {cpu:12.4f}")
        print(f"{n:7d} " + " ".join(cells))
    print("paper (Table III): 13 s per solve, single-threaded, at every cluster size")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--load", type=float, default=0.5, help="compute load of the --classic workloads")
    ap.add_argument("--penalty-max-iter", type=int, default=2_000)
    ap.add_argument("--no-highspy", action="store_true", help="skip the HiGHS reference (slow where splitting pays)")
    ap.add_argument("--classic", action="store_true", help="the earlier workloads and the Table III sweep instead")
    ap.add_argument("--pricings", default=None,
                    help="comma-separated pricings (e.g. paper,critical_path): global only, side by side")
    a = ap.parse_args()
    print(f"{platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} cpus; {uptime()}")
    t0 = time.perf_counter()
    (classic if a.classic else pricings if a.pricings else grid)(a)
    print(f"done in {time.perf_counter() - t0:.0f} s; {uptime()}")
    print("target (issue 14): global <= 0.1 s at every point; paper (Table III): 13 s per solve")


if __name__ == "__main__":
    main()
