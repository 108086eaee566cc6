"""Per-run clustering metrics of the authors' grid: ACQUIRES (``scores_v1``), ``scores_v3``, CCPM.

Reconstructed from the authors' grid tables (``01_hdbscan_analysis.csv`` / ``01_optics_analysis.csv``)
and their library code; the tests recompute every stored value of both tables to 1e-12:

* cluster-count term ``c = 1 - |k* - k| / max(k*, k)`` with ``k`` the number of clusters and
  ``k* = 26`` (the cluster count of the configuration they finally chose);
* outlier term ``o = 1 - n_outliers / n``;
* ``scores_v1`` (the paper's ACQUIRES) ``= (c + o + s) / 3`` with ``s`` the average silhouette;
* ``scores_v3 = 0.1 c + 0.5 o + 0.4 s``;
* ``CCPM = s + 1 / DB`` (Davies-Bouldin).

Text vs code: the authors' later library (``polaris_profiler/metrics.py``) feeds the *mean cluster
size* into the size term against the same optimum 26; the published tables only match with the
*number of clusters*. ``against="n_clusters"`` (default) reproduces the tables;
``against="mean_cluster_size"`` is the library's reading.

Silhouette semantics (:data:`SILHOUETTES`, default ``"non_noise"``, the authors'). Their grid code,
``polaris-slo-cloud/polaris-ai`` ``ml_data-profiling/alibaba_data-EDA-v0.3.ipynb`` (cells 102/103; the
same cells in ``polaris-slo-cloud/Profiling`` ``case-studies/alibaba/03-eda.ipynb``), computes
``silhouette_samples(X, labels, metric=metric)`` on **every** point of the 100,001-row sample (no
subsampling; noise, label -1, is one more group in the a/b distances), with the clustering's metric
on the transformed data, and stores the mean over the **non-noise** points only (``silh[labels > -1]
.mean()``) as ``avg_silhouette``; a run with ``max(labels) <= 0`` stores -1. The same masked mean is
the figure of ``alibaba_data-evaluation.ipynb`` (cells 43-48, ``HDBSCAN_silh_results_box.pdf``). This
is *not* ``silhouette_score`` on the points with ``labels != -1`` (that also drops noise from the
distances). ``"with_noise"`` (this project's earlier reading) averages over all points, noise
included. The published tables store the authors' values, so rescoring them
(:func:`score_table`) does not depend on this choice.

Examples
--------
>>> round(acquires(n_clusters=26, n_outliers=24603, n=100001, silhouette=0.39938), 5)
0.71778
>>> ccpm(0.5, 2.0)
1.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

OPTIMAL_N_CLUSTERS = 26
#: silhouette semantics: the authors' mean over non-noise points (default), or over all points
SILHOUETTES = ("non_noise", "with_noise")


def size_score(optimal: float, actual: float) -> float:
    """``1 - |optimal - actual| / max(optimal, actual)``: 1 at the optimum, towards 0 away from it.

    >>> size_score(26, 52)
    0.5
    """
    if optimal <= 0 or actual < 0:
        raise ValueError(f"size_score needs optimal > 0 and actual >= 0, got {optimal}, {actual}")
    if actual == 0:
        return 0.0
    return 1.0 - abs(optimal - actual) / max(optimal, actual)


def outlier_score(n_outliers: int, n: int) -> float:
    """Share of clustered (non-noise) points.

    >>> outlier_score(1, 4)
    0.75
    """
    if n <= 0 or not 0 <= n_outliers <= n:
        raise ValueError(f"outlier_score needs 0 <= n_outliers <= n and n > 0, got {n_outliers}, {n}")
    return 1.0 - n_outliers / n


def _size_term(n_clusters: int, mean_cluster_size: float | None, optimal: float, against: str) -> float:
    if against == "n_clusters":
        return size_score(optimal, n_clusters)
    if against == "mean_cluster_size":
        if mean_cluster_size is None:
            raise ValueError("against='mean_cluster_size' needs mean_cluster_size")
        return size_score(optimal, mean_cluster_size)
    raise ValueError(f"against must be 'n_clusters' or 'mean_cluster_size', got {against!r}")


def acquires(
    n_clusters: int,
    n_outliers: int,
    n: int,
    silhouette: float,
    *,
    optimal: float = OPTIMAL_N_CLUSTERS,
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0),
    against: str = "n_clusters",
    mean_cluster_size: float | None = None,
) -> float:
    """ACQUIRES (the tables' ``scores_v1``): weighted mean of size, outlier and silhouette terms."""
    terms = (
        _size_term(n_clusters, mean_cluster_size, optimal, against),
        outlier_score(n_outliers, n),
        silhouette,
    )
    w = np.asarray(weights, dtype=float)
    return float(np.dot(w, terms) / w.sum())


def scores_v3(n_clusters: int, n_outliers: int, n: int, silhouette: float, **kw) -> float:
    """The tables' ``scores_v3``: ACQUIRES with weights (1, 5, 4)."""
    return acquires(n_clusters, n_outliers, n, silhouette, weights=(1.0, 5.0, 4.0), **kw)


def ccpm(silhouette: float, davies_bouldin: float) -> float:
    """The tables' ``CCPM``: silhouette plus the inverse Davies-Bouldin score."""
    if davies_bouldin <= 0:
        raise ValueError(f"Davies-Bouldin score must be > 0, got {davies_bouldin}")
    return float(silhouette + 1.0 / davies_bouldin)


@dataclass(frozen=True)
class LabelStats:
    n: int
    n_outliers: int
    n_clusters: int
    mean_cluster_size: float


def label_stats(labels: np.ndarray) -> LabelStats:
    """Counts as the authors took them: ``n_clusters = max(label) + 1``, noise is label -1.

    >>> label_stats(np.array([-1, 0, 0, 1]))
    LabelStats(n=4, n_outliers=1, n_clusters=2, mean_cluster_size=1.5)
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError("labels must be a non-empty 1-d array")
    n_out = int(np.count_nonzero(labels == -1))
    k = int(labels.max()) + 1 if labels.max() >= 0 else 0
    mean = (labels.size - n_out) / k if k else 0.0
    return LabelStats(int(labels.size), n_out, k, float(mean))


def _check_silhouette(silhouette: str) -> None:
    if silhouette not in SILHOUETTES:
        raise ValueError(f"silhouette must be one of {SILHOUETTES}, got {silhouette!r}")


def _sample(X: np.ndarray, labels: np.ndarray, sample_size: int | None, rng: np.random.Generator | None):
    if sample_size is None or sample_size >= labels.size:
        return np.asarray(X), labels
    if rng is None:
        raise ValueError("sample_size needs an explicit rng (numpy.random.Generator)")
    idx = np.sort(rng.choice(labels.size, size=sample_size, replace=False))
    return np.asarray(X)[idx], labels[idx]


def point_silhouettes(X: np.ndarray, labels: np.ndarray, metric: str = "euclidean") -> np.ndarray:
    """:func:`sklearn.metrics.silhouette_samples` with noise (-1) as one more group: the per-point
    values both semantics average (the authors' code computes exactly these, then masks noise).

    Computed by :func:`point_silhouettes_many` (the same sums, faster).

    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [20.0]])
    >>> point_silhouettes(X, np.array([0, 0, 1, 1, -1])).round(2).tolist()
    [0.98, 0.98, 0.98, 0.98, 0.0]
    """
    return point_silhouettes_many(X, [labels], metric)[0]


#: memory (MiB) for one chunk of the distance matrix in :func:`point_silhouettes_many`
SILHOUETTE_WORKING_MEMORY = 256


def point_silhouettes_many(X: np.ndarray, labelings, metric: str = "euclidean") -> np.ndarray:
    """Per-point silhouettes of several labellings of the same points, one distance pass.

    The values of :func:`sklearn.metrics.silhouette_samples` for each labelling (noise, -1, is
    one more group; 0 for a point alone in its group) to the last bit: every distance is computed
    with scikit-learn's arithmetic and the per-cluster sums are taken in its order
    (:mod:`schedlab.polaris._silhouette`). Each distance is computed once for all labellings: a
    grid of ``k`` clusterings of one transformed sample pays for one ``O(n^2)`` distance pass
    instead of ``k``. Euclidean and manhattan distances are summed as they are computed
    (:data:`FUSED_METRICS`); other metrics go through
    :func:`sklearn.metrics.pairwise_distances_chunked`.

    Returns an ``(len(labelings), n)`` array. Each labelling needs 2 to ``n - 1`` distinct
    labels (as scikit-learn).

    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [20.0]])
    >>> point_silhouettes_many(X, [[0, 0, 1, 1, -1], [0, 0, 0, 1, 1]]).round(2).tolist()
    [[0.98, 0.98, 0.98, 0.98, 0.0], [0.8, 0.8, 0.34, -0.77, 0.19]]
    """
    # X keeps its memory layout: scikit-learn's matrix product sees a Fortran-ordered X (as a
    # DataFrame's to_numpy() gives) in that order, and the product's last bits depend on it
    X = np.asarray(X, dtype=float)
    if not np.isfinite(X).all():
        raise ValueError("point_silhouettes_many needs finite X (scikit-learn refuses NaN and inf)")
    codes, freqs = _group_codes(X, labelings)
    chunks = _fused_chunk_sums if metric in FUSED_METRICS else _distance_chunk_sums
    out = np.empty((len(codes), len(X)))
    for rows, sums in chunks(X, codes, freqs, metric):
        for k, (code, freq, s) in enumerate(zip(codes, freqs, sums)):
            out[k, rows] = _silhouettes_from_sums(s, code[rows], freq)
    return out


#: metrics whose distances :func:`point_silhouettes_many` sums as it computes them
FUSED_METRICS = ("euclidean", "manhattan")


def _group_codes(X: np.ndarray, labelings) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each labelling's group codes ``0 .. g-1`` and group sizes, checked as scikit-learn checks."""
    codes, freqs = [], []
    for k, labels in enumerate(labelings):
        labels = np.asarray(labels)
        if labels.shape != (len(X),):
            raise ValueError(
                f"labelling {k} has shape {labels.shape}; expected ({len(X)},), one label per row of X"
            )
        groups, code = np.unique(labels, return_inverse=True)
        if not 2 <= groups.size <= len(X) - 1:
            raise ValueError(
                f"labelling {k} has {groups.size} distinct labels; the silhouette needs 2 to "
                f"n_samples - 1 = {len(X) - 1}"
            )
        codes.append(code.astype(np.int64))
        freqs.append(np.bincount(code).astype(float))
    return codes, freqs


