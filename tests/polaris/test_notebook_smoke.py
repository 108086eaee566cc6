"""Tiny end-to-end run of the pipeline notebook (SYNTHETIC, seconds)."""

import json

import pandas as pd
import pytest

from schedlab import notebooks
from schedlab.polaris import grid


def test_pipeline_notebook_tiny(tmp_path):
    notebooks.run(
        "polaris/pipeline",
        output_root=tmp_path,
        executed=tmp_path / "pipeline.ipynb",
        overrides={
            "n_jobs": 400,
            "sample_total": 800,
            "hopkins_sizes": [100],
            "hopkins_repeats": 1,
            "table2_sample": 800,
            "transforms": ["robust_scaler"],
            "metrics": ["euclidean"],
            "min_cluster_sizes": [20, 40],
            "optics_subsample": 300,
            "grid_n_jobs": 1,
            "duration_test_jobs": 100,
            # 800 sample rows hold every workload job of 400: no job is left unseen
            "duration_test_exclude": "rows",
            "memory_limit": "1GB",
            "realism_folds": 2,
        },
    )
    s = json.loads((tmp_path / "results/polaris/pipeline_summary.json").read_text())
    assert s["data"] == "SYNTHETIC" and s["sample_rows"] >= 799
    # the pipeline's own numbers the scorecard reads (reference/polaris.yaml standin.*)
    assert s["noise_share"] == pytest.approx(1 - s["clustered_rows"] / s["sample_rows"], abs=1e-12)
    assert s["noise_share"] == pytest.approx(s["best_hdbscan"]["n_outliers"] / s["sample_rows"], abs=1e-12)
    assert 0 <= s["realism_auc_min"] <= s["realism_auc_max"] <= 1
    assert (
        s["realism_auc_max"]
        == pd.read_csv(tmp_path / "results/polaris/pipeline_realism.csv").query("workload != 'all'").auc.max()
    )
    realism_csv = pd.read_csv(tmp_path / "results/polaris/pipeline_realism.csv").query("workload != 'all'")
    assert s["realism_auc_cat_max"] == realism_csv.auc_cat.max()
    assert s["realism_coverage_min"] == realism_csv.coverage.min() and 0 <= s["realism_coverage_min"] <= 1
    # the authors' encoder is fitted on the whole sample, ours on the training split of its clustered rows
    assert s["one_hot_columns"] >= s["one_hot_columns_train"] > 0
    top = pd.read_csv(tmp_path / "results/polaris/pipeline_shap_top20.csv", index_col=0).index.tolist()
    shap_named = s["shap_paper_features"]
    assert shap_named["task_name_ps"] == (top.index("task_name_ps") + 1 if "task_name_ps" in top else None)
    assert shap_named["in_top"] == sum(
        shap_named[k] is not None for k in ("task_name_ps", "workload_graphlearn", "user_")
    )
    planted = s["planted"]
    assert planted["passes"] == (planted["ari"] > planted["lookup_ari"])
    assert planted["kmeans_k"] == planted["planted_profiles"] and -1 <= planted["kmeans_ari"] <= 1
    assert 0 <= s["fig5_share_le_0_05"] <= s["fig5_share_le_5"] <= 1
    for f in [
        "pipeline_fig5.png",
        "pipeline_shap_summary.png",
        "pipeline_fig4_cpu_usage.png",
        "pipeline_profile_silhouettes.png",
        "pipeline_profile_silhouettes.pdf",
    ]:
        assert (tmp_path / "figures/polaris" / f).stat().st_size > 0
    # SHAP from the shap package equals XGBoost's pred_contribs and shap's own TreeSHAP
    assert s["shap_check"]["max_abs_diff_treeexplainer_vs_pred_contribs"] <= 1e-4
    assert s["shap_check"]["max_abs_diff_shap_own_vs_pred_contribs"] <= 1e-4
    prof = pd.read_csv(tmp_path / "results/polaris/pipeline_profile_silhouettes.csv")
    assert prof.rows.sum() == s["sample_rows"] and prof.silhouette.between(-1, 1).all()
    assert s["test_exclude"] == "rows" and 0 <= s["test_known_values"]["per_row"] <= 5
    # wall/CPU times go under timings/ (no pipeline output), never into the outputs DVC hashes
    assert "timings_s" not in s
    times = json.loads((tmp_path / "results/polaris/timings/pipeline_summary.json").read_text())
    assert set(times["timings_s"]) == {
        "synthesize_s",
        "ingest_join_s",
        "sample_s",
        "realism_wait_s",
        "grid_s",
        "planted_wait_s",
        "train_s",
        "shap_s",
        "shap_check_s",
    }
    # the stand-in's realism table: one row per tested workload and the pooled one, AUCs in [0, 1]
    real = pd.read_csv(tmp_path / "results/polaris/pipeline_realism.csv")
    assert "all" in set(real.workload) and real.auc.between(0, 1).all() and (real.n_synth > 0).all()
    grid_out = pd.read_csv(tmp_path / "results/polaris/pipeline_grid.csv")
    grid_times = pd.read_csv(tmp_path / "results/polaris/timings/pipeline_grid.csv")
    assert not set(grid.TIMING_COLUMNS) & set(grid_out.columns)
    assert grid_times.key.tolist() == grid_out.key.tolist() and (grid_times.seconds >= 0).all()
    # last: every file the run wrote is a declared out of the stage (a new file would be one nobody declared)
    from test_stage_files import undeclared_writes

    # the executed copy and its progress log sit where the test asked papermill to write it
    assert undeclared_writes("polaris_pipeline", tmp_path) == ["pipeline.ipynb", "pipeline.log"]
