import re
import tarfile

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import job_model, planted, synthetic
from schedlab.polaris.calibration import load_calibration_rows as calibration_rows
from schedlab.polaris.schema import TABLES, TRACE_TABLES


def _read(trace, table):
    with tarfile.open(trace / f"{table}.tar.gz") as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == [f"{table}.csv"]
        return pd.read_csv(
            tar.extractfile(members[0]),
            header=None,
            names=list(TABLES[table]),
            dtype=str,
            keep_default_na=False,
        )


def test_upstream_format(small_trace):
    trace, counts = small_trace
    job = _read(trace, "pai_job_table")
    task = _read(trace, "pai_task_table")
    inst = _read(trace, "pai_instance_table")
    sens = _read(trace, "pai_sensor_table")
    tag = _read(trace, "pai_group_tag_table")
    for t, df in zip(TRACE_TABLES, (job, task, inst, sens, tag)):
        assert len(df) == counts[t]
    hexre = {
        24: re.compile(r"^[0-9a-f]{24}$"),
        60: re.compile(r"^[0-9a-f]{60}$"),
        12: re.compile(r"^[0-9a-f]{12}$"),
    }
    assert job.job_name.str.match(hexre[24]).all() and job.inst_id.str.match(hexre[60]).all()
    assert job.user.str.match(hexre[12]).all()
    assert inst.worker_name.str.match(hexre[60]).all() and sens.worker_name.isin(inst.worker_name).all()
    assert job.job_name.is_unique and inst.worker_name.is_unique
    assert set(job.status) <= {"Terminated", "Failed", "Running", "Waiting"}
    # several tasks / instances / sensor rows per job
    assert task.groupby("job_name").size().max() >= 2
    assert inst.groupby("job_name").size().mean() > 2
    # workload on about one job in eight (the real 1 in 10, plus the jobs that size the strata as
    # Table I; binomial 4-sigma band)
    share = (tag.workload != "").mean()
    p = sum(synthetic.calibrate(calibration_rows()).job_share.values())
    assert abs(share - p) < 4 * np.sqrt(p * (1 - p) / len(tag))
    # CPU-only tasks have an empty plan_gpu and gpu_type, as upstream
    assert ((task.plan_gpu == "") == (task.gpu_type == "")).all()
    # machine spec copied byte-identical
    from schedlab import data

    assert (trace / "pai_machine_spec.tar.gz").read_bytes() == data.require(
        synthetic.MACHINE_SPEC
    ).read_bytes()


def test_seeded_and_deterministic(tmp_path, calib):
    a = synthetic.synthesize(tmp_path / "a", 50, np.random.default_rng(1), calibration=calib, progress=False)
    b = synthetic.synthesize(tmp_path / "b", 50, np.random.default_rng(1), calibration=calib, progress=False)
    assert a == b
    for t in TRACE_TABLES:
        assert _read(tmp_path / "a", t).equals(_read(tmp_path / "b", t))


def test_bad_size(tmp_path, calib):
    with pytest.raises(ValueError, match="preset"):
        synthetic.synthesize(tmp_path, "huge", np.random.default_rng(0), calibration=calib)


def test_deterministic_across_processes(tmp_path):
    """Same seed, different hash seeds (separate interpreters): byte-identical CSV members."""
    import hashlib
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, sys; from schedlab.polaris import synthetic; "
        "synthetic.synthesize(sys.argv[1], 60, np.random.default_rng(7), progress=False)"
    )
    digests = []
    for i, hs in enumerate(("1", "2")):
        out = tmp_path / f"r{i}"
        subprocess.run(
            [sys.executable, "-c", code, str(out)], check=True, env={**os.environ, "PYTHONHASHSEED": hs}
        )
        with tarfile.open(out / "pai_task_table.tar.gz") as tar:
            digests.append(hashlib.sha256(tar.extractfile(tar.getmembers()[0]).read()).hexdigest())
    assert digests[0] == digests[1]


# --- version v2: the trace's job -> task -> instance structure -------------------------------


@pytest.fixture(scope="module")
def v2_tables(calib):
    return synthetic.generate_tables(20_000, np.random.default_rng(3), calibration=calib)


