"""Nona's experiments: one simulated point, sweeps of points x schemes, and their ratio tables.

What the figure notebooks (``notebooks/nona/fig3``, ``fig4``, ``fig5``, ``model_error``) run:

* :func:`run_point` -- build the workload of section IV-B at one load and simulate one scheme
  (the CLI's ``schedlab nona simulate``);
* :func:`sweep` -- every scheme at every point ``{"load": x, "bandwidth_gbps": b}``: Nona's
  tables solved (or read) per point, Nona*'s once, the Expert searched per point; each
  (point, scheme) simulation is one task of a :class:`schedlab.parallel.Executor`, so a sweep
  runs on local processes or a Dask cluster with the same numbers as in one process (each
  task builds its own workload, cluster and scheduler from the sweep's seeds);
* :class:`FigureSweep` -- the settings a figure's ``params.yaml`` section holds, with the
  figure's sweep (:meth:`FigureSweep.run`) and Decima's like-for-like comparison on its own
  short window (:meth:`FigureSweep.same_window`);
* pure helpers on a sweep's rows: :func:`ratio_table` (scheme / Nona per point),
  :func:`max_gains` (the "up to" ratios the paper quotes), :func:`gain_summary` (every gain
  with its sign: min and max over the points, where, and whether Nona is ahead everywhere), :func:`expert_gap`,
  :func:`status_note` (why a scheme did not run), and :func:`paper_numbers` (the paper's
  numbers from ``reference/nona.yaml``, laid out like our gains JSON).

Examples
--------
>>> import pandas as pd
>>> rows = pd.DataFrame({"load": [0.1, 0.1, 0.5, 0.5], "scheme": ["nona", "random"] * 2,
...                      "mean_jct_s": [1.0, 3.0, 2.0, 10.0], "status": "ok"})
>>> ratio_table(rows, "load", "mean_jct_s").to_dict("index")
{0.1: {'nona': 1.0, 'random': 3.0}, 0.5: {'nona': 1.0, 'random': 5.0}}
>>> max_gains(rows, "load", {"avg": "mean_jct_s"}, ["random", "spark_fair"])
{'avg': {'random': 5.0}}
>>> decima_windows(4.0)
{'decima': 4.0, 'decima_retrained': 4.0}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from schedlab import paths
from schedlab.nona.schedulers import SCHEMES, SchemeUnavailable, make_scheduler
from schedlab.nona.tables import check_tables_match, load_tables, solve_tables

DEFAULT_MODELS = ("gpt2", "densenet121", "vgg16", "alexnet", "resnet18")  # Table II; GPT-2 from the trace stage
TABLE_SCHEMES = ("nona", "nona_star", "expert")
#: the two Decima rows; their policy network runs at every scheduling decision, so the figures
#: give them a shorter measured window than the other schemes
DECIMA_SCHEMES = ("decima", "decima_retrained")
#: where a sweep writes the Nona tables it solves, per point (inside its ``tables_dir``)
NONA_TABLES_NAME = "nona_load{load:g}_bw{bandwidth_gbps:g}.json"


# --------------------------------------------------------------------------------------
# one experiment point (the CLI and the figure notebooks)
# --------------------------------------------------------------------------------------


def check_point(scheme: str, load: float, bandwidth_gbps: float, servers: int, duration: float,
                tables: str | Path | dict | None = None) -> None:
    """Refuse a bad experiment point with a clear message before anything is built or run.

    >>> check_point("random", 1.2, 10.0, 80, 60.0)
    Traceback (most recent call last):
    ...
    ValueError: load must be in (0, 1): the compute load sum_j lambda_j S_j / N; got 1.2 (>= 1 the servers are unstable)
    """
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    if not (0 < load < 1):
        raise ValueError(f"load must be in (0, 1): the compute load sum_j lambda_j S_j / N; got {load} "
                         "(>= 1 the servers are unstable)")
    if not (bandwidth_gbps > 0 and math.isfinite(bandwidth_gbps)):
        raise ValueError(f"bandwidth must be a positive number of Gbit/s, got {bandwidth_gbps}")
    if not (isinstance(servers, int) and servers >= 1):
        raise ValueError(f"servers must be a positive integer, got {servers}")
    if not (duration > 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be > 0 seconds, got {duration}")
    if scheme in TABLE_SCHEMES:
        if tables is None:
            raise FileNotFoundError(f"scheme {scheme!r} needs probability tables: pass the optimiser's JSON "
                                    "(`schedlab nona solve --json`)")
        if not isinstance(tables, dict) and not Path(tables).is_file():
            raise FileNotFoundError(f"scheme {scheme!r}: the optimiser output {tables} does not exist; "
                                    "produce it with `schedlab nona solve --json` first")


def run_point(scheme: str, *, load: float, bandwidth_gbps: float = 10.0, servers: int = 80,
              duration: float = 60.0, warmup: float | None = None, seed: int = 0,
              models: Sequence[str] = DEFAULT_MODELS, tables: str | Path | dict | None = None,
              workload_kwargs: dict | None = None, decima_weights: str | Path | None = None,
              progress: bool = False):
    """Build the workload of section IV-B at ``load`` and simulate ``scheme`` on it.

    ``warmup`` defaults to ``0.1 * duration``. Same ``seed`` -> same arrivals for all schemes.
    ``decima_weights``: the retrained Decima's ``weights.npz`` (scheme ``decima_retrained``).

    Returns the :class:`~schedlab.nona.sim.SimResult`.
    """
    from schedlab.nona.sim import simulate
    from schedlab.nona.workload import Cluster, build_workload

    check_point(scheme, load, bandwidth_gbps, servers, duration, tables)
    cluster = Cluster(servers=servers, bandwidth_gbps=float(bandwidth_gbps))
    w = build_workload(list(models), load=load, cluster=cluster, **(workload_kwargs or {}))
    if scheme in ("nona", "nona_star"):
        # Nona's tables must be solved for this very workload; Nona* only needs every class
        tables = tables if isinstance(tables, dict) else load_tables(tables)
        check_tables_match(tables, w, cluster, same_point=scheme == "nona")
    sch = make_scheduler(scheme, tables=tables, seed=seed, compute_rate=cluster.compute_rate,
                         decima_weights=decima_weights)
    return simulate(w, cluster, sch, duration=duration, warmup=0.1 * duration if warmup is None else warmup,
                    rng=np.random.default_rng(seed), progress=progress)


# --------------------------------------------------------------------------------------
# sweeps for the figures: tables written as optimiser JSON, then loaded like any other
# --------------------------------------------------------------------------------------


def _tag(load: float, bw: float) -> str:
    return f"load{load:g}_bw{bw:g}"


def repo_path(path: str | Path) -> Path:
    """``path`` relative to the repository root (an absolute path stays as it is).

    >>> repo_path("/tmp/x.json").as_posix()
    '/tmp/x.json'
    """
    return paths.ROOT / Path(path)


@dataclass(frozen=True)
class _SweepSettings:
    """What every task of one sweep shares (picklable: it travels to the workers)."""

    servers: int
    duration: float
    warmup: float
    seed: int
    models: tuple
    workload_kwargs: dict
    tables_dir: Path
    optimiser_method: str
    expert_budget: int
    expert_duration: float | None
    expert_seed: int
    scheme_durations: dict
    nona_tables: str | None
    star_path: Path
    decima_weights: Path | None
    keep_jobs: bool


def sweep(
    points: Sequence[dict],
    schemes: Sequence[str],
    *,
    servers: int = 80,
    duration: float = 60.0,
    warmup: float | None = None,
    seed: int = 0,
    models: Sequence[str] = DEFAULT_MODELS,
    workload_kwargs: dict | None = None,
    tables_dir: str | Path,
    optimiser_method: str = "global",
    star_point: tuple[float, float] = (0.5, 10.0),
    expert_budget: int = 40,
    expert_duration: float | None = None,
    expert_seed: int = 12345,
    scheme_durations: dict | None = None,
    nona_tables: str | None = None,
    star_tables: str | Path | None = None,
    decima_weights: str | Path | None = None,
    keep_jobs: bool = False,
    executor: Any = None,
    progress: bool = True,
) -> tuple[pd.DataFrame, dict]:
    """Simulate every scheme at every point ``{"load": x, "bandwidth_gbps": b}``.

    Nona's tables are solved per point (the optimiser run on the point's own workload), Nona*'s
    once at ``star_point`` (load, Gbps) before the simulations start, the Expert's searched per
    point (:func:`schedlab.nona.expert.search`, seed ``expert_seed``); each is written to
    ``tables_dir`` as optimiser JSON and the scheme loads it from there. ``scheme_durations``
    overrides the window per scheme (0 skips it, with a ``status`` row). ``nona_tables`` (a
    path pattern with ``{load:g}`` and ``{bandwidth_gbps:g}``), ``star_tables`` (a path) and
    ``decima_weights`` (the retrained Decima's ``weights.npz``), relative to the repository
    root unless absolute, use files made elsewhere (the optimiser and Decima-training
    stages); a missing table file is an error, and tables solved for another workload or
    cluster are refused (:func:`~schedlab.nona.tables.check_tables_match`). A scheme that
    cannot run (``decima_retrained`` without its weights) gets a row with ``status`` saying
    why and NaN numbers.

    ``executor``: a :class:`schedlab.parallel.Executor`, a number of local worker processes,
    a Dask scheduler address, or ``None`` (the default executor). Every (point, scheme) is
    one task that builds its own workload, cluster and scheduler and simulates with
    ``numpy.random.default_rng(seed)``, so the numbers do not depend on the executor.

    Returns ``(rows, jobs)``: a DataFrame with one row per (point, scheme), points in the
    order given and schemes in the order given within a point, and, if ``keep_jobs``, a dict
    ``(load, bandwidth_gbps, scheme) -> per-job DataFrame``.
    """
    from schedlab.parallel import resolve

    for s in schemes:
        if s not in SCHEMES:
            raise ValueError(f"unknown scheme {s!r}; expected one of {', '.join(SCHEMES)}")
    for p in points:
        check_point("random", float(p["load"]), float(p["bandwidth_gbps"]), servers, duration)
    tables_dir = Path(tables_dir)
    # made even when every table comes from the optimiser stage: the folder is a declared DVC out
    tables_dir.mkdir(parents=True, exist_ok=True)
    settings = _SweepSettings(
        servers=servers, duration=duration, warmup=0.1 * duration if warmup is None else warmup, seed=seed,
        models=tuple(models), workload_kwargs=dict(workload_kwargs or {}), tables_dir=tables_dir,
        optimiser_method=optimiser_method, expert_budget=expert_budget, expert_duration=expert_duration,
        expert_seed=expert_seed, scheme_durations=dict(scheme_durations or {}), nona_tables=nona_tables,
        star_path=_star_tables(schemes, star_point, star_tables, tables_dir, servers, models,
                               dict(workload_kwargs or {}), optimiser_method),
        decima_weights=None if decima_weights is None else repo_path(decima_weights), keep_jobs=keep_jobs)
    cells = [(float(p["load"]), float(p["bandwidth_gbps"]), s) for p in points for s in schemes]
    ex, must_close = resolve(executor)
    try:
        results = ex.map(_simulate_cell, cells, settings, desc="nona sweep", progress=progress)
    finally:
        if must_close:
            ex.close()
    rows = [row for row, _ in results]
    jobs = {cell: j for cell, (_, j) in zip(cells, results) if j is not None}
    return pd.DataFrame(rows), jobs


def _star_tables(schemes, star_point, star_tables, tables_dir: Path, servers: int, models, workload_kwargs: dict,
                 optimiser_method: str) -> Path:
    """Nona*'s tables: the given file (checked now), or solved once at ``star_point`` here."""
    from schedlab.nona.workload import Cluster, build_workload

    if star_tables is not None:
        path = repo_path(star_tables)
        load_tables(path)  # a clear error now if it is missing
        return path
    path = tables_dir / f"nona_star_{_tag(*star_point)}.json"
    if "nona_star" in schemes:
        c0 = Cluster(servers=servers, bandwidth_gbps=float(star_point[1]))
        solve_tables(build_workload(list(models), load=star_point[0], cluster=c0, **workload_kwargs), c0, path,
                     load=star_point[0], method=optimiser_method)
    return path


def _simulate_cell(cell: tuple[float, float, str], st: _SweepSettings) -> tuple[dict, pd.DataFrame | None]:
    """One (load, bandwidth, scheme) of a sweep: its row and, if kept, its per-job records."""
    from schedlab.nona.sim import simulate
    from schedlab.nona.workload import Cluster, build_workload

    load, bw, s = cell
    cluster = Cluster(servers=st.servers, bandwidth_gbps=bw)
    w = build_workload(list(st.models), load=load, cluster=cluster, **st.workload_kwargs)
    row: dict[str, Any] = {"load": load, "bandwidth_gbps": bw, "scheme": s, "status": "ok", "tables": None}
    try:
        sch, path = _cell_scheduler(s, load, bw, w, cluster, st, row)
    except SchemeUnavailable as exc:
        row["status"] = f"unavailable: {exc}"
        return row, None
    if path is not None:  # relative to the repository when inside it
        path = Path(path).resolve()
        row["tables"] = str(path.relative_to(paths.ROOT) if path.is_relative_to(paths.ROOT) else path)
    d = float(st.scheme_durations.get(s, st.duration))
    if d <= 0:  # a profile may skip a scheme that is too slow for it
        row["status"] = "skipped in this profile (window 0)"
        return row, None
    res = simulate(w, cluster, sch, duration=d, warmup=st.warmup if s not in st.scheme_durations else 0.1 * d,
                   rng=np.random.default_rng(st.seed))
    summ = res.summary()
    per_class = summ.pop("per_class_mean_jct_s")
    row.update({k: v for k, v in summ.items() if k not in ("scheme",)})
    row["duration_s"] = d
    for name, v in per_class.items():
        row[f"mean_jct_s.{name}"] = v
    return row, res.jobs if st.keep_jobs else None


def _cell_scheduler(s: str, load: float, bw: float, w, cluster, st: _SweepSettings, row: dict):
    """The scheduler of scheme ``s`` at one point and the tables file it read (or None)."""
    if s == "nona":
        if st.nona_tables is not None:
            path = repo_path(st.nona_tables.format(load=load, bandwidth_gbps=bw))
        else:
            path = solve_tables(w, cluster, st.tables_dir / NONA_TABLES_NAME.format(load=load, bandwidth_gbps=bw),
                                load=load, method=st.optimiser_method)
        doc = load_tables(path)
        check_tables_match(doc, w, cluster)
        return make_scheduler("nona", tables=doc), path
    if s == "nona_star":
        doc = load_tables(st.star_path)
        check_tables_match(doc, w, cluster, same_point=False)
        return make_scheduler("nona_star", tables=doc), st.star_path
    if s == "expert":
        path = _expert_tables(load, bw, w, cluster, st, row)
        return make_scheduler("expert", tables=path), path
    return make_scheduler(s, seed=st.seed, compute_rate=cluster.compute_rate, decima_weights=st.decima_weights), None


def _expert_tables(load: float, bw: float, w, cluster, st: _SweepSettings, row: dict) -> Path:
    """Search the Expert's tables at one point; write them (with the search log) as JSON."""
    from schedlab.io import atomic_write_json
    from schedlab.nona import expert

    ed = st.expert_duration or st.duration
    ex = expert.search(w, cluster, duration=ed, warmup=0.1 * ed, budget=st.expert_budget, search_seed=st.expert_seed)
    path = st.tables_dir / f"expert_{_tag(load, bw)}.json"
    atomic_write_json(path, {**ex.tables, "search": {
        "method": ex.method, "budget": st.expert_budget, "evaluations": ex.evaluations,
        "duration_s": ed, "seed": st.expert_seed, "score_mean_jct_s": ex.score,
        "p_split": {"|".join(map(str, k)): v for k, v in ex.p.items()}, "log": ex.log}})
    row["expert_evaluations"] = ex.evaluations
    return path


# --------------------------------------------------------------------------------------
# what the figure notebooks share
# --------------------------------------------------------------------------------------


def decima_windows(decima_duration: float) -> dict[str, float]:
    """Both Decima rows on their own measured window (``sweep``'s ``scheme_durations``)."""
    return {s: float(decima_duration) for s in DECIMA_SCHEMES}


@dataclass(frozen=True)
class FigureSweep:
    """A figure's sweep settings: the values of its ``params.yaml`` section.

    ``decima_duration`` is both Decima rows' measured window (the others run ``duration``);
    ``nona_tables``/``star_tables`` are the optimiser stage's files (``None``: solved here, into
    ``tables_dir``); ``decima_weights`` is the retrained Decima's ``weights.npz``. Paths are
    relative to the repository root unless absolute.
    """

    schemes: Sequence[str]
    servers: int
    duration: float
    seed: int
    tables_dir: str | Path
    models: Sequence[str] = DEFAULT_MODELS
    workload: Mapping = field(default_factory=dict)
    optimiser_method: str = "global"
    expert_budget: int = 40
    expert_duration: float | None = None
    decima_duration: float = 0.0
    nona_tables: str | None = None
    star_tables: str | None = None
    decima_weights: str | None = None

    def run(self, points: Sequence[dict], *, keep_jobs: bool = False, executor: Any = None,
            progress: bool = True) -> tuple[pd.DataFrame, dict]:
        """:func:`sweep` of :attr:`schemes` over ``points`` with these settings."""
        return sweep(points, list(self.schemes), servers=int(self.servers), duration=float(self.duration),
                     seed=int(self.seed), models=list(self.models), workload_kwargs=dict(self.workload),
                     tables_dir=self.tables_dir, optimiser_method=self.optimiser_method,
                     expert_budget=int(self.expert_budget),
                     expert_duration=None if self.expert_duration is None else float(self.expert_duration),
                     scheme_durations=decima_windows(self.decima_duration), nona_tables=self.nona_tables,
                     star_tables=self.star_tables, decima_weights=self.decima_weights, keep_jobs=keep_jobs,
                     executor=executor, progress=progress)

    @classmethod
    def from_params(cls, params: Mapping[str, Any], tables_dir: str | Path, **overrides: Any) -> "FigureSweep":
        """The sweep a figure's parameters describe: every field taken by name from ``params``
        (its ``params.yaml`` section, or a notebook's ``globals()``), other keys ignored.

        >>> s = FigureSweep.from_params({"schemes": ["nona"], "servers": 8, "duration": 5.0, "seed": 0,
        ...                              "loads": [0.5]}, tables_dir="t")
        >>> s.servers, s.expert_budget
        (8, 40)
        """
        from dataclasses import fields

        names = {f.name for f in fields(cls)} - {"tables_dir"}
        return cls(tables_dir=tables_dir, **{**{k: params[k] for k in names if k in params}, **overrides})

    def with_changes(self, **changes: Any) -> "FigureSweep":
        """A copy with some settings changed (e.g. another workload for a sensitivity sweep)."""
        return replace(self, **changes)

    def regime(self, points: Sequence[dict], key: str, workload: Mapping, tables_dir: str | Path,
               baselines: Sequence[str], columns: Mapping[str, str]) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
        """The same sweep in another workload regime (e.g. light background traffic, where Nona's
        tables split): every scheme but Decima (its window belongs to the main sweep), Nona's and
        Nona*'s tables solved here into ``tables_dir``. Returns the rows, their gains
        (:func:`gain_summary` over ``columns`` plus ``expert_gap``, ``workload`` and
        ``mixed_subgraphs``: per value of ``key``, how many subgraphs Nona places stochastically)
        and Nona's and Nona*'s placements (:func:`placement_table`)."""
        schemes = [s for s in self.schemes if s not in DECIMA_SCHEMES]
        rows, _ = self.with_changes(schemes=schemes, workload={**self.workload, **workload}, tables_dir=tables_dir,
                                    nona_tables=None, star_tables=None).run(points)
        gains = gain_summary(rows, key, columns, [s for s in baselines if s in schemes])
        gains["expert_gap"] = expert_gap(rows, key)
        gains["workload"] = dict(workload)
        placements = placement_table(rows, schemes=("nona", "nona_star"))
        mixed = placements[placements.mixed & (placements.scheme == "nona")]
        gains["mixed_subgraphs"] = {f"{x:g}": int((mixed[key] == x).sum()) for x in sorted(set(rows[key]))}
        return rows, gains, placements

    def same_window(self, rows: pd.DataFrame, *, executor: Any = None) -> dict | None:
        """Decima against Nona on the SAME short window (same arrivals, both measured for
        ``decima_duration`` s): Decima's jobs pile up behind the link, so its JCT grows with the
        window, and a ratio to Nona's full-window run is not like for like; this one is.

        Runs Nona again at every point of ``rows`` on Decima's window (its tables: the
        optimiser stage's, or those the sweep solved into ``tables_dir``). ``None`` when no
        Decima row ran, Nona is not among the schemes, or the window is 0.
        """
        ran = decima_ran(rows)
        if not (ran and "nona" in self.schemes and self.decima_duration > 0):
            return None
        tabs = self.nona_tables
        if tabs is None:  # the tables the sweep solved, per point
            tabs = str(Path(self.tables_dir).resolve() / NONA_TABLES_NAME)
        pts = rows[["load", "bandwidth_gbps"]].drop_duplicates().to_dict("records")
        nona_rows, _ = sweep(pts, ["nona"], servers=int(self.servers), duration=float(self.decima_duration),
                             seed=int(self.seed), models=list(self.models), workload_kwargs=dict(self.workload),
                             tables_dir=self.tables_dir, optimiser_method=self.optimiser_method, nona_tables=tabs,
                             executor=executor, progress=False)
        return same_window_gains(rows, nona_rows, ran, window_s=float(self.decima_duration),
                                 other_window_s=float(self.duration))


#: columns of the same-window comparison and their names in the gains JSON
SAME_WINDOW_COLUMNS = (("mean_jct_s", "avg"), ("p99_jct_s", "p99"), ("inference_mean_jct_s", "inference_avg"),
                       ("inference_p99_jct_s", "inference_p99"))


def decima_ran(rows: pd.DataFrame) -> list[str]:
    """The Decima schemes with at least one row that ran (``status == "ok"``)."""
    return [s for s in DECIMA_SCHEMES if (rows[rows.scheme == s].status == "ok").any()]


def same_window_gains(rows: pd.DataFrame, nona_rows: pd.DataFrame, schemes: Sequence[str], *,
                      window_s: float, other_window_s: float) -> dict:
    """Largest ratio scheme / Nona over the points, Nona re-run on the schemes' window
    (``nona_rows``); the ``same_window`` entry of a figure's gains JSON."""
    key = ["load", "bandwidth_gbps"]
    base = nona_rows.set_index(key)
    same: dict[str, Any] = {"window_s": window_s, "other_schemes_window_s": other_window_s}
    for col, tag in SAME_WINDOW_COLUMNS:
        same[tag] = {s: float((rows[rows.scheme == s].set_index(key)[col] / base[col]).max()) for s in schemes}
    return same


#: a sweep row's wall-clock columns (``simulate``'s ``wall_s``, ``events_per_s``): they vary from
#: run to run, so the figure notebooks write them to ``results/nona/timings/``, not to their outputs
TIMING_COLUMNS = ("wall_s", "events_per_s")
#: what names a sweep row (one scheme at one point)
ROW_KEYS = ("load", "bandwidth_gbps", "scheme")


def write_rows(out: Any, rows: pd.DataFrame, filename: str) -> None:
    """Write a sweep's rows to ``results/nona/<filename>`` without their wall-clock columns, and
    those columns to ``results/nona/timings/<filename>`` (``out``: the notebook's
    :class:`schedlab.notebooks.Outputs`), so the pipeline's outputs stay byte-identical."""
    from schedlab import io

    kept, times = split_timings(rows)
    io.atomic_write_text(out.results(filename), kept.to_csv(index=False))
    io.atomic_write_text(out.timings(filename), times.to_csv(index=False))


def split_timings(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A sweep's rows without their wall-clock columns, and those columns under the row keys.

    >>> rows = pd.DataFrame({"load": [0.5], "bandwidth_gbps": [10.0], "scheme": ["nona"],
    ...                      "mean_jct_s": [0.2], "wall_s": [1.5], "events_per_s": [4e5]})
    >>> kept, times = split_timings(rows)
    >>> list(kept.columns), list(times.columns)
    (['load', 'bandwidth_gbps', 'scheme', 'mean_jct_s'], ['load', 'bandwidth_gbps', 'scheme', 'wall_s', 'events_per_s'])
    """
    timing = [c for c in TIMING_COLUMNS if c in rows.columns]
    return rows.drop(columns=timing), rows[[*ROW_KEYS, *timing]]


def ratio_table(rows: pd.DataFrame, key: str, col: str) -> pd.DataFrame:
    """Scheme value / Nona value of column ``col`` at every point of the sweep (index ``key``)."""
    base = rows[rows.scheme == "nona"].set_index(key)[col]
    out = {}
    for s, g in rows.groupby("scheme"):
        out[s] = (g.set_index(key)[col] / base).rename(s)
    return pd.DataFrame(out)


def max_gains(rows: pd.DataFrame, key: str, columns: Mapping[str, str], schemes: Sequence[str]) -> dict:
    """``{tag: {scheme: largest ratio scheme / Nona over the points}}`` for ``columns``
    (``{tag: column}``), for the ``schemes`` whose first column has a number somewhere (the
    others did not run; :func:`status_note` says why)."""
    ratios = {tag: ratio_table(rows, key, col) for tag, col in columns.items()}
    first = ratios[next(iter(columns))]
    out: dict[str, dict] = {tag: {} for tag in columns}
    for s in schemes:
        if s in first and not first[s].isna().all():
            for tag in columns:
                out[tag][s] = float(ratios[tag][s].max())
    return out


def gain_summary(rows: pd.DataFrame, key: str, columns: Mapping[str, str], schemes: Sequence[str]) -> dict:
    """Every gain with its sign: what a figure's gains JSON holds.

    ``{tag: {scheme: max}}`` for every tag of ``columns`` (the "up to" ratio the paper quotes,
    as :func:`max_gains`), plus ``"min"`` (``{tag: {scheme: smallest ratio}}``), ``"at_min"`` /
    ``"at_max"`` (the value of ``key`` where they occur) and ``"ahead"`` (``{tag: {scheme: 1 if
    Nona's JCT is below the scheme's at every point, else 0}}``, the comparison asserts it).
    A ratio below 1 means the scheme beat Nona there.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"load": [0.1, 0.1, 0.9, 0.9], "scheme": ["nona", "spark_fair"] * 2,
    ...                      "mean_jct_s": [1.0, 3.0, 2.0, 1.5], "status": "ok"})
    >>> g = gain_summary(rows, "load", {"avg": "mean_jct_s"}, ["spark_fair"])
    >>> g["avg"], g["min"], g["at_min"], g["ahead"]
    ({'spark_fair': 3.0}, {'avg': {'spark_fair': 0.75}}, {'avg': {'spark_fair': 0.9}}, {'avg': {'spark_fair': 0}})
    """
    out: dict[str, Any] = max_gains(rows, key, columns, schemes)
    extra: dict[str, dict] = {"min": {}, "at_min": {}, "at_max": {}, "ahead": {}}
    for tag, col in columns.items():
        ratios = ratio_table(rows, key, col)
        for name in extra:
            extra[name][tag] = {}
        for s in out[tag]:
            r = ratios[s].dropna()
            extra["min"][tag][s] = float(r.min())
            extra["at_min"][tag][s] = float(r.idxmin())
            extra["at_max"][tag][s] = float(r.idxmax())
            extra["ahead"][tag][s] = int(bool((r > 1).all()))
    return {**out, **extra}


def background_no_wait(jobs: pd.DataFrame) -> float:
    """Share of a run's background compute jobs served with no queueing delay (Fig. 5a): their
    JCT equals their task time, the shortest JCT of the class (NaN without such jobs).

    >>> background_no_wait(pd.DataFrame({"job_class": ["background_compute"] * 4 + ["vgg16"],
    ...                                  "jct": [1.0, 1.0, 2.0, 3.0, 9.0]}))
    0.5
    """
    b = jobs[jobs.job_class == "background_compute"]
    return float((b.jct <= b.jct.min() * (1 + 1e-9)).mean()) if len(b) else float("nan")


def placement_table(rows: pd.DataFrame, schemes: Sequence[str] = ("nona", "nona_star", "expert")) -> pd.DataFrame:
    """What the probability tables of a sweep decide: one row per (point, scheme, subgraph) with
    ``load``, ``bandwidth_gbps``, ``scheme``, ``class``, ``subgraph`` (``source->sink``),
    ``p_split``, ``options`` and ``mixed`` (:func:`schedlab.nona.tables.placement_shares`), read
    from the table file each row ran with (column ``tables``)."""
    import json

    from schedlab.nona.tables import placement_shares

    out = []
    for r in rows[rows.scheme.isin(schemes) & rows.tables.notna()].itertuples():
        path = Path(r.tables)
        doc = json.loads((path if path.is_absolute() else paths.ROOT / path).read_text())
        for sh in placement_shares(doc):
            out.append({"load": r.load, "bandwidth_gbps": r.bandwidth_gbps, "scheme": r.scheme,
                        "class": sh["class"], "subgraph": f"{sh['source']}->{sh['sink']}", "p_split": sh["p_split"],
                        "options": sh["options"], "mixed": sh["mixed"]})
    columns = ["load", "bandwidth_gbps", "scheme", "class", "subgraph", "p_split", "options", "mixed"]
    return pd.DataFrame(out, columns=columns)


def expert_gap(rows: pd.DataFrame, key: str, schemes: Sequence[str] = ("nona", "nona_star")) -> dict[str, float]:
    """Largest relative gap of each scheme's mean JCT above the Expert's over the points."""
    present = set(rows.scheme)
    if "expert" not in present:
        return {}
    e = rows[rows.scheme == "expert"].set_index(key).mean_jct_s
    return {s: float((rows[rows.scheme == s].set_index(key).mean_jct_s / e - 1).max()) for s in schemes if s in present}


def status_note(rows: pd.DataFrame) -> str:
    """One line ``"scheme: status"`` per scheme that did not run everywhere (its first reason);
    empty when every row ran."""
    bad = rows[rows.status != "ok"].drop_duplicates("scheme")
    return "\n".join(f"{r.scheme}: {r.status}" for r in bad.itertuples())


def paper_numbers(layout: Mapping[str, Any], paper: str = "nona") -> dict:
    """The paper's numbers laid out like ``layout``, whose leaves are ids of
    ``reference/<paper>.yaml`` (a figure's gains JSON keeps them under ``"paper"``).

    >>> paper_numbers({"avg": {"random": "fig3.gain_avg.random"}})
    {'avg': {'random': 202}}
    """
    from schedlab.reference import paper_values

    values = paper_values(paper)

    def resolve(node: Any) -> Any:
        if isinstance(node, Mapping):
            return {k: resolve(v) for k, v in node.items()}
        if node not in values:
            raise KeyError(f"reference/{paper}.yaml has no entry with id {node!r}")
        return values[node]

    return resolve(layout)


def _ids(prefix: str, schemes: Sequence[str]) -> dict[str, str]:
    return {s: f"{prefix}.{s}" for s in schemes}


_BASELINES = ("spark_fair", "opportunistic", "random", "decima")
#: where each figure's paper numbers live in ``reference/nona.yaml``, in its gains JSON's layout
PAPER_LAYOUT = {
    "fig3": {"avg": _ids("fig3.gain_avg", _BASELINES), "p99": _ids("fig3.gain_p99", _BASELINES),
             "expert_gap": _ids("fig3.expert_gap", ("nona", "nona_star"))},
    "fig4": {"avg": _ids("fig4.gain_avg", _BASELINES), "inference_avg": _ids("fig4.gain_inference_avg", _BASELINES)},
    "fig5": {"inference_p99": _ids("fig5.gain_inference_p99", _BASELINES),
             "background_p99_decima": "fig5.gain_background_p99.decima",
             "background_no_wait": _ids("fig5.background_no_wait", ("nona", "spark_fair"))},
}


def paper_decima_training_hours() -> dict[int, int]:
    """Table III's Decima training time (hours on an A100) by cluster size, from
    ``reference/nona.yaml`` (stored there in seconds, ``table3.decima_train_s.<servers>``).

    >>> paper_decima_training_hours()[16]
    108
    """
    from schedlab.reference import paper_values

    prefix = "table3.decima_train_s."
    return {int(k[len(prefix):]): round(v / 3600) for k, v in paper_values("nona", prefix).items()}
