"""Figure 4: all 17 features, profiles sorted by std as the authors; metadata heatmap counts."""

import numpy as np
import pandas as pd

from schedlab.polaris import plots
from schedlab.polaris.schema import FEATURES


def _frame(rng, n=400):
    df = pd.DataFrame(rng.lognormal(size=(n, len(FEATURES))), columns=list(FEATURES))
    df["profile"] = rng.integers(-1, 6, n)
    # make the spread depend on the profile, differently per feature
    for j, f in enumerate(FEATURES):
        df[f] *= 1 + ((df.profile + j) % 7)
    df["workload"] = rng.choice(["bert", "ctr", "rl"], n)
    df["job_name"] = rng.choice([f"j{i}" for i in range(30)], n)
    return df


def test_profile_order_is_ascending_std_in_every_panel():
    df = _frame(np.random.default_rng(0))
    fig = plots.feature_boxplots_grid(df, label="SYNTHETIC")
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == list(FEATURES)  # all 17, in order
    for ax, f in zip(panels, FEATURES):
        # independent: numpy std (ddof=1) per profile, ascending
        stds = {p: np.std(df.loc[df.profile == p, f].to_numpy(), ddof=1) for p in sorted(df.profile.unique())}
        want = [str(p) for p, _ in sorted(stds.items(), key=lambda kv: (kv[1], kv[0]))]
        assert [t.get_text() for t in ax.get_xticklabels()] == want, f
    assert "SYNTHETIC" in fig._suptitle.get_text()
    t = plots.profile_std_table(df)
    assert len(t) == len(FEATURES) * df.profile.nunique()
    row = t[(t.feature == "cpu_usage") & (t.profile == 2)].iloc[0]
    assert np.isclose(row["std"], df.loc[df.profile == 2, "cpu_usage"].std())


def test_metadata_table_counts_and_heatmap():
    df = _frame(np.random.default_rng(1))
    tab = plots.metadata_profile_table(df, "job_name", top=5)
    vc = df.job_name.value_counts()
    assert list(tab.index) == list(vc.index[:5])
    assert (tab.sum(axis=1).to_numpy() == vc.iloc[:5].to_numpy()).all()
    assert tab.loc[vc.index[0], 3] == ((df.job_name == vc.index[0]) & (df.profile == 3)).sum()
    fig = plots.metadata_heatmap(df, "workload", top=None, label="SYNTHETIC")
    assert "SYNTHETIC" in fig.axes[0].get_title() and "all 3 values" in fig.axes[0].get_title()
    img = fig.axes[0].images[0].get_array()
    np.testing.assert_allclose(np.asarray(img).sum(axis=1), 1.0)


def _inside_axes(ax, artist) -> bool:
    """True if ``artist``'s window extent overlaps the axes' data area."""
    fig = ax.figure
    fig.canvas.draw()
    a, b = ax.get_window_extent(), artist.get_window_extent()
    return not (b.x1 <= a.x0 or b.x0 >= a.x1 or b.y1 <= a.y0 or b.y0 >= a.y1)


def test_figure5_draws_the_papers_points_and_keeps_legends_off_the_data():
    rng = np.random.default_rng(2)
    err = rng.lognormal(-1, 2, 300)
    prof = rng.integers(0, 3, 300)
    paper = plots.fig5_paper_points(
        {"fig5.share_le_5pct": 0.8, "fig5.share_le_20pct": 0.9, "fig5.share_le_500pct": 0.8}
    )
    assert [(t, s) for t, s, _ in paper] == [(0.05, 0.8), (0.2, 0.9), (5.0, 0.8)]
    fig = plots.figure5(err, prof, label="SYNTHETIC", paper=paper)
    a, b = fig.axes
    stars = [ln for ln in a.get_lines() if ln.get_marker() == "*"]
    assert sorted((float(ln.get_xdata()[0]), float(ln.get_ydata()[0])) for ln in stars) == [
        (0.05, 0.8),
        (0.2, 0.9),
        (5.0, 0.8),
    ]
    # our share at the text's 5 % is in the legend, computed independently here
    texts = [t.get_text() for t in a.get_legend().get_texts()]
    assert any(f"ours {np.mean(err <= 0.05):.1%}" in t for t in texts), texts
    for ax in (a, b):
        assert not _inside_axes(ax, ax.get_legend()), ax.get_title()
        assert "%" in ax.get_ylabel() or "share" in ax.get_ylabel()
    assert "SYNTHETIC" in a.get_title() and "Figure 5a" in a.get_title()


def test_score_figure_reference_line_and_units():
    rng = np.random.default_rng(3)
    t = pd.DataFrame(
        {
            "transform": rng.choice(["standard_scaler", "yeo-johnson"], 40),
            "metric": rng.choice(["euclidean", "manhattan"], 40),
            "min_cluster_size": rng.choice([50, 100], 40),
            "scores_v1": rng.uniform(0, 0.7, 40),
        }
    )
    fig = plots.score_vs_parameters(
        t, transform_col="transform", label="REAL", reference={"authors' best": 0.71778}
    )
    panels = fig.axes
    assert [ax.get_xlabel() for ax in panels] == [
        "data transformation",
        "distance metric",
        "min cluster size (points)",
    ]
    for ax in panels:
        assert any(
            np.allclose(ln.get_ydata(), 0.71778) for ln in ax.get_lines() if ln.get_linestyle() == "--"
        )
    assert fig.legends and "0.718" in fig.legends[0].get_texts()[0].get_text()


def test_every_feature_has_a_unit_on_its_axis():
    df = _frame(np.random.default_rng(4))
    assert set(plots.FEATURE_UNITS) == set(FEATURES) == set(plots.FEATURE_NAMES)
    fig = plots.feature_boxplots(df, "cpu_usage", label="SYNTHETIC")
    assert fig.axes[0].get_ylabel().startswith("CPU usage (% of a core)")
    grid_fig = plots.feature_boxplots_grid(df)
    for ax, f in zip([ax for ax in grid_fig.axes if ax.get_title()], FEATURES):
        assert ax.get_ylabel().startswith(plots.FEATURE_UNITS[f]), f
