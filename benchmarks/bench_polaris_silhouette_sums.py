"""The grid's shared silhouette pass three ways, side by side in one run, single-threaded as the
grid runs it, in interleaved rounds (prints figures; not a test).

One (transform, metric) task of the grid: ``scoring.point_silhouettes_many`` over the HDBSCAN
labellings of ``--min-cluster-sizes`` on ``--rows`` rows of the stand-in's Table I sample (from
``--features``, an ``.npy`` of raw features, or a stand-in of ``--jobs`` jobs). The three ways:
scikit-learn's distance chunks summed one row at a time
(:func:`schedlab.polaris._silhouette.cluster_distance_sums_rowwise`) and four rows at a time
(:func:`~schedlab.polaris._silhouette.cluster_distance_sums`), and the fused pass that computes
the distances inside the sums (:func:`~schedlab.polaris._silhouette.euclidean_cluster_sums`,
:func:`~schedlab.polaris._silhouette.manhattan_cluster_sums`; the default). Every round checks
that all three give the same per-point silhouettes, bit for bit.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_polaris_silhouette_sums.py --rows 33333 \\
        --out benchmarks/results/polaris_silhouette.txt
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

import _report
from _report import say
from bench_polaris_optics import load, scaled_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=33_333)
    ap.add_argument("--features", type=Path, help="an .npy of raw features (default: a stand-in's sample)")
    ap.add_argument("--jobs", type=int, default=60_000, help="stand-in jobs when no --features")
    ap.add_argument("--transform", default="minmax_scaler")
    ap.add_argument("--metrics", nargs="+", default=["euclidean", "manhattan"])
    ap.add_argument("--min-cluster-sizes", type=int, nargs="+", default=[50, 100, 200, 300, 400, 600, 1000])
    ap.add_argument("--pairs", type=int, default=2, help="interleaved rounds of the three ways per metric")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    _report.OUT = args.out

    from threadpoolctl import threadpool_limits

    from schedlab.polaris import _silhouette, grid, scoring

    Xt = scaled_rows(args.features, args.jobs, args.rows, args.seed, args.transform)
    ways = ["chunks, one row at a time", "chunks, four rows at a time", "fused (now)"]
    say(
        f"# shared silhouette pass, three ways ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{platform.node()}, {os.cpu_count()} cores, {load()}): {len(Xt):,} rows, {args.transform}, "
        f"{len(args.min_cluster_sizes)} HDBSCAN labellings, one thread"
    )
    ratios: dict[str, list[float]] = {w: [] for w in ways[:2]}
    with threadpool_limits(limits=1):
        for metric in args.metrics:
            labels = [
                grid.cluster(Xt, grid.Config("hdbscan", args.transform, metric, m))
                for m in args.min_cluster_sizes
            ]
            clusters = [int(lab.max()) + 1 for lab in labels]
            scoring.point_silhouettes_many(Xt[:50], [lab[:50] % 2 for lab in labels[:1]], metric)  # compile
            for pair in range(args.pairs):
                times, outs = {}, {}
                for way in ways if pair % 2 == 0 else ways[::-1]:
                    t0 = time.perf_counter()
                    outs[way] = _run(way, Xt, labels, metric, _silhouette, scoring)
                    times[way] = time.perf_counter() - t0
                if not all(np.array_equal(outs[w], outs[ways[-1]]) for w in ways[:2]):
                    raise SystemExit(f"silhouettes differ for {metric}")
                for w in ways[:2]:
                    ratios[w].append(times[w] / times[ways[-1]])
                say(
                    f"  {metric:9s} round {pair + 1}: "
                    + ", ".join(f"{w} {times[w]:6.1f} s" for w in ways)
                    + f"; equal; clusters {clusters}; {load()}"
                )
    for w in ways[:2]:
        say(f"fused pass against {w}: {min(ratios[w]):.2f}x to {max(ratios[w]):.2f}x faster; {load()}")


def _run(way: str, Xt, labels, metric, _silhouette, scoring):
    """One way of the pass: the fused default, or scikit-learn's chunks with one of the two sums."""
    if way.startswith("fused"):
        return scoring.point_silhouettes_many(Xt, labels, metric)
    kernel = _silhouette.cluster_distance_sums
    fused = scoring.FUSED_METRICS
    try:
        scoring.FUSED_METRICS = ()
        if "one row" in way:
            _silhouette.cluster_distance_sums = _silhouette.cluster_distance_sums_rowwise
        return scoring.point_silhouettes_many(Xt, labels, metric)
    finally:
        _silhouette.cluster_distance_sums, scoring.FUSED_METRICS = kernel, fused


if __name__ == "__main__":
    main()
