"""Nona's network-aware event simulator (system model of section III-B, methodology IV-A).

Model
-----
* ``N`` servers; each runs one task at a time at compute rate ``nu`` (a task of ``work_s``
  seconds at rate 1 takes ``work_s / nu``) and keeps an unbounded FIFO buffer.
* One bottleneck link, a FIFO queue with deterministic service ``b / mu`` per transfer of
  ``b`` bytes (``mu = Cluster.link_bytes_per_s``).
* Every job class arrives as a Poisson stream of rate ``arrival_rate``.
* A task starts when all its parents finished and their outputs arrived. An output crosses
  the link only when parent and child run on different servers (zero-byte edges never
  queue: there is nothing to send).
* Background compute jobs are one task (no transfer); background communication jobs are
  one transfer of ``dag.graph["transfer_bytes"]`` (no compute, no server).

Because both queues are FIFO with known service times and tasks are enqueued in time order,
a queue is fully described by the time it next becomes free (Lindley's recursion): a task
enqueued at ``t`` on a server free at ``f`` finishes at ``max(t, f) + w``. So each task costs
one heap event (its completion) and each transfer one (its arrival); arrivals are
pre-generated (vectorised) and merged with the heap, never pushed.

Two kinds of schedulers (see :mod:`schedlab.nona.schedulers`):

* *oblivious* (Nona, Nona*, Expert, Random, Opportunistic): ``place(cls, stream)`` returns
  the server of every task of a new job from the job's class alone; they never see queues.
  Tasks then wait in their server's FIFO buffer.
* *live* (Spark fair, Decima): servers have no buffer; whenever a server is free and a task
  is runnable (all parents finished), ``schedule(view)`` is called with a :class:`LiveView`
  of the cluster's live state and returns ``(job, task, server)`` assignments. An assigned
  task holds its server while its remote inputs cross the link (it pulls them at
  assignment, as a Spark executor fetches shuffle data), then computes.

Measurement: arrivals are generated on ``[0, warmup + duration + cooldown)``; jobs arriving in
``[warmup, warmup + duration)`` are measured; the run continues until every generated job has
completed, so every measured job has a completion time.

Examples
--------
>>> import networkx as nx
>>> from types import SimpleNamespace as NS
>>> g = nx.DiGraph(transfer_bytes=1.25e6); g.add_node("x", work_s=0.0)
>>> comm = NS(name="comm", kind="background_comm", dag=g, arrival_rate=500.0)
>>> cluster = NS(servers=1, bandwidth_gbps=10.0, compute_rate=1.0, link_bytes_per_s=1.25e9)
>>> from schedlab.nona.schedulers import RandomScheduler
>>> res = simulate([comm], cluster, RandomScheduler(), duration=20.0, warmup=1.0,
...                rng=np.random.default_rng(0))
>>> abs(float(res.jobs.jct.mean()) * 1e3 / 1.5 - 1) < 0.05  # M/D/1, s = 1 ms, rho = 0.5: 1.5 ms
True
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
import math
import time as _time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

import networkx as nx
import numpy as np
import pandas as pd

KINDS = ("inference", "background_compute", "background_comm")

# heap event codes
_TASK_DONE, _XFER_DONE, _COMM_DONE = 0, 1, 2


class SimInputError(ValueError):
    """A workload, cluster or scheduler the simulator cannot run (raised before any event)."""


# --------------------------------------------------------------------------------------
# compiled job classes
# --------------------------------------------------------------------------------------


@dataclass
class CompiledClass:
    """A job class in the index form the event loop reads (lists, not graphs).

    ``nodes`` are the DAG's node ids in a (lexicographic) topological order; every other list
    is indexed by position in ``nodes``.
    """

    index: int
    name: str
    kind: str
    arrival_rate: float
    nodes: list
    work: list[float]
    children: list[list[tuple[int, float]]]
    parents: list[list[tuple[int, float]]]
    n_parents: list[int]
    roots: list[int]
    transfer_bytes: float = 0.0
    dag: nx.DiGraph | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return len(self.nodes)

    @property
    def is_comm(self) -> bool:
        return self.kind == "background_comm"

    @property
    def pos(self) -> dict:
        return {v: i for i, v in enumerate(self.nodes)}

    def service_s(self, compute_rate: float = 1.0) -> float:
        """S_j: the sum of the task times (compute only), the paper's per-job service."""
        return 0.0 if self.is_comm else sum(self.work) / compute_rate


