"""Nona's experiments: one simulated point, sweeps of points x schemes, and their ratio tables.

What the figure notebooks (``notebooks/nona/fig3``, ``fig4``, ``fig5``, ``model_error``) run:

* :func:`run_point` -- build the workload of section IV-B at one load and simulate one scheme
  (the CLI's ``schedlab nona simulate``);
* :func:`sweep` -- every scheme of a :class:`FigureSweep` at every point ``{"load": x, "bandwidth_gbps": b}``: Nona's
  tables solved (or read) per point, Nona*'s once, the Expert searched per point; each
  (point, scheme) simulation is one task of a :class:`schedlab.parallel.Executor`, so a sweep
  runs on local processes or a Dask cluster with the same numbers as in one process (each
  task builds its own workload, cluster and scheduler from the sweep's seeds);
* :class:`FigureSweep` -- every setting of a sweep (what a figure's ``params.yaml`` section holds), with the
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

DEFAULT_MODELS = (
    "gpt2",
    "densenet121",
    "vgg16",
    "alexnet",
    "resnet18",
)  # Table II; GPT-2 from the trace stage
TABLE_SCHEMES = ("nona", "nona_star", "expert")
#: the two Decima rows; their policy network runs at every scheduling decision, so the figures
#: give them a shorter measured window than the other schemes
DECIMA_SCHEMES = ("decima", "decima_retrained")
#: where a sweep writes the Nona tables it solves, per point (inside its ``tables_dir``)
NONA_TABLES_NAME = "nona_load{load:g}_bw{bandwidth_gbps:g}.json"


# --------------------------------------------------------------------------------------
# one experiment point (the CLI and the figure notebooks)
# --------------------------------------------------------------------------------------


def check_point(
    scheme: str,
    load: float,
    bandwidth_gbps: float,
    servers: int,
    duration: float,
    tables: str | Path | dict | None = None,
) -> None:
    """Refuse a bad experiment point with a clear message before anything is built or run.

    >>> check_point("random", 1.2, 10.0, 80, 60.0)
    Traceback (most recent call last):
    ...
    ValueError: load must be in (0, 1): the compute load sum_j lambda_j S_j / N; got 1.2 (>= 1 the servers are unstable)
    """
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    if not (0 < load < 1):
        raise ValueError(
            f"load must be in (0, 1): the compute load sum_j lambda_j S_j / N; got {load} "
            "(>= 1 the servers are unstable)"
        )
    if not (bandwidth_gbps > 0 and math.isfinite(bandwidth_gbps)):
        raise ValueError(f"bandwidth must be a positive number of Gbit/s, got {bandwidth_gbps}")
    if not (isinstance(servers, int) and servers >= 1):
        raise ValueError(f"servers must be a positive integer, got {servers}")
    if not (duration > 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be > 0 seconds, got {duration}")
    if scheme in TABLE_SCHEMES:
        if tables is None:
            raise FileNotFoundError(
                f"scheme {scheme!r} needs probability tables: pass the optimiser's JSON "
                "(`schedlab nona solve --json`)"
            )
        if not isinstance(tables, dict) and not Path(tables).is_file():
            raise FileNotFoundError(
                f"scheme {scheme!r}: the optimiser output {tables} does not exist; "
                "produce it with `schedlab nona solve --json` first"
            )


def run_point(
    scheme: str,
    *,
    load: float,
    bandwidth_gbps: float = 10.0,
    servers: int = 80,
    duration: float = 60.0,
    warmup: float | None = None,
    seed: int = 0,
    models: Sequence[str] = DEFAULT_MODELS,
    tables: str | Path | dict | None = None,
    workload_kwargs: dict | None = None,
    decima_weights: str | Path | None = None,
    progress: bool = False,
):
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
    sch = make_scheduler(
        scheme, tables=tables, seed=seed, compute_rate=cluster.compute_rate, decima_weights=decima_weights
    )
    return simulate(
        w,
        cluster,
        sch,
        duration=duration,
        warmup=0.1 * duration if warmup is None else warmup,
        rng=np.random.default_rng(seed),
        progress=progress,
    )


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


def sweep(
    points: Sequence[dict],
    setup: "FigureSweep",
    *,
    keep_jobs: bool = False,
    executor: Any = None,
    progress: bool = True,
) -> tuple[pd.DataFrame, dict]:
    """Simulate every scheme of ``setup`` at every point ``{"load": x, "bandwidth_gbps": b}``.

    Nona's tables are solved per point (the optimiser run on the point's own workload), Nona*'s
    once at ``setup.star_point`` (load, Gbps) before the simulations start, the Expert's searched
    per point (:func:`schedlab.nona.expert.search`, seed ``setup.expert_seed``); each is written
    to ``setup.tables_dir`` as optimiser JSON and the scheme loads it from there. Tables made
    elsewhere (``nona_tables``, ``star_tables``, ``decima_weights``: see :class:`FigureSweep`)
    are read instead; a missing table file is an error, and tables solved for another workload
    or cluster are refused (:func:`~schedlab.nona.tables.check_tables_match`). A scheme that
    cannot run (``decima_retrained`` without its weights) gets a row with ``status`` saying
    why and NaN numbers; so does a scheme whose window is 0 (:meth:`FigureSweep.window`).

    Parameters
    ----------
    points
        ``{"load": x, "bandwidth_gbps": b}`` each; checked before anything runs.
    setup
        Every setting of the sweep (the one settings object; it travels to the workers).
    keep_jobs
        Also return every simulated job.
    executor
        What :func:`schedlab.parallel.executor` takes: an open executor, a worker count, a
        Dask address or ``None``. Every (point, scheme) is one task that builds its own
        workload, cluster and scheduler and simulates with ``numpy.random.default_rng(seed)``,
        so the numbers do not depend on the executor.
    progress
        Show a progress bar.

    Returns
    -------
    tuple
        ``(rows, jobs)``: one row per (point, scheme), points in the order given and schemes
        in their order within a point, and, if ``keep_jobs``, a dict ``(load, bandwidth_gbps,
        scheme) -> per-job DataFrame`` (else empty).
    """
    from schedlab import parallel

    for p in points:
        check_point("random", float(p["load"]), float(p["bandwidth_gbps"]), setup.servers, setup.duration)
    # made even when every table comes from the optimiser stage: the folder is a declared DVC out
    Path(setup.tables_dir).mkdir(parents=True, exist_ok=True)
    ready = setup.with_changes(star_tables=_star_tables(setup))
    cells = [(float(p["load"]), float(p["bandwidth_gbps"]), s) for p in points for s in setup.schemes]
    with parallel.executor(executor) as ex:
        results = ex.map(_simulate_cell, cells, ready, keep_jobs, desc="nona sweep", progress=progress)
    rows = [row for row, _ in results]
    jobs = {cell: j for cell, (_, j) in zip(cells, results) if j is not None}
    return pd.DataFrame(rows), jobs


def _star_tables(setup: "FigureSweep") -> Path:
    """Nona*'s tables: the given file (checked now), or solved once at ``star_point`` here."""
    from schedlab.nona.workload import Cluster, build_workload

    if setup.star_tables is not None:
        path = repo_path(setup.star_tables)
        load_tables(path)  # a clear error now if it is missing
        return path
    path = Path(setup.tables_dir) / f"nona_star_{_tag(*setup.star_point)}.json"
    if "nona_star" in setup.schemes:
        load, bw = setup.star_point
        c0 = Cluster(servers=setup.servers, bandwidth_gbps=float(bw))
        solve_tables(
            build_workload(list(setup.models), load=load, cluster=c0, **setup.workload),
            c0,
            path,
            load=load,
            method=setup.optimiser_method,
        )
    return path


