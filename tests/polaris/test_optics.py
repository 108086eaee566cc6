"""schedlab.polaris.optics against scikit-learn's OPTICS, the implementation it replaces in the grid:
the ordering, core distances, reachability, predecessors and labels must be equal bit for bit,
including on data whose distances tie often (the trace's features are mostly discrete)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import OPTICS

from schedlab.polaris import grid
from schedlab.polaris.calibration import feature_matrix, load_calibration_rows
from schedlab.polaris.optics import optics_graph, optics_labels


def _tied(seed: int, n: int = 400) -> np.ndarray:
    """Rows of a few discrete levels and rounded blob coordinates (many duplicate rows and equal
    distances), plus a continuous column for half of them, so that some distances do not tie."""
    rng = np.random.default_rng(seed)
    levels = rng.integers(0, 3, (n, 3)).astype(float)
    blobs = np.round(rng.choice([0.0, 10.0, 25.0], size=(n, 1)) + rng.normal(0, 1, (n, 2)))
    continuous = np.where(np.arange(n) % 2 == 0, rng.normal(0, 1, n), 0.0)
    return np.column_stack([levels, blobs, continuous])


def _assert_same_as_sklearn(X: np.ndarray, min_samples: int, metric: str, min_cluster_size=None) -> None:
    sk = OPTICS(min_samples=min_samples, metric=metric, min_cluster_size=min_cluster_size, n_jobs=1).fit(X)
    ordering, core, reach, pred = optics_graph(X, min_samples, metric)
    np.testing.assert_array_equal(ordering, sk.ordering_)
    np.testing.assert_array_equal(core, sk.core_distances_)
    np.testing.assert_array_equal(reach, sk.reachability_)
    np.testing.assert_array_equal(pred, sk.predecessor_)
    labels = optics_labels(X, min_samples, metric, min_cluster_size=min_cluster_size)
    np.testing.assert_array_equal(labels, sk.labels_)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("min_samples", [2, 5, 30])
def test_equals_sklearn_on_tied_data(metric, seed, min_samples):
    X = grid.transform(_tied(seed), "minmax_scaler")
    assert len(np.unique(X, axis=0)) < len(X)  # the case under test: duplicate rows, tied distances
    _assert_same_as_sklearn(X, min_samples, metric)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("transform", ["standard_scaler", "yeo-johnson"])
def test_equals_sklearn_on_the_real_calibration_rows(metric, transform):
    X = grid.transform(feature_matrix(load_calibration_rows()), transform)
    for m in (10, 50):
        _assert_same_as_sklearn(X, m, metric)


def test_min_cluster_size_variant_equals_sklearn():
    # the grid's other reading of Table III: OPTICS(min_cluster_size=m), scikit-learn's min_samples=5
    X = grid.transform(_tied(3), "robust_scaler")
    _assert_same_as_sklearn(X, 5, "manhattan", min_cluster_size=25)


def test_min_samples_equal_to_n_and_points_that_are_never_core():
    X = _tied(4, n=40)
    _assert_same_as_sklearn(X, 40, "euclidean")


def test_rejects_what_it_does_not_compute_as_sklearn():
    X = _tied(0, n=20)
    with pytest.raises(ValueError, match="metric in .*'cosine'"):
        optics_graph(X, 5, "cosine")
    with pytest.raises(ValueError, match=r"min_samples must be an integer in \[2, n_samples = 20\]; got 21"):
        optics_graph(X, 21, "euclidean")
    X[3, 2] = np.nan
    for metric in ("euclidean", "manhattan"):
        with pytest.raises(ValueError, match=r"NaN or infinity \(first at row 3, column 2\)"):
            optics_graph(X, 5, metric)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("min_samples", [2, 7, 150])
def test_compiled_manhattan_equals_numpy_steps_on_many_rows(order, min_samples):
    # 3,000 rows of tied and continuous columns: more than one tile of distances per row, and the
    # reference is scikit-learn's own core-distance query followed by NumPy's loop
    X = np.asarray(
        grid.transform(np.vstack([_tied(s, n=1000) for s in (5, 6, 7)]), "standard_scaler"), order=order
    )
    compiled = optics_graph(X, min_samples, "manhattan")
    reference = optics_graph(X, min_samples, "manhattan", compiled=False)
    for a, b in zip(compiled, reference):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
