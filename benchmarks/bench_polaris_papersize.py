"""Profiles found at the paper's size: the pipeline's chosen configuration on 100,000 sampled rows
of a full-size stand-in with the authors' 26 profiles planted (prints figures; not a test).

Steps (one process, ``nice -n 5`` recommended on a shared machine):

1. ``synthetic.synthesize(..., planted="authors")``: a SYNTHETIC v2 trace of ``--jobs`` jobs
   (default ``real`` = 1,055,501) with the planted profiles' labels beside it (skipped when the
   work folder already holds it);
2. the pipeline's fast ingest (archives -> Parquet, faithful join *planned*) and Table I's sample
   of ``--sample`` rows drawn as the pipeline draws it (``pipeline.draw_sample``, seed ``--seed``),
   the planted label attached to every row (``planted.attach_planted``);
3. the one configuration the pipeline chose (``--config transform,metric,min_cluster_size``, or
   read from ``--summary``, the pipeline's ``pipeline_summary.json``): transform + HDBSCAN, as
   ``grid.cluster`` (no silhouette: O(n^2) at this size and not needed for the counts);
4. profiles found vs the paper's 26, noise share (paper: 24,603 of 100,001), adjusted Rand index vs
   the planted profiles (``scoring.planted_recovery``), wall / CPU time per step, peak RSS
   (``ru_maxrss``) and the load average after each step.

``--out FILE`` writes every printed line to FILE as well (``benchmarks/results/polaris_papersize.txt``).

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_polaris_papersize.py --workdir /tmp/papersize \\
        --config robust_scaler,euclidean,200 --out benchmarks/results/polaris_papersize.txt
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

import _report
from _report import peak_rss_gb, say

PAPER_PROFILES = 26
PAPER_NOISE = 24_603 / 100_001  # the authors' outliers (their evaluation notebook, cell 84)


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


class Step:
    """Wall and process CPU time of a block, printed with peak RSS and load when it ends."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w, time.process_time() - self.c
        if exc[0] is None:
            say(
                f"  {self.name}: wall {self.wall:.1f} s, CPU {self.cpu:.1f} s, "
                f"peak RSS {peak_rss_gb():.2f} GB, {load()}"
            )


def chosen_config(arg: str | None, summary: Path | None):
    from schedlab.polaris import grid

    if arg:
        parts = arg.split(",")
        if len(parts) != 3:
            raise SystemExit(f"--config needs transform,metric,min_cluster_size, got {arg!r}")
        return grid.Config("hdbscan", parts[0], parts[1], int(parts[2])), f"--config {arg}"
    if summary is None or not summary.is_file():
        raise SystemExit(
            f"no --config and no pipeline summary at {summary}: run the pipeline or give --config"
        )
    best = json.loads(summary.read_text())["best_hdbscan"]
    return (
        grid.Config("hdbscan", best["transform"], best["metric"], int(best["min_cluster_size"])),
        f"best HDBSCAN run of {summary}",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/polaris_papersize"))
    ap.add_argument(
        "--jobs", default="real", help="synthetic jobs: a count or a preset (default real = 1,055,501)"
    )
    ap.add_argument(
        "--sample", type=int, default=100_000, help="Table I's target sample size (paper: 100,000)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config", help="transform,metric,min_cluster_size of the HDBSCAN run")
    ap.add_argument("--summary", type=Path, default=Path("results/polaris/pipeline_summary.json"))
    ap.add_argument("--memory-limit", default="4GB")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    _report.OUT = args.out

    from schedlab.polaris import grid, pipeline, planted, scoring, synthetic
    from schedlab.polaris.schema import FEATURES

    n_jobs = synthetic.SIZES.get(args.jobs) or int(args.jobs)
    cfg, source = chosen_config(args.config, args.summary)
    say(
        f"# PolarisProfiler at paper size, SYNTHETIC stand-in v2 with the authors' 26 profiles planted "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, {os.cpu_count()} cores, {load()})"
    )
    say(
        f"configuration: {cfg.algorithm} {cfg.transform} {cfg.metric} "
        f"min_cluster_size={cfg.min_cluster_size} ({source})"
    )
    work = args.workdir
    tdir = work / "trace"
    total = Step("all steps")
    total.__enter__()
    if not ((tdir / "pai_task_table.tar.gz").is_file() and (tdir / planted.PLANTED_LABELS).is_file()):
        with Step(f"synthesize {n_jobs:,} jobs (planted='authors', seed [{args.seed}, 1])"):
            synthetic.synthesize(
                tdir, n_jobs, np.random.default_rng([args.seed, 1]), planted="authors", progress=False
            )
    else:
        say(f"  synthesize: reusing {tdir}")
    with Step("ingest + faithful join plan (fast path)"):
        info = pipeline.ingest_and_join(tdir, work, "faithful", args.memory_limit, materialize=False)
    say(f"  faithful join: {info.rows:,} rows")
    with Step(f"Table I sample ({args.sample:,} rows asked) + planted labels"):
        sample = pipeline.draw_sample(info.path, args.sample, args.seed, keep_zero_strata=True)
        sample = planted.attach_planted(sample, tdir)
    X = sample[list(FEATURES)].to_numpy(float)
    with Step(
        f"{cfg.transform} + HDBSCAN(min_cluster_size={cfg.min_cluster_size}, metric={cfg.metric}) "
        f"on {len(X):,} rows"
    ):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            labels = grid.cluster(grid.transform(X, cfg.transform), cfg)
    total.__exit__(None, None, None)
    rec = scoring.planted_recovery(labels, sample["planted"].to_numpy())
    say(
        f"profiles found {rec['found_profiles']} vs the paper's {PAPER_PROFILES}; planted profiles in the sample "
        f"{rec['planted_profiles']} (the authors' 26 + the paper's top job as its own, label 26)"
    )
    say(
        f"noise share {rec['found_noise_share']:.3f} (paper {PAPER_NOISE:.3f}); planted background share "
        f"{rec['planted_noise_share']:.3f}; planted-profile rows called noise "
        f"{rec['planted_rows_found_noise_share']:.3f}"
    )
    say(
        f"adjusted Rand index vs planted: {rec['ari']:.3f} (all rows, noise as a group), "
        f"{rec['ari_non_noise']:.3f} (the {rec['rows_non_noise']:,} rows clustered and planted)"
    )
    say(
        f"sample rows {rec['rows']:,}; wall {total.wall:.1f} s, CPU {total.cpu:.1f} s, "
        f"peak RSS {peak_rss_gb():.2f} GB, {load()}"
    )


if __name__ == "__main__":
    main()
