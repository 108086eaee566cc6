"""Fig. 8a's avg Pred_err bars: :func:`fig8_aggregate` on the authors' own per-job outputs
gives the stored bar values minus the plotting offset of 5 (README of the mirror)."""

import pandas as pd
import pytest

from schedlab import data
from schedlab.pcs.artifacts import load_run
from schedlab.pcs.metrics import fig8_aggregate

SEEDS = [1954, 3266, 5897, 6359, 9005]
D = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/"
PLOT_OFFSET = 5.0  # the authors added 5 to every bar before plotting (README)


def test_fig8a_avg_and_p99_bars_from_authors_runs():
    runs = {
        p: {s: load_run(D + f"{p}_64_1.2_gavel-contsingle_{s}.csv.gz") for s in SEEDS}
        for p in ["AFS", "SRSF", "THEMIS"]
    }
    runs["PCS-JCT"] = {s: load_run(D + f"MCS_64_1.2_gavel-contsingle_{s}_2.csv.gz") for s in SEEDS}
    got = fig8_aggregate(runs).set_index("policy")
    bars = pd.read_csv(data.require("pcs/paper_figure_data/fig8a_pred_error_bars_workload3.csv"))
    bars["policy"] = bars.policy.replace({"TIRESIAS": "SRSF"})
    column = {"avg": "avg_pred_error", "p99": "p99_pred_error"}
    for row in bars.itertuples():
        # THEMIS bars are stored to 8 decimals
        assert got.loc[row.policy, column[row.statistic]] == pytest.approx(
            row.value_as_stored - PLOT_OFFSET, rel=1e-8
        ), (row.policy, row.statistic)
    assert len(bars) == 8


def test_fig8_aggregate_avg_error_zero_for_zero_error_policies():
    # job 0: predicted JCT 4, true 5 (25 %); job 1 exact (0 %): mean 12.5 %
    df = pd.DataFrame(
        {
            "submit_time": [0.0, 1.0],
            "end_time": [5.0, 9.0],
            "estimated_start_time": [0.0, 1.0],
            "estimated_end_time": [4.0, 9.0],
        }
    )
    got = fig8_aggregate({"FIFO": {1: df}, "X": {1: df, 2: df}}).set_index("policy")
    assert got.loc["FIFO", "avg_pred_error"] == 0.0
    assert got.loc["X", "avg_pred_error"] == pytest.approx(12.5)


def test_fig10a_paper_curves_groups_reference_values_and_rejects_other_ids():
    from schedlab.pcs.plots import fig10a_paper_curves
    from schedlab.reference import paper_values

    curves = fig10a_paper_curves(paper_values("pcs", "fig10a."))
    assert sorted(curves["FIFO"]) == [0, 5, 10, 20, 30, 40]
    assert curves["FIFO"][0] == 0.0 and curves["PCS-JCT"][40] > curves["PCS-JCT"][0]
    with pytest.raises(ValueError, match="fig10a.<policy>"):
        fig10a_paper_curves({"fig10.pcs_jct_vs_afs.p_error_40": 1.05})
