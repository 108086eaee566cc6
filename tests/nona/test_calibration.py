"""Nona calibration: readings, the numbers measured on a sweep, and their verdicts."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from schedlab.nona import calibration as cal


def test_grid_is_the_full_factorial_and_names_are_unique():
    rs = cal.grid(
        {"load_basis": ["server", "cluster"], "gpt2_time_scale": [1.0, 0.5, 0.1], "warmup_share": [0.1, 0.5]}
    )
    assert len(rs) == 12 and len({r.name for r in rs}) == 12
    with pytest.raises(ValueError, match="unknown calibration factor"):
        cal.grid({"bandwidth": [1]})
    with pytest.raises(ValueError, match="unknown calibration factor"):  # stated by the paper: never a factor
        cal.grid({"background_mb": [None, 20.0]})


def test_reading_round_trips_through_workload_kwargs():
    for r in cal.grid(
        {"load_basis": ["server", "cluster"], "per_sample": [False, True], "gpt2_time_scale": [1.0, 0.04]}
    ):
        assert cal.reading_of(r.workload_kwargs(), r.duration) == r
    assert cal.Reading().workload_kwargs() == {}
    with pytest.raises(ValueError, match="does not vary"):
        cal.reading_of({"comm_load": 0.05}, 30.0)
    with pytest.raises(ValueError, match="100:1"):  # a fixed transfer size breaks the stated rate ratio
        cal.reading_of({"background_comm_bytes": 2e7}, 30.0)


def _rows(design: cal.Design, jct: dict[str, float], load_factor: dict[float, float]) -> pd.DataFrame:
    """A sweep's rows where scheme s has JCT jct[s] * load_factor[load] at every point."""
    out = []
    for p in design.points():
        for s, v in jct.items():
            f = load_factor.get(p["load"], 1.0)
            out.append(
                {
                    **p,
                    "scheme": s,
                    "mean_jct_s": v * f,
                    "p99_jct_s": 2 * v * f,
                    "inference_mean_jct_s": 3 * v * f,
                    "inference_p99_jct_s": 4 * v * f,
                }
            )
    return pd.DataFrame(out)


def test_gains_are_ratios_to_nona_with_min_max_and_sign():
    d = cal.Design()
    rows = _rows(
        d,
        {"nona": 1.0, "spark_fair": 10.0, "opportunistic": 50.0, "random": 0.5},
        {0.1: 1.0, 0.5: 1.0, 0.9: 1.0},
    )
    # Spark's JCT halves at load 0.9 only: its gain there is 5x, elsewhere 10x
    rows.loc[(rows.scheme == "spark_fair") & (rows.load == 0.9), ["mean_jct_s", "p99_jct_s"]] /= 2
    b = d.bandwidth_gbps
    jobs = {
        (d.fig5_load, b, "nona"): pd.DataFrame(
            {"job_class": ["background_compute"] * 4, "jct": [1.0, 1.0, 2.0, 3.0]}
        )
    }
    g = cal.gains(rows, jobs, d)
    assert g["fig3.gain_avg.spark_fair"] == pytest.approx(10.0)
    assert g["fig3.gain_avg_low.spark_fair"] == pytest.approx(5.0)
    assert g["fig3.gain_p99.opportunistic"] == pytest.approx(50.0)
    # one sign per figure: Random beats Nona everywhere, so Nona is not ahead of every baseline
    assert g["fig3.nona_ahead.avg"] == 0.0 and g["fig3.nona_ahead.p99"] == 0.0
    assert not any(k.startswith("fig3.nona_ahead.avg.") for k in g)
    assert g["fig4.gain_inference_avg.opportunistic"] == pytest.approx(50.0)
    assert g["fig5.gain_inference_p99.random"] == pytest.approx(0.5)
    assert g["fig5.background_no_wait.nona"] == pytest.approx(0.5)


