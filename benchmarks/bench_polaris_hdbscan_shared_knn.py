"""Why the grid does not share HDBSCAN's nearest-neighbour query across ``min_cluster_size``
(prints figures; not a test).

At the paper's size most of an ``hdbscan.HDBSCAN(min_cluster_size=m, metric=metric)`` fit is the
library's query for the core distances (``k = m + 1``, dual tree). This script runs that query
once, at the largest ``k``, and hands each ``m`` a slice of it through a stand-in tree whose
``query`` returns the slice; the rest is the library's own code (``KDTreeBoruvkaAlgorithm``, the
single-linkage labelling, ``_tree_to_labels``). Beside it, each configuration runs as the grid
runs it. Printed per ``m``: CPU seconds both ways and whether the labels are equal (else the
adjusted Rand index between the two). The core distances are the same; the order of
equidistant neighbours in the slice is not the library's, and its first Boruvka round picks
candidate edges in that order, so the labels differ wherever a query of another ``k`` breaks
ties otherwise. docs/polaris.md cites the figures.

Usage::

    .venv/bin/python benchmarks/bench_polaris_hdbscan_shared_knn.py --features sample.npy \\
        --transform standard_scaler --metric euclidean --out benchmarks/results/polaris_hdbscan_shared_knn.txt
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


class SlicedQuery:
    """A k-d tree's data and a ``query`` that answers any ``k`` up to ``k_max`` from one query."""

    def __init__(self, X: np.ndarray, metric: str, k_max: int, leaf_size: int = 40):
        from sklearn.neighbors import KDTree

        tree = KDTree(X, metric=metric, leaf_size=leaf_size)  # as hdbscan's _hdbscan_boruvka_kdtree
        self.data = tree.data
        self.dist, self.ind = tree.query(X, k=k_max, dualtree=True, breadth_first=True)

    def query(self, X, k, dualtree=True, breadth_first=True):
        return self.dist[:, :k], self.ind[:, :k]


def shared_labels(shared: SlicedQuery, X: np.ndarray, m: int, metric: str) -> np.ndarray:
    """The library's HDBSCAN (``min_samples = min_cluster_size = m``, its defaults otherwise) on
    the sliced query."""
    from hdbscan._hdbscan_boruvka import KDTreeBoruvkaAlgorithm
    from hdbscan._hdbscan_linkage import label
    from hdbscan.hdbscan_ import _tree_to_labels

    alg = KDTreeBoruvkaAlgorithm(
        shared, m, metric=metric, leaf_size=40 // 3, approx_min_span_tree=True, n_jobs=1
    )
    mst = alg.spanning_tree()
    return _tree_to_labels(X, label(mst[np.argsort(mst.T[2]), :]), m)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--features", type=Path, help="an .npy of raw features (default: a stand-in's sample)")
    ap.add_argument("--jobs", type=int, default=60_000, help="stand-in jobs when no --features")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--transform", default="standard_scaler")
    ap.add_argument("--metric", default="euclidean")
    ap.add_argument("--min-cluster-sizes", type=int, nargs="+", default=[50, 100, 200, 300, 400, 600, 1000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    _report.OUT = args.out

    import hdbscan
    from sklearn.metrics import adjusted_rand_score

    Xt = scaled_rows(args.features, args.jobs, args.rows, args.seed, args.transform)
    say(
        f"# HDBSCAN with one shared neighbour query vs the library per m ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{platform.node()}, {os.cpu_count()} cores, {load()}): {len(Xt):,} rows, {args.transform}, {args.metric}"
    )
    c0 = time.process_time()
    shared = SlicedQuery(Xt, args.metric, max(args.min_cluster_sizes) + 1)
    total_shared, total_lib = time.process_time() - c0, 0.0
    say(f"  one query, k = {max(args.min_cluster_sizes) + 1}: {total_shared:.1f} CPU s")
    for m in args.min_cluster_sizes:
        c0 = time.process_time()
        ours = shared_labels(shared, Xt, m, args.metric)
        t_shared = time.process_time() - c0
        c0 = time.process_time()
        lib = hdbscan.HDBSCAN(min_cluster_size=m, metric=args.metric, core_dist_n_jobs=1).fit_predict(Xt)
        t_lib = time.process_time() - c0
        total_shared, total_lib = total_shared + t_shared, total_lib + t_lib
        same = "equal" if np.array_equal(ours, lib) else f"differ, ARI {adjusted_rand_score(lib, ours):.5f}"
        say(
            f"  m = {m:5d}: shared {t_shared:6.1f} CPU s, library {t_lib:6.1f} CPU s; labels {same} "
            f"({int(lib.max()) + 1} / {int(ours.max()) + 1} clusters); {load()}"
        )
    say(f"all m: shared {total_shared:.1f} CPU s (query included), library {total_lib:.1f} CPU s; {load()}")


if __name__ == "__main__":
    main()
