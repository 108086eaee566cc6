"""Side by side: the PCS authors' simulator and ours, same inputs, one run.

For each policy (FIFO, SRSF, AFS, Themis, PCS with a WFQ configuration of the mirror) and
predictions off and on, on the first ``--num-jobs`` jobs of a workload-2 trace (default 0e4a51,
1001 jobs = their ``-num_apps 1000``, 64 GPUs):

* runs the authors' ``sim.py`` (sources fetched through the data layer, copied to a temp
  folder, Ray calls made synchronous: :mod:`schedlab.pcs.authors`) in a subprocess, one per
  run, and records its wall time, CPU time and the ``scheduler.run()`` time it prints itself;
* runs ours (:func:`schedlab.pcs.simulate`, compiled engine, best of ``--reps``) in this
  process on the same jobs;
* prints the ratio (their ``scheduler.run()`` seconds / our wall seconds: their interpreter
  start, imports and trace reading are left out, which favours them) and the worst relative
  difference over jobs of JCT, start, end, predicted start and predicted end.

Runs are ordered cheapest first (predictions off, then SRSF, PCS, FIFO, Themis, AFS with
predictions); ``--budget-s`` bounds the whole run, and a run of theirs that would pass it is
stopped and reported as a lower bound (``>``). Each row is printed, and appended to ``--out``,
as soon as it is done, with the machine's ``uptime`` load at that moment.

Run: ``nice -n 5 .venv/bin/python benchmarks/bench_pcs_authors.py [--quick]``
"""

from __future__ import annotations

import argparse
import math
import os
import platform
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
ORDER_OFF = ["FIFO", "SRSF", "PCS", "THEMIS", "AFS"]
ORDER_ON = ["SRSF", "PCS", "FIFO", "THEMIS", "AFS"]
EQUAL_RTOL = 1e-9


def our_policy(name: str, config_name: str):
    """Ours, as the authors' code at 62a6ca3 runs it (Themis: 2024 code, 600 s lease)."""
    if name == "PCS":
        return make_policy("PCS", load_config(config_name))
    if name == "THEMIS":
        return Themis(600.0, valuation="linear")
    return make_policy(name)


def time_ours(workload, name: str, config_name: str, predict: bool, reps: int):
    """Best-of-``reps`` wall seconds, that run's CPU seconds, and its per-job table."""
    best, cpu, out = math.inf, math.nan, None
    for _ in range(reps):
        pol = our_policy(name, config_name)
        t, c = time.perf_counter(), time.process_time()
        res = simulate(workload, pol, 64, predict=predict)
        wall = time.perf_counter() - t
        if wall < best:
            best, cpu, out = wall, time.process_time() - c, res
    return best, cpu, out


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
    ap.add_argument("--policies", default="FIFO,SRSF,AFS,THEMIS,PCS")
    ap.add_argument("--predict", choices=["off", "on", "both"], default="both")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of ours (best is kept)")
    ap.add_argument("--budget-s", type=float, default=3600.0, help="wall budget of the whole run")
    ap.add_argument("--timeout-s", type=float, default=2400.0, help="limit of one authors' run")
    ap.add_argument("--out", type=Path, default=RESULTS, help="results file ('-': none)")
    ap.add_argument("--quick", action="store_true", help="60 jobs, one repetition, no file")
    args = ap.parse_args()
    if args.quick:
        args.num_jobs, args.reps, args.out = 60, 1, Path("-")
    start = time.perf_counter()
    report = Report(None if str(args.out) == "-" else args.out)
    chosen = [p.strip().upper() for p in args.policies.split(",") if p.strip()]
    runs = ([(p, False) for p in ORDER_OFF if p in chosen] if args.predict != "on" else [])
    runs += ([(p, True) for p in ORDER_ON if p in chosen] if args.predict != "off" else [])

    trace_entry = f"pcs/workload2_philly_traces/trace_{args.trace}.csv.gz"
    trace_gz = data.require(trace_entry)
    workdir = A.prepare_workdir(A.scratch_dir(), trace_gz)
    workload = load_trace(trace_gz, args.num_jobs)
    for name in chosen:  # compile/load our kernels outside the timings
        simulate(load_trace(trace_gz, 50), our_policy(name, args.config), 64, predict=True)
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()

    report(f"PCS simulators side by side: the authors' sim.py (PCS 62a6ca3, {A.SOURCES_PREFIX}/, "
           "Ray calls synchronous, one core) and schedlab's")
    report(f"date {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; machine {machine()}")
    report(f"uptime at start: {uptime}")
    report(f"input: trace {args.trace}, first {args.num_jobs} jobs (their -num_apps "
           f"{args.num_jobs - 1}), 64 GPUs; PCS = {args.config}; Themis 600 s lease "
           "(ours: valuation='linear', the 2024 code)")
    report("authors: subprocess wall / CPU s, and their own 'sim took' (scheduler.run()); ours: "
           f"simulate() best of {args.reps}, compiled engine; ratio = their run() s / our wall s")
    report(f"diff = worst relative difference over jobs of JCT, start, end, predicted start/end; "
           f"equal = diff <= {EQUAL_RTOL:g}")
    report()
    head = (f"{'policy':<8}{'pred':>5}{'auth wall':>11}{'auth cpu':>10}{'auth run':>10}"
            f"{'ours wall':>11}{'ours cpu':>10}{'ratio':>10}{'max rel diff':>14}  equal  load1/5/15")
    report(head)
    for name, predict in runs:
        left = args.budget_s - (time.perf_counter() - start)
        flag = "on" if predict else "off"
        if left < 30:
            report(f"{name:<8}{flag:>5}  not run: budget of {args.budget_s:.0f} s used up")
            continue
        ours_wall, ours_cpu, ours = time_ours(workload, name, args.config, predict, args.reps)
        limit = min(args.timeout_s, left)
        cfg = load_config(args.config) if name == "PCS" else None
        try:
            theirs = A.run_authors(workdir, f"trace_{args.trace}", name, args.num_jobs,
                                   predict=predict, config=cfg, timeout_s=limit)
        except A.AuthorsRunError as e:
            if "did not finish" not in str(e):
                raise
            report(f"{name:<8}{flag:>5}{'>' + f'{limit:.0f}':>11}{'-':>10}{'-':>10}"
                   f"{ours_wall:>11.3f}{ours_cpu:>10.3f}{'>' + f'{limit / ours_wall:.0f}x':>10}"
                   f"{'-':>14}  -      {load_avg()}  (theirs stopped after {limit:.0f} s)")
            continue
        diffs = A.job_differences(ours, theirs.jobs)
        w = A.worst(diffs)
        report(f"{name:<8}{flag:>5}{theirs.wall_s:>11.2f}{theirs.cpu_s:>10.2f}{theirs.sim_s:>10.2f}"
               f"{ours_wall:>11.3f}{ours_cpu:>10.3f}{theirs.sim_s / ours_wall:>9.0f}x"
               f"{w:>14.2e}  {'yes' if w <= EQUAL_RTOL else 'NO':<5}  {load_avg()}")
        if w > EQUAL_RTOL:
            report("         per column: " + ", ".join(f"{k} {v:.2e}" for k, v in diffs.items()))
    report()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    report(f"uptime at end: {uptime}; total wall {time.perf_counter() - start:.0f} s; "
           f"authors' work folder {workdir}")


if __name__ == "__main__":
    main()
