"""Interactive explorer of PolarisProfiler's profile generator (notebook ``explore/polaris``).

Pick a clustering configuration (algorithm, ``min_cluster_size``, ``min_samples``, feature
scaling, distance metric) and see, on a few hundred rows, what the paper's Section III-B looks at:
the profiles found, the share of outliers (noise, label -1), the overall and per-profile
silhouette and a 2-D projection (PCA of the scaled features) coloured by profile.

The rows are the **800 real joined rows** the authors published (``load_rows("real")``, the same
file as ``polaris/real_panel``) or the pipeline's **synthetic stand-in** (``load_rows("synthetic")``,
the joined table the ``polaris/pipeline`` stage writes; labelled SYNTHETIC).

Conventions (stated once):

* The clustering is the grid's (:func:`schedlab.polaris.grid.cluster`): HDBSCAN from the
  ``hdbscan`` package, OPTICS from scikit-learn (xi extraction). ``min_samples=None`` keeps the
  grid's choice: HDBSCAN's default (``= min_cluster_size``); OPTICS as the authors call it,
  ``OPTICS(min_samples=m)`` (:class:`schedlab.polaris.grid.Config`).
* Scalings are Table III's four transforms (:func:`schedlab.polaris.grid.transform`) plus
  ``"none"`` (the raw features, to see why scaling matters).
* **Per-profile silhouette** is the mean of :func:`sklearn.metrics.silhouette_samples` over the
  profile's points, computed as the authors' code does: on every point with the outliers as one
  more group, then the outliers masked (:func:`schedlab.polaris.scoring.point_silhouettes`). The
  overall silhouette is the mean over the clustered points, i.e. the size-weighted mean of the
  per-profile values and the grid's default ``avg_silhouette`` (``"non_noise"``); ACQUIRES uses it.
  The other reading, outliers averaged in as one more group (``"with_noise"``), is shown next to it.

Examples
--------
>>> X = np.vstack([np.zeros((30, 3)), np.full((30, 3), 10.0)]) + np.random.default_rng(0).normal(size=(60, 3))
>>> r = explore(X, Setting(algorithm="hdbscan", min_cluster_size=10, scaling="none"))
>>> r.n_profiles, r.noise_share, round(r.silhouette, 2)
(2, 0.0, 0.87)
>>> r.per_profile[["profile", "rows"]].to_dict("list")
{'profile': [0, 1], 'rows': [30, 30]}
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab import paths
from schedlab.polaris import calibration, grid, scoring
from schedlab.polaris.schema import TRANSFORMS

ALGORITHMS: tuple[str, ...] = grid.ALGORITHMS
SCALINGS: tuple[str, ...] = TRANSFORMS + ("none",)
METRICS: tuple[str, ...] = ("euclidean", "manhattan")
SOURCES: tuple[str, ...] = ("real", "synthetic")
#: the stand-in the ``polaris/pipeline`` stage joins (default parameters: 3,000 jobs, seed 0)
STAND_IN = paths.DATA / "cache" / "polaris" / "synthetic_3000_0" / "joined_faithful.parquet"


@dataclass(frozen=True)
class Setting:
    """One clustering configuration of the explorer."""

    algorithm: str = "hdbscan"
    min_cluster_size: int = 20
    min_samples: int | None = None
    scaling: str = "yeo-johnson"
    metric: str = "euclidean"

    def __post_init__(self) -> None:
        for field, value, known in (
            ("algorithm", self.algorithm, ALGORITHMS),
            ("scaling", self.scaling, SCALINGS),
            ("metric", self.metric, METRICS),
        ):
            if value not in known:
                raise ValueError(f"Setting.{field}={value!r}; expected one of {', '.join(known)}")
        if int(self.min_cluster_size) < 2:
            raise ValueError(f"Setting.min_cluster_size must be >= 2, got {self.min_cluster_size}")
        if self.min_samples is not None and int(self.min_samples) < 1:
            raise ValueError(f"Setting.min_samples must be >= 1 or None, got {self.min_samples}")


@dataclass
class Exploration:
    """What one setting gives on one feature matrix (see the module docstring)."""

    setting: Setting
    labels: np.ndarray
    #: silhouette of each point among the clustered points; NaN for outliers (and for all
    #: points when fewer than two profiles were found)
    point_silhouettes: np.ndarray
    #: one row per profile: ``profile``, ``rows``, ``share`` (of all rows), ``silhouette``
    per_profile: pd.DataFrame
    n_profiles: int
    noise_share: float
    #: mean silhouette of the clustered points, outliers a group in the computation (the
    #: authors'; NaN with fewer than two profiles)
    silhouette: float
    #: the ``"with_noise"`` silhouette (outliers averaged in as one more group; -1 with at most one profile)
    silhouette_noise_as_group: float
    acquires: float
    #: PCA of the scaled features: ``(n, 2)`` coordinates and the explained variance ratios
    projection: np.ndarray
    explained_variance: np.ndarray
    seconds: float


def load_rows(
    source: str = "real", n: int | None = 400, seed: int = 0, *, joined: str | Path | None = None
) -> pd.DataFrame:
    """``n`` rows (all if ``None`` or larger than the table), drawn without replacement with
    ``default_rng(seed)`` and kept in file order, with the 17 features NaN-filled with 0.

    ``source="real"``: the authors' 800 real joined rows. ``source="synthetic"``: the stand-in
    joined table (``joined``, default :data:`STAND_IN`, written by the ``polaris/pipeline``
    stage); its rows get ``data = "SYNTHETIC"``, the real ones ``data = "REAL"``.
    """
    if source == "real":
        rows = calibration.load_calibration_rows()
    elif source == "synthetic":
        path = Path(joined) if joined else STAND_IN
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no synthetic stand-in joined table; run the polaris/pipeline stage first "
                "(`schedlab notebook run polaris/pipeline`) or pass joined= the path of a joined_*.parquet"
            )
        rows = calibration.add_features(pd.read_parquet(path).drop(columns=["duration"], errors="ignore"))
    else:
        raise ValueError(f"source={source!r}; expected one of {', '.join(SOURCES)}")
    if n is not None and n < len(rows):
        pick = np.sort(np.random.default_rng(seed).choice(len(rows), size=int(n), replace=False))
        rows = rows.iloc[pick]
    return rows.reset_index(drop=True).assign(data="REAL" if source == "real" else "SYNTHETIC")


def feature_matrix(rows: pd.DataFrame) -> np.ndarray:
    """The 17 features of ``rows`` as a float matrix (the grid's input)."""
    return calibration.feature_matrix(rows)


def scale(X: np.ndarray, scaling: str) -> np.ndarray:
    """Table III's transform ``scaling`` of ``X``, or the raw features for ``"none"``."""
    X = np.asarray(X, dtype=float)
    return X.copy() if scaling == "none" else grid.transform(X, scaling)


def cluster_labels(Xt: np.ndarray, setting: Setting) -> np.ndarray:
    """Labels of ``setting`` on already scaled data (noise = -1); the grid's calls, plus
    ``min_samples`` when it is set."""
    if setting.min_samples is None:
        cfg = grid.Config(setting.algorithm, setting.scaling, setting.metric, int(setting.min_cluster_size))
        return grid.cluster(Xt, cfg)
    if setting.algorithm == "hdbscan":
        import hdbscan

        return hdbscan.HDBSCAN(
            min_cluster_size=int(setting.min_cluster_size),
            min_samples=int(setting.min_samples),
            metric=setting.metric,
            core_dist_n_jobs=1,
        ).fit_predict(Xt)
    from schedlab.polaris.optics import optics_labels  # scikit-learn's OPTICS labels, faster

    return optics_labels(
        Xt, int(setting.min_samples), setting.metric, min_cluster_size=int(setting.min_cluster_size)
    )


def profile_silhouettes(Xt: np.ndarray, labels: np.ndarray, metric: str) -> tuple[np.ndarray, pd.DataFrame]:
    """Per-point silhouettes (NaN for outliers) and one row per profile with its size and mean
    silhouette (NaN everywhere with fewer than two profiles). As the authors: silhouettes with
    noise as one more group (:func:`schedlab.polaris.scoring.point_silhouettes`), noise masked.

    >>> Xt = np.array([[0.0], [0.1], [5.0], [5.2], [9.0]])
    >>> s, t = profile_silhouettes(Xt, np.array([0, 0, 1, 1, -1]), "euclidean")
    >>> bool(np.isnan(s[-1])), t["rows"].tolist(), bool((t["silhouette"] > 0.9).all())
    (True, [2, 2], True)
    """
    labels = np.asarray(labels)
    clustered = labels >= 0
    point = np.full(labels.size, np.nan)
    profiles = np.unique(labels[clustered])
    if profiles.size >= 2:
        point[clustered] = scoring.point_silhouettes(Xt, labels, metric)[clustered]
    table = pd.DataFrame(
        {
            "profile": profiles.astype(int),
            "rows": [int(np.sum(labels == p)) for p in profiles],
            "silhouette": [float(np.mean(point[labels == p])) for p in profiles],
        }
    )
    return point, table.assign(share=table["rows"] / labels.size)[["profile", "rows", "share", "silhouette"]]


def project(Xt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first two principal components of the scaled features and their explained variance."""
    from sklearn.decomposition import PCA

    pca = PCA(n_components=2, svd_solver="full").fit(Xt)
    return pca.transform(Xt), pca.explained_variance_ratio_


def explore(X: np.ndarray, setting: Setting) -> Exploration:
    """Scale, cluster and score ``X`` with ``setting`` (deterministic: no randomness involved).

    BLAS and OpenMP run single-threaded, as in the grid (:func:`schedlab.polaris.grid.compute_one`):
    on a busy machine OPTICS' many small distance queries are 10-20 times slower with a thread
    pool than without one, and the labels stay the grid's.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _explore(X, setting)


def _explore(X: np.ndarray, setting: Setting) -> Exploration:
    t0 = time.perf_counter()
    Xt = scale(X, setting.scaling)
    labels = np.asarray(cluster_labels(Xt, setting))
    point, table = profile_silhouettes(Xt, labels, setting.metric)
    st = scoring.label_stats(labels)
    with_noise = scoring.silhouette_with_noise(Xt, labels, setting.metric)
    clustered = point[labels >= 0]
    overall = float(np.mean(clustered)) if len(table) >= 2 else float("nan")
    acq = scoring.acquires(st.n_clusters, st.n_outliers, st.n, overall) if len(table) >= 2 else float("nan")
    xy, var = project(Xt)
    return Exploration(
        setting=setting,
        labels=labels,
        point_silhouettes=point,
        per_profile=table,
        n_profiles=int(len(table)),
        noise_share=float(np.mean(labels == -1)),
        silhouette=overall,
        silhouette_noise_as_group=float(with_noise),
        acquires=float(acq),
        projection=xy,
        explained_variance=var,
        seconds=time.perf_counter() - t0,
    )


def _colours(n: int):
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab20" if n > 10 else "tab10")
    return [cmap(i % cmap.N) for i in range(n)]


def figure(result: Exploration, *, label: str = ""):
    """Two panels: the PCA projection coloured by profile (outliers grey crosses) and the
    per-profile silhouettes (bars, overall mean dashed); legends outside the data."""
    import matplotlib.pyplot as plt

    s = result.setting
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [1.3, 1]})
    noise = result.labels == -1
    a.scatter(*result.projection[noise].T, s=10, marker="x", color="0.6", label=f"outliers ({noise.sum()})")
    colours = _colours(result.n_profiles)
    for colour, row in zip(colours, result.per_profile.itertuples()):
        pts = result.projection[result.labels == row.profile]
        a.scatter(*pts.T, s=12, color=colour, label=f"profile {row.profile} ({row.rows})")
    ev = result.explained_variance
    a.set_xlabel(f"PC 1 of the scaled features ({ev[0]:.0%} of the variance)")
    a.set_ylabel(f"PC 2 ({ev[1]:.0%} of the variance)")
    a.set_title(
        f"{s.algorithm.upper()}, {s.scaling}, {s.metric}, min cluster size {s.min_cluster_size}, "
        f"min samples {s.min_samples or 'default'}",
        fontsize=9,
    )
    if result.n_profiles <= 20:
        a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    t = result.per_profile
    b.barh(range(len(t)), t["silhouette"].fillna(0.0), color=colours)
    b.set_yticks(range(len(t)), [f"{p} ({n})" for p, n in zip(t["profile"], t["rows"])], fontsize=7)
    b.invert_yaxis()
    b.set_xlim(-1, 1)
    b.axvline(0, color="black", lw=0.8)
    if np.isfinite(result.silhouette):
        b.axvline(result.silhouette, ls="--", color="C3", label=f"overall {result.silhouette:.2f}")
        b.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), frameon=False)
    b.set_xlabel("mean silhouette of the profile's points (-1 to 1)")
    b.set_ylabel("profile (rows)")
    b.set_title("per-profile silhouette (outliers masked)", fontsize=9)
    fig.suptitle(
        (f"[{label}] " if label else "") + f"{result.n_profiles} profiles, "
        f"{result.noise_share:.0%} outliers, silhouette {result.silhouette:.2f}",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def summary(result: Exploration, n_rows: int) -> str:
    """One Markdown line per number the explorer shows (no hard-coded values)."""
    s = result.per_profile
    best = s.loc[s["silhouette"].idxmax()] if len(s) and s["silhouette"].notna().any() else None
    lines = [
        f"**{result.n_profiles} profiles** on {n_rows} rows; **{result.noise_share:.1%} outliers**.",
        f"Silhouette of the clustered points (the authors' convention): **{result.silhouette:.3f}**; "
        f"with the outliers averaged in as one more group: {result.silhouette_noise_as_group:.3f}; "
        f"ACQUIRES: {result.acquires:.3f}.",
    ]
    if best is not None:
        lines.append(
            f"Most cohesive profile: {int(best.profile)} ({int(best.rows)} rows, silhouette "
            f"{best.silhouette:.3f})."
        )
    lines.append(f"Clustering and scoring took {result.seconds:.2f} s.")
    return "  \n".join(lines)


def explorer(rows: pd.DataFrame, *, initial: Setting | None = None):
    """An ipywidgets panel over ``rows``: controls for every :class:`Setting` field; each change
    redraws the figure and the summary (with the wall time of the whole refresh)."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    from IPython.display import Markdown, display

    X = feature_matrix(rows)
    label = str(rows["data"].iloc[0]) if "data" in rows else ""
    init = initial or Setting()
    controls = {
        "algorithm": widgets.ToggleButtons(options=ALGORITHMS, value=init.algorithm, description="algorithm"),
        "scaling": widgets.Dropdown(options=SCALINGS, value=init.scaling, description="scaling"),
        "metric": widgets.ToggleButtons(options=METRICS, value=init.metric, description="metric"),
        "min_cluster_size": widgets.IntSlider(
            value=init.min_cluster_size,
            min=2,
            max=max(10, len(X) // 4),
            description="min cluster",
            continuous_update=False,
        ),
        "min_samples": widgets.IntSlider(
            value=init.min_samples or 0, min=0, max=100, description="min samples", continuous_update=False
        ),
    }
    out = widgets.Output()

    def refresh(_=None) -> None:
        t0 = time.perf_counter()
        values = {k: w.value for k, w in controls.items()}
        setting = replace(init, **{**values, "min_samples": values["min_samples"] or None})
        result = explore(X, setting)
        with out:
            out.clear_output(wait=True)
            fig = figure(result, label=label)
            display(fig)
            plt.close(fig)
            display(
                Markdown(summary(result, len(X)) + f"  \nWhole refresh: {time.perf_counter() - t0:.2f} s.")
            )

    for w in controls.values():
        w.observe(refresh, names="value")
    refresh()
    note = widgets.HTML("min samples 0 = the grid's default (HDBSCAN: = min cluster size; OPTICS: 5)")
    return widgets.VBox(
        [
            widgets.HBox([controls["algorithm"], controls["metric"]]),
            widgets.HBox([controls["scaling"], controls["min_cluster_size"], controls["min_samples"]]),
            note,
            out,
        ]
    )


def refresh_seconds(rows: pd.DataFrame, settings: list[Setting]) -> pd.DataFrame:
    """Wall time of :func:`explore` plus :func:`figure` (what a widget refresh does) per setting."""
    import matplotlib.pyplot as plt

    X = feature_matrix(rows)
    out = []
    for s in settings:
        t0 = time.perf_counter()
        r = explore(X, s)
        fig = figure(r)
        fig.canvas.draw()
        plt.close(fig)
        out.append({**s.__dict__, "profiles": r.n_profiles, "seconds": time.perf_counter() - t0})
    return pd.DataFrame(out)
