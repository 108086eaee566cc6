"""Workloads by name: the authors' generator, the trace writer and
``schedlab pcs workload`` / ``schedlab pcs simulate --workload``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from schedlab.cli import main
from schedlab.pcs import load_trace, make_policy, simulate
from schedlab.pcs.artifacts import compare, load_run
from schedlab.pcs.generators import authors_rng, generate, resolve_workload, service_cdf_names, workload_names
from schedlab.pcs.workload import Workload, write_trace

_W3 = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/{}_64_1.2_gavel-contsingle_{}.csv.gz"
_W1 = "pcs/artifact_runs/themis1_5seeds/MCS_64_0.8_themis1_{}_0.csv.gz"


def _submit_us(df: pd.DataFrame) -> np.ndarray:
    return np.rint(df["submit_time"].to_numpy() * 1e6).astype(np.int64)


def test_names_cover_the_paper_and_every_complete_cdf_set():
    names = workload_names()
    assert names[:2] == ["workload-1", "workload-3"]
    assert {"gavel", "gavel-contsingle", "themis1", "themis2", "afs", "workload_0e4a51"} <= set(names)
    assert "gavel-contmultiple" not in names  # a size CDF only
    assert "gavel-contmultiple" in service_cdf_names()
    assert resolve_workload("workload-1") == "themis1"
    for name in names:  # every listed name generates
        w = generate(name, 5, authors_rng(1))
        assert len(w) == 5 and (w.service > 0).all() and (w.demand > 0).all()


def test_unknown_names_are_clear_errors():
    with pytest.raises(ValueError, match="workload 'nope': no CDF .*known workloads: workload-1"):
        generate("nope", 3, authors_rng(1))
    with pytest.raises(ValueError, match="service_cdf 'nope'.*known: 2size"):
        generate("gavel", 3, authors_rng(1), service_cdf="nope")
    with pytest.raises(ValueError, match="load = 0"):
        generate("gavel", 3, authors_rng(1), load=0)


def test_gavel_contsingle_equals_gavel_as_in_the_fig8_runs():
    # no min-GPU CDF of its own: the unused pool is drawn from the stand-in, as their runs did
    a = generate("gavel-contsingle", 300, authors_rng(1954), load=1.2)
    b = generate("workload-3", 300, authors_rng(1954), load=1.2)
    assert np.array_equal(a.submit_us, b.submit_us) and np.array_equal(a.service, b.service)
    assert np.array_equal(a.demand, b.demand)


def test_service_cdf_also_names_the_interarrival_cdf():
    # as the authors' gen_workload: inter-arrivals come from cdf-app-interarrival-times-<sizes>
    # when it exists (then the load is ignored)
    lo = generate("themis1", 50, authors_rng(3), load=0.5, service_cdf="workload_0e4a51")
    hi = generate("themis1", 50, authors_rng(3), load=2.0, service_cdf="workload_0e4a51")
    assert np.array_equal(lo.submit_us, hi.submit_us)
    lo = generate("themis1", 50, authors_rng(3), load=0.5, service_cdf="gavel")
    hi = generate("themis1", 50, authors_rng(3), load=2.0, service_cdf="gavel")
    assert not np.array_equal(lo.submit_us, hi.submit_us)


def test_gavel_result_workload_matches_the_authors_file_head():
    # the authors' new_results/new/FIFO_gavel_result.csv (PCS d8409db; not in the mirror):
    # older gavel sizes, seed 4567, load 1.2, gaps drawn as one vector, 3000 apps
    w = generate(
        "gavel", 3000, authors_rng(4567), load=1.2, service_cdf="gavel-contmultiple", draw_order="vector"
    )
    assert w.submit_s[:10].tolist() == [0, 2, 56, 78, 80, 108, 133, 155, 182, 220]
    assert w.service[:10].tolist() == [329, 7308, 2429, 132, 161, 1622, 880, 34, 36, 1418]
    assert w.submit_s[-5:].tolist() == [76357, 76386, 76430, 76443, 76462]
    per_app = generate("gavel", 3000, authors_rng(4567), load=1.2, service_cdf="gavel-contmultiple")
    assert per_app.submit_s[1] != 2  # the draw order matters


def test_per_trial_order_is_the_themis1_baseline_workload():
    # their baseline files did not apply the seed (seed 4567) and drew per trial
    theirs = load_run("pcs/artifact_runs/themis1_5seeds/FIFO_64_0.8_themis1_1954.csv.gz")
    w = generate("themis1", 5000, authors_rng(4567), load=0.8, draw_order="per-trial")
    assert np.array_equal(w.submit_us, _submit_us(theirs))
    assert np.array_equal(w.service, theirs["service"].to_numpy(float))
    # fair_act = size / min(G / contention, initial demand): the demand where it binds
    fair = theirs["service"] / np.minimum(64 / theirs["num_apps_seen_diff"], w.demand)
    np.testing.assert_allclose(fair, theirs["fair_act"], rtol=1e-12)
    per_app = generate("themis1", 5000, authors_rng(4567), load=0.8)
    assert not np.array_equal(per_app.submit_us, w.submit_us)


def test_trace_round_trip_is_exact(tmp_path):
    w = generate("gavel", 200, authors_rng(5), load=1.2)
    for name in ("t.csv", "t.csv.gz"):
        back = load_trace(write_trace(w, tmp_path / name))
        assert np.array_equal(back.submit_us, w.submit_us)
        assert np.array_equal(back.service, w.service) and np.array_equal(back.demand, w.demand)
    odd = Workload.from_arrays(submit_s=[0, 0.1234567, 1e5 / 3], service=[1.5, 2e-3, 7.0], demand=[1, 3, 2])
    back = load_trace(write_trace(odd, tmp_path / "odd.csv"), tables=odd.tables)
    assert np.array_equal(back.submit_us, odd.submit_us) and np.array_equal(back.service, odd.service)


def _cli(args):
    return CliRunner().invoke(main, ["pcs"] + [str(a) for a in args])


def test_cli_workload_is_the_fig8_workload(tmp_path):
    out = tmp_path / "w.csv"
    r = _cli(
        ["workload", "gavel", "--num-apps", 3000, "--seed", 1954, "--load", 1.2, "--gpus", 64, "--out", out]
    )
    assert r.exit_code == 0, r.output
    w = load_trace(out)
    theirs = load_run(_W3.format("FIFO", 1954))
    assert np.array_equal(w.submit_us, _submit_us(theirs))
    assert np.array_equal(w.service, theirs["service"].to_numpy(float))
    # demands too: the whole FIFO schedule is theirs
    ours = simulate(w, make_policy("FIFO"), 64)
    assert all(a.ok() for a in compare(ours, theirs, columns=("start_time", "end_time")).values())


def test_cli_workload_1_is_the_themis1_mcs_workload(tmp_path):
    out = tmp_path / "w1.csv.gz"
    r = _cli(["workload", "workload-1", "--num-apps", 5000, "--seed", 1954, "--load", 0.8, "--out", out])
    assert r.exit_code == 0, r.output
    w = load_trace(out)
    theirs = load_run(_W1.format(1954))
    assert np.array_equal(w.submit_us, _submit_us(theirs))
    assert np.array_equal(w.service, theirs["service"].to_numpy(float))


def test_cli_simulate_workload_equals_trace(tmp_path):
    args = ["--num-apps", 150, "--load", 1.2, "--service-cdf", "gavel-contmultiple", "--draw-order", "vector"]
    assert _cli(["workload", "gavel", "--seed", 7, *args, "--out", tmp_path / "w.csv"]).exit_code == 0
    r1 = _cli(
        [
            "simulate",
            "--trace",
            tmp_path / "w.csv",
            "--policy",
            "SRSF",
            "--predict",
            "--out",
            tmp_path / "a.csv",
        ]
    )
    r2 = _cli(
        [
            "simulate",
            "--workload",
            "gavel",
            "--workload-seed",
            7,
            *args,
            "--policy",
            "SRSF",
            "--predict",
            "--out",
            tmp_path / "b.csv",
        ]
    )
    assert r1.exit_code == 0 and r2.exit_code == 0, (r1.output, r2.output)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv"))


@pytest.mark.parametrize(
    "args,message",
    [
        (["workload", "nope", "--num-apps", 3], "workload 'nope'"),
        (["workload", "gavel", "--num-apps", 0], "--num-apps"),
        (["workload", "gavel", "--num-apps", 3, "--load", 0], "--load"),
        (["workload", "gavel", "--num-apps", 3, "--draw-order", "random"], "--draw-order"),
        (["simulate", "--policy", "FIFO"], "exactly one of --trace FILE or --workload NAME"),
        (["simulate", "--workload", "gavel", "--policy", "FIFO"], "--workload needs --num-apps"),
        (
            [
                "simulate",
                "--workload",
                "gavel",
                "--num-apps",
                5,
                "--policy",
                "FIFO",
                "--afs-variant",
                "randomised",
            ],
            "only applies to --policy AFS",
        ),
        (
            ["simulate", "--trace", __file__, "--load", 1.2, "--service-cdf", "gavel", "--policy", "FIFO"],
            "--load, --service-cdf only apply with --workload",
        ),
    ],
)
def test_cli_bad_workload_options(tmp_path, args, message):
    r = _cli(args + ["--out", tmp_path / "x.csv"])
    assert r.exit_code != 0 and message in r.output, r.output
    assert not (tmp_path / "x.csv").exists()
