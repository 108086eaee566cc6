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

``authors``: faithful as the authors' pandas code computed it: old pandas read each ``.tar.gz``
as plain gzip, so row 0 of the job, task and group-tag tables has the tar header in its join key
(never matches) and every table gains a trailing all-NaN row; ``pd.merge`` matches NaN keys
(see :func:`_views`). This is the join behind their 36,690,185 rows.

Planned join (faithful, authors): :func:`plan_join` counts the rows from the key columns and
numbers them without building them; :func:`schedlab.polaris.sampling.sample_plan` /
:func:`build_rows` / :func:`unseen_rows` then build only the drawn rows, identical to the
materialised join's rows with the same numbers (order :data:`ROW_ORDER`).

``corrected`` (documented variant): instances joined on ``(job_name, task_name)`` and each
instance with its own sensor row on ``worker_name``: one row per instance; task-level times and
duration kept so the 17 features mean the same thing.

Examples
--------
>>> paths = ingest_archives(trace_dir, work_dir)            # doctest: +SKIP
>>> info = join(paths, work_dir / "joined.parquet")          # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import json
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

JOIN_KINDS = ("faithful", "corrected", "authors")
#: joins :func:`plan_join` can sample without materialising (a unit expands to a full cross product)
PLANNED_KINDS = ("faithful", "authors")
#: ``pipeline.ingest_and_join`` writes a planned join out in full up to this many rows
MATERIALIZE_MAX_ROWS = 2_000_000


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


def archive_to_parquet(
    archive: str | Path,
    table: str,
    dest: str | Path,
    *,
    expected_sha256: str | None = None,
    block_size: int = 16 << 20,
    progress: bool = True,
) -> int:
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
            f"or write a synthetic trace (`schedlab polaris synthesize`)"
        )
    if expected_sha256 is not None:
        got = sha256_file(archive)
        if got != expected_sha256:
            raise TraceFormatError(
                f"{archive}: checksum mismatch, expected sha256 {expected_sha256}, got {got}"
            )
    cols = list(TABLES[table])
    types = {c: (pa.float64() if c in NUMERIC[table] else pa.string()) for c in cols}
    rows = 0
    try:
        # stream mode ("r|gz"): the archive is decompressed exactly once; ``getmembers()`` on a
        # seekable ``r:gz`` would inflate the whole archive just to list it, then again to read it
        with _open_stream(archive) as tar, atomic_path(dest) as tmp:
            member = tar.next()
            while member is not None and not member.isfile():
                member = tar.next()
            if member is None or Path(member.name).name != f"{table}.csv":
                raise TraceFormatError(
                    f"{archive}: expected one member {table}.csv, found "
                    f"{[member.name] if member is not None else []}"
                )
            fh = tar.extractfile(member)
            with progress_bar(
                total=member.size, unit="B", unit_scale=True, desc=table, disable=not progress, leave=False
            ) as bar:
                reader = pacsv.open_csv(
                    _Counting(fh, bar),
                    read_options=pacsv.ReadOptions(column_names=cols, block_size=block_size),
                    parse_options=pacsv.ParseOptions(newlines_in_values=False),
                    convert_options=pacsv.ConvertOptions(
                        column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=True
                    ),
                )
                schema = pa.schema([(c, types[c]) for c in cols])
                with pq.ParquetWriter(tmp, schema) as writer:
                    for batch in reader:
                        writer.write_batch(batch)
                        rows += batch.num_rows
            extra = [m.name for m in iter(tar.next, None) if m.isfile()]  # reads on to the end-of-archive
            if extra:
                raise TraceFormatError(
                    f"{archive}: expected one member {table}.csv, found {[member.name, *extra]}"
                )
            if rows == 0:
                raise TraceFormatError(f"{archive}: {table}.csv has no rows")
    except TraceFormatError:
        raise
    except pa.ArrowInvalid as exc:
        msg = str(exc).splitlines()[0]
        if "Empty CSV file" in msg:
            raise TraceFormatError(f"{archive}: {table}.csv has no rows") from None
        hint = f"expected {len(cols)} comma-separated columns ({', '.join(cols)})"
        where = _locate_bad_line(archive, table)  # Arrow's block reader does not say which line
        raise TraceFormatError(
            f"{archive} ({table}.csv{', ' + where if where else ''}): {msg}; {hint}"
        ) from None
    except (EOFError, tarfile.TarError, zlib.error, OSError) as exc:
        raise TraceFormatError(
            f"{archive}: not a complete gzip tar archive ({type(exc).__name__}: {exc}); "
            "the download may be truncated"
        ) from None
    return rows


