import numpy as np
import pandas as pd
import pytest

from schedlab import stagetimes
from schedlab.polaris import classifier, duration, grid


def _blobs(rng, n=300):
    centers = np.array([[0, 0, 0], [10, 10, 10], [0, 10, 0]], float)
    lab = rng.integers(0, 3, n)
    return centers[lab] + rng.normal(0, 0.3, (n, 3)), lab


def test_grid_finds_blobs_and_resumes(tmp_path, monkeypatch):
    X, _ = _blobs(np.random.default_rng(0))
    cfgs = grid.configs(
        algorithms=["hdbscan"],
        transforms=["standard_scaler", "minmax_scaler"],
        metrics=["euclidean", "manhattan"],
        min_cluster_sizes=[20],
    )
    t1 = grid.run_grid(X, cfgs, tmp_path, progress=False)
    assert (t1.n_clusters == 3).all() and (t1.avg_silhouette > 0.8).all()
    # a resumed grid reads every run from the cache: clustering must not be called again
    monkeypatch.setattr(grid, "cluster", lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed")))
    t2 = grid.run_grid(X, cfgs, tmp_path, progress=False)
    pd.testing.assert_frame_equal(t1, t2)


def test_split_timings_moves_the_seconds_apart(tmp_path):
    X, _ = _blobs(np.random.default_rng(2), n=120)
    cfgs = grid.configs(
        algorithms=["hdbscan"],
        transforms=["standard_scaler"],
        metrics=["euclidean"],
        min_cluster_sizes=[10, 20],
    )
    table = grid.run_grid(X, cfgs, tmp_path, progress=False)
    results, times = stagetimes.split_timings(table, grid.TIMING_COLUMNS, grid.RUN_COLUMNS)
    assert not set(grid.TIMING_COLUMNS) & set(results.columns)
    assert list(results.columns) == [c for c in table.columns if c not in grid.TIMING_COLUMNS]
    assert list(times.columns) == [*grid.RUN_COLUMNS, *grid.TIMING_COLUMNS]
    assert times.key.tolist() == results.key.tolist() and (times.seconds >= times.fit_seconds).all()
    with pytest.raises((KeyError, ValueError), match="cpu_seconds"):
        stagetimes.split_timings(table.drop(columns=["cpu_seconds"]), grid.TIMING_COLUMNS, grid.RUN_COLUMNS)


def test_parallel_equals_serial(tmp_path):
    X, _ = _blobs(np.random.default_rng(1))
    cfgs = grid.configs(
        algorithms=["hdbscan", "optics"],
        transforms=["robust_scaler"],
        metrics=["euclidean"],
        min_cluster_sizes=[20, 40],
    )
    a = grid.run_grid(X, cfgs, tmp_path / "a", n_jobs=1, progress=False, optics_subsample=200)
    b = grid.run_grid(X, cfgs, tmp_path / "b", n_jobs=2, progress=False, optics_subsample=200)
    cols = ["n_clusters", "n_outliers", "avg_silhouette", "scores_v1", "CCPM", "subsample"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert a.loc[a.algorithm == "optics", "subsample"].eq(200).all()
    s = grid.summary(a)
    assert set(s.stat) == {"mean", "min", "max", "std"}


def test_transforms():
    X = np.random.default_rng(0).lognormal(size=(100, 2))
    assert np.allclose(grid.transform(X, "minmax_scaler").min(0), 0)
    assert np.allclose(grid.transform(X, "standard_scaler").std(0), 1)
    with pytest.raises(ValueError):
        grid.transform(X, "log")


def test_classifier_and_duration():
    rng = np.random.default_rng(0)
    n = 400
    prof = rng.integers(0, 3, n)
    meta = pd.DataFrame(
        {
            "job_name": [f"j{i}" for i in range(n)],
            "user": np.array(["u0", "u1", "u2"])[prof],
            "task_name": "worker",
            "group": "g",
            "workload": np.array(["bert", "ctr", "rl"])[prof],
        }
    )
    dur = np.array([100.0, 1000.0, 10.0])[prof]
    tr, te = classifier.split(meta.assign(profile=prof, duration=dur))
    assert len(te) == 80
    clf = classifier.ProfileClassifier().fit(tr, tr.profile, tr.duration)
    assert (clf.predict(te) == te.profile).all()
    np.testing.assert_allclose(clf.predict_duration(te), te.duration)
    rep = classifier.report(te.profile, clf.predict(te))
    assert rep.set_index("profile").loc["accuracy", "f1-score"] == 1.0
    # unseen metadata values do not break prediction
    clf.predict(te.assign(job_name="never-seen"))
    err = duration.relative_error(np.array([105.0, 200.0]), np.array([100.0, 100.0]))
    assert duration.share_below(err) == {0.05: 0.5, 5.0: 1.0}


def test_shap_chunks_match_shap_library():
    import shap

    rng = np.random.default_rng(1)
    n = 300
    prof = rng.integers(0, 3, n)
    meta = pd.DataFrame(
        {
            "job_name": rng.choice(["a", "b", "c", "d"], n),
            "user": np.array(["u0", "u1", "u2"])[prof],
            "task_name": rng.choice(["ps", "worker"], n),
            "group": "g",
            "workload": np.where(rng.random(n) < 0.8, np.array(["bert", "ctr", "rl"])[prof], "ctr"),
        }
    )
    clf = classifier.ProfileClassifier(n_estimators=20).fit(meta, prof)
    ours = clf.shap_mean_abs(meta, chunk_size=37)
    # XGBoost reads absent entries of a sparse matrix as *missing*: give shap the same input
    Z = clf.transform_meta(meta).toarray()
    Z[Z == 0] = np.nan
    sv = shap.TreeExplainer(clf.model_).shap_values(Z)
    sv = np.asarray(sv)
    if sv.shape[0] != n:  # list of per-class arrays -> (n, features, classes)
        sv = np.moveaxis(sv, 0, -1)
    ref = np.abs(sv).mean(axis=0)
    np.testing.assert_allclose(ours.to_numpy(), ref, rtol=1e-4, atol=1e-5)
