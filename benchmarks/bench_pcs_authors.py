"""Side by side: the PCS authors' simulator and ours, same inputs, one run.

For each policy (FIFO, SRSF/Tiresias, LAS, Max-Min FS, AFS, Themis, PCS with a WFQ
configuration of the mirror) and predictions off and on, on the first ``--num-jobs`` jobs of a
workload-2 trace (default 0e4a51, 1001 jobs = their ``-num_apps 1000``, 64 GPUs; the runs
named in ``--slow``, theirs too slow for that, on the first ``--slow-num-jobs``):

* runs the authors' ``sim.py`` (sources fetched through the data layer, copied to a temp
  folder, Ray calls made synchronous: :mod:`schedlab.pcs.authors`) in a subprocess, one per
  run, and records its wall time, its CPU time (``resource.getrusage(RUSAGE_CHILDREN)``:
  interpreter start, imports, trace reading and ``scheduler.run()``) and the
  ``scheduler.run()`` time it prints itself;
* runs ours (:func:`schedlab.pcs.simulate`, compiled engine, ``--reps`` times) in this
  process on the same jobs, with the policy as their code at 62a6ca3 runs it (Themis:
  :meth:`~schedlab.pcs.policies.Themis.authors_code`), and keeps the median wall and CPU
  (``time.process_time``) seconds;
* prints two ratios: wall (their ``scheduler.run()`` seconds / our median wall seconds; their
  start-up left out, which favours them) and CPU (their subprocess CPU seconds / our median
  CPU seconds; on a loaded machine the CPU ratio is the steadier one), and the worst
  relative difference over jobs of JCT, start, end, predicted start and predicted end.

Runs are ordered cheapest first (predictions off, then with predictions); ``--budget-s``
bounds the whole run, and a run of theirs that would pass it is stopped and reported as a
lower bound (``>``). Each row is printed, and appended to ``--out``, as soon as it is done,
with the machine's ``uptime`` load at that moment.

Run: ``nice -n 5 .venv/bin/python benchmarks/bench_pcs_authors.py [--quick]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

from schedlab import data
from schedlab.pcs import authors as A
from schedlab.pcs import load_config, make_policy, simulate
from schedlab.pcs.policies import Themis
from schedlab.pcs.workload import load_trace

RESULTS = Path(__file__).with_name("results") / "pcs_authors_side_by_side.txt"
ORDER_OFF = ["FIFO", "SRSF", "LAS", "FS", "PCS", "THEMIS", "AFS"]
ORDER_ON = ["SRSF", "LAS", "PCS", "FIFO", "FS", "THEMIS", "AFS"]
EQUAL_RTOL = 1e-9


def our_policy(name: str, config_name: str):
    """Ours, as the authors' code at 62a6ca3 runs it (Themis: 600 s lease)."""
    if name == "PCS":
        return make_policy("PCS", load_config(config_name))
    if name == "THEMIS":
        return Themis.authors_code(600.0)
    return make_policy(name)


def time_ours(workload, name: str, config_name: str, predict: bool, reps: int):
    """Median wall and median CPU seconds over ``reps`` runs, and the per-job table."""
    walls, cpus, out = [], [], None
    for _ in range(reps):
        pol = our_policy(name, config_name)
        t, c = time.perf_counter(), time.process_time()
        out = simulate(workload, pol, 64, predict=predict)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), out


def load_avg() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node()}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


