"""Contraction time of every shipped PipeDream profile.

Prints, per profile, parse time and contraction time (best of N repeats) for the paper's
round schedule and for the sequential one, and the total. Run: `make bench` or
`python benchmarks/bench_contraction.py [--repeats N]`.
"""

from __future__ import annotations

import argparse
import time

from schedlab import data
from schedlab.nona.contraction import contract
from schedlab.nona.graphs import read_graph


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    files = [e for e in data.select(["nona"]) if e.name.endswith(".txt") and "/graph" in e.name]
    print(f"{'profile':32s} {'tasks':>6s} {'post':>5s} {'parse ms':>9s} {'rounds ms':>10s} {'seq ms':>8s}")
    totals = [0.0, 0.0, 0.0]
    for e in files:
        path = data.require(e.name)
        g = read_graph(path)
        times = [
            best_of(lambda: read_graph(path), args.repeats),
            best_of(lambda: contract(g, "rounds"), args.repeats),
            best_of(lambda: contract(g, "sequential"), args.repeats),
        ]
        totals = [a + b for a, b in zip(totals, times)]
        print(
            f"{e.name:32s} {g.number_of_nodes():6d} {contract(g).number_of_nodes():5d} "
            + " ".join(f"{t * 1e3:{w}.2f}" for t, w in zip(times, (9, 10, 8)))
        )
    print(
        f"{'total':32s} {'':6s} {'':5s} " + " ".join(f"{t * 1e3:{w}.2f}" for t, w in zip(totals, (9, 10, 8)))
    )
    print(f"contraction of all {len(files)} profiles: {totals[1] * 1e3:.1f} ms (target: far below 1 s)")


if __name__ == "__main__":
    main()