def _open_stream(archive: Path) -> tarfile.TarFile:
    """``archive`` as a streamed (``r|gz``) tar; a gzip header cut short is a
    :class:`tarfile.ReadError` (the stream reader would raise ``TypeError`` from ``ord(b"")``)."""
    try:
        return tarfile.open(archive, "r|gz")
    except TypeError:
        raise tarfile.ReadError("gzip header cut short") from None


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


def upstream_checksums() -> tuple[dict[str, str], dict[str, int]]:
    """sha256 and byte size of the upstream archives of the five trace tables and the machine
    spec, from the data manifest (``lib/schedlab/data/manifest.yaml``, the trace's published list)."""
    from schedlab import data

    names = (*TRACE_TABLES, "pai_machine_spec")
    entries = {t: data.entry(f"alibaba-pai/{t}.tar.gz") for t in names}
    return {t: e.sha256 for t, e in entries.items()}, {t: e.size for t, e in entries.items()}


def verify_archive(archive: Path, sha256: str | None, size: int | None = None) -> None:
    """Raise :class:`TraceFormatError` naming ``archive`` if its size or sha256 differs from the
    expected (a short file is reported as truncated)."""
    if size is not None and (got_size := archive.stat().st_size) != size:
        what = "truncated" if got_size < size else "larger than the upstream archive"
        raise TraceFormatError(
            f"{archive}: {what}: {got_size:,} bytes, expected {size:,} (upstream size); download it again"
        )
    if sha256 is not None and (got := sha256_file(archive)) != sha256:
        raise TraceFormatError(f"{archive}: checksum mismatch, expected sha256 {sha256}, got {got}")


def ingest_archives(
    trace_dir: str | Path,
    work_dir: str | Path,
    *,
    checksums: dict[str, str] | None = None,
    sizes: dict[str, int] | None = None,
    progress: bool = True,
    force: bool = False,
) -> dict[str, Path]:
    """Convert the five trace archives (and the machine spec) of ``trace_dir`` to Parquet in
    ``work_dir``.

    All or nothing: presence of every archive and every given size / checksum are checked before
    any is converted; the conversions go to a staging folder beside ``work_dir`` and move in only
    when every archive converted, so bad input leaves ``work_dir`` as it was (not created, if it
    did not exist, nor any missing parent folder). Each archive is decompressed once. Parquet
    files already in ``work_dir`` are reused unless ``force``.
    """
    trace_dir, work_dir = Path(trace_dir), Path(work_dir)
    tables = (*TRACE_TABLES, "pai_machine_spec")
    missing = [t for t in tables if not (trace_dir / f"{t}.tar.gz").is_file()]
    if missing:
        raise TraceFormatError(
            f"{trace_dir}: missing archives {[m + '.tar.gz' for m in missing]}; fetch the real "
            "trace (`schedlab fetch alibaba-pai --optional`) or synthesize one"
        )
    todo = [t for t in tables if force or not (work_dir / f"{t}.parquet").is_file()]
    for t in todo:
        verify_archive(trace_dir / f"{t}.tar.gz", (checksums or {}).get(t), (sizes or {}).get(t))
    if todo:
        made = [d for d in (work_dir, *work_dir.parents) if not d.exists()]
        work_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{work_dir.name}.partial-", dir=work_dir.parent))
        staging.chmod(0o755)  # mkdtemp's 0700 would otherwise become the work folder's mode
        ok = False
        try:
            for t in todo:
                archive_to_parquet(trace_dir / f"{t}.tar.gz", t, staging / f"{t}.parquet", progress=progress)
            if not work_dir.exists():
                os.replace(staging, work_dir)  # a new work folder appears complete, in one rename
            else:
                for t in todo:
                    os.replace(staging / f"{t}.parquet", work_dir / f"{t}.parquet")
            ok = True
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            if not ok:
                for d in made[1:]:  # parent folders this call created, deepest first
                    with contextlib.suppress(OSError):
                        d.rmdir()
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
        raise TraceFormatError(
            f"{path}: not a Parquet file; expected {what} as written by "
            "`schedlab polaris ingest` (a .parquet file)"
        )
    return path