def _faithful_rows_per_workload(tables):
    """tasks x instances^2 per terminated job with a workload: its rows in the authors' join."""
    job, task, inst, tag = (
        tables[t] for t in ("pai_job_table", "pai_task_table", "pai_instance_table", "pai_group_tag_table")
    )
    n_inst = inst.groupby("inst_id").size()
    n_task = task[task.status == "Terminated"].groupby("job_name").size()
    j = job.merge(tag[tag.workload != ""][["inst_id", "workload"]], on="inst_id")
    rows = j.job_name.map(n_task).fillna(0) * j.inst_id.map(n_inst).fillna(0) ** 2
    return rows.groupby(j.workload).sum()


def test_v2_structure_matches_the_trace(v2_tables, calib_rows):
    task, inst = v2_tables["pai_task_table"], v2_tables["pai_instance_table"]
    n_jobs = len(v2_tables["pai_job_table"])
    assert (task[task.task_name == "ps"].plan_gpu == "").all()  # ps tasks never plan GPUs (real: never)
    assert abs(len(task) / n_jobs - job_model.REAL_TASKS_PER_JOB) < 0.02  # real 1.195 tasks per job
    assert abs(len(inst) / n_jobs - job_model.REAL_INSTANCES_PER_JOB) < 1.0
    # discrete values are real values, exactly
    real_mem = set(calib_rows.plan_mem)
    assert set(pd.to_numeric(task.plan_mem)) <= real_mem
    sens = v2_tables["pai_sensor_table"]
    assert set(sens.max_gpu_wrk_mem) <= set(calib_rows.max_gpu_wrk_mem)


def test_v2_strata_sized_as_table_i(v2_tables):
    from schedlab.polaris.schema import REAL_JOB_ROWS, TABLE_I_SIZES

    rows = _faithful_rows_per_workload(v2_tables)
    scale = len(v2_tables["pai_job_table"]) / REAL_JOB_ROWS
    total = sum(TABLE_I_SIZES.values()) * scale
    assert abs(rows.sum() / total - 1) < 0.25, rows.sum() / total
    for w in ("bert", "ctr", "inception", "graphlearn"):  # the big strata; small ones are a few jobs here
        assert 0.6 < rows[w] / (TABLE_I_SIZES[w] * scale) < 1.6, (w, rows[w] / (TABLE_I_SIZES[w] * scale))
    # nmt: the 3 real nmt rows have 16 instances, so only ~0.5 % of nmt jobs may terminate (Table I: 13,537 rows)
    assert rows.get("nmt", 0) < 0.01 * rows.sum()


def test_v2_plants_the_papers_top_job(small_trace):
    trace, _ = small_trace
    job, task, tag = (
        _read(trace, "pai_job_table"),
        _read(trace, "pai_task_table"),
        _read(trace, "pai_group_tag_table"),
    )
    top = job[job.job_name == planted.PAPER_TOP_JOB_NAME]
    assert len(top) == 1 and top.status.iloc[0] == "Terminated"
    assert tag[tag.inst_id == top.inst_id.iloc[0]].workload.tolist() == ["rl"]
    top_task = task[task.job_name == planted.PAPER_TOP_JOB_NAME]
    assert top_task.inst_num.astype(int).tolist() == [planted.planted_top_job_instances(800)]
    assert top_task.task_name.tolist() == [synthetic.TOP_JOB_TASK] == ["worker"]


def test_calibration_is_checked(tmp_path, calib_rows):
    with pytest.raises(ValueError, match="lack columns.*'gpu_type'"):
        synthetic.calibrate(calib_rows.drop(columns="gpu_type"))
    with pytest.raises(ValueError, match="lack columns.*'job_name'"):  # groups are fitted per job
        synthetic.calibrate(calib_rows.drop(columns="job_name"))
    with pytest.raises(ValueError, match="unknown workload names.*'chess'"):
        synthetic.calibrate(calib_rows.assign(workload="chess"))
    with pytest.raises(TypeError, match="JobModel"):  # e.g. v1's calibration (benchmarks/_synthetic_v1.py)
        synthetic.synthesize(tmp_path, 10, np.random.default_rng(0), calibration=object(), progress=False)
    assert not list(tmp_path.iterdir())  # checked before anything is written
