"""The planned (sampled) join, the authors' pandas row-count quirks, and verified trace folders."""

import shutil

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import ingest, pipeline, sampling
from schedlab.polaris.schema import TABLES

from .conftest import write_tar


@pytest.fixture(scope="module")
def planned(ingested):
    parquet, work = ingested
    out = {}
    for kind in ingest.PLANNED_KINDS:
        full = ingest.join(
            parquet, work / f"sj_full_{kind}.parquet", kind=kind, progress=False, memory_limit="1GB"
        )
        plan = ingest.plan_join(
            parquet, work / f"sj_plan_{kind}.parquet", kind=kind, progress=False, memory_limit="1GB"
        )
        out[kind] = full, plan
    return out


@pytest.mark.parametrize("kind", ingest.PLANNED_KINDS)
def test_plan_gives_the_materialised_join_rows(planned, kind):
    full, plan = planned[kind]
    assert ingest.is_plan(plan.path) and not ingest.is_plan(full.path)
    assert (plan.rows, plan.per_workload) == (full.rows, full.per_workload) and plan.rows > 0
    rows = np.sort(np.random.default_rng(1).choice(full.rows, size=min(300, full.rows), replace=False))
    ref = pd.read_parquet(full.path).set_index("row").loc[rows].reset_index()
    got = ingest.build_rows(plan.path, rows)
    assert list(got.columns) == list(ingest.JOINED_COLUMNS)
    pd.testing.assert_frame_equal(got, ref, check_dtype=False)


@pytest.mark.parametrize("kind", ingest.PLANNED_KINDS)
def test_sample_plan_draws_the_rows_stratified_sample_draws(planned, kind):
    full, plan = planned[kind]
    a = sampling.stratified_sample(full.path, 300, np.random.default_rng(3), on_zero="keep")
    b = sampling.sample_plan(plan.path, 300, np.random.default_rng(3), on_zero="keep")
    assert len(b) > 0 and b["workload"].is_monotonic_increasing
    pd.testing.assert_frame_equal(a[list(b.columns)], b, check_dtype=False)
    only = sampling.sample_plan(plan.path, 50, np.random.default_rng(3), strata=["bert"], on_zero="keep")
    assert set(only["workload"]) == {"bert"}


@pytest.mark.parametrize("kind", ingest.PLANNED_KINDS)
def test_same_seed_same_sample_and_unseen_jobs_as_the_materialised_join(planned, kind):
    full, plan = planned[kind]
    a = pipeline.draw_sample(full.path, 400, 7, keep_zero_strata=True)
    b = pipeline.draw_sample(plan.path, 400, 7, keep_zero_strata=True)
    pd.testing.assert_frame_equal(a, b)
    c = pipeline.draw_sample(plan.path, 400, 8, keep_zero_strata=True)
    assert not a["row"].equals(c["row"])  # the seed matters
    for exclude in pipeline.UNSEEN_MODES:
        ua = pipeline.unseen_jobs(full.path, a, 60, 7, exclude=exclude)
        ub = pipeline.unseen_jobs(plan.path, b, 60, 7, exclude=exclude)
        pd.testing.assert_frame_equal(ua, ub, check_dtype=False)
        assert len(ub) == 60 and not set(ub["row"]) & set(b["row"])
    # "jobs": no test row belongs to a job the sample holds a row of; "rows" does draw such rows here
    assert not set(pipeline.unseen_jobs(plan.path, b, 60, 7)["inst_id"]) & set(b["inst_id"])
    assert set(pipeline.unseen_jobs(plan.path, b, 60, 7, exclude="rows")["inst_id"]) & set(b["inst_id"])


def test_rows_of_other_jobs_is_the_draw_over_those_rows():
    rng = np.random.default_rng(4)
    for n_units, n_seen, n in [(40, 0, 10), (40, 39, 10), (300, 100, 200), (300, 250, 500)]:
        jobs = rng.integers(0, 120, n_units).astype(str).astype(object)
        weight = rng.integers(1, 9, n_units)
        units = pd.DataFrame({"inst_id": jobs, "weight": weight, "start": np.cumsum(weight) - weight})
        seen = rng.choice(np.unique(jobs), size=min(n_seen, np.unique(jobs).size), replace=False)
        free = np.concatenate(
            [np.arange(s, s + w) for j, s, w in zip(jobs, units["start"], weight) if j not in set(seen)]
            or [[]]
        ).astype(np.int64)
        want = np.sort(np.random.default_rng(5).choice(free, size=min(n, free.size), replace=False))
        got = ingest.rows_of_other_jobs(units, seen, n, np.random.default_rng(5))
        np.testing.assert_array_equal(got, want)


