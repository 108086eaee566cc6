"""Ingest the PAI trace archives with DuckDB and build the authors' joined table.

Pipeline: each ``pai_<table>.tar.gz`` (one header-less CSV member) is streamed, batch by batch,
into Parquet (bounded memory, byte progress); DuckDB then joins the Parquet files out of core
(``memory_limit``, spilling to ``temp_directory``) and writes the joined table to Parquet.

Joins
-----
``faithful`` (default, the authors' code): terminated **task** rows ⋈ job (``job_name``, brings
``inst_id``, ``user``) ⋈ group tag (``inst_id``, rows with a ``workload`` only: Table I covers
exactly the nine workloads) ⋈ instance **on inst_id** ⋈ sensor **on inst_id**. ``inst_id`` is a
job id, so a job yields the cross product of its tasks, instances and sensor rows (36,690,185
rows on the real trace). Times, status and ``duration = end_time - start_time`` are the task's.

``corrected`` (documented variant): instances joined on ``(job_name, task_name)`` and each
instance with its own sensor row on ``worker_name``: one row per instance; task-level times and
duration kept so the 17 features mean the same thing.

Examples
--------
>>> paths = ingest_archives(trace_dir, work_dir)            # doctest: +SKIP
>>> info = join(paths, work_dir / "joined.parquet")          # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from schedlab.progress import bar as progress_bar

from schedlab.data.fetch import sha256_file
from schedlab.io import atomic_path
from schedlab.polaris.schema import FEATURES, NUMERIC, TABLES, TRACE_TABLES, WORKLOADS

JOIN_KINDS = ("faithful", "corrected")


class TraceFormatError(ValueError):
    """A trace archive is missing, truncated or not in the upstream format."""


class _Counting:
    """File wrapper that reports bytes read to a tqdm bar."""

    def __init__(self, fh, bar):
        self.fh, self.bar = fh, bar

    def read(self, n=-1):
        b = self.fh.read(n)
        self.bar.update(len(b))
        return b

    @property
    def closed(self):
        return False


def archive_to_parquet(archive: str | Path, table: str, dest: str | Path, *, expected_sha256: str | None = None,
                       block_size: int = 16 << 20, progress: bool = True) -> int:
    """Stream ``pai_<table>.tar.gz`` into a Parquet file; returns the number of rows.

    Raises :class:`TraceFormatError` naming the file for: a missing archive, a checksum mismatch,
    an archive that is not a gzip tar or is truncated, a member that is not ``<table>.csv``, or a
    row with the wrong number of columns. ``dest`` is written atomically (nothing half-written).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    archive, dest = Path(archive), Path(dest)
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; known: {sorted(TABLES)}")
    if not archive.is_file():
        raise TraceFormatError(
            f"{archive}: archive missing; fetch the real one (`schedlab fetch alibaba-pai --optional`) "
            f"or write a synthetic trace (`schedlab polaris synthesize`)")
    if expected_sha256 is not None:
        got = sha256_file(archive)
        if got != expected_sha256:
            raise TraceFormatError(f"{archive}: checksum mismatch, expected sha256 {expected_sha256}, got {got}")
    cols = list(TABLES[table])
    types = {c: (pa.float64() if c in NUMERIC[table] else pa.string()) for c in cols}
    rows = 0
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = [m for m in tar.getmembers() if m.isfile()]
            if len(members) != 1 or Path(members[0].name).name != f"{table}.csv":
                raise TraceFormatError(f"{archive}: expected one member {table}.csv, found "
                                       f"{[m.name for m in members]}")
            member = members[0]
            fh = tar.extractfile(member)
            with progress_bar(total=member.size, unit="B", unit_scale=True, desc=table, disable=not progress,
                      leave=False) as bar, atomic_path(dest) as tmp:
                reader = pacsv.open_csv(
                    _Counting(fh, bar),
                    read_options=pacsv.ReadOptions(column_names=cols, block_size=block_size),
                    parse_options=pacsv.ParseOptions(newlines_in_values=False),
                    convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=True,
                                                         quoted_strings_can_be_null=True))
                schema = pa.schema([(c, types[c]) for c in cols])
                with pq.ParquetWriter(tmp, schema) as writer:
                    for batch in reader:
                        writer.write_batch(batch)
                        rows += batch.num_rows
    except TraceFormatError:
        raise
    except pa.ArrowInvalid as exc:
        msg = str(exc).splitlines()[0]
        if "Empty CSV file" in msg:
            raise TraceFormatError(f"{archive}: {table}.csv has no rows") from None
        hint = f"expected {len(cols)} comma-separated columns ({', '.join(cols)})"
        where = _locate_bad_line(archive, table)  # Arrow's block reader does not say which line
        raise TraceFormatError(f"{archive} ({table}.csv{', ' + where if where else ''}): {msg}; {hint}") from None
    except (EOFError, tarfile.TarError, zlib.error, OSError) as exc:
        raise TraceFormatError(f"{archive}: not a complete gzip tar archive ({type(exc).__name__}: {exc}); "
                               "the download may be truncated") from None
    if rows == 0:
        raise TraceFormatError(f"{archive}: {table}.csv has no rows")
    return rows


