"""Figures of the case study: score-vs-parameter (grid), Figure 4 boxplots and heatmaps, per-profile
silhouettes, SHAP, Figure 5.

Every function returns a matplotlib Figure; ``label`` is printed in the title (``SYNTHETIC`` for
the labelled stand-in, ``REAL`` for the authors' data), axes carry units (the Alibaba PAI trace's,
see :data:`FEATURE_UNITS`), legends sit outside the data, and where the paper prints a number the
caller passes it in (read from ``reference/polaris.yaml`` with
:func:`schedlab.reference.paper_values`, never typed here) and it is drawn over ours.

Examples
--------
>>> feature_label("cpu_usage")
'CPU usage (% of a core)'
>>> fig5_paper_points({"fig5.share_le_5pct": 0.8, "fig5.share_le_20pct": 0.9})
[(0.05, 0.8, 'paper: 80 % of jobs within 5 %'), (0.2, 0.9, 'paper: 90 % of jobs within 20 %')]
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter  # noqa: E402

from schedlab.polaris import duration as dur  # noqa: E402

#: readable names of the 17 features (paper, footnote 3)
FEATURE_NAMES: dict[str, str] = {
    "inst_num": "instances",
    "start_time": "start time",
    "end_time": "end time",
    "plan_cpu": "planned CPU",
    "plan_mem": "planned memory",
    "plan_gpu": "planned GPU",
    "cpu_usage": "CPU usage",
    "gpu_wrk_util": "GPU working utilisation",
    "avg_mem": "average memory",
    "max_mem": "maximum memory",
    "avg_gpu_wrk_mem": "average GPU memory",
    "max_gpu_wrk_mem": "maximum GPU memory",
    "read": "network read",
    "write": "network write",
    "read_count": "network reads",
    "write_count": "network writes",
    "duration": "duration",
}
#: units of the 17 features as the Alibaba PAI trace gives them (data README: CPU and GPU in % of
#: one core / GPU, memory in GB, read/write in bytes, times in seconds of the trace's clock)
FEATURE_UNITS: dict[str, str] = {
    "inst_num": "count",
    "start_time": "s, trace clock",
    "end_time": "s, trace clock",
    "plan_cpu": "% of a core",
    "plan_mem": "GB",
    "plan_gpu": "% of a GPU",
    "cpu_usage": "% of a core",
    "gpu_wrk_util": "% of a GPU",
    "avg_mem": "GB",
    "max_mem": "GB",
    "avg_gpu_wrk_mem": "GB",
    "max_gpu_wrk_mem": "GB",
    "read": "bytes",
    "write": "bytes",
    "read_count": "count",
    "write_count": "count",
    "duration": "s",
}
#: axis labels of the grid parameters and scores
GRID_LABELS: dict[str, str] = {
    "transform": "data transformation",
    "transform_function": "data transformation",
    "metric": "distance metric",
    "min_cluster_size": "min cluster size (points)",
    "scores_v1": "ACQUIRES (scores_v1, higher is better)",
    "scores_v3": "scores_v3 (higher is better)",
    "CCPM": "CCPM (silhouette + 1/DB)",
    "avg_silhouette": "mean silhouette (-1 to 1)",
}
#: Figure 5's printed shares in ``reference/polaris.yaml``: id -> relative-error threshold
FIG5_PAPER_THRESHOLDS: dict[str, float] = {
    "fig5.share_le_5pct": 0.05,
    "fig5.share_le_20pct": 0.2,
    "fig5.share_le_500pct": 5.0,
}


def feature_label(feature: str) -> str:
    """``"<readable name> (<unit>)"`` for one of the 17 features (the raw name if unknown)."""
    name = FEATURE_NAMES.get(feature, feature)
    unit = FEATURE_UNITS.get(feature)
    return f"{name} ({unit})" if unit else name


def _pct(x: float) -> str:
    return f"{100 * x:g} %"


def fig5_paper_points(values: dict[str, float]) -> list[tuple[float, float, str]]:
    """Figure 5's printed (threshold, share, text) points from ``paper_values("polaris", "fig5.")``.

    The "500 %" point is the authors' code's reading of the text's "5 %" (:mod:`.duration`)."""
    points = []
    for key, thr in FIG5_PAPER_THRESHOLDS.items():
        if key in values:
            reading = " (authors' code)" if thr >= 1 else ""
            points.append(
                (thr, float(values[key]), f"paper{reading}: {_pct(values[key])} of jobs within {_pct(thr)}")
            )
    return points


