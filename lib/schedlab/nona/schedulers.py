"""The schemes Nona's evaluation compares (section IV-A), behind the simulator's interface.

Oblivious schemes (see no queue state; place a whole job when it arrives):

* :class:`RandomScheduler` -- every task on a uniformly random server, independently.
* :class:`TableScheduler` -- Nona's stochastic placement (section III-C): the root on a
  uniformly random server; for each bottleneck subgraph, in topological order, one option of
  its probability table is drawn; part ``source_part`` runs on the source's server, every
  other part on distinct servers drawn uniformly among the others, the sink on the server
  of part ``sink_part``. Tasks between two adjacent bottlenecks with nothing in between
  (chains) run with the previous bottleneck. Used for:

  - Nona: tables read from the optimiser's JSON (``schedlab nona solve --json``),
  - Nona*: the same, with the tables solved once at 50% load and 10 Gbps,
  - Expert: tables found by direct search in this simulator (:mod:`schedlab.nona.expert`),
  - Opportunistic: :func:`opportunistic_tables` -- each parallel branch of a subgraph
    (a weakly connected component of its intermediate tasks) on its own server, the first
    branch (topological order) with the subgraph's source. The paper does not say where the
    sink goes; we keep it with the source (``sink_part = 0``).

Live schemes (see the cluster's live state through :class:`~schedlab.nona.sim.LiveView`):

* :class:`SparkFairScheduler` -- decima-sim's dynamic partition: each job with unassigned
  tasks may hold at most ``ceil(N / jobs_with_unassigned_tasks)`` servers; free servers go
  round-robin over jobs in arrival order (one per eligible job per pass). As the paper
  modifies Spark, tasks release their server on completion; decima-sim's preference for
  giving a freed server back to the job that freed it (``source_job``) is therefore not
  applied by default (``prefer_source=True`` is not offered: we have no freed-by record
  once the server is back in the pool, and the paper's text removes the blocking).
* Decima: ``schedlab.nona.decima.DecimaScheduler`` (Decima issue): ``decima`` runs the
  public TPC-H-trained weights, ``decima_retrained`` the same network retrained in this
  simulator (``results/nona/decima_train/weights.npz``, DVC stage ``nona_decima_train``);
  :func:`make_scheduler` raises :class:`SchemeUnavailable` when the code or weights are missing.

Examples
--------
>>> SCHEMES
('random', 'opportunistic', 'spark_fair', 'nona', 'nona_star', 'expert', 'decima', 'decima_retrained')
"""

from __future__ import annotations

import bisect
import json
import math
from pathlib import Path
from typing import Any, Sequence

import networkx as nx

from schedlab.nona.contraction import bottleneck_runs
from schedlab.nona.sim import CompiledClass, LiveView, SimInputError, UniformStream

SCHEMES = ("random", "opportunistic", "spark_fair", "nona", "nona_star", "expert", "decima", "decima_retrained")
#: the retrained Decima's weights (written by the nona_decima_train stage), relative to the repository
RETRAINED_DECIMA_WEIGHTS = "results/nona/decima_train/weights.npz"


class SchemeUnavailable(RuntimeError):
    """A scheme whose implementation is not installed (e.g. Decima before its issue lands)."""


class TableError(SimInputError):
    """A probability table (optimiser JSON) that does not fit the workload."""


# --------------------------------------------------------------------------------------
# Random
# --------------------------------------------------------------------------------------


class RandomScheduler:
    """Each task on a uniformly random server (compute- and congestion-oblivious)."""

    name = "random"
    live = False

    def prepare(self, classes: Sequence[CompiledClass], servers: int) -> None:
        self.servers = servers

    def place(self, cls: CompiledClass, stream: UniformStream) -> list[int]:
        n = self.servers
        r = stream.random
        return [int(r() * n) for _ in range(cls.n)]


# --------------------------------------------------------------------------------------
# probability tables (the optimiser JSON's "classes" section)
# --------------------------------------------------------------------------------------


