"""The schemes Nona's evaluation compares (section IV-A), behind the simulator's interface.

Oblivious schemes (see no queue state; place a whole job when it arrives):

* :class:`RandomScheduler` -- every task on a uniformly random server, independently.
* :class:`TableScheduler` -- Nona's stochastic placement (section III-C): the root on a
  uniformly random server; for each bottleneck subgraph, in topological order, one option of
  its probability table is drawn; part ``source_part`` runs on the source's server, every
  other part on distinct servers drawn uniformly among the others, the sink on the server
  of part ``sink_part``. Tasks between two adjacent bottlenecks with nothing in between
  (chains) run with the previous bottleneck. Used for:

  - Nona: tables read from the optimiser's JSON (``schedlab nona solve --json``,
    :func:`~schedlab.nona.tables.load_tables`),
  - Nona*: the same, with the tables solved once at 50% load and 10 Gbps,
  - Expert: tables found by direct search in this simulator (:mod:`schedlab.nona.expert`),
  - Opportunistic: :func:`~schedlab.nona.tables.opportunistic_tables` -- each parallel
    branch of a subgraph (a parallel chain of its intermediate tasks, :func:`~schedlab.nona.tables.branch_partition`)
    on its own server, the first branch (topological order) with the subgraph's source. The paper does not say where the
    sink goes; we keep it with the source (``sink_part = 0``).

Live schemes (see the cluster's live state through :class:`~schedlab.nona.sim.LiveView`):

* :class:`SparkFairScheduler` -- decima-sim's dynamic partition: each job with unassigned
  tasks may hold at most ``ceil(N / jobs_with_unassigned_tasks)`` servers; free servers go
  round-robin over jobs in arrival order (one per eligible job per pass). As the paper
  modifies Spark, tasks release their server on completion; decima-sim's preference for
  giving a freed server back to the job that freed it (``source_job``) is therefore not
  applied by default (``prefer_source=True`` is not offered: we have no freed-by record
  once the server is back in the pool, and the paper's text removes the blocking).
* Decima: ``schedlab.nona.decima.DecimaScheduler`` (the Decima baseline): ``decima`` runs the
  public TPC-H-trained weights, ``decima_retrained`` the same network retrained in this
  simulator, its weights file passed in (``decima_weights``; the DVC stage
  ``nona_decima_train`` writes ``results/nona/decima_train/weights.npz``);
  :func:`make_scheduler` raises :class:`SchemeUnavailable` when the code or weights are missing.

The probability-table format lives in :mod:`schedlab.nona.tables`, the experiment driver
(one point, sweeps, ratio tables) in :mod:`schedlab.nona.experiments`.

Examples
--------
>>> SCHEMES
('random', 'opportunistic', 'spark_fair', 'nona', 'nona_star', 'expert', 'decima', 'decima_retrained')
"""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Sequence

from schedlab.nona.sim import CompiledClass, LiveView, UniformStream
from schedlab.nona.tables import Plan, TableError, compile_plan, load_tables, opportunistic_tables

SCHEMES = (
    "random",
    "opportunistic",
    "spark_fair",
    "nona",
    "nona_star",
    "expert",
    "decima",
    "decima_retrained",
)


class SchemeUnavailable(RuntimeError):
    """A scheme that cannot run here: its code is not installed or its inputs (weights) are missing."""


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
# Nona's stochastic placement from tables, and Opportunistic as tables
# --------------------------------------------------------------------------------------


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
        self.plans: dict[int, Plan] = {}
        for c in classes:
            if c.is_comm:
                continue
            if c.n == 1:
                entry = known.get(c.name, {})
                self.plans[c.index] = compile_plan(
                    c, entry.get("subgraphs") if isinstance(entry, dict) else None, servers, where
                )
                continue
            if c.name not in known:
                raise TableError(f"{where}: no table for job class {c.name!r} (has {sorted(known)})")
            self.plans[c.index] = compile_plan(c, known[c.name].get("subgraphs", []), servers, where)

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


class OpportunisticScheduler(TableScheduler):
    """Opportunistic (section IV-A): parallel branches on distinct random servers.

    ``branches``: ``"chains"`` (default: every parallel chain, so a fork such as GPT-2's q/k/v
    splits) or ``"components"`` (one branch per connected component of a subgraph's tasks);
    see :func:`~schedlab.nona.tables.branch_partition`.
    """

    def __init__(self, branches: str = "chains") -> None:
        super().__init__({}, name="opportunistic")
        self.branches = branches

    def prepare(self, classes: Sequence[CompiledClass], servers: int) -> None:
        self.tables = opportunistic_tables(classes, self.branches)
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


def make_scheduler(
    scheme: str,
    *,
    tables: str | Path | dict | None = None,
    seed: int = 0,
    compute_rate: float = 1.0,
    decima_weights: str | Path | None = None,
):
    """Build a scheme by name.

    ``nona``/``nona_star``/``expert`` need ``tables`` (a JSON path or a loaded table dict);
    ``decima`` and ``decima_retrained`` need ``schedlab.nona.decima`` and take the run's
    ``seed`` (their own action sampling) and the cluster's ``compute_rate`` (their
    task-duration feature); ``decima_retrained`` also needs ``decima_weights``, the retrained
    network's ``weights.npz`` (the caller says where; this module reads no results folder).

    >>> make_scheduler("random").name
    'random'
    >>> make_scheduler("fifo")
    Traceback (most recent call last):
    ...
    ValueError: unknown scheme 'fifo'; expected one of random, opportunistic, spark_fair, nona, nona_star, expert, decima, decima_retrained
    >>> make_scheduler("decima_retrained", decima_weights="/nonexistent/weights.npz")
    Traceback (most recent call last):
    ...
    schedlab.nona.schedulers.SchemeUnavailable: the retrained Decima's weights /nonexistent/weights.npz do not exist; run `dvc repro nona_decima_train` (needs torch, the 'trace' extra)
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
        return _decima_scheduler(scheme, seed, compute_rate, decima_weights)
    if tables is None:
        raise FileNotFoundError(f"scheme {scheme!r} needs probability tables (an optimiser JSON path)")
    doc = tables if isinstance(tables, dict) else load_tables(tables)
    return TableScheduler(doc, name=scheme)


def _decima_scheduler(scheme: str, seed: int, compute_rate: float, decima_weights: str | Path | None):
    try:
        from schedlab.nona.decima import DecimaScheduler, load_weights  # type: ignore[import-not-found]
    except ImportError as exc:
        raise SchemeUnavailable(
            "the Decima scheme is not installed yet (schedlab.nona.decima.DecimaScheduler, "
            f"the Decima baseline, docs/nona.md): {exc}"
        ) from None
    if scheme == "decima":
        return DecimaScheduler(rng=seed, compute_rate=compute_rate)
    if decima_weights is None:
        raise SchemeUnavailable(
            "decima_retrained needs the retrained Decima's weights: pass decima_weights= the "
            "weights.npz the nona_decima_train stage writes (params.yaml: decima_weights)"
        )
    path = Path(decima_weights)
    if not path.is_file():
        raise SchemeUnavailable(
            f"the retrained Decima's weights {path} do not exist; "
            "run `dvc repro nona_decima_train` (needs torch, the 'trace' extra)"
        )
    return DecimaScheduler(
        rng=seed, compute_rate=compute_rate, weights=load_weights(path), label="decima_retrained"
    )
