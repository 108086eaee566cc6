import re
import tarfile

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from schedlab.polaris import synthetic
from schedlab.polaris.schema import TABLES, TRACE_TABLES


def _read(trace, table):
    with tarfile.open(trace / f"{table}.tar.gz") as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == [f"{table}.csv"]
        return pd.read_csv(tar.extractfile(members[0]), header=None, names=list(TABLES[table]),
                           dtype=str, keep_default_na=False)


def test_upstream_format(small_trace):
    trace, counts = small_trace
    job = _read(trace, "pai_job_table")
    task = _read(trace, "pai_task_table")
    inst = _read(trace, "pai_instance_table")
    sens = _read(trace, "pai_sensor_table")
    tag = _read(trace, "pai_group_tag_table")
    for t, df in zip(TRACE_TABLES, (job, task, inst, sens, tag)):
        assert len(df) == counts[t]
    hexre = {24: re.compile(r"^[0-9a-f]{24}$"), 60: re.compile(r"^[0-9a-f]{60}$"), 12: re.compile(r"^[0-9a-f]{12}$")}
    assert job.job_name.str.match(hexre[24]).all() and job.inst_id.str.match(hexre[60]).all()
    assert job.user.str.match(hexre[12]).all()
    assert inst.worker_name.str.match(hexre[60]).all() and sens.worker_name.isin(inst.worker_name).all()
    assert job.job_name.is_unique and inst.worker_name.is_unique
    assert set(job.status) <= {"Terminated", "Failed", "Running", "Waiting"}
    # several tasks / instances / sensor rows per job
    assert task.groupby("job_name").size().max() >= 2
    assert inst.groupby("job_name").size().mean() > 2
    # workload on about one job in ten (binomial 4-sigma band)
    share = (tag.workload != "").mean()
    p = 102_798 / 1_055_032
    assert abs(share - p) < 4 * np.sqrt(p * (1 - p) / len(tag))
    # CPU-only tasks have an empty plan_gpu and gpu_type, as upstream
    assert ((task.plan_gpu == "") == (task.gpu_type == "")).all()
    # machine spec copied byte-identical
    from schedlab import data
    assert (trace / "pai_machine_spec.tar.gz").read_bytes() == data.require(synthetic.MACHINE_SPEC).read_bytes()


def test_seeded_and_deterministic(tmp_path, calib):
    a = synthetic.synthesize(tmp_path / "a", 50, np.random.default_rng(1), calibration=calib, progress=False)
    b = synthetic.synthesize(tmp_path / "b", 50, np.random.default_rng(1), calibration=calib, progress=False)
    assert a == b
    for t in TRACE_TABLES:
        assert _read(tmp_path / "a", t).equals(_read(tmp_path / "b", t))


def test_copula_reproduces_marginals_and_dependence(calib_rows, calib):
    rng = np.random.default_rng(0)
    cop = calib.copulas["ctr"]
    real = calib_rows[calib_rows.workload == "ctr"]
    draw = pd.DataFrame(cop.sample(20_000, rng), columns=synthetic.COPULA_COLUMNS)
    for col in ("cpu_usage", "max_mem", "read", "duration"):
        assert stats.ks_2samp(draw[col], real[col]).statistic < 0.1, col
    for a, b in (("avg_mem", "max_mem"), ("read", "read_count"), ("avg_gpu_wrk_mem", "max_gpu_wrk_mem")):
        r_real = stats.spearmanr(real[a], real[b]).statistic
        r_syn = stats.spearmanr(draw[a], draw[b]).statistic
        assert abs(r_real - r_syn) < 0.15, (a, b, r_real, r_syn)
    # discrete columns only take observed values
    assert set(np.unique(draw.plan_mem)) <= set(real.plan_mem)


def test_sources_documented(calib):
    assert calib.source["ctr"].startswith("own copula")
    assert "pooled correlation" in calib.source["resnet"]
    assert calib.source["vgg"] == "pooled model (no real rows)"


def test_bad_size(tmp_path, calib):
    with pytest.raises(ValueError, match="preset"):
        synthetic.synthesize(tmp_path, "huge", np.random.default_rng(0), calibration=calib)


def test_deterministic_across_processes(tmp_path):
    """Same seed, different hash seeds (separate interpreters): byte-identical CSV members."""
    import hashlib
    import os
    import subprocess
    import sys

    code = ("import numpy as np, sys; from schedlab.polaris import synthetic; "
            "synthetic.synthesize(sys.argv[1], 60, np.random.default_rng(7), progress=False)")
    digests = []
    for i, hs in enumerate(("1", "2")):
        out = tmp_path / f"r{i}"
        subprocess.run([sys.executable, "-c", code, str(out)], check=True, env={**os.environ, "PYTHONHASHSEED": hs})
        with tarfile.open(out / "pai_task_table.tar.gz") as tar:
            digests.append(hashlib.sha256(tar.extractfile(tar.getmembers()[0]).read()).hexdigest())
    assert digests[0] == digests[1]


def test_size_bias_resample_weights():
    # weights inst_num ** -1: rows with 1 and 4 instances, half each -> P(1) = 1 / (1 + 1/4) = 0.8
    r = pd.DataFrame({"workload": ["bert"] * 4000 + ["ctr"] * 10, "inst_num": [1, 4] * 2005, "k": range(4010)})
    out = synthetic.size_bias_resample(r, 1.0, np.random.default_rng(0))
    assert out.workload.value_counts().to_dict() == {"bert": 4000, "ctr": 10}  # strata sizes kept
    assert abs((out[out.workload == "bert"].inst_num == 1).mean() - 0.8) < 0.03  # ~5 sd of binomial noise
    assert set(out.k) <= set(r.k) and (out.merge(r, on="k").inst_num_x == out.merge(r, on="k").inst_num_y).all()