def connect(
    memory_limit: str = "4GB",
    threads: int = 2,
    temp_directory: str | Path | None = None,
    progress: bool = True,
):
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


#: tables whose join key is the CSV's first field: pandas reading ``pai_<t>.tar.gz`` as plain gzip
#: glues the tar header onto that field of row 0, so the row never matches (``join="authors"``)
FIRST_FIELD_KEY_TABLES: tuple[str, ...] = ("pai_job_table", "pai_task_table", "pai_group_tag_table")
#: the joined table's columns, in order (both the materialised join and :func:`build_rows`)
JOINED_COLUMNS: tuple[str, ...] = (
    "row",
    "job_name",
    "inst_id",
    "user",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
    "group",
    "workload",
    "inst_name",
    "worker_name",
    "machine",
    "gpu_type_machine_spec",
    "cap_cpu_machine_spec",
    "cap_mem_machine_spec",
    "cap_gpu_machine_spec",
    "gpu_name",
    "cpu_usage",
    "gpu_wrk_util",
    "avg_mem",
    "max_mem",
    "avg_gpu_wrk_mem",
    "max_gpu_wrk_mem",
    "read",
    "write",
    "read_count",
    "write_count",
    "duration",
)


def _sql_type(table: str, col: str) -> str:
    return "DOUBLE" if col in NUMERIC[table] else "VARCHAR"


def _views(con, parquet: dict[str, Path], kind: str = "faithful") -> None:
    """One view per table with its columns and ``r``, the row's 0-based position in the CSV.

    ``kind="authors"`` reproduces what pandas makes of the archives (old pandas reads a
    ``.tar.gz`` as plain gzip): row 0 of :data:`FIRST_FIELD_KEY_TABLES` carries the tar header in
    its key and never matches (left out here), and every trace table gets a trailing all-NULL
    row (the tar end-of-archive padding), whose NULL keys match other NULL keys in pandas merges.
    """
    for t, path in parquet.items():
        cols = ", ".join(f'"{c}"' for c in TABLES[t])
        sel = (
            f"SELECT {cols}, file_row_number AS r FROM read_parquet('{Path(path).as_posix()}', "
            "file_row_number=true)"
        )
        if kind == "authors" and t in TRACE_TABLES:
            n = con.execute(f"SELECT count(*) FROM read_parquet('{Path(path).as_posix()}')").fetchone()[0]
            if t in FIRST_FIELD_KEY_TABLES:
                sel += " WHERE file_row_number > 0"
            nulls = ", ".join(f"NULL::{_sql_type(t, c)}" for c in TABLES[t])
            sel += f" UNION ALL SELECT {nulls}, {int(n)}::BIGINT"
        con.execute(f"CREATE OR REPLACE VIEW {t} AS {sel}")


def _key_eq(kind: str) -> str:
    """Key equality of the joins: pandas ``merge`` matches NaN keys with each other, SQL does not."""
    return "IS NOT DISTINCT FROM" if kind == "authors" else "="


