"""Planted profiles in the v2 stand-in and their recovery score (adjusted Rand index)."""

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import pipeline, scoring, synthetic
from schedlab.polaris.planted import (AUTHORS_PROFILES, PLANTED_KEY, PLANTED_LABELS, PLANTED_PROFILES, _authors_modes,
                                      attach_planted, planted_top_job_instances)
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
    synthetic.synthesize(tdir, N_JOBS, np.random.default_rng([0, 1]), calibration=calib, planted="authors",
                         progress=False)
    return work, tdir


@pytest.mark.parametrize("materialize", [True, False], ids=["joined", "plan"])
def test_planted_labels_stay_aligned_through_sampling(planted_work, materialize):
    work, tdir = planted_work
    info = pipeline.ingest_and_join(tdir, work / ("m" if materialize else "p"), "faithful", "1GB", verify=False,
                                    materialize=materialize)
    sample = attach_planted(pipeline.draw_sample(info.path, 3000, 0, keep_zero_strata=True), tdir)
    profiles = pd.read_csv(tdir / PLANTED_PROFILES).set_index("profile")
    # the authors' 26, and the paper's top job as its own profile when the trace is large enough to plant it
    assert profiles.index.tolist() == list(range(26 + (planted_top_job_instances(N_JOBS) > 0)))
    seen = sorted(set(sample.planted) - {-1})
    assert len(seen) >= 20  # most planted profiles reach a 3,000-row sample
    for p in seen:
        rows, want = sample[sample.planted == p], profiles.loc[p]
        # a planted profile's rows are its template task's exact real values
        assert (rows.workload == want.workload).all() and (rows.task_name == want.task_name).all()
        for c in ("inst_num", "plan_cpu", "plan_mem", "plan_gpu"):
            np.testing.assert_array_equal(rows[c].to_numpy(float), np.full(len(rows), float(want[c])),
                                          err_msg=f"profile {p}, {c}")
    background = sample[sample.planted == -1]
    assert background[["plan_cpu", "plan_mem", "inst_num"]].drop_duplicates().shape[0] > 5


def test_same_seed_same_planted_trace(tmp_path, calib, planted_work):
    _, tdir = planted_work
    again = tmp_path / "again"
    synthetic.synthesize(again, N_JOBS, np.random.default_rng([0, 1]), calibration=calib, planted="authors",
                         progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(tdir / PLANTED_LABELS),
                                  pd.read_parquet(again / PLANTED_LABELS))
    assert (tdir / PLANTED_PROFILES).read_text() == (again / PLANTED_PROFILES).read_text()
    a = synthetic.generate_tables(300, np.random.default_rng(4), calibration=calib, planted="authors")
    b = synthetic.generate_tables(300, np.random.default_rng(4), calibration=calib, planted="authors")
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k])
    assert PLANTED_KEY in a and PLANTED_KEY not in synthetic.generate_tables(
        300, np.random.default_rng(4), calibration=calib)


def test_planted_option_is_checked_and_default_writes_no_labels(tmp_path, calib, small_trace):
    with pytest.raises(ValueError, match="planted"):
        synthetic.synthesize(tmp_path / "x", 10, np.random.default_rng(0), calibration=calib, planted="mine",
                             progress=False)
    with pytest.raises(ValueError, match="planted"):
        synthetic.generate_tables(10, np.random.default_rng(0), calibration=calib, planted="mine")
    assert not (small_trace[0] / PLANTED_LABELS).exists()
    with pytest.raises(FileNotFoundError, match="planted"):
        attach_planted(pd.DataFrame({"job_name": [], "task_name": []}), small_trace[0])
