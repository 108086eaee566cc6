"""The grid's silhouettes, side by side: scikit-learn's ``silhouette_samples`` once per labelling
against :func:`schedlab.polaris.scoring.point_silhouettes_many` (one distance pass for all of
them), on the same data in one run, single-threaded as the grid runs (prints figures; not a test).

The labellings are HDBSCAN's on a transformed sample (default: standard-scaled blobs with
``--labellings`` ``min_cluster_size`` values, as one (transform, metric) task of the grid), so the
cluster counts are those a grid sees. Checks that every per-point value is equal to the last bit.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_polaris_silhouette.py --rows 20000 \\
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


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def data(rows: int, rng: np.random.Generator) -> np.ndarray:
    """Blobs of very different sizes in 17 dimensions (the grid's feature count), plus background."""
    sizes = np.maximum(rng.zipf(1.6, size=40), 5)
    sizes = (sizes / sizes.sum() * rows * 0.75).astype(int) + 1
    centers = rng.normal(scale=4.0, size=(sizes.size, 17))
    X = np.vstack([c + rng.normal(scale=0.5, size=(s, 17)) for c, s in zip(centers, sizes)])
    X = np.vstack([X, rng.normal(scale=4.0, size=(rows - len(X), 17))])
    return X[rng.permutation(len(X))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument(
        "--labellings",
        type=int,
        nargs="+",
        default=[50, 100, 200, 300, 400, 600, 1000],
        help="HDBSCAN min_cluster_size values (one labelling each)",
    )
    ap.add_argument("--metrics", nargs="+", default=["euclidean", "manhattan"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    _report.OUT = args.out

    import hdbscan
    from sklearn.metrics import silhouette_samples
    from threadpoolctl import threadpool_limits

    from schedlab.polaris import grid, scoring

    X = grid.transform(data(args.rows, np.random.default_rng(args.seed)), "standard_scaler")
    say(
        f"# grid silhouettes, scikit-learn per labelling vs one shared pass "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, {os.cpu_count()} cores, {load()})"
    )
    scoring.point_silhouettes_many(X[:50], [np.arange(50) % 2])  # compile outside the timings
    with threadpool_limits(limits=1):
        for metric in args.metrics:
            labs = [
                hdbscan.HDBSCAN(min_cluster_size=m, metric=metric).fit_predict(X) for m in args.labellings
            ]
            counts = [int(lab.max()) + 1 for lab in labs]
            t0 = time.perf_counter()
            ref = [silhouette_samples(X, lab, metric=metric) for lab in labs]
            t_ref = time.perf_counter() - t0
            t0 = time.perf_counter()
            many = scoring.point_silhouettes_many(X, labs, metric)
            t_many = time.perf_counter() - t0
            equal = all(np.array_equal(a, b) for a, b in zip(ref, many))
            say(
                f"{metric}: {args.rows:,} rows, {len(labs)} labellings ({min(counts)}-{max(counts)} clusters): "
                f"scikit-learn {t_ref:.1f} s, shared pass {t_many:.1f} s, ratio {t_ref / t_many:.1f}x; "
                f"every value equal: {equal}; {load()}"
            )


if __name__ == "__main__":
    main()