_SENSOR = ", ".join(
    f"s.{c}"
    for c in (
        "gpu_name",
        "cpu_usage",
        "gpu_wrk_util",
        "avg_mem",
        "max_mem",
        "avg_gpu_wrk_mem",
        "max_gpu_wrk_mem",
        "read",
        "write",
        "read_count",
        "write_count",
    )
)
_SPEC = (
    "m.gpu_type AS gpu_type_machine_spec, m.cap_cpu AS cap_cpu_machine_spec, "
    "m.cap_mem AS cap_mem_machine_spec, m.cap_gpu AS cap_gpu_machine_spec"
)
_TG_COLS = (
    'job_name, inst_id, "user", task_name, inst_num, status, start_time, end_time, plan_cpu, plan_mem, '
    'plan_gpu, gpu_type, "group", workload'
)


def _units_cte(kind: str) -> str:
    """``tg``: terminated task rows with their job and a workload-carrying group-tag row (one
    *unit* each, identified by the source rows ``r_t, r_j, r_g``)."""
    eq = _key_eq(kind)
    return f"""
      t AS (
        SELECT t.job_name, j.inst_id, j."user", t.task_name, t.inst_num, t.status, t.start_time, t.end_time,
               t.plan_cpu, t.plan_mem, t.plan_gpu, t.gpu_type, t.r AS r_t, j.r AS r_j
        FROM pai_task_table t JOIN pai_job_table j ON j.job_name {eq} t.job_name
        WHERE t.status = 'Terminated'),
      tg AS (
        SELECT t.*, g."group", g.workload, g.r AS r_g
        FROM t JOIN pai_group_tag_table g ON g.inst_id {eq} t.inst_id
        WHERE g.workload IS NOT NULL AND g.workload <> '')"""


#: the joined table's row order (``row`` numbers it): unit keys, then instance, then sensor row;
#: ties broken by CSV position, so the order is total and the same in every run
_UNIT_ORDER = "tg.job_name, tg.task_name, tg.r_t, tg.r_j, tg.r_g"
ROW_ORDER = f"{_UNIT_ORDER}, i.worker_name, i.r, s.worker_name, s.r"


