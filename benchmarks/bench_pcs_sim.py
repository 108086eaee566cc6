"""PCS simulator speed: trace 0e4a51, first 1001 jobs, 64 GPUs, predictions on.

Prints, per policy, our wall time next to the authors' (issue 7: measured on a 2-core
machine with their pure-Python simulator), the speed-up, events per second (main-loop +
predictor-replay events) and whether the per-job output equals the authors' file (for the
policies that have one). Then how time grows with the number of jobs.

Run: ``.venv/bin/python benchmarks/bench_pcs_sim.py [--quick]``
"""

from __future__ import annotations

import argparse
import time

from schedlab.pcs import make_policy, simulate
from schedlab.pcs import sim as S
from schedlab.pcs.artifacts import RUNS, compare, load_run, run_config, trace_0e4a51

AUTHORS_S = {"SRSF": 63.0, "FIFO": 280.0, "PCS_jct": 351.0, "AFS": 1200.0}  # AFS: "> 1200 s"


def _policy(name):
    return make_policy("PCS", run_config(name)) if name.startswith("PCS") else make_policy(name)


def timed(w, name, reps=3):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        out = simulate(w, _policy(name), 64, predict=True)
        best = min(best, time.perf_counter() - t)
    return best, out, sum(S.LAST_EVENT_COUNTS), list(S.LAST_EVENT_COUNTS)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one repetition, fewer sizes")
    args = ap.parse_args()
    reps = 1 if args.quick else 3
    w = trace_0e4a51(1001)
    simulate(trace_0e4a51(50), make_policy("FIFO"), 64, predict=True)  # JIT compile/load
    for n in ("AFS", "FS", "PCS_jct", "THEMIS"):
        simulate(trace_0e4a51(50), _policy(n), 64, predict=True)
    print("trace 0e4a51, 1001 jobs, 64 GPUs, predictions on (best of %d runs)" % reps)
    print(f"{'policy':<9}{'ours s':>9}{'authors s':>11}{'speed-up':>10}{'events':>10}"
          f"{'events/s':>12}  per-job vs authors")
    for name in ["SRSF", "FIFO", "PCS_jct", "PCS_bal", "PCS_pred", "AFS", "LAS", "FS", "THEMIS"]:
        t, out, ev, split = timed(w, name, reps)
        ref = AUTHORS_S.get(name)
        same = "-"
        if name in RUNS:
            ok = all(a.ok() for a in compare(out, load_run(name)).values())
            same = "identical (<=1e-6 rel)" if ok else "DIFFERENT"
        print(f"{name:<9}{t:>9.3f}{(f'{ref:.0f}' if ref else '-'):>11}"
              f"{(f'{ref / t:.0f}x' if ref else '-'):>10}{ev:>10}{ev / t:>12.0f}  {same}"
              f"  (main {split[0]}, replay {split[1]})")
    print("\nscaling with the number of jobs (wall s / events)")
    sizes = [250, 500, 1001] if args.quick else [250, 500, 1001, 2000, 2465]
    print("jobs  " + "".join(f"{n:>22}" for n in ["SRSF", "FIFO", "PCS_jct", "AFS"]))
    for k in sizes:
        wk = trace_0e4a51(k)
        cells = []
        for name in ["SRSF", "FIFO", "PCS_jct", "AFS"]:
            t, _, ev, _ = timed(wk, name, 1)
            cells.append(f"{t:>10.3f} s /{ev:>9}")
        print(f"{k:<6}" + "".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