def _simulate_cell(
    cell: tuple[float, float, str], st: "FigureSweep", keep_jobs: bool
) -> tuple[dict, pd.DataFrame | None]:
    """One (load, bandwidth, scheme) of a sweep: its row and, if kept, its per-job records."""
    from schedlab.nona.sim import simulate
    from schedlab.nona.workload import Cluster, build_workload

    load, bw, s = cell
    cluster = Cluster(servers=st.servers, bandwidth_gbps=bw)
    w = build_workload(list(st.models), load=load, cluster=cluster, **st.workload)
    row: dict[str, Any] = {"load": load, "bandwidth_gbps": bw, "scheme": s, "status": "ok", "tables": None}
    try:
        sch, path = _cell_scheduler(s, load, bw, w, cluster, st, row)
    except SchemeUnavailable as exc:
        row["status"] = f"unavailable: {exc}"
        return row, None
    if path is not None:  # relative to the repository when inside it
        path = Path(path).resolve()
        row["tables"] = str(path.relative_to(paths.ROOT) if path.is_relative_to(paths.ROOT) else path)
    d = st.window(s)
    if d <= 0:  # a profile may skip a scheme that is too slow for it
        row["status"] = "skipped in this profile (window 0)"
        return row, None
    res = simulate(w, cluster, sch, duration=d, warmup=st.warmup_of(s), rng=np.random.default_rng(st.seed))
    summ = res.summary()
    per_class = summ.pop("per_class_mean_jct_s")
    row.update({k: v for k, v in summ.items() if k not in ("scheme",)})
    row["duration_s"] = d
    for name, v in per_class.items():
        row[f"mean_jct_s.{name}"] = v
    return row, res.jobs if keep_jobs else None


