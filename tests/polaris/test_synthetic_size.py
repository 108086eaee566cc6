"""The stand-in's job sizes (workers per planned instance) and the sample they give."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from schedlab.polaris import pipeline, synthetic, synthetic_size
from schedlab.polaris.metadata import authors_one_hot_width, fit_metadata, template_mix
from schedlab.polaris.schema import TABLE_I_SIZES, WORKLOAD_JOB_COUNTS, WORKLOADS
from schedlab.polaris.synthetic_sample import metadata_sample


@pytest.mark.parametrize("a, cap", [(1.5, 7.0), (2.0, 5.0), (2.7, 40.0), (5.0, np.inf)])
def test_clipped_second_moment_matches_simulation(a, cap):
    k = np.minimum(np.random.default_rng(0).pareto(a, 2_000_000) + 1.0, cap)  # numpy's Pareto is Lomax
    mc = np.mean(k**2)
    assert synthetic_size.clipped_second_moment(a, np.array([cap]))[0] == pytest.approx(mc, rel=0.02)


def test_target_rows_are_table_i_over_terminated_jobs():
    share = 732_355 / 1_055_501
    for w in WORKLOADS:
        assert synthetic_size.target_rows_per_job(w) == pytest.approx(
            TABLE_I_SIZES[w] / (WORKLOAD_JOB_COUNTS[w] * share)
        )


@pytest.fixture(scope="module")
def mixes(calib):
    meta = fit_metadata(calib)
    return meta, {w: template_mix(meta, calib, w) for w in WORKLOADS}


def test_template_mix_is_a_distribution_with_the_mixed_moments(calib, mixes):
    from schedlab.polaris.metadata import mixed_template_moments

    meta, mix = mixes
    for w in WORKLOADS:
        first, second, p = mix[w]
        assert p.sum() == pytest.approx(1.0) and (p > 0).all()
        rows = synthetic_size.template_rows(calib, first, second)
        assert np.sum(p * rows) == pytest.approx(mixed_template_moments(meta, calib, w)[0], rel=1e-9)


def test_fitted_shapes_give_the_target_mean_or_none(calib, mixes):
    _, mix = mixes
    size = synthetic_size.fit_job_size(calib, mix, 461)
    for w in WORKLOADS:
        first, second, p = mix[w]
        rows = synthetic_size.template_rows(calib, first, second)
        caps = synthetic_size.job_caps(calib, first, second, 461)
        got = synthetic_size.mean_rows(size.shape[w], rows, p, caps)
        target = synthetic_size.target_rows_per_job(w)
        if np.isinf(size.shape[w]):  # the templates alone reach the target: no extra workers
            assert np.sum(p * rows) >= target
        else:
            assert got == pytest.approx(target, rel=1e-6), w
    # the workloads whose templates fall short get a tail (the paper's big strata among them)
    assert all(np.isfinite(size.shape[w]) for w in ("bert", "inception", "graphlearn", "rl"))


def test_same_job_pairs_of_the_real_rows_are_a_check_not_a_fit(calib, calib_rows, mixes):
    """Not fitted: the real rows' pairs of rows of one job (37 within workloads) are a plausible
    Poisson count under the sized model at the real trace's size, and implausible without it."""
    _, mix = mixes
    n_real = {
        w: int((calib_rows.workload == w).sum()) for w in WORKLOADS if (calib_rows.workload == w).sum() > 1
    }
    observed = sum(synthetic_size.pair_count(calib_rows.job_name, calib_rows.workload).values())
    expect = {}
    for label, size in (
        ("sized", synthetic_size.fit_job_size(calib, mix, 461)),
        ("none", synthetic_size.JobSize({w: np.inf for w in WORKLOADS}, 461)),
    ):
        parts = {
            w: (
                synthetic_size.template_rows(calib, *mix[w][:2]),
                mix[w][2],
                synthetic_size.job_caps(calib, *mix[w][:2], 461),
            )
            for w in n_real
        }
        expect[label] = sum(synthetic_size.expected_pairs(parts, size, n_real).values())
    assert observed == 37
    assert (
        stats.poisson(expect["sized"]).sf(observed - 1) > 0.05
        and stats.poisson(expect["sized"]).cdf(observed) > 0.05
    )
    assert stats.poisson(expect["none"]).sf(observed - 1) < 0.001, expect


def test_workers_at_least_instances_and_top_job_kept(calib):
    tables = synthetic.generate_tables(4_000, np.random.default_rng(5), calibration=calib)
    task, inst = tables["pai_task_table"], tables["pai_instance_table"]
    workers = inst.groupby(["job_name", "task_name"]).size()
    t = task[task.status != "Waiting"].set_index(["job_name", "task_name"])
    n = workers.reindex(t.index).fillna(0).to_numpy()
    assert (n >= t.inst_num.astype(int).to_numpy()).all()
    assert (n > t.inst_num.astype(int).to_numpy()).any()  # some jobs have more workers than instances
    assert (tables["pai_sensor_table"].groupby("inst_id").size() == inst.groupby("inst_id").size()).all()


def test_metadata_sample_is_the_pipelines_sample(tmp_path):
    """The shortcut draws the rows the pipeline's own path (trace, ingest, plan, sample) draws."""
    n_jobs, seed, total = 1_500, 4, 600
    work = pipeline.work_dir(tmp_path, "", n_jobs, seed)
    tdir = pipeline.trace_folder("", work, n_jobs, seed)
    info = pipeline.ingest_and_join(tdir, work, "faithful", "1GB", materialize=False)
    ours = pipeline.draw_sample(info.path, total, seed, keep_zero_strata=True)
    quick = metadata_sample(n_jobs, seed, total, on_zero="keep")
    cols = ["workload", "job_name", "task_name", "user", "group"]
    key = lambda d: d[cols].astype(str).sort_values(cols).reset_index(drop=True)  # noqa: E731
    pd.testing.assert_frame_equal(key(ours), key(quick))
    assert authors_one_hot_width(ours) == authors_one_hot_width(quick)
