"""Decima's policy network in NumPy, matching spark-sched-sim's public state dict exactly.

The architecture is read from ArchieGertsman/spark-sched-sim at the commit that last
changed ``models/decima/model.pt`` (``bb3e89d9``, 2023-08-10): ``schedulers/neural/decima.py``
(encoder), ``schedulers/neural/neural.py`` (MLP factory, policy heads),
``wrappers/neural.py`` (node features, executor masks) and ``graph_utils.py`` (message
passing levels). No code is copied; this is a re-implementation from that reading.

Network (every MLP is ``Linear, act, Linear, act, Linear``; GNN MLPs hidden [32, 16] with
``LeakyReLU(0.2)``, policy MLPs hidden [64, 64] with ``Tanh``; embedding width 16):

* **node encoder** -- ``h0 = prep(x)``. Message passing runs child -> parent ("reverse
  flow"): nodes without children get ``h = update(h0)``; every other node gets
  ``h = h0 + update(sum_{c in children} msg(h_c))``, one topological generation at a time,
  deepest first. If the whole observation has no edge, the code skips message passing and
  returns ``h = h0`` (no ``update``): reproduced.
* **DAG summary** -- ``h_dag[j] = sum_{v in job j} dag([x_v, h_v])`` (all of the job's nodes).
* **global summary** -- ``h_glob = sum_j glob(h_dag[j])``.
* **stage head** -- for each schedulable node ``v`` of job ``j``:
  ``score = stage([x_v, h_v, h_dag[j], h_glob])``.
* **executor head** -- for the chosen job ``j`` and each allowed ``k`` (``k < cap_j``):
  ``score = exec([x_{first node of j}[:3], h_dag[j], h_glob, k / E])``; the action ``k``
  means "``k + 1`` executors" (``NeuralActWrapper``).

Message-passing semantics (a documented choice). spark-sched-sim does not aggregate over
the plain parent->child edges of one generation: for generation ``L`` it takes every edge
with *both* ends in ``L | children(L)``. That also includes edges between two children of
``L`` (a skip connection ``a -> b -> c`` with ``a -> c``), and a child re-updated that way
is re-computed from only those of its own children that are in the set. The weights were
trained with that code, so ``message_passing="spark-sched-sim"`` (default) reproduces it;
``message_passing="exact"`` is the recursion of the Decima paper (section 5.1: each node
aggregates all its children, once, after they are final), with spark-sched-sim's
``prep``/``update`` and leaf conventions. They differ only when a child of generation ``L``
has a child of its own in ``children(L)`` (a skip edge); they agree on trees and chains
(property test) and the fixture has DAGs where they differ (max |dh| 0.03 to 2.1).

Computation is float64 (the float32 weights are exact in float64), so a float64 PyTorch
evaluation of ``model.pt`` agrees to ~1e-14 (tests/nona/test_decima.py).

Examples
--------
>>> import numpy as np
>>> w = load_weights()
>>> obs = DecimaObservation(
...     x=np.array([[0.5, -1, 0.1, 0.005, 0.001], [0.5, -1, 0.1, 0.005, 0.002]]),
...     edges=np.array([[0, 1]]), job_ptr=np.array([0, 2]),
...     stage_mask=np.array([True, False]), exec_caps=np.array([3]), num_executors=10)
>>> out = forward(w, obs)
>>> out.h_node.shape, out.h_dag.shape, out.h_glob.shape, out.stage_scores.shape
((2, 16), (1, 16), (16,), (1,))
>>> exec_scores(w, obs, out, job=0).shape
(3,)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from scipy import sparse

EMBED_DIM = 16
NUM_NODE_FEATURES = 5
NUM_DAG_FEATURES = 3
GNN_SLOPE = 0.2  # LeakyReLU negative slope of the GNN MLPs (config/decima_tpch.yaml)

#: state-dict prefix -> (activation, Linear shapes (out, in) for indices 0, 2, 4)
LAYOUT: dict[str, tuple[str, tuple[tuple[int, int], ...]]] = {
    "encoder.node_encoder.mlp_prep": ("leaky_relu", ((32, 5), (16, 32), (16, 16))),
    "encoder.node_encoder.mlp_msg": ("leaky_relu", ((32, 16), (16, 32), (16, 16))),
    "encoder.node_encoder.mlp_update": ("leaky_relu", ((32, 16), (16, 32), (16, 16))),
    "encoder.dag_encoder.mlp": ("leaky_relu", ((32, 21), (16, 32), (16, 16))),
    "encoder.global_encoder.mlp": ("leaky_relu", ((32, 16), (16, 32), (16, 16))),
    "stage_policy_network.mlp_score": ("tanh", ((64, 53), (64, 64), (1, 64))),
    "exec_policy_network.mlp_score": ("tanh", ((64, 36), (64, 64), (1, 64))),
}
WEIGHTS_NAME = "decima/model_state_dict.npz"

MessagePassing = Literal["spark-sched-sim", "exact"]


# ----------------------------------------------------------------------------- weights
@dataclass(frozen=True)
class MLP:
    """Three Linear layers with an activation between them (``y = x @ W.T + b``)."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    activation: str

    def __call__(self, h: np.ndarray) -> np.ndarray:
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ w.T + b
            if i < len(self.weights) - 1:
                h = np.where(h > 0, h, GNN_SLOPE * h) if self.activation == "leaky_relu" else np.tanh(h)
        return h