def _locate_bad_line(archive: Path, table: str) -> str | None:
    """The first line of the archive's CSV with a wrong field count or a non-numeric value in a
    numeric column, as ``"line N: ..."`` (a slow Python rescan, run only after a parse error)."""
    import csv
    import io

    cols = TABLES[table]
    numeric = [(i, c) for i, c in enumerate(cols) if c in NUMERIC[table]]
    try:
        with tarfile.open(archive, "r:gz") as tar:
            member = next(m for m in tar.getmembers() if m.isfile())
            text = io.TextIOWrapper(tar.extractfile(member), encoding="utf-8", newline="")
            for n, row in enumerate(csv.reader(text), start=1):
                if len(row) != len(cols):
                    return f"line {n}: {len(row)} fields, expected {len(cols)}"
                for i, c in numeric:
                    if row[i] != "":
                        try:
                            float(row[i])
                        except ValueError:
                            return f"line {n}, field {c}: {row[i]!r} is not a number"
    except (OSError, EOFError, tarfile.TarError, zlib.error, StopIteration, UnicodeDecodeError):
        return None
    return None


def ingest_archives(trace_dir: str | Path, work_dir: str | Path, *, checksums: dict[str, str] | None = None,
                    progress: bool = True, force: bool = False) -> dict[str, Path]:
    """Convert the five trace archives (and the machine spec) of ``trace_dir`` to Parquet in
    ``work_dir``.

    All or nothing: presence of every archive and every given checksum are checked before any is
    converted; the conversions go to a staging folder beside ``work_dir`` and move in only when
    every archive converted, so bad input leaves ``work_dir`` as it was (not created, if it did
    not exist). Parquet files already in ``work_dir`` are reused unless ``force``.
    """
    trace_dir, work_dir = Path(trace_dir), Path(work_dir)
    tables = (*TRACE_TABLES, "pai_machine_spec")
    missing = [t for t in tables if not (trace_dir / f"{t}.tar.gz").is_file()]
    if missing:
        raise TraceFormatError(f"{trace_dir}: missing archives {[m + '.tar.gz' for m in missing]}; fetch the real "
                               "trace (`schedlab fetch alibaba-pai --optional`) or synthesize one")
    todo = [t for t in tables if force or not (work_dir / f"{t}.parquet").is_file()]
    for t in todo:
        want = (checksums or {}).get(t)
        if want is not None and (got := sha256_file(trace_dir / f"{t}.tar.gz")) != want:
            raise TraceFormatError(f"{trace_dir / f'{t}.tar.gz'}: checksum mismatch, expected sha256 {want}, got {got}")
    if todo:
        work_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{work_dir.name}.partial-", dir=work_dir.parent))
        try:
            for t in todo:
                archive_to_parquet(trace_dir / f"{t}.tar.gz", t, staging / f"{t}.parquet", progress=progress)
            work_dir.mkdir(exist_ok=True)
            for t in todo:
                os.replace(staging / f"{t}.parquet", work_dir / f"{t}.parquet")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return {t: work_dir / f"{t}.parquet" for t in tables}


def require_parquet(path: str | Path, what: str = "the joined trace") -> Path:
    """``path`` if it is a Parquet file (magic bytes ``PAR1`` at both ends), else a clear error."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            fh.seek(max(path.stat().st_size - 4, 0))
            tail = fh.read(4)
    except OSError as exc:
        raise TraceFormatError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    if head != b"PAR1" or tail != b"PAR1":
        raise TraceFormatError(f"{path}: not a Parquet file; expected {what} as written by "
                               "`schedlab polaris ingest` (a .parquet file)")
    return path


def connect(memory_limit: str = "4GB", threads: int = 2, temp_directory: str | Path | None = None,
            progress: bool = True):
    """A DuckDB connection with bounded memory (spills to ``temp_directory``) and a progress bar."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET memory_limit='{memory_limit}'")
    con.execute(f"SET threads={int(threads)}")
    if temp_directory is not None:
        Path(temp_directory).mkdir(parents=True, exist_ok=True)
        con.execute(f"SET temp_directory='{Path(temp_directory).as_posix()}'")
    try:
        con.execute(f"SET enable_progress_bar={'true' if progress else 'false'}")
    except duckdb.Error:  # inside Jupyter without ipywidgets DuckDB refuses to touch the bar
        pass
    con.execute("SET preserve_insertion_order=false")
    return con