def _title(text: str, label: str) -> str:
    return f"[{label}] {text}" if label else text


def _legend_below(fig, ax, ncol: int = 2, fontsize: int = 7) -> None:
    """One legend under the axes (outside the data)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.2),
            ncol=ncol,
            fontsize=fontsize,
            frameon=False,
        )


def score_vs_parameters(
    table: pd.DataFrame,
    score: str = "scores_v1",
    *,
    label: str = "",
    transform_col: str = "transform_function",
    title: str = "",
    reference: dict[str, float] | None = None,
):
    """``score`` (ACQUIRES by default) against transform, metric and min cluster size (the
    authors' three panels). ``reference`` maps a legend text to a value drawn as a dashed line in
    every panel (e.g. the authors' best HDBSCAN ACQUIRES from ``reference/polaris.yaml``)."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True)
    for ax, col in zip(axes, (transform_col, "metric", "min_cluster_size")):
        groups = [(k, g[score].dropna().to_numpy()) for k, g in table.groupby(col)]
        ax.boxplot(
            [g for _, g in groups], tick_labels=[str(k) for k, _ in groups], medianprops={"color": "black"}
        )
        for i, (text, value) in enumerate((reference or {}).items()):
            ax.axhline(value, ls="--", color=f"C{i + 1}", lw=1.2, label=f"{text}: {value:.3f}")
        ax.set_xlabel(GRID_LABELS.get(col, col))
        ax.tick_params(axis="x", rotation=20)
    axes[0].set_ylabel(GRID_LABELS.get(score, score))
    fig.suptitle(_title(title or f"{GRID_LABELS.get(score, score)} by grid parameter", label))
    fig.tight_layout()
    if reference:
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
        fig.subplots_adjust(bottom=0.3)
    return fig


def profile_std_table(df: pd.DataFrame, features=None, *, profile_col: str = "profile") -> pd.DataFrame:
    """Per-profile standard deviation of each feature (the sort key of Figure 4): one row per
    ``(feature, profile)`` with ``std``, ``n`` and ``rank`` (0 = lowest std, the x order).

    >>> d = pd.DataFrame({"profile": [0, 0, 1, 1], "x": [1.0, 1.0, 0.0, 4.0]})
    >>> t = profile_std_table(d, ["x"])
    >>> t["profile"].tolist(), t["std"].round(4).tolist(), t["rank"].tolist()
    ([0, 1], [0.0, 2.8284], [0, 1])
    """
    from schedlab.polaris.schema import FEATURES

    features = list(features or FEATURES)
    g = df.groupby(profile_col)
    rows = []
    for f in features:
        std = g[f].std().fillna(0.0)  # a one-row profile has no spread
        n = g[f].size()
        # ties (e.g. several constant profiles) broken by profile id so the order is reproducible
        order = sorted(std.index, key=lambda p: (std[p], p))
        rows += [
            {"feature": f, "profile": p, "std": float(std[p]), "n": int(n[p]), "rank": r}
            for r, p in enumerate(order)
        ]
    return pd.DataFrame(rows)


def _boxes(ax, df, feature, order, profile_col, std):
    data = [df.loc[df[profile_col] == p, feature].to_numpy() for p in order]
    ax.boxplot(
        data,
        tick_labels=[str(int(p)) if float(p).is_integer() else str(p) for p in order],
        showfliers=False,
        widths=0.6,
        medianprops={"color": "black"},
    )
    lo = np.nanmin([np.min(d) for d in data if d.size]) if data else 0
    hi = np.nanmax([np.max(d) for d in data if d.size]) if data else 1
    med = np.nanmedian(np.concatenate(data)) if data else 0
    # heavy-tailed byte/count features: a linear axis shows one box; symlog keeps all readable
    if lo >= 0 and hi > 0 and hi > 100 * max(abs(med), 1e-12):
        # linear up to the decade at or below the median, labels at 0 and at the decades from
        # there up: the decades matplotlib also labels inside the linear part sit a few pixels
        # above "0" and the two labels ran together
        thresh = 10 ** np.floor(np.log10(max(abs(med), 1e-3)))
        ax.set_yscale("symlog", linthresh=thresh)
        y0, y1 = ax.get_ylim()
        ax.set_ylim(y0, y1 * 30)  # head room (a factor on a log axis) for the three std labels
        decades = 10.0 ** np.arange(np.log10(thresh), np.ceil(np.log10(y1 * 30)) + 1)
        ax.yaxis.set_major_locator(FixedLocator([0.0, *decades]))
    else:  # head room for the three std labels, above the boxes
        y0, y1 = ax.get_ylim()
        ax.set_ylim(y0, y1 + 0.25 * (y1 - y0))
    box = dict(boxstyle="round,pad=0.2", alpha=0.85)
    ax.text(
        0.01,
        0.97,
        f"min std {std.iloc[0]:.3g} (p {order[0]:g})",
        transform=ax.transAxes,
        va="top",
        fontsize=6,
        color="white",
        bbox={**box, "color": "tab:green"},
    )
    ax.text(
        0.99,
        0.97,
        f"max std {std.iloc[-1]:.3g} (p {order[-1]:g})",
        transform=ax.transAxes,
        va="top",
        ha="right",
        fontsize=6,
        color="white",
        bbox={**box, "color": "tab:red"},
    )
    ax.text(
        0.5,
        0.97,
        f"mean std {std.mean():.3g}",
        transform=ax.transAxes,
        va="top",
        ha="center",
        fontsize=6,
        color="white",
        bbox={**box, "color": "darkturquoise"},
    )


def feature_boxplots(df: pd.DataFrame, feature: str, *, profile_col: str = "profile", label: str = ""):
    """Figure 4, one feature: one box per profile, profiles sorted by the feature's standard
    deviation (ascending, left to right), min/max/mean std in green/red/turquoise as the paper."""
    std = df.groupby(profile_col)[feature].std().fillna(0)
    order = sorted(std.index, key=lambda p: (std[p], p))
    std = std[order]
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(std)), 3.8))
    _boxes(ax, df, feature, order, profile_col, std)
    ax.set_xlabel("profile (sorted by standard deviation, ascending; -1 = outliers)")
    ax.set_ylabel(feature_label(feature) + (", symlog" if ax.get_yscale() == "symlog" else ""))
    ax.set_title(
        _title(f"Figure 4: {FEATURE_NAMES.get(feature, feature)} per profile (best HDBSCAN run)", label),
        fontsize=9,
    )
    fig.tight_layout()
    return fig


