"""One distance pass for several labellings: equal to scikit-learn, and a grouped grid equal to
running every configuration alone."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import silhouette_samples

from schedlab.polaris import grid, scoring


def _blobs(rng, n=400, d=5):
    centers = rng.normal(scale=6.0, size=(4, d))
    X = centers[rng.integers(0, 4, size=n)] + rng.normal(size=(n, d))
    X[:10] = X[10]  # duplicated rows: a = b = 0 is possible
    return X


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine"])
def test_many_labellings_equal_sklearn_to_the_last_bit(metric):
    rng = np.random.default_rng(0)
    X = _blobs(rng)
    labellings = [
        rng.integers(-1, 6, size=len(X)),  # noise as a group
        np.r_[np.arange(3), rng.integers(3, 5, size=len(X) - 3)],  # three singletons
        (X[:, 0] > 0).astype(int),
    ]
    many = scoring.point_silhouettes_many(X, labellings, metric)
    for labels, ours in zip(labellings, many):
        np.testing.assert_array_equal(ours, silhouette_samples(X, labels, metric=metric))
    assert (many[1][:3] == 0).all()  # a point alone in its group scores 0, as scikit-learn


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_fused_pass_equals_sklearn_over_many_chunks_and_tiles(metric, order, monkeypatch):
    # chunks of 14 rows (not a multiple of the kernels' 8), 4,500 columns (two full tiles of 2,048
    # and a part), discrete columns and duplicated rows: many tied and zero distances
    rng = np.random.default_rng(3)
    X = _blobs(rng, n=4500, d=6)
    X[:, 2] = rng.integers(0, 3, size=len(X))
    X[100:160] = X[99]
    X = np.asarray(X, order=order)  # a DataFrame's to_numpy() is Fortran-ordered: other product bits
    monkeypatch.setattr(scoring, "SILHOUETTE_WORKING_MEMORY", 0.5)
    assert {s.stop - s.start for s in scoring._chunk_rows(len(X))} == {14, len(X) % 14}
    labellings = [rng.integers(-1, 40, size=len(X)), (X[:, 0] > 0).astype(int)]
    many = scoring.point_silhouettes_many(X, labellings, metric)
    for labels, ours in zip(labellings, many):
        np.testing.assert_array_equal(ours, silhouette_samples(X, labels, metric=metric))


def test_many_labellings_refuses_what_sklearn_refuses():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="labelling 1 has 1 distinct labels"):
        scoring.point_silhouettes_many(X, [[0, 0, 1, 1, 1], [0] * 5])
    with pytest.raises(ValueError, match=r"labelling 0 has shape \(4,\)"):
        scoring.point_silhouettes_many(X, [[0, 0, 1, 1]])
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match="finite X"):
        scoring.point_silhouettes_many(X, [[0, 0, 1, 1, 1]])


def test_grouped_grid_equals_each_configuration_alone(tmp_path):
    rng = np.random.default_rng(1)
    X = _blobs(rng, n=500)
    cfgs = grid.configs(
        transforms=["standard_scaler", "minmax_scaler"],
        metrics=["euclidean", "manhattan"],
        min_cluster_sizes=[5, 15, 40],
    )
    keys = [grid._cache_key(c, grid.fingerprint(X), 0, None, 200) for c in cfgs]
    tasks = grid.share_groups(list(zip(cfgs, keys)), len(X), silhouette_sample=None, optics_subsample=200)
    # HDBSCAN: one task per transform and metric; OPTICS on its own random subsample: alone
    assert sorted(len(t) for t in tasks) == [1] * 12 + [3] * 4
    table = grid.run_grid(X, cfgs, tmp_path, optics_subsample=200, progress=False)
    alone = pd.DataFrame([grid.compute_one(X, c, k, optics_subsample=200)[0] for c, k in zip(cfgs, keys)])
    cols = [c for c in table.columns if c not in grid.TIMING_COLUMNS]
    pd.testing.assert_frame_equal(table[cols], alone[cols], check_exact=True)
    assert table.avg_silhouette.gt(-1).any() and table.n_clusters.nunique() > 1  # not a trivial grid


def test_a_group_must_share_rows_transform_and_metric():
    X = _blobs(np.random.default_rng(2), n=100)
    a, b = grid.configs(
        algorithms=["hdbscan"],
        transforms=["standard_scaler"],
        metrics=["euclidean", "manhattan"],
        min_cluster_sizes=[10],
    )
    with pytest.raises(ValueError, match="do not share"):
        grid.compute_group(X, [(a, "0" * 20), (b, "1" * 20)])


@pytest.mark.parametrize("rows", [1, 4, 7, 13])
@pytest.mark.parametrize("n_groups", [2, 5, 300])
def test_cluster_sums_four_rows_at_a_time_equal_one_row_at_a_time(rows, n_groups):
    from schedlab.polaris._silhouette import cluster_distance_sums, cluster_distance_sums_rowwise

    rng = np.random.default_rng(rows * 1000 + n_groups)
    D = rng.exponential(size=(rows, 2000)) * 10.0 ** rng.integers(-3, 4, size=(rows, 2000))
    # runs of the same group, as the noise group makes them: consecutive additions to one sum
    codes = np.repeat(rng.integers(0, n_groups, size=400), 5).astype(np.int64)
    codes[: min(n_groups, codes.size)] = np.arange(min(n_groups, codes.size))  # every group present
    np.testing.assert_array_equal(
        cluster_distance_sums(D, codes, n_groups), cluster_distance_sums_rowwise(D, codes, n_groups)
    )