def _chunk_rows(n: int) -> list[slice]:
    """Row chunks of an ``n x n`` matrix of doubles in :data:`SILHOUETTE_WORKING_MEMORY` MiB, as
    :func:`sklearn.metrics.pairwise_distances_chunked` cuts them (the fused pass keeps one
    chunk of the euclidean matrix product, or only the sums)."""
    step = max(1, min(n, int(SILHOUETTE_WORKING_MEMORY * 2**20 // (8 * n))))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


def _distance_chunk_sums(X, codes, freqs, metric):
    """Per-cluster sums of each labelling, chunk by chunk of scikit-learn's distance matrix."""
    from sklearn.metrics import pairwise_distances_chunked

    from schedlab.polaris._silhouette import cluster_distance_sums

    start = 0
    for D in pairwise_distances_chunked(X, metric=metric, working_memory=SILHOUETTE_WORKING_MEMORY):
        D = np.ascontiguousarray(D)  # once per chunk, not once per labelling
        yield (
            slice(start, start + len(D)),
            [cluster_distance_sums(D, c, f.size) for c, f in zip(codes, freqs)],
        )
        start += len(D)


def _fused_chunk_sums(X, codes, freqs, metric):
    """:func:`_distance_chunk_sums` with the distances computed inside the summing loop
    (:func:`schedlab.polaris._silhouette.euclidean_cluster_sums` /
    :func:`~schedlab.polaris._silhouette.manhattan_cluster_sums`), every labelling in one pass."""
    from sklearn.utils.extmath import row_norms

    from schedlab.polaris import _silhouette

    offsets = np.cumsum([0] + [f.size for f in freqs])
    shifted = np.ascontiguousarray(np.stack([c + o for c, o in zip(codes, offsets[:-1])]))
    n_groups = int(offsets[-1])
    if metric == "euclidean":
        yy = row_norms(X, squared=True)  # as scikit-learn: squared norms of all rows, of the chunk's rows
        product = None
    else:
        XT = np.ascontiguousarray(X.T)
    for rows in _chunk_rows(len(X)):
        Xc = X[rows]
        if metric == "euclidean":
            if product is None or len(product) != len(Xc):
                product = np.empty((len(Xc), len(X)))
            np.matmul(Xc, X.T, out=product)  # scikit-learn's safe_sparse_dot(X_chunk, X.T)
            sums = _silhouette.euclidean_cluster_sums(
                product, row_norms(Xc, squared=True), yy, rows.start, shifted, n_groups
            )
        else:  # each distance sums the features in order, whatever the layout
            sums = _silhouette.manhattan_cluster_sums(np.ascontiguousarray(Xc), XT, shifted, n_groups)
        yield rows, [sums[:, offsets[k] : offsets[k + 1]] for k in range(len(codes))]


def _silhouettes_from_sums(sums: np.ndarray, own: np.ndarray, freq: np.ndarray) -> np.ndarray:
    """scikit-learn's ``(b - a) / max(a, b)`` from per-cluster distance sums of a chunk of rows."""
    rows = np.arange(len(own))
    with np.errstate(divide="ignore", invalid="ignore"):
        intra = sums[rows, own] / (freq[own] - 1)  # nan for a point alone in its group
        sums[rows, own] = np.inf
        inter = (sums / freq).min(axis=1)
        s = (inter - intra) / np.maximum(intra, inter)
    return np.nan_to_num(s)


def mean_silhouette(points: np.ndarray, labels: np.ndarray, semantics: str = "non_noise") -> float:
    """The grid's ``avg_silhouette`` from per-point values (:func:`point_silhouettes`): the mean
    over non-noise points (``"non_noise"``, the authors') or over all points (``"with_noise"``)."""
    _check_silhouette(semantics)
    labels = np.asarray(labels)
    return float(np.mean(points[labels != -1] if semantics == "non_noise" else points))


def silhouette_defined(labels: np.ndarray) -> bool:
    """Whether :func:`silhouette` computes a value (else it is -1, as in the authors' code): some
    label above 0 and at least two distinct labels."""
    labels = np.asarray(labels)
    return bool(labels.max() > 0 and np.unique(labels).size >= 2)


def silhouette(
    X: np.ndarray,
    labels: np.ndarray,
    metric: str = "euclidean",
    *,
    semantics: str = "non_noise",
    sample_size: int | None = None,
    rng: np.random.Generator | None = None,
) -> float:
    """The grid's ``avg_silhouette``: -1.0 when ``labels.max() <= 0`` (as the authors), else the mean of
    :func:`point_silhouettes` over the non-noise points (``semantics="non_noise"``, the authors') or
    over all points (``"with_noise"``).

    ``sample_size`` evaluates it on a random subset (drawn with ``rng``) when the full O(n^2)
    computation is too slow (the authors used every point); ``None`` uses every point.

    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [20.0]])
    >>> labels = np.array([0, 0, 1, 1, -1])
    >>> round(silhouette(X, labels), 3), round(silhouette(X, labels, semantics="with_noise"), 3)
    (0.98, 0.784)
    """
    _check_silhouette(semantics)
    labels = np.asarray(labels)
    if not silhouette_defined(labels):
        return -1.0
    X, labels = _sample(X, labels, sample_size, rng)
    if np.unique(labels).size < 2 or labels.max() < 0:
        return -1.0
    return mean_silhouette(point_silhouettes(X, labels, metric), labels, semantics)


def silhouette_with_noise(
    X: np.ndarray,
    labels: np.ndarray,
    metric: str = "euclidean",
    *,
    sample_size: int | None = None,
    rng: np.random.Generator | None = None,
) -> float:
    """Mean silhouette with noise (-1) kept as one more group and averaged over; -1.0 when
    ``labels.max() <= 0``: :func:`silhouette` with ``semantics="with_noise"``."""
    return silhouette(X, labels, metric, semantics="with_noise", sample_size=sample_size, rng=rng)


def silhouette_non_noise(
    X: np.ndarray,
    labels: np.ndarray,
    metric: str = "euclidean",
    *,
    sample_size: int | None = None,
    rng: np.random.Generator | None = None,
) -> float:
    """The authors' ``avg_silhouette``: :func:`silhouette` with ``semantics="non_noise"``."""
    return silhouette(X, labels, metric, semantics="non_noise", sample_size=sample_size, rng=rng)


def per_profile_silhouettes(X: np.ndarray, labels: np.ndarray, metric: str = "euclidean") -> pd.DataFrame:
    """Mean silhouette per profile (the paper's discussion of profiles 8/9, 5/6/11, 10 and the
    authors' ``HDBSCAN_silh_results_box.pdf``): :func:`point_silhouettes` (noise as one more group,
    as the authors) grouped by label, noise (-1) as its own last row.

    Columns ``profile, rows, share`` (of all rows), ``silhouette`` (mean), ``median``,
    ``share_negative`` (share of the profile's points with a silhouette below 0). The size-weighted
    mean over the profiles >= 0 equals :func:`silhouette` (``"non_noise"``). Needs at least two groups.

    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [20.0]])
    >>> per_profile_silhouettes(X, np.array([0, 0, 1, 1, -1]))[["profile", "rows"]].values.tolist()
    [[0, 2], [1, 2], [-1, 1]]
    """
    labels = np.asarray(labels)
    if np.unique(labels).size < 2:
        raise ValueError("per_profile_silhouettes needs at least two groups (profiles or noise)")
    s = pd.Series(point_silhouettes(X, labels, metric))
    g = s.groupby(labels)
    out = pd.DataFrame(
        {
            "rows": g.size(),
            "silhouette": g.mean(),
            "median": g.median(),
            "share_negative": g.apply(lambda v: float((v < 0).mean())),
        }
    )
    out = out.rename_axis("profile").reset_index()
    out["share"] = out["rows"] / labels.size
    order = np.r_[np.flatnonzero(out.profile >= 0), np.flatnonzero(out.profile < 0)]
    return out.iloc[order].reset_index(drop=True)[
        ["profile", "rows", "share", "silhouette", "median", "share_negative"]
    ]


def davies_bouldin_with_noise(X: np.ndarray, labels: np.ndarray) -> float:
    """Davies-Bouldin with noise kept as one more group (NaN if fewer than two groups)."""
    from sklearn.metrics import davies_bouldin_score

    labels = np.asarray(labels)
    if np.unique(labels).size < 2:
        return float("nan")
    return float(davies_bouldin_score(X, labels))


def score_table(df, n: int, *, optimal: float = OPTIMAL_N_CLUSTERS):
    """Recompute ``scores_v1``, ``scores_v3`` and ``CCPM`` for a grid table (a DataFrame with
    ``n_clusters, n_outliers, avg_silhouette, davies_bouldin_score``); returns a new DataFrame."""
    out = df.copy()
    rows = list(zip(df["n_clusters"], df["n_outliers"], df["avg_silhouette"], df["davies_bouldin_score"]))
    out["scores_v1"] = [acquires(int(k), int(o), n, s, optimal=optimal) for k, o, s, _ in rows]
    out["scores_v3"] = [scores_v3(int(k), int(o), n, s, optimal=optimal) for k, o, s, _ in rows]
    out["CCPM"] = [ccpm(s, db) for _, _, s, db in rows]
    return out


def fixed_label_silhouettes(
    X: np.ndarray,
    meta,
    groupings=None,
    metrics=("euclidean", "cosine", "manhattan"),
    *,
    sample_size: int | None = None,
    rng: np.random.Generator | None = None,
):
    """Table II: mean silhouette of fixed metadata labels (no noise group) per metric.

    ``groupings`` maps a row name to the metadata columns whose value tuple is the label
    (default: workload, task name, and both). Returns a DataFrame (groupings x metrics).
    """
    import pandas as pd
    from sklearn.metrics import silhouette_score

    groupings = groupings or {
        "Workload": ["workload"],
        "Task name": ["task_name"],
        "(Workload, Task name)": ["workload", "task_name"],
    }
    X = np.asarray(X, dtype=float)
    idx = np.arange(len(X))
    if sample_size is not None and sample_size < len(X):
        if rng is None:
            raise ValueError("sample_size needs an explicit rng")
        idx = np.sort(rng.choice(len(X), size=sample_size, replace=False))
    rows = {}
    for name, cols in groupings.items():
        labels = meta[list(cols)].astype(str).agg("|".join, axis=1).to_numpy()[idx]
        if np.unique(labels).size < 2:
            rows[name] = {m: float("nan") for m in metrics}
            continue
        rows[name] = {m: float(silhouette_score(X[idx], labels, metric=m)) for m in metrics}
    return pd.DataFrame(rows).T


def planted_recovery(labels_found, labels_planted) -> dict:
    """How well a clustering recovers planted profiles: adjusted Rand index (scikit-learn) and counts.

    Both label arrays use -1 for noise / background. ``ari`` compares the two partitions of all
    rows, noise being one more group on each side (a clustering that calls the planted
    background noise is rewarded, one that scatters it is not). ``ari_non_noise`` compares them
    on the rows that are in a planted profile *and* in a found cluster (how the clustered rows
    are grouped, whatever was called noise); NaN with fewer than 2 such rows. Also returned:
    planted / found profile counts (distinct labels >= 0), the rows in both, the noise shares
    and the share of planted-profile rows the clustering called noise.

    >>> r = planted_recovery([1, 1, 0, 0, -1], [0, 0, 1, 1, -1])
    >>> r["ari"], r["ari_non_noise"], r["planted_profiles"], r["found_profiles"]
    (1.0, 1.0, 2, 2)
    """
    from sklearn.metrics import adjusted_rand_score

    found = np.asarray(labels_found)
    planted = np.asarray(labels_planted)
    if found.ndim != 1 or found.shape != planted.shape or found.size == 0:
        raise ValueError(
            f"planted_recovery needs two 1-d label arrays of one length > 0, got shapes "
            f"{found.shape} and {planted.shape}"
        )
    if not (np.issubdtype(found.dtype, np.integer) and np.issubdtype(planted.dtype, np.integer)):
        if not (np.all(found == np.round(found)) and np.all(planted == np.round(planted))):
            raise ValueError("planted_recovery needs integer labels (-1 = noise)")
        found, planted = found.astype(np.int64), planted.astype(np.int64)
    both = (found >= 0) & (planted >= 0)
    in_planted = planted >= 0
    return {
        "rows": int(found.size),
        "planted_profiles": int(np.unique(planted[in_planted]).size),
        "found_profiles": int(np.unique(found[found >= 0]).size),
        "ari": float(adjusted_rand_score(planted, found)),
        "ari_non_noise": float(adjusted_rand_score(planted[both], found[both]))
        if both.sum() >= 2
        else float("nan"),
        "rows_non_noise": int(both.sum()),
        "planted_noise_share": float(np.mean(planted < 0)),
        "found_noise_share": float(np.mean(found < 0)),
        "planted_rows_found_noise_share": float(np.mean(found[in_planted] < 0))
        if in_planted.any()
        else float("nan"),
    }
