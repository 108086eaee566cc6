"""Random corruptions of a PAI trace table end in TraceFormatError, never another exception,
and never leave a partial Parquet file behind (see also tests/test_parser_fuzz.py)."""

from __future__ import annotations

import io
import tarfile
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.polaris import ingest

ROWS = (
    "4a1b,9f3c,u1,Terminated,1590000000.0,1590000100.0\n"
    "4a1c,9f3d,u2,Failed,1590000200.5,\n"
    "4a1d,9f3e,,Running,1590000300,1590000400\n"
).encode()


@st.composite
def corrupted(draw, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        if not out:
            break
        i = draw(st.integers(0, len(out) - 1))
        kind = draw(st.sampled_from(["flip", "delete", "insert", "truncate"]))
        if kind == "flip":
            out[i] = draw(st.integers(0, 255))
        elif kind == "delete":
            del out[i : i + draw(st.integers(1, 12))]
        elif kind == "insert":
            out[i:i] = draw(st.sampled_from([b",", b"\n", b'"', b"x", b"\x00", b"\xff", b"nan", b"-1e999"]))
        else:
            del out[i:]
    return bytes(out)


def _tar(member_bytes: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("pai_job_table.csv")
        info.size = len(member_bytes)
        tar.addfile(info, io.BytesIO(member_bytes))
    return buf.getvalue()


def _check(archive_bytes: bytes) -> None:
    d = Path(tempfile.mkdtemp())
    arch = d / "pai_job_table.tar.gz"
    arch.write_bytes(archive_bytes)
    try:
        ingest.archive_to_parquet(arch, "pai_job_table", d / "out" / "j.parquet", progress=False)
    except ingest.TraceFormatError as e:
        assert str(arch) in str(e), e
        assert not list(d.rglob("*.parquet*")), "a partial Parquet file was left behind"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted(ROWS))
def test_corrupted_csv_inside_a_valid_archive(data):
    _check(_tar(data))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted(_tar(ROWS)))
def test_corrupted_archive_bytes(data):
    _check(data)
