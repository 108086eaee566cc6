"""The PolarisProfiler explorer: its numbers against direct library calls."""

import hdbscan
import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import OPTICS
from sklearn.metrics import silhouette_samples

from schedlab.polaris import explore, grid
from schedlab.polaris.schema import FEATURES


@pytest.fixture(scope="module")
def real_rows():
    return explore.load_rows("real", n=300, seed=1)


def test_load_rows_samples_the_real_rows_reproducibly(real_rows):
    again = explore.load_rows("real", n=300, seed=1)
    assert len(real_rows) == 300 and (real_rows["data"] == "REAL").all()
    pd.testing.assert_frame_equal(real_rows, again)
    assert not explore.load_rows("real", n=300, seed=2).equals(real_rows)
    assert len(explore.load_rows("real", n=None)) == 800
    assert np.isfinite(explore.feature_matrix(real_rows)).all()


def test_synthetic_source_names_the_missing_file(tmp_path):
    missing = tmp_path / "joined_faithful.parquet"
    with pytest.raises(FileNotFoundError, match="joined_faithful.parquet"):
        explore.load_rows("synthetic", joined=missing)
    with pytest.raises(ValueError, match="source"):
        explore.load_rows("trace")


def test_synthetic_source_reads_a_joined_table(tmp_path, real_rows):
    # a joined table in the pipeline's layout (its own duration column is recomputed from the times)
    path = tmp_path / "joined.parquet"
    real_rows.drop(columns=["data"]).to_parquet(path)
    rows = explore.load_rows("synthetic", n=50, seed=0, joined=path)
    assert len(rows) == 50 and (rows["data"] == "SYNTHETIC").all()
    np.testing.assert_allclose(rows["duration"], rows["end_time"] - rows["start_time"])


@pytest.mark.parametrize(
    "setting",
    [
        explore.Setting("hdbscan", 15, None, "yeo-johnson", "euclidean"),
        explore.Setting("hdbscan", 10, 3, "standard_scaler", "manhattan"),
        explore.Setting("optics", 15, None, "robust_scaler", "euclidean"),
        explore.Setting("optics", 10, 8, "minmax_scaler", "manhattan"),
    ],
)
def test_labels_equal_a_direct_call_and_silhouettes_add_up(real_rows, setting):
    X = explore.feature_matrix(real_rows)
    r = explore.explore(X, setting)
    # direct calls, written out here (not through the module's helpers)
    Xt = grid.transform(X, setting.scaling)
    if setting.algorithm == "hdbscan":
        kw = {} if setting.min_samples is None else {"min_samples": setting.min_samples}
        direct = hdbscan.HDBSCAN(
            min_cluster_size=setting.min_cluster_size, metric=setting.metric, **kw
        ).fit_predict(Xt)
    elif setting.min_samples is None:  # the grid's default: the authors' OPTICS(min_samples=m)
        direct = OPTICS(min_samples=setting.min_cluster_size, metric=setting.metric).fit_predict(Xt)
    else:
        direct = OPTICS(
            min_cluster_size=setting.min_cluster_size, min_samples=setting.min_samples, metric=setting.metric
        ).fit_predict(Xt)
    np.testing.assert_array_equal(r.labels, direct)

    clustered = direct >= 0
    assert r.noise_share == pytest.approx(np.mean(~clustered))
    t = r.per_profile
    assert t["rows"].sum() == clustered.sum() and list(t["profile"]) == sorted(set(direct[clustered]))
    assert r.n_profiles >= 2, "choose settings that find at least two profiles"
    # the authors' convention: every point's silhouette with noise as a group, noise masked
    overall = float(np.mean(silhouette_samples(Xt, direct, metric=setting.metric)[clustered]))
    assert r.silhouette == pytest.approx(overall, abs=1e-12)
    weighted = float(np.sum(t["silhouette"] * t["rows"]) / t["rows"].sum())
    assert weighted == pytest.approx(overall, abs=1e-12)
    assert np.isnan(r.point_silhouettes[~clustered]).all()
    assert r.projection.shape == (len(X), 2) and r.explained_variance[0] >= r.explained_variance[1]


def test_fewer_than_two_profiles_give_nan_silhouettes():
    X = np.random.default_rng(0).normal(size=(60, len(FEATURES)))
    r = explore.explore(X, explore.Setting("hdbscan", 50, None, "none", "euclidean"))
    assert r.n_profiles <= 1
    assert np.isnan(r.silhouette) and r.silhouette_noise_as_group == -1.0
    assert r.per_profile["silhouette"].isna().all()


def test_setting_rejects_unknown_values_by_name():
    with pytest.raises(ValueError, match="Setting.scaling"):
        explore.Setting(scaling="zscore")
    with pytest.raises(ValueError, match="Setting.min_cluster_size"):
        explore.Setting(min_cluster_size=1)
    with pytest.raises(ValueError, match="Setting.algorithm"):
        explore.Setting(algorithm="dbscan")


def test_figure_is_labelled_and_keeps_legends_off_the_data(real_rows):
    r = explore.explore(explore.feature_matrix(real_rows), explore.Setting(min_cluster_size=15))
    fig = explore.figure(r, label="REAL")
    assert fig._suptitle.get_text().startswith("[REAL]")
    fig.canvas.draw()
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is not None:
            a, b = ax.get_window_extent(), leg.get_window_extent()
            assert b.x0 >= a.x1 or b.y1 <= a.y0, ax.get_title()
    text = explore.summary(r, len(real_rows))
    assert f"{r.n_profiles} profiles" in text and f"{r.noise_share:.1%} outliers" in text
