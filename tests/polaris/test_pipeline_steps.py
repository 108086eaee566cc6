"""The library steps the polaris notebooks call: sample, Table I, unseen jobs, the real-data panel."""

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import calibration, ingest, panel, pipeline
from schedlab.polaris.schema import FEATURES, TABLE_I_SIZES, TABLE_I_TARGET
from schedlab.reference import paper_values


@pytest.fixture(scope="module")
def joined(ingested):
    parquet, work = ingested
    return ingest.join(parquet, work / "steps_faithful.parquet", progress=False, memory_limit="1GB")


def test_sample_table1_and_unseen_jobs(joined):
    sample = pipeline.draw_sample(joined.path, 300, 0, keep_zero_strata=True)
    assert not sample[list(FEATURES)].isna().any().any()
    t1 = pipeline.table1(joined.per_workload, sample, "SYNTHETIC")
    assert t1.iloc[-1]["size"] == joined.rows and t1.iloc[-1]["sampled"] == len(sample)
    assert t1.iloc[:-1]["sampled"].sum() == len(sample)
    test = pipeline.unseen_jobs(joined.path, sample, 50, 0)
    assert len(test) == 50 and test["row"].is_monotonic_increasing
    assert not set(test["row"]) & set(sample["row"])
    again = pipeline.unseen_jobs(joined.path, sample, 50, 0)
    pd.testing.assert_frame_equal(test, again)  # seeded: the same test jobs every run


def test_timed_records_the_block():
    timings = {}
    with pipeline.timed(timings, "step"):
        sum(range(1000))
    assert set(timings) == {"step"} and timings["step"] >= 0


def test_authors_tables_rescored_and_table1_rule():
    rescored = panel.rescore_authors_grids()
    assert set(rescored.algorithm) == {"hdbscan", "optics"}
    assert max(panel.max_absdiff(rescored).values()) < 1e-12
    best, rows = panel.authors_best(rescored)
    assert list(rows.index) == ["hdbscan", "optics"]
    assert rows.loc["hdbscan", "scores_v1"] == rescored[rescored.algorithm == "hdbscan"].scores_v1.max()
    paper = paper_values("polaris", "table1.")
    t1 = panel.table1_rule(
        TABLE_I_SIZES, {w: paper[f"table1.{w}.sampled"] for w in TABLE_I_SIZES}, TABLE_I_TARGET
    )
    assert (t1.sampled_rule == t1.sampled_paper).all()
    assert t1.iloc[-1]["sampled_rule"] == paper["table1.total.sampled"]


def test_table4_vs_paper_covers_every_reference_entry():
    from schedlab.polaris import grid

    t4 = grid.summary(panel.rescore_authors_grids())
    paper = paper_values("polaris", "table4.")
    vs = panel.table4_vs_paper(t4, paper)
    assert len(vs) == len(paper) and np.isfinite(vs.ours).all()
    row = vs[(vs.algorithm == "hdbscan") & (vs.stat == "mean") & (vs.column == "n_clusters")].iloc[0]
    assert row.ours == pytest.approx(
        t4.set_index(["algorithm", "stat"]).loc[("hdbscan", "mean"), "n_clusters"]
    )


def test_panel_summary_on_the_real_rows(tmp_path):
    from schedlab.polaris import grid, hopkins

    rows = calibration.load_calibration_rows()
    X = calibration.feature_matrix(rows)
    hp = hopkins.hopkins_panel(X, [50], rng=np.random.default_rng(0), repeats=1)
    cfgs = grid.configs(transforms=["robust_scaler"], metrics=["euclidean"], min_cluster_sizes=[20])
    panel_grid = grid.run_grid(X, cfgs, tmp_path, optics_subsample=None, progress=False)
    rescored = panel.rescore_authors_grids()
    best, _ = panel.authors_best(rescored)
    s = panel.panel_summary(rows, hp, panel_grid, best, rescored)
    assert s["n_rows"] == 800 and set(s["best"]) == {"hdbscan", "optics"}
    assert isinstance(s["best"]["hdbscan"]["n_clusters"], int)


def test_profile_kinds_leave_noise_out_and_count_the_authors_kinds():
    """Each profile's kind is its majority (workload, task name); noise rows count for nothing; the
    authors' 26 profiles have 10 kinds (their evaluation notebook, planted.AUTHORS_PROFILES)."""
    df = pd.DataFrame(
        {
            "workload": ["bert"] * 3 + ["ctr"] * 2 + ["rl"] * 5,
            "task_name": ["ps", "ps", "worker", "evaluator", "evaluator", *["worker"] * 5],
            "profile": [0, 0, 0, 1, 1, -1, -1, -1, -1, -1],
        }
    )
    k = pipeline.profile_kinds(df)
    assert k["kinds"] == {"bert/ps": 1, "ctr/evaluator": 1}
    assert sum(k["authors"].values()) == 26 and len(k["authors"]) == 10
    assert k["matched"] == 2 and "rl/worker" in k["missing"] and k["extra"] == []
