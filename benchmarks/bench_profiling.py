"""PolarisProfiler benchmark (prints figures; not a test).

1. Ingest + faithful join + Table I sampling on a SYNTHETIC trace: wall time per step and peak
   RSS of the process (DuckDB runs in-process, so ru_maxrss covers it).
2. HDBSCAN grid (4 transforms x 2 metrics at one min cluster size) serial vs parallel
   (joblib, 2 workers): time per configuration and total.

Usage::

    .venv/bin/python benchmarks/bench_profiling.py --jobs medium        # 200,000 jobs
    .venv/bin/python benchmarks/bench_profiling.py --jobs real          # 1,055,501 jobs (real job count)
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="small", help="job count or preset (ci, small, medium, real)")
    ap.add_argument("--sample", type=int, default=100_000)
    ap.add_argument("--memory-limit", default="4GB")
    ap.add_argument("--grid-rows", type=int, default=5_000)
    ap.add_argument("--min-cluster-size", type=int, default=100)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--skip-trace", action="store_true")
    args = ap.parse_args()

    from schedlab.profiling import grid, ingest, sampling, synthetic
    from schedlab.profiling.schema import FEATURES

    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_profiling_"))
    print(f"workdir {work}")
    n_jobs = int(args.jobs) if str(args.jobs).isdigit() else synthetic.SIZES[args.jobs]
    if not args.skip_trace:
        t = time.perf_counter()
        counts = synthetic.synthesize(work / "trace", n_jobs, np.random.default_rng(0), progress=False)
        print(f"synthesize {n_jobs:,} jobs (SYNTHETIC): {time.perf_counter() - t:.1f} s; rows "
              + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    t = time.perf_counter()
    pq = ingest.ingest_archives(work / "trace", work / "parquet", progress=False, force=True)
    t_ingest = time.perf_counter() - t
    print(f"ingest archives -> parquet: {t_ingest:.1f} s, peak RSS so far {peak_rss_gb():.2f} GB")
    t = time.perf_counter()
    info = ingest.join(pq, work / "joined.parquet", kind="faithful", memory_limit=args.memory_limit, threads=2,
                       progress=False)
    t_join = time.perf_counter() - t
    print(f"faithful join: {info.rows:,} rows in {t_join:.1f} s (DuckDB memory_limit {args.memory_limit}), "
          f"peak RSS so far {peak_rss_gb():.2f} GB")
    t = time.perf_counter()
    total = min(args.sample, info.rows)
    sample = sampling.stratified_sample(info.path, total, np.random.default_rng(0), on_zero="keep")
    t_sample = time.perf_counter() - t
    print(f"stratified sample {len(sample):,} rows: {t_sample:.1f} s")
    print(f"TOTAL ingest+join+sample: {t_ingest + t_join + t_sample:.1f} s; peak RSS {peak_rss_gb():.2f} GB")

    X = sample[list(FEATURES)].astype(float).fillna(0).to_numpy()
    X = X[np.random.default_rng(1).choice(len(X), size=min(args.grid_rows, len(X)), replace=False)]
    cfgs = grid.configs(algorithms=["hdbscan"], min_cluster_sizes=[args.min_cluster_size])
    res = {}
    for n in (1, 2):
        cache = work / f"grid_cache_{n}"
        shutil.rmtree(cache, ignore_errors=True)
        t = time.perf_counter()
        tab = grid.run_grid(X, cfgs, cache, n_jobs=n, progress=False)
        res[n] = time.perf_counter() - t
        print(f"HDBSCAN grid, {len(cfgs)} configs on {len(X):,} rows, n_jobs={n}: total {res[n]:.1f} s, "
              f"per config mean {tab.seconds.mean():.2f} s (min {tab.seconds.min():.2f}, max {tab.seconds.max():.2f})")
    print(f"parallel speed-up (2 workers): {res[1] / res[2]:.2f}x")


if __name__ == "__main__":
    main()