def _cell_scheduler(s: str, load: float, bw: float, w, cluster, st: "FigureSweep", row: dict):
    """The scheduler of scheme ``s`` at one point and the tables file it read (or None)."""
    if s == "nona":
        if st.nona_tables is not None:
            path = repo_path(st.nona_tables.format(load=load, bandwidth_gbps=bw))
        else:
            path = solve_tables(
                w,
                cluster,
                Path(st.tables_dir) / NONA_TABLES_NAME.format(load=load, bandwidth_gbps=bw),
                load=load,
                method=st.optimiser_method,
            )
        doc = load_tables(path)
        check_tables_match(doc, w, cluster)
        return make_scheduler("nona", tables=doc), path
    if s == "nona_star":
        # sweep() put Nona*'s tables (given or solved there) in star_tables before the cells ran
        doc = load_tables(st.star_tables)
        check_tables_match(doc, w, cluster, same_point=False)
        return make_scheduler("nona_star", tables=doc), st.star_tables
    if s == "expert":
        path = _expert_tables(load, bw, w, cluster, st, row)
        return make_scheduler("expert", tables=path), path
    weights = None if st.decima_weights is None else repo_path(st.decima_weights)
    return make_scheduler(s, seed=st.seed, compute_rate=cluster.compute_rate, decima_weights=weights), None


def _expert_tables(load: float, bw: float, w, cluster, st: "FigureSweep", row: dict) -> Path:
    """Search the Expert's tables at one point; write them (with the search log) as JSON."""
    from schedlab.io import atomic_write_json
    from schedlab.nona import expert

    ed = st.expert_duration or st.duration
    ex = expert.search(
        w, cluster, duration=ed, warmup=0.1 * ed, budget=st.expert_budget, search_seed=st.expert_seed
    )
    path = Path(st.tables_dir) / f"expert_{_tag(load, bw)}.json"
    atomic_write_json(
        path,
        {
            **ex.tables,
            "search": {
                "method": ex.method,
                "budget": st.expert_budget,
                "evaluations": ex.evaluations,
                "duration_s": ed,
                "seed": st.expert_seed,
                "score_mean_jct_s": ex.score,
                "p_split": {"|".join(map(str, k)): v for k, v in ex.p.items()},
                "log": ex.log,
            },
        },
    )
    row["expert_evaluations"] = ex.evaluations
    return path


# --------------------------------------------------------------------------------------
# what the figure notebooks share
# --------------------------------------------------------------------------------------


def decima_windows(decima_duration: float) -> dict[str, float]:
    """Both Decima rows on their own measured window (what :meth:`FigureSweep.window` gives them)."""
    return {s: float(decima_duration) for s in DECIMA_SCHEMES}


