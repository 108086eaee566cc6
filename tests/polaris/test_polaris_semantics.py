"""The authors' clustering semantics (silhouette over non-noise points, OPTICS(min_samples=m)) as
the default, the earlier reading as options; per-profile silhouettes; the 800-row semantics panel."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import silhouette_samples, silhouette_score

from schedlab.polaris import calibration, grid, panel, plots, scoring


def _blobs_with_noise(seed=0):
    # noise on a ring near cluster 0, cluster 1 far away: for cluster 0 the noise is the nearest other
    # group, so keeping it in the distances (the authors) differs from dropping it
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, 2 * np.pi, 15)
    ring = np.column_stack([np.cos(angle), np.sin(angle)]) * rng.uniform(3, 6, (15, 1))
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(30, 1, (30, 2)), ring])
    labels = np.r_[np.zeros(40, int), np.ones(30, int), -np.ones(15, int)]
    return X, labels


def test_non_noise_is_the_authors_masked_mean():
    X, labels = _blobs_with_noise()
    for metric in ("euclidean", "manhattan"):
        # the authors: silhouette_samples on every point (noise a group), mean over labels > -1
        authors = silhouette_samples(X, labels, metric=metric)[labels > -1].mean()
        assert scoring.silhouette(X, labels, metric) == pytest.approx(authors, abs=1e-12)
        assert scoring.silhouette_non_noise(X, labels, metric) == pytest.approx(authors, abs=1e-12)
    # not the same as dropping the noise points from the computation altogether
    dropped = silhouette_score(X[labels >= 0], labels[labels >= 0])
    assert abs(scoring.silhouette(X, labels) - dropped) > 1e-3


def test_with_noise_is_silhouette_score_over_all_points():
    X, labels = _blobs_with_noise()
    assert scoring.silhouette(X, labels, semantics="with_noise") == pytest.approx(silhouette_score(X, labels))
    assert scoring.silhouette_with_noise(X, labels) == pytest.approx(silhouette_score(X, labels))
    assert scoring.silhouette(X, labels) > scoring.silhouette(X, labels, semantics="with_noise")


def test_silhouette_edge_cases_and_errors():
    X, labels = _blobs_with_noise()
    one_cluster = np.where(labels == 1, 0, labels)
    for sem in scoring.SILHOUETTES:
        assert scoring.silhouette(X, one_cluster, semantics=sem) == -1.0
    with pytest.raises(ValueError, match="silhouette must be one of"):
        scoring.silhouette(X, labels, semantics="all")
    with pytest.raises(ValueError, match="explicit rng"):
        scoring.silhouette(X, labels, sample_size=20)
    a = scoring.silhouette(X, labels, sample_size=50, rng=np.random.default_rng(3))
    b = scoring.silhouette(X, labels, sample_size=50, rng=np.random.default_rng(3))
    assert a == b and a != scoring.silhouette(X, labels)


@pytest.mark.parametrize("param", grid.OPTICS_PARAMS)
def test_optics_variants_equal_direct_sklearn_calls(param):
    from sklearn.cluster import OPTICS

    X, _ = _blobs_with_noise(1)
    cfg = grid.Config("optics", "standard_scaler", "manhattan", 12, optics_param=param)
    ours = grid.cluster(X, cfg)
    direct = OPTICS(**{param: 12}, metric="manhattan").fit_predict(X)
    np.testing.assert_array_equal(ours, direct)


def test_optics_variants_differ_and_default_is_the_authors():
    X, _ = _blobs_with_noise(1)
    assert grid.Config("optics", "standard_scaler", "euclidean", 12).optics_param == "min_samples"
    assert grid.Config("optics", "standard_scaler", "euclidean", 12).silhouette == "non_noise"
    a = grid.cluster(X, grid.Config("optics", "standard_scaler", "euclidean", 12, optics_param="min_samples"))
    b = grid.cluster(
        X, grid.Config("optics", "standard_scaler", "euclidean", 12, optics_param="min_cluster_size")
    )
    assert not np.array_equal(a, b)
    with pytest.raises(ValueError, match="optics_param"):
        grid.Config("optics", "standard_scaler", "euclidean", 12, optics_param="eps")


def test_semantics_enter_cache_key_and_evaluate(tmp_path):
    X, _ = _blobs_with_noise(2)
    kw = dict(
        algorithms=["hdbscan"], transforms=["standard_scaler"], metrics=["euclidean"], min_cluster_sizes=[8]
    )
    theirs = grid.run_grid(X, grid.configs(**kw), tmp_path, progress=False)
    ours = grid.run_grid(X, grid.configs(**kw, silhouette="with_noise"), tmp_path, progress=False)
    assert theirs.key[0] != ours.key[0] and len(list(tmp_path.glob("*.json"))) == 2
    assert (theirs.n_clusters[0], theirs.n_outliers[0]) == (ours.n_clusters[0], ours.n_outliers[0])
    idx, labels = grid.load_labels(tmp_path, theirs.key[0])
    Xt = grid.transform(X[idx], "standard_scaler")
    assert theirs.avg_silhouette[0] == pytest.approx(scoring.silhouette(Xt, labels), abs=1e-12)
    assert ours.avg_silhouette[0] == pytest.approx(silhouette_score(Xt, labels), abs=1e-12)
    assert theirs.silhouette[0] == "non_noise" and ours.silhouette[0] == "with_noise"


def test_per_profile_silhouettes_weighted_mean_is_the_run_silhouette():
    X, labels = _blobs_with_noise(4)
    t = scoring.per_profile_silhouettes(X, labels, "manhattan")
    assert t.profile.tolist() == [0, 1, -1] and t.rows.tolist() == [40, 30, 15]
    point = silhouette_samples(X, labels, metric="manhattan")
    np.testing.assert_allclose(t.silhouette, [point[labels == p].mean() for p in (0, 1, -1)], atol=1e-12)
    cl = t[t.profile >= 0]
    assert (cl.silhouette * cl.rows).sum() / cl.rows.sum() == pytest.approx(
        scoring.silhouette(X, labels, "manhattan")
    )
    assert t.share.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="two groups"):
        scoring.per_profile_silhouettes(X, np.zeros(len(X), int))
    fig = plots.profile_silhouettes(t, label="TEST", overall=0.5)
    assert "[TEST]" in fig.axes[0].get_title() and len(fig.axes[0].patches) == 3


def _fake_grids():
    base = {
        "transform": "standard_scaler",
        "metric": "euclidean",
        "n_clusters": 3,
        "n_outliers": 10,
        "key": "k",
    }
    rows = []
    for name, sem in panel.SEMANTICS.items():
        for algo in ("hdbscan", "optics"):
            for m, sil_nn, sil_wn in ((20, 0.6, 0.3), (40, 0.5, 0.45)):
                s = sil_nn if sem["silhouette"] == "non_noise" else sil_wn
                rows.append(
                    {
                        **base,
                        **sem,
                        "semantics": name,
                        "algorithm": algo,
                        "min_cluster_size": m,
                        "avg_silhouette": s,
                        "scores_v1": s,
                    }
                )
    return pd.DataFrame(rows)


def test_semantics_best_and_gain_tables():
    g = _fake_grids()
    best = panel.semantics_best(g)
    assert len(best) == 8
    pick = best.set_index(["semantics", "algorithm"])
    assert pick.loc[("authors", "hdbscan"), "min_cluster_size"] == 20
    assert pick.loc[("earlier", "hdbscan"), "min_cluster_size"] == 40
    gain = panel.silhouette_gain(g).set_index(["algorithm", "optics_param"])
    assert gain.loc[("hdbscan", "min_samples"), "min"] == pytest.approx(0.05)
    assert gain.loc[("hdbscan", "min_samples"), "max"] == pytest.approx(0.3)
    summ = panel.semantics_summary(best, panel.silhouette_gain(g))
    assert set(summ["best"]) == {"authors.hdbscan", "authors.optics", "earlier.hdbscan", "earlier.optics"}


def test_real_rows_authors_silhouette_is_higher_and_spread_is_small(calib_rows, tmp_path):
    X = calibration.feature_matrix(calib_rows)
    kw = dict(
        algorithms=["hdbscan"], transforms=["yeo-johnson"], metrics=["manhattan"], min_cluster_sizes=[20]
    )
    theirs = grid.run_grid(X, grid.configs(**kw), tmp_path, progress=False).iloc[0]
    ours = grid.run_grid(X, grid.configs(**kw, silhouette="with_noise"), tmp_path, progress=False).iloc[0]
    # measured on the 800 real rows: 0.522 vs 0.207 on the same labels (4 profiles, 296 outliers)
    assert theirs.n_clusters == ours.n_clusters >= 2
    assert theirs.avg_silhouette - ours.avg_silhouette > 0.1
    Xs = grid.transform(X, "standard_scaler")
    spread = panel.table2_spread(Xs, calib_rows, repeats=5, rng=np.random.default_rng(0))
    assert spread.shape == (3, 3) and (spread.to_numpy() > 0).all() and (spread.to_numpy() < 0.1).all()