def segments(dag: nx.DiGraph) -> list[tuple[Any, Any, tuple]]:
    """``(source, sink, intermediate)`` for every pair of consecutive bounds of ``dag``.

    Bounds are ``None``, the bottleneck nodes in order, ``None``; unlike
    :func:`~schedlab.nona.contraction.bottleneck_subgraphs` empty runs are kept (they say
    "the next bottleneck runs with the previous one").
    """
    # the (None, first-bottleneck) and (last-bottleneck, None) ends matter only if they hold tasks
    return [(s, t, inner) for s, t, inner in bottleneck_runs(dag) if inner or t is not None]


def load_tables(path: str | Path) -> dict:
    """Read an optimiser JSON (format in helpers' ``nona_api.md``); clear error if missing."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(
            f"Nona needs the optimiser's probability tables, but {p} does not exist; "
            "produce it with `schedlab nona solve --json` (the optimiser stage) first")
    try:
        doc = json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise TableError(f"{p}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("classes"), dict):
        raise TableError(f"{p}: expected an object with a 'classes' mapping")
    doc["_path"] = str(p)
    return doc


class _Plan:
    """One class's placement plan in index form."""

    __slots__ = ("n", "steps", "trivial")

    def __init__(self, n: int, steps: list, trivial: bool):
        self.n = n
        self.steps = steps      # [(src, sink, cum_p, options)], options: [(parts, perm, sink_part)]
        self.trivial = trivial  # one task: just a uniform server


def _compile_plan(cls: CompiledClass, entries: list | None, servers: int, where: str) -> _Plan:
    dag = cls.dag
    pos = cls.pos
    if cls.n == 1:
        if entries:
            raise TableError(f"{where}: class {cls.name!r} has one task but the table lists subgraphs")
        return _Plan(1, [], True)
    by_key = {}
    for e in entries or []:
        try:
            key = (e["source"], e["sink"])
        except (KeyError, TypeError):
            raise TableError(f"{where}: class {cls.name!r}: each subgraph needs 'source' and 'sink'") from None
        by_key[key] = e
    steps = []
    used = set()
    for s, t, inner in segments(dag):
        src = pos[s] if s is not None else -1
        snk = pos[t] if t is not None else -1
        if not inner:
            steps.append((src, snk, None, None))
            continue
        e = by_key.get((s, t))
        if e is None:
            raise TableError(f"{where}: class {cls.name!r}: no table for the subgraph {s!r} -> {t!r} "
                             f"(intermediate {list(inner)})")
        used.add((s, t))
        want = set(inner)
        opts = e.get("options") or []
        if not opts:
            raise TableError(f"{where}: class {cls.name!r}, subgraph {s!r} -> {t!r}: no options")
        cum, options, acc = [], [], 0.0
        for k, o in enumerate(opts):
            part = [list(p) for p in o.get("partition", [])]
            flat = [x for p in part for x in p]
            if sorted(map(str, flat)) != sorted(map(str, want)) or len(flat) != len(want) or any(not p for p in part):
                raise TableError(f"{where}: class {cls.name!r}, subgraph {s!r} -> {t!r}, option {k}: partition "
                                 f"{part} is not a partition of the intermediate tasks {sorted(want, key=str)}")
            sp, kp = o.get("source_part", 0), o.get("sink_part", 0)
            if not (isinstance(sp, int) and isinstance(kp, int) and 0 <= sp < len(part) and 0 <= kp < len(part)):
                raise TableError(f"{where}: class {cls.name!r}, subgraph {s!r} -> {t!r}, option {k}: "
                                 f"source_part/sink_part must index the {len(part)} parts, got {sp}/{kp}")
            if len(part) > servers:
                raise TableError(f"{where}: class {cls.name!r}: option {k} needs {len(part)} distinct servers, "
                                 f"the cluster has {servers}")
            p = float(o.get("p", float("nan")))
            if not (p >= 0 and math.isfinite(p)):
                raise TableError(f"{where}: class {cls.name!r}, subgraph {s!r} -> {t!r}, option {k}: p must be >= 0, got {p}")
            if p == 0:
                continue
            acc += p
            cum.append(acc)
            # parts reordered so the source's part comes first (it gets the source's server)
            order = [sp] + [i for i in range(len(part)) if i != sp]
            parts = [[pos[x] for x in part[i]] for i in order]
            options.append((parts, order.index(kp)))
        if abs(acc - 1.0) > 1e-6:
            raise TableError(f"{where}: class {cls.name!r}, subgraph {s!r} -> {t!r}: probabilities sum to {acc}, not 1")
        cum = [c / acc for c in cum]
        steps.append((src, snk, cum, options))
    extra = set(by_key) - used
    if extra:
        raise TableError(f"{where}: class {cls.name!r}: table lists subgraphs {sorted(extra, key=str)} "
                         "that are not bottleneck subgraphs of its contracted DAG")
    return _Plan(cls.n, steps, False)


