"""Exactness against the authors' own per-job outputs (artifact_runs/), policy by policy.

Trace 0e4a51, first 1001 jobs, 64 GPUs, predictions on: per-job start, end, predicted
start and predicted end must agree within 1e-6 relative (1 µs absolute near 0).
"""

from __future__ import annotations

import numpy as np
import pytest

from schedlab.pcs import make_policy, metrics, simulate
from schedlab.pcs.artifacts import RUNS, compare, load_run, run_config
from schedlab.pcs.generators import authors_rng, generate

from schedlab.pcs.artifacts import trace_0e4a51


@pytest.mark.parametrize("name", list(RUNS))
def test_workload2_per_job_exact(name, w1001):
    pol = make_policy("PCS", run_config(name)) if name.startswith("PCS") else make_policy(name)
    ours = simulate(w1001, pol, 64, predict=True)
    agree = compare(ours, load_run(name), rtol=1e-6)
    bad = {c: (a.n_bad, a.max_rel, a.first_bad) for c, a in agree.items() if not a.ok()}
    assert not bad, bad
    # also the derived per-job columns
    theirs = load_run(name)
    np.testing.assert_allclose(ours.num_apps_seen_diff, theirs.num_apps_seen_diff, rtol=1e-12)
    np.testing.assert_allclose(ours.fair_act, theirs.fair_act, rtol=1e-12)


def test_fifo_reference_engine_on_prefix():
    # FIFO never lets a later job affect an earlier one: a prefix run equals the authors'
    ours = simulate(trace_0e4a51(200), make_policy("FIFO"), 64, predict=True, engine="reference")
    theirs = load_run("FIFO")
    theirs = theirs[theirs.app_id < 200]
    assert all(a.ok() for a in compare(ours, theirs).values())


def test_other_config_versions_do_not_match(w1001):
    # the test can fail: today's rounded PCS-bal config gives different schedules
    from schedlab.pcs import load_config

    ours = simulate(w1001, make_policy("PCS", load_config("PCS_config_0e4a51_bal")), 64)
    assert compare(ours, load_run("PCS_bal"), columns=("end_time",))["end_time"].n_bad > 100


@pytest.mark.parametrize(
    "workload,path,load",
    [
        ("gavel", "workload3_gavel_load1.2_5seeds/FS_64_1.2_gavel-contsingle_{}.csv.gz", 1.2),
        ("themis1", "themis1_5seeds/MCS_64_0.8_themis1_{}_0.csv.gz", 0.8),
    ],
)
def test_generated_sizes_equal_authors_draws(workload, path, load):
    seed = 1954
    w = generate(workload, 5000, authors_rng(seed), load=load)
    theirs = load_run("pcs/artifact_runs/" + path.format(seed))
    np.testing.assert_array_equal(w.service, theirs.service.to_numpy(float))


# --- Themis -------------------------------------------------------------------------------
# No deterministic workload-2 Themis run of the authors is stored, but their workload-3 runs
# behind Fig. 8 are: generate("gavel", 3000, authors_rng(seed), load=1.2) is exactly that
# workload (tested below on FIFO/SRSF), run with a 600 s lease (their runs were named
# "gavel-contsingle", so the 10 s lease for "gavel" did not apply).
_W3 = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/{}_64_1.2_gavel-contsingle_{}.csv.gz"
THEMIS_EE9E8C = "pcs/authors_new_data/THEMIS_ee9e8c_result.csv"


@pytest.fixture(scope="module")
def gavel_1954():
    return generate("gavel", 3000, authors_rng(1954), load=1.2)


@pytest.mark.parametrize("name", ["FIFO", "SRSF"])
def test_workload3_generator_is_the_authors_workload(name, gavel_1954):
    ours = simulate(gavel_1954, make_policy(name), 64, predict=False)
    agree = compare(ours, load_run(_W3.format(name, 1954)), columns=("start_time", "end_time"))
    assert all(a.ok() for a in agree.values()), agree


def test_themis_per_job_exact(gavel_1954):
    from schedlab.pcs.policies import Themis

    ours = simulate(gavel_1954, Themis.fig8_runs(600.0), 64, predict=True)
    agree = compare(ours, load_run(_W3.format("THEMIS", 1954)), rtol=1e-6)
    bad = {c: (a.n_bad, a.max_rel, a.first_bad) for c, a in agree.items() if not a.ok()}
    assert not bad, bad


def test_themis_default_replay_differs_from_fig8_runs(gavel_1954):
    # the test can fail: the default replay (estimated sizes in t_ideal, lease ticks, as the
    # paper's Fig. 7 and the 2024 code) predicts differently for most jobs of the Fig. 8
    # runs; the main schedule is the same
    from schedlab.pcs.policies import Themis

    ours = simulate(gavel_1954, Themis(600.0), 64, predict=True)
    agree = compare(ours, load_run(_W3.format("THEMIS", 1954)))
    assert agree["end_time"].ok()
    assert agree["estimated_end_time"].n_bad > 1000


