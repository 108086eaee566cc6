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