@dataclass(frozen=True)
class FigureSweep:
    """Every setting of a sweep (:func:`sweep`): the values of a figure's ``params.yaml`` section.

    The one settings object of Nona's sweeps: a notebook builds it from its parameters
    (:meth:`from_params`), a library caller directly; it travels to the workers as it is.

    Attributes
    ----------
    schemes
        Schemes simulated at every point, in the order of the rows.
    servers, duration, seed
        Cluster size, measured window (s) and the seed of the arrivals and of every scheduler.
    tables_dir
        Where tables solved or searched here are written.
    models, workload
        The inference models and :func:`~schedlab.nona.workload.build_workload`'s other arguments.
    optimiser_method
        The optimiser's method for tables solved here.
    expert_budget, expert_duration, expert_seed
        The Expert's search: simulations, their window (``None``: ``duration``) and seed.
    decima_duration
        Both Decima rows' measured window (0 skips them; ``None``: ``duration``, like the others).
    nona_tables, star_tables, decima_weights
        Files made by other stages: the optimiser's tables per point (a pattern with ``{load:g}``
        and ``{bandwidth_gbps:g}``), Nona*'s tables, the retrained Decima's ``weights.npz``
        (``None``: solved here; no retrained Decima). Relative to the repository root unless absolute.
    warmup
        Seconds simulated before the measured window (``None``: 10% of it).
    star_point
        ``(load, Gbps)`` where Nona*'s tables are solved when ``star_tables`` is ``None``.

    Examples
    --------
    >>> s = FigureSweep(schemes=["nona", "decima"], servers=8, duration=5, seed=0, tables_dir="t",
    ...                 decima_duration=2.0)
    >>> s.schemes, s.duration, s.window("nona"), s.window("decima"), s.warmup_of("decima")
    (('nona', 'decima'), 5.0, 5.0, 2.0, 0.2)
    >>> FigureSweep(schemes=["nona", "fast"], servers=8, duration=5, seed=0, tables_dir="t")
    Traceback (most recent call last):
    ...
    ValueError: FigureSweep: unknown scheme 'fast'; expected one of random, opportunistic, spark_fair, nona, nona_star, expert, decima, decima_retrained
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
    decima_duration: float | None = 0.0
    nona_tables: str | None = None
    star_tables: str | Path | None = None
    decima_weights: str | Path | None = None
    warmup: float | None = None
    star_point: tuple[float, float] = (0.5, 10.0)
    expert_seed: int = 12345

    def __post_init__(self) -> None:
        # values from params.yaml, a notebook or a caller arrive as lists, ints, numpy scalars:
        # one canonical form here, so every task sees the same settings whoever built them
        unknown = [s for s in self.schemes if s not in SCHEMES]
        if unknown or isinstance(self.schemes, str):
            bad = unknown[0] if unknown else self.schemes
            raise ValueError(f"FigureSweep: unknown scheme {bad!r}; expected one of {', '.join(SCHEMES)}")
        if not (
            isinstance(self.servers, (int, np.integer))
            and not isinstance(self.servers, bool)
            and self.servers >= 1
        ):
            raise ValueError(f"FigureSweep: servers must be a positive integer, got {self.servers!r}")
        canonical = {
            "schemes": tuple(self.schemes),
            "servers": int(self.servers),
            "duration": float(self.duration),
            "seed": int(self.seed),
            "models": tuple(self.models),
            "workload": dict(self.workload),
            "expert_budget": int(self.expert_budget),
            "expert_seed": int(self.expert_seed),
            "expert_duration": None if self.expert_duration is None else float(self.expert_duration),
            "decima_duration": None if self.decima_duration is None else float(self.decima_duration),
            "warmup": None if self.warmup is None else float(self.warmup),
            "star_point": (float(self.star_point[0]), float(self.star_point[1])),
        }
        for name, value in canonical.items():
            object.__setattr__(self, name, value)
        if not (self.duration > 0 and math.isfinite(self.duration)):
            raise ValueError(f"FigureSweep: duration must be > 0 seconds, got {self.duration}")

    def window(self, scheme: str) -> float:
        """The measured window (s) of ``scheme``: ``decima_duration`` for the Decima rows
        (unless ``None``), ``duration`` for the others."""
        if scheme in DECIMA_SCHEMES and self.decima_duration is not None:
            return self.decima_duration
        return self.duration

    def warmup_of(self, scheme: str) -> float:
        """Seconds simulated before ``scheme``'s window: 10% of a Decima window of its own,
        else ``warmup`` (``None``: 10% of ``duration``)."""
        if scheme in DECIMA_SCHEMES and self.decima_duration is not None:
            return 0.1 * self.decima_duration
        return 0.1 * self.duration if self.warmup is None else self.warmup

    def run(
        self, points: Sequence[dict], *, keep_jobs: bool = False, executor: Any = None, progress: bool = True
    ) -> tuple[pd.DataFrame, dict]:
        """:func:`sweep` over ``points`` with these settings."""
        return sweep(points, self, keep_jobs=keep_jobs, executor=executor, progress=progress)

    @classmethod
    def from_params(
        cls, params: Mapping[str, Any], tables_dir: str | Path, **overrides: Any
    ) -> "FigureSweep":
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

    def regime(
        self,
        points: Sequence[dict],
        key: str,
        workload: Mapping,
        tables_dir: str | Path,
        baselines: Sequence[str],
        columns: Mapping[str, str],
    ) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
        """The same sweep in another workload regime (e.g. light background traffic, where Nona's
        tables split): every scheme but Decima (its window belongs to the main sweep), Nona's and
        Nona*'s tables solved here into ``tables_dir``. Returns the rows, their gains
        (:func:`gain_summary` over ``columns`` plus ``expert_gap``, ``workload`` and
        ``mixed_subgraphs``: per value of ``key``, how many subgraphs Nona places stochastically)
        and Nona's and Nona*'s placements (:func:`placement_table`)."""
        schemes = [s for s in self.schemes if s not in DECIMA_SCHEMES]
        rows, _ = self.with_changes(
            schemes=schemes,
            workload={**self.workload, **workload},
            tables_dir=tables_dir,
            nona_tables=None,
            star_tables=None,
        ).run(points)
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
        if not (ran and "nona" in self.schemes and self.decima_duration):  # None or 0: no window of its own
            return None
        tabs = self.nona_tables
        if tabs is None:  # the tables the sweep solved, per point
            tabs = str(Path(self.tables_dir).resolve() / NONA_TABLES_NAME)
        pts = rows[["load", "bandwidth_gbps"]].drop_duplicates().to_dict("records")
        nona_only = self.with_changes(
            schemes=("nona",),
            duration=self.decima_duration,
            nona_tables=tabs,
            star_tables=None,
            warmup=None,
            decima_duration=None,
        )
        nona_rows, _ = sweep(pts, nona_only, executor=executor, progress=False)
        return same_window_gains(
            rows, nona_rows, ran, window_s=float(self.decima_duration), other_window_s=float(self.duration)
        )


#: columns of the same-window comparison and their names in the gains JSON
SAME_WINDOW_COLUMNS = (
    ("mean_jct_s", "avg"),
    ("p99_jct_s", "p99"),
    ("inference_mean_jct_s", "inference_avg"),
    ("inference_p99_jct_s", "inference_p99"),
)


def decima_ran(rows: pd.DataFrame) -> list[str]:
    """The Decima schemes with at least one row that ran (``status == "ok"``)."""
    return [s for s in DECIMA_SCHEMES if (rows[rows.scheme == s].status == "ok").any()]


def same_window_gains(
    rows: pd.DataFrame,
    nona_rows: pd.DataFrame,
    schemes: Sequence[str],
    *,
    window_s: float,
    other_window_s: float,
) -> dict:
    """Largest ratio scheme / Nona over the points, Nona re-run on the schemes' window
    (``nona_rows``); the ``same_window`` entry of a figure's gains JSON."""
    key = ["load", "bandwidth_gbps"]
    base = nona_rows.set_index(key)
    same: dict[str, Any] = {"window_s": window_s, "other_schemes_window_s": other_window_s}
    for col, tag in SAME_WINDOW_COLUMNS:
        same[tag] = {
            s: float((rows[rows.scheme == s].set_index(key)[col] / base[col]).max()) for s in schemes
        }
    return same


