"""Fast Decima evaluation: per-job message passing, batched over jobs, with reusable pieces.

:func:`schedlab.nona.decima.policy.forward` evaluates the whole observation at every decision
(the tested reference). In the simulator that is wasteful: between two decisions only one or
two jobs change, and the network is a *sum over jobs* wherever jobs meet:

* the node encoder never crosses jobs (edges stay inside a job), and spark-sched-sim's
  generation masks restricted to one job are that job's own generation masks (a generation
  of the stacked graph is the union of the jobs' generations of the same depth, and a step
  only touches edges with both ends in one job), so message passing can run **per job**;
* ``h_dag[j]`` depends on job ``j`` alone; ``h_glob = sum_j glob(h_dag[j])``;
* the first Linear layer of each policy head is split over its input blocks
  (``W [x, h, h_dag, h_glob] = W_x x + W_h h + W_d h_dag + W_g h_glob``), so everything but
  the ``h_glob`` term is per job.

The one global coupling is spark-sched-sim's rule "no edge in the whole observation -> no
message passing at all"; it is an explicit ``any_edge`` argument (part of every cache key).

So a job's contribution -- ``g_j = glob(h_dag[j])``, the stage head's partial pre-activation
of its schedulable nodes and the executor head's partial pre-activation -- is a pure function
of its node features, its remaining graph and ``any_edge``; :class:`JobEmbedding` holds it,
:meth:`Engine.embed` computes many of them at once (one stacked matmul per MLP layer, one
message-passing step per generation *depth* across all jobs, with per-graph plans from
:func:`job_plan`), and :meth:`Engine.stage_logits` / :meth:`Engine.exec_logits` finish a
decision. The results equal :func:`~schedlab.nona.decima.policy.forward` up to float
summation order (tests: the PyTorch fixture at 1e-9, and the reference on observations
recorded from simulations).

Examples
--------
>>> import numpy as np
>>> from schedlab.nona.decima.policy import load_weights, DecimaObservation, forward
>>> obs = DecimaObservation(
...     x=np.array([[0.5, -1, 0.1, 0.005, 0.001], [0.5, -1, 0.1, 0.005, 0.002]]),
...     edges=np.array([[0, 1]]), job_ptr=np.array([0, 2]),
...     stage_mask=np.array([True, False]), exec_caps=np.array([3]), num_executors=10)
>>> w = load_weights()
>>> fast = forward_fast(w, obs)
>>> bool(np.allclose(fast.stage_scores, forward(w, obs).stage_scores, rtol=0, atol=1e-12))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedlab.nona.decima.policy import (
    EMBED_DIM,
    GNN_SLOPE,
    NUM_DAG_FEATURES,
    NUM_NODE_FEATURES,
    DecimaObservation,
    DecimaOutput,
    DecimaWeights,
    MessagePassing,
    level_edge_masks,
    topological_generations,
)

_VARIANTS = ("spark-sched-sim", "exact")


# ------------------------------------------------------------------------------ plans
@dataclass(frozen=True)
class Step:
    """One message-passing step: ``h[receivers] = h0[receivers] + update(sum of msg(h[senders]))``.

    ``edge_sender`` indexes ``senders`` for every edge, edges sorted by receiver;
    ``recv_start`` is where each receiver's edges start (``np.add.reduceat`` offsets).
    """

    senders: np.ndarray
    receivers: np.ndarray
    edge_sender: np.ndarray
    recv_start: np.ndarray


@dataclass(frozen=True)
class JobPlan:
    """Message-passing plan of one job graph: its leaves and one step per generation depth.

    ``steps[g]`` is the step of generation ``g`` (``None`` if it moves nothing); steps run
    from the deepest ``g`` to 0, and step ``g`` of every job of a batch runs together.
    """

    n: int
    num_edges: int
    leaves: np.ndarray
    steps: tuple
    flat: tuple = ()  # the non-empty steps, deepest first, as CSR-like arrays (compiled kernel)


def _flatten(steps) -> tuple:
    todo = [s for s in reversed(steps) if s is not None]

    def ptr(arrs):
        return np.concatenate([[0], np.cumsum([a.size for a in arrs])]).astype(np.int64)

    def cat(arrs):
        return np.concatenate(arrs).astype(np.int64) if arrs else np.zeros(0, dtype=np.int64)

    snd, rcv = [s.senders for s in todo], [s.receivers for s in todo]
    es, rs = [s.edge_sender for s in todo], [s.recv_start for s in todo]
    return (cat(snd), ptr(snd), cat(rcv), ptr(rcv), cat(es), ptr(es), cat(rs))


def job_plan(edges: np.ndarray, n: int, message_passing: MessagePassing = "spark-sched-sim") -> JobPlan:
    """The :class:`JobPlan` of one job (local node indices ``0..n-1``, ``parent -> child`` edges).

    >>> p = job_plan(np.array([[0, 1], [1, 2], [0, 2]]), 3)
    >>> p.leaves.tolist(), [s.receivers.tolist() for s in p.steps]
    ([2], [[0, 1], [1]])
    """
    if message_passing not in _VARIANTS:
        raise ValueError(f"message_passing must be 'spark-sched-sim' or 'exact', got {message_passing!r}")
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    has_child = np.zeros(n, dtype=bool)
    has_child[edges[:, 0]] = True
    if edges.shape[0] == 0:
        return JobPlan(n, 0, np.arange(n), (), _flatten(()))
    levels = topological_generations(edges, n)
    if message_passing == "spark-sched-sim":
        masks = list(level_edge_masks(edges, levels, n))
    else:
        masks = []
        for level in levels[:-1]:
            in_level = np.zeros(n, dtype=bool)
            in_level[level] = True
            masks.append(in_level[edges[:, 0]])
    steps = []
    for m in masks:
        e = edges[m]
        if e.shape[0] == 0:
            steps.append(None)
            continue
        e = e[np.lexsort((e[:, 1], e[:, 0]))]  # by receiver (parent), then sender
        senders = np.unique(e[:, 1])
        receivers, recv_start = np.unique(e[:, 0], return_index=True)
        steps.append(Step(senders, receivers, np.searchsorted(senders, e[:, 1]), recv_start))
    return JobPlan(n, int(edges.shape[0]), np.flatnonzero(~has_child), tuple(steps), _flatten(steps))


# -------------------------------------------------------------------------- the engine
@dataclass
class JobEmbedding:
    """One job's share of a forward pass (all it depends on: its features, graph and ``any_edge``).

    ``h`` (n, 16) node embeddings, ``h_dag`` (16,), ``g = glob(h_dag)`` (16,), ``stage_pre``
    (r, 64) the stage head's first-layer pre-activation of the rows ``rows`` (schedulable
    nodes) without the ``h_glob`` term, ``exec_pre`` (64,) the executor head's likewise
    without the ``h_glob`` and ``k / E`` terms.
    """

    h: np.ndarray
    h_dag: np.ndarray
    g: np.ndarray
    rows: np.ndarray
    stage_pre: np.ndarray
    exec_pre: np.ndarray


def _leaky(h: np.ndarray) -> np.ndarray:
    # max(h, 0.2 h) is bitwise LeakyReLU(0.2) for a slope below 1 (one ufunc instead of where)
    return np.maximum(h, GNN_SLOPE * h)


class Engine:
    """Decima's network split into per-job pieces (see the module docstring).

    Parameters
    ----------
    weights : DecimaWeights
    message_passing : {"spark-sched-sim", "exact"}
    backend : {"numba", "numpy"}
        The node encoder's message passing is sequential in the depth of the job graph (63
        generations for GPT-2): per step NumPy pays ~20 calls on 1-3 rows, so the default
        runs it as a compiled kernel per job; ``"numpy"`` is the batched array version.
    """

    def __init__(
        self,
        weights: DecimaWeights,
        message_passing: MessagePassing = "spark-sched-sim",
        backend: str = "numba",
    ) -> None:
        if message_passing not in _VARIANTS:
            raise ValueError(f"message_passing must be 'spark-sched-sim' or 'exact', got {message_passing!r}")
        if backend not in ("numba", "numpy"):
            raise ValueError(f"backend must be 'numba' or 'numpy', got {backend!r}")
        self.weights = weights
        self.message_passing = message_passing
        self.backend = backend

        def layers(prefix):
            m = weights[prefix]
            return [(w.T.copy(), b.copy()) for w, b in zip(m.weights, m.biases)]

        self.prep = layers("encoder.node_encoder.mlp_prep")
        self.msg = layers("encoder.node_encoder.mlp_msg")
        self.update = layers("encoder.node_encoder.mlp_update")
        self.dag = layers("encoder.dag_encoder.mlp")
        self.glob = layers("encoder.global_encoder.mlp")
        (s0, sb0), self.stage_tail0, self.stage_tail1 = layers("stage_policy_network.mlp_score")
        f, e = NUM_NODE_FEATURES, EMBED_DIM
        # input blocks of the stage head: [x (5), h (16), h_dag (16), h_glob (16)]
        self.stage_x, self.stage_h = s0[:f], s0[f : f + e]
        self.stage_d, self.stage_g, self.stage_b = s0[f + e : f + 2 * e], s0[f + 2 * e :], sb0
        (x0, xb0), self.exec_tail0, self.exec_tail1 = layers("exec_policy_network.mlp_score")
        d = NUM_DAG_FEATURES
        # input blocks of the executor head: [x_dag (3), h_dag (16), h_glob (16), k / E (1)]
        self.exec_x, self.exec_d = x0[:d], x0[d : d + e]
        self.exec_g, self.exec_k, self.exec_b = x0[d + e : d + 2 * e], x0[d + 2 * e], xb0
        self._flat_weights = tuple(
            np.ascontiguousarray(a) for lay in (self.prep, self.msg, self.update) for wb in lay for a in wb
        )

    @staticmethod
    def _gnn(layers, h):
        (w0, b0), (w1, b1), (w2, b2) = layers
        return _leaky(_leaky(h @ w0 + b0) @ w1 + b1) @ w2 + b2

    def node_embeddings(self, xs, plans, any_edge: bool) -> np.ndarray:
        """Stacked node embeddings of several jobs (features ``xs[i]``, plans ``plans[i]``)."""
        if self.backend == "numba":
            hs = [compiled_node_embeddings(self, x, p, any_edge) for x, p in zip(xs, plans)]
            return hs[0] if len(hs) == 1 else np.concatenate(hs)
        x = xs[0] if len(xs) == 1 else np.concatenate(xs)
        h0 = self._gnn(self.prep, x)
        if not any_edge:
            return h0  # spark-sched-sim skips message passing when the observation has no edge
        if len(plans) == 1:
            p = plans[0]
            h = np.empty_like(h0)
            h[p.leaves] = self._gnn(self.update, h0[p.leaves])
            for s in reversed(p.steps):
                if s is None:
                    continue
                m = self._gnn(self.msg, h[s.senders])[s.edge_sender]
                agg = np.add.reduceat(m, s.recv_start, axis=0)
                h[s.receivers] = h0[s.receivers] + self._gnn(self.update, agg)
            return h
        offs = np.cumsum([0] + [p.n for p in plans[:-1]])
        h = np.empty_like(h0)
        leaves = np.concatenate([p.leaves + o for p, o in zip(plans, offs)])
        h[leaves] = self._gnn(self.update, h0[leaves])
        depth = max(len(p.steps) for p in plans)
        for g in range(depth - 1, -1, -1):
            snd, rcv, es, rs = [], [], [], []
            ns = ne = 0
            for p, o in zip(plans, offs):
                if g < len(p.steps) and p.steps[g] is not None:
                    s = p.steps[g]
                    snd.append(s.senders + o)
                    rcv.append(s.receivers + o)
                    es.append(s.edge_sender + ns)
                    rs.append(s.recv_start + ne)
                    ns += s.senders.size
                    ne += s.edge_sender.size
            if not snd:
                continue
            senders, receivers = np.concatenate(snd), np.concatenate(rcv)
            m = self._gnn(self.msg, h[senders])[np.concatenate(es)]
            agg = np.add.reduceat(m, np.concatenate(rs), axis=0)
            h[receivers] = h0[receivers] + self._gnn(self.update, agg)
        return h

    def embed(self, xs, plans, rows, any_edge: bool) -> list[JobEmbedding]:
        """:class:`JobEmbedding` of several jobs at once.

        ``xs[i]`` (n_i, 5) features, ``plans[i]`` the job's :class:`JobPlan`, ``rows[i]`` the
        local indices of its schedulable nodes, ``any_edge`` whether the *observation* (all
        jobs, not only these) has an edge.
        """
        sizes = [p.n for p in plans]
        x = xs[0] if len(xs) == 1 else np.concatenate(xs)
        h = self.node_embeddings(xs, plans, any_edge)
        starts = np.cumsum([0] + sizes[:-1])
        per_node = self._gnn(self.dag, np.concatenate([x, h], axis=1))
        h_dag = np.add.reduceat(per_node, starts, axis=0)
        g = self._gnn(self.glob, h_dag)
        exec_pre = x[starts, :NUM_DAG_FEATURES] @ self.exec_x + h_dag @ self.exec_d + self.exec_b
        sel = np.concatenate([r + o for r, o in zip(rows, starts)]).astype(np.int64)
        owner = np.repeat(np.arange(len(plans)), [len(r) for r in rows])
        stage_pre = x[sel] @ self.stage_x + h[sel] @ self.stage_h + h_dag[owner] @ self.stage_d + self.stage_b
        out = []
        k = 0
        for i, (o, n, r) in enumerate(zip(starts, sizes, rows)):
            out.append(
                JobEmbedding(
                    h[o : o + n],
                    h_dag[i],
                    g[i],
                    np.asarray(r, dtype=np.int64),
                    stage_pre[k : k + len(r)],
                    exec_pre[i],
                )
            )
            k += len(r)
        return out

    def stage_logits(self, stage_pre: np.ndarray, h_glob: np.ndarray) -> np.ndarray:
        """Stage-head scores of stacked schedulable nodes given their partial pre-activations."""
        (w1, b1), (w2, b2) = self.stage_tail0, self.stage_tail1
        z = np.tanh(stage_pre + h_glob @ self.stage_g)
        return (np.tanh(z @ w1 + b1) @ w2 + b2)[:, 0]

    def exec_logits(
        self, exec_pre: np.ndarray, h_glob: np.ndarray, cap: int, num_executors: int
    ) -> np.ndarray:
        """Executor-head scores of the actions ``k = 0 .. cap - 1`` of one job."""
        (w1, b1), (w2, b2) = self.exec_tail0, self.exec_tail1
        k = np.arange(cap, dtype=np.float64)[:, None] / num_executors
        z = np.tanh((exec_pre + h_glob @ self.exec_g)[None, :] + k * self.exec_k[None, :])
        return (np.tanh(z @ w1 + b1) @ w2 + b2)[:, 0]


def split_observation(obs: DecimaObservation, message_passing: MessagePassing = "spark-sched-sim"):
    """Per-job ``(xs, plans, rows)`` of an observation (local indices), for :meth:`Engine.embed`."""
    ptr, edges = obs.job_ptr, obs.edges
    job_of_edge = (
        np.searchsorted(ptr, edges[:, 0], side="right") - 1 if edges.size else np.zeros(0, dtype=np.int64)
    )
    xs, plans, rows = [], [], []
    for j in range(obs.num_jobs):
        a, b = int(ptr[j]), int(ptr[j + 1])
        xs.append(obs.x[a:b])
        plans.append(job_plan(edges[job_of_edge == j] - a, b - a, message_passing))
        rows.append(np.flatnonzero(obs.stage_mask[a:b]))
    return xs, plans, rows


@dataclass(frozen=True)
class FastOutput(DecimaOutput):
    """:class:`~schedlab.nona.decima.policy.DecimaOutput` plus every job's executor scores."""

    exec_scores: tuple = ()


