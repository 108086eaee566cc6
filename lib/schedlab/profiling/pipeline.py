"""Glue shared by the CLI and the notebooks: profiles from a grid run, classifier training and
the duration test.

Examples
--------
>>> df = attach_profiles(sample, grid_table, cache_dir)        # doctest: +SKIP
>>> clf, rep, test = train_and_report(df)                       # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.profiling import classifier, duration, grid


def attach_profiles(sample: pd.DataFrame, table: pd.DataFrame, cache_dir: str | Path, *,
                    algorithm: str = "hdbscan", config: dict | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """Add a ``profile`` column (labels of the best-ACQUIRES run of ``algorithm``, or of the run
    matching ``config``: transform/metric/min_cluster_size). Rows outside a subsample get NaN."""
    if config:
        sub = table[(table.algorithm == algorithm) & (table["transform"] == config["transform"])
                    & (table.metric == config["metric"]) & (table.min_cluster_size == int(config["min_cluster_size"]))]
        if sub.empty:
            raise ValueError(f"no grid run matches {config}")
        run = sub.iloc[0]
    else:
        run = grid.best(table, algorithm)
    idx, labels = grid.load_labels(cache_dir, run.key)
    prof = np.full(len(sample), np.nan)
    prof[idx] = labels
    return sample.assign(profile=prof), run


def train_and_report(df: pd.DataFrame, *, random_state: int = 5, n_jobs: int = 1):
    """Train on the clustered rows (outliers left out, as the paper), 80/20 split with
    ``random_state=5``; returns (classifier, Table V report, validation rows)."""
    clustered = df[df.profile >= 0].copy()
    clustered["profile"] = clustered["profile"].astype(int)
    if clustered["profile"].nunique() < 2:
        raise ValueError("need at least two profiles to train the classifier")
    train, test = classifier.split(clustered, random_state=random_state)
    clf = classifier.ProfileClassifier(random_state=0, n_jobs=n_jobs).fit(train, train.profile, train.duration)
    rep = classifier.report(test.profile, clf.predict(test))
    return clf, rep, test


def duration_test(clf: classifier.ProfileClassifier, jobs: pd.DataFrame) -> pd.DataFrame:
    """Predict each job's duration as its predicted profile's mean; relative error per job.
    Jobs with a non-positive duration are dropped (relative error undefined) and counted."""
    ok = jobs[jobs.duration > 0]
    pred = clf.predict(ok)
    yhat = clf.predict_duration(ok)
    out = pd.DataFrame({"predicted_profile": pred, "duration": ok.duration.to_numpy(), "predicted_duration": yhat})
    out["rel_error"] = duration.relative_error(yhat, out.duration)
    out.attrs["dropped_nonpositive"] = int(len(jobs) - len(ok))
    return out