@dataclass(frozen=True)
class DecimaWeights:
    """The seven MLPs of the Decima actor, keyed by their state-dict prefix."""

    mlps: Mapping[str, MLP]
    source: str = ""

    def __getitem__(self, prefix: str) -> MLP:
        return self.mlps[prefix]

    @property
    def num_parameters(self) -> int:
        return sum(w.size + b.size for m in self.mlps.values() for w, b in zip(m.weights, m.biases))


def weights_from_state_dict(state: Mapping[str, np.ndarray], source: str = "<state dict>") -> DecimaWeights:
    """Check a state dict against :data:`LAYOUT` (names, shapes, nothing extra) and wrap it.

    Raises ``ValueError`` naming the source and the first offending key.
    """
    expected = {f"{p}.{i}.{kind}" for p in LAYOUT for i in (0, 2, 4) for kind in ("weight", "bias")}
    extra, missing = sorted(set(state) - expected), sorted(expected - set(state))
    if extra or missing:

        def few(keys: list[str]) -> str:  # a whole layout of names would bury the line
            return (
                ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")
                if keys
                else "none"
            )

        raise ValueError(
            f"{source}: state dict keys differ from Decima's layout; missing {len(missing)} of "
            f"{len(expected)} ({few(missing)}), unexpected {len(extra)} ({few(extra)})"
        )
    mlps = {}
    for prefix, (act, shapes) in LAYOUT.items():
        ws, bs = [], []
        for i, shape in zip((0, 2, 4), shapes):
            w = np.asarray(state[f"{prefix}.{i}.weight"], dtype=np.float64)
            b = np.asarray(state[f"{prefix}.{i}.bias"], dtype=np.float64)
            if w.shape != shape or b.shape != (shape[0],):
                raise ValueError(
                    f"{source}: {prefix}.{i} has weight {w.shape} / bias {b.shape}; expected {shape} / ({shape[0]},)"
                )
            if not (np.isfinite(w).all() and np.isfinite(b).all()):
                raise ValueError(f"{source}: {prefix}.{i} holds non-finite values")
            ws.append(w)
            bs.append(b)
        mlps[prefix] = MLP(tuple(ws), tuple(bs), act)
    return DecimaWeights(mlps, source)


