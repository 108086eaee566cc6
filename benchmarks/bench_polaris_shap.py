"""PolarisProfiler SHAP at the paper profile's size: shap.TreeExplainer, XGBoost's
``pred_contribs`` on the full booster, and ``mean_abs_shap(method="xgboost")`` (``pred_contribs``
on the booster cut to the features its trees split on), side by side on the same rows.

It rebuilds the paper profile's classifier from a finished paper-profile run's cache (trace,
join, Table I sample and grid, as ``notebooks/polaris/pipeline.py`` does; training takes ~8 min
on 2 cores), then times the three methods on the first ``--rows`` validation rows and prints the
largest difference of each against shap's, whether the top 20 agree, and the ``xgboost`` method
on 10,000 rows (the paper profile's ``shap_sample``) and on all validation rows.

Run: ``python benchmarks/bench_polaris_shap.py --root DIR [--rows 1000] [--out FILE]``, where
``DIR`` is the ``--output-root`` of ``schedlab notebook run polaris/pipeline --profile paper``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import _report
from _report import say


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def paper_classifier(root: str, seed: int = 0):
    """The paper profile's profile classifier and validation rows, from ``root``'s cache."""
    from schedlab.polaris import grid, pipeline
    from schedlab.polaris.schema import FEATURES

    work = pipeline.work_dir(root, "", "real", seed)
    tdir = pipeline.trace_folder("", work, "real", seed)
    info = pipeline.ingest_and_join(tdir, work, "faithful", "2GB")
    sample = pipeline.draw_sample(info.path, 100000, seed, keep_zero_strata=True)
    X = sample[list(FEATURES)].to_numpy(float)
    cfgs = grid.configs(
        algorithms=["hdbscan", "optics"],
        transforms=["standard_scaler", "minmax_scaler", "robust_scaler", "yeo-johnson"],
        metrics=["euclidean", "manhattan"],
        min_cluster_sizes=[50, 100, 200, 300, 400, 600, 1000],
    )
    table = grid.run_grid(
        X,
        cfgs,
        work / "grid_cache",
        n_jobs=2,
        scheduler=None,
        seed=seed,
        silhouette_sample=None,
        optics_subsample=20000,
        progress=False,
    )
    df, _ = pipeline.attach_profiles(sample, table, work / "grid_cache", algorithm="hdbscan")
    df["profile"] = df["profile"].astype(int)
    clf, _, val = pipeline.train_and_report(df, n_jobs=2)
    return clf, val


def main() -> None:
    from schedlab.polaris import explain

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="output root of a paper-profile pipeline run")
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--chunk", type=int, default=250)
    ap.add_argument("--out", help="also append the printed lines to this file")
    args = ap.parse_args()
    _report.OUT = Path(args.out) if args.out else None
    say(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores; {load()}")
    t0 = time.perf_counter()
    clf, val = paper_classifier(args.root)
    part = val.iloc[: args.rows]
    _, used = explain._split_feature_booster(clf.model_.get_booster())
    say(
        f"classifier rebuilt in {time.perf_counter() - t0:.0f} s: {len(val)} validation rows, "
        f"{len(clf.feature_names_)} one-hot columns, {len(used)} split features, {len(clf.classes_)} profiles"
    )
    res = {}
    for name, fn in [
        ("xgboost, split features", lambda: explain.mean_abs_shap(clf, part, args.chunk, method="xgboost")),
        ("xgboost, full booster", lambda: clf.shap_mean_abs(part, chunk_size=args.chunk)),
        ("shap.TreeExplainer", lambda: explain.mean_abs_shap(clf, part, args.chunk)),
    ]:
        t0 = time.perf_counter()
        res[name] = fn().to_numpy(np.float64)
        say(f"{name:26s} {args.rows} rows: {time.perf_counter() - t0:8.1f} s  ({load()})")
    ref = res["shap.TreeExplainer"]
    top = lambda a: list(np.argsort(-a.sum(axis=1), kind="stable")[:20])  # noqa: E731
    for name, v in res.items():
        say(
            f"{name:26s} max |diff| vs shap {np.abs(v - ref).max():.3g} (largest value {ref.max():.3g}); "
            f"top 20 in the same order: {top(v) == top(ref)}"
        )
    for n in (10000, len(val)):
        t0 = time.perf_counter()
        explain.mean_abs_shap(clf, val.iloc[:n], chunk_size=1000, method="xgboost")
        say(f"xgboost, split features on {n} rows: {time.perf_counter() - t0:.1f} s  ({load()})")


if __name__ == "__main__":
    main()
