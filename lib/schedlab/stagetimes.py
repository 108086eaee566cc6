"""How long each pipeline stage took on this machine, and the totals per paper and profile.

:func:`schedlab.notebooks.run` records one JSON per executed notebook under
``results/<paper>/timings/stages/<name>.json`` (wall and CPU seconds, the profile, the machine's
cores and load average at start and end, the commit it ran at). Like every file under ``timings/`` these are not
pipeline outputs: no stage declares or reads them, so the pipeline's outputs stay byte for byte
the same while the times are kept. ``schedlab timings`` (run at the end of ``make reproduce``)
prints them, so a paper-profile run states what its PCS part took.

:func:`write_timed` is the one way a notebook writes a table that carries times: the table
without its time columns goes to ``results/<paper>/<file>`` (a pipeline output, the same bytes
on every run), the times with the columns that name each row to ``results/<paper>/timings/<file>``.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> root = Path(tempfile.mkdtemp())
>>> _ = record(root, "pcs/fig9", profile="paper", wall_s=600.0, cpu_s=1150.0, load=(0.1, 2.0))
>>> _ = record(root, "pcs/fig7", profile="paper", wall_s=780.0, cpu_s=1500.0, load=(0.2, 1.9))
>>> t = table(root)
>>> t[["stage", "wall_s"]].values.tolist()
[['pcs/fig7', 780.0], ['pcs/fig9', 600.0]]
>>> row = totals(t).iloc[0]
>>> row.paper, row.profile, int(row.stages), float(row.wall_min)
('pcs', 'paper', 2, 23.0)
>>> rows = pd.DataFrame({"load": [0.5], "scheme": ["nona"], "jct_s": [0.2], "wall_s": [1.5]})
>>> kept, times = split_timings(rows, ["wall_s"], ["load", "scheme"])
>>> list(kept.columns), list(times.columns)
(['load', 'scheme', 'jct_s'], ['load', 'scheme', 'wall_s'])
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from pathlib import Path
from typing import Protocol, Sequence

import pandas as pd

from schedlab import paths, provenance
from schedlab.io import atomic_write_text

#: the folder under ``results/<paper>/timings/`` that holds one JSON per stage run
FOLDER = "stages"
COLUMNS = [
    "stage",
    "profile",
    "wall_s",
    "cpu_s",
    "cores",
    "load_start",
    "load_end",
    "started_utc",
    "host",
    "commit",
    "uncommitted",
]
#: columns a record written before they were kept may lack (read as empty)
OPTIONAL = ("commit", "uncommitted")


def stage_file(root: Path, name: str) -> Path:
    """``root/results/<paper>/timings/stages/<stem>.json`` for notebook ``name`` (``pcs/fig9``)."""
    paper, _, stem = name.partition("/")
    if not stem:
        raise ValueError(f"notebook name {name!r}: expected <paper>/<name>, e.g. pcs/fig9")
    return Path(root) / "results" / paper / paths.TIMINGS / FOLDER / f"{stem}.json"


def record(
    root: Path,
    name: str,
    *,
    profile: str,
    wall_s: float,
    cpu_s: float,
    load: tuple[float, float],
    started: _dt.datetime | None = None,
) -> Path:
    """Write the times of one run of notebook ``name`` (atomically); returns the file."""
    started = started or _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(seconds=wall_s)
    entry = {
        "stage": name,
        "profile": profile,
        "wall_s": round(wall_s, 3),
        "cpu_s": round(cpu_s, 3),
        "cores": os.cpu_count(),
        "load_start": load[0],
        "load_end": load[1],
        "started_utc": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": platform.node(),
        # the commit of the code that ran (the checkout, wherever the outputs went): dvc repro skips
        # unchanged stages, so a scorecard's numbers may come from older commits (provenance.stage_runs)
        **provenance.git_state(paths.ROOT),
    }
    path = stage_file(root, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(entry, indent=1) + "\n")
    return path


def load_average() -> float:
    """The 1-minute load average (0 where the platform has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


def table(root: Path | None = None) -> pd.DataFrame:
    """Every recorded stage under ``root`` (default: the repository), by paper then stage."""
    root = Path(root) if root is not None else paths.ROOT
    rows = []
    for f in sorted((root / "results").glob(f"*/{paths.TIMINGS}/{FOLDER}/*.json")):
        try:
            entry = json.loads(f.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{f}: not a stage-times JSON ({exc})") from None
        missing = [c for c in COLUMNS if c not in entry and c not in OPTIONAL]
        if missing:
            raise ValueError(f"{f}: missing field(s) {', '.join(missing)}")
        rows.append({c: entry.get(c) for c in COLUMNS})
    return pd.DataFrame(rows, columns=COLUMNS).sort_values("stage", kind="stable").reset_index(drop=True)


def runs_summary(root: Path | None = None) -> dict:
    """The recorded stage runs under ``root`` for :func:`schedlab.provenance.describe`: how many,
    under which profiles and at which commits (a count each), when the first and the last began.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = record(root, "pcs/fig1", profile="teaching", wall_s=1.0, cpu_s=1.0, load=(0.0, 0.0))
    >>> s = runs_summary(root)
    >>> s["count"], s["profiles"]
    (1, {'teaching': 1})
    """
    t = table(root)
    # no commit: a run outside a git checkout, or a record from before commits were kept
    commits = [
        provenance.label({"commit": c, "uncommitted": None if pd.isna(u) else int(u)})
        if isinstance(c, str)
        else "not recorded"
        for c, u in zip(t.commit, t.uncommitted)
    ]
    return {
        "count": len(t),
        "profiles": {str(k): int(v) for k, v in t.profile.value_counts().sort_index().items()},
        "commits": {k: commits.count(k) for k in sorted(set(commits))},
        "first_utc": t.started_utc.min() if len(t) else None,
        "last_utc": t.started_utc.max() if len(t) else None,
    }


def totals(t: pd.DataFrame) -> pd.DataFrame:
    """Wall and CPU minutes per (paper, profile): the stages of one paper ran one after another
    under ``dvc repro``, so their walls add up; the load columns say how busy the machine was."""
    t = t.assign(paper=t.stage.str.partition("/")[0], load=t[["load_start", "load_end"]].max(axis=1))
    g = t.groupby(["paper", "profile"], sort=True)
    out = g.agg(
        stages=("stage", "size"), wall_s=("wall_s", "sum"), cpu_s=("cpu_s", "sum"), max_load=("load", "max")
    ).reset_index()
    out["wall_min"] = (out.wall_s / 60).round(1)
    out["cpu_min"] = (out.cpu_s / 60).round(1)
    return out[["paper", "profile", "stages", "wall_min", "cpu_min", "max_load"]]


class _Outputs(Protocol):
    """Where a notebook writes (:class:`schedlab.notebooks.Outputs`)."""

    def results(self, filename: str) -> Path: ...

    def timings(self, filename: str) -> Path: ...


def split_timings(
    table: pd.DataFrame, timing_columns: Sequence[str], key_columns: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``table`` without ``timing_columns``, and ``key_columns`` then ``timing_columns``.

    Parameters
    ----------
    table
        Rows carrying both results and wall-clock or CPU times.
    timing_columns
        The columns that vary from run to run (times, or values derived from them).
    key_columns
        The columns that name a row, kept next to its times.

    Returns
    -------
    tuple of DataFrame
        The reproducible part (column order kept) and the times.

    Raises
    ------
    KeyError
        A named column is not in ``table``, or a column is both a key and a time.
    """
    missing = [c for c in [*key_columns, *timing_columns] if c not in table.columns]
    if missing:
        raise KeyError(f"split_timings: no column {missing} in {list(table.columns)}")
    both = sorted(set(key_columns) & set(timing_columns))
    if both:
        raise KeyError(f"split_timings: {both} given both as key and as timing columns")
    return table.drop(columns=list(timing_columns)), table[[*key_columns, *timing_columns]].copy()


def write_timed(
    out: _Outputs,
    table: pd.DataFrame,
    filename: str,
    *,
    timing_columns: Sequence[str],
    key_columns: Sequence[str],
    timings_filename: str | None = None,
) -> pd.DataFrame:
    """Write ``table`` without its times to ``out.results(filename)`` and its times (under
    ``key_columns``) to ``out.timings(timings_filename or filename)``, both as CSV, atomically.

    The first file is a pipeline output and stays byte-identical from run to run; the second
    is read only by the timing reports (``timings/comparison.md``, ``schedlab timings``).

    Parameters
    ----------
    out
        The notebook's :class:`schedlab.notebooks.Outputs`.
    table, timing_columns, key_columns
        As for :func:`split_timings`.
    filename
        The file name under ``results/<paper>/`` (and under ``results/<paper>/timings/``,
        unless ``timings_filename`` names another).
    timings_filename
        The times' file name under ``results/<paper>/timings/``, where it differs.

    Returns
    -------
    DataFrame
        The part written to the results (what the figure is drawn from).

    Examples
    --------
    >>> import tempfile
    >>> from schedlab.notebooks import Outputs
    >>> out = Outputs(tempfile.mkdtemp(), "nona/demo")
    >>> t = pd.DataFrame({"servers": [8, 16], "objective": [1.0, 2.0], "solve_s": [0.3, 0.9]})
    >>> write_timed(out, t, "demo.csv", timing_columns=["solve_s"], key_columns=["servers"]).columns.tolist()
    ['servers', 'objective']
    >>> out.timings("demo.csv").read_text().splitlines()[0]
    'servers,solve_s'
    """
    kept, times = split_timings(table, timing_columns, key_columns)
    atomic_write_text(out.results(filename), kept.to_csv(index=False))
    atomic_write_text(out.timings(timings_filename or filename), times.to_csv(index=False))
    return kept