def load_weights(path: str | Path | None = None) -> DecimaWeights:
    """Load ``model_state_dict.npz`` (default: the verified raw input ``decima/model_state_dict.npz``).

    >>> load_weights().num_parameters
    20802
    """
    if path is None:
        from schedlab import data

        path = data.require(WEIGHTS_NAME)
    return weights_from_state_dict(_read_npz(Path(path)), str(path))


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` at ``path``, or ``ValueError`` naming the file. Pickled objects
    are never loaded: a weights file holds plain arrays, and a file that is not one is refused."""
    import zipfile

    what = "not a Decima weights file; expected a .npz of the actor's arrays (stage nona_decima_train's weights.npz)"
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PK\x03\x04":  # every .npz is a zip archive
                raise ValueError(f"{path}: {what}")
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: {what} ({type(exc).__name__}: {exc})") from None
    except ValueError as exc:  # numpy's own words would suggest allow_pickle: never pass them on
        if str(exc).startswith(f"{path}: "):
            raise
        raise ValueError(f"{path}: {what} (an entry holds pickled objects or is damaged)") from None


# ------------------------------------------------------------------------- observation
@dataclass(frozen=True)
class DecimaObservation:
    """What Decima's network sees: a batch of job DAGs with 5 features per node.

    Parameters
    ----------
    x : (N, 5) float
        Node features in spark-sched-sim's order (see :mod:`schedlab.nona.decima.features`).
    edges : (M, 2) int
        ``parent -> child`` over global node indices; both ends in the same job.
    job_ptr : (J + 1,) int
        Job ``j`` owns nodes ``job_ptr[j]:job_ptr[j + 1]`` (each job has at least one node).
    stage_mask : (N,) bool
        Schedulable nodes (the stage head's candidates).
    exec_caps : (J,) int
        How many executors may be committed to each job; executor actions ``k < cap``.
    num_executors : int
        ``E``, the normaliser of the executor action ``k / E``.
    """

    x: np.ndarray
    edges: np.ndarray
    job_ptr: np.ndarray
    stage_mask: np.ndarray
    exec_caps: np.ndarray
    num_executors: int
    _levels: list = field(default=None, init=False, repr=False, compare=False)
    _plans: dict = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        x = np.asarray(self.x, dtype=np.float64)
        edges = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        ptr = np.asarray(self.job_ptr, dtype=np.int64)
        mask = np.asarray(self.stage_mask, dtype=bool)
        caps = np.asarray(self.exec_caps, dtype=np.int64)
        n = x.shape[0] if x.ndim == 2 else -1
        if x.ndim != 2 or x.shape[1] != NUM_NODE_FEATURES:
            raise ValueError(f"DecimaObservation.x: expected shape (N, {NUM_NODE_FEATURES}), got {x.shape}")
        if not np.isfinite(x).all():
            raise ValueError("DecimaObservation.x: non-finite feature values")
        if ptr.ndim != 1 or ptr.size < 2 or ptr[0] != 0 or ptr[-1] != n or np.any(np.diff(ptr) < 1):
            raise ValueError(
                f"DecimaObservation.job_ptr: expected 0 = p0 < p1 < ... < pJ = N = {n}, got {ptr.tolist()}"
            )
        if mask.shape != (n,):
            raise ValueError(f"DecimaObservation.stage_mask: expected shape ({n},), got {mask.shape}")
        if caps.shape != (ptr.size - 1,) or np.any(caps < 0) or np.any(caps > self.num_executors):
            raise ValueError(
                f"DecimaObservation.exec_caps: expected {ptr.size - 1} integers in [0, {self.num_executors}], got {caps.tolist()}"
            )
        if self.num_executors < 1:
            raise ValueError(f"DecimaObservation.num_executors: expected >= 1, got {self.num_executors}")
        if edges.size:
            if edges.min() < 0 or edges.max() >= n:
                raise ValueError(f"DecimaObservation.edges: node index outside [0, {n})")
            job = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
            bad = np.flatnonzero(job[edges[:, 0]] != job[edges[:, 1]])
            if bad.size:
                raise ValueError(f"DecimaObservation.edges: edge {edges[bad[0]].tolist()} joins two jobs")
        for name, value in (
            ("x", x),
            ("edges", edges),
            ("job_ptr", ptr),
            ("stage_mask", mask),
            ("exec_caps", caps),
        ):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_levels", topological_generations(edges, n))
        object.__setattr__(self, "_plans", {})

    def with_state(self, x: np.ndarray, stage_mask: np.ndarray, exec_caps: np.ndarray) -> "DecimaObservation":
        """The same job graphs with new features, stage mask and caps (reuses the generations).

        Within one scheduling round only these change; shapes are checked, values are not
        re-validated beyond that (they come from :mod:`.features`).
        """
        x = np.asarray(x, dtype=np.float64)
        stage_mask = np.asarray(stage_mask, dtype=bool)
        exec_caps = np.asarray(exec_caps, dtype=np.int64)
        if (
            x.shape != self.x.shape
            or stage_mask.shape != self.stage_mask.shape
            or exec_caps.shape != self.exec_caps.shape
        ):
            raise ValueError("DecimaObservation.with_state: shapes differ from the observation's")
        new = object.__new__(DecimaObservation)
        for name in ("edges", "job_ptr", "num_executors", "_levels", "_plans"):
            object.__setattr__(new, name, getattr(self, name))
        for name, value in (("x", x), ("stage_mask", stage_mask), ("exec_caps", exec_caps)):
            object.__setattr__(new, name, value)
        return new

    @property
    def num_jobs(self) -> int:
        return self.job_ptr.size - 1

    @property
    def node_job(self) -> np.ndarray:
        """Job index of every node (PyG's ``batch``)."""
        return np.repeat(np.arange(self.num_jobs), np.diff(self.job_ptr))

    @property
    def exec_mask(self) -> np.ndarray:
        """(J, E) bool: ``exec_mask[j, k]`` iff ``k < exec_caps[j]`` (spark-sched-sim's mask)."""
        return np.arange(self.num_executors)[None, :] < self.exec_caps[:, None]

    @property
    def levels(self) -> list[np.ndarray]:
        """Topological generations (generation 0: nodes without parents)."""
        return self._levels


def topological_generations(edges: np.ndarray, n: int) -> list[np.ndarray]:
    """Kahn's algorithm by rounds: generation ``g`` = nodes whose parents all lie in ``< g``.

    Raises ``ValueError`` on a cycle.

    >>> [g.tolist() for g in topological_generations(np.array([[0, 1], [1, 2], [0, 2]]), 4)]
    [[0, 3], [1], [2]]
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    indeg = np.bincount(edges[:, 1], minlength=n) if edges.size else np.zeros(n, dtype=np.int64)
    order = np.argsort(edges[:, 0], kind="stable")
    starts = np.searchsorted(edges[order, 0], np.arange(n + 1))
    children = edges[order, 1]
    gens, current, seen = [], np.flatnonzero(indeg == 0), 0
    indeg = indeg.copy()
    while current.size:
        gens.append(current)
        seen += current.size
        nxt = (
            np.concatenate([children[starts[v] : starts[v + 1]] for v in current])
            if current.size
            else current
        )
        np.subtract.at(indeg, nxt, 1)
        current = np.unique(nxt[indeg[nxt] == 0])
    if seen != n:
        raise ValueError("DecimaObservation.edges: the job graphs contain a cycle")
    return gens


def level_edge_masks(edges: np.ndarray, levels: list[np.ndarray], n: int) -> np.ndarray:
    """spark-sched-sim's message-passing masks: one row per generation except the last.

    Row ``g`` selects every edge with both ends in ``levels[g] | children(levels[g])``;
    zero rows if there are fewer than two generations.

    >>> e = np.array([[0, 1], [1, 2], [0, 2]])
    >>> level_edge_masks(e, topological_generations(e, 3), 3).astype(int).tolist()
    [[1, 1, 1], [0, 1, 0]]
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if len(levels) <= 1:
        return np.zeros((0, edges.shape[0]), dtype=bool)
    rows = []
    for level in levels[:-1]:
        in_level = np.zeros(n, dtype=bool)
        in_level[level] = True
        node_mask = in_level.copy()
        node_mask[edges[in_level[edges[:, 0]], 1]] = True
        rows.append(node_mask[edges[:, 0]] & node_mask[edges[:, 1]])
    return np.stack(rows)


# ----------------------------------------------------------------------------- forward
@dataclass(frozen=True)
class DecimaOutput:
    """Activations of one forward pass (``stage_scores`` in node order of ``stage_mask``)."""

    h_node: np.ndarray  # (N, 16)
    h_dag: np.ndarray  # (J, 16)
    h_glob: np.ndarray  # (16,)
    stage_scores: np.ndarray  # (number of schedulable nodes,)


def message_passing_plan(obs: DecimaObservation, message_passing: MessagePassing = "spark-sched-sim"):
    """``(leaves, steps)``: nodes without children, then per step (deepest generation first)
    the senders (children), receivers (parents) and their (receivers x senders) adjacency
    counts. Cached on ``obs``
    (shared by :meth:`DecimaObservation.with_state`)."""
    if message_passing not in ("spark-sched-sim", "exact"):
        raise ValueError(f"message_passing must be 'spark-sched-sim' or 'exact', got {message_passing!r}")
    plan = obs._plans.get(message_passing)
    if plan is not None:
        return plan
    n, edges = obs.x.shape[0], obs.edges
    has_child = np.zeros(n, dtype=bool)
    has_child[edges[:, 0]] = True
    if message_passing == "spark-sched-sim":
        masks = list(level_edge_masks(edges, obs.levels, n)[::-1])
    else:
        masks = []
        for level in obs.levels[::-1]:
            in_level = np.zeros(n, dtype=bool)
            in_level[level] = True
            m = in_level[edges[:, 0]]
            if m.any():
                masks.append(m)
    steps = []
    for m in masks:
        e = edges[m]
        senders, s_idx = np.unique(e[:, 1], return_inverse=True)
        receivers, r_idx = np.unique(e[:, 0], return_inverse=True)
        # (receivers x senders) edge counts: agg = adj @ msg sums over repeated edges too
        adj = sparse.csr_matrix((np.ones(e.shape[0]), (r_idx, s_idx)), shape=(receivers.size, senders.size))
        steps.append((senders, receivers, adj))
    plan = (np.flatnonzero(~has_child), steps)
    obs._plans[message_passing] = plan
    return plan


def node_embeddings(
    w: DecimaWeights, obs: DecimaObservation, message_passing: MessagePassing = "spark-sched-sim"
) -> np.ndarray:
    """The node encoder (see the module docstring for the two message-passing variants)."""
    if message_passing not in ("spark-sched-sim", "exact"):
        raise ValueError(f"message_passing must be 'spark-sched-sim' or 'exact', got {message_passing!r}")
    prep = w["encoder.node_encoder.mlp_prep"]
    msg_mlp = w["encoder.node_encoder.mlp_msg"]
    update = w["encoder.node_encoder.mlp_update"]
    h0 = prep(obs.x)
    if obs.edges.shape[0] == 0:
        # spark-sched-sim skips message passing entirely (and update) when there is no edge
        return h0
    h = np.zeros_like(h0)
    leaves, steps = message_passing_plan(obs, message_passing)
    h[leaves] = update(h0[leaves])
    for senders, receivers, adj in steps:
        msg = msg_mlp(h[senders])  # messages from the values before this step
        h[receivers] = h0[receivers] + update(adj @ msg)
    return h


def forward(
    w: DecimaWeights, obs: DecimaObservation, message_passing: MessagePassing = "spark-sched-sim"
) -> DecimaOutput:
    """Node embeddings, DAG and global summaries and the stage head's scores."""
    h = node_embeddings(w, obs, message_passing)
    per_node = w["encoder.dag_encoder.mlp"](np.concatenate([obs.x, h], axis=1))
    h_dag = np.add.reduceat(per_node, obs.job_ptr[:-1], axis=0)  # every job has >= 1 node
    h_glob = w["encoder.global_encoder.mlp"](h_dag).sum(axis=0)
    m = obs.stage_mask
    jobs = obs.node_job[m]
    inputs = np.concatenate(
        [obs.x[m], h[m], h_dag[jobs], np.broadcast_to(h_glob, (jobs.size, EMBED_DIM))], axis=1
    )
    scores = w["stage_policy_network.mlp_score"](inputs)[:, 0]
    return DecimaOutput(h, h_dag, h_glob, scores)


def exec_scores(w: DecimaWeights, obs: DecimaObservation, out: DecimaOutput, job: int) -> np.ndarray:
    """Executor-head scores of job ``job`` for the actions ``k = 0 .. cap - 1`` (``k + 1`` executors)."""
    cap = int(obs.exec_caps[job])
    k = np.arange(cap, dtype=np.float64)[:, None] / obs.num_executors
    x_dag = obs.x[obs.job_ptr[job], :NUM_DAG_FEATURES]
    row = np.concatenate([x_dag, out.h_dag[job], out.h_glob])
    inputs = np.concatenate([np.broadcast_to(row, (cap, row.size)), k], axis=1)
    return w["exec_policy_network.mlp_score"](inputs)[:, 0]


def softmax(scores: np.ndarray) -> np.ndarray:
    z = np.exp(scores - scores.max())
    return z / z.sum()


@dataclass(frozen=True)
class DecimaAction:
    """A Decima decision: a node (global index), its job, and how many executors (>= 1)."""

    node: int
    job: int
    num_executors: int
    log_prob: float


@dataclass
class DecimaPolicy:
    """Sampling (or greedy) actions from the network; the observation decides what is legal.

    >>> import numpy as np
    >>> obs = DecimaObservation(x=np.zeros((2, 5)), edges=np.zeros((0, 2)), job_ptr=[0, 1, 2],
    ...     stage_mask=[True, True], exec_caps=[2, 2], num_executors=4)
    >>> a = DecimaPolicy(load_weights()).act(obs, np.random.default_rng(0))
    >>> a.node in (0, 1) and 1 <= a.num_executors <= 2
    True
    """

    weights: DecimaWeights
    message_passing: MessagePassing = "spark-sched-sim"
    greedy: bool = False

    def act(self, obs: DecimaObservation, rng: np.random.Generator | None = None) -> DecimaAction:
        """Stage head, then executor head conditioned on the chosen stage's job.

        Needs ``rng`` unless ``greedy``. Raises ``ValueError`` if no stage is schedulable or
        the chosen job's executor cap is 0.
        """
        if not obs.stage_mask.any():
            raise ValueError("Decima needs at least one schedulable stage")
        if rng is None and not self.greedy:
            raise ValueError("DecimaPolicy.act: pass a numpy Generator (or set greedy=True)")
        out = forward(self.weights, obs, self.message_passing)
        p_stage = softmax(out.stage_scores)
        i = int(np.argmax(p_stage)) if self.greedy else int(rng.choice(p_stage.size, p=p_stage))
        node = int(np.flatnonzero(obs.stage_mask)[i])
        job = int(obs.node_job[node])
        if obs.exec_caps[job] < 1:
            raise ValueError(f"Decima chose job {job}, whose executor cap is 0")
        p_exec = softmax(exec_scores(self.weights, obs, out, job))
        k = int(np.argmax(p_exec)) if self.greedy else int(rng.choice(p_exec.size, p=p_exec))
        return DecimaAction(node, job, k + 1, float(np.log(p_stage[i]) + np.log(p_exec[k])))