#: a sweep row's wall-clock columns (``simulate``'s ``wall_s``, ``events_per_s``): they vary from
#: run to run, so the figure notebooks write them to ``results/nona/timings/``, not to their outputs
TIMING_COLUMNS = ("wall_s", "events_per_s")
#: what names a sweep row (one scheme at one point)
ROW_KEYS = ("load", "bandwidth_gbps", "scheme")


def write_rows(out: Any, rows: pd.DataFrame, filename: str) -> pd.DataFrame:
    """Write a sweep's rows with :func:`schedlab.stagetimes.write_timed`: without their
    wall-clock columns to ``results/nona/<filename>``, those columns under :data:`ROW_KEYS` to
    ``results/nona/timings/<filename>`` (``out``: the notebook's
    :class:`schedlab.notebooks.Outputs`). Returns the rows written to the results."""
    from schedlab import stagetimes

    # a sweep where no scheme ran at all (every row a status) has no wall-clock column
    timing = [c for c in TIMING_COLUMNS if c in rows.columns]
    return stagetimes.write_timed(out, rows, filename, timing_columns=timing, key_columns=ROW_KEYS)


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
    Nona's JCT is below the scheme's at every point, else 0}}``) and ``"ahead_all"`` (``{tag: 1 if
    Nona is ahead of every scheme at every point}}``: the figure's one sign check, which the
    comparison asserts). A ratio below 1 means the scheme beat Nona there.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"load": [0.1, 0.1, 0.9, 0.9], "scheme": ["nona", "spark_fair"] * 2,
    ...                      "mean_jct_s": [1.0, 3.0, 2.0, 1.5], "status": "ok"})
    >>> g = gain_summary(rows, "load", {"avg": "mean_jct_s"}, ["spark_fair"])
    >>> g["avg"], g["min"], g["at_min"], g["ahead"], g["ahead_all"]
    ({'spark_fair': 3.0}, {'avg': {'spark_fair': 0.75}}, {'avg': {'spark_fair': 0.9}}, {'avg': {'spark_fair': 0}}, {'avg': 0})
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
    ahead_all = {tag: int(bool(extra["ahead"][tag]) and all(extra["ahead"][tag].values())) for tag in columns}
    return {**out, **extra, "ahead_all": ahead_all}


