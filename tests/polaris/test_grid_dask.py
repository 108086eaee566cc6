"""The grid on the suite's executor gives the serial run's results with loky workers and on a
dask.distributed cluster."""

import numpy as np
import pandas as pd
import pytest

from schedlab.parallel import Executor
from schedlab.polaris import grid

INT_COLS = [
    "algorithm",
    "transform",
    "metric",
    "min_cluster_size",
    "n_rows",
    "n_outliers",
    "n_clusters",
    "key",
]
FLOAT_COLS = [
    "mean_cluster_size",
    "avg_silhouette",
    "davies_bouldin_score",
    "scores_v1",
    "scores_v3",
    "CCPM",
    "subsample",
]


def _data(rng, n=400):
    centers = np.array([[0, 0, 0, 0], [6, 6, 0, 1], [0, 6, 6, 2]], float)
    lab = rng.integers(0, 3, n)
    X = centers[lab] + rng.normal(0, 0.6, (n, 4))
    X[rng.random(n) < 0.05] += rng.normal(0, 6, (1, 4))  # some noise points
    return X


@pytest.fixture(scope="module")
def cluster_client():
    import distributed  # a core dependency (dask[distributed]), never skipped

    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as lc,
        distributed.Client(lc) as client,
    ):
        yield client


def test_serial_loky_and_dask_agree(tmp_path, cluster_client, monkeypatch):
    X = _data(np.random.default_rng(3), n=300)
    cfgs = grid.configs(
        algorithms=["hdbscan", "optics"],
        transforms=["standard_scaler", "yeo-johnson"],
        metrics=["manhattan"],
        min_cluster_sizes=[15],
    )
    kw = dict(progress=False, optics_subsample=200, silhouette_sample=150)
    serial = grid.run_grid(X, cfgs, tmp_path / "serial", n_jobs=1, **kw)
    with Executor(workers=2) as ex:
        loky = grid.run_grid(X, cfgs, tmp_path / "loky", executor=ex, **kw)
    dask = grid.run_grid(X, cfgs, tmp_path / "dask", scheduler=cluster_client, **kw)
    assert len(dask) == len(loky) == len(cfgs) == 4
    for name, other in [("loky", loky), ("dask", dask)]:
        # same configurations in the same order, same cluster counts, outliers and cache keys
        pd.testing.assert_frame_equal(serial[INT_COLS], other[INT_COLS])
        # floats to the last bit: every task runs single-threaded on every backend (schedlab.parallel)
        pd.testing.assert_frame_equal(serial[FLOAT_COLS], other[FLOAT_COLS], check_exact=True)
        # the labels of every run are identical
        for key in serial.key:
            for a, b in zip(
                grid.load_labels(tmp_path / "serial", key), grid.load_labels(tmp_path / name, key)
            ):
                np.testing.assert_array_equal(a, b)
    assert serial.n_clusters.ge(2).all()
    # the parent wrote the cache as results arrived: a rerun recomputes nothing
    monkeypatch.setattr(
        grid, "_compute_group", lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed"))
    )
    again = grid.run_grid(X, cfgs, tmp_path / "dask", n_jobs=1, **kw)
    pd.testing.assert_frame_equal(again, dask)


def test_dask_resumes_an_interrupted_grid(tmp_path, cluster_client):
    X = _data(np.random.default_rng(4), n=300)
    cfgs = grid.configs(
        algorithms=["hdbscan"],
        transforms=["minmax_scaler", "robust_scaler"],
        metrics=["euclidean"],
        min_cluster_sizes=[15, 30],
    )
    # "interrupted": only the first half ran before
    first = grid.run_grid(X, cfgs[:2], tmp_path, n_jobs=1, progress=False)
    full = grid.run_grid(X, cfgs, tmp_path, scheduler=cluster_client, progress=False)
    pd.testing.assert_frame_equal(full.iloc[:2].reset_index(drop=True), first)  # read back, incl. timings
    assert len(list(tmp_path.glob("*.json"))) == 4


def test_backend_arguments(tmp_path):
    X = _data(np.random.default_rng(5), n=60)
    cfgs = grid.configs(algorithms=["hdbscan"], min_cluster_sizes=[10])
    with pytest.raises(ValueError, match="either n_jobs"):
        grid.run_grid(X, cfgs, tmp_path, n_jobs=2, scheduler="tcp://127.0.0.1:1", progress=False)
    with Executor(workers=1) as ex, pytest.raises(ValueError, match="either executor"):
        grid.run_grid(X, cfgs, tmp_path, n_jobs=2, executor=ex, progress=False)
    assert not list(tmp_path.iterdir())


def test_cli_grid_scheduler_and_workers(tmp_path, cluster_client):
    from click.testing import CliRunner

    from schedlab.cli import main
    from schedlab.polaris.schema import FEATURES

    rng = np.random.default_rng(6)
    X = np.repeat(_data(rng, n=240), 5, axis=1)[:, : len(FEATURES)] + rng.normal(
        0, 0.01, (240, len(FEATURES))
    )
    pd.DataFrame(X, columns=list(FEATURES)).to_parquet(tmp_path / "s.parquet")
    args = [
        "polaris",
        "grid",
        str(tmp_path / "s.parquet"),
        None,
        "--cache",
        None,
        "--algorithms",
        "hdbscan",
        "--min-cluster-sizes",
        "20",
    ]
    out = {}
    for name, extra in [
        ("dask", ["--scheduler", cluster_client.scheduler.address]),
        ("loky", ["--workers", "2"]),
    ]:
        a = list(args)
        a[3], a[5] = str(tmp_path / f"{name}.csv"), str(tmp_path / f"cache_{name}")
        res = CliRunner().invoke(main, a + extra)
        assert res.exit_code == 0, res.output
        assert "best hdbscan" in res.output
        out[name] = pd.read_csv(tmp_path / f"{name}.csv")
    pd.testing.assert_frame_equal(out["dask"][INT_COLS], out["loky"][INT_COLS])
    res = CliRunner().invoke(main, a + ["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"])
    assert res.exit_code != 0 and "either --workers or --scheduler" in res.output
