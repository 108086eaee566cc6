"""PCS predictions at scale: the FIFO window replay and the authors' predicted subset.

Two parts, printed as tables with the machine's load next to them (2 shared cores):

1. FIFO's predictor replay, the window replay (``_engine._replay_fifo``, default) against the
   generic replay it replaces, side by side on the same inputs, every arrival predicted:
   wall time each, the ratio and whether the per-job outputs are identical.
2. ``--paper``: every (trace, policy) simulation of the Fig. 7 paper profile (six whole
   Philly traces, the authors' rule ``predict_sample=5000``), one at a time: wall time,
   replay events, jobs predicted; then the sum and the longest task, which bound the
   stage's wall time on 2 workers from below.

Run: ``.venv/bin/python benchmarks/bench_pcs_predict.py [--paper] [--out FILE]``
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from schedlab import data
from schedlab.pcs import experiments as X, load_trace
from schedlab.pcs import sim as S

TRACES = ["0e4a51", "b436b2", "6214e9", "6c71a0", "2869ce", "ee9e8c"]
POLICIES = ["AFS", "Tiresias", "Themis", "FIFO", "PCS-JCT", "PCS-bal", "PCS-pred"]


def trace(name: str, n: int | None = None):
    return load_trace(data.require(f"pcs/workload2_philly_traces/trace_{name}.csv.gz"), n)


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def fifo_side_by_side(cases) -> list[str]:
    lines = [
        "FIFO predictor replay, every arrival predicted: window (default) vs generic",
        f"{'trace':8s} {'jobs':>6s} {'window s':>9s} {'generic s':>10s} {'ratio':>7s} "
        f"{'replay events':>14s} identical",
    ]
    fifo = X.policy_set(["FIFO"])["FIFO"]
    for name, n in cases:
        w = trace(name, n)
        mask = np.ones(len(w), dtype=np.uint8)
        t0 = time.perf_counter()
        a, events = S._simulate_fast(w, fifo, 64, mask, None, fifo_window=True)
        t1 = time.perf_counter()
        b, _ = S._simulate_fast(w, fifo, 64, mask, None, fifo_window=False)
        t2 = time.perf_counter()
        lines.append(
            f"{name:8s} {len(w):6d} {t1 - t0:9.2f} {t2 - t1:10.2f} "
            f"{(t2 - t1) / (t1 - t0):6.1f}x {events.replay:14d} {a.equals(b)}"
        )
        print(lines[-1], flush=True)
    return lines


def paper_profile(sample: int = 5000) -> list[str]:
    lines = [
        f"Fig. 7 paper profile, one simulation at a time, predict_sample={sample}",
        f"{'trace':8s} {'policy':9s} {'jobs':>6s} {'wall s':>8s} {'replay events':>14s} predicted",
    ]
    walls = []
    for name in TRACES:
        w = trace(name)
        for lab in X.fig7_labels(name, POLICIES):
            t0 = time.perf_counter()
            # as X.simulate_label((w, key, lab), 64, predict_sample=sample), with its events
            policy = X.policy_set([lab], X.fig7_config_key(name))[lab]
            df, events = S.simulate_counted(
                w, policy, 64, predict=True, predict_sample=sample, rng=np.random.default_rng(0)
            )
            wall = time.perf_counter() - t0
            walls.append(wall)
            lines.append(
                f"{name:8s} {lab:9s} {len(w):6d} {wall:8.1f} {events.replay:14d} "
                f"{int((df.estimated_end_time != -1).sum())}  ({load()})"
            )
            print(lines[-1], flush=True)
    lines.append(
        f"sum {sum(walls):.0f} s; longest task {max(walls):.0f} s; on 2 workers the stage "
        f"takes at least max(sum/2, longest) = {max(sum(walls) / 2, max(walls)):.0f} s"
    )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paper", action="store_true", help="also time the Fig. 7 paper profile")
    ap.add_argument("--out", help="also write the printed lines to this file")
    args = ap.parse_args()
    head = [
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores; {load()} at start"
    ]
    print(head[0])
    # compile outside the timings
    S._simulate_fast(
        trace("2869ce", 50), X.policy_set(["FIFO"])["FIFO"], 64, np.ones(50, dtype=np.uint8), None
    )
    lines = head + fifo_side_by_side([("2869ce", None), ("0e4a51", None), ("ee9e8c", 3000)])
    if args.paper:
        lines += [""] + paper_profile()
    lines.append(f"{load()} at end")
    print(lines[-1])
    if args.out:
        from schedlab import io

        io.atomic_write_text(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