def background_no_wait(jobs: pd.DataFrame) -> float:
    """Share of a run's background compute jobs served with no queueing delay (Fig. 5a): their
    JCT equals their task time, the shortest JCT of the class (NaN without such jobs).

    >>> background_no_wait(pd.DataFrame({"job_class": ["background_compute"] * 4 + ["vgg16"],
    ...                                  "jct": [1.0, 1.0, 2.0, 3.0, 9.0]}))
    0.5
    """
    b = jobs[jobs.job_class == "background_compute"]
    return float((b.jct <= b.jct.min() * (1 + 1e-9)).mean()) if len(b) else float("nan")


def placement_table(
    rows: pd.DataFrame, schemes: Sequence[str] = ("nona", "nona_star", "expert")
) -> pd.DataFrame:
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
            out.append(
                {
                    "load": r.load,
                    "bandwidth_gbps": r.bandwidth_gbps,
                    "scheme": r.scheme,
                    "class": sh["class"],
                    "subgraph": f"{sh['source']}->{sh['sink']}",
                    "p_split": sh["p_split"],
                    "options": sh["options"],
                    "mixed": sh["mixed"],
                }
            )
    columns = ["load", "bandwidth_gbps", "scheme", "class", "subgraph", "p_split", "options", "mixed"]
    return pd.DataFrame(out, columns=columns)


def expert_gap(
    rows: pd.DataFrame, key: str, schemes: Sequence[str] = ("nona", "nona_star")
) -> dict[str, float]:
    """Largest relative gap of each scheme's mean JCT above the Expert's over the points."""
    present = set(rows.scheme)
    if "expert" not in present:
        return {}
    e = rows[rows.scheme == "expert"].set_index(key).mean_jct_s
    return {
        s: float((rows[rows.scheme == s].set_index(key).mean_jct_s / e - 1).max())
        for s in schemes
        if s in present
    }


def status_note(rows: pd.DataFrame) -> str:
    """One line ``"scheme: status"`` per scheme that did not run everywhere (its first reason);
    empty when every row ran."""
    bad = rows[rows.status != "ok"].drop_duplicates("scheme")
    return "\n".join(f"{r.scheme}: {r.status}" for r in bad.itertuples())


def p99_ratio(
    jobs: Mapping[str, pd.DataFrame],
    scheme: str,
    *,
    kind: str | None = None,
    job_class: str | None = None,
    base: str = "nona",
) -> float:
    """p99 JCT of ``scheme``'s jobs over ``base``'s (only jobs of ``kind`` / ``job_class`` when
    given); NaN when either scheme has no run in ``jobs`` (``{scheme: per-job DataFrame}``).

    >>> j = {"nona": pd.DataFrame({"jct": [1.0] * 100, "kind": "inference"}),
    ...      "random": pd.DataFrame({"jct": [3.0] * 100, "kind": "inference"})}
    >>> p99_ratio(j, "random", kind="inference"), p99_ratio(j, "decima")
    (3.0, nan)
    """

    def p99(s: str) -> float:
        if s not in jobs:
            return float("nan")
        j = jobs[s]
        if kind is not None:
            j = j[j.kind == kind]
        if job_class is not None:
            j = j[j.job_class == job_class]
        return float(j.jct.quantile(0.99))

    return p99(scheme) / p99(base)