def join_sql(kind: str, dest: str | Path) -> str:
    """The DuckDB statement writing the joined table of ``kind`` to ``dest`` (Parquet)."""
    if kind in ("faithful", "authors"):
        eq = _key_eq(kind)
        inst_on, sens_on = f"i.inst_id {eq} tg.inst_id", f"s.inst_id {eq} tg.inst_id"
    elif kind == "corrected":
        inst_on = "i.job_name = tg.job_name AND i.task_name = tg.task_name"
        sens_on = "s.worker_name = i.worker_name"
    else:
        raise ValueError(f"join kind must be one of {JOIN_KINDS}, got {kind!r}")
    tg_cols = ", ".join(f"tg.{c.strip()}" for c in _TG_COLS.split(","))
    return f"""
    COPY (
      WITH {_units_cte(kind)}
      SELECT row_number() OVER (ORDER BY {ROW_ORDER}) - 1 AS "row",
             {tg_cols}, i.inst_name, i.worker_name, i.machine, {_SPEC},
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
    df = con.execute(
        f"SELECT workload, count(*) AS n FROM read_parquet('{Path(parquet).as_posix()}') "
        "GROUP BY workload ORDER BY workload"
    ).fetch_df()
    return dict(zip(df["workload"], df["n"].astype(int)))


def check_workloads(counts: dict[str, int], where: str) -> None:
    unknown = sorted(set(counts) - set(WORKLOADS))
    if unknown:
        raise TraceFormatError(
            f"{where}: unknown workload names {unknown}; expected a subset of {list(WORKLOADS)}"
        )


def join(
    parquet: dict[str, Path],
    dest: str | Path,
    *,
    kind: str = "faithful",
    memory_limit: str = "4GB",
    threads: int = 2,
    temp_directory: str | Path | None = None,
    progress: bool = True,
) -> JoinInfo:
    """Join the ingested tables into ``dest`` (Parquet, written atomically)."""
    dest = Path(dest)
    with _join_connection(parquet, kind, dest, memory_limit, threads, temp_directory, progress) as con:
        with atomic_path(dest) as tmp:
            con.execute(join_sql(kind, tmp))
        counts = workload_counts(con, dest)
    return JoinInfo(dest, kind, int(sum(counts.values())), counts)


@contextlib.contextmanager
def _join_connection(
    parquet: dict[str, Path],
    kind: str,
    dest: Path,
    memory_limit: str,
    threads: int,
    temp_directory: str | Path | None,
    progress: bool,
):
    """A DuckDB connection with the join's views, the group-tag workloads checked; a spill folder
    made here goes when the block ends."""
    spill = Path(temp_directory or dest.parent / ".duckdb_tmp")
    made_spill = not spill.exists()
    con = connect(memory_limit, threads, spill, progress)
    try:
        _views(con, parquet, kind)
        gt = con.execute(
            "SELECT DISTINCT workload FROM pai_group_tag_table WHERE workload IS NOT NULL AND workload <> ''"
        ).fetch_df()
        check_workloads({w: 0 for w in gt["workload"]}, str(parquet["pai_group_tag_table"]))
        yield con
    finally:
        con.close()
        if made_spill:
            shutil.rmtree(spill, ignore_errors=True)


# --- sampled join: count from narrow tables, draw positions, build only the drawn rows ----------
#
# A *unit* is one terminated task row with its job row and a workload-carrying group-tag row
# (``r_t, r_j, r_g``: their CSV positions). In the faithful / authors join a unit expands to the
# cross product of the instance and sensor rows of its ``inst_id``: ``ni * ns`` rows, contiguous in
# :data:`ROW_ORDER`. The plan (one line per unit, in that order, with ``start`` = its first ``row``)
# gives every row number of the joined table without building a row; :func:`build_rows` turns row
# numbers into full rows, identical to the materialised join's rows with those numbers.

_PLAN_META = b"schedlab.polaris.join_plan"


def plan_sql(kind: str) -> str:
    """The units of a ``kind`` join (faithful / authors) in row order, with instance and sensor
    row counts of their ``inst_id``: reads only key columns."""
    if kind not in PLANNED_KINDS:
        raise ValueError(f"a join plan needs kind in {PLANNED_KINDS}, got {kind!r}")
    eq = _key_eq(kind)
    return f"""
      WITH {_units_cte(kind)},
      ni AS (SELECT inst_id, count(*) AS ni FROM pai_instance_table GROUP BY inst_id),
      ns AS (SELECT inst_id, count(*) AS ns FROM pai_sensor_table GROUP BY inst_id)
      SELECT tg.workload, tg.inst_id, tg.r_t, tg.r_j, tg.r_g, ni.ni, ns.ns
      FROM tg JOIN ni ON ni.inst_id {eq} tg.inst_id JOIN ns ON ns.inst_id {eq} tg.inst_id
      ORDER BY {_UNIT_ORDER}"""


def plan_join(
    parquet: dict[str, Path],
    dest: str | Path,
    *,
    kind: str = "faithful",
    memory_limit: str = "4GB",
    threads: int = 2,
    temp_directory: str | Path | None = None,
    progress: bool = True,
) -> JoinInfo:
    """Write the join plan of ``kind`` to ``dest`` (Parquet, atomically) instead of the joined rows.

    ``JoinInfo.rows`` / ``per_workload`` equal those of :func:`join` with the same ``kind``;
    :func:`schedlab.polaris.sampling.sample_plan`, :func:`build_rows` and :func:`unseen_rows` then work
    from the plan.
    The machine spec must have one row per machine (else the left join would multiply rows).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    dest = Path(dest)
    with _join_connection(parquet, kind, dest, memory_limit, threads, temp_directory, progress) as con:
        dup = con.execute(
            "SELECT machine FROM pai_machine_spec GROUP BY machine HAVING count(*) > 1 LIMIT 3"
        ).fetchall()
        if dup:
            raise TraceFormatError(
                f"{parquet['pai_machine_spec']}: machine {dup[0][0]!r} appears more than once; "
                "expected one row per machine"
            )
        units = con.sql(plan_sql(kind)).to_arrow_table()
    weight = np.asarray(units["ni"], np.int64) * np.asarray(units["ns"], np.int64)
    start = np.concatenate([[0], np.cumsum(weight)[:-1]]).astype(np.int64)
    units = units.append_column("start", pa.array(start)).append_column("weight", pa.array(weight))
    meta = {
        "kind": kind,
        "rows": int(weight.sum()),
        "parquet": {t: Path(v).resolve().as_posix() for t, v in parquet.items()},
    }
    units = units.replace_schema_metadata({_PLAN_META: json.dumps(meta).encode()})
    with atomic_path(dest) as tmp:
        pq.write_table(units, tmp)
    wl = pd.Series(weight).groupby(np.asarray(units["workload"]).astype(str)).sum()
    counts = {w: int(n) for w, n in sorted(wl.items())}
    return JoinInfo(dest, kind, int(weight.sum()), counts)