def _views(con, parquet: dict[str, Path]) -> None:
    for t, p in parquet.items():
        con.execute(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM read_parquet('{Path(p).as_posix()}')")


_SENSOR = ", ".join(f"s.{c}" for c in ("gpu_name", "cpu_usage", "gpu_wrk_util", "avg_mem", "max_mem",
                                       "avg_gpu_wrk_mem", "max_gpu_wrk_mem", "read", "write", "read_count",
                                       "write_count"))


def join_sql(kind: str, dest: str | Path) -> str:
    """The DuckDB statement writing the joined table of ``kind`` to ``dest`` (Parquet)."""
    if kind == "faithful":
        inst_on, sens_on = "i.inst_id = tg.inst_id", "s.inst_id = tg.inst_id"
    elif kind == "corrected":
        inst_on = "i.job_name = tg.job_name AND i.task_name = tg.task_name"
        sens_on = "s.worker_name = i.worker_name"
    else:
        raise ValueError(f"join kind must be one of {JOIN_KINDS}, got {kind!r}")
    return f"""
    COPY (
      WITH t AS (
        SELECT t.job_name, j.inst_id, j."user", t.task_name, t.inst_num, t.status, t.start_time, t.end_time,
               t.plan_cpu, t.plan_mem, t.plan_gpu, t.gpu_type
        FROM pai_task_table t JOIN pai_job_table j ON j.job_name = t.job_name
        WHERE t.status = 'Terminated'),
      tg AS (
        SELECT t.*, g."group", g.workload
        FROM t JOIN pai_group_tag_table g ON g.inst_id = t.inst_id
        WHERE g.workload IS NOT NULL AND g.workload <> '')
      SELECT row_number() OVER (ORDER BY tg.job_name, tg.task_name, i.worker_name, s.worker_name) - 1 AS "row",
             tg.*, i.inst_name, i.worker_name, i.machine,
             m.gpu_type AS gpu_type_machine_spec, m.cap_cpu AS cap_cpu_machine_spec,
             m.cap_mem AS cap_mem_machine_spec, m.cap_gpu AS cap_gpu_machine_spec,
             {_SENSOR}, tg.end_time - tg.start_time AS duration
      FROM tg
      JOIN pai_instance_table i ON {inst_on}
      JOIN pai_sensor_table s ON {sens_on}
      LEFT JOIN pai_machine_spec m ON m.machine = i.machine
    ) TO '{Path(dest).as_posix()}' (FORMAT parquet)
    """


@dataclass(frozen=True)
class JoinInfo:
    path: Path
    kind: str
    rows: int
    per_workload: dict[str, int]


def workload_counts(con, parquet: str | Path) -> dict[str, int]:
    df = con.execute(f"SELECT workload, count(*) AS n FROM read_parquet('{Path(parquet).as_posix()}') "
                     "GROUP BY workload ORDER BY workload").fetch_df()
    return dict(zip(df["workload"], df["n"].astype(int)))


def check_workloads(counts: dict[str, int], where: str) -> None:
    unknown = sorted(set(counts) - set(WORKLOADS))
    if unknown:
        raise TraceFormatError(f"{where}: unknown workload names {unknown}; expected a subset of {list(WORKLOADS)}")


def join(parquet: dict[str, Path], dest: str | Path, *, kind: str = "faithful", memory_limit: str = "4GB",
         threads: int = 2, temp_directory: str | Path | None = None, progress: bool = True) -> JoinInfo:
    """Join the ingested tables into ``dest`` (Parquet, written atomically)."""
    dest = Path(dest)
    spill = Path(temp_directory or dest.parent / ".duckdb_tmp")
    made_spill = not spill.exists()  # a spill folder made here goes when the join ends
    con = connect(memory_limit, threads, spill, progress)
    try:
        _views(con, parquet)
        gt = con.execute("SELECT DISTINCT workload FROM pai_group_tag_table WHERE workload IS NOT NULL "
                         "AND workload <> ''").fetch_df()
        check_workloads({w: 0 for w in gt["workload"]}, str(parquet["pai_group_tag_table"]))
        with atomic_path(dest) as tmp:
            con.execute(join_sql(kind, tmp))
        counts = workload_counts(con, dest)
    finally:
        con.close()
        if made_spill:
            shutil.rmtree(spill, ignore_errors=True)
    return JoinInfo(dest, kind, int(sum(counts.values())), counts)


def load_features(parquet: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """Read a joined / sampled Parquet file; the 17 features NaN-filled with 0 (authors' ``fillna(0)``)."""
    df = pd.read_parquet(parquet, columns=columns)
    present = [c for c in FEATURES if c in df.columns]
    df[present] = df[present].astype(float).fillna(0.0)
    return df


def feature_matrix(df: pd.DataFrame) -> np.ndarray:
    missing = [c for c in FEATURES if c not in df.columns]
    if missing:
        raise ValueError(f"feature columns missing: {missing}")
    return df[list(FEATURES)].to_numpy(dtype=float)