def feature_boxplots_grid(
    df: pd.DataFrame, features=None, *, profile_col: str = "profile", label: str = "", ncols: int = 3
):
    """Figure 4 for all features: one panel per feature (in the given order), in each panel the
    profiles sorted by that feature's standard deviation as the authors did; fliers hidden, y
    axis symlog for heavy-tailed features (noted in the panel's y label). Panel titles are the
    raw column names (what the per-panel tests and the CSVs use); y labels carry the units."""
    from schedlab.polaris.schema import FEATURES

    features = list(features or FEATURES)
    nrows = -(-len(features) // ncols)
    n_prof = df[profile_col].nunique()
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(ncols * max(4.5, 0.22 * n_prof + 1.5), 2.7 * nrows + 0.6), squeeze=False
    )
    stds = profile_std_table(df, features, profile_col=profile_col)
    for ax, f in zip(axes.flat, features):
        s = stds[stds.feature == f].sort_values("rank")
        _boxes(ax, df, f, s.profile.tolist(), profile_col, s.set_index("profile")["std"])
        ax.set_title(f, fontsize=8)
        ax.set_ylabel(
            f"{FEATURE_UNITS.get(f, '')}" + (", symlog" if ax.get_yscale() == "symlog" else ""), fontsize=7
        )
        ax.tick_params(axis="both", labelsize=6)
        ax.tick_params(axis="x", rotation=90 if n_prof > 15 else 0)
    for ax in list(axes.flat)[len(features) :]:
        ax.axis("off")
    fig.suptitle(
        _title(
            f"Figure 4: the {len(features)} usage features per profile (best HDBSCAN run); in each "
            "panel profiles sorted by that feature's standard deviation, ascending (-1 = outliers)",
            label,
        ),
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    return fig


def metadata_profile_table(
    df: pd.DataFrame, column: str, *, profile_col: str = "profile", top: int | None = 20
) -> pd.DataFrame:
    """Counts of the ``top`` most frequent values of ``column`` per profile (rows: values, most
    frequent first; columns: profiles). ``top=None`` keeps every value.

    >>> d = pd.DataFrame({"profile": [0, 0, 1], "w": ["a", "b", "a"]})
    >>> metadata_profile_table(d, "w").values.tolist()
    [[1, 1], [1, 0]]
    """
    vc = df[column].fillna("<empty>").astype(str).value_counts()
    values = vc.index[:top] if top else vc.index
    sub = df.assign(**{column: df[column].fillna("<empty>").astype(str)})
    sub = sub[sub[column].isin(values)]
    tab = pd.crosstab(sub[column], sub[profile_col]).reindex(values)
    return tab.fillna(0).astype(int)


def metadata_heatmap(
    df: pd.DataFrame, column: str, *, profile_col: str = "profile", top: int | None = 20, label: str = ""
):
    """Metadata value vs profile: colour = share of the value's rows in each profile (rows sum to
    1), row label = value (rows). Rows are the ``top`` most frequent values."""
    counts = metadata_profile_table(df, column, profile_col=profile_col, top=top)
    tab = counts.div(counts.sum(axis=1), axis=0)
    fig, ax = plt.subplots(figsize=(max(6, 0.32 * tab.shape[1] + 3), max(3, 0.28 * tab.shape[0] + 1.5)))
    im = ax.imshow(tab.to_numpy(), aspect="auto", cmap="viridis", vmin=0, vmax=1)
    cols = [str(int(c)) if float(c).is_integer() else str(c) for c in tab.columns]
    ax.set_xticks(range(tab.shape[1]), cols, fontsize=7)
    ax.set_yticks(
        range(tab.shape[0]), [f"{str(i)[:16]} ({counts.loc[i].sum():,})" for i in tab.index], fontsize=7
    )
    ax.set_xlabel("profile (-1 = outliers)")
    ax.set_ylabel(f"{column} value (rows in the sample)")
    fig.colorbar(im, ax=ax, label="share of the value's rows in the profile (0-1)")
    what = f"top {len(tab)} values" if top and len(tab) == top else f"all {len(tab)} values"
    ax.set_title(_title(f"Figure 4 metadata: {column} vs profile ({what})", label), fontsize=9)
    fig.tight_layout()
    return fig


def shap_bar(mean_abs: pd.DataFrame, top: int = 20, *, label: str = ""):
    """SHAP summary (bar): top features by mean |SHAP| summed over classes, stacked by class;
    the class legend sits right of the axes."""
    total = mean_abs.sum(axis=1).sort_values(ascending=False).head(top)[::-1]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(total) + 1.8))
    left = np.zeros(len(total))
    for cls in mean_abs.columns:
        vals = mean_abs.loc[total.index, cls].to_numpy()
        ax.barh(range(len(total)), vals, left=left, label=str(cls))
        left += vals
    ax.set_yticks(range(len(total)), total.index, fontsize=7)
    ax.set_ylabel("one-hot metadata feature (column_value)")
    ax.set_xlabel("mean |SHAP value| (log-odds, summed over profiles)")
    ax.set_title(
        _title(f"Classifier explanation: top {len(total)} one-hot metadata features by SHAP", label),
        fontsize=9,
    )
    if mean_abs.shape[1] <= 30:
        ax.legend(
            fontsize=6,
            ncol=1 + mean_abs.shape[1] // 16,
            title="profile",
            title_fontsize=6,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            frameon=False,
        )
    fig.tight_layout()
    return fig


