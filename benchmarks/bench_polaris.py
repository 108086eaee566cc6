"""PolarisProfiler benchmark (prints figures; not a test).

Phases (``--phase``; each phase can run in its own process so that its peak RSS is its own):

``synth``   write a SYNTHETIC trace (upstream format) of ``--jobs`` jobs; with the default
            ``--size-bias-power 1`` the faithful join has about the real trace's rows per job, so
            ``--jobs real`` (1,055,501 jobs) gives a join near the real 36.7 M rows.
``ingest``  ingest the five archives (streamed to Parquet), the authors' faithful join (DuckDB,
            out of core: ``memory_limit``, spilling to ``temp_directory``) and Table I sampling;
            prints wall time, process CPU time (DuckDB threads run in-process, so they count) and
            peak RSS (``ru_maxrss``) per step.
``grid``    HDBSCAN grid (4 transforms x 2 metrics at one min cluster size) on ``--grid-rows``
            rows of the sample: time per configuration and total, serial vs parallel (loky, 2
            workers) vs a 2-worker ``dask.distributed`` LocalCluster through the same executor.
``all``     the three in one process.

``--out FILE`` appends every printed line to FILE as well (e.g.
``benchmarks/results/polaris_full_scale.txt``).

Usage::

    .venv/bin/python benchmarks/bench_polaris.py --jobs small                    # 30,000 jobs, all phases
    W=/tmp/bench_full
    .venv/bin/python benchmarks/bench_polaris.py --phase synth  --jobs real --workdir $W
    .venv/bin/python benchmarks/bench_polaris.py --phase ingest --jobs real --workdir $W
    .venv/bin/python benchmarks/bench_polaris.py --phase grid   --jobs real --workdir $W
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

_OUT: Path | None = None


def say(msg: str) -> None:
    print(msg, flush=True)
    if _OUT is not None:
        with open(_OUT, "a") as fh:
            fh.write(msg + "\n")


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


class Step:
    """Wall and process CPU time of a block."""

    def __enter__(self):
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w, time.process_time() - self.c

    def __str__(self):
        return f"wall {self.wall:.1f} s, CPU {self.cpu:.1f} s"


def phase_synth(work: Path, n_jobs: int, size_bias_power: float) -> None:
    from schedlab.polaris import synthetic

    with Step() as s:
        counts = synthetic.synthesize(work / "trace", n_jobs, np.random.default_rng(0), progress=False,
                                      size_bias_power=size_bias_power)
    say(f"synthesize {n_jobs:,} jobs (SYNTHETIC, size_bias_power {size_bias_power:g}): {s}; peak RSS "
        f"{peak_rss_gb():.2f} GB; rows " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    say(f"  archive bytes: " + ", ".join(f"{p.name} {p.stat().st_size / 1e6:.0f} MB"
                                        for p in sorted((work / "trace").glob("pai_*.tar.gz"))))


def phase_ingest(work: Path, memory_limit: str, sample_total: int) -> None:
    from schedlab.polaris import ingest, sampling

    with Step() as s1:
        pq = ingest.ingest_archives(work / "trace", work / "parquet", progress=False, force=True)
    say(f"ingest archives -> parquet: {s1}; peak RSS so far {peak_rss_gb():.2f} GB")
    with Step() as s2:
        info = ingest.join(pq, work / "joined.parquet", kind="faithful", memory_limit=memory_limit, threads=2,
                           temp_directory=work / "duckdb_tmp", progress=False)
    say(f"faithful join: {info.rows:,} rows; {s2} (DuckDB memory_limit {memory_limit}, spill to "
        f"{work / 'duckdb_tmp'}); peak RSS so far {peak_rss_gb():.2f} GB")
    say("  per workload: " + ", ".join(f"{k} {v:,}" for k, v in info.per_workload.items()))
    with Step() as s3:
        total = min(sample_total, info.rows)
        sample = sampling.stratified_sample(info.path, total, np.random.default_rng(0), on_zero="keep",
                                            memory_limit=memory_limit, temp_directory=work / "duckdb_tmp")
    sample.to_parquet(work / "sample.parquet")
    say(f"stratified sample (Table I rule, total {total:,}): {len(sample):,} rows; {s3}")
    wall, cpu = s1.wall + s2.wall + s3.wall, s1.cpu + s2.cpu + s3.cpu
    say(f"TOTAL ingest+join+sample: wall {wall:.1f} s, CPU {cpu:.1f} s; peak RSS {peak_rss_gb():.2f} GB "
        f"(target <= 8 GB)")


def phase_grid(work: Path, grid_rows: int, min_cluster_size: int) -> None:
    import pandas as pd
    from distributed import Client, LocalCluster

    from schedlab.polaris import grid
    from schedlab.polaris.schema import FEATURES

    sample = pd.read_parquet(work / "sample.parquet", columns=list(FEATURES))
    X = sample.astype(float).fillna(0).to_numpy()
    X = X[np.sort(np.random.default_rng(1).choice(len(X), size=min(grid_rows, len(X)), replace=False))]
    cfgs = grid.configs(algorithms=["hdbscan"], min_cluster_sizes=[min_cluster_size])
    res, tabs = {}, {}
    for name in ("serial", "loky-2", "dask-2"):
        cache = work / f"grid_cache_{name}"
        shutil.rmtree(cache, ignore_errors=True)
        with Step() as s:
            if name == "dask-2":
                with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
                        Client(lc) as client:
                    tab = grid.run_grid(X, cfgs, cache, scheduler=client, progress=False)
            else:
                tab = grid.run_grid(X, cfgs, cache, n_jobs=1 if name == "serial" else 2, progress=False)
        res[name], tabs[name] = s, tab
        say(f"HDBSCAN grid {name}: {len(cfgs)} configs on {len(X):,} rows (min_cluster_size {min_cluster_size}): "
            f"{s} (parent process CPU); 1-min load average after {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
            f"per config wall mean {tab.seconds.mean():.2f} s (min {tab.seconds.min():.2f}, max {tab.seconds.max():.2f}), "
            f"per config CPU mean {tab.cpu_seconds.mean():.2f} s (sum {tab.cpu_seconds.sum():.1f} s)")
    for _, r in tabs["serial"].iterrows():
        say(f"  serial per config: {r['transform']:>15s} {r.metric:>9s}: wall {r.seconds:6.2f} s, CPU {r.cpu_seconds:6.2f} s, "
            f"{int(r.n_clusters)} clusters, {int(r.n_outliers)} outliers")
    exact = ["algorithm", "transform", "metric", "min_cluster_size", "n_outliers", "n_clusters", "key"]
    floats = ["avg_silhouette", "davies_bouldin_score", "scores_v1", "scores_v3", "CCPM"]
    ref = tabs["serial"]
    labels_same = all(np.array_equal(grid.load_labels(work / "grid_cache_serial", k)[1],
                                     grid.load_labels(work / f"grid_cache_{n}", k)[1])
                      for n in ("loky-2", "dask-2") for k in ref.key)
    same = labels_same and all(tabs[n][exact].equals(ref[exact]) for n in ("loky-2", "dask-2"))
    say("  (speed-up < 1 with per-config CPU unchanged means the 2 cores were busy with other jobs, not overhead)")
    maxrel = max(float(np.nanmax(np.abs(tabs[n][floats].to_numpy() - ref[floats].to_numpy())
                                 / np.maximum(np.abs(ref[floats].to_numpy()), 1e-300)))
                 for n in ("loky-2", "dask-2"))
    say(f"parallel speed-up (2 workers): loky {res['serial'].wall / res['loky-2'].wall:.2f}x, "
        f"dask {res['serial'].wall / res['dask-2'].wall:.2f}x; labels and counts identical to serial: {same}; "
        f"max relative difference of float metrics {maxrel:.1e}")


def main() -> None:
    global _OUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", default="all", choices=["all", "synth", "ingest", "grid"])
    ap.add_argument("--jobs", default="small", help="job count or preset (ci, small, medium, real)")
    ap.add_argument("--sample", type=int, default=100_000)
    ap.add_argument("--memory-limit", default="4GB")
    ap.add_argument("--grid-rows", type=int, default=5_000)
    ap.add_argument("--min-cluster-size", type=int, default=100)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--size-bias-power", type=float, default=1.0,
                    help="synthetic.size_bias_resample exponent; 1 gives ~35 faithful-join rows per job as the "
                         "real trace (36.7 M at 1,055,501 jobs); 0 = the uncorrected calibration (~75 per job)")
    ap.add_argument("--out", default=None, help="also append the printed lines to this file")
    args = ap.parse_args()

    from schedlab.polaris import synthetic

    _OUT = Path(args.out) if args.out else None
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_polaris_"))
    work.mkdir(parents=True, exist_ok=True)
    n_jobs = int(args.jobs) if str(args.jobs).isdigit() else synthetic.SIZES[args.jobs]
    say(f"== bench_polaris phase={args.phase} jobs={n_jobs:,} workdir={work} ({time.strftime('%Y-%m-%d %H:%M:%S')}, "
        f"{platform.machine()}, {os.cpu_count()} cores, shared with other jobs) ==")
    if args.phase in ("all", "synth"):
        phase_synth(work, n_jobs, args.size_bias_power)
    if args.phase in ("all", "ingest"):
        phase_ingest(work, args.memory_limit, args.sample)
    if args.phase in ("all", "grid"):
        phase_grid(work, args.grid_rows, args.min_cluster_size)


if __name__ == "__main__":
    main()
