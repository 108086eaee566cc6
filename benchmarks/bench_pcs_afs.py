"""The Fig. 8 randomised-AFS run: compiled loop against the reference engine, side by side.

One seed of the ``pcs_fig8`` stage as it runs it (:func:`schedlab.pcs.sim.fig8_afs_run`:
3000 gavel jobs, load 1.2, 64 GPUs, predictions on), in one process: first the compiled
loop once to compile it (not timed), then the reference engine and the compiled loop each
once, timed. Prints both wall times, the ratio, the load average around each run, whether
every per-job column is identical (``DataFrame.equals``) and whether the policy's stream is
left in the same state.

Run: ``.venv/bin/python benchmarks/bench_pcs_afs.py [--seed 1954] [--out FILE]``
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from datetime import datetime, timezone

import numpy as np

import _report
from _report import say
from schedlab.pcs.generators import authors_rng, generate
from schedlab.pcs.policies import RandomisedAFS
from schedlab.pcs.sim import simulate, simulate_randomised_afs


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed_run(seed: int, fast: bool) -> tuple[float, object, tuple, str]:
    """One Fig. 8 run of ``seed``: (wall s, outputs, the stream's state after, load before)."""
    rng = authors_rng(seed)
    w = generate("gavel", 3000, rng, load=1.2, gpus=64)  # the stream continues below
    before = load()
    t0 = time.perf_counter()
    if fast:
        out = simulate_randomised_afs(w, RandomisedAFS(rng), 64, predict=True)
    else:
        out = simulate(w, RandomisedAFS(rng), 64, predict=True, engine="reference")
    return time.perf_counter() - t0, out, rng.get_state(), before


def same_state(a: tuple, b: tuple) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1954)
    ap.add_argument("--out", help="also append the lines to this file")
    args = ap.parse_args()
    _report.OUT = args.out
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    say(f"{now}; {platform.machine()}, {os.cpu_count()} cores; {load()} at start")
    say(
        f"Fig. 8 randomised AFS, seed {args.seed}: 3000 gavel jobs, load 1.2, 64 GPUs, "
        "every arrival predicted"
    )
    t0 = time.perf_counter()
    timed_run(args.seed, fast=True)  # compile (numba cache) outside the timings
    say(f"compiled loop, first call incl. compilation/cache load: {time.perf_counter() - t0:.1f} s")
    t_ref, ref, st_ref, load_ref = timed_run(args.seed, fast=False)
    t_fast, fast, st_fast, load_fast = timed_run(args.seed, fast=True)
    say(f"{'engine':10s} {'wall s':>8s}  load before the run")
    say(f"{'reference':10s} {t_ref:8.2f}  {load_ref}")
    say(f"{'compiled':10s} {t_fast:8.2f}  {load_fast}")
    say(
        f"ratio {t_ref / t_fast:.1f}x; identical per-job outputs: {ref.equals(fast)}; "
        f"same stream state afterwards: {same_state(st_ref, st_fast)}; {load()} at end"
    )


if __name__ == "__main__":
    main()
