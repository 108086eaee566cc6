"""Bad trace input: clear errors naming file, line and field; nothing half-written."""

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import ingest, sampling

from .conftest import write_tar

JOB_ROW = "a,b,c,Terminated,1,2\n"


def _nothing_written(d):
    assert not [p for p in d.rglob("*.parquet*")], list(d.rglob("*"))


@pytest.mark.parametrize(
    "bad_line, where",
    [
        ("d,e,f,Failed,1,2,EXTRA\n", "line 4: 7 fields, expected 6"),
        ("d,e,f,Failed,1\n", "line 4: 5 fields, expected 6"),
        ("d,e,f,Failed,soon,2\n", "line 4, field start_time: 'soon' is not a number"),
    ],
)
def test_bad_row_names_file_line_and_field(tmp_path, bad_line, where):
    arch = tmp_path / "pai_job_table.tar.gz"
    write_tar(arch, "pai_job_table.csv", JOB_ROW * 3 + bad_line + JOB_ROW * 2)
    with pytest.raises(ingest.TraceFormatError) as err:
        ingest.archive_to_parquet(arch, "pai_job_table", tmp_path / "out" / "j.parquet", progress=False)
    msg = str(err.value)
    assert str(arch) in msg and "pai_job_table.csv" in msg and where in msg, msg
    _nothing_written(tmp_path)


def test_wrong_member_and_empty_csv(tmp_path):
    arch = tmp_path / "pai_job_table.tar.gz"
    write_tar(arch, "pai_task_table.csv", JOB_ROW)
    with pytest.raises(ingest.TraceFormatError, match="expected one member pai_job_table.csv"):
        ingest.archive_to_parquet(arch, "pai_job_table", tmp_path / "j.parquet", progress=False)
    write_tar(arch, "pai_job_table.csv", "")
    with pytest.raises(ingest.TraceFormatError, match="no rows"):
        ingest.archive_to_parquet(arch, "pai_job_table", tmp_path / "j.parquet", progress=False)
    (tmp_path / "plain.tar.gz").write_bytes(b"not a gzip stream at all")
    with pytest.raises(ingest.TraceFormatError, match="not a complete gzip tar"):
        ingest.archive_to_parquet(
            tmp_path / "plain.tar.gz", "pai_job_table", tmp_path / "j.parquet", progress=False
        )
    _nothing_written(tmp_path)


def test_truncated_archive_in_a_trace_dir(tmp_path, small_trace):
    import shutil

    src, _ = small_trace
    trace = tmp_path / "trace"
    shutil.copytree(src, trace)
    full = (trace / "pai_instance_table.tar.gz").read_bytes()
    (trace / "pai_instance_table.tar.gz").write_bytes(full[: len(full) * 2 // 3])
    with pytest.raises(ingest.TraceFormatError, match="pai_instance_table.tar.gz: not a complete gzip tar"):
        ingest.ingest_archives(trace, tmp_path / "work", progress=False)
    # all or nothing: the work directory is not even created, and no staging folder is left
    assert not (tmp_path / "work").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace"]


def test_checksums_checked_before_anything_is_converted(tmp_path, small_trace):
    trace, _ = small_trace
    with pytest.raises(ingest.TraceFormatError, match="pai_sensor_table.tar.gz: checksum mismatch"):
        ingest.ingest_archives(
            trace, tmp_path / "work", progress=False, checksums={"pai_sensor_table": "0" * 64}
        )
    assert not (tmp_path / "work").exists() or not list((tmp_path / "work").iterdir())


def test_unknown_workload_in_sampling_and_empty_strata():
    df = pd.DataFrame({"row": range(6), "workload": ["bert"] * 3 + ["gpt"] * 3})
    with pytest.raises(ValueError, match=r"unknown workload names \['gpt'\]"):
        sampling.stratified_sample(df, 4, np.random.default_rng(0))
    df = pd.DataFrame({"row": range(6), "workload": ["bert"] * 5 + ["ctr"]})
    with pytest.raises(sampling.EmptyStratumError, match="empty strata"):
        sampling.stratified_sample(df, 4, np.random.default_rng(0), strata=["bert", "ctr", "vgg"])
    with pytest.raises(sampling.EmptyStratumError, match=r"\['ctr'\] get 0 rows"):
        sampling.stratified_sample(df, 2, np.random.default_rng(0))


def test_sampling_parquet_with_empty_stratum_writes_nothing(tmp_path):
    from click.testing import CliRunner

    from schedlab.cli import main

    pd.DataFrame({"row": np.arange(50), "workload": ["bert"] * 49 + ["vgg"], "job_name": "j"}).to_parquet(
        tmp_path / "joined.parquet"
    )
    res = CliRunner().invoke(
        main,
        ["polaris", "sample", str(tmp_path / "joined.parquet"), str(tmp_path / "s.parquet"), "--total", "10"],
    )
    assert res.exit_code != 0 and "vgg" in res.output and "0 rows" in res.output, res.output
    assert not (tmp_path / "s.parquet").exists()
