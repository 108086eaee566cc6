"""Figures of the case study: score-vs-parameter (grid), Figure 4 boxplots and heatmaps, Figure 5.

Every function returns a matplotlib Figure; ``label`` is printed in the title (e.g. "SYNTHETIC").
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from schedlab.profiling import duration as dur  # noqa: E402


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


def feature_boxplots(df: pd.DataFrame, feature: str, *, profile_col: str = "profile", label: str = ""):
    """Figure 4: one box per profile, profiles sorted by the feature's standard deviation."""
    std = df.groupby(profile_col)[feature].std().fillna(0).sort_values()
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(std)), 3.6))
    ax.boxplot([df.loc[df[profile_col] == p, feature].to_numpy() for p in std.index],
               tick_labels=[str(p) for p in std.index], showfliers=False)
    ax.set_xlabel("profile (sorted by std, ascending)")
    ax.set_ylabel(feature)
    ax.set_title(_title(f"{feature}: min std {std.iloc[0]:.3g} (profile {std.index[0]}), "
                        f"max std {std.iloc[-1]:.3g} (profile {std.index[-1]}), mean std {std.mean():.3g}", label),
                 fontsize=9)
    fig.tight_layout()
    return fig


def metadata_heatmap(df: pd.DataFrame, column: str, *, profile_col: str = "profile", top: int = 20,
                     label: str = ""):
    """Share of each (top-``top``) metadata value's rows per profile."""
    top_values = df[column].value_counts().head(top).index
    sub = df[df[column].isin(top_values)]
    tab = pd.crosstab(sub[column], sub[profile_col], normalize="index")
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * tab.shape[1]), max(3, 0.3 * tab.shape[0])))
    im = ax.imshow(tab.to_numpy(), aspect="auto", cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(tab.shape[1]), [str(c) for c in tab.columns], fontsize=7)
    ax.set_yticks(range(tab.shape[0]), [str(i)[:14] for i in tab.index], fontsize=7)
    ax.set_xlabel("profile")
    fig.colorbar(im, ax=ax, label="share of the value's rows")
    ax.set_title(_title(f"{column} vs profile", label), fontsize=9)
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
