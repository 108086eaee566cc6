"""Metadata rows with a profile behind them, and a classifier fitted to them, for the classifier
and SHAP tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def profile_meta(n: int = 300, seed: int = 1, first_index: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """``n`` rows whose user (and mostly workload) follow one of 3 profiles, and the profiles.
    ``first_index``: the rows' index starts there (validation rows keep their sample's index)."""
    rng = np.random.default_rng(seed)
    prof = rng.integers(0, 3, n)
    meta = pd.DataFrame(
        {
            "job_name": rng.choice(["a", "b", "c", "d"], n),
            "user": np.array(["u0", "u1", "u2"])[prof],
            "task_name": rng.choice(["ps", "worker"], n),
            "group": "g",
            "workload": np.where(rng.random(n) < 0.8, np.array(["bert", "ctr", "rl"])[prof], "ctr"),
        }
    )
    meta.index = pd.RangeIndex(first_index, first_index + n)
    return meta, prof


def fitted_profiles(binary: bool = False, first_index: int = 0):
    """:func:`profile_meta`'s 300 rows and a 20-tree classifier fitted to their profiles
    (``binary``: to profile > 0)."""
    from schedlab.polaris import classifier

    meta, prof = profile_meta(first_index=first_index)
    y = (prof > 0).astype(int) if binary else prof
    return meta, classifier.ProfileClassifier(n_estimators=20).fit(meta, y)
