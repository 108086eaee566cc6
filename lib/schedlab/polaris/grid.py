"""Tables III/IV: the clustering grid (HDBSCAN via ``hdbscan``; OPTICS as scikit-learn's, via
:mod:`schedlab.polaris.optics`).

Every configuration ``(algorithm, transform, metric, min_cluster_size)`` is one run. Runs that
cluster the same rows with the same transform and metric (every HDBSCAN ``min_cluster_size`` of a
transform and metric) form one task (:func:`share_groups`, :func:`compute_group`): the transform
runs once and one distance pass scores all their labellings
(:func:`schedlab.polaris.scoring.point_silhouettes_many`), with results equal to running each
alone. Tasks run through the suite's executor (:class:`schedlab.parallel.Executor`, :func:`run_grid`): in this
process, local loky processes (``n_jobs``) or a ``dask.distributed`` cluster (``scheduler=`` an
address or a ``Client``), or any executor the caller passes::

    run_grid(X, configs, cache_dir, n_jobs=2)                          # 2 local processes
    run_grid(X, configs, cache_dir, scheduler="tcp://scheduler:8786")  # a Dask cluster
    with Executor(workers=2) as ex:
        run_grid(X, configs, cache_dir, executor=ex)                   # a shared executor

(CLI: ``schedlab polaris grid ... --workers 2`` or ``--scheduler tcp://host:8786``.)

Each finished configuration is cached by the calling process as ``<cache_dir>/<key>.<how>.json``
(metrics) plus ``.npy`` (labels), written atomically as soon as it arrives; ``key`` hashes
the configuration and the data (it also seeds the run's randomness), ``how`` the code, package
versions and CPU pins that computed it, so an interrupted grid resumes where it stopped and a changed
input, or another way of computing, recomputes. Workers never touch the cache (no shared file system needed).

Per-run metrics follow the authors' tables: ``n_outliers``, ``n_clusters`` (max label + 1),
``mean_cluster_size``, ``avg_silhouette`` (see :func:`schedlab.polaris.scoring.silhouette`; same
metric as the clustering), ``davies_bouldin_score`` (noise kept as a group, as the authors),
``scores_v1`` (ACQUIRES), ``scores_v3``, ``CCPM``.

The authors' grid code is public: ``polaris-slo-cloud/polaris-ai``
``ml_data-profiling/alibaba_data-EDA-v0.3.ipynb`` cells 99-103 (copied into
``polaris-slo-cloud/Profiling`` ``case-studies/alibaba/03-eda.ipynb``). Facts taken from it:

* HDBSCAN: ``hdbscan.HDBSCAN(min_cluster_size=m, metric=metric)``, library defaults otherwise
  (so ``min_samples = min_cluster_size``), on all 100,001 rows;
* OPTICS: ``sklearn.cluster.OPTICS(min_samples=m, metric=metric)``: Table III's "min cluster
  points" is OPTICS' ``min_samples`` and ``min_cluster_size`` stays at its default (``None``, i.e.
  equal to ``min_samples``), xi extraction; on all rows;
* silhouette: ``silhouette_samples`` on every point (noise as a group) averaged over the non-noise
  points, -1 when ``max(labels) <= 0``; Davies-Bouldin on every point, noise as a group;
* transforms ``StandardScaler``, ``MinMaxScaler``, ``RobustScaler`` (``fit_transform``) and
  ``power_transform`` (Yeo-Johnson, standardised), as :func:`transform`.

Semantics (fields of :class:`Config`, part of the cache key; defaults = the authors'):
``silhouette`` in :data:`schedlab.polaris.scoring.SILHOUETTES` (``"non_noise"`` | ``"with_noise"``)
and ``optics_param`` in :data:`OPTICS_PARAMS`: ``"min_samples"`` (the authors' ``OPTICS(min_samples=m)``)
or ``"min_cluster_size"`` (this project's earlier reading: ``OPTICS(min_cluster_size=m)``, scikit-learn's
default ``min_samples=5``, much faster). OPTICS runs on a documented random subsample
(``optics_subsample`` rows) by default; ``None`` runs it on all rows, as the authors.
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

from schedlab.cachekey import compute_fingerprint
from schedlab.io import atomic_path, atomic_write_text
from schedlab import parallel
from schedlab.parallel import Executor
from schedlab.polaris import optics, scoring
from schedlab.polaris.schema import METRICS, MIN_CLUSTER_SIZES, TRANSFORMS

ALGORITHMS = ("hdbscan", "optics")
#: what Table III's "min cluster points" sets in OPTICS: the authors' ``min_samples`` (default) or
#: ``min_cluster_size`` (with scikit-learn's ``min_samples=5``)
OPTICS_PARAMS = ("min_samples", "min_cluster_size")


@dataclass(frozen=True)
class Config:
    """One grid run. ``silhouette`` and ``optics_param`` choose the semantics (module docstring);
    both enter :meth:`key`, so caches of different semantics never mix."""

    algorithm: str
    transform: str
    metric: str
    min_cluster_size: int
    silhouette: str = "non_noise"
    optics_param: str = "min_samples"

    def __post_init__(self) -> None:
        if self.silhouette not in scoring.SILHOUETTES:
            raise ValueError(f"silhouette must be one of {scoring.SILHOUETTES}, got {self.silhouette!r}")
        if self.optics_param not in OPTICS_PARAMS:
            raise ValueError(f"optics_param must be one of {OPTICS_PARAMS}, got {self.optics_param!r}")

    def key(self, fingerprint: str) -> str:
        raw = json.dumps({**asdict(self), "data": fingerprint}, sort_keys=True)
        return hashlib.sha256(raw.encode()).hexdigest()[:20]


def configs(
    algorithms=ALGORITHMS,
    transforms=TRANSFORMS,
    metrics=METRICS,
    min_cluster_sizes=MIN_CLUSTER_SIZES,
    *,
    silhouette: str = "non_noise",
    optics_param: str = "min_samples",
) -> list[Config]:
    """The Table III grid (default: 2 x 4 x 2 x 7 = 112 configurations), every run with the given
    semantics (defaults: the authors')."""
    for a in algorithms:
        if a not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {a!r}; known: {ALGORITHMS}")
    for t in transforms:
        if t not in TRANSFORMS:
            raise ValueError(f"unknown transform {t!r}; known: {TRANSFORMS}")
    return [
        Config(a, t, m, int(k), silhouette, optics_param)
        for a, t, m, k in product(algorithms, transforms, metrics, min_cluster_sizes)
    ]


def transform(X: np.ndarray, name: str) -> np.ndarray:
    """Apply one of the four data transformations of Table III."""
    from sklearn.preprocessing import MinMaxScaler, PowerTransformer, RobustScaler, StandardScaler

    makers = {
        "standard_scaler": StandardScaler,
        "minmax_scaler": MinMaxScaler,
        "robust_scaler": RobustScaler,
        "yeo-johnson": lambda: PowerTransformer(method="yeo-johnson"),
    }
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

        return hdbscan.HDBSCAN(
            min_cluster_size=cfg.min_cluster_size, metric=cfg.metric, core_dist_n_jobs=1
        ).fit_predict(Xt)
    if cfg.algorithm == "optics":
        # scikit-learn's OPTICS, computed without its per-point overhead (same labels: schedlab.polaris.optics)
        if cfg.optics_param == "min_samples":  # the authors' OPTICS(min_samples=m, metric=metric)
            return optics.optics_labels(Xt, cfg.min_cluster_size, cfg.metric)
        return optics.optics_labels(Xt, 5, cfg.metric, min_cluster_size=cfg.min_cluster_size)
    raise ValueError(f"unknown algorithm {cfg.algorithm!r}")


def evaluate(
    Xt: np.ndarray,
    labels: np.ndarray,
    metric: str,
    *,
    silhouette_sample: int | None,
    rng: np.random.Generator,
    optimal: float = scoring.OPTIMAL_N_CLUSTERS,
    silhouette: str = "non_noise",
    points: np.ndarray | None = None,
) -> dict:
    """The grid table's metrics of one labelling; ``silhouette`` picks the semantics
    (:func:`schedlab.polaris.scoring.silhouette`). ``points``: its per-point silhouettes, when
    already computed on all rows (:func:`compute_group`)."""
    st = scoring.label_stats(labels)
    if points is not None:
        sil = scoring.mean_silhouette(points, labels, silhouette)
    else:
        sil = scoring.silhouette(
            Xt, labels, metric, semantics=silhouette, sample_size=silhouette_sample, rng=rng
        )
    db = scoring.davies_bouldin_with_noise(Xt, labels)
    row = {
        "n_rows": st.n,
        "n_outliers": st.n_outliers,
        "n_clusters": st.n_clusters,
        "mean_cluster_size": st.mean_cluster_size,
        "avg_silhouette": sil,
        "davies_bouldin_score": db,
    }
    k = max(st.n_clusters, 0)
    row["scores_v1"] = scoring.acquires(k, st.n_outliers, st.n, sil, optimal=optimal) if k else float("nan")
    row["scores_v3"] = scoring.scores_v3(k, st.n_outliers, st.n, sil, optimal=optimal) if k else float("nan")
    row["CCPM"] = scoring.ccpm(sil, db) if np.isfinite(db) and db > 0 else float("nan")
    return row


#: the code that computes a configuration's row and labels (its cache entries name it)
COMPUTE_SOURCES = tuple(
    Path(__file__).parent / f"{m}.py"
    for m in ("grid", "optics", "_optics", "_distances", "scoring", "_silhouette", "schema")
)


def _cache_key(
    cfg: Config, fp: str, seed: int, silhouette_sample: int | None, optics_subsample: int | None
) -> str:
    # the run's identity: it names the run in the outputs and seeds its randomness, so it holds only
    # what the run is (configuration, data, settings), never how this checkout computes it
    return cfg.key(f"{fp}|sil={silhouette_sample}|opt={optics_subsample}|seed={seed}")


def _entry(cache_dir: Path, key: str, suffix: str) -> Path:
    """A run's cache file: its key and how the numbers were computed (code, package versions, CPU
    pins: :func:`schedlab.cachekey.compute_fingerprint`), so an entry another version computed does
    not stand in for today's (a fresh clone would write other bytes)."""
    return cache_dir / f"{key}.{compute_fingerprint(*COMPUTE_SOURCES)[:16]}{suffix}"


def compute_one(
    X: np.ndarray,
    cfg: Config,
    key: str,
    *,
    seed: int = 0,
    silhouette_sample: int | None = None,
    optics_subsample: int | None = 10_000,
) -> tuple[dict, np.ndarray]:
    """Cluster and score one configuration (pure: no files). Returns the metrics row and an
    ``(n, 2)`` int64 array of (row index, label).

    Its randomness (OPTICS subsample, silhouette sample) comes from a generator seeded by
    ``(seed, key)``, so the result does not depend on which worker runs it or in which order.
    BLAS runs single-threaded here: multi-threaded reductions change the last bit of e.g. the
    Davies-Bouldin score with the thread count, which differs between backends.
    """
    return compute_group(
        X, [(cfg, key)], seed=seed, silhouette_sample=silhouette_sample, optics_subsample=optics_subsample
    )[0]


def compute_group(
    X: np.ndarray,
    tasks: list[tuple[Config, str]],
    *,
    seed: int = 0,
    silhouette_sample: int | None = None,
    optics_subsample: int | None = 10_000,
) -> list[tuple[dict, np.ndarray]]:
    """:func:`compute_one` for several configurations that cluster the same rows with the same
    transform and metric (:func:`share_groups`): the transform runs once and one
    :func:`~schedlab.polaris.scoring.point_silhouettes_many` pass scores every labelling, so the
    ``O(n^2)`` distances are computed once, not once per configuration. Every row equals what
    :func:`compute_one` gives that configuration alone, except the times: a configuration's
    ``seconds`` / ``cpu_seconds`` hold its own fit and scoring plus an equal share of the shared
    distance pass. Results in the order of ``tasks``.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _compute_group(
            np.asarray(X),
            tasks,
            seed=seed,
            silhouette_sample=silhouette_sample,
            optics_subsample=optics_subsample,
        )


def _rows_used(n: int, cfg: Config, rng: np.random.Generator, optics_subsample: int | None) -> np.ndarray:
    if cfg.algorithm == "optics" and optics_subsample is not None and optics_subsample < n:
        return np.sort(rng.choice(n, size=optics_subsample, replace=False))
    return np.arange(n)


def _compute_group(X, tasks, *, seed, silhouette_sample, optics_subsample):
    shares = {_share_key(c, len(X), silhouette_sample, optics_subsample) for c, _ in tasks}
    if len(tasks) > 1 and (None in shares or len(shares) > 1):
        raise ValueError("compute_group: these configurations do not share their rows, transform and metric")
    fits = []
    for cfg, key in tasks:
        rng = np.random.default_rng([seed, int(key[:8], 16)])
        idx = _rows_used(len(X), cfg, rng, optics_subsample)
        t0, c0 = time.perf_counter(), time.thread_time()
        Xt = fits[0]["Xt"] if fits else transform(X[idx], cfg.transform)  # shared rows: one transform
        labels = cluster(Xt, cfg)
        fits.append(
            {
                "cfg": cfg,
                "key": key,
                "rng": rng,
                "idx": idx,
                "Xt": Xt,
                "labels": labels,
                "fit": time.perf_counter() - t0,
                "fit_cpu": time.thread_time() - c0,
            }
        )
    shared, shared_s, shared_cpu = _shared_silhouettes(fits, silhouette_sample)
    out = []
    for f, points in zip(fits, shared):
        cfg = f["cfg"]
        t0, c0 = time.perf_counter(), time.thread_time()
        metrics = evaluate(
            f["Xt"],
            f["labels"],
            cfg.metric,
            silhouette_sample=silhouette_sample,
            rng=f["rng"],
            silhouette=cfg.silhouette,
            points=points,
        )
        row = {
            **asdict(cfg),
            **metrics,
            # wall and CPU time of this thread (BLAS and HDBSCAN run single-threaded here)
            "fit_seconds": f["fit"],
            "seconds": f["fit"] + shared_s + time.perf_counter() - t0,
            "cpu_seconds": f["fit_cpu"] + shared_cpu + time.thread_time() - c0,
            "key": f["key"],
            "subsample": int(f["idx"].size) if f["idx"].size < len(X) else None,
        }
        out.append((row, np.column_stack([f["idx"], f["labels"]]).astype(np.int64)))
    return out


def _shared_silhouettes(fits: list[dict], silhouette_sample: int | None):
    """Per-point silhouettes of every labelling of a group in one distance pass (``None`` for a
    single configuration or a sampled silhouette: :func:`evaluate` computes those itself), and
    each configuration's share of the pass's wall and CPU time."""
    if len(fits) < 2 or silhouette_sample is not None:
        return [None] * len(fits), 0.0, 0.0
    t0, c0 = time.perf_counter(), time.thread_time()
    todo = [i for i, f in enumerate(fits) if scoring.silhouette_defined(f["labels"])]
    points: list = [None] * len(fits)
    if todo:
        many = scoring.point_silhouettes_many(
            fits[0]["Xt"], [fits[i]["labels"] for i in todo], fits[0]["cfg"].metric
        )
        for i, p in zip(todo, many):
            points[i] = p
    n = len(fits)
    return points, (time.perf_counter() - t0) / n, (time.thread_time() - c0) / n


def _share_key(cfg: Config, n: int, silhouette_sample: int | None, optics_subsample: int | None):
    """Configurations with the same key cluster the same rows with the same transform and metric,
    so :func:`compute_group` can share their work; ``None``: this one runs alone (a random OPTICS
    subsample or a sampled silhouette differs per configuration)."""
    if silhouette_sample is not None:
        return None
    if cfg.algorithm == "optics" and optics_subsample is not None and optics_subsample < n:
        return None
    return (cfg.transform, cfg.metric)


def share_groups(
    cfgs_keys: list[tuple[Config, str]],
    n: int,
    *,
    silhouette_sample: int | None,
    optics_subsample: int | None,
) -> list[list[tuple[Config, str]]]:
    """Split ``(configuration, key)`` items into :func:`compute_group` tasks, in first-seen order."""
    groups: dict = {}
    for i, (cfg, key) in enumerate(cfgs_keys):
        k = _share_key(cfg, n, silhouette_sample, optics_subsample)
        groups.setdefault(("alone", i) if k is None else k, []).append((cfg, key))
    return list(groups.values())


def _write_cache(cache_dir: Path, row: dict, labels: np.ndarray) -> None:
    # labels first, metrics last: a run counts as cached only once its .json exists
    with atomic_path(_entry(cache_dir, row["key"], ".npy")) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, labels)
    atomic_write_text(_entry(cache_dir, row["key"], ".json"), json.dumps(row, indent=1, default=float))


def _read_cache(cache_dir: Path, key: str) -> dict | None:
    jpath, lpath = _entry(cache_dir, key, ".json"), _entry(cache_dir, key, ".npy")
    if jpath.is_file() and lpath.is_file():
        return json.loads(jpath.read_text())
    return None


def run_one(
    X: np.ndarray,
    cfg: Config,
    cache_dir: str | Path,
    *,
    seed: int = 0,
    silhouette_sample: int | None = None,
    optics_subsample: int | None = 10_000,
    fp: str | None = None,
) -> dict:
    """Run (or load from cache) one configuration in this process; returns its metrics row."""
    cache_dir = Path(cache_dir)
    key = _cache_key(cfg, fp or fingerprint(X), seed, silhouette_sample, optics_subsample)
    cached = _read_cache(cache_dir, key)
    if cached is not None:
        return cached
    row, labels = compute_one(
        X, cfg, key, seed=seed, silhouette_sample=silhouette_sample, optics_subsample=optics_subsample
    )
    _write_cache(cache_dir, row, labels)
    return row


def load_labels(cache_dir: str | Path, key: str) -> tuple[np.ndarray, np.ndarray]:
    """Row indices and labels of a cached run."""
    arr = np.load(_entry(Path(cache_dir), key, ".npy"))
    return arr[:, 0], arr[:, 1]


def _compute_task(task: list[tuple[Config, str]], X: np.ndarray, **kwargs) -> list[tuple[dict, np.ndarray]]:
    """:func:`compute_group` for one group of ``(configuration, cache key)`` items of the executor."""
    return compute_group(X, task, **kwargs)


def _check_backend(n_jobs: int, scheduler, executor: Executor | None) -> None:
    if executor is not None and (scheduler is not None or n_jobs != 1):
        raise ValueError("give either executor or n_jobs/scheduler, not both")
    if scheduler is not None and n_jobs != 1:
        raise ValueError("give either n_jobs (local processes) or scheduler (Dask), not both")


def run_grid(
    X: np.ndarray,
    cfgs: list[Config],
    cache_dir: str | Path,
    *,
    n_jobs: int = 1,
    seed: int = 0,
    silhouette_sample: int | None = None,
    optics_subsample: int | None = 10_000,
    scheduler=None,
    executor: Executor | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Run every configuration on one executor; cached ones are read back.

    Parameters
    ----------
    n_jobs
        Local worker processes (loky) when neither ``scheduler`` nor ``executor`` is given;
        1 runs in this process.
    scheduler
        A Dask scheduler address (``"tcp://host:8786"``) or a ``distributed.Client``: the same
        tasks then run on that cluster (give either this or ``n_jobs > 1``, not both).
    executor
        A :class:`schedlab.parallel.Executor` to run on (kept open; give it instead of
        ``n_jobs``/``scheduler``).

    Workers only compute; this process writes the cache as each run finishes
    (:meth:`Executor.imap <schedlab.parallel.Executor.imap>`), so workers need no shared file
    system and an interrupted grid resumes.

    Returns one row per configuration, in the order of ``cfgs``; the result is the same for
    every backend (each run is seeded by ``(seed, configuration, data)``, not by worker or order).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(X) < 2 or not np.isfinite(X).all():
        raise ValueError("run_grid needs a finite 2-d feature matrix with at least 2 rows")
    _check_backend(n_jobs, scheduler, executor)
    cache_dir = Path(cache_dir)
    fp = fingerprint(X)
    keys = [_cache_key(c, fp, seed, silhouette_sample, optics_subsample) for c in cfgs]
    rows = {k: r for k in keys if (r := _read_cache(cache_dir, k)) is not None}
    todo = [(c, k) for c, k in zip(cfgs, keys) if k not in rows]
    if todo:
        tasks = share_groups(
            todo, len(X), silhouette_sample=silhouette_sample, optics_subsample=optics_subsample
        )
        desc = f"grid: {len(todo)} configurations in {len(tasks)} tasks"
        if rows:
            desc += f" ({len(rows)} of {len(cfgs)} cached)"
        spec = executor if executor is not None else scheduler if scheduler is not None else n_jobs
        with parallel.executor(spec) as ex:  # closes only what it opened
            for _, results in ex.imap(
                _compute_task,
                tasks,
                X,
                seed=seed,
                silhouette_sample=silhouette_sample,
                optics_subsample=optics_subsample,
                desc=desc,
                progress=progress,
            ):
                for row, labels in results:
                    _write_cache(cache_dir, row, labels)
                    rows[row["key"]] = row
    return pd.DataFrame([rows[k] for k in keys])


#: Per-run times in a grid table (wall and CPU seconds): they change from run to run (and a
#: cached run keeps the times of the run that computed it), so pipeline outputs leave them out.
TIMING_COLUMNS = ("fit_seconds", "seconds", "cpu_seconds")
#: The columns naming a run, kept next to its times.
RUN_COLUMNS = ("algorithm", "transform", "metric", "min_cluster_size", "key")


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Table IV: mean/min/max/std of the per-run statistics per algorithm."""
    cols = ["n_outliers", "n_clusters", "mean_cluster_size", "avg_silhouette", "davies_bouldin_score"]
    out = (
        table.groupby("algorithm")[cols].agg(["mean", "min", "max", "std"]).stack(level=1, future_stack=True)
    )
    out.index.names = ["algorithm", "stat"]
    return out.reset_index()


def best(table: pd.DataFrame, algorithm: str, score: str = "scores_v1") -> pd.Series:
    sub = table[table.algorithm == algorithm].dropna(subset=[score])
    if sub.empty:
        raise ValueError(f"no scored runs for {algorithm}")
    return sub.loc[sub[score].idxmax()]
