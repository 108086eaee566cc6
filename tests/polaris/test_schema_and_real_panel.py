"""Header layout, and the small real-data panel on the 800 authors' rows."""

import numpy as np
import pytest

from schedlab import data
from schedlab.polaris import calibration, grid, hopkins, scoring
from schedlab.polaris.schema import FEATURES, TABLES


@pytest.mark.parametrize("table", sorted(TABLES))
def test_tables_match_upstream_headers(table):
    header = data.require(f"alibaba-pai/{table}.header").read_text().strip().split(",")
    assert tuple(header) == TABLES[table]


def test_calibration_rows(calib_rows):
    assert len(calib_rows) == 800
    assert (calib_rows.status == "Terminated").all()
    assert calib_rows.workload.value_counts().to_dict() == {
        "ctr": 393,
        "bert": 302,
        "inception": 84,
        "graphlearn": 11,
        "xlnet": 4,
        "nmt": 3,
        "resnet": 3,
    }
    assert not calib_rows[list(FEATURES)].isna().any().any()
    assert (calib_rows.duration == calib_rows.end_time - calib_rows.start_time).all()


def test_real_rows_are_clusterable(calib_rows):
    X = calibration.feature_matrix(calib_rows)
    panel = hopkins.hopkins_panel(X, [50, 200], rng=np.random.default_rng(0), repeats=3)
    assert (panel.hopkins < 0.3).all()  # the paper's threshold: >= 0.3 random


def test_real_panel_grid_scores_consistent(calib_rows, tmp_path):
    X = calibration.feature_matrix(calib_rows)
    t = grid.run_grid(
        X,
        grid.configs(
            algorithms=["hdbscan"], transforms=["yeo-johnson"], metrics=["euclidean"], min_cluster_sizes=[20]
        ),
        tmp_path,
        progress=False,
    )
    r = t.iloc[0]
    _, labels = grid.load_labels(tmp_path, r.key)
    st = scoring.label_stats(labels)
    assert (r.n_clusters, r.n_outliers) == (st.n_clusters, st.n_outliers)
    assert r.scores_v1 == pytest.approx(scoring.acquires(st.n_clusters, st.n_outliers, 800, r.avg_silhouette))


def test_table_ii_shape(calib_rows):
    X = grid.transform(calibration.feature_matrix(calib_rows), "standard_scaler")
    t = scoring.fixed_label_silhouettes(X, calib_rows)
    assert t.shape == (3, 3) and np.isfinite(t.to_numpy()).all()
    assert ((t.to_numpy() >= -1) & (t.to_numpy() <= 1)).all()