def profile_silhouettes(table: pd.DataFrame, *, label: str = "", overall: float | None = None):
    """Per-profile mean silhouette (:func:`schedlab.polaris.scoring.per_profile_silhouettes`):
    one bar per profile (x: profile, the outliers group ``-1`` last, in grey) with the share of
    negative silhouettes printed on each bar, the mean over clustered points dashed (``overall``).
    Readers compare with the paper's discussion of profiles 8/9, 5/6/11 and 10."""
    fig, ax = plt.subplots(figsize=(max(5.0, 0.35 * len(table) + 2.5), 3.6))
    colours = ["0.6" if p < 0 else "C0" for p in table["profile"]]
    x = np.arange(len(table))
    ax.bar(x, table["silhouette"], color=colours)
    for xi, (val, neg) in enumerate(zip(table["silhouette"], table["share_negative"])):
        ax.annotate(
            f"{neg:.0%}",
            (xi, val),
            xytext=(0, 2 if val >= 0 else -8),
            textcoords="offset points",
            ha="center",
            fontsize=5,
        )
    ax.set_xticks(x, [str(int(p)) for p in table["profile"]], fontsize=7)
    ax.axhline(0, color="k", lw=0.6)
    if overall is not None:
        ax.axhline(overall, ls="--", color="C1", label=f"mean over clustered points {overall:.2f}")
    ax.set_xlabel("profile (cluster label; -1 = outliers group)")
    ax.set_ylabel("mean silhouette (-1 to 1)")
    ax.set_title(
        _title("Per-profile silhouette (number on a bar: share of its points below 0)", label), fontsize=9
    )
    _legend_below(fig, ax, ncol=1)
    fig.tight_layout()
    return fig


