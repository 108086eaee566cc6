"""PolarisProfiler benchmark (prints figures; not a test).

Phases (``--phase``; each phase can run in its own process so that its peak RSS is its own):

``synth``   write a SYNTHETIC trace (upstream format) of ``--jobs`` jobs; with the default
            ``--size-bias-power 1`` the faithful join has about the real trace's rows per job, so
            ``--jobs real`` (1,055,501 jobs) gives a join near the real 36.7 M rows.
``ingest``  the fast path (archives -> Parquet with one decompression per archive; the faithful
            join *planned* from the key columns; Table I sample and Figure 5's unseen rows built
            from the plan), then today's path in a child process on the same Parquet (the
            materialised join, DuckDB out of core, and the same draws from it); prints wall, CPU,
            peak RSS (``ru_maxrss``, the child's separately), the load average, and whether both
            paths gave identical rows. ``--skip-today`` runs the fast path only.
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

import _report
from _report import peak_rss_gb, say


class Step:
    """Wall and process CPU time of a block."""

    def __enter__(self):
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w, time.process_time() - self.c

    def __str__(self):
        return f"wall {self.wall:.1f} s, CPU {self.cpu:.1f} s"


def phase_synth(work: Path, n_jobs: int, size_bias_power: float | None) -> None:
    from schedlab.polaris import synthetic

    from _synthetic_v1 import synthesize_v1

    # the size-bias correction belongs to the v1 generator; v2 (default) sizes workloads as Table I
    version = "v2" if size_bias_power is None else "v1"
    with Step() as s:
        if version == "v1":
            counts = synthesize_v1(
                work / "trace",
                n_jobs,
                np.random.default_rng(0),
                progress=False,
                size_bias_power=size_bias_power,
            )
        else:
            counts = synthetic.synthesize(work / "trace", n_jobs, np.random.default_rng(0), progress=False)
    say(
        f"synthesize {n_jobs:,} jobs (SYNTHETIC {version}"
        + ("" if size_bias_power is None else f", size_bias_power {size_bias_power:g}")
        + f"): {s}; peak RSS "
        f"{peak_rss_gb():.2f} GB; rows " + ", ".join(f"{k} {v:,}" for k, v in counts.items())
    )
    say(
        "  archive bytes: "
        + ", ".join(
            f"{p.name} {p.stat().st_size / 1e6:.0f} MB" for p in sorted((work / "trace").glob("pai_*.tar.gz"))
        )
    )


def load() -> str:
    """The 1/5/15-minute load averages (the machine is shared: figures mean little without them)."""
    return "load " + "/".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def children_peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2


def phase_ingest(
    work: Path,
    memory_limit: str,
    sample_total: int,
    *,
    today: bool = True,
    today_memory_limit: str = "4GB",
    unseen: int = 1000,
) -> None:
    """Fast path in this process: archives -> Parquet (one decompression each), join plan from
    the key columns, Table I sample and Figure 5's unseen rows built from the plan. Then, in a
    child process (its own peak RSS), today's path on the same Parquet: materialised faithful
    join, the same sample and unseen rows from it; both must give identical rows."""
    import pandas as pd

    from schedlab.polaris import ingest, pipeline

    say(f"  {load()} at start")
    with Step() as s1:
        pq = ingest.ingest_archives(work / "trace", work / "parquet", progress=False, force=True)
    say(
        f"ingest archives -> parquet (single pass per archive): {s1}; peak RSS {peak_rss_gb():.2f} GB; {load()}"
    )
    with Step() as s2:
        info = ingest.plan_join(
            pq,
            work / "plan_faithful.parquet",
            kind="faithful",
            memory_limit=memory_limit,
            threads=2,
            temp_directory=work / "duckdb_tmp",
            progress=False,
        )
    say(
        f"faithful join PLAN (counts from key columns): {info.rows:,} rows in {pd.read_parquet(info.path).shape[0]:,} "
        f"units; {s2} (DuckDB memory_limit {memory_limit}); peak RSS {peak_rss_gb():.2f} GB; {load()}"
    )
    say("  per workload: " + ", ".join(f"{k} {v:,}" for k, v in info.per_workload.items()))
    with Step() as s3:
        sample = pipeline.draw_sample(info.path, min(sample_total, info.rows), 0, keep_zero_strata=True)
        test = pipeline.unseen_jobs(info.path, sample, unseen, 0)
    sample.to_parquet(work / "sample.parquet")
    test.to_parquet(work / "unseen_fast.parquet")
    say(
        f"stratified sample {len(sample):,} rows + {len(test):,} unseen rows built from the plan: {s3}; "
        f"peak RSS {peak_rss_gb():.2f} GB; {load()}"
    )
    wall, cpu = s1.wall + s2.wall + s3.wall, s1.cpu + s2.cpu + s3.cpu
    say(
        f"TOTAL fast path (ingest + plan + sample + unseen): wall {wall:.1f} s, CPU {cpu:.1f} s; peak RSS "
        f"{peak_rss_gb():.2f} GB (target <= 600 s, <= 4 GB); {load()}"
    )
    if not today:
        return
    import subprocess
    import sys

    with Step() as s4:
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--phase",
                "today",
                "--workdir",
                str(work),
                "--sample",
                str(sample_total),
                "--memory-limit",
                today_memory_limit,
                "--jobs",
                "0",
                *(["--out", str(_report.OUT)] if _report.OUT else []),
            ],
            check=True,
        )
    say(
        f"TOTAL today's path after ingest (child process): wall {s4.wall:.1f} s; peak RSS "
        f"{children_peak_rss_gb():.2f} GB; {load()}"
    )
    same_sample = pd.read_parquet(work / "sample_today.parquet").equals(sample)
    same_test = pd.read_parquet(work / "unseen_today.parquet").equals(test)
    say(
        f"same seed, same rows: sample identical {same_sample}, unseen rows identical {same_test}; "
        f"fast path wall {wall:.1f} s vs today's ingest {s1.wall:.1f} s + join/sample {s4.wall:.1f} s"
    )


def phase_today(work: Path, memory_limit: str, sample_total: int, unseen: int = 1000) -> None:
    """Today's path on ``work/parquet``: the materialised faithful join, then sample and unseen rows."""
    from schedlab.polaris import ingest, pipeline

    pq = {p.stem: p for p in (work / "parquet").glob("*.parquet")}
    with Step() as s2:
        info = ingest.join(
            pq,
            work / "joined.parquet",
            kind="faithful",
            memory_limit=memory_limit,
            threads=2,
            temp_directory=work / "duckdb_tmp",
            progress=False,
        )
    say(
        f"today's materialised faithful join: {info.rows:,} rows; {s2} (DuckDB memory_limit {memory_limit}, "
        f"spill to {work / 'duckdb_tmp'}); peak RSS {peak_rss_gb():.2f} GB; {load()}"
    )
    with Step() as s3:
        sample = pipeline.draw_sample(info.path, min(sample_total, info.rows), 0, keep_zero_strata=True)
        test = pipeline.unseen_jobs(info.path, sample, unseen, 0)
    sample.to_parquet(work / "sample_today.parquet")
    test.to_parquet(work / "unseen_today.parquet")
    say(
        f"today's sample {len(sample):,} + unseen {len(test):,} from the joined table: {s3}; "
        f"peak RSS {peak_rss_gb():.2f} GB; {load()}"
    )
    (work / "joined.parquet").unlink(missing_ok=True)


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
                with (
                    LocalCluster(
                        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
                    ) as lc,
                    Client(lc) as client,
                ):
                    tab = grid.run_grid(X, cfgs, cache, scheduler=client, progress=False)
            else:
                tab = grid.run_grid(X, cfgs, cache, n_jobs=1 if name == "serial" else 2, progress=False)
        res[name], tabs[name] = s, tab
        say(
            f"HDBSCAN grid {name}: {len(cfgs)} configs on {len(X):,} rows (min_cluster_size {min_cluster_size}): "
            f"{s} (parent process CPU); 1-min load average after {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
            f"per config wall mean {tab.seconds.mean():.2f} s (min {tab.seconds.min():.2f}, max {tab.seconds.max():.2f}), "
            f"per config CPU mean {tab.cpu_seconds.mean():.2f} s (sum {tab.cpu_seconds.sum():.1f} s)"
        )
    for _, r in tabs["serial"].iterrows():
        say(
            f"  serial per config: {r['transform']:>15s} {r.metric:>9s}: wall {r.seconds:6.2f} s, CPU {r.cpu_seconds:6.2f} s, "
            f"{int(r.n_clusters)} clusters, {int(r.n_outliers)} outliers"
        )
    exact = ["algorithm", "transform", "metric", "min_cluster_size", "n_outliers", "n_clusters", "key"]
    floats = ["avg_silhouette", "davies_bouldin_score", "scores_v1", "scores_v3", "CCPM"]
    ref = tabs["serial"]
    labels_same = all(
        np.array_equal(
            grid.load_labels(work / "grid_cache_serial", k)[1],
            grid.load_labels(work / f"grid_cache_{n}", k)[1],
        )
        for n in ("loky-2", "dask-2")
        for k in ref.key
    )
    same = labels_same and all(tabs[n][exact].equals(ref[exact]) for n in ("loky-2", "dask-2"))
    say(
        "  (speed-up < 1 with per-config CPU unchanged means the 2 cores were busy with other jobs, not overhead)"
    )
    maxrel = max(
        float(
            np.nanmax(
                np.abs(tabs[n][floats].to_numpy() - ref[floats].to_numpy())
                / np.maximum(np.abs(ref[floats].to_numpy()), 1e-300)
            )
        )
        for n in ("loky-2", "dask-2")
    )
    say(
        f"parallel speed-up (2 workers): loky {res['serial'].wall / res['loky-2'].wall:.2f}x, "
        f"dask {res['serial'].wall / res['dask-2'].wall:.2f}x; labels and counts identical to serial: {same}; "
        f"max relative difference of float metrics {maxrel:.1e}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", default="all", choices=["all", "synth", "ingest", "today", "grid"])
    ap.add_argument("--jobs", default="small", help="job count or preset (ci, small, medium, real)")
    ap.add_argument("--sample", type=int, default=100_000)
    ap.add_argument("--memory-limit", default="2GB", help="DuckDB limit of the fast path (the notebook's)")
    ap.add_argument("--today-memory-limit", default="4GB", help="DuckDB limit of today's materialised join")
    ap.add_argument("--skip-today", action="store_true", help="only the fast path")
    ap.add_argument("--grid-rows", type=int, default=5_000)
    ap.add_argument("--min-cluster-size", type=int, default=100)
    ap.add_argument("--workdir", default=None)
    ap.add_argument(
        "--size-bias-power",
        type=float,
        default=None,
        help="use the v1 generator (_synthetic_v1.py) with this size_bias_resample exponent (the 21-Nov "
        "figures: 1, ~35 faithful-join rows per job); default: the v2 generator",
    )
    ap.add_argument("--out", default=None, help="also append the printed lines to this file")
    args = ap.parse_args()

    from schedlab.polaris import synthetic

    _report.OUT = Path(args.out) if args.out else None
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_polaris_"))
    work.mkdir(parents=True, exist_ok=True)
    n_jobs = int(args.jobs) if str(args.jobs).isdigit() else synthetic.SIZES[args.jobs]
    if args.phase == "today":  # child of the ingest phase: its header is the parent's
        phase_today(work, args.memory_limit, args.sample)
        return
    say(
        f"== bench_polaris phase={args.phase} jobs={n_jobs:,} workdir={work} ({time.strftime('%Y-%m-%d %H:%M:%S')}, "
        f"{platform.machine()}, {os.cpu_count()} cores, shared with other jobs) =="
    )
    if args.phase in ("all", "synth"):
        phase_synth(work, n_jobs, args.size_bias_power)
    if args.phase in ("all", "ingest"):
        phase_ingest(
            work,
            args.memory_limit,
            args.sample,
            today=not args.skip_today,
            today_memory_limit=args.today_memory_limit,
        )
    if args.phase in ("all", "grid"):
        phase_grid(work, args.grid_rows, args.min_cluster_size)


if __name__ == "__main__":
    main()
