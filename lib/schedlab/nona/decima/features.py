"""Nona's world seen through Decima's eyes: contracted DNN DAGs on servers -> Decima observation.

Mapping (every choice here is ours; the Nona paper only says Decima is network-oblivious):

* **job** = one active Nona job (an inference query or a background compute job; background
  communication jobs need no server and are invisible to Decima, as to any compute
  scheduler).
* **stage** = one task of the job's *contracted* DAG. A Decima stage has many identical
  tasks; a Nona stage has exactly one, so ``remaining tasks`` is 1 (not yet given a server)
  or 0 (running). Finished tasks leave the observation, as completed stages leave
  spark-sched-sim's (it lists a job's *active* stages and the edges among them).
* **executor** = one server; ``E`` = number of servers (80 in Nona, 50 in training: out of
  distribution, see ``../shared/data/decima/README.md``).
* **schedulable** = not yet assigned and every parent finished (spark-sched-sim: a stage
  with remaining tasks whose parents are complete).
* **executor supply** of a job = servers running its tasks plus servers committed to it in
  the current scheduling round.
* **committable executors** = free servers not yet handed out in the current round.
* **source job** = the job whose task just freed the server(s) of this round, if it is still
  active; otherwise the general pool (``None``).
* **most recent task duration** (ms) = the task's compute time on this cluster,
  ``work_s / compute_rate * 1000``. spark-sched-sim starts from a rough estimate and then
  uses the last observed task duration of the stage; a Nona stage runs one task, and task
  times are deterministic, so the estimate is the true time. **Network-blind**: transfer
  time and bytes are never used, nor the link's state.

The 5 node features, in spark-sched-sim's order (``wrappers/neural.py`` at ``bb3e89d9``):

0. ``commit_cap[job] / E``, ``commit_cap = min(max(E - supply, 0), committable)``, except
   the source job, whose cap is ``committable``;
1. ``+1`` if the node's job is the source job, else ``-1``;
2. ``supply[job] / E``;
3. ``remaining_tasks / 200``;
4. ``remaining_tasks * duration_ms / 1e5``.

Examples
--------
>>> import numpy as np
>>> job = JobState(edges=np.array([[0, 1]]), waiting=np.array([True, True]),
...                runnable=np.array([True, False]), duration_ms=np.array([2.0, 3.0]), supply=1)
>>> state = ClusterState(jobs=(job,), num_executors=4, num_committable=2, source_job=None)
>>> node_features(state).tolist()
[[0.5, -1.0, 0.25, 0.005, 2e-05], [0.5, -1.0, 0.25, 0.005, 3e-05]]
>>> to_observation(state).exec_caps.tolist()
[2]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx
import numpy as np

from schedlab.nona.decima.policy import DecimaObservation

NUM_TASKS_SCALE = 200.0  # spark-sched-sim NeuralObsWrapper(num_tasks_scale=200)
WORK_SCALE = 1e5  # spark-sched-sim NeuralObsWrapper(work_scale=1e5), work in ms


@dataclass(frozen=True)
class JobState:
    """One active job as Decima sees it: only its unfinished tasks.

    Parameters
    ----------
    edges : (m, 2) int
        ``parent -> child`` among the unfinished tasks, in local indices ``0 .. n-1``.
    waiting : (n,) bool
        True: not yet given a server (remaining tasks 1); False: running (0).
    runnable : (n,) bool
        Waiting and every parent finished (Decima's schedulable stages).
    duration_ms : (n,) float
        Each task's duration estimate in milliseconds (compute only).
    supply : int
        Servers running or committed to the job.
    tasks : tuple
        The job's own ids of the n tasks (to map Decima's choice back); optional.
    """

    edges: np.ndarray
    waiting: np.ndarray
    runnable: np.ndarray
    duration_ms: np.ndarray
    supply: int
    tasks: tuple = ()

    def __post_init__(self) -> None:
        waiting = np.asarray(self.waiting, dtype=bool)
        n = waiting.size
        runnable = np.asarray(self.runnable, dtype=bool)
        dur = np.asarray(self.duration_ms, dtype=np.float64)
        edges = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        if n == 0:
            raise ValueError("JobState: an active job has at least one unfinished task")
        if runnable.shape != (n,) or dur.shape != (n,):
            raise ValueError(f"JobState: waiting, runnable and duration_ms must all have length {n}")
        if np.any(runnable & ~waiting):
            raise ValueError("JobState.runnable: a running task cannot be runnable")
        if not (np.isfinite(dur).all() and (dur >= 0).all()):
            raise ValueError("JobState.duration_ms: expected finite values >= 0")
        if edges.size and (edges.min() < 0 or edges.max() >= n):
            raise ValueError(f"JobState.edges: local index outside [0, {n})")
        if edges.size and np.any(runnable[edges[:, 1]]):
            raise ValueError("JobState: a runnable task has an unfinished parent")
        if self.supply < 0:
            raise ValueError(f"JobState.supply: expected >= 0, got {self.supply}")
        if self.tasks and len(self.tasks) != n:
            raise ValueError(f"JobState.tasks: expected {n} ids, got {len(self.tasks)}")
        for name, value in (
            ("edges", edges),
            ("waiting", waiting),
            ("runnable", runnable),
            ("duration_ms", dur),
        ):
            object.__setattr__(self, name, value)

    @property
    def num_nodes(self) -> int:
        return self.waiting.size


@dataclass(frozen=True)
class ClusterState:
    """All active jobs (in arrival order) plus the scheduling round's executor bookkeeping."""

    jobs: tuple[JobState, ...]
    num_executors: int
    num_committable: int
    source_job: int | None = None

    def __post_init__(self) -> None:
        if not self.jobs:
            raise ValueError("ClusterState: Decima needs at least one active job")
        if not (0 <= self.num_committable <= self.num_executors):
            raise ValueError(
                f"ClusterState.num_committable: expected 0..{self.num_executors}, got {self.num_committable}"
            )
        if self.source_job is not None and not (0 <= self.source_job < len(self.jobs)):
            raise ValueError(
                f"ClusterState.source_job: expected None or 0..{len(self.jobs) - 1}, got {self.source_job}"
            )


