"""Decima as a live scheme of the Nona simulator (:func:`schedlab.nona.sim.simulate`).

:class:`DecimaScheduler` implements the simulator's live interface (``live = True``,
``prepare(classes, servers)``, ``schedule(view) -> [(job_id, task, server)]``). Each call is
one Decima *scheduling round* (spark-sched-sim's ``step`` loop): while a server is free and
a task is runnable, build the observation (:mod:`.features`), run the policy (stage head,
then executor head), and give the chosen task a server.

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

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from schedlab.nona.decima.features import commit_caps, features_from_arrays
from schedlab.nona.decima.policy import DecimaObservation, DecimaPolicy, DecimaWeights, MessagePassing, load_weights


class DecimaScheduler:
    """Spark-sched-sim's public TPC-H-trained Decima deciding which runnable task gets a server.

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
        self.policy = DecimaPolicy(weights if weights is not None else load_weights(), message_passing, greedy)
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
                    "assigning servers, or prepare() not called?")
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
        edges_all = edges_all[np.lexsort((edges_all[:, 1], edges_all[:, 0]))]  # parent-sorted, as built by features
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
                obs = DecimaObservation(x=x, edges=edges_all, job_ptr=ptr, stage_mask=runnable_all,
                                        exec_caps=caps, num_executors=E)
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