def test_themis_fig7_pred_error_2869ce():
    # Fig. 7 (fig7_avg_error_results.csv / fig7_p99_error_results.csv, row 5 = 2869ce):
    # Themis avg 33.82 %, p99 122.788 % (numpy's linear percentile), whole trace, 64 GPUs,
    # every arrival predicted (956 jobs < 5000). Only the default replay gives both.
    from schedlab import data
    from schedlab.pcs import load_trace
    from schedlab.pcs.policies import Themis

    w = load_trace(data.require("pcs/workload2_philly_traces/trace_2869ce.csv.gz"))
    got = {}
    for name, pol in [("default", Themis(600.0)), ("fig8", Themis.fig8_runs(600.0))]:
        e = metrics.pred_error(simulate(w, pol, 64, predict=True))
        got[name] = (round(float(e.mean()), 3), round(metrics.percentile(e, 99, "linear"), 3))
    assert got["default"] == (33.82, 122.788)
    assert got["fig8"] != got["default"]


@pytest.mark.slow
def test_themis_2024_code_per_job_exact_on_ee9e8c():
    # The authors' 2024 per-job Themis output for the whole ee9e8c trace (their
    # new_data/THEMIS_ee9e8c_result.csv; linear valuation; only a random subset of arrivals
    # predicted, -1 elsewhere). Not in the mirror: an optional input, fetched when reachable.
    from schedlab import data
    from schedlab.pcs import load_trace
    from schedlab.pcs.policies import Themis

    try:
        data.require(THEMIS_EE9E8C)
    except data.FetchError as exc:
        pytest.skip(f"optional input not available here: {exc}")
    theirs = load_run(THEMIS_EE9E8C)
    w = load_trace(data.require("pcs/workload2_philly_traces/trace_ee9e8c.csv.gz"))
    ours = simulate(w, Themis.output_2024_05_07(600.0), 64, predict=True)
    agree = compare(ours, theirs, rtol=1e-6)
    bad = {c: (a.n_bad, a.max_rel, a.first_bad) for c, a in agree.items() if not a.ok()}
    assert not bad, bad
    assert agree["estimated_end_time"].n > 5000


@pytest.mark.parametrize("trace,paper,linear", [("0e4a51", 1.324, 1.312), ("2869ce", 1.652, 1.625)])
def test_themis_fig7_normalised_jct_whole_trace(trace, paper, linear):
    # Fig. 7 (README: fig7_workload2_long.csv): Themis avg JCT / AFS avg JCT, whole trace,
    # 64 GPUs, to the printed digits. Only the speedup-aware valuation reproduces it.
    from schedlab import data
    from schedlab.pcs import load_trace
    from schedlab.pcs.policies import Themis

    w = load_trace(data.require(f"pcs/workload2_philly_traces/trace_{trace}.csv.gz"))
    afs = simulate(w, make_policy("AFS"), 64).end_time.sub(w.submit_s).mean()
    jct = {
        v: simulate(w, Themis(600.0, valuation=v), 64).end_time.sub(w.submit_s).mean()
        for v in ("speedup", "linear")
    }
    assert round(jct["speedup"] / afs, 3) == paper
    assert round(jct["linear"] / afs, 3) == linear


# --- LAS ----------------------------------------------------------------------------------
# The stored LAS runs behind Fig. 8 have 5000 apps. Their predictor replay keeps each job's
# true size in the attained-service key (PriorityPolicy("LAS") default, replay_size="true");
# the authors' snapshot before 2024-06-03 (sizes = estimates, attained restarts at 0,
# replay_size="estimate") predicts differently.
@pytest.fixture(scope="module")
def gavel_1954_5000():
    return generate("gavel", 5000, authors_rng(1954), load=1.2)


def test_las_per_job_exact(gavel_1954_5000):
    ours = simulate(gavel_1954_5000, make_policy("LAS"), 64, predict=True)
    agree = compare(ours, load_run(_W3.format("LAS", 1954)), rtol=1e-6)
    bad = {c: (a.n_bad, a.max_rel, a.first_bad) for c, a in agree.items() if not a.ok()}
    assert not bad, bad


def test_las_estimate_replay_does_not_match(gavel_1954_5000):
    # the test can fail: same main schedule, but attained service restarting at 0 in the
    # replay changes most predicted ends (first differing app 188)
    from schedlab.pcs.policies import PriorityPolicy

    ours = simulate(gavel_1954_5000, PriorityPolicy("LAS", replay_size="estimate"), 64, predict=True)
    agree = compare(ours, load_run(_W3.format("LAS", 1954)))
    assert agree["end_time"].ok() and agree["estimated_start_time"].ok()
    assert agree["estimated_end_time"].n_bad > 4000


@pytest.mark.parametrize("replay_size", ["true", "estimate"])
def test_las_variants_same_in_both_engines(replay_size):
    import pandas as pd

    from schedlab.pcs.policies import PriorityPolicy

    w = trace_0e4a51(150)
    a = simulate(w, PriorityPolicy("LAS", replay_size), 64, predict=True, engine="reference")
    b = simulate(w, PriorityPolicy("LAS", replay_size), 64, predict=True, engine="fast")
    pd.testing.assert_frame_equal(a, b, check_exact=True)
