"""PCS explorer refresh time: one slider move = one WFQ simulation with predictions + one redraw.

``notebooks/explore/pcs.ipynb`` answers a slider move by simulating the chosen WFQ configuration
on the first 300 jobs of trace 0e4a51 (64 GPUs, predictor on) and redrawing the trade-off plot
(`Explorer.png`: one PNG render, as the widget shows it). This prints, for a seeded series of random
configurations (1-4 classes, log-uniform thresholds, uniform weights), the simulation time, the
redraw time and their sum (median and max, after one warm-up move), the one-off load time
(trace + reference policies), and the machine load (`os.getloadavg`), since the machine may be
shared.

Run: ``.venv/bin/python benchmarks/bench_pcs_explore.py [--moves 20] [--seed 0]``
"""

from __future__ import annotations

import argparse
import os
import time

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

from schedlab.pcs import explore  # noqa: E402


def random_move(rng: np.random.Generator) -> tuple[list[float], list[float], float, float]:
    """Slider values a reader could set: thresholds log-uniform in 10^2-10^6.5 GPU-s, weights in [0.05, 1]."""
    k = int(rng.integers(1, 5))
    thresholds = sorted(set(np.round(10 ** rng.uniform(2, 6.5, size=k - 1), 0).tolist()))
    weights = rng.uniform(0.05, 1.0, size=len(thresholds) + 1).tolist()
    return thresholds, weights, float(rng.uniform(0.0, 0.9)), float(rng.uniform(0.05, 0.9))


def redraw(e: explore.Explorer) -> float:
    """Seconds to draw and render the plot as the notebook's widget does (``Explorer.png``)."""
    t = time.perf_counter()
    e.png()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"load average (1, 5, 15 min) before: {os.getloadavg()}, {os.cpu_count()} cores")
    t = time.perf_counter()
    e = explore.Explorer.load()
    print(
        f"load: trace {explore.TRACE} first {len(e.workload)} jobs + {len(e.references)} reference policies: "
        f"{time.perf_counter() - t:.2f} s; front: {e.front_note}"
    )
    rng = np.random.default_rng(args.seed)
    e.update(*random_move(rng))  # warm-up: first WFQ run in this process
    redraw(e)
    sims, draws = [], []
    for _ in range(args.moves):
        p = e.update(*random_move(rng))
        sims.append(p.seconds)
        draws.append(redraw(e))
    sims, draws = np.array(sims), np.array(draws)
    total = sims + draws
    for name, v in [("simulation", sims), ("redraw", draws), ("refresh (sum)", total)]:
        print(
            f"{name:>14}: median {np.median(v) * 1000:6.0f} ms, max {v.max() * 1000:6.0f} ms over {len(v)} moves"
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