def compile_class(job_class: Any, index: int = 0) -> CompiledClass:
    """Check one ``JobClass``-like object and turn it into a :class:`CompiledClass`.

    Needs attributes ``name``, ``kind``, ``dag`` (node attr ``work_s``, edge attr ``bytes``)
    and ``arrival_rate``. Errors name the class and the field.
    """
    name = getattr(job_class, "name", f"class #{index}")
    for attr in ("kind", "dag", "arrival_rate"):
        if not hasattr(job_class, attr):
            raise SimInputError(f"job class {name!r}: missing attribute {attr!r}")
    kind, dag, rate = job_class.kind, job_class.dag, float(job_class.arrival_rate)
    if kind not in KINDS:
        raise SimInputError(f"job class {name!r}: kind {kind!r} is not one of {KINDS}")
    if not (rate >= 0 and math.isfinite(rate)):
        raise SimInputError(f"job class {name!r}: arrival_rate must be finite and >= 0, got {rate}")
    if not isinstance(dag, nx.DiGraph) or dag.number_of_nodes() == 0:
        raise SimInputError(f"job class {name!r}: its DAG has no tasks")
    if not nx.is_directed_acyclic_graph(dag):
        raise SimInputError(f"job class {name!r}: its task graph has a cycle")
    nodes = list(nx.lexicographical_topological_sort(dag, key=str))
    pos = {v: i for i, v in enumerate(nodes)}
    work = []
    for v in nodes:
        w = dag.nodes[v].get("work_s")
        if w is None or not (float(w) >= 0 and math.isfinite(float(w))):
            raise SimInputError(
                f"job class {name!r}, task {v!r}: work_s must be a finite number >= 0, got {w!r}"
            )
        work.append(float(w))
    children: list[list[tuple[int, float]]] = [[] for _ in nodes]
    parents: list[list[tuple[int, float]]] = [[] for _ in nodes]
    for u, v, d in dag.edges(data=True):
        b = d.get("bytes")
        if b is None or not (float(b) >= 0 and math.isfinite(float(b))):
            raise SimInputError(
                f"job class {name!r}, edge {u!r}->{v!r}: bytes must be a finite number >= 0, got {b!r}"
            )
        children[pos[u]].append((pos[v], float(b)))
        parents[pos[v]].append((pos[u], float(b)))
    for lst in children:
        lst.sort()
    for lst in parents:
        lst.sort()
    transfer = 0.0
    if kind == "background_comm":
        transfer = dag.graph.get("transfer_bytes")
        if transfer is None or not (float(transfer) > 0 and math.isfinite(float(transfer))):
            raise SimInputError(
                f"job class {name!r}: background_comm needs dag.graph['transfer_bytes'] > 0, got {transfer!r}"
            )
        transfer = float(transfer)
    return CompiledClass(
        index=index,
        name=str(name),
        kind=kind,
        arrival_rate=rate,
        nodes=nodes,
        work=work,
        children=children,
        parents=parents,
        n_parents=[len(p) for p in parents],
        roots=[i for i, p in enumerate(parents) if not p],
        transfer_bytes=transfer,
        dag=dag,
    )


def compile_classes(job_classes: Sequence[Any]) -> list[CompiledClass]:
    if len(job_classes) == 0:
        raise SimInputError("the workload has no job classes")
    out = [compile_class(c, i) for i, c in enumerate(job_classes)]
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise SimInputError(f"job class names must be unique, got {names}")
    return out


def check_cluster(cluster: Any) -> tuple[int, float, float]:
    """``(servers, link bytes/s, compute rate)`` of a ``Cluster``-like object, validated."""
    servers = getattr(cluster, "servers", None)
    bw = getattr(cluster, "bandwidth_gbps", None)
    nu = getattr(cluster, "compute_rate", None)
    if not isinstance(servers, (int, np.integer)) or servers < 1:
        raise SimInputError(f"cluster.servers must be a positive integer, got {servers!r}")
    if bw is None or not (float(bw) > 0 and math.isfinite(float(bw))):
        raise SimInputError(f"cluster.bandwidth_gbps must be > 0, got {bw!r}")
    if nu is None or not (float(nu) > 0 and math.isfinite(float(nu))):
        raise SimInputError(f"cluster.compute_rate must be > 0, got {nu!r}")
    mu = float(getattr(cluster, "link_bytes_per_s", float(bw) * 1e9 / 8))
    return int(servers), mu, float(nu)