#: the baselines whose inference p99 Fig. 5 divides by Nona's
FIG5_TAIL_SCHEMES = ("spark_fair", "opportunistic", "random", "decima", "decima_retrained")


def fig5_gains(
    jobs: Mapping[str, pd.DataFrame], schemes: Sequence[str], *, profile: str, paper: Mapping
) -> dict:
    """Fig. 5's gains JSON (without ``same_window`` and ``light``, which other runs add).

    Parameters
    ----------
    jobs
        ``{scheme: per-job DataFrame}`` of the Fig. 5 point (the schemes that ran).
    schemes
        The figure's schemes, in order (``background_no_wait`` lists them in this order).
    profile
        The parameter profile of the run (recorded in the JSON).
    paper
        The paper's numbers (:func:`paper_numbers` of ``PAPER_LAYOUT["fig5"]``), kept under ``paper``.

    Returns
    -------
    dict
        ``profile``, ``inference_p99`` (each baseline's inference p99 / Nona's), ``paper``,
        ``background_p99_decima[_retrained]`` (background compute p99 / Nona's) where Decima
        ran, and ``background_no_wait`` (:func:`background_no_wait` per scheme). A ratio
        with no run behind it is left out, never written as NaN.
    """
    gains: dict[str, Any] = {"profile": profile, "inference_p99": {}, "paper": paper}
    for s in FIG5_TAIL_SCHEMES:
        v = p99_ratio(jobs, s, kind="inference")
        if math.isfinite(v):
            gains["inference_p99"][s] = v
    for s in DECIMA_SCHEMES:
        v = p99_ratio(jobs, s, job_class="background_compute")
        if math.isfinite(v):
            gains[f"background_p99_{s}"] = v
    gains["background_no_wait"] = {}
    for s in schemes:
        if s not in jobs:
            continue
        share = background_no_wait(jobs[s])
        if math.isfinite(share):
            gains["background_no_wait"][s] = share
    return gains


def light_gains(jobs: Mapping[str, pd.DataFrame], placements: pd.DataFrame, workload: Mapping) -> dict:
    """The ``light`` entry of Fig. 5's gains JSON: the light-traffic ``workload``, the inference
    p99 of Spark fair, Opportunistic and Random over Nona's (those that ran), and how many
    subgraphs Nona's tables place with probabilities between 0 and 1 (``placements``:
    :func:`placement_table`)."""
    if "nona" not in jobs:
        raise KeyError(f"light_gains: Nona did not run (schemes that ran: {sorted(jobs)})")
    return {
        "workload": dict(workload),
        "inference_p99": {
            s: p99_ratio(jobs, s, kind="inference")
            for s in ("spark_fair", "opportunistic", "random")
            if s in jobs
        },
        "mixed_subgraphs": int((placements.mixed & (placements.scheme == "nona")).sum()),
    }


#: Decima's evaluation table: the columns that are wall-clock times, and those naming a row
DECIMA_TIMING_COLUMNS = ("wall_s", "policy_ms_per_decision")
DECIMA_KEY_COLUMNS = ("load", "scheme")