def figure5(
    err: np.ndarray,
    profiles: np.ndarray,
    *,
    label: str = "",
    paper: list[tuple[float, float, str]] | None = None,
):
    """Figure 5: (a) CDF of the relative duration error (x in %, log scale as the paper's) with
    both readings of "5 %" and the paper's printed (threshold, share) points (``paper``, from
    :func:`fig5_paper_points`); (b) per-profile boxes, errors above 100 % shaded as the paper."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.6))
    percent = FuncFormatter(lambda v, _: f"{100 * v:g} %")
    x, y = dur.ecdf(err)
    a.step(x, y, where="post", color="C0", label="ours: CDF over test jobs")
    a.set_xscale("symlog", linthresh=0.01)
    for name, thr in dur.READINGS.items():
        share = float(np.mean(err <= thr))
        a.axvline(thr, ls="--", color="C1" if thr < 1 else "C2", label=f"{name}: ours {share:.1%} of jobs")
    for i, (thr, share, text) in enumerate(paper or []):
        a.plot(
            [thr],
            [share],
            marker="*",
            ms=13,
            ls="none",
            color=f"C{3 + i}",
            markeredgecolor="black",
            label=text,
        )
    a.xaxis.set_major_formatter(percent)
    a.set_xlabel("relative duration error |ŷ−y|/y (%, symlog)")
    a.set_ylabel("share of test jobs (CDF, 0-1)")
    a.set_ylim(0, 1.02)
    a.set_title(_title("Figure 5a: CDF of the duration error", label), fontsize=9)
    _legend_below(fig, a, ncol=2)
    order = sorted(set(profiles))
    b.boxplot(
        [err[profiles == p] for p in order],
        tick_labels=[str(p) for p in order],
        medianprops={"color": "black"},
    )
    # two-digit profile ids side by side run together at the default size ("10111213")
    b.tick_params(axis="x", labelsize=7 if len(order) > 12 else 10, rotation=90 if len(order) > 40 else 0)
    b.set_yscale("symlog", linthresh=0.01)
    y0, y1 = b.get_ylim()
    b.axhspan(
        1.0, max(y1, 2.0), color="tab:green", alpha=0.12, label="error above 100 % (the paper's outliers)"
    )
    b.set_ylim(y0, max(y1, 2.0))
    b.yaxis.set_major_formatter(percent)
    b.set_xlabel("predicted profile")
    b.set_ylabel("relative duration error (%, symlog)")
    b.set_title(_title("Figure 5b: duration error per predicted profile", label), fontsize=9)
    _legend_below(fig, b, ncol=1)
    fig.tight_layout()
    return fig
