"""The PCS explorer's library side (schedlab.pcs.explore): configurations, points, references."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from schedlab.pcs import ConfigError, WFQConfig, make_policy, metrics, simulate
from schedlab.pcs import explore as E


@pytest.fixture(scope="module")
def w300(w1001):
    return w1001.head(E.NUM_JOBS)


def test_the_small_trace_is_the_head_of_the_fig3_trace(w300):
    w = E.small_trace()
    assert len(w) == E.NUM_JOBS
    assert np.array_equal(w.service, w300.service) and np.array_equal(w.submit_us, w300.submit_us)


def test_wfq_config_normalises_weights_as_exact_fractions():
    c = E.wfq_config([100.0, 1e4], [2, 1, 1], zeta_min=0.3, delta=0.2)
    assert c.thresholds == (100.0, 1e4, math.inf)
    assert c.rates == (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4))
    assert (c.zeta_min, c.delta) == (0.3, 0.2)
    # only the ratios of the weights matter
    assert E.wfq_config([100.0, 1e4], [20, 10, 10]).rates == c.rates


@pytest.mark.parametrize(
    "thresholds, weights, error, words",
    [
        ([5.0, 5.0], [1, 1, 1], ConfigError, "strictly increasing"),
        ([5.0], [1, 1, 1], ValueError, "need 2 thresholds"),
        ([5.0], [1, 0], ValueError, "positive"),
        ([5.0], [1, 1e-6], ValueError, "rounds to 0"),
        ([], [], ValueError, "at least one"),
    ],
)
def test_wfq_config_refuses_bad_sliders(thresholds, weights, error, words):
    with pytest.raises(error, match=words):
        E.wfq_config(thresholds, weights)


def test_evaluate_equals_a_direct_simulation(w300):
    config = E.wfq_config([529.0, 51490.0], [0.8, 0.15, 0.05], zeta_min=0.5, delta=0.3)
    point = E.evaluate(w300, config, gpus=64)
    direct = metrics.summary(simulate(w300, make_policy("PCS", config), 64, predict=True))
    assert point.avg_jct_s == direct["avg_jct"]
    assert point.avg_pred_error == direct["avg_pred_error"]
    assert point.p99_pred_error == direct["p99_pred_error"]
    assert point.num_classes == 3 and point.seconds > 0


def test_one_class_without_demand_cap_is_fifo(w300):
    """Section 3.1: "WFQ with a single class is exactly FIFO scheduling" (0 % Pred_err). With the
    demand cap at its lowest (ζ_min ≤ 0.01) every job gets its full demand, as in FIFO."""
    fifo = metrics.summary(simulate(w300, make_policy("FIFO"), 64, predict=True))
    for zeta in (0.0, 0.01):
        one = E.evaluate(w300, E.wfq_config([], [1.0], zeta_min=zeta))
        assert one.avg_jct_s == fifo["avg_jct"]
        assert one.avg_pred_error == 0.0 == fifo["avg_pred_error"]
    # a binding cap makes the single class deviate from FIFO (so the test above can fail)
    capped = E.evaluate(w300, E.wfq_config([], [1.0], zeta_min=0.5))
    assert capped.avg_jct_s != fifo["avg_jct"]


def test_start_config_is_the_papers_pcs_jct_parameters_on_these_jobs(w300):
    c = E.start_config(w300)
    assert isinstance(c, WFQConfig) and c.num_classes >= 2
    assert (c.zeta_min, c.delta) == E.START_PARAMETERS[2:]


def test_class_table_counts_every_job_once(w300):
    c = E.wfq_config([529.0, 51490.0], [0.8, 0.15, 0.05])
    t = E.class_table(w300, c)
    assert t.jobs.sum() == len(w300)
    assert t.work_share.sum() == pytest.approx(1.0)
    assert t.weight.tolist() == pytest.approx([0.8, 0.15, 0.05])
    # a job exactly on a threshold belongs to the lower class (WFQ.classify: side="left")
    pol = make_policy("PCS", c)
    pol.reset(type("W", (), {"gpus": 64})())
    expected = np.bincount([pol.classify(s) for s in w300.service], minlength=3)
    assert t.jobs.tolist() == expected.tolist()


def test_stored_front_reads_the_fig3_stage_output_or_says_why_not(tmp_path, w300):
    front, note = E.stored_front(root=tmp_path)
    assert front is None and "pcs_fig3" in note
    out = tmp_path / "results/pcs"
    out.mkdir(parents=True)
    pd.DataFrame(
        {
            "jct_avg": [1.0, 2.0],
            "pred_err_avg": [5.0, 0.0],
            "trace": ["0e4a51"] * 2,
            "jobs": [E.NUM_JOBS] * 2,
            "evaluations": [280] * 2,
        }
    ).to_csv(out / "fig3_front.csv", index=False)
    front, note = E.stored_front(root=tmp_path)
    assert front.avg_jct_s.tolist() == [1.0, 2.0] and "2 configurations" in note
    front, note = E.stored_front(num_jobs=2001, root=tmp_path)
    assert front is None and "2001" in note


def test_explorer_update_plot_and_png(w300, tmp_path):
    refs = pd.DataFrame(
        {
            "policy": ["FIFO", "Tiresias"],
            "avg_jct_s": [4.9e5, 3.5e5],
            "avg_pred_error": [0.0, 23.3],
            "p99_pred_error": [0.0, 132.0],
        }
    )
    e = E.Explorer(w300, refs, None, "no front")
    p1 = e.update([529.0], [0.9, 0.1])
    p2 = e.update([529.0], [0.5, 0.5])
    assert [p.label for p in e.history] == ["try 1", "try 2"]
    assert p1 != p2
    fig = e.plot()
    assert fig.axes[0].get_yscale() == "symlog"
    assert e.png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_reference_points_are_the_fig3_baselines(w300):
    refs = E.reference_points(w300, policies=("FIFO", "Tiresias")).set_index("policy")
    assert refs.avg_pred_error["FIFO"] == 0.0
    assert refs.avg_jct_s["Tiresias"] < refs.avg_jct_s["FIFO"]


# --------------------------------------------------------------------------- the stage figures
def test_fig7_marks_paper_profile_traces_and_draws_the_paper_values():
    from schedlab.pcs import plots

    ours = pd.DataFrame(
        {
            "trace": ["0e4a51", "0e4a51"],
            "policy": ["AFS", "FIFO"],
            "norm_avg_jct": [1.0, 9.3],
            "avg_pred_error": [25.6, 0.0],
            "p99_pred_error": [239.8, 0.0],
        }
    )
    paper = {"fig7.0e4a51.FIFO.norm_avg_jct": 9.301, "fig7.b436b2.AFS.norm_avg_jct": 1.0}
    fig = plots.fig7(ours, paper, traces=("0e4a51", "b436b2"), policies=("AFS", "FIFO"))
    a, b, c = fig.axes
    assert (a.get_yscale(), b.get_yscale(), c.get_yscale()) == ("log", "symlog", "symlog")
    labels = [t.get_text() for t in c.get_xticklabels()]
    assert labels == ["0e4a51", "b436b2\n(paper profile only)"]
    ticks = [y for line in a.lines for y in np.asarray(line.get_ydata(), float) if np.isfinite(y)]
    assert sorted(ticks) == [1.0, 9.301]
    assert all(ax.get_ylabel() for ax in fig.axes)


def test_fig8b_names_policies_in_a_legend_outside_the_axes():
    from schedlab.pcs import plots

    ours = pd.DataFrame(
        {"policy": ["AFS", "Tiresias"], "norm_avg_jct": [1.07, 1.05], "p99_pred_error": [336.0, 343.2]}
    )
    fig = plots.fig8b(
        ours, {"fig8b.simulated.AFS.norm_avg_jct": 1.058, "fig8b.simulated.AFS.p99_pred_error": 328.8}
    )
    ax = fig.axes[0]
    assert len(ax.texts) == 0  # no labels on the points: they overlapped
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()][:2] == ["AFS", "Tiresias"]
    assert legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted()).x0 > 1.0