def decima_jct(
    models: Sequence[str],
    loads: Sequence[float],
    schemes: Sequence[str],
    *,
    servers: int,
    bandwidth_gbps: float,
    duration: float,
    warmup: float,
    seed: int,
    message_passing: str,
) -> pd.DataFrame:
    """Decima (public weights) next to other schemes in the Nona simulator, one row per (load, scheme).

    Every scheme sees the same arrivals (``numpy.random.default_rng(seed)``); Decima samples its
    actions from a Generator seeded with ``seed``.

    Parameters
    ----------
    models
        The inference models of the workload (each must have its profile).
    loads
        Compute loads, each in (0, 1).
    schemes
        ``decima`` (labelled :data:`schedlab.nona.decima.LABEL`) and the names
        :func:`~schedlab.nona.schedulers.make_scheduler` knows.
    servers, bandwidth_gbps
        The cluster.
    duration, warmup
        Measured window and the time simulated before it (s).
    seed
        Arrivals and Decima's action sampling.
    message_passing
        :class:`~schedlab.nona.decima.DecimaScheduler`'s message passing.

    Returns
    -------
    DataFrame
        ``load, scheme, jobs, mean_jct_s, p99_jct_s, inference_mean_jct_s, inference_p99_jct_s,
        link_bytes``, Decima's ``decisions, mean_num_exec, max_nodes``, and the wall-clock
        :data:`DECIMA_TIMING_COLUMNS` (for :func:`schedlab.stagetimes.write_timed`).
    """
    from schedlab.nona import workload as W

    for load in loads:
        check_point("random", float(load), float(bandwidth_gbps), servers, duration)
    cluster = W.Cluster(servers=servers, bandwidth_gbps=bandwidth_gbps)
    records = []
    for load in loads:
        wl = W.build_workload(models=tuple(models), load=load, cluster=cluster)
        for scheme in schemes:
            records.append(
                _decima_row(
                    wl,
                    cluster,
                    scheme,
                    load=load,
                    duration=duration,
                    warmup=warmup,
                    seed=seed,
                    message_passing=message_passing,
                )
            )
    table = pd.DataFrame(records)
    if "policy_ms_per_decision" not in table:  # no Decima row: the time column is still there, empty
        table["policy_ms_per_decision"] = np.nan
    return table


def _decima_row(
    wl: Any,
    cluster: Any,
    scheme: str,
    *,
    load: float,
    duration: float,
    warmup: float,
    seed: int,
    message_passing: str,
) -> dict:
    """One (load, scheme) of :func:`decima_jct`: its numbers, then its wall-clock times."""
    import time

    from schedlab.nona.decima import LABEL, DecimaScheduler
    from schedlab.nona.sim import simulate

    sched = (
        DecimaScheduler(rng=seed, compute_rate=cluster.compute_rate, message_passing=message_passing)
        if scheme == "decima"
        else make_scheduler(scheme)
    )
    t0 = time.perf_counter()
    res = simulate(wl, cluster, sched, duration=duration, warmup=warmup, rng=np.random.default_rng(seed))
    s = res.summary()
    rec = {
        "load": load,
        "scheme": LABEL if scheme == "decima" else scheme,
        "jobs": s["jobs"],
        "mean_jct_s": s["mean_jct_s"],
        "p99_jct_s": s["p99_jct_s"],
        "inference_mean_jct_s": s["inference_mean_jct_s"],
        "inference_p99_jct_s": s["inference_p99_jct_s"],
        "link_bytes": s["link_bytes"],
        "wall_s": time.perf_counter() - t0,
    }
    if scheme == "decima":
        st = sched.stats
        rec.update(
            decisions=st["decisions"],
            mean_num_exec=st["num_exec_sum"] / max(1, st["decisions"]),
            max_nodes=st["max_nodes"],
            policy_ms_per_decision=1e3 * st["policy_s"] / max(1, st["decisions"]),
        )
    return rec


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
    "fig3": {
        "avg": _ids("fig3.gain_avg", _BASELINES),
        "p99": _ids("fig3.gain_p99", _BASELINES),
        "expert_gap": _ids("fig3.expert_gap", ("nona", "nona_star")),
    },
    "fig4": {
        "avg": _ids("fig4.gain_avg", _BASELINES),
        "inference_avg": _ids("fig4.gain_inference_avg", _BASELINES),
    },
    "fig5": {
        "inference_p99": _ids("fig5.gain_inference_p99", _BASELINES),
        "background_p99_decima": "fig5.gain_background_p99.decima",
        "background_no_wait": _ids("fig5.background_no_wait", ("nona", "spark_fair")),
    },
}


def paper_decima_training_hours() -> dict[int, int]:
    """Table III's Decima training time (hours on an A100) by cluster size, from
    ``reference/nona.yaml`` (stored there in seconds, ``table3.decima_train_s.<servers>``).

    >>> paper_decima_training_hours()[16]
    108
    """
    from schedlab.reference import paper_values

    prefix = "table3.decima_train_s."
    return {int(k[len(prefix) :]): round(v / 3600) for k, v in paper_values("nona", prefix).items()}
