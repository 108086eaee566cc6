"""Realism of the synthetic PAI stand-in on real rows kept out of calibration, and its speed.

Prints, per generator version (``v2`` = today's default, ``v2-templates`` = the same with the
rows of missed jobs drawn per template rather than per template class, ``v1`` = the earlier
Gaussian copula)
and workload with >= 20 real rows: the classifier two-sample AUC (mean over folds, and its
fold-to-fold sd; ``auc_cat`` with the discrete columns) and the per-feature KS statistics / p-values of
:func:`schedlab.polaris.realism.realism_table`; then the time to write a synthetic trace of
``--speed-jobs`` jobs with rows per second, extrapolated to the real size (1,055,501 jobs).

    .venv/bin/python benchmarks/bench_polaris_realism.py --out benchmarks/results/polaris_realism.txt
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

_OUT: Path | None = None


def say(line: str = "") -> None:
    print(line, flush=True)
    if _OUT is not None:
        with open(_OUT, "a") as fh:
            fh.write(line + "\n")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def realism(k: int, seeds: list[int], versions: tuple[str, ...], v1_jobs: int) -> None:
    from schedlab.polaris.calibration import load_calibration_rows
    from schedlab.polaris.realism import realism_table, v2_rows
    from schedlab.polaris.schema import FEATURES

    from _synthetic_v1 import v1_rows

    known = {
        "v2": v2_rows,
        # rows of missed jobs with the templates themselves tilted, not only their classes
        "v2-templates": lambda train, wanted, rng: v2_rows(train, wanted, rng, draw="templates"),
        "v1": lambda train, wanted, rng: v1_rows(train, wanted, rng, n_jobs=v1_jobs),
    }
    unknown = sorted(set(versions) - set(known))
    if unknown:
        raise SystemExit(f"unknown generator versions {unknown}; known: {sorted(known)}")
    sources = {v: known[v] for v in versions}
    rows = load_calibration_rows()
    for seed in seeds:
        t0 = time.perf_counter()
        table = realism_table(rows, k, np.random.default_rng(seed), sources=sources)
        say(
            f"-- realism_table(rows, k={k}, rng=default_rng({seed}), versions={versions}): "
            f"{time.perf_counter() - t0:.0f} s wall, {load()}"
        )
        say(
            table[
                ["version", "workload", "n_real", "n_synth", "auc", "auc_sd", "auc_cat", "ks_max", "ks_fail"]
            ].to_string(index=False, float_format=lambda x: f"{x:.3f}")
        )
        if seed == seeds[0]:
            ks = table.set_index(["version", "workload"])
            long = pd.DataFrame(
                {f: [f"{s:.3f} ({p:.2g})" for s, p in zip(ks[f"ks_{f}"], ks[f"p_{f}"])] for f in FEATURES},
                index=ks.index,
            ).T
            say("KS statistic (p-value) per feature:")
            say(long.to_string())
        say()


def speed(n_jobs: int) -> None:
    from schedlab.polaris import synthetic
    from schedlab.polaris.schema import REAL_JOB_ROWS

    with tempfile.TemporaryDirectory(prefix="bench_realism_") as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        counts = synthetic.synthesize(tmp, n_jobs, np.random.default_rng(0), progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        size = sum(p.stat().st_size for p in Path(tmp).glob("pai_*.tar.gz")) / 1e6
    rows = sum(counts.values())
    say(
        f"-- synthesize({n_jobs:,} jobs, v2): {wall:.0f} s wall, {cpu:.0f} s CPU, {rows:,} rows "
        f"({rows / wall:,.0f} rows/s), archives {size:.0f} MB, {load()}"
    )
    say("   rows: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    f = REAL_JOB_ROWS / n_jobs
    say(
        f"   extrapolated to {REAL_JOB_ROWS:,} jobs (linear): ~{wall * f / 60:.0f} min wall, "
        f"~{rows * f / 1e6:.1f} M rows, ~{size * f / 1e3:.1f} GB of archives"
    )


def main() -> None:
    global _OUT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--versions", nargs="+", default=["v2", "v1"])
    ap.add_argument("--v1-jobs", type=int, default=30_000, help="jobs per fold for v1 (workloads not forced)")
    ap.add_argument("--speed-jobs", type=int, default=100_000, help="0 = skip the speed measurement")
    ap.add_argument("--out", default=None, help="also append the printed lines to this file")
    args = ap.parse_args()
    _OUT = Path(args.out) if args.out else None
    say(
        f"== bench_polaris_realism ({time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} cores, shared; "
        f"{load()}) =="
    )
    realism(args.k, args.seeds[:1], tuple(args.versions), args.v1_jobs)
    if len(args.seeds) > 1:
        realism(args.k, args.seeds[1:], ("v2",), args.v1_jobs)
    if args.speed_jobs:
        speed(args.speed_jobs)


if __name__ == "__main__":
    main()