class TableScheduler:
    """Nona's stochastic placement from probability tables (see module docstring).

    Parameters
    ----------
    tables : ``{"classes": {name: {"subgraphs": [...]}}}`` as in the optimiser JSON.
    name : the scheme's label.
    """

    live = False

    def __init__(self, tables: dict, name: str = "nona"):
        self.tables = tables
        self.name = name

    def prepare(self, classes: Sequence[CompiledClass], servers: int) -> None:
        where = self.tables.get("_path", f"{self.name} tables")
        known = self.tables.get("classes", {})
        self.servers = servers
        self.plans: dict[int, _Plan] = {}
        for c in classes:
            if c.is_comm:
                continue
            if c.n == 1:
                entry = known.get(c.name, {})
                self.plans[c.index] = _compile_plan(c, entry.get("subgraphs") if isinstance(entry, dict) else None,
                                                    servers, where)
                continue
            if c.name not in known:
                raise TableError(f"{where}: no table for job class {c.name!r} (has {sorted(known)})")
            self.plans[c.index] = _compile_plan(c, known[c.name].get("subgraphs", []), servers, where)

    def place(self, cls: CompiledClass, stream: UniformStream) -> list[int]:
        plan = self.plans[cls.index]
        n = self.servers
        r = stream.random
        if plan.trivial:
            return [int(r() * n)]
        out = [-1] * plan.n
        for src, snk, cum, options in plan.steps:
            s0 = out[src] if src >= 0 else int(r() * n)
            if cum is None:  # adjacent bottlenecks: the next one runs with the previous one
                if snk >= 0:
                    out[snk] = s0
                continue
            u = r()
            k = bisect.bisect_right(cum, u)
            if k >= len(options):
                k = len(options) - 1
            parts, sink_part = options[k]
            chosen = [s0]
            while len(chosen) < len(parts):
                s = int(r() * n)
                if s not in chosen:
                    chosen.append(s)
            for part, s in zip(parts, chosen):
                for x in part:
                    out[x] = s
            if snk >= 0:
                out[snk] = chosen[sink_part]
        return out


def branch_partition(dag: nx.DiGraph, intermediate: Sequence) -> list[list]:
    """Parallel branches of a subgraph: weakly connected components of its intermediate tasks,
    ordered by their first task in ``intermediate`` (topological) order."""
    rank = {x: i for i, x in enumerate(intermediate)}
    comps = [sorted(c, key=rank.__getitem__) for c in nx.weakly_connected_components(dag.subgraph(intermediate))]
    return sorted(comps, key=lambda c: rank[c[0]])


def option_tables(classes: Sequence[Any], chooser) -> dict:
    """Tables built by ``chooser(dag, source, sink, intermediate) -> options`` for every subgraph."""
    out: dict[str, dict] = {}
    for c in classes:
        kind = c.kind
        if kind != "inference":
            continue
        dag = c.dag
        subs = []
        for s, t, inner in segments(dag):
            if inner:
                subs.append({"source": s, "sink": t, "intermediate": list(inner),
                             "options": chooser(dag, s, t, list(inner))})
        out[c.name] = {"kind": kind, "subgraphs": subs}
    return {"method": "constructed", "classes": out}


def split_option(dag, s, t, inner) -> dict:
    """Every parallel branch on its own server, the first one with the source and the sink."""
    return {"partition": branch_partition(dag, inner), "source_part": 0, "sink_part": 0, "p": 1.0}


def together_option(dag, s, t, inner) -> dict:
    """The whole subgraph on the source's server (no transfer)."""
    return {"partition": [list(inner)], "source_part": 0, "sink_part": 0, "p": 1.0}


def opportunistic_tables(classes: Sequence[Any]) -> dict:
    """The Opportunistic scheme as tables: :func:`split_option` with probability 1."""
    return option_tables(classes, lambda *a: [split_option(*a)])


