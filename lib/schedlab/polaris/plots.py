"""Figures of the case study: score-vs-parameter (grid), Figure 4 boxplots and heatmaps, Figure 5.

Every function returns a matplotlib Figure; ``label`` is printed in the title (e.g. "SYNTHETIC").
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from schedlab.polaris import duration as dur  # noqa: E402


def _title(text: str, label: str) -> str:
    return f"[{label}] {text}" if label else text


def score_vs_parameters(table: pd.DataFrame, score: str = "scores_v1", *, label: str = "",
                        transform_col: str = "transform_function"):
    """ACQUIRES against transform, metric and min cluster size (the authors' three panels)."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for ax, col in zip(axes, (transform_col, "metric", "min_cluster_size")):
        groups = [(k, g[score].dropna().to_numpy()) for k, g in table.groupby(col)]
        ax.boxplot([g for _, g in groups], tick_labels=[str(k) for k, _ in groups])
        ax.set_xlabel(col)
        ax.tick_params(axis="x", rotation=20)
    axes[0].set_ylabel(score)
    fig.suptitle(_title(f"{score} by grid parameter", label))
    fig.tight_layout()
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
        rows += [{"feature": f, "profile": p, "std": float(std[p]), "n": int(n[p]), "rank": r}
                 for r, p in enumerate(order)]
    return pd.DataFrame(rows)


def _boxes(ax, df, feature, order, profile_col, std):
    data = [df.loc[df[profile_col] == p, feature].to_numpy() for p in order]
    ax.boxplot(data, tick_labels=[str(int(p)) if float(p).is_integer() else str(p) for p in order],
               showfliers=False, widths=0.6, medianprops={"color": "black"})
    lo = np.nanmin([np.min(d) for d in data if d.size]) if data else 0
    hi = np.nanmax([np.max(d) for d in data if d.size]) if data else 1
    med = np.nanmedian(np.concatenate(data)) if data else 0
    # heavy-tailed byte/count features: a linear axis shows one box; symlog keeps all readable
    if lo >= 0 and hi > 0 and hi > 100 * max(abs(med), 1e-12):
        ax.set_yscale("symlog", linthresh=max(abs(med), 1e-3))
    else:  # head room for the three std labels
        y0, y1 = ax.get_ylim()
        ax.set_ylim(y0, y1 + 0.2 * (y1 - y0))
    box = dict(boxstyle="round,pad=0.2", alpha=0.85)
    ax.text(0.01, 0.97, f"min std {std.iloc[0]:.3g} (p {order[0]:g})", transform=ax.transAxes, va="top",
            fontsize=6, color="white", bbox={**box, "color": "tab:green"})
    ax.text(0.99, 0.97, f"max std {std.iloc[-1]:.3g} (p {order[-1]:g})", transform=ax.transAxes, va="top",
            ha="right", fontsize=6, color="white", bbox={**box, "color": "tab:red"})
    ax.text(0.5, 0.97, f"mean std {std.mean():.3g}", transform=ax.transAxes, va="top", ha="center", fontsize=6,
            color="white", bbox={**box, "color": "darkturquoise"})


def feature_boxplots(df: pd.DataFrame, feature: str, *, profile_col: str = "profile", label: str = ""):
    """Figure 4, one feature: one box per profile, profiles sorted by the feature's standard
    deviation (ascending, left to right), min/max/mean std in green/red/turquoise as the paper."""
    std = df.groupby(profile_col)[feature].std().fillna(0)
    order = sorted(std.index, key=lambda p: (std[p], p))
    std = std[order]
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(std)), 3.6))
    _boxes(ax, df, feature, order, profile_col, std)
    ax.set_xlabel("profile (sorted by std, ascending; -1 = outliers)")
    ax.set_ylabel(feature)
    ax.set_title(_title(f"Figure 4: {feature} per profile", label), fontsize=9)
    fig.tight_layout()
    return fig