def test_verdicts_follow_the_stated_tolerances():
    fit = cal.check_values(
        {
            "fig4.gain_avg.random": 70 * 1.45,
            "fig4.gain_avg.opportunistic": 60 * 1.55,
            "fig3.nona_ahead.avg": 0.0,
            "table1.nona_distribute.low": 0.7,
            cal.TABLE1_SHAPE: 1.0,
            "fig5.background_no_wait.nona": 0.45,
        }
    )
    verdict = dict(zip(fit.id, fit.verdict))
    assert verdict == {
        "fig4.gain_avg.random": "yes",
        "fig4.gain_avg.opportunistic": "no",
        "fig3.nona_ahead.avg": "no",
        "table1.nona_distribute.low": "yes",
        cal.TABLE1_SHAPE: "yes",
        "fig5.background_no_wait.nona": "yes",
    }


def test_table1_shape_under_a_reading():
    """20 MB background transfers on two servers at 80 Gbps: job f is distributed at low and
    medium load and kept together at high load (the Table I notebook's numbers): a step, not
    the paper's shape, which needs an interior share."""
    v = cal.table1_shares(cal.Reading(), cal.Design(table1_background_mb=20.0))
    assert [round(v[i], 6) for i in cal.TABLE1_IDS] == [1.0, 1.0, 0.0]
    assert v[cal.TABLE1_SHAPE] == 0.0
    assert cal.table1_shape(0.8, 0.5, 0.2) and cal.table1_shape(1.0, 0.5, 0.5)
    assert not cal.table1_shape(0.2, 0.5, 0.8) and not cal.table1_shape(1.0, 1.0, 1.0)


def test_fitting_and_held_out_numbers_are_counted_apart():
    values = {
        "fig3.gain_avg.random": 202.0,
        "fig3.nona_ahead.avg": 1.0,
        "fig4.gain_avg.random": 70.0,
        "fig4.gain_avg.opportunistic": 1.0,
    }
    m = cal.Measured(cal.Reading(), values, 0, pd.DataFrame({"inference_jobs": [50]}))
    summary, long = cal.fit_table([m], ["fig3."])
    row = summary.iloc[0]
    assert (row.within, row.asserted, row.held_within, row.held_asserted) == (2, 2, 1, 2)
    assert set(long[long.fitting].id) == {"fig3.gain_avg.random", "fig3.nona_ahead.avg"}
    with pytest.raises(ValueError, match="fitting set"):
        cal.fit_table([m], [])


def test_readings_are_ranked_on_the_fitting_set_only():
    good_fit = cal.Measured(
        cal.Reading(),
        {"fig3.gain_avg.random": 202.0, "fig4.gain_avg.random": 1.0},
        0,
        pd.DataFrame({"inference_jobs": [50]}),
    )
    good_held = cal.Measured(
        cal.Reading(load_basis="cluster"),
        {"fig3.gain_avg.random": 1.0, "fig4.gain_avg.random": 70.0},
        0,
        pd.DataFrame({"inference_jobs": [50]}),
    )
    summary, _ = cal.fit_table([good_held, good_fit], ["fig3."])
    assert summary.reading.iloc[0] == good_fit.reading.name


def test_measure_and_fit_table_on_a_small_design(tmp_path):
    d = cal.Design(fig3_loads=(0.3, 0.7), fig4_load=0.3, fig4_bandwidths=(5.0,), fig5_load=0.7, servers=8)
    readings = [cal.Reading(duration=2.0), cal.Reading(duration=2.0, load_basis="cluster")]
    measured = [cal.measure(r, d, tmp_path / str(i), executor=1) for i, r in enumerate(readings)]
    summary, long = cal.fit_table(measured, ["fig3."])
    assert set(summary.reading) == {r.name for r in readings}
    assert list(summary.within) == sorted(summary.within, reverse=True)
    asserted = long[long.verdict.isin(["yes", "no"])]
    both = (summary.asserted + summary.held_asserted).to_numpy()
    assert (both == asserted.groupby("reading").size().reindex(summary.reading).to_numpy()).all()
    for m in measured:  # same seed, same arrivals: a reading's numbers do not depend on the run
        again = cal.measure(m.reading, d, tmp_path / "again", executor=1)
        assert again.values == pytest.approx(m.values, nan_ok=True)
    best = summary.reading.iloc[0]
    c = cal.conflicts(long, best)
    assert set(c.id) == set(long[(long.reading == best) & (long.verdict == "no")].id)
    assert all(math.isfinite(x) for x in summary.log_error)
