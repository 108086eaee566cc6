"""Decima as a live scheme of the Nona simulator (:func:`schedlab.nona.sim.simulate`).

:class:`DecimaScheduler` implements the simulator's live interface (``live = True``,
``prepare(classes, servers)``, ``schedule(view) -> [(job_id, task, server)]``). Each call is
one Decima *scheduling round* (spark-sched-sim's ``step`` loop): while a server is free and
a task is runnable, evaluate the policy on the current observation (stage head, then
executor head) and give the chosen task a server. :class:`ReferenceDecimaScheduler` does it
literally (builds the observation with :mod:`.features`, runs :func:`.policy.forward`);
:class:`DecimaScheduler` makes the same decisions incrementally (per-job state, cached
per-job shares of the network, :mod:`.engine`), 8-10x faster on short runs and more as
the cache warms (``benchmarks/bench_decima.py``). Both follow the choices below.

Choices (documented, ours):

* **Which tasks are finished.** The simulator's :class:`~schedlab.nona.sim.LiveJob` says
  which tasks have a server, not which of those finished. Only this scheduler assigns
  servers, so it records the last task given to each server: a server that is busy is held
  by that task (running); every other assigned task has finished. Exact, and checked
  against ``LiveJob.running`` at every call (``RuntimeError`` on a mismatch).
* **Source job.** The job whose tasks freed servers since the previous call, if exactly one
  such job is still active; otherwise the general pool (spark-sched-sim runs one round per
  source; the simulator batches them).
* **Executor count.** A Nona stage has one task, so any parallelism ``>= 1`` gives the
  chosen task exactly one server; the executor head is still evaluated (it is part of
  Decima's action and its log-probability) and its choices are counted in ``stats``.
  Unused commitments are not held back: the paper's Nona simulator has no reservations.
* **Which server.** The most recently freed one (the end of ``view.free_servers``, as the
  simulator's other live scheme). Decima never chooses servers and is network-blind, so
  there is no data-locality search.
* **Task durations.** ``work_s / compute_rate`` in ms; pass the cluster's ``compute_rate``
  (the live view does not carry it).
* **Randomness.** Actions are sampled (as spark-sched-sim evaluates) from the Generator
  given as ``rng`` (an int seeds a fresh ``numpy.random.default_rng`` at every
  ``prepare``, so repeated runs are identical); ``greedy=True`` takes the argmax instead.

Examples
--------
>>> import networkx as nx
>>> from types import SimpleNamespace as NS
>>> from schedlab.nona.sim import simulate
>>> g = nx.DiGraph(); g.add_edge("a", "b", bytes=1e3); g.add_edge("a", "c", bytes=1e3)
>>> nx.set_node_attributes(g, {"a": 0.002, "b": 0.003, "c": 0.001}, "work_s")
>>> job = NS(name="toy", kind="inference", dag=g, arrival_rate=50.0)
>>> cluster = NS(servers=4, bandwidth_gbps=10.0, compute_rate=1.0, link_bytes_per_s=1.25e9)
>>> res = simulate([job], cluster, DecimaScheduler(rng=0), duration=2.0, rng=np.random.default_rng(0))
>>> bool((res.jobs.jct >= 0.005 - 1e-12).all())  # critical path a -> b
True
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from schedlab.nona.decima.features import NUM_TASKS_SCALE as F_NUM_TASKS_SCALE
from schedlab.nona.decima.features import WORK_SCALE as F_WORK_SCALE
from schedlab.nona.decima.features import commit_caps, features_from_arrays
from schedlab.nona.decima.policy import (
    EMBED_DIM,
    DecimaObservation,
    DecimaPolicy,
    DecimaWeights,
    MessagePassing,
    load_weights,
)


class ReferenceDecimaScheduler:
    """The first (slow) plug-in: rebuilds the whole observation and runs :func:`.policy.forward`
    at every decision. Kept as the reference the fast :class:`DecimaScheduler` is tested and
    benchmarked against (same decisions, same random draws).

    Parameters
    ----------
    rng : numpy Generator or int
        Source of the policy's sampling (an int is a seed, re-applied at each ``prepare``).
    greedy : bool
        Take the most likely action instead of sampling.
    compute_rate : float
        The cluster's ``nu``; task durations shown to Decima are ``work_s / nu``.
    weights : DecimaWeights, optional
        Default: the verified ``decima/model_state_dict.npz``.
    message_passing : {"spark-sched-sim", "exact"}
        See :mod:`schedlab.nona.decima.policy`.
    """

    name = "decima"
    live = True

    def __init__(
        self,
        rng: np.random.Generator | int = 0,
        *,
        greedy: bool = False,
        compute_rate: float = 1.0,
        weights: DecimaWeights | None = None,
        message_passing: MessagePassing = "spark-sched-sim",
    ) -> None:
        if not (compute_rate > 0):
            raise ValueError(f"DecimaScheduler: compute_rate must be > 0, got {compute_rate}")
        if not isinstance(rng, (np.random.Generator, int, np.integer)):
            raise TypeError("DecimaScheduler: rng must be a numpy Generator or an int seed")
        self._rng_arg = rng
        self.compute_rate = float(compute_rate)
        self.policy = DecimaPolicy(
            weights if weights is not None else load_weights(), message_passing, greedy
        )
        self._blas = ThreadpoolController()

    # ---------------------------------------------------------------- simulator API
    def prepare(self, classes: Sequence[Any], servers: int) -> None:
        self.servers = int(servers)
        arg = self._rng_arg
        self.rng = arg if isinstance(arg, np.random.Generator) else np.random.default_rng(int(arg))
        self._edges = []
        self._duration = []
        for c in classes:
            e = [(u, v) for u in range(c.n) for v, _b in c.children[u]] if not c.is_comm else []
            self._edges.append(np.array(e, dtype=np.int64).reshape(-1, 2))
            self._duration.append(np.asarray(c.work, dtype=np.float64) / self.compute_rate * 1000.0)
        self._holder: dict[int, tuple[int, int]] = {}
        self.last_observation = self.last_action = None
        self.stats = {"decisions": 0, "rounds": 0, "policy_s": 0.0, "num_exec_sum": 0, "max_nodes": 0}

    def schedule(self, view: Any) -> list[tuple[int, int, int]]:
        # Decima's matrices are tiny (16-64 wide): multi-threaded BLAS only spins threads, and
        # on 2 shared cores the forward pass ran 3-10x slower than single-threaded (measured).
        with self._blas.limit(limits=1, user_api="blas"):
            return self._schedule(view)

    def _schedule(self, view: Any) -> list[tuple[int, int, int]]:
        free = list(view.free_servers)
        free_set = set(free)
        running: dict[int, set[int]] = {}
        freed_jobs = set()
        for srv in [s for s in self._holder if s in free_set]:
            freed_jobs.add(self._holder.pop(srv)[0])
        for jid, task in self._holder.values():
            running.setdefault(jid, set()).add(task)
        active = list(view.active.values())
        for job in active:
            if len(running.get(job.job_id, ())) != job.running:
                raise RuntimeError(
                    f"DecimaScheduler: job {job.job_id} runs {job.running} tasks but this scheduler "
                    f"assigned {len(running.get(job.job_id, ()))} busy servers to it; was another scheme "
                    "assigning servers, or prepare() not called?"
                )
        ids = [job.job_id for job in active]
        still = [j for j in freed_jobs if j in view.active]
        source = ids.index(still[0]) if len(freed_jobs) == 1 and still else None

        # one pass over the active jobs: their unfinished tasks become the nodes of this round.
        # Within the round the node set and edges stay fixed (an assigned task stays, as a
        # running node), so the job graphs (and their generations) are built once per call.
        tasks, waiting, runnable, duration, edges, sizes = [], [], [], [], [], []
        base = 0
        for job in active:
            ts = np.asarray(job.task_server)
            done = ts >= 0
            run = running.get(job.job_id)
            if run:
                done[list(run)] = False
            keep = np.flatnonzero(~done)
            local = np.full(ts.size, -1, dtype=np.int64)
            local[keep] = np.arange(keep.size) + base
            e = self._edges[job.cls.index]
            if e.size:
                g = local[e]
                edges.append(g[(g[:, 0] >= 0) & (g[:, 1] >= 0)])
            r = np.zeros(ts.size, dtype=bool)
            r[job.runnable] = True
            tasks.append(keep)
            waiting.append(ts[keep] < 0)
            runnable.append(r[keep])
            duration.append(self._duration[job.cls.index][keep])
            sizes.append(keep.size)
            base += keep.size
        tasks_all = np.concatenate(tasks)
        waiting_all = np.concatenate(waiting)
        runnable_all = np.concatenate(runnable)
        duration_all = np.concatenate(duration)
        sizes_arr = np.array(sizes)
        ptr = np.concatenate([[0], np.cumsum(sizes_arr)])
        edges_all = np.concatenate(edges) if edges else np.zeros((0, 2), dtype=np.int64)
        edges_all = edges_all[
            np.lexsort((edges_all[:, 1], edges_all[:, 0]))
        ]  # parent-sorted, as built by features
        supply = np.array([job.running for job in active], dtype=np.int64)
        E = self.servers
        obs = None
        out: list[tuple[int, int, int]] = []
        self.stats["rounds"] += 1
        while free and runnable_all.any():
            t0 = time.perf_counter()
            x = features_from_arrays(sizes_arr, supply, waiting_all, duration_all, E, len(free), source)
            caps = commit_caps(supply, len(free), E, source)
            if obs is None:
                obs = DecimaObservation(
                    x=x,
                    edges=edges_all,
                    job_ptr=ptr,
                    stage_mask=runnable_all,
                    exec_caps=caps,
                    num_executors=E,
                )
            else:
                obs = obs.with_state(x, runnable_all, caps)
            act = self.policy.act(obs, self.rng)
            self.last_observation, self.last_action = obs, act  # for inspection and tests
            self.stats["policy_s"] += time.perf_counter() - t0
            self.stats["decisions"] += 1
            self.stats["num_exec_sum"] += act.num_executors
            self.stats["max_nodes"] = max(self.stats["max_nodes"], obs.x.shape[0])
            i, node = act.job, act.node
            task = int(tasks_all[node])
            srv = free.pop()
            out.append((active[i].job_id, task, srv))
            self._holder[srv] = (active[i].job_id, task)
            supply[i] += 1
            waiting_all = waiting_all.copy()
            runnable_all = runnable_all.copy()
            waiting_all[node] = False
            runnable_all[node] = False
        return out


# ------------------------------------------------------------------------------ fast
class _Struct:
    """A job's remaining graph and task states as Decima sees them (shared by equal jobs).

    Identified by ``(class, finished bitmask, running bitmask)``: the node set (unfinished
    tasks), edges, waiting/runnable flags, durations and executor supply all follow from it.
    """

    __slots__ = ("id", "key", "tasks", "plan", "base", "rows", "row_tasks", "supply", "has_edges", "n", "cls")

    def __init__(self, sid, key, cls, tasks, plan, base, rows, supply):
        self.id = sid
        self.key = key  # (class, finished mask, running mask): equal in every run
        self.cls = cls
        self.tasks = tasks  # (n,) the job's task ids of the nodes, increasing
        self.plan = plan  # JobPlan of the remaining graph
        self.base = base  # (n, 2) features 3 and 4 (remaining tasks / 200, work / 1e5)
        self.rows = rows  # local indices of the schedulable nodes
        self.row_tasks = tasks[rows].tolist()
        self.supply = supply  # running tasks = executors held (or committed this round)
        self.has_edges = plan.num_edges > 0
        self.n = int(tasks.size)


class DecimaScheduler:
    """Spark-sched-sim's public TPC-H-trained Decima deciding which runnable task gets a server.

    Same decisions as :class:`ReferenceDecimaScheduler` (same features, network, sampling
    and random draws; tested equal), computed incrementally (:mod:`.engine`):

    * each job's state is ``(class, finished tasks, running tasks)`` as two bitmasks, updated
      from the servers this scheduler assigned (no per-call rebuild of the observation);
    * the per-state graph data (remaining graph, message-passing plan, features 3-4,
      schedulable nodes) is built once per distinct state and shared by all jobs in it;
    * a job's share of the forward pass (:class:`.engine.JobEmbedding`) is cached under
      ``(state, executor cap, source flag, any edge in the observation)``: its exact
      inputs. A decision evaluates only the jobs whose key is new (batched in one
      :meth:`.engine.Engine.embed`), sums the cached ``glob`` terms and runs the two heads'
      last layers. The cache is cleared when it holds ``cache_size`` entries.

    Parameters
    ----------
    rng : numpy Generator or int
        Source of the policy's sampling (an int is a seed, re-applied at each ``prepare``).
    greedy : bool
        Take the most likely action instead of sampling.
    compute_rate : float
        The cluster's ``nu``; task durations shown to Decima are ``work_s / nu``.
    weights : DecimaWeights, optional
        Default: the verified ``decima/model_state_dict.npz``.
    message_passing : {"spark-sched-sim", "exact"}
        See :mod:`schedlab.nona.decima.policy`.
    cache_size : int
        Most cached job embeddings kept (memory bound: ~1 kB each plus 0.5 kB per schedulable
        node); only speed depends on it.
    record : list, optional
        If given, one :class:`DecisionRecord` per decision is appended (for training).
    shared : dict, optional
        A dict several schedulers share (training runs many episodes of one workload): job
        states, plans and, while the weights are the same object, cached embeddings. Reset
        automatically when the workload, cluster size or variant differ.
    label : str
        The scheme's name in results.
    """

    live = True

    def __init__(
        self,
        rng: np.random.Generator | int = 0,
        *,
        greedy: bool = False,
        compute_rate: float = 1.0,
        weights: DecimaWeights | None = None,
        message_passing: MessagePassing = "spark-sched-sim",
        cache_size: int = 100_000,
        record: list | None = None,
        label: str = "decima",
        shared: dict | None = None,
    ) -> None:
        from schedlab.nona.decima.engine import Engine

        if not (compute_rate > 0):
            raise ValueError(f"DecimaScheduler: compute_rate must be > 0, got {compute_rate}")
        if not isinstance(rng, (np.random.Generator, int, np.integer)):
            raise TypeError("DecimaScheduler: rng must be a numpy Generator or an int seed")
        if cache_size < 1:
            raise ValueError(f"DecimaScheduler: cache_size must be >= 1, got {cache_size}")
        self.name = label
        self._rng_arg = rng
        self.greedy = bool(greedy)
        self.compute_rate = float(compute_rate)
        self.weights = weights if weights is not None else load_weights()
        self.message_passing = message_passing
        self.engine = Engine(self.weights, message_passing)
        self.cache_size = int(cache_size)
        self.record = record
        self.shared = shared
        self._blas = ThreadpoolController()

    # ---------------------------------------------------------------- simulator API
    def prepare(self, classes: Sequence[Any], servers: int) -> None:
        from schedlab.nona.decima.engine import job_plan

        self._job_plan = job_plan
        self.servers = int(servers)
        arg = self._rng_arg
        self.rng = arg if isinstance(arg, np.random.Generator) else np.random.default_rng(int(arg))
        self._cls = []
        for c in classes:
            e = [(u, v) for u in range(c.n) for v, _b in c.children[u]] if not c.is_comm else []
            pmask = [0] * c.n
            for u, v in e:
                pmask[v] |= 1 << u
            self._cls.append(
                (
                    np.array(e, dtype=np.int64).reshape(-1, 2),
                    pmask,
                    np.asarray(c.work, dtype=np.float64) / self.compute_rate * 1000.0,
                )
            )
        self._holder: dict[int, tuple[int, int]] = {}
        # one slot per active job: its state [class, finished mask, running mask], _Struct, cached
        # JobEmbedding, executor supply, the cap its embedding was made for (-1: stale), and its
        # glob term as a row of _G (free slots hold 0, so h_glob = _G.sum(0))
        self._slot_of: dict[int, int] = {}
        self._S_state, self._S_struct, self._S_entry, self._S_jid = [], [], [], []
        self._supply = np.zeros(0, dtype=np.int64)
        self._cap = np.zeros(0, dtype=np.int64)
        self._active = np.zeros(0, dtype=bool)
        self._G = np.zeros((0, EMBED_DIM))
        self._free_slots: list[int] = []
        self._edge_jobs = 0
        self._nodes = 0  # nodes of all active jobs (stats)
        self._nrows: list[int] = []  # schedulable nodes per slot
        self._top = 0  # slots >= _top were never used (h_glob sums _G[:_top])
        self._src_slot = -1
        self._any_edge = None
        self._last_id = -1
        sig = (
            self.servers,
            self.compute_rate,
            self.message_passing,
            tuple(
                (getattr(c, "name", i), c.n, tuple(map(tuple, e.tolist())), tuple(c.work))
                for i, (c, (e, _p, _d)) in enumerate(zip(classes, self._cls))
            ),
        )
        sh = self.shared
        if sh is None or sh.get("signature") != sig:
            sh = {"signature": sig, "plans": {}, "structs": {}, "struct_list": []}
            if self.shared is not None:
                self.shared.clear()
                self.shared.update(sh)
                sh = self.shared
        if sh.get("weights") is not self.weights:  # cached embeddings belong to one set of weights
            sh["weights"], sh["cache"] = self.weights, {}
        self._plans: dict = sh["plans"]  # (class, finished) -> JobPlan
        self._structs: dict = sh["structs"]  # (class, finished, running) -> _Struct
        self.structs: list[_Struct] = sh["struct_list"]  # by id (records refer to them)
        self._cache: dict = sh["cache"]
        self.stats = {
            "decisions": 0,
            "rounds": 0,
            "policy_s": 0.0,
            "num_exec_sum": 0,
            "max_nodes": 0,
            "embedded_jobs": 0,
            "cache_hits": 0,
            "stage_rows": 0,
        }

    def _struct(self, ci: int, fin: int, run: int) -> _Struct:
        key = (ci, fin, run)
        st = self._structs.get(key)
        if st is not None:
            return st
        edges, pmask, dur = self._cls[ci]
        n_all = dur.size
        keep = np.array([t for t in range(n_all) if not (fin >> t) & 1], dtype=np.int64)
        pk = (ci, fin)
        plan = self._plans.get(pk)
        if plan is None:
            local = np.full(n_all, -1, dtype=np.int64)
            local[keep] = np.arange(keep.size)
            if edges.size:
                g = local[edges]
                e = g[(g[:, 0] >= 0) & (g[:, 1] >= 0)]
                e = e[np.lexsort((e[:, 1], e[:, 0]))]
            else:
                e = edges
            plan = self._plans[pk] = self._job_plan(e, keep.size, self.message_passing)
        waiting = np.array([not (run >> t) & 1 for t in keep.tolist()], dtype=bool)
        rows = np.array(
            [i for i, t in enumerate(keep.tolist()) if waiting[i] and (pmask[t] & ~fin) == 0], dtype=np.int64
        )
        remaining = waiting.astype(np.float64)
        base = np.stack([remaining / F_NUM_TASKS_SCALE, remaining * dur[keep] / F_WORK_SCALE], axis=1)
        st = _Struct(len(self.structs), key, ci, keep, plan, base, rows, int(run).bit_count())
        self._structs[key] = st
        self.structs.append(st)
        return st

    def job_features(self, st: _Struct, cap: int, source: bool) -> np.ndarray:
        """The (n, 5) features of a job in state ``st`` with executor cap ``cap`` (as :mod:`.features`)."""
        E = self.servers
        x = np.empty((st.n, 5))
        x[:, 0] = cap / E
        x[:, 1] = 1.0 if source else -1.0
        x[:, 2] = st.supply / E
        x[:, 3:] = st.base
        return x

    def schedule(self, view: Any) -> list[tuple[int, int, int]]:
        with self._blas.limit(limits=1, user_api="blas"):  # tiny matrices: threads only cost
            return self._schedule(view)

    # ------------------------------------------------------------ per-job slots
    def _grow(self) -> None:
        n = max(64, 2 * self._supply.size)
        old = self._supply.size
        for name, fill in (("_supply", 0), ("_cap", -1), ("_active", False)):
            arr = getattr(self, name)
            new = np.full(n, fill, dtype=arr.dtype)
            new[:old] = arr
            setattr(self, name, new)
        G = np.zeros((n, self._G.shape[1]))
        G[:old] = self._G
        self._G = G
        self._S_struct += [None] * (n - old)
        self._S_jid += [None] * (n - old)
        self._S_state += [None] * (n - old)
        self._S_entry += [None] * (n - old)
        for i in range(old, n):
            heapq.heappush(self._free_slots, i)
        self._nrows += [0] * (n - old)

    def _set_struct(self, slot: int) -> None:
        """Re-derive a slot's state after its bitmasks changed; its cached embedding is stale."""
        old = self._S_struct[slot]
        st = self._struct(*self._S_state[slot])
        self._S_struct[slot] = st
        self._edge_jobs += int(st.has_edges) - (int(old.has_edges) if old is not None else 0)
        self._nodes += st.n - (old.n if old is not None else 0)
        self._nrows[slot] = st.rows.size
        self._top = max(self._top, slot + 1)
        self._supply[slot] = st.supply
        self._cap[slot] = -1

    def _release(self, slot: int) -> None:
        st = self._S_struct[slot]
        if st is not None:
            self._edge_jobs -= int(st.has_edges)
            self._nodes -= st.n
        self._nrows[slot] = 0
        self._S_struct[slot] = self._S_state[slot] = self._S_entry[slot] = None
        self._G[slot] = 0.0  # an empty slot adds exactly 0 to h_glob
        self._active[slot] = False
        self._cap[slot] = -1
        heapq.heappush(self._free_slots, slot)

    def _schedule(self, view: Any) -> list[tuple[int, int, int]]:
        t_start = time.perf_counter()
        holder, active, slot_of = self._holder, view.active, self._slot_of
        free = list(view.free_servers)
        freed_jobs = set()
        if holder:
            free_set = set(free)
            for srv in [s for s in holder if s in free_set]:
                jid, task = holder.pop(srv)
                slot = slot_of.get(jid)
                if slot is None:  # a finished job whose other tasks ended since the last call: released
                    continue
                state = self._S_state[slot]
                bit = 1 << task
                state[2] &= ~bit
                state[1] |= bit
                freed_jobs.add(jid)
                if jid not in active:  # its last task finished (it holds no other server)
                    del slot_of[jid]
                    self._release(slot)
                else:
                    self._set_struct(slot)
        touched = list(freed_jobs)
        for jid in reversed(active):  # new jobs are the newest ids (arrival order)
            if jid <= self._last_id:
                break
            touched.append(jid)
            if not self._free_slots:
                self._grow()
            slot = heapq.heappop(self._free_slots)  # lowest free slot: occupied slots stay packed
            slot_of[jid] = slot
            self._S_state[slot] = [active[jid].cls.index, 0, 0]
            self._S_jid[slot] = jid
            self._active[slot] = True
            self._set_struct(slot)
        if active:
            self._last_id = max(self._last_id, next(reversed(active)))
        # consistency (cheap: the jobs that changed since the last call): every running task was
        # assigned by this scheduler and is still held by it
        for jid in touched:
            j = active.get(jid)
            if j is not None and self._S_state[slot_of[jid]][2].bit_count() != j.running:
                raise RuntimeError(
                    f"DecimaScheduler: job {jid} runs {j.running} tasks but this scheduler assigned "
                    f"{self._S_state[slot_of[jid]][2].bit_count()} busy servers to it; was another scheme "
                    "assigning servers, or prepare() not called?"
                )
        if len(slot_of) != len(active):
            raise RuntimeError(
                "DecimaScheduler: the active jobs differ from the ones it tracked; prepare() not called?"
            )
        still = [j for j in freed_jobs if j in active]
        src = slot_of[still[0]] if len(freed_jobs) == 1 and still else -1
        if src != self._src_slot:  # both the old and the new source job see a new feature 1
            if self._src_slot >= 0:
                self._cap[self._src_slot] = -1
            if src >= 0:
                self._cap[src] = -1
            self._src_slot = src
        any_edge = self._edge_jobs > 0
        if any_edge != self._any_edge:
            self._cap[:] = -1
            self._any_edge = any_edge
        ready = list(map(slot_of.__getitem__, view.ready_order))
        S_struct, S_entry, nrows = self._S_struct, self._S_entry, self._nrows
        n_runnable = sum(map(nrows.__getitem__, ready))
        self.stats["rounds"] += 1
        E = self.servers
        eng, cache, rng = self.engine, self._cache, self.rng
        out: list[tuple[int, int, int]] = []
        order = None
        while free and n_runnable:
            committable = len(free)
            caps = np.minimum(np.maximum(E - self._supply, 0), committable)
            if src >= 0:
                caps[src] = committable
            changed = np.flatnonzero(self._active & (caps != self._cap)).tolist()
            if changed:
                pending, miss = [], {}
                for slot in changed:
                    c = int(caps[slot])
                    key = (S_struct[slot].id, c, slot == src, any_edge)
                    e = cache.get(key)
                    if e is None:
                        pending.append((slot, key))
                        miss.setdefault(key, (slot, c))  # two jobs in one state: embed once
                    else:
                        S_entry[slot] = e
                        self._G[slot] = e.g
                    self._cap[slot] = c
                if miss:
                    todo = list(miss.items())
                    new = eng.embed(
                        [self.job_features(S_struct[sl], c, sl == src) for _k, (sl, c) in todo],
                        [S_struct[sl].plan for _k, (sl, _c) in todo],
                        [S_struct[sl].rows for _k, (sl, _c) in todo],
                        any_edge,
                    )
                    if len(cache) + len(new) > self.cache_size:
                        cache.clear()
                    for (key, _v), e in zip(todo, new):
                        e.h = None  # node embeddings are not needed after embed (memory: the cache is big)
                        cache[key] = e
                    for slot, key in pending:
                        e = cache[key]
                        S_entry[slot] = e
                        self._G[slot] = e.g
                    self.stats["embedded_jobs"] += len(new)
                self.stats["cache_hits"] += len(changed) - len(pending)
            h_glob = self._G[: self._top].sum(axis=0)
            pre = [S_entry[s].stage_pre for s in ready]
            scores = eng.stage_logits(pre[0] if len(pre) == 1 else np.concatenate(pre), h_glob)
            self.stats["stage_rows"] += scores.size
            p = np.exp(scores - scores.max())
            p /= p.sum()
            if self.greedy:
                pick = int(np.argmax(p))
            else:  # exactly Generator.choice(p.size, p=p): one uniform against the normalised cdf
                cdf = np.cumsum(p)
                cdf /= cdf[-1]
                pick = int(cdf.searchsorted(rng.random(), side="right"))
            if len(ready) == 1:
                ri, k = 0, pick
            else:
                cum = np.cumsum(np.fromiter(map(nrows.__getitem__, ready), dtype=np.int64, count=len(ready)))
                ri = int(cum.searchsorted(pick, side="right"))
                k = pick - (int(cum[ri - 1]) if ri else 0)
            slot = ready[ri]
            cap = int(caps[slot])
            if cap < 1:
                raise ValueError(f"Decima chose a job whose executor cap is 0 (slot {slot})")
            ex = eng.exec_logits(S_entry[slot].exec_pre, h_glob, cap, E)
            q = np.exp(ex - ex.max())
            q /= q.sum()
            if self.greedy:
                kx = int(np.argmax(q))
            else:
                cdf = np.cumsum(q)
                cdf /= cdf[-1]
                kx = int(cdf.searchsorted(rng.random(), side="right"))
            if self.record is not None:
                if order is None:
                    order = [slot_of[j] for j in active]
                self.record.append(
                    DecisionRecord(
                        time=float(view.now),
                        jobs=tuple((S_struct[s].id, int(caps[s]), s == src) for s in order),
                        any_edge=any_edge,
                        stage_pick=pick,
                        job_pos=order.index(slot),
                        exec_pick=kx,
                        num_executors=E,
                        log_prob=float(np.log(p[pick]) + np.log(q[kx])),
                    )
                )
            self.stats["decisions"] += 1
            self.stats["num_exec_sum"] += kx + 1
            task = S_struct[slot].row_tasks[k]
            jid = self._S_jid[slot]
            srv = free.pop()
            out.append((jid, task, srv))
            holder[srv] = (jid, task)
            self._S_state[slot][2] |= 1 << task
            self._set_struct(slot)
            if not S_struct[slot].rows.size:
                del ready[ri]
            n_runnable -= 1
        self.stats["max_nodes"] = max(self.stats["max_nodes"], self._nodes)
        self.stats["policy_s"] += time.perf_counter() - t_start
        return out


@dataclass(frozen=True)
class DecisionRecord:
    """One decision of :class:`DecimaScheduler` (``record=[...]``), enough to recompute its log-prob.

    ``jobs``: per active job (arrival order) ``(state id, executor cap, is source)``; the state
    ids index ``DecimaScheduler.structs``. ``stage_pick`` indexes the schedulable nodes in job
    order then node order; ``exec_pick`` is ``k`` (``k + 1`` executors).
    """

    time: float
    jobs: tuple
    any_edge: bool
    stage_pick: int
    job_pos: int
    exec_pick: int
    num_executors: int
    log_prob: float
