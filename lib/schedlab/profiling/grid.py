"""Tables III/IV: the clustering grid (HDBSCAN via ``hdbscan``, OPTICS via scikit-learn).

Every configuration ``(algorithm, transform, metric, min_cluster_size)`` is one task; tasks run
through a single :class:`joblib.Parallel` call, so any joblib backend works unchanged, e.g. a Dask
cluster::

    from dask.distributed import Client
    import joblib
    client = Client("tcp://scheduler:8786")
    with joblib.parallel_config(backend="dask"):
        run_grid(X, configs, cache_dir)

Each finished configuration is cached as ``<cache_dir>/<key>.json`` (metrics) plus
``<key>.npy`` (labels), written atomically; ``key`` hashes the configuration and the data, so an
interrupted grid resumes where it stopped and a changed input recomputes.

Per-run metrics follow the authors' tables: ``n_outliers``, ``n_clusters`` (max label + 1),
``mean_cluster_size``, ``avg_silhouette`` (noise kept as a group, see
:func:`schedlab.profiling.scoring.silhouette_with_noise`; same metric as the clustering),
``davies_bouldin_score`` (noise kept as a group), ``scores_v1`` (ACQUIRES), ``scores_v3``, ``CCPM``.

Assumptions (the authors' grid code was not available): HDBSCAN with library defaults besides
``min_cluster_size`` and ``metric`` (so ``min_samples = min_cluster_size``); OPTICS with
``min_samples = min_cluster_size`` would be far slower still, so OPTICS uses scikit-learn's
defaults (``min_samples=5``, xi extraction) with ``min_cluster_size`` set. OPTICS runs on a
documented random subsample (``optics_subsample`` rows) by default; ``None`` runs it on all rows.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.io import atomic_path, atomic_write_text
from schedlab.profiling import scoring
from schedlab.profiling.schema import METRICS, MIN_CLUSTER_SIZES, TRANSFORMS

ALGORITHMS = ("hdbscan", "optics")


@dataclass(frozen=True)
class Config:
    algorithm: str
    transform: str
    metric: str
    min_cluster_size: int

    def key(self, fingerprint: str) -> str:
        raw = json.dumps({**asdict(self), "data": fingerprint}, sort_keys=True)
        return hashlib.sha256(raw.encode()).hexdigest()[:20]


def configs(algorithms=ALGORITHMS, transforms=TRANSFORMS, metrics=METRICS,
            min_cluster_sizes=MIN_CLUSTER_SIZES) -> list[Config]:
    """The Table III grid (default: 2 x 4 x 2 x 7 = 112 configurations)."""
    for a in algorithms:
        if a not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {a!r}; known: {ALGORITHMS}")
    for t in transforms:
        if t not in TRANSFORMS:
            raise ValueError(f"unknown transform {t!r}; known: {TRANSFORMS}")
    return [Config(a, t, m, int(k)) for a, t, m, k in product(algorithms, transforms, metrics, min_cluster_sizes)]


def transform(X: np.ndarray, name: str) -> np.ndarray:
    """Apply one of the four data transformations of Table III."""
    from sklearn.preprocessing import MinMaxScaler, PowerTransformer, RobustScaler, StandardScaler

    makers = {"standard_scaler": StandardScaler, "minmax_scaler": MinMaxScaler, "robust_scaler": RobustScaler,
              "yeo-johnson": lambda: PowerTransformer(method="yeo-johnson")}
    if name not in makers:
        raise ValueError(f"unknown transform {name!r}; known: {sorted(makers)}")
    return makers[name]().fit_transform(np.asarray(X, dtype=float))


def fingerprint(X: np.ndarray) -> str:
    X = np.ascontiguousarray(X, dtype=float)
    return hashlib.sha256(X.tobytes() + str(X.shape).encode()).hexdigest()[:16]


def cluster(Xt: np.ndarray, cfg: Config) -> np.ndarray:
    """Labels of one configuration on already transformed data (noise = -1)."""
    if cfg.algorithm == "hdbscan":
        import hdbscan

        return hdbscan.HDBSCAN(min_cluster_size=cfg.min_cluster_size, metric=cfg.metric,
                               core_dist_n_jobs=1).fit_predict(Xt)
    if cfg.algorithm == "optics":
        from sklearn.cluster import OPTICS

        return OPTICS(min_cluster_size=cfg.min_cluster_size, metric=cfg.metric, n_jobs=1).fit_predict(Xt)
    raise ValueError(f"unknown algorithm {cfg.algorithm!r}")


def evaluate(Xt: np.ndarray, labels: np.ndarray, metric: str, *, silhouette_sample: int | None,
             rng: np.random.Generator, optimal: float = scoring.OPTIMAL_N_CLUSTERS) -> dict:
    st = scoring.label_stats(labels)
    sil = scoring.silhouette_with_noise(Xt, labels, metric, sample_size=silhouette_sample, rng=rng)
    db = scoring.davies_bouldin_with_noise(Xt, labels)
    row = {"n_rows": st.n, "n_outliers": st.n_outliers, "n_clusters": st.n_clusters,
           "mean_cluster_size": st.mean_cluster_size, "avg_silhouette": sil, "davies_bouldin_score": db}
    k = max(st.n_clusters, 0)
    row["scores_v1"] = scoring.acquires(k, st.n_outliers, st.n, sil, optimal=optimal) if k else float("nan")
    row["scores_v3"] = scoring.scores_v3(k, st.n_outliers, st.n, sil, optimal=optimal) if k else float("nan")
    row["CCPM"] = scoring.ccpm(sil, db) if np.isfinite(db) and db > 0 else float("nan")
    return row


def run_one(X: np.ndarray, cfg: Config, cache_dir: str | Path, *, seed: int = 0,
            silhouette_sample: int | None = None, optics_subsample: int | None = 10_000,
            fp: str | None = None) -> dict:
    """Run (or load from cache) one configuration; returns its metrics row."""
    cache_dir = Path(cache_dir)
    fp = fp or fingerprint(X)
    key = cfg.key(f"{fp}|sil={silhouette_sample}|opt={optics_subsample}|seed={seed}")
    jpath, lpath = cache_dir / f"{key}.json", cache_dir / f"{key}.npy"
    if jpath.is_file() and lpath.is_file():
        return json.loads(jpath.read_text())
    rng = np.random.default_rng([seed, int(key[:8], 16)])
    idx = np.arange(len(X))
    if cfg.algorithm == "optics" and optics_subsample is not None and optics_subsample < len(X):
        idx = np.sort(rng.choice(len(X), size=optics_subsample, replace=False))
    t0 = time.perf_counter()
    Xt = transform(np.asarray(X)[idx], cfg.transform)
    labels = cluster(Xt, cfg)
    fit_s = time.perf_counter() - t0
    row = {**asdict(cfg), **evaluate(Xt, labels, cfg.metric, silhouette_sample=silhouette_sample, rng=rng),
           "fit_seconds": fit_s, "seconds": time.perf_counter() - t0, "key": key,
           "subsample": int(idx.size) if idx.size < len(X) else None}
    with atomic_path(lpath) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, np.column_stack([idx, labels]).astype(np.int64))
    atomic_write_text(jpath, json.dumps(row, indent=1, default=float))
    return row


def load_labels(cache_dir: str | Path, key: str) -> tuple[np.ndarray, np.ndarray]:
    """Row indices and labels of a cached run."""
    arr = np.load(Path(cache_dir) / f"{key}.npy")
    return arr[:, 0], arr[:, 1]


def run_grid(X: np.ndarray, cfgs: list[Config], cache_dir: str | Path, *, n_jobs: int = 1, seed: int = 0,
             silhouette_sample: int | None = None, optics_subsample: int | None = 10_000,
             progress: bool = True) -> pd.DataFrame:
    """Run every configuration (cached ones are read back) through one joblib seam."""
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(X) < 2 or not np.isfinite(X).all():
        raise ValueError("run_grid needs a finite 2-d feature matrix with at least 2 rows")
    fp = fingerprint(X)
    tasks = [delayed(run_one)(X, c, cache_dir, seed=seed, silhouette_sample=silhouette_sample,
                              optics_subsample=optics_subsample, fp=fp) for c in cfgs]
    rows = list(tqdm(Parallel(n_jobs=n_jobs, return_as="generator")(tasks), total=len(tasks),
                     desc="grid", disable=not progress))
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Table IV: mean/min/max/std of the per-run statistics per algorithm."""
    cols = ["n_outliers", "n_clusters", "mean_cluster_size", "avg_silhouette", "davies_bouldin_score"]
    out = table.groupby("algorithm")[cols].agg(["mean", "min", "max", "std"]).stack(level=1, future_stack=True)
    out.index.names = ["algorithm", "stat"]
    return out.reset_index()


def best(table: pd.DataFrame, algorithm: str, score: str = "scores_v1") -> pd.Series:
    sub = table[table.algorithm == algorithm].dropna(subset=[score])
    if sub.empty:
        raise ValueError(f"no scored runs for {algorithm}")
    return sub.loc[sub[score].idxmax()]
