"""The grid's shared silhouette pass with its per-cluster sums one row at a time (before) and four
rows at a time (now), side by side in one run, single-threaded as the grid runs it, in interleaved
pairs (prints figures; not a test).

One (transform, metric) task of the grid: ``scoring.point_silhouettes_many`` over the HDBSCAN
labellings of ``--min-cluster-sizes`` on ``--rows`` rows of the stand-in's Table I sample (from
``--features``, an ``.npy`` of raw features, or a stand-in of ``--jobs`` jobs). The two kernels
are :func:`schedlab.polaris._silhouette.cluster_distance_sums_rowwise` and
:func:`~schedlab.polaris._silhouette.cluster_distance_sums`; every pair is checked for equal
per-point silhouettes.

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
    ap.add_argument("--pairs", type=int, default=2, help="interleaved before/now pairs per metric")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    _report.OUT = args.out

    from threadpoolctl import threadpool_limits

    from schedlab.polaris import _silhouette, grid, scoring

    Xt = scaled_rows(args.features, args.jobs, args.rows, args.seed, args.transform)
    kernels = {
        "before (one row at a time)": _silhouette.cluster_distance_sums_rowwise,
        "now (four rows at a time)": _silhouette.cluster_distance_sums,
    }
    say(
        f"# shared silhouette pass, per-cluster sums before/now ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{platform.node()}, {os.cpu_count()} cores, {load()}): {len(Xt):,} rows, {args.transform}, "
        f"{len(args.min_cluster_sizes)} HDBSCAN labellings, one thread"
    )
    ratios = []
    with threadpool_limits(limits=1):
        for metric in args.metrics:
            labels = [
                grid.cluster(Xt, grid.Config("hdbscan", args.transform, metric, m))
                for m in args.min_cluster_sizes
            ]
            clusters = [int(lab.max()) + 1 for lab in labels]
            for pair in range(args.pairs):
                order = list(kernels) if pair % 2 == 0 else list(kernels)[::-1]
                times, outs = {}, {}
                for name in order:
                    _silhouette.cluster_distance_sums = kernels[name]  # what point_silhouettes_many calls
                    try:
                        t0 = time.perf_counter()
                        outs[name] = scoring.point_silhouettes_many(Xt, labels, metric)
                        times[name] = time.perf_counter() - t0
                    finally:
                        _silhouette.cluster_distance_sums = kernels["now (four rows at a time)"]
                before, now = kernels
                if not np.array_equal(outs[before], outs[now]):
                    raise SystemExit(f"silhouettes differ for {metric}")
                ratios.append(times[before] / times[now])
                say(
                    f"  {metric:9s} pair {pair + 1}: before {times[before]:6.1f} s, now {times[now]:6.1f} s, "
                    f"{ratios[-1]:.2f}x; equal; clusters {clusters}; {load()}"
                )
    say(f"whole pass (distances included) {min(ratios):.2f}x to {max(ratios):.2f}x faster; {load()}")


if __name__ == "__main__":
    main()
