import tarfile

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import ingest
from schedlab.polaris.schema import FEATURES, TABLES

from .conftest import write_tar


def _frames(trace):
    out = {}
    for t in TABLES:
        with tarfile.open(trace / f"{t}.tar.gz") as tar:
            m = tar.getmembers()[0]
            out[t] = pd.read_csv(tar.extractfile(m), header=None, names=list(TABLES[t]))
    return out


def _pandas_join(f, kind):
    """Independent pandas version of both joins (row counts and duration)."""
    t = f["pai_task_table"][f["pai_task_table"].status == "Terminated"]
    t = t.merge(f["pai_job_table"][["job_name", "inst_id", "user"]], on="job_name")
    g = f["pai_group_tag_table"].dropna(subset=["workload"])
    t = t.merge(g[["inst_id", "group", "workload"]], on="inst_id")
    inst, sens = f["pai_instance_table"], f["pai_sensor_table"]
    if kind == "faithful":
        x = t.merge(inst[["inst_id", "worker_name"]], on="inst_id").merge(
            sens[["inst_id", "worker_name", "cpu_usage"]], on="inst_id", suffixes=("", "_s")
        )
    else:
        x = t.merge(inst[["job_name", "task_name", "worker_name"]], on=["job_name", "task_name"]).merge(
            sens[["worker_name", "cpu_usage"]], on="worker_name"
        )
    return x


@pytest.mark.parametrize("kind", ["faithful", "corrected"])
def test_join_matches_pandas(ingested, small_trace, kind):
    parquet, work = ingested
    info = ingest.join(parquet, work / f"{kind}.parquet", kind=kind, progress=False, memory_limit="1GB")
    ref = _pandas_join(_frames(small_trace[0]), kind)
    assert info.rows == len(ref) > 0
    assert info.per_workload == ref.workload.value_counts().sort_index().to_dict()
    got = ingest.load_features(info.path)
    assert list(got["row"]) == list(range(len(got)))
    assert not got[list(FEATURES)].isna().any().any()
    np.testing.assert_allclose(np.sort(got.cpu_usage), np.sort(ref.cpu_usage))
    np.testing.assert_allclose(got.duration, got.end_time - got.start_time)


def test_faithful_is_cross_product_per_job(ingested):
    parquet, work = ingested
    a = ingest.load_features(ingest.join(parquet, work / "f2.parquet", progress=False).path)
    c = ingest.load_features(ingest.join(parquet, work / "c2.parquet", kind="corrected", progress=False).path)
    assert len(a) > len(c)
    j = a.job_name.iloc[0]
    per = a[a.job_name == j]
    n_tasks, n_workers = per.task_name.nunique(), per.worker_name.nunique()
    assert len(per) == n_tasks * n_workers * n_workers  # tasks x instances x sensor rows


def test_bad_archives(tmp_path, small_trace):
    dest = tmp_path / "x.parquet"
    with pytest.raises(ingest.TraceFormatError, match="missing"):
        ingest.archive_to_parquet(tmp_path / "pai_job_table.tar.gz", "pai_job_table", dest)
    write_tar(tmp_path / "bad.tar.gz", "pai_job_table.csv", "a,b,c,Terminated,1,2\nd,e,f,Failed,1,2,EXTRA\n")
    with pytest.raises(ingest.TraceFormatError, match="expected 6 comma-separated columns"):
        ingest.archive_to_parquet(tmp_path / "bad.tar.gz", "pai_job_table", dest, progress=False)
    full = (small_trace[0] / "pai_sensor_table.tar.gz").read_bytes()
    (tmp_path / "trunc.tar.gz").write_bytes(full[: len(full) // 2])
    with pytest.raises(ingest.TraceFormatError, match="truncated"):
        ingest.archive_to_parquet(tmp_path / "trunc.tar.gz", "pai_sensor_table", dest, progress=False)
    with pytest.raises(ingest.TraceFormatError, match="checksum mismatch"):
        ingest.archive_to_parquet(
            small_trace[0] / "pai_job_table.tar.gz",
            "pai_job_table",
            dest,
            expected_sha256="0" * 64,
            progress=False,
        )
    assert not dest.exists()  # nothing half-written
    assert not list(tmp_path.glob(".x.parquet*"))


def test_missing_and_unknown_workload(tmp_path, small_trace, ingested):
    with pytest.raises(ingest.TraceFormatError, match="missing archives"):
        ingest.ingest_archives(tmp_path, tmp_path / "w", progress=False)
    parquet, work = ingested
    g = pd.read_parquet(parquet["pai_group_tag_table"])
    g.loc[g.index[0], "workload"] = "gpt5"
    g.to_parquet(tmp_path / "g.parquet")
    bad = {**parquet, "pai_group_tag_table": tmp_path / "g.parquet"}
    with pytest.raises(ingest.TraceFormatError, match="unknown workload names"):
        ingest.join(bad, tmp_path / "j.parquet", progress=False)
    assert not (tmp_path / "j.parquet").exists()