def is_plan(path: str | Path) -> bool:
    """Whether ``path`` is a join plan written by :func:`plan_join` (not a materialised join)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(require_parquet(path, "a joined table or join plan")).metadata or {}
    return _PLAN_META in meta


def read_plan(path: str | Path) -> tuple[pd.DataFrame, dict]:
    """The plan's units (DataFrame) and its metadata (``kind``, ``rows``, ``parquet`` paths)."""
    import pyarrow.parquet as pq

    table = pq.read_table(require_parquet(path, "a join plan"))
    meta = (table.schema.metadata or {}).get(_PLAN_META)
    if meta is None:
        raise TraceFormatError(f"{path}: not a join plan (written by `ingest.plan_join`)")
    return table.to_pandas(), json.loads(meta)


def plan_counts(units: pd.DataFrame) -> dict[str, int]:
    """Rows per workload of the planned join (sorted by name, as :func:`workload_counts`)."""
    return {w: int(n) for w, n in units.groupby("workload")["weight"].sum().sort_index().items()}


def stratum_rows(units: pd.DataFrame, workload: str, positions: np.ndarray) -> np.ndarray:
    """Row numbers of the ``positions``-th rows (0-based, in row order) of ``workload``'s rows."""
    u = units[units["workload"] == workload]
    end = np.cumsum(u["weight"].to_numpy())
    k = np.asarray(positions, np.int64)
    if k.size and (k.min() < 0 or k.max() >= end[-1]):
        raise IndexError(f"positions outside 0..{end[-1] - 1} of stratum {workload!r}")
    i = np.searchsorted(end, k, side="right")
    first = end[i] - u["weight"].to_numpy()[i]
    return u["start"].to_numpy()[i] + (k - first)