def offered_loads(classes: Sequence[CompiledClass], servers: int, mu: float, nu: float) -> dict[str, float]:
    """Compute load ``sum_j lambda_j S_j / N`` and the link's background offered load.

    Inference transfers depend on the placement, so only background communication enters
    ``link_background``.
    """
    compute = sum(c.arrival_rate * c.service_s(nu) for c in classes) / servers
    link = sum(c.arrival_rate * c.transfer_bytes / mu for c in classes if c.is_comm)
    return {"compute": compute, "link_background": link}


# --------------------------------------------------------------------------------------
# randomness
# --------------------------------------------------------------------------------------


class UniformStream:
    """Uniform [0, 1) floats drawn from a Generator in vectorised chunks.

    Scalar ``Generator`` calls cost about a microsecond each; placement needs a few per job,
    so schedulers read this buffer instead. Deterministic for a given Generator.

    >>> s = UniformStream(np.random.default_rng(1), chunk=4)
    >>> [round(s.random(), 3) for _ in range(5)] == [round(x, 3) for x in np.r_[
    ...     np.random.default_rng(1).random(4)]] + [round(s._buf[0], 3)]
    True
    """

    def __init__(self, rng: np.random.Generator, chunk: int = 1 << 16):
        self.rng = rng
        self.chunk = chunk
        self._buf: list[float] = []
        self._i = 0

    def random(self) -> float:
        i = self._i
        if i >= len(self._buf):
            self._buf = self.rng.random(self.chunk).tolist()
            i = 0
        self._i = i + 1
        return self._buf[i]

    def integer(self, n: int) -> int:
        """Uniform integer in ``[0, n)``."""
        return int(self.random() * n)

    def distinct_servers(self, k: int, n: int, first: int | None = None) -> list[int]:
        """``k`` distinct servers among ``n``; ``first`` (if given) is the first one."""
        out = [] if first is None else [first]
        while len(out) < k:
            s = int(self.random() * n)
            if s not in out:
                out.append(s)
        return out