def commit_caps(
    supply: np.ndarray, num_committable: int, num_executors: int, source_job: int | None
) -> np.ndarray:
    """How many executors each job may receive this round (spark-sched-sim's rule).

    >>> commit_caps(np.array([0, 3, 5]), 2, 4, source_job=2).tolist()
    [2, 1, 2]
    """
    caps = np.minimum(np.maximum(num_executors - np.asarray(supply, dtype=np.int64), 0), num_committable)
    if source_job is not None:
        caps[source_job] = num_committable
    return caps


def features_from_arrays(
    sizes: np.ndarray,
    supply: np.ndarray,
    waiting: np.ndarray,
    duration_ms: np.ndarray,
    num_executors: int,
    num_committable: int,
    source_job: int | None,
) -> np.ndarray:
    """The (N, 5) features from per-job ``sizes``/``supply`` and per-node ``waiting``/``duration_ms``.

    >>> features_from_arrays(np.array([1]), np.array([0]), np.array([True]), np.array([5.0]), 2, 1, 0).tolist()
    [[0.5, 1.0, 0.0, 0.005, 5e-05]]
    """
    E = num_executors
    caps = commit_caps(supply, num_committable, E, source_job)
    src = np.full(len(sizes), -1.0)
    if source_job is not None:
        src[source_job] = 1.0
    remaining = np.asarray(waiting, dtype=np.float64)
    return np.stack(
        [
            np.repeat(caps / E, sizes),
            np.repeat(src, sizes),
            np.repeat(np.asarray(supply) / E, sizes),
            remaining / NUM_TASKS_SCALE,
            remaining * np.asarray(duration_ms, dtype=np.float64) / WORK_SCALE,
        ],
        axis=1,
    )


def node_features(state: ClusterState) -> np.ndarray:
    """The (N, 5) feature matrix, nodes of job 0 first (see the module docstring)."""
    return features_from_arrays(
        np.array([j.num_nodes for j in state.jobs]),
        np.array([j.supply for j in state.jobs]),
        np.concatenate([j.waiting for j in state.jobs]),
        np.concatenate([j.duration_ms for j in state.jobs]),
        state.num_executors,
        state.num_committable,
        state.source_job,
    )


def to_observation(state: ClusterState) -> DecimaObservation:
    """The :class:`DecimaObservation` of a cluster state (edges offset per job, sorted)."""
    sizes = np.array([j.num_nodes for j in state.jobs])
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    edges = [j.edges + ptr[i] for i, j in enumerate(state.jobs) if j.edges.size]
    edges = np.concatenate(edges) if edges else np.zeros((0, 2), dtype=np.int64)
    # sorted by parent: spark-sched-sim's SparseTensor(is_sorted=True) assumes this order
    edges = edges[np.lexsort((edges[:, 1], edges[:, 0]))]
    supply = np.array([j.supply for j in state.jobs])
    return DecimaObservation(
        x=node_features(state),
        edges=edges,
        job_ptr=ptr,
        stage_mask=np.concatenate([j.runnable for j in state.jobs]),
        exec_caps=commit_caps(supply, state.num_committable, state.num_executors, state.source_job),
        num_executors=state.num_executors,
    )


def job_state(
    dag: nx.DiGraph,
    finished: Iterable,
    running: Iterable,
    *,
    compute_rate: float = 1.0,
    supply: int | None = None,
    order: list | None = None,
) -> JobState:
    """A :class:`JobState` from a contracted Nona DAG (node attr ``work_s``) and task sets.

    ``supply`` defaults to the number of running tasks; ``order`` fixes the node order
    (default: the graph's node order); edge ``bytes`` are ignored (network-blind).

    >>> g = nx.DiGraph([("a", "b"), ("b", "c")])
    >>> nx.set_node_attributes(g, {"a": 0.002, "b": 0.004, "c": 0.001}, "work_s")
    >>> s = job_state(g, finished={"a"}, running={"b"})
    >>> s.tasks, s.waiting.tolist(), s.runnable.tolist(), s.duration_ms.tolist(), s.supply
    (('b', 'c'), [False, True], [False, False], [4.0, 1.0], 1)
    """
    finished, running = set(finished), set(running)
    if finished & running:
        raise ValueError(
            f"job_state: tasks {sorted(map(str, finished & running))} are both finished and running"
        )
    nodes = [v for v in (order if order is not None else dag.nodes) if v not in finished]
    index = {v: i for i, v in enumerate(nodes)}
    edges = np.array(
        [(index[u], index[v]) for u, v in dag.edges if u in index and v in index], dtype=np.int64
    )
    waiting = np.array([v not in running for v in nodes])
    runnable = np.array([v not in running and all(p in finished for p in dag.predecessors(v)) for v in nodes])
    for v in nodes:
        if v in running and not all(p in finished for p in dag.predecessors(v)):
            raise ValueError(f"job_state: task {v!r} runs before all its parents finished")
    duration = np.array([float(dag.nodes[v]["work_s"]) / compute_rate * 1000.0 for v in nodes])
    return JobState(
        edges=edges.reshape(-1, 2),
        waiting=waiting,
        runnable=runnable,
        duration_ms=duration,
        supply=len(running) if supply is None else supply,
        tasks=tuple(nodes),
    )