def test_unseen_jobs_refuses_an_unknown_mode_and_says_when_nothing_is_left(planned):
    full, plan = planned["faithful"]
    with pytest.raises(ValueError, match="exclude must be one of"):
        pipeline.unseen_jobs(full.path, pd.DataFrame({"row": [], "inst_id": []}), 5, 0, exclude="job")
    everything = pd.read_parquet(full.path, columns=["row", "inst_id"])
    for joined in (full.path, plan.path):
        with pytest.raises(ValueError, match="no row left for Figure 5's test with exclude='jobs'"):
            pipeline.unseen_jobs(joined, everything.drop_duplicates("inst_id"), 5, 0)  # one row of every job


def test_unseen_rows_is_the_setdiff_draw():
    rng = np.random.default_rng(3)
    for n_rows, n_taken, n in [(50, 0, 10), (50, 49, 10), (1000, 300, 200), (1000, 600, 500)]:
        taken = rng.choice(n_rows, size=n_taken, replace=False)
        free = np.setdiff1d(np.arange(n_rows), taken)
        want = np.sort(np.random.default_rng(5).choice(free, size=min(n, free.size), replace=False))
        np.testing.assert_array_equal(ingest.unseen_rows(n_rows, taken, n, np.random.default_rng(5)), want)


# --- the authors' quirks on a hand-made trace ------------------------------------------------------
# pandas < 1.5 reads pai_<t>.tar.gz as plain gzip: row 0's first field carries the tar header (job,
# task, group-tag tables: their join key), and a trailing all-NaN row appears; pandas merges match
# NaN keys. N_JOBS jobs with M instances and M sensor rows each; job row 0 (J0), task row 0 (J1's task)
# and group-tag row 0 (J2's tag) are the corrupted ones. Job JX and a task with no job_name have NaN
# keys and reach a group tag with no inst_id (workload ctr); Q instance and sensor rows have no inst_id.
N_JOBS, M, Q = 5, 2, 2
EXPECTED = {
    "faithful": {"bert": N_JOBS * M * M},
    "authors": {"bert": (N_JOBS - 3) * M * M, "ctr": 2 * (Q + 1) ** 2},
}


def _quirk_trace(d):
    d.mkdir(parents=True)
    jobs = [f"J{k}" for k in range(N_JOBS)]
    job = [f"{j},I{j[1:]},u1,Terminated,1,9" for j in jobs] + ["JX,,u2,Terminated,1,9"]
    task = [f"{j},worker,{M},Terminated,1,5,600,29.3,100,T4" for j in ["J1", "J0", *jobs[2:], "JX", ""]]
    inst = [f"J{k},worker,i{k}{a},w{k}{a},I{k},Terminated,1,5,m1" for k in range(N_JOBS) for a in range(M)]
    inst += [f"JX,worker,ix{a},wx{a},,Terminated,1,5,m1" for a in range(Q)]
    sens = [
        f"J{k},worker,w{k}{a},I{k},m1,/dev/nvidia0,{10 + a},1,2,3,4,5,6,7,8,9"
        for k in range(N_JOBS)
        for a in range(M)
    ]
    sens += [f"JX,worker,wx{a},,m1,/dev/nvidia0,1,1,1,1,1,1,1,1,1,1" for a in range(Q)]
    tag = [f"I{k},u1,T4,g{k},bert" for k in (2, 0, 1, 3, 4)] + [",u2,T4,gx,ctr"]
    rows = {
        "pai_job_table": job,
        "pai_task_table": task,
        "pai_instance_table": inst,
        "pai_sensor_table": sens,
        "pai_group_tag_table": tag,
        "pai_machine_spec": ["m1,T4,96,512,2"],
    }
    for t, lines in rows.items():
        write_tar(d / f"{t}.tar.gz", f"{t}.csv", "\n".join(lines) + "\n")
    return d


def _old_pandas_read(path, table):
    """``pd.read_csv`` of a ``.tar.gz`` as old pandas did it: decompressed as one gzip stream, and a
    field cut at its first NUL byte (C string), so the tar padding's row is all NaN, as in the
    authors' printed tables (last row of ``job_df``: ``job_name`` NaN)."""
    df = pd.read_csv(path, compression="gzip", header=None, names=list(TABLES[table]), index_col=False)
    for c in df.select_dtypes(exclude="number").columns:
        df[c] = df[c].map(lambda v: (v.split("\x00")[0] or np.nan) if isinstance(v, str) else v)
    return df