class Report:
    """Prints each line and appends it to the results file."""

    def __init__(self, path: Path | None):
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        if self.path is not None:
            with open(self.path, "a") as fh:
                fh.write(line + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", default="0e4a51")
    ap.add_argument("--num-jobs", type=int, default=1001)
    ap.add_argument("--config", default="PCS_config_0e4a51_jct", help="WFQ config for PCS")
    ap.add_argument("--policies", default="FIFO,SRSF,LAS,FS,AFS,THEMIS,PCS")
    ap.add_argument(
        "--slow", default="THEMIS:on,AFS:on", help="runs (POLICY:on|off) on --slow-num-jobs jobs instead"
    )
    ap.add_argument("--slow-num-jobs", type=int, default=201)
    ap.add_argument("--predict", choices=["off", "on", "both"], default="both")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of ours (median is kept)")
    ap.add_argument("--budget-s", type=float, default=3600.0, help="wall budget of the whole run")
    ap.add_argument("--timeout-s", type=float, default=2400.0, help="limit of one authors' run")
    ap.add_argument("--out", type=Path, default=RESULTS, help="results file ('-': none)")
    ap.add_argument("--quick", action="store_true", help="60 jobs, one repetition, no file")
    args = ap.parse_args()
    if args.quick:
        args.num_jobs, args.slow_num_jobs, args.reps, args.out = 60, 60, 1, Path("-")
    slow = {tuple(x.strip().upper().split(":")) for x in args.slow.split(",") if x.strip()}
    start = time.perf_counter()
    report = Report(None if str(args.out) == "-" else args.out)
    chosen = [p.strip().upper() for p in args.policies.split(",") if p.strip()]
    runs = [(p, False) for p in ORDER_OFF if p in chosen] if args.predict != "on" else []
    runs += [(p, True) for p in ORDER_ON if p in chosen] if args.predict != "off" else []

    trace_entry = f"pcs/workload2_philly_traces/trace_{args.trace}.csv.gz"
    trace_gz = data.require(trace_entry)
    workdir = A.prepare_workdir(A.scratch_dir(), trace_gz)
    workloads = {n: load_trace(trace_gz, n) for n in {args.num_jobs, args.slow_num_jobs}}
    for name in chosen:  # compile/load our kernels outside the timings
        simulate(load_trace(trace_gz, 50), our_policy(name, args.config), 64, predict=True)
    # their fixed cost (interpreter, numpy/pandas imports, trace reading), in every CPU figure
    # of theirs below: a 2-job FIFO run without predictions
    startup = A.run_authors(workdir, f"trace_{args.trace}", "FIFO", 2, predict=False, tag="startup")
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()

    report(
        f"PCS simulators side by side: the authors' sim.py (PCS 62a6ca3, {A.SOURCES_PREFIX}/, "
        "Ray calls synchronous, one core) and schedlab's"
    )
    report(f"date {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; machine {machine()}")
    report(f"uptime at start: {uptime}")
    report(
        f"input: trace {args.trace}, first {args.num_jobs} jobs (their -num_apps "
        f"{args.num_jobs - 1}; {', '.join(':'.join(x) for x in sorted(slow))}: first "
        f"{args.slow_num_jobs}), 64 GPUs; PCS = {args.config}; Themis 600 s lease "
        "(ours: Themis.authors_code(), their code at 62a6ca3)"
    )
    report(
        "authors: subprocess wall / CPU s (getrusage RUSAGE_CHILDREN), and their own 'sim took' "
        f"(scheduler.run()); ours: simulate(), median wall / CPU (process_time) of {args.reps}, "
        "compiled engine"
    )
    report(
        "wall ratio = their run() s / our wall s; cpu ratio = their subprocess CPU s / our CPU s "
        f"(their start-up alone, a 2-job run: {startup.cpu_s:.2f} s CPU, {startup.wall_s:.2f} s wall; "
        "it dominates their CPU on small inputs)"
    )
    report(
        f"diff = worst relative difference over jobs of JCT, start, end, predicted start/end; "
        f"equal = diff <= {EQUAL_RTOL:g}"
    )
    report()
    head = (
        f"{'policy':<8}{'pred':>5}{'jobs':>6}{'auth wall':>11}{'auth cpu':>10}{'auth run':>10}"
        f"{'ours wall':>11}{'ours cpu':>10}{'wall x':>9}{'cpu x':>9}{'max rel diff':>14}"
        "  equal  load1/5/15"
    )
    report(head)
    for name, predict in runs:
        left = args.budget_s - (time.perf_counter() - start)
        flag = "on" if predict else "off"
        n = args.slow_num_jobs if (name, flag.upper()) in slow else args.num_jobs
        if left < 30:
            report(f"{name:<8}{flag:>5}{n:>6}  not run: budget of {args.budget_s:.0f} s used up")
            continue
        ours_wall, ours_cpu, ours = time_ours(workloads[n], name, args.config, predict, args.reps)
        limit = min(args.timeout_s, left)
        cfg = load_config(args.config) if name == "PCS" else None
        try:
            theirs = A.run_authors(
                workdir, f"trace_{args.trace}", name, n, predict=predict, config=cfg, timeout_s=limit
            )
        except A.AuthorsRunError as e:
            if "did not finish" not in str(e):
                raise
            report(
                f"{name:<8}{flag:>5}{n:>6}{'>' + f'{limit:.0f}':>11}{'-':>10}{'-':>10}"
                f"{ours_wall:>11.3f}{ours_cpu:>10.3f}{'>' + f'{limit / ours_wall:.0f}x':>9}"
                f"{'-':>9}{'-':>14}  -      {load_avg()}  (theirs stopped after {limit:.0f} s)"
            )
            continue
        diffs = A.job_differences(ours, theirs.jobs)
        w = A.worst(diffs)
        report(
            f"{name:<8}{flag:>5}{n:>6}{theirs.wall_s:>11.2f}{theirs.cpu_s:>10.2f}"
            f"{theirs.sim_s:>10.2f}{ours_wall:>11.3f}{ours_cpu:>10.3f}"
            f"{theirs.sim_s / ours_wall:>8.0f}x{theirs.cpu_s / max(ours_cpu, 1e-9):>8.0f}x"
            f"{w:>14.2e}  {'yes' if w <= EQUAL_RTOL else 'NO':<5}  {load_avg()}"
        )
        if w > EQUAL_RTOL:
            report("         per column: " + ", ".join(f"{k} {v:.2e}" for k, v in diffs.items()))
    report()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    report(
        f"uptime at end: {uptime}; total wall {time.perf_counter() - start:.0f} s; "
        f"authors' work folder {workdir}"
    )


if __name__ == "__main__":
    main()