def forward_fast(
    w: DecimaWeights | Engine, obs: DecimaObservation, message_passing: MessagePassing = "spark-sched-sim"
) -> FastOutput:
    """:func:`~schedlab.nona.decima.policy.forward` through the :class:`Engine` (for tests)."""
    eng = w if isinstance(w, Engine) else Engine(w, message_passing)
    xs, plans, rows = split_observation(obs, eng.message_passing)
    emb = eng.embed(xs, plans, rows, any_edge=obs.edges.shape[0] > 0)
    h_glob = np.sum([e.g for e in emb], axis=0)
    scores = eng.stage_logits(np.concatenate([e.stage_pre for e in emb]), h_glob)
    ex = tuple(
        eng.exec_logits(e.exec_pre, h_glob, int(c), obs.num_executors) for e, c in zip(emb, obs.exec_caps)
    )
    return FastOutput(
        np.concatenate([e.h for e in emb]), np.stack([e.h_dag for e in emb]), h_glob, scores, ex
    )


# ------------------------------------------------------------------- compiled kernel
def compiled_node_embeddings(eng: "Engine", x: np.ndarray, plan: JobPlan, any_edge: bool) -> np.ndarray:
    """One job's node embeddings through the compiled kernel (:mod:`._kernels`)."""
    from schedlab.nona.decima._kernels import encode

    return encode(
        np.ascontiguousarray(x, dtype=np.float64),
        bool(any_edge),
        plan.leaves.astype(np.int64),
        *plan.flat,
        *eng._flat_weights,
        GNN_SLOPE,
    )
