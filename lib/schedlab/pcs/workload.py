"""Workloads: the jobs ("apps") a simulation runs, and the authors' trace CSV format.

A :class:`Workload` holds, per job, the submit time (integer microseconds since the first
arrival: the authors' clock is a :class:`datetime.datetime`, so every time they produce is a
whole number of microseconds), the size in single-GPU seconds, the maximum GPU demand and
the row of its speedup table.

The authors' trace CSV (``simulation/traces/trace_<vc>.csv``) has the columns
``app_id, submit_time, service, num_jobs, sleep_time[, model_name]`` where ``num_jobs`` is the
GPU demand. Their simulator builds the submit times from the cumulative sum of
``sleep_time`` (one ``timedelta`` per row) and ignores the ``submit_time`` column; we do the
same and check that both agree.

Examples
--------
>>> w = Workload.from_arrays(submit_s=[0, 5], service=[10.0, 4.0], demand=[1, 2])
>>> w.submit_us.tolist(), w.demand.tolist()
([0, 5000000], [1, 2])
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from schedlab.pcs.models import SpeedupTables, UnknownModelError, linear_tables, load_speedups

US = 1_000_000
#: the simulators' horizon: the authors' datetime clock ends ~2.5e11 s after 2020, so a projected
#: end farther than this is "never" for them (and for :mod:`schedlab.pcs.world`)
NEVER_S = 2.0e11


class TraceError(ValueError):
    """A trace file or array that cannot be simulated (names the row and field)."""


def seconds_to_us(x: np.ndarray | float) -> np.ndarray:
    """``timedelta(seconds=x)`` in integer microseconds, with CPython's rounding.

    CPython splits ``x`` into integer and fractional seconds and rounds the fractional
    microseconds half-to-even; ``np.rint`` is half-to-even too.

    >>> seconds_to_us(np.array([1.0000005, 2.5e-6])).tolist()
    [1000001, 2]
    """
    x = np.asarray(x, dtype=float)
    ip = np.trunc(x)
    return ip.astype(np.int64) * US + np.rint((x - ip) * 1e6).astype(np.int64)


@dataclass
class Workload:
    """Jobs of one simulation, in submit order (``app_id`` = row)."""

    submit_us: np.ndarray  # int64, since the first arrival
    service: np.ndarray  # float, single-GPU seconds
    demand: np.ndarray  # int64, max GPUs
    model: np.ndarray  # int64, row of ``tables``
    tables: SpeedupTables
    name: str = "workload"

    def __len__(self) -> int:
        return len(self.service)

    @property
    def submit_s(self) -> np.ndarray:
        """Submit times in seconds."""
        return self.submit_us / 1e6

    def head(self, n: int) -> "Workload":
        """The first ``n`` jobs."""
        return Workload(
            self.submit_us[:n], self.service[:n], self.demand[:n], self.model[:n], self.tables, self.name
        )

    def rows(self) -> np.ndarray:
        """Speedup table of each job, ``(n_jobs, width)``."""
        return self.tables.matrix[self.model]

    @classmethod
    def from_arrays(
        cls,
        submit_s: Sequence[float],
        service: Sequence[float],
        demand: Sequence[int],
        model: Sequence[str] | None = None,
        tables: SpeedupTables | None = None,
        name: str = "arrays",
    ) -> "Workload":
        """Build and validate a workload (``model`` defaults to ``LinearModel``)."""
        tables = tables if tables is not None else (linear_tables() if model is None else load_speedups())
        n = len(service)
        names = ["LinearModel"] * n if model is None else list(model)
        submit = np.asarray(submit_s, dtype=float)
        w = cls(
            seconds_to_us(submit),
            np.asarray(service, dtype=float),
            np.asarray(demand, dtype=np.int64),
            np.zeros(n, dtype=np.int64),
            tables,
            name,
        )
        for i, mname in enumerate(names):
            try:
                w.model[i] = tables.index(mname)
            except UnknownModelError as e:
                raise TraceError(f"{name}: row {i}: field 'model_name': {e}") from None
        validate(w, submit_s=submit)
        return w


def validate(w: Workload, submit_s: np.ndarray | None = None, lines: Sequence[int] | None = None) -> None:
    """Raise :class:`TraceError` naming the first bad row/field; return silently otherwise.

    ``lines``: the file line of each job (a trace read from CSV), so that errors name the line
    a person finds in an editor; without it errors name the 0-based job index (``row i``).
    """

    def at(i: int) -> str:
        return f"line {lines[i]}" if lines is not None else f"row {i}"

    sub = w.submit_us if submit_s is None else submit_s
    n = len(w.service)
    if not (len(sub) == len(w.demand) == len(w.model) == n):
        raise TraceError(f"{w.name}: arrays of different lengths")
    bad = np.flatnonzero(~np.isfinite(sub) | (sub < 0)) if submit_s is not None else np.flatnonzero(sub < 0)
    if len(bad):
        raise TraceError(
            f"{w.name}: {at(bad[0])}: field 'submit_time' = {sub[bad[0]]}: expected a finite time >= 0"
        )
    dec = np.flatnonzero(np.diff(sub) < 0)
    if len(dec):
        i = dec[0] + 1
        raise TraceError(
            f"{w.name}: {at(i)}: field 'submit_time' = {sub[i]} is before "
            f"{at(i - 1)} ({sub[i - 1]}): times must be sorted"
        )
    bad = np.flatnonzero(~np.isfinite(w.service) | (w.service <= 0))
    if len(bad):
        raise TraceError(
            f"{w.name}: {at(bad[0])}: field 'service' = {w.service[bad[0]]}: "
            "expected a positive size in GPU-seconds"
        )
    bad = np.flatnonzero(w.demand <= 0)
    if len(bad):
        raise TraceError(
            f"{w.name}: {at(bad[0])}: field 'num_jobs' (GPU demand) = "
            f"{w.demand[bad[0]]}: a job must demand at least 1 GPU"
        )
    cap = w.tables.max_gpus[w.model]
    bad = np.flatnonzero(w.demand > cap)
    if len(bad):
        i = bad[0]
        raise TraceError(
            f"{w.name}: {at(i)}: demand {w.demand[i]} GPUs exceeds the speedup "
            f"table of model {w.tables.names[w.model[i]]!r} ({cap[i]} GPUs)"
        )
    _check_ends_on_the_clock(w, at)


def _check_ends_on_the_clock(w: Workload, at) -> None:
    """Refuse, naming it, a job that cannot finish even alone at its best speedup (a ``service``
    of 1e308): the simulators treat a projected run of :data:`NEVER_S` seconds or
    more as never ending (the authors' datetime clock), and would stop with "some job never
    finishes" and no name. The rule is stated on the job alone: a job a few seconds over the horizon
    that other jobs' events happen to re-project under it is refused too. A job never gets more GPUs than it demands, so its best speedup is its model's best
    at 1..demand GPUs (one lookup per (model, demand) pair: traces have few)."""
    best = np.empty(len(w.service))
    pairs = np.stack([w.model, w.demand], axis=1)
    for k, d in np.unique(pairs, axis=0):
        best[(w.model == k) & (w.demand == d)] = np.nanmax(w.tables.matrix[k, 1 : d + 1])
    run_s = w.service / best  # 1e308 stays finite or inf: no integer clock to wrap
    bad = np.flatnonzero(~(run_s < NEVER_S))
    if len(bad):
        i = bad[0]
        raise TraceError(
            f"{w.name}: {at(i)}: field 'service' = {w.service[i]:g}: job {i} is too large to ever "
            f"finish: even alone at its best speedup ({best[i]:g}, at most {w.demand[i]} GPUs) it runs "
            f"{run_s[i]:.3g} s, not under the simulator's horizon of {NEVER_S:g} s (the authors' "
            f"datetime clock, about 6,300 years); expected a size below {NEVER_S * best[i]:.4g} "
            "GPU-seconds"
        )


#: the trace's columns, found by name in its header (any order); ``model_name`` is optional
TRACE_COLUMNS = ("app_id", "submit_time", "service", "num_jobs", "sleep_time")
OPTIONAL_COLUMNS = ("model_name",)


def _open_text(path: Path) -> io.TextIOBase:
    return gzip.open(path, "rt", newline="") if path.suffix == ".gz" else open(path, newline="")


def _columns(path: Path, header: list[str]) -> dict[str, int]:
    """Column positions by name; a clear error when a required column is missing."""
    names = [h.strip() for h in header]
    missing = [c for c in TRACE_COLUMNS if c not in names]
    if missing:
        raise TraceError(
            f"{path}: line 1: header {','.join(names)!r} lacks column(s) "
            f"{', '.join(missing)}; expected {','.join(TRACE_COLUMNS)}[,model_name]"
        )
    return {c: names.index(c) for c in TRACE_COLUMNS + OPTIONAL_COLUMNS if c in names}


def load_trace(
    path: str | Path, num_jobs: int | None = None, tables: SpeedupTables | None = None
) -> Workload:
    """Read the authors' trace CSV (plain or ``.gz``): the first ``num_jobs`` rows.

    Parameters
    ----------
    path : path
        ``app_id,submit_time,service,num_jobs,sleep_time[,model_name]`` with a header.
    num_jobs : int, optional
        Keep the first ``num_jobs`` rows (the authors' ``-num_apps K`` keeps K+1 rows).
        Default: the whole trace.
    tables : SpeedupTables, optional
        Default: :func:`~schedlab.pcs.models.load_speedups` (with ``LinearModel``, used for
        rows without a model name).

    Raises
    ------
    TraceError
        Naming the file, line and field of the first bad value: a header without the
        columns (found by name, in any order), unsorted or negative times, zero GPU demand,
        unknown model, non-numeric fields, a non-integer or repeated ``app_id``, no data rows,
        a file that is not (valid) gzip. The output numbers jobs by row (``app_id`` 0, 1, ...),
        as the authors' traces do.
    """
    path = Path(path)
    tables = tables if tables is not None else load_speedups()
    try:
        return _read_trace(path, num_jobs, tables)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error) as e:
        if isinstance(e, FileNotFoundError):
            raise
        kind = "gzip" if path.suffix == ".gz" else "UTF-8 text CSV"
        raise TraceError(
            f"{path}: cannot be read as {kind}: {e or type(e).__name__} (a truncated or corrupted file?)"
        ) from None


def _read_trace(path: Path, num_jobs: int | None, tables: SpeedupTables) -> Workload:
    sleep, service, demand, model, subcol, lines = [], [], [], [], [], []
    numeric = [
        ("app_id", int),
        ("submit_time", float),
        ("service", float),
        ("num_jobs", int),
        ("sleep_time", float),
    ]
    id_line: dict[int, int] = {}  # app_id -> the line that gave it: a repeated id names both lines
    with _open_text(path) as fp:
        reader = csv.reader(fp)
        header = next(reader, None)
        if header is None:
            raise TraceError(f"{path}: empty file")
        col = _columns(path, header)
        width = max(col[c] for c in TRACE_COLUMNS) + 1  # model_name may be left off a row
        for row in reader:
            if num_jobs is not None and len(service) >= num_jobs:
                break
            line = reader.line_num
            if (
                "#" in "".join(row) or not "".join(row).strip()
            ):  # commented rows (as the authors), blank lines
                continue
            if len(row) < width:
                raise TraceError(
                    f"{path}: line {line}: expected {len(header)} fields "
                    f"({','.join(h.strip() for h in header)}), got {len(row)}"
                )
            vals = {}
            for field_, conv in numeric:
                try:
                    vals[field_] = conv(row[col[field_]])
                except ValueError:
                    raise TraceError(
                        f"{path}: line {line}: field {field_!r} = {row[col[field_]]!r} is not "
                        f"a valid {conv.__name__}"
                    ) from None
            if vals["app_id"] in id_line:
                raise TraceError(
                    f"{path}: line {line}: field 'app_id' = {vals['app_id']} repeats line "
                    f"{id_line[vals['app_id']]}; expected one unique integer per job"
                )
            id_line[vals["app_id"]] = line
            if not np.isfinite(vals["sleep_time"]) or vals["sleep_time"] < 0:
                raise TraceError(
                    f"{path}: line {line}: field 'sleep_time' = {vals['sleep_time']}:"
                    " expected a finite inter-arrival time >= 0 (times must be sorted)"
                )
            k = col.get("model_name")
            mname = row[k] if k is not None and k < len(row) and row[k] else "LinearModel"
            try:
                model.append(tables.index(mname))
            except UnknownModelError as e:
                raise TraceError(f"{path}: line {line}: field 'model_name': {e}") from None
            subcol.append(vals["submit_time"])
            sleep.append(vals["sleep_time"])
            service.append(vals["service"])
            demand.append(vals["num_jobs"])
            lines.append(line)
    if not service:
        raise TraceError(f"{path}: no jobs: a header and no data rows")
    subcol_a = np.asarray(subcol, dtype=float)
    # One timedelta per row, accumulated, as the authors build their datetimes.
    submit_us = np.cumsum(seconds_to_us(np.asarray(sleep, dtype=float)))
    w = Workload(
        submit_us - (submit_us[0] if len(submit_us) else 0),
        np.asarray(service, dtype=float),
        np.asarray(demand, dtype=np.int64),
        np.asarray(model, dtype=np.int64),
        tables,
        path.name,
    )
    validate(w, submit_s=subcol_a, lines=lines)
    return w


def write_trace(w: Workload, path: str | Path) -> Path:
    """Write ``w`` in the authors' trace format; :func:`load_trace` reads it back exactly.

    Columns ``app_id,submit_time,service,num_jobs,sleep_time,model_name`` (``num_jobs`` is
    the GPU demand, ``sleep_time`` the gap to the previous row in seconds, 0 for the first).
    Times are written with the shortest decimal that round-trips, so the microsecond clock,
    sizes and demands come back bit for bit. ``.gz`` paths are gzip-compressed. The file is
    written atomically.

    >>> import tempfile, os
    >>> w = Workload.from_arrays(submit_s=[0, 2.5, 7], service=[10.0, 4.0, 3.0], demand=[1, 2, 1])
    >>> p = write_trace(w, os.path.join(tempfile.mkdtemp(), "t.csv"))
    >>> p.read_text().splitlines()[:3]
    ['app_id,submit_time,service,num_jobs,sleep_time,model_name', '0,0.0,10.0,1,0.0,LinearModel', '1,2.5,4.0,2,2.5,LinearModel']
    >>> back = load_trace(p, tables=w.tables)
    >>> bool((back.submit_us == w.submit_us).all() and (back.service == w.service).all())
    True
    """
    from schedlab.io import atomic_path

    path = Path(path)
    sub = np.asarray(w.submit_us, dtype=np.int64)
    gaps = np.diff(sub, prepend=sub[:1] if len(sub) else sub)
    names = w.tables.names
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(TRACE_COLUMNS + OPTIONAL_COLUMNS)
    for i in range(len(w)):
        out.writerow(
            [
                i,
                repr(float(sub[i] / US)),
                repr(float(w.service[i])),
                int(w.demand[i]),
                repr(float(gaps[i] / US)),
                names[int(w.model[i])],
            ]
        )
    text = buf.getvalue()
    with atomic_path(path) as tmp:
        if path.suffix == ".gz":
            with gzip.open(tmp, "wt", newline="") as fp:
                fp.write(text)
        else:
            Path(tmp).write_text(text)
    return path
