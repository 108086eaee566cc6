"""The authors' published real rows and grid tables, through :mod:`schedlab.data`.

``calibration_rows.csv.gz`` holds 800 of the 999 rows of the authors' duration-prediction test set
(real rows of their faithful join; see ``../shared/data/alibaba-pai/README.md``).

Examples
--------
>>> df = load_calibration_rows()   # doctest: +SKIP
>>> len(df), df["status"].unique().tolist()   # doctest: +SKIP
(800, ['Terminated'])
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from schedlab import data
from schedlab.polaris.schema import FEATURES, WORKLOADS

CALIBRATION = "alibaba-pai/polaris-derived/calibration_rows.csv.gz"
HDBSCAN_GRID = "alibaba-pai/polaris-derived/01_hdbscan_analysis.csv"
OPTICS_GRID = "alibaba-pai/polaris-derived/01_optics_analysis.csv"
#: rows of the authors' sample the grid tables were computed on
GRID_N = 100_001


def add_features(df: pd.DataFrame) -> pd.DataFrame:
    """Add ``duration = end_time - start_time`` (task level, as the authors) and fill NaN in the
    17 features with 0 (as the authors' ``fillna(0)``; e.g. ``plan_gpu`` of CPU-only tasks)."""
    out = df.copy()
    out["duration"] = out["end_time"] - out["start_time"]
    missing = [c for c in FEATURES if c not in out.columns]
    if missing:
        raise ValueError(f"cannot build the 17 features: columns {missing} are missing")
    out[list(FEATURES)] = out[list(FEATURES)].astype(float).fillna(0.0)
    return out


def load_calibration_rows() -> pd.DataFrame:
    """The 800 real joined rows, with ``duration`` and the 17 features NaN-filled."""
    path = data.require(CALIBRATION)
    df = pd.read_csv(path, index_col=0)
    unknown = sorted(set(df["workload"].dropna()) - set(WORKLOADS))
    if unknown:
        raise ValueError(f"{path}: unknown workload names {unknown}")
    return add_features(df)


def load_grid(algorithm: str) -> pd.DataFrame:
    """The authors' grid-search table for ``hdbscan`` or ``optics`` (56 rows)."""
    name = {"hdbscan": HDBSCAN_GRID, "optics": OPTICS_GRID}.get(algorithm)
    if name is None:
        raise ValueError(f"algorithm must be 'hdbscan' or 'optics', got {algorithm!r}")
    df = pd.read_csv(data.require(name), index_col=0)
    return df[
        [
            "transform_function",
            "metric",
            "min_cluster_size",
            "n_outliers",
            "n_clusters",
            "mean_cluster_size",
            "avg_silhouette",
            "davies_bouldin_score",
            "scores_v1",
            "scores_v3",
            "CCPM",
        ]
    ]


def feature_matrix(df: pd.DataFrame) -> np.ndarray:
    return df[list(FEATURES)].to_numpy(dtype=float)
