"""Aggregation recipes against the README/paper numbers, and the CLI."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from schedlab import data
from schedlab.cli import main
from schedlab.pcs.artifacts import load_run
from schedlab.pcs.metrics import fig8_aggregate

SEEDS = [1954, 3266, 5897, 6359, 9005]
D = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/"


def test_fig8_recipe_reproduces_published_bars():
    runs = {
        p: {s: load_run(D + f"{p}_64_1.2_gavel-contsingle_{s}.csv.gz") for s in SEEDS}
        for p in ["AFS", "SRSF", "THEMIS", "FIFO", "FS"]
    }
    for k, lab in [(0, "PCS-pred"), (1, "PCS-bal"), (2, "PCS-JCT")]:
        runs[lab] = {s: load_run(D + f"MCS_64_1.2_gavel-contsingle_{s}_{k}.csv.gz") for s in SEEDS}
    got = fig8_aggregate(runs).set_index("policy")
    fig = pd.read_csv(data.require("pcs/paper_figure_data/fig8b_pareto_points_workload3.csv"))
    readme = {
        "AFS": (328.81, 1.0583),
        "SRSF": (343.19, 1.0505),
        "THEMIS": (103.73, 1.3954),
        "FIFO": (0, 3.1698),
        "FS": (296.97, 3.0268),
        "PCS-pred": (10.64, 2.6681),
        "PCS-bal": (28.72, 2.2334),
        "PCS-JCT": (111.27, 1.1304),
    }
    for pol, (p99, norm) in readme.items():
        assert got.loc[pol, "p99_pred_error"] == pytest.approx(p99, abs=0.006)
        assert got.loc[pol, "norm_avg_jct"] == pytest.approx(norm, abs=6e-5)
    assert len(fig) > 0


def test_cli_simulate_writes_authors_columns(tmp_path):
    trace = data.require("pcs/workload2_philly_traces/trace_0e4a51.csv.gz")
    out = tmp_path / "jobs.csv"
    r = CliRunner().invoke(
        main,
        [
            "pcs",
            "simulate",
            "--trace",
            str(trace),
            "--policy",
            "PCS",
            "--config",
            "PCS_config_0e4a51_jct",
            "--num-jobs",
            "1001",
            "--predict",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    ours = pd.read_csv(out)
    theirs = load_run("PCS_jct")
    for c in ["app_id", "submit_time", "start_time", "end_time", "estimated_end_time", "service"]:
        assert c in ours.columns
    assert (abs(ours.end_time - theirs.end_time) <= 1e-6 * theirs.end_time + 1e-6).all()


def test_cli_bad_input_is_a_clear_error(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("app_id,submit_time,service,num_jobs,sleep_time\n0,0,10,0,0\n")
    r = CliRunner().invoke(
        main, ["pcs", "simulate", "--trace", str(p), "--policy", "FIFO", "--out", str(tmp_path / "o.csv")]
    )
    assert r.exit_code != 0 and "line 2: field 'num_jobs'" in r.output
    assert not (tmp_path / "o.csv").exists()
    r = CliRunner().invoke(
        main, ["pcs", "simulate", "--trace", str(p), "--policy", "XYZ", "--out", str(tmp_path / "o.csv")]
    )
    assert r.exit_code != 0 and "unknown policy" in r.output


@pytest.mark.parametrize(
    "variant,kw",
    [
        ("paper", {}),
        ("2024", {"valuation": "linear"}),
        ("2024-05-07", {"valuation": "linear"}),
        ("62a6ca3", {"valuation": "linear", "replay_size": "attained+estimate", "replay_pending_tick": True}),
        ("fig8-runs", {"replay_size": "true", "replay_leases": False}),
    ],
)
def test_cli_themis_variants(tmp_path, variant, kw):
    # 120 jobs on 8 GPUs: enough contention that each variant changes some prediction
    from schedlab.pcs import load_trace, simulate
    from schedlab.pcs.policies import Themis

    trace = data.require("pcs/workload2_philly_traces/trace_0e4a51.csv.gz")
    out = tmp_path / "jobs.csv"
    r = CliRunner().invoke(
        main,
        [
            "pcs",
            "simulate",
            "--trace",
            str(trace),
            "--policy",
            "THEMIS",
            "--themis-variant",
            variant,
            "--gpus",
            "8",
            "--num-jobs",
            "120",
            "--predict",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    w = load_trace(trace, 120)
    want = simulate(w, Themis(600.0, **kw), 8, predict=True)
    other = simulate(w, Themis(600.0, **({} if kw else {"valuation": "linear"})), 8, predict=True)
    got = pd.read_csv(out)
    pd.testing.assert_series_equal(
        got.estimated_end_time, want.estimated_end_time, check_exact=False, rtol=1e-12
    )
    assert not got.estimated_end_time.equals(other.estimated_end_time)


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--p-error", "-50", "0<=x<100"),
        ("--p-error", "100", "0<=x<100"),
        ("--themis-lease", "0", "x>0"),
    ],
)
def test_cli_out_of_range_options_name_the_option(tmp_path, option, value, message):
    from schedlab.cli import main

    trace = tmp_path / "t.csv"
    trace.write_text("app_id,submit_time,service,num_jobs,sleep_time\n0,0,10,1,0\n")
    extra = ["--predict"] if option == "--p-error" else []
    r = CliRunner().invoke(
        main,
        [
            "pcs",
            "simulate",
            "--trace",
            str(trace),
            "--policy",
            "THEMIS",
            option,
            value,
            "--out",
            str(tmp_path / "o.csv"),
            *extra,
        ],
    )
    assert r.exit_code == 2 and option in r.output and message in r.output, r.output
    assert not (tmp_path / "o.csv").exists()