class OpportunisticScheduler(TableScheduler):
    """Opportunistic (section IV-A): parallel branches on distinct random servers."""

    def __init__(self) -> None:
        super().__init__({}, name="opportunistic")

    def prepare(self, classes: Sequence[CompiledClass], servers: int) -> None:
        self.tables = opportunistic_tables(classes)
        super().prepare(classes, servers)


# --------------------------------------------------------------------------------------
# Spark fair (live)
# --------------------------------------------------------------------------------------


class SparkFairScheduler:
    """Spark's fair scheduler as decima-sim's dynamic partition, tasks releasing servers.

    Cap per job: ``ceil(N / J)`` with ``J`` the active jobs that still have unassigned tasks
    (decima-sim counts "unfinished" jobs the same way). Free servers are handed out in passes
    over the jobs in arrival order, one server per job per pass, to jobs below the cap with a
    runnable task (their oldest runnable task first); the most recently freed server first.
    """

    name = "spark_fair"
    live = True

    def prepare(self, classes: Sequence[CompiledClass], servers: int) -> None:
        self.servers = servers

    def schedule(self, view: LiveView) -> list[tuple[int, int, int]]:
        free = view.free_servers
        fi = len(free)
        cap = -(-view.servers // max(1, view.unfinished))
        out: list[tuple[int, int, int]] = []
        taken: dict[int, int] = {}
        ready = view.ready
        order = view.ready_order  # arrival order (job ids are arrival ranks)
        while fi:
            progress = False
            for jid in order:
                job = ready[jid]
                run = job.runnable
                k = taken.get(jid, 0)
                if k < len(run) and job.running + k < cap:
                    fi -= 1
                    out.append((jid, run[k], free[fi]))  # most recently freed server first
                    taken[jid] = k + 1
                    progress = True
                    if not fi:
                        break
            if not progress:
                break
        return out


# --------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------


def make_scheduler(scheme: str, *, tables: str | Path | dict | None = None, seed: int = 0,
                   compute_rate: float = 1.0):
    """Build a scheme by name. ``nona``/``nona_star``/``expert`` need ``tables`` (a JSON path or
    a loaded table dict); ``decima`` needs ``schedlab.nona.decima`` and takes the run's ``seed``
    (its own action sampling) and the cluster's ``compute_rate`` (its task-duration feature).

    >>> make_scheduler("random").name
    'random'
    >>> make_scheduler("fifo")
    Traceback (most recent call last):
    ...
    ValueError: unknown scheme 'fifo'; expected one of random, opportunistic, spark_fair, nona, nona_star, expert, decima, decima_retrained
    """
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    if scheme == "random":
        return RandomScheduler()
    if scheme == "opportunistic":
        return OpportunisticScheduler()
    if scheme == "spark_fair":
        return SparkFairScheduler()
    if scheme in ("decima", "decima_retrained"):
        try:
            from schedlab.nona.decima import DecimaScheduler, load_weights  # type: ignore[import-not-found]
        except ImportError as exc:
            raise SchemeUnavailable(
                "the Decima scheme is not installed yet (schedlab.nona.decima.DecimaScheduler, "
                f"Decima issue): {exc}") from None
        if scheme == "decima":
            return DecimaScheduler(rng=seed, compute_rate=compute_rate)
        from schedlab import paths

        path = paths.ROOT / RETRAINED_DECIMA_WEIGHTS
        if not path.is_file():
            raise SchemeUnavailable(f"the retrained Decima's weights {RETRAINED_DECIMA_WEIGHTS} do not exist; "
                                    "run `dvc repro nona_decima_train` (needs torch, the 'trace' extra)")
        return DecimaScheduler(rng=seed, compute_rate=compute_rate, weights=load_weights(path),
                               label="decima_retrained")
    if tables is None:
        raise FileNotFoundError(f"scheme {scheme!r} needs probability tables (an optimiser JSON path)")
    doc = tables if isinstance(tables, dict) else load_tables(tables)
    return TableScheduler(doc, name=scheme)


# --------------------------------------------------------------------------------------
# one experiment point (used by the CLI and the figure notebooks)
# --------------------------------------------------------------------------------------

DEFAULT_MODELS = ("gpt2", "densenet121", "vgg16", "alexnet", "resnet18")  # Table II; GPT-2 from the trace stage
TABLE_SCHEMES = ("nona", "nona_star", "expert")


def check_point(scheme: str, load: float, bandwidth_gbps: float, servers: int, duration: float,
                tables: str | Path | dict | None = None) -> None:
    """Refuse a bad experiment point with a clear message before anything is built or run."""
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
              workload_kwargs: dict | None = None, progress: bool = False):
    """Build the workload of section IV-B at ``load`` and simulate ``scheme`` on it.

    ``warmup`` defaults to ``0.1 * duration``. Same ``seed`` -> same arrivals for all schemes.

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
    sch = make_scheduler(scheme, tables=tables, seed=seed, compute_rate=cluster.compute_rate)
    import numpy as np

    return simulate(w, cluster, sch, duration=duration, warmup=0.1 * duration if warmup is None else warmup,
                    rng=np.random.default_rng(seed), progress=progress)


# --------------------------------------------------------------------------------------
# sweeps for the figures: tables written as optimiser JSON, then loaded like any other
# --------------------------------------------------------------------------------------


def _tag(load: float, bw: float) -> str:
    return f"load{load:g}_bw{bw:g}"


def solve_tables(job_classes, cluster, path: str | Path, *, load: float, method: str = "global") -> Path:
    """Run the optimiser (``schedlab.nona.optimise``) for one point and write its JSON to ``path``."""
    from schedlab.io import atomic_write_json
    from schedlab.nona import optimise

    res = optimise.solve(job_classes, cluster, method=method)
    atomic_write_json(path, optimise.to_json(res, load))
    return Path(path)


def check_tables_match(doc: dict, job_classes, cluster, *, same_point: bool = True) -> None:
    """Refuse tables solved for another workload (arrival rates) or cluster (servers, bandwidth).

    ``same_point=False`` (Nona*) only checks that every inference class has a table.
    """
    where = doc.get("_path", "tables")
    known = doc.get("classes", {})
    for c in job_classes:
        if c.kind == "inference" and c.name not in known:
            raise TableError(f"{where}: no table for job class {c.name!r} (has {sorted(known)})")
    if not same_point:
        return
    for key, ours in (("servers", cluster.servers), ("bandwidth_gbps", cluster.bandwidth_gbps)):
        if key in doc and doc[key] is not None and float(doc[key]) != float(ours):
            raise TableError(f"{where}: solved for {key} = {doc[key]}, this point has {ours}")
    for c in job_classes:
        r = known.get(c.name, {}).get("arrival_rate")
        if r is not None and abs(float(r) - c.arrival_rate) > 1e-6 * max(1.0, c.arrival_rate):
            raise TableError(f"{where}: class {c.name!r} was solved at arrival rate {r}, this workload has "
                             f"{c.arrival_rate} (different models/load/workload settings?)")


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
    keep_jobs: bool = False,
    progress: bool = True,
):
    """Simulate every scheme at every point ``{"load": x, "bandwidth_gbps": b}``.

    Nona's tables are solved per point (the optimiser run on the point's own workload), Nona*'s
    once at ``star_point`` (load, Gbps), the Expert's searched per point
    (:func:`schedlab.nona.expert.search`); each is written to ``tables_dir`` as optimiser
    JSON and the scheme loads it from there. ``scheme_durations`` overrides the window per scheme
    (0 skips it, with a ``status`` row). ``nona_tables`` (a path pattern with ``{load:g}``
    and ``{bandwidth_gbps:g}``, relative to the repository root) and ``star_tables`` (a path)
    use the optimiser stage's own JSON files instead; a missing file is an error, and tables
    solved for another workload or cluster are refused (:func:`check_tables_match`). A scheme
    that is not available (Decima before its issue lands) gets a row with ``status`` saying
    why and NaN numbers.

    Returns ``(rows, jobs)``: a DataFrame with one row per (point, scheme) and, if
    ``keep_jobs``, a dict ``(load, bandwidth_gbps, scheme) -> per-job DataFrame``.
    """
    import pandas as pd

    from schedlab.io import atomic_write_json
    from schedlab.nona import expert
    from schedlab.nona.sim import simulate
    from schedlab.nona.workload import Cluster, build_workload

    import numpy as np

    for s in schemes:
        if s not in SCHEMES:
            raise ValueError(f"unknown scheme {s!r}; expected one of {', '.join(SCHEMES)}")
    for p in points:
        check_point("random", float(p["load"]), float(p["bandwidth_gbps"]), servers, duration)
    tables_dir = Path(tables_dir)
    warm = 0.1 * duration if warmup is None else warmup
    kw = dict(workload_kwargs or {})
    durations = dict(scheme_durations or {})
    from schedlab import paths

    star_path = tables_dir / f"nona_star_{_tag(*star_point)}.json"
    if star_tables is not None:
        star_path = paths.ROOT / Path(star_tables)
        load_tables(star_path)  # a clear error now if it is missing
    elif "nona_star" in schemes:
        c0 = Cluster(servers=servers, bandwidth_gbps=float(star_point[1]))
        solve_tables(build_workload(list(models), load=star_point[0], cluster=c0, **kw), c0, star_path,
                     load=star_point[0], method=optimiser_method)
    rows, jobs = [], {}
    total = len(points) * len(schemes)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="sweep", unit="run")
    for p in points:
        load, bw = float(p["load"]), float(p["bandwidth_gbps"])
        cluster = Cluster(servers=servers, bandwidth_gbps=bw)
        w = build_workload(list(models), load=load, cluster=cluster, **kw)
        for s in schemes:
            row = {"load": load, "bandwidth_gbps": bw, "scheme": s, "status": "ok", "tables": None}
            try:
                if s == "nona":
                    if nona_tables is not None:
                        path = paths.ROOT / nona_tables.format(load=load, bandwidth_gbps=bw)
                    else:
                        path = solve_tables(w, cluster, tables_dir / f"nona_{_tag(load, bw)}.json", load=load,
                                            method=optimiser_method)
                    doc = load_tables(path)
                    check_tables_match(doc, w, cluster)
                    sch = make_scheduler("nona", tables=doc)
                elif s == "nona_star":
                    path = star_path
                    doc = load_tables(path)
                    check_tables_match(doc, w, cluster, same_point=False)
                    sch = make_scheduler("nona_star", tables=doc)
                elif s == "expert":
                    ed = expert_duration or duration
                    ex = expert.search(w, cluster, duration=ed, warmup=0.1 * ed, budget=expert_budget,
                                       search_seed=expert_seed)
                    path = tables_dir / f"expert_{_tag(load, bw)}.json"
                    atomic_write_json(path, {**ex.tables, "search": {
                        "method": ex.method, "budget": expert_budget, "evaluations": ex.evaluations,
                        "duration_s": ed, "seed": expert_seed, "score_mean_jct_s": ex.score,
                        "p_split": {"|".join(map(str, k)): v for k, v in ex.p.items()}, "log": ex.log}})
                    sch = make_scheduler("expert", tables=path)
                    row["expert_evaluations"] = ex.evaluations
                else:
                    path = None
                    sch = make_scheduler(s, seed=seed, compute_rate=cluster.compute_rate)
                if path is not None:  # relative to the repository when inside it
                    path = Path(path).resolve()
                    row["tables"] = str(path.relative_to(paths.ROOT) if path.is_relative_to(paths.ROOT) else path)
            except SchemeUnavailable as exc:
                row["status"] = f"unavailable: {exc}"
                rows.append(row)
                if bar is not None:
                    bar.update(1)
                continue
            d = float(durations.get(s, duration))
            if d <= 0:  # a profile may skip a scheme that is too slow for it (Decima in the default one)
                row["status"] = "skipped in this profile (window 0)"
                rows.append(row)
                if bar is not None:
                    bar.update(1)
                continue
            res = simulate(w, cluster, sch, duration=d, warmup=warm if s not in durations else 0.1 * d,
                           rng=np.random.default_rng(seed))
            summ = res.summary()
            per_class = summ.pop("per_class_mean_jct_s")
            row.update({k: v for k, v in summ.items() if k not in ("scheme",)})
            row["duration_s"] = d
            for name, v in per_class.items():
                row[f"mean_jct_s.{name}"] = v
            rows.append(row)
            if keep_jobs:
                jobs[(load, bw, s)] = res.jobs
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return pd.DataFrame(rows), jobs
