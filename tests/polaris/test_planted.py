"""Planted profiles in the v2 stand-in and their recovery score (adjusted Rand index)."""

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import pipeline, scoring, synthetic
from schedlab.polaris import grid, planted
from schedlab.polaris.planted import (
    AUTHORS_PROFILES,
    PLANTED_KEY,
    PLANTED_LABELS,
    PLANTED_PROFILES,
    TOP_JOB_LABEL,
    _authors_modes,
    attach_planted,
    planted_top_job_instances,
)
from schedlab.polaris.schema import WORKLOADS

N_JOBS = 2000


# ---- adjusted Rand index ------------------------------------------------------------------


def test_identical_partitions_score_one():
    labels = np.array([0, 0, 1, 1, 2, -1])
    r = scoring.planted_recovery(labels, labels)
    assert r["ari"] == 1.0 and r["ari_non_noise"] == 1.0
    assert (r["planted_profiles"], r["found_profiles"], r["rows_non_noise"]) == (3, 3, 5)


def test_permuted_labels_score_one():
    planted = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    found = np.array([5, 5, 5, 0, 0, 3, 3, 3])  # same partition, other names
    assert scoring.planted_recovery(found, planted)["ari"] == pytest.approx(1.0)


def test_closed_form_small_cases():
    # planted {0,0,0 | 1,1,1}, found {0,0 | 1,1 | 2,2}: sum C(n_ij,2) = 2, rows 6, columns 3,
    # expected 6*3/15 = 1.2, max (6+3)/2 = 4.5 -> ARI = (2-1.2)/(4.5-1.2) = 8/33
    r = scoring.planted_recovery([0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1])
    assert r["ari"] == pytest.approx(8 / 33, abs=1e-15)
    # planted {0,0 | 1,1}, found {0,0,0 | 1}: index 1 = its expectation 1 -> ARI 0
    assert scoring.planted_recovery([0, 0, 0, 1], [0, 0, 1, 1])["ari"] == pytest.approx(0.0, abs=1e-15)


def test_noise_counts_in_ari_but_not_in_ari_non_noise():
    planted = np.array([0, 0, 1, 1, -1, -1])
    found = np.array([0, 0, 1, 1, 0, 1])  # background rows put into clusters
    r = scoring.planted_recovery(found, planted)
    assert r["ari_non_noise"] == 1.0 and r["ari"] < 1.0
    assert r["planted_noise_share"] == pytest.approx(2 / 6) and r["found_noise_share"] == 0.0
    r = scoring.planted_recovery(np.array([0, -1, 1, 1, -1, -1]), planted)
    assert r["planted_rows_found_noise_share"] == pytest.approx(1 / 4)


def test_recovery_rejects_bad_input():
    with pytest.raises(ValueError, match="one length"):
        scoring.planted_recovery([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="integer"):
        scoring.planted_recovery([0.5, 1.0], [0, 1])


# ---- planted profiles in the generator ------------------------------------------------------


def test_authors_profiles_are_the_printed_ones():
    table = pd.DataFrame(AUTHORS_PROFILES, columns=["profile", "workload", "task_name", "rows"])
    assert table.profile.tolist() == list(range(26)) and set(table.workload) <= set(WORKLOADS)
    # the authors' clustered rows (75,398, Table V's set) less the 12 rows of minority workloads /
    # task names left to the background (profile 9: 1 graphlearn + 7 xlnet; profile 13: 4 workers)
    assert table.rows.sum() == 75_398 - 12
    modes = _authors_modes()
    assert sorted(p for _, a, b in modes for p in (a, b) if p >= 0) == list(range(26))


@pytest.fixture(scope="module")
def planted_work(tmp_path_factory, calib):
    work = tmp_path_factory.mktemp("planted")
    tdir = work / "trace"
    synthetic.synthesize(
        tdir, N_JOBS, np.random.default_rng([0, 1]), calibration=calib, planted="authors", progress=False
    )
    return work, tdir


@pytest.mark.parametrize("materialize", [True, False], ids=["joined", "plan"])
def test_planted_labels_stay_aligned_through_sampling(planted_work, materialize):
    work, tdir = planted_work
    info = pipeline.ingest_and_join(
        tdir, work / ("m" if materialize else "p"), "faithful", "1GB", verify=False, materialize=materialize
    )
    sample = attach_planted(pipeline.draw_sample(info.path, 3000, 0, keep_zero_strata=True), tdir)
    profiles = pd.read_csv(tdir / PLANTED_PROFILES).set_index("profile")
    # the authors' 26, and the paper's top job as its own profile when the trace is large enough to plant it
    assert profiles.index.tolist() == list(range(26 + (planted_top_job_instances(N_JOBS) > 0)))
    seen = sorted(set(sample.planted) - {-1})
    assert len(seen) >= 20  # most planted profiles reach a 3,000-row sample
    spread_checked = 0
    for p in seen:
        rows, want = sample[sample.planted == p], profiles.loc[p]
        assert (rows.workload == want.workload).all() and (rows.task_name == want.task_name).all()
        # a planted profile's rows spread around its template task's real values (PLANTED_SPREAD =
        # 0.1 in log: each task within a factor exp(0.5) = 1.65 of it at 5 sd), zeros stay zeros
        tasks = rows.drop_duplicates(["job_name", "task_name"])
        for c in ("plan_cpu", "plan_mem", "plan_gpu"):
            x, t = tasks[c].fillna(0).to_numpy(float), float(np.nan_to_num(want[c]))
            if t == 0:
                assert (x == 0).all(), f"profile {p}, {c}: a zero template value must stay 0"
                continue
            assert np.all(np.abs(np.log(x / t)) < 0.5), f"profile {p}, {c}"
            if len(tasks) >= 3 and p != TOP_JOB_LABEL:
                assert np.unique(x).size > 1, f"profile {p}, {c}: no spread over {len(tasks)} tasks"
                spread_checked += 1
    assert spread_checked >= 20
    background = sample[sample.planted == -1]
    assert background[["plan_cpu", "plan_mem", "inst_num"]].drop_duplicates().shape[0] > 5


def test_same_seed_same_planted_trace(tmp_path, calib, planted_work):
    _, tdir = planted_work
    again = tmp_path / "again"
    synthetic.synthesize(
        again, N_JOBS, np.random.default_rng([0, 1]), calibration=calib, planted="authors", progress=False
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(tdir / PLANTED_LABELS), pd.read_parquet(again / PLANTED_LABELS)
    )
    assert (tdir / PLANTED_PROFILES).read_text() == (again / PLANTED_PROFILES).read_text()
    a = synthetic.generate_tables(300, np.random.default_rng(4), calibration=calib, planted="authors")
    b = synthetic.generate_tables(300, np.random.default_rng(4), calibration=calib, planted="authors")
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k])
    assert PLANTED_KEY in a and PLANTED_KEY not in synthetic.generate_tables(
        300, np.random.default_rng(4), calibration=calib
    )