def unseen_rows(n_rows: int, taken: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Up to ``n`` row numbers of ``0..n_rows-1`` outside ``taken``, drawn without replacement,
    sorted: the same draw as ``rng.choice(np.setdiff1d(np.arange(n_rows), taken), ...)`` without
    building that array (the ``k``-th free row is ``k`` plus the taken rows at or below it).

    >>> unseen_rows(10, np.array([2, 3, 7]), 7, np.random.default_rng(0)).tolist()
    [0, 1, 4, 5, 6, 8, 9]
    """
    taken = np.unique(np.asarray(taken, np.int64))
    free = n_rows - taken.size
    idx = rng.choice(free, size=min(n, free), replace=False)
    shifted = taken - np.arange(taken.size)
    return np.sort(idx + np.searchsorted(shifted, idx, side="right"))


def rows_of_other_jobs(units: pd.DataFrame, seen_jobs, n: int, rng: np.random.Generator) -> np.ndarray:
    """Up to ``n`` row numbers of the plan's rows whose job (``inst_id``, the key a job's rows are
    joined on) is not in ``seen_jobs``, drawn without replacement, sorted: the same draw as
    ``rng.choice(free_rows, ...)`` over those rows in row order, without building that array.

    >>> units = pd.DataFrame({"inst_id": ["a", "b", "a", "c"], "start": [0, 2, 5, 6], "weight": [2, 3, 1, 4]})
    >>> rows_of_other_jobs(units, ["a"], 7, np.random.default_rng(0)).tolist()
    [2, 3, 4, 6, 7, 8, 9]
    """
    free = ~units["inst_id"].isin(pd.Series(seen_jobs, dtype=object)).to_numpy()
    weight = np.where(free, units["weight"].to_numpy(np.int64), 0)
    end = np.cumsum(weight)
    total = int(end[-1]) if end.size else 0
    idx = np.sort(rng.choice(total, size=min(n, total), replace=False))
    u = np.searchsorted(end, idx, side="right")  # the free unit holding the idx-th free row
    return units["start"].to_numpy(np.int64)[u] + (idx - (end[u] - weight[u]))


def build_rows(
    plan: str | Path,
    rows: np.ndarray,
    *,
    units: pd.DataFrame | None = None,
    memory_limit: str = "2GB",
    threads: int = 2,
) -> pd.DataFrame:
    """The joined rows numbered ``rows`` (columns :data:`JOINED_COLUMNS`, ordered by ``row``),
    fetched from the ingested tables: only the drawn units' task / job / group-tag rows and the
    instance and sensor rows of their ``inst_id`` are read in full."""
    plan_units, meta = read_plan(plan)
    units = plan_units if units is None else units
    rows = np.unique(np.asarray(rows, np.int64))
    if rows.size and (rows[0] < 0 or rows[-1] >= meta["rows"]):
        raise IndexError(f"row numbers outside 0..{meta['rows'] - 1} of {plan}")
    start = units["start"].to_numpy()
    u = np.searchsorted(start, rows, side="right") - 1
    off = rows - start[u]
    ns = units["ns"].to_numpy()[u]
    picks = pd.DataFrame(
        {
            "row": rows,
            "r_t": units["r_t"].to_numpy()[u],
            "r_j": units["r_j"].to_numpy()[u],
            "r_g": units["r_g"].to_numpy()[u],
            "inst_id": units["inst_id"].to_numpy()[u],
            "a": off // ns,
            "b": off % ns,
        }
    )
    eq = _key_eq(meta["kind"])
    con = connect(memory_limit, threads, None, progress=False)
    try:
        _views(con, {t: Path(v) for t, v in meta["parquet"].items()}, meta["kind"])
        con.register("picks", picks)
        out = con.execute(f"""
          WITH ids AS (SELECT DISTINCT inst_id FROM picks),
          i AS (SELECT x.*, row_number() OVER (PARTITION BY x.inst_id ORDER BY x.worker_name, x.r) - 1 AS a
                FROM pai_instance_table x JOIN ids ON x.inst_id {eq} ids.inst_id),
          s AS (SELECT x.*, row_number() OVER (PARTITION BY x.inst_id ORDER BY x.worker_name, x.r) - 1 AS b
                FROM pai_sensor_table x JOIN ids ON x.inst_id {eq} ids.inst_id)
          SELECT p."row", t.job_name, j.inst_id, j."user", t.task_name, t.inst_num, t.status, t.start_time,
                 t.end_time, t.plan_cpu, t.plan_mem, t.plan_gpu, t.gpu_type, g."group", g.workload,
                 i.inst_name, i.worker_name, i.machine, {_SPEC},
                 {_SENSOR}, t.end_time - t.start_time AS duration
          FROM picks p
          JOIN pai_task_table t ON t.r = p.r_t
          JOIN pai_job_table j ON j.r = p.r_j
          JOIN pai_group_tag_table g ON g.r = p.r_g
          JOIN i ON i.inst_id {eq} p.inst_id AND i.a = p.a
          JOIN s ON s.inst_id {eq} p.inst_id AND s.b = p.b
          LEFT JOIN pai_machine_spec m ON m.machine = i.machine
          ORDER BY p."row" """).fetch_df()
    finally:
        con.close()
    if len(out) != rows.size:  # a plan older than its Parquet files, or files changed under it
        raise TraceFormatError(
            f"{plan}: built {len(out)} of {rows.size} rows; the ingested tables changed "
            "since the plan was written; re-run the ingest"
        )
    return out


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
