"""The grid's OPTICS, side by side: scikit-learn's ``OPTICS(min_samples=m, metric=metric)`` against
:func:`schedlab.polaris.optics.optics_labels` on the same rows in one run, single-threaded as the
grid runs them, in interleaved runs (prints figures; not a test). For manhattan also
``optics_labels(..., compiled=False)``: scikit-learn's steps in NumPy, what the compiled pass replaced.

The rows are a subsample of the stand-in's Table I sample (the 17 features, min-max scaled, as one
of the grid's transforms), the size the paper profile gives OPTICS (``optics_subsample``: 20,000).
The sample comes from ``--features`` (an ``.npy`` of raw features) or from a stand-in of
``--jobs`` jobs written to a temporary folder. Every pair is checked for equal labels.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_polaris_optics.py --rows 20000 \\
        --out benchmarks/results/polaris_optics.txt
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

import _report
from _report import say


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def stand_in_features(jobs: int, rows: int, seed: int) -> np.ndarray:
    from schedlab.polaris import pipeline
    from schedlab.polaris.schema import FEATURES

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        tdir = pipeline.trace_folder("", work, jobs, seed)
        info = pipeline.ingest_and_join(tdir, work, "faithful", "2GB")
        sample = pipeline.draw_sample(info.path, rows, seed, keep_zero_strata=True)
    return sample[list(FEATURES)].to_numpy(float)


def scaled_rows(features: Path | None, jobs: int, rows: int, seed: int, transform: str) -> np.ndarray:
    """``rows`` rows (a seeded uniform subsample) of the raw features in ``features`` (an ``.npy``)
    or of a ``jobs``-job stand-in's Table I sample, transformed as the grid does."""
    from schedlab.polaris import grid

    raw = np.load(features) if features else stand_in_features(jobs, rows, seed)
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(raw), size=min(rows, len(raw)), replace=False))
    return grid.transform(raw[idx], transform)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--features", type=Path, help="an .npy of raw features (default: a stand-in's sample)")
    ap.add_argument("--jobs", type=int, default=40_000, help="stand-in jobs when no --features")
    ap.add_argument("--min-samples", type=int, nargs="+", default=[50, 300, 1000])
    ap.add_argument("--metrics", nargs="+", default=["euclidean", "manhattan"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    _report.OUT = args.out

    from sklearn.cluster import OPTICS
    from threadpoolctl import threadpool_limits

    from schedlab.polaris.optics import optics_labels

    Xt = scaled_rows(args.features, args.jobs, args.rows, args.seed, "minmax_scaler")
    say(
        f"# OPTICS side by side ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
        f"{os.cpu_count()} cores, {load()}): {len(Xt):,} rows x {Xt.shape[1]} features "
        f"({'--features ' + str(args.features) if args.features else f'a {args.jobs:,}-job stand-in sample'}), "
        "min-max scaled, one thread"
    )
    ratios, compiled_ratios = [], []
    with threadpool_limits(limits=1):
        for k, (metric, m) in enumerate((mt, m) for mt in args.metrics for m in args.min_samples):
            runs = {
                "scikit-learn": lambda: OPTICS(min_samples=m, metric=metric, n_jobs=1).fit_predict(Xt),
                "schedlab": lambda: optics_labels(Xt, m, metric),
            }
            if metric == "manhattan":  # the compiled pass against scikit-learn's steps in NumPy
                runs["numpy steps"] = lambda: optics_labels(Xt, m, metric, compiled=False)
            names = list(runs) if k % 2 == 0 else list(reversed(runs))  # alternate who goes first
            results = {name: timed(runs[name]) for name in names}
            (sk, t_sk), (ours, t_ours) = results["scikit-learn"], results["schedlab"]
            for name, (labels, _) in results.items():
                if not np.array_equal(sk, labels):
                    raise SystemExit(f"labels differ for {metric}, min_samples={m}: {name}")
            ratios.append(t_sk / t_ours)
            line = (
                f"  {metric:9s} min_samples={m:5d}: scikit-learn {t_sk:6.1f} s, schedlab {t_ours:6.1f} s, "
                f"{t_sk / t_ours:.2f}x"
            )
            if "numpy steps" in results:
                t_np = results["numpy steps"][1]
                compiled_ratios.append(t_np / t_ours)
                line += f"; numpy steps {t_np:6.1f} s (compiled {t_np / t_ours:.2f}x faster)"
            say(f"{line}; labels equal ({ours.max() + 1} clusters); {load()}")
    say(
        f"speed-up over scikit-learn {min(ratios):.2f}x to {max(ratios):.2f}x over {len(ratios)} pairs; {load()}"
    )
    if compiled_ratios:
        say(
            f"compiled manhattan over numpy steps {min(compiled_ratios):.2f}x to {max(compiled_ratios):.2f}x "
            f"over {len(compiled_ratios)} pairs"
        )


if __name__ == "__main__":
    main()