def test_planted_option_is_checked_and_default_writes_no_labels(tmp_path, calib, small_trace):
    with pytest.raises(ValueError, match="planted"):
        synthetic.synthesize(
            tmp_path / "x", 10, np.random.default_rng(0), calibration=calib, planted="mine", progress=False
        )
    with pytest.raises(ValueError, match="planted"):
        synthetic.generate_tables(10, np.random.default_rng(0), calibration=calib, planted="mine")
    assert not (small_trace[0] / PLANTED_LABELS).exists()
    with pytest.raises(FileNotFoundError, match="planted"):
        attach_planted(pd.DataFrame({"job_name": [], "task_name": []}), small_trace[0])


# ---- spread inside a planted profile, and the check clustering must earn ------------------------


def test_inst_moments_match_the_draws():
    inst = np.array([1, 2, 7, 40])
    m1, m2 = planted.inst_moments(inst, 0.1)
    draws = planted.spread_inst_num(np.repeat(inst, 200_000), 0.1, np.random.default_rng(5)).reshape(4, -1)
    # 200,000 draws: standard errors of the means below 0.3 % of these values
    np.testing.assert_allclose(draws.mean(axis=1), m1, rtol=0.01)
    np.testing.assert_allclose((draws.astype(float) ** 2).mean(axis=1), m2, rtol=0.02)
    assert (draws >= 1).all() and (draws[0] > 1).any()  # a one-instance task spreads too
    m1, m2 = planted.inst_moments(inst, 0.0)
    assert m1.tolist() == inst.tolist() and m2.tolist() == (inst**2).tolist()


def test_lookup_groups_exact_values_and_drops_small_groups():
    df = pd.DataFrame(
        {
            "inst_num": [1, 1, 1, 2, 2, 3],
            "plan_cpu": 100.0,
            "plan_mem": 1.0,
            "plan_gpu": [np.nan, np.nan, np.nan, 50, 50, 50],
            "max_gpu_wrk_mem": 0.0,
        }
    )
    assert planted.lookup_labels(df, 2).tolist() == [0, 0, 0, 1, 1, -1]
    assert planted.lookup_labels(df, 3).tolist() == [0, 0, 0, -1, -1, -1]
    assert (planted.lookup_labels(df, 4) == -1).all()
    with pytest.raises(ValueError, match="lacks columns"):
        planted.lookup_labels(df.drop(columns="plan_mem"), 2)
    with pytest.raises(ValueError, match="min_size"):
        planted.lookup_labels(df, 0)


def test_planted_spread_is_checked(calib):
    with pytest.raises(ValueError, match="spread"):
        synthetic.generate_tables(
            10, np.random.default_rng(0), calibration=calib, planted="authors", planted_spread=-0.1
        )


CHOSEN = grid.Config("hdbscan", "standard_scaler", "euclidean", 50)


@pytest.mark.parametrize("seed", [0, 1])
def test_clustering_beats_the_lookup_only_with_spread(tmp_path, seed):
    """The planted check with the default run's configuration: on profiles with spread the
    clustering beats a lookup on the five exactly copied columns; on profiles without it (the
    generator before the spread) the lookup wins, so this check can fail."""
    kw = dict(
        planted="authors", join="faithful", memory_limit="1GB", sample_total=4000, keep_zero_strata=True
    )
    rec, _ = pipeline.planted_recovery_run(tmp_path, 2500, seed, CHOSEN, **kw)
    assert rec["planted_spread"] == planted.PLANTED_SPREAD and rec["kmeans_k"] == rec["planted_profiles"]
    assert rec["passes"] and rec["ari"] > rec["lookup_ari"] + 0.2, rec
    assert rec["lookup_planted_rows_kept"] < 0.2  # spread: exact values no longer repeat
    flat, _ = pipeline.planted_recovery_run(tmp_path, 2500, seed, CHOSEN, planted_spread=0.0, **kw)
    assert not flat["passes"] and flat["lookup_ari"] >= flat["ari"], flat