def feature_boxplots_grid(df: pd.DataFrame, features=None, *, profile_col: str = "profile", label: str = "",
                          ncols: int = 3):
    """Figure 4 for all features: one panel per feature (in the given order), in each panel the
    profiles sorted by that feature's standard deviation as the authors did; fliers hidden, y
    axis symlog for heavy-tailed features (noted in the panel's y label)."""
    from schedlab.polaris.schema import FEATURES

    features = list(features or FEATURES)
    nrows = -(-len(features) // ncols)
    n_prof = df[profile_col].nunique()
    fig, axes = plt.subplots(nrows, ncols, figsize=(ncols * max(4.5, 0.22 * n_prof + 1.5), 2.6 * nrows + 0.6),
                             squeeze=False)
    stds = profile_std_table(df, features, profile_col=profile_col)
    for ax, f in zip(axes.flat, features):
        s = stds[stds.feature == f].sort_values("rank")
        _boxes(ax, df, f, s.profile.tolist(), profile_col, s.set_index("profile")["std"])
        ax.set_title(f, fontsize=8)
        ax.set_ylabel(f + (" (symlog)" if ax.get_yscale() == "symlog" else ""), fontsize=7)
        ax.tick_params(axis="both", labelsize=6)
        ax.tick_params(axis="x", rotation=90 if n_prof > 15 else 0)
    for ax in list(axes.flat)[len(features):]:
        ax.axis("off")
    fig.suptitle(_title(f"Figure 4: per-profile boxplots of the {len(features)} features; in each panel profiles "
                        "sorted by that feature's std (ascending; -1 = outliers)", label), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    return fig


def metadata_profile_table(df: pd.DataFrame, column: str, *, profile_col: str = "profile",
                           top: int | None = 20) -> pd.DataFrame:
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


def metadata_heatmap(df: pd.DataFrame, column: str, *, profile_col: str = "profile", top: int | None = 20,
                     label: str = ""):
    """Metadata value vs profile: colour = share of the value's rows in each profile (rows sum to
    1), row label = value (rows). Rows are the ``top`` most frequent values."""
    counts = metadata_profile_table(df, column, profile_col=profile_col, top=top)
    tab = counts.div(counts.sum(axis=1), axis=0)
    fig, ax = plt.subplots(figsize=(max(6, 0.32 * tab.shape[1] + 3), max(3, 0.28 * tab.shape[0] + 1.5)))
    im = ax.imshow(tab.to_numpy(), aspect="auto", cmap="viridis", vmin=0, vmax=1)
    cols = [str(int(c)) if float(c).is_integer() else str(c) for c in tab.columns]
    ax.set_xticks(range(tab.shape[1]), cols, fontsize=7)
    ax.set_yticks(range(tab.shape[0]), [f"{str(i)[:16]} ({counts.loc[i].sum():,})" for i in tab.index], fontsize=7)
    ax.set_xlabel("profile (-1 = outliers)")
    fig.colorbar(im, ax=ax, label="share of the value's rows")
    what = f"top {len(tab)} values" if top and len(tab) == top else f"all {len(tab)} values"
    ax.set_title(_title(f"{column} vs profile ({what}; rows in brackets)", label), fontsize=9)
    fig.tight_layout()
    return fig


def shap_bar(mean_abs: pd.DataFrame, top: int = 20, *, label: str = ""):
    """SHAP summary (bar): top features by mean |SHAP| summed over classes, stacked by class."""
    total = mean_abs.sum(axis=1).sort_values(ascending=False).head(top)[::-1]
    fig, ax = plt.subplots(figsize=(7, 0.3 * len(total) + 1.5))
    left = np.zeros(len(total))
    for cls in mean_abs.columns:
        vals = mean_abs.loc[total.index, cls].to_numpy()
        ax.barh(range(len(total)), vals, left=left, label=str(cls))
        left += vals
    ax.set_yticks(range(len(total)), total.index, fontsize=7)
    ax.set_xlabel("mean |SHAP value| (summed over profiles)")
    ax.set_title(_title(f"SHAP summary, top {len(total)} one-hot features", label), fontsize=9)
    if mean_abs.shape[1] <= 30:
        ax.legend(fontsize=6, ncol=2, title="profile", title_fontsize=6, loc="lower right")
    fig.tight_layout()
    return fig


def figure5(err: np.ndarray, profiles: np.ndarray, *, label: str = ""):
    """Figure 5: (a) CDF of the relative error with both readings of "5 %"; (b) per-profile boxes."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 3.8))
    x, y = dur.ecdf(err)
    a.step(x, y, where="post")
    a.set_xscale("symlog", linthresh=0.01)
    for name, thr in dur.READINGS.items():
        share = float(np.mean(err <= thr))
        a.axvline(thr, ls="--", color="C1" if thr < 1 else "C2", label=f"{name}: {share:.1%} of jobs")
    a.set_xlabel("relative error |ŷ−y|/y")
    a.set_ylabel("CDF")
    a.legend(fontsize=7)
    a.set_title(_title("(a) CDF of duration error", label), fontsize=9)
    order = sorted(set(profiles))
    b.boxplot([err[profiles == p] for p in order], tick_labels=[str(p) for p in order])
    b.set_yscale("symlog", linthresh=0.01)
    b.axhline(1.0, color="green", ls=":", label="100 %")
    b.set_xlabel("predicted profile")
    b.set_ylabel("relative error")
    b.legend(fontsize=7)
    b.set_title(_title("(b) error per predicted profile", label), fontsize=9)
    fig.tight_layout()
    return fig