def poisson_arrivals(
    rates: Sequence[float], horizon: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Merged Poisson arrivals of several classes on ``[0, horizon)``: (times, class index).

    Per class, a Poisson(rate * horizon) count of uniform times: the exact conditional form
    of a Poisson process, drawn in one vectorised call.

    >>> t, c = poisson_arrivals([10.0, 5.0], 100.0, np.random.default_rng(0))
    >>> bool(np.all(np.diff(t) >= 0)), abs(len(t) / 1500 - 1) < 0.1
    (True, True)
    """
    times, cls = [], []
    for j, lam in enumerate(rates):
        n = int(rng.poisson(lam * horizon)) if lam > 0 else 0
        times.append(rng.random(n) * horizon)
        cls.append(np.full(n, j, dtype=np.int64))
    t = np.concatenate(times) if times else np.empty(0)
    c = np.concatenate(cls) if cls else np.empty(0, dtype=np.int64)
    order = np.argsort(t, kind="stable")
    return t[order], c[order]


# --------------------------------------------------------------------------------------
# scheduler interface
# --------------------------------------------------------------------------------------


class Scheduler(Protocol):
    """What the simulator needs from a scheme.

    ``live = False``: implement ``place``; the scheme sees the job's class, the cluster size
    and its random stream, nothing else. ``live = True``: implement ``schedule``; it sees a
    :class:`LiveView`. ``prepare`` is called once before the run with the compiled classes
    and the number of servers (validate tables there).
    """

    name: str
    live: bool

    def prepare(self, classes: Sequence[CompiledClass], servers: int) -> None: ...

    def place(self, cls: CompiledClass, stream: UniformStream) -> list[int]: ...

    def schedule(self, view: "LiveView") -> list[tuple[int, int, int]]: ...


@dataclass
class LiveJob:
    """Live state of one active job, as a live scheduler sees it (read-only for it)."""

    job_id: int
    cls: CompiledClass
    arrival: float
    runnable: list[int]  # local task ids whose parents have all finished, unassigned
    task_server: list[int]  # -1 until assigned
    running: int = 0  # tasks assigned and not finished (servers held)
    unassigned: int = 0  # tasks not yet assigned (runnable or waiting on parents)
    finished: int = 0


@dataclass
class LiveView:
    """The cluster's live state handed to live schedulers (Spark fair, Decima).

    ``free_servers`` is the list of idle servers, ``active`` maps job id -> :class:`LiveJob`
    in arrival order (only compute jobs; communication jobs never need a server). A scheduler
    must not mutate it; it returns ``(job_id, task, server)`` triples.
    """

    now: float
    servers: int
    free_servers: list[int]
    active: dict[int, LiveJob]
    classes: Sequence[CompiledClass]
    ready: dict[int, LiveJob] = field(default_factory=dict)  # active jobs with a runnable task
    ready_order: list[int] = field(default_factory=list)  # their ids, sorted (= arrival order)
    unfinished: int = 0  # active jobs that still have unassigned tasks
    link_backlog_s: float = 0.0  # not used by Spark/Decima (congestion-oblivious); exposed for tests


# --------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------


@dataclass
class SimResult:
    """Per-job records of the measured window plus run statistics."""

    jobs: pd.DataFrame
    stats: dict

    def summary(self) -> dict:
        """Mean and p99 JCT (all jobs, inference only) and run statistics, JSON-ready."""
        j = self.jobs
        inf = j[j.kind == "inference"]
        out = {
            "jobs": int(len(j)),
            "mean_jct_s": float(j.jct.mean()) if len(j) else float("nan"),
            "p99_jct_s": float(j.jct.quantile(0.99)) if len(j) else float("nan"),
            "inference_jobs": int(len(inf)),
            "inference_mean_jct_s": float(inf.jct.mean()) if len(inf) else float("nan"),
            "inference_p99_jct_s": float(inf.jct.quantile(0.99)) if len(inf) else float("nan"),
            "per_class_mean_jct_s": {k: float(v) for k, v in j.groupby("job_class").jct.mean().items()},
        }
        out.update(self.stats)
        return out

    def to_parquet(self, path: str | Path) -> None:
        from schedlab.io import atomic_path

        with atomic_path(path) as tmp:
            self.jobs.to_parquet(tmp, index=False)


# --------------------------------------------------------------------------------------
# the event loop
# --------------------------------------------------------------------------------------


def simulate(
    job_classes: Sequence[Any],
    cluster: Any,
    scheduler: Scheduler,
    *,
    duration: float,
    warmup: float = 0.0,
    cooldown: float | None = None,
    rng: np.random.Generator,
    max_compute_load: float = 1.0,
    progress: bool = False,
) -> SimResult:
    """Run one simulation; return per-job records of the jobs arriving in the window.

    Parameters
    ----------
    job_classes : JobClass-like objects (``schedlab.nona.workload.JobClass``).
    cluster : ``Cluster``-like (``servers``, ``bandwidth_gbps``, ``compute_rate``).
    scheduler : an oblivious or live scheme from :mod:`schedlab.nona.schedulers`.
    duration, warmup : measured window ``[warmup, warmup + duration)`` in seconds.
    cooldown : arrivals keep coming this long after the window (default ``0.1 * duration``)
        so the last measured jobs still see the offered load; then the system drains.
    rng : the only source of randomness. Arrivals and placements use two independent
        children (``rng.spawn(2)``), so schemes run with the same seed see the same arrivals.
    max_compute_load : refuse runs whose compute load ``sum_j lambda_j S_j / N`` reaches it
        (the servers alone would be unstable).

    Returns
    -------
    SimResult with ``jobs`` columns ``job_id, job_class, kind, arrival, completion, jct,
    bytes_moved, tasks`` and ``stats`` (events, wall time, link bytes, loads, ...).
    """
    if not (duration > 0 and math.isfinite(duration)):
        raise SimInputError(f"duration must be > 0 seconds, got {duration!r}")
    if not (warmup >= 0 and math.isfinite(warmup)):
        raise SimInputError(f"warmup must be >= 0 seconds, got {warmup!r}")
    cooldown = 0.1 * duration if cooldown is None else float(cooldown)
    if cooldown < 0:
        raise SimInputError(f"cooldown must be >= 0, got {cooldown}")
    if not isinstance(rng, np.random.Generator):
        raise SimInputError("rng must be a numpy.random.Generator")
    classes = compile_classes(job_classes)
    servers, mu, nu = check_cluster(cluster)
    loads = offered_loads(classes, servers, mu, nu)
    if loads["compute"] >= max_compute_load:
        raise SimInputError(
            f"compute load sum_j lambda_j S_j / N = {loads['compute']:.3f} >= {max_compute_load}: "
            "the servers cannot keep up; lower the arrival rates"
        )
    scheduler.prepare(classes, servers)

    arr_rng, place_rng = rng.spawn(2)
    horizon = warmup + duration + cooldown
    arr_t, arr_c = poisson_arrivals([c.arrival_rate for c in classes], horizon, arr_rng)
    stream = UniformStream(place_rng)

    t0 = _time.perf_counter()
    if scheduler.live:
        state = _run_live(classes, servers, mu, nu, scheduler, arr_t, arr_c, progress)
    else:
        state = _run_oblivious(classes, servers, mu, nu, scheduler, arr_t, arr_c, stream, progress)
    wall = _time.perf_counter() - t0

    completion = np.asarray(state["completion"], dtype=float)
    bytes_moved = np.asarray(state["bytes"], dtype=float)
    mask = (arr_t >= warmup) & (arr_t < warmup + duration)
    ids = np.nonzero(mask)[0]
    names = np.array([c.name for c in classes], dtype=object)
    kinds = np.array([c.kind for c in classes], dtype=object)
    ntasks = np.array([0 if c.is_comm else c.n for c in classes])
    jobs = pd.DataFrame(
        {
            "job_id": ids.astype(np.int64),
            "job_class": pd.Categorical(names[arr_c[ids]], categories=list(names)),
            "kind": kinds[arr_c[ids]].astype(str),
            "arrival": arr_t[ids],
            "completion": completion[ids],
            "jct": completion[ids] - arr_t[ids],
            "bytes_moved": bytes_moved[ids],
            "tasks": ntasks[arr_c[ids]].astype(np.int64),
        }
    )
    stats = {
        "scheme": scheduler.name,
        "servers": servers,
        "bandwidth_gbps": float(cluster.bandwidth_gbps),
        "compute_load": loads["compute"],
        "link_background_load": loads["link_background"],
        "link_offered_load": state["link_busy"] / horizon,
        "generated_jobs": int(len(arr_t)),
        "events": int(state["events"]),
        "task_events": int(state["tasks"]),
        "link_bytes": float(state["link_bytes"]),
        "sim_end_s": float(state["end"]),
        "wall_s": wall,
        "events_per_s": state["events"] / wall if wall > 0 else float("nan"),
    }
    return SimResult(jobs, stats)


def idle_jct(job_class: Any, cluster: Any, scheduler: Scheduler, *, rng: np.random.Generator) -> float:
    """The completion time of ONE job of ``job_class`` arriving on an idle cluster (no other job).

    Runs the oblivious event loop of :func:`simulate` on a single arrival at time 0, so the
    job meets no queue but its own: its tasks share their servers and its transfers share the
    link (FIFO), exactly as in a full run. What the optimiser's model predicts for the same
    placement at link wait phi = 0 (``tests/nona/test_model_vs_sim.py`` compares them).

    Parameters
    ----------
    job_class : an inference ``JobClass``-like object (see :func:`compile_class`).
    cluster : ``Cluster``-like.
    scheduler : an oblivious scheme (``live = False``); a table scheme with probability-1
        options places the job deterministically.
    rng : the placement's random stream (which servers; irrelevant on an idle cluster).
    """
    if getattr(scheduler, "live", True):
        raise SimInputError(
            f"idle_jct needs an oblivious scheme (one that places a job at arrival), got "
            f"{getattr(scheduler, 'name', scheduler)!r}"
        )
    if not isinstance(rng, np.random.Generator):
        raise SimInputError("rng must be a numpy.random.Generator")
    cls = compile_class(job_class, 0)
    if cls.is_comm:
        raise SimInputError(f"job class {cls.name!r}: idle_jct needs a compute job, got a communication job")
    servers, mu, nu = check_cluster(cluster)
    scheduler.prepare([cls], servers)
    state = _run_oblivious(
        [cls], servers, mu, nu, scheduler, np.zeros(1), np.zeros(1, dtype=np.int64), UniformStream(rng), False
    )
    return float(state["completion"][0])


def _run_oblivious(classes, servers, mu, nu, scheduler, arr_t, arr_c, stream, progress):
    """Event loop for schemes that place a whole job at its arrival (no state visible)."""
    nj = len(arr_t)
    times = arr_t.tolist()
    jcls = arr_c.tolist()
    ntask = np.array([0 if c.is_comm else c.n for c in classes], dtype=np.int64)
    offsets = np.zeros(nj + 1, dtype=np.int64)
    np.cumsum(ntask[arr_c], out=offsets[1:])
    total_tasks = int(offsets[-1])
    job_off = offsets.tolist()
    task_server = [0] * total_tasks
    task_pending = [0] * total_tasks
    job_done = [0] * nj
    completion = [math.nan] * nj
    job_bytes = [0.0] * nj

    inv_mu = 1.0 / mu
    inv_nu = 1.0 / nu
    work = [[w * inv_nu for w in c.work] for c in classes]
    children = [c.children for c in classes]
    nparents = [c.n_parents for c in classes]
    roots = [c.roots for c in classes]
    ns = [c.n for c in classes]
    comm_bytes = [c.transfer_bytes for c in classes]
    is_comm = [c.is_comm for c in classes]
    place = scheduler.place

    free = [0.0] * servers
    link_free = 0.0
    link_bytes = 0.0
    link_busy = 0.0
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    seq = 0
    events = 0
    tasks_done = 0
    i = 0
    t = 0.0
    bar = _bar(progress, nj, scheduler.name)
    while True:
        if i < nj and (not heap or times[i] < heap[0][0]):
            t = times[i]
            j = i
            i += 1
            events += 1
            if bar is not None and not (i & 0x3FFF):
                bar.update(0x4000)
            c = jcls[j]
            if is_comm[c]:
                b = comm_bytes[c]
                st = link_free if link_free > t else t
                dt = b * inv_mu
                link_free = st + dt
                link_busy += dt
                link_bytes += b
                job_bytes[j] = b
                seq += 1
                push(heap, (link_free, seq, _COMM_DONE, j, 0))
                continue
            off = job_off[j]
            n = ns[c]
            srv = place(classes[c], stream)
            task_server[off : off + n] = srv
            task_pending[off : off + n] = nparents[c]
            w = work[c]
            for r in roots[c]:
                s = srv[r]
                st = free[s]
                if st < t:
                    st = t
                end = st + w[r]
                free[s] = end
                seq += 1
                push(heap, (end, seq, _TASK_DONE, j, r))
            continue
        if not heap:
            break
        t, _, code, j, k = pop(heap)
        events += 1
        if code == _TASK_DONE:
            tasks_done += 1
            c = jcls[j]
            d = job_done[j] + 1
            job_done[j] = d
            if d == ns[c]:
                completion[j] = t
                continue
            off = job_off[j]
            s = task_server[off + k]
            w = work[c]
            for ch, b in children[c][k]:
                g = off + ch
                s2 = task_server[g]
                if s2 == s or b <= 0.0:
                    p = task_pending[g] - 1
                    task_pending[g] = p
                    if p == 0:
                        st = free[s2]
                        if st < t:
                            st = t
                        end = st + w[ch]
                        free[s2] = end
                        seq += 1
                        push(heap, (end, seq, _TASK_DONE, j, ch))
                else:
                    st = link_free if link_free > t else t
                    dt = b * inv_mu
                    link_free = st + dt
                    link_busy += dt
                    link_bytes += b
                    job_bytes[j] += b
                    seq += 1
                    push(heap, (link_free, seq, _XFER_DONE, j, ch))
        elif code == _XFER_DONE:
            g = job_off[j] + k
            p = task_pending[g] - 1
            task_pending[g] = p
            if p == 0:
                s2 = task_server[g]
                st = free[s2]
                if st < t:
                    st = t
                end = st + work[jcls[j]][k]
                free[s2] = end
                seq += 1
                push(heap, (end, seq, _TASK_DONE, j, k))
        else:
            completion[j] = t
    if bar is not None:
        bar.close()
    return {
        "completion": completion,
        "bytes": job_bytes,
        "events": events,
        "tasks": tasks_done,
        "link_bytes": link_bytes,
        "link_busy": link_busy,
        "end": t,
    }


def _run_live(classes, servers, mu, nu, scheduler, arr_t, arr_c, progress):
    """Event loop for schemes that see live state: servers without buffers, a runnable pool."""
    nj = len(arr_t)
    times = arr_t.tolist()
    jcls = arr_c.tolist()
    completion = [math.nan] * nj
    job_bytes = [0.0] * nj
    inv_mu = 1.0 / mu
    inv_nu = 1.0 / nu

    free_servers = list(range(servers - 1, -1, -1))  # a stack: lowest id handed out first
    active: dict[int, LiveJob] = {}
    view = LiveView(now=0.0, servers=servers, free_servers=free_servers, active=active, classes=classes)
    ready = view.ready
    ready_order = view.ready_order
    # per-job count of unfinished parents, per local task
    pending: dict[int, list[int]] = {}
    link_free = 0.0
    link_bytes = 0.0
    link_busy = 0.0
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    seq = 0
    events = 0
    tasks_done = 0
    runnable_total = 0
    i = 0
    t = 0.0
    bar = _bar(progress, nj, scheduler.name)
    schedule = scheduler.schedule
    while True:
        if i < nj and (not heap or times[i] < heap[0][0]):
            t = times[i]
            j = i
            i += 1
            events += 1
            if bar is not None and not (i & 0x3FFF):
                bar.update(0x4000)
            cc = classes[jcls[j]]
            if cc.is_comm:
                b = cc.transfer_bytes
                st = link_free if link_free > t else t
                dt = b * inv_mu
                link_free = st + dt
                link_busy += dt
                link_bytes += b
                job_bytes[j] = b
                seq += 1
                push(heap, (link_free, seq, _COMM_DONE, j, 0))
                continue
            job = LiveJob(
                job_id=j, cls=cc, arrival=t, runnable=list(cc.roots), task_server=[-1] * cc.n, unassigned=cc.n
            )
            active[j] = job
            if cc.roots:
                ready[j] = job
                ready_order.append(j)  # the newest job: stays sorted
            pending[j] = list(cc.n_parents)
            runnable_total += len(cc.roots)
            view.unfinished += 1
        else:
            if not heap:
                break
            t, _, code, j, k = pop(heap)
            events += 1
            if code == _COMM_DONE:
                completion[j] = t
                continue
            # _TASK_DONE: release the server, unlock children
            tasks_done += 1
            job = active[j]
            free_servers.append(job.task_server[k])
            job.running -= 1
            job.finished += 1
            if job.finished == job.cls.n:
                completion[j] = t
                del active[j]
                del pending[j]
            else:
                pj = pending[j]
                for ch, _b in job.cls.children[k]:
                    pj[ch] -= 1
                    if pj[ch] == 0:
                        if not job.runnable:
                            ready[j] = job
                            insort(ready_order, j)
                        job.runnable.append(ch)
                        runnable_total += 1
        if free_servers and runnable_total:
            view.now = t
            view.link_backlog_s = max(0.0, link_free - t)
            for jid, task, srv in schedule(view):
                job = active.get(jid)
                if job is None or task not in job.runnable:
                    raise RuntimeError(
                        f"{scheduler.name}: assigned task {task} of job {jid}, which is not runnable"
                    )
                if free_servers and free_servers[-1] == srv:
                    free_servers.pop()
                else:
                    try:
                        free_servers.remove(srv)
                    except ValueError:
                        raise RuntimeError(
                            f"{scheduler.name}: assigned server {srv}, which is not free"
                        ) from None
                job.runnable.remove(task)
                if not job.runnable:
                    del ready[jid]
                    del ready_order[bisect_left(ready_order, jid)]
                runnable_total -= 1
                job.task_server[task] = srv
                job.running += 1
                job.unassigned -= 1
                if job.unassigned == 0:
                    view.unfinished -= 1
                t_in = t
                for p, b in job.cls.parents[task]:
                    if job.task_server[p] != srv and b > 0.0:
                        st = link_free if link_free > t else t
                        dt = b * inv_mu
                        link_free = st + dt
                        link_busy += dt
                        link_bytes += b
                        job_bytes[jid] += b
                        t_in = link_free  # FIFO: the last transfer enqueued arrives last
                seq += 1
                push(heap, (t_in + job.cls.work[task] * inv_nu, seq, _TASK_DONE, jid, task))
    if bar is not None:
        bar.close()
    return {
        "completion": completion,
        "bytes": job_bytes,
        "events": events,
        "tasks": tasks_done,
        "link_bytes": link_bytes,
        "link_busy": link_busy,
        "end": t,
    }


def _bar(progress: bool, total: int, name: str):
    if not progress:
        return None
    from schedlab.progress import bar

    return bar(total=total, desc=f"simulate {name}", unit="job", leave=False)