def _old_pandas_join(d):
    """The authors' notebook (``alibaba_data-EDA-v0.3.ipynb``, cells 21-47) on old-pandas reads."""
    f = {t: _old_pandas_read(d / f"{t}.tar.gz", t) for t in TABLES}
    x = pd.merge(f["pai_job_table"][["job_name", "inst_id", "user"]], f["pai_task_table"], on="job_name")
    x = pd.merge(x, f["pai_group_tag_table"][["inst_id", "group", "workload"]], on="inst_id")
    x = x[(x.status == "Terminated") & x.workload.notnull()]
    x = pd.merge(x, f["pai_instance_table"][["inst_id", "worker_name"]], on="inst_id")
    x = pd.merge(x, f["pai_sensor_table"][["inst_id", "cpu_usage"]], on="inst_id")
    return x.workload.value_counts().sort_index().to_dict()


def test_authors_join_reproduces_old_pandas_row_counts(tmp_path):
    trace = _quirk_trace(tmp_path / "trace")
    assert _old_pandas_join(trace) == EXPECTED["authors"]  # the quirks are real, not our model of them
    parquet = ingest.ingest_archives(trace, tmp_path / "pq", progress=False)
    for kind, want in EXPECTED.items():
        full = ingest.join(
            parquet, tmp_path / f"full_{kind}.parquet", kind=kind, progress=False, memory_limit="1GB"
        )
        plan = ingest.plan_join(
            parquet, tmp_path / f"plan_{kind}.parquet", kind=kind, progress=False, memory_limit="1GB"
        )
        assert full.per_workload == plan.per_workload == want, kind
        assert plan.rows == sum(want.values())
        got = ingest.build_rows(plan.path, np.arange(plan.rows))
        pd.testing.assert_frame_equal(got, pd.read_parquet(full.path), check_dtype=False)
    ctr = got[got.workload == "ctr"]
    assert ctr.inst_id.isna().all() and ctr.worker_name.isna().sum() == 2 * (Q + 1)  # artefact rows joined


# --- verified trace folders -------------------------------------------------------------------------


def _real_like(tmp_path, small_trace, monkeypatch):
    """A copy of the small trace posing as the real one: the 'upstream' sums and sizes are its own."""
    from schedlab.data.fetch import sha256_file

    trace = tmp_path / "real_trace"
    shutil.copytree(small_trace[0], trace)
    names = [p.name.removesuffix(".tar.gz") for p in trace.glob("pai_*.tar.gz")]
    sums = {t: sha256_file(trace / f"{t}.tar.gz") for t in names}
    sizes = {t: (trace / f"{t}.tar.gz").stat().st_size for t in names}
    monkeypatch.setattr(ingest, "upstream_checksums", lambda: (sums, sizes))
    return trace


def test_real_trace_verified_then_used(tmp_path, small_trace, monkeypatch):
    trace = _real_like(tmp_path, small_trace, monkeypatch)
    info = pipeline.ingest_and_join(trace, tmp_path / "cache" / "real", "faithful", "1GB", materialize=False)
    assert ingest.is_plan(info.path) and info.rows > 0
    small = pipeline.ingest_and_join(trace, tmp_path / "cache" / "real", "faithful", "1GB")  # parquet reused
    assert not ingest.is_plan(small.path) and (small.rows, small.per_workload) == (
        info.rows,
        info.per_workload,
    )
    monkeypatch.setattr(ingest, "MATERIALIZE_MAX_ROWS", info.rows - 1)
    assert ingest.is_plan(
        pipeline.ingest_and_join(trace, tmp_path / "cache" / "real", "faithful", "1GB").path
    )


@pytest.mark.parametrize("table", ["pai_instance_table", "pai_job_table"])
def test_truncated_real_archive_names_the_file_and_leaves_no_work_dir(
    tmp_path, small_trace, monkeypatch, table
):
    trace = _real_like(tmp_path, small_trace, monkeypatch)
    arch = trace / f"{table}.tar.gz"
    arch.write_bytes(arch.read_bytes()[: arch.stat().st_size // 2])
    with pytest.raises(ingest.TraceFormatError, match=rf"{arch}: truncated: .* bytes, expected"):
        pipeline.ingest_and_join(trace, tmp_path / "cache" / "real", "faithful", "1GB")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["real_trace"]  # no cache/, no staging folder


def test_truncated_archive_without_checksums_leaves_no_work_dir(tmp_path, small_trace):
    trace = tmp_path / "t"
    shutil.copytree(small_trace[0], trace)
    arch = trace / "pai_sensor_table.tar.gz"
    arch.write_bytes(arch.read_bytes()[: arch.stat().st_size * 3 // 4])
    with pytest.raises(ingest.TraceFormatError, match=rf"{arch}: not a complete gzip tar"):
        pipeline.ingest_and_join(trace, tmp_path / "w", "faithful", "1GB", verify=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


def test_upstream_checksums_cover_every_archive():
    sums, sizes = ingest.upstream_checksums()
    assert set(sums) == set(sizes) == {*TABLES}
    assert sizes["pai_instance_table"] == 694_839_139 and len(sums["pai_job_table"]) == 64
