"""Retraining Decima's network inside the Nona simulator (policy gradient, as Decima's paper).

What is trained: the very architecture of :mod:`.policy` (same state-dict layout, 20,802
parameters), as a PyTorch module (:class:`TorchDecima`, float64) whose weights are exported to
the NumPy layout (:func:`export_weights`), so rollouts and every evaluation run the NumPy
:class:`~schedlab.nona.decima.scheduler.DecimaScheduler` and PyTorch is needed only here
(the ``trace`` extra).

Algorithm (Mao et al., SIGCOMM 2019, section 5.3), one iteration:

1. **Rollouts.** One arrival sequence (seeded) and ``rollouts`` episodes on it, each sampling
   actions from the current policy with its own Generator. An episode is
   :func:`~schedlab.nona.sim.simulate` with arrivals on ``[0, episode_s)`` (no warm-up, no
   cool-down), run until every job has left, recording every decision
   (:class:`~schedlab.nona.decima.scheduler.DecisionRecord`).
2. **Rewards.** Decima's time-based (differential) reward: decision ``k`` at time ``t_k`` gets
   ``r_k = -integral_{t_k}^{t_{k+1}} N(t) dt``, ``N(t)`` the jobs in the system (every job,
   background communication included), so the return-to-go ``G(t_k) = -integral_{t_k}^{end} N``
   and the total return is minus the sum of the JCTs (no discount, as Decima's average-JCT
   objective).
3. **Input-dependent baseline.** ``b(t) = mean over the episodes of G_i(t)`` (every episode
   shares the arrival sequence; ``G_i`` is defined at every ``t``, so no interpolation of
   decision times is needed); advantage ``A = G_i(t_k) - b(t_k)``, divided by its standard
   deviation over the batch (a scale choice of ours: returns are in job-seconds).
4. **Update.** REINFORCE: ``loss = -mean_k A_k log pi(a_k | s_k) - beta * mean_k H_k`` (``H``:
   entropy of the stage and executor heads, optional bonus), optional gradient-norm clipping,
   one Adam step.

Variance reductions (options; the defaults of :class:`TrainConfig` are Decima's paper, the DVC
stage's ``params.yaml`` turns both on because they are what learned within the 5-minute budget):
``discount_s`` (a continuous-time discount ``exp(-(s - t) / tau)`` of the return, as
spark-sched-sim's trainers; biased toward short-term effects, much less noisy) and
``exec_head=False`` (the executor head's log-probability is left out of the gradient: with one
task per Nona stage its action never changes the episode, so its term is pure noise). Measured
on the default workload (16 servers, load 0.7, 4 held-out arrival sequences, mean JCT sampled /
greedy): untrained 8.47 / 2.75 s; undiscounted, 30 x 4 x 2 s episodes, lr 1e-2: 8.60 s sampled;
``discount_s=0.5, exec_head=False``, 4 x 1 s episodes per iteration, lr 3e-3: 7.78 / 1.95 s after
80 iterations, 1.06 / 1.09 s after 120 (the DVC stage's default; Spark fair 1.27 s); lr 5e-3,
80 iterations: 5.10 / 1.94 s; lr 1e-2: 6.13 / 2.42 s after 40 iterations but back to 8.60 / 8.15 s
after 80 (unstable). Early in training the stage head's logits are nearly equal, so the sampled
policy is close to uniform even when its ranking (greedy) already pays.

Choices (ours, documented): the log-probabilities of a whole batch are evaluated in one
PyTorch graph, each distinct job share (state, executor cap, source flag, any edge) once and
reused by every decision that saw it (exact: identical inputs, and the gradient of a shared
node is the sum over its uses), with the first Linear layer of each head split by input
block, as in :mod:`.engine`. Randomness: iteration ``i`` draws its arrival seed and episode
seeds from ``numpy.random.SeedSequence([seed, i])``; a from-scratch initialisation uses a
``torch.Generator`` seeded with ``seed`` (PyTorch's default ``Linear`` bounds ``1/sqrt(fan_in)``),
and PyTorch runs single-threaded, so a run stopped at a checkpoint and resumed gives the same
weights as one that never stopped (tested). Evaluation seeds (:data:`EVAL_SEED_BASE`) come from
another range than ``SeedSequence`` draws, so they are never training arrival sequences
(:func:`evaluate` checks it). The held-out evaluation (:func:`evaluate`) runs each
(scheme, arrival sequence) as one task of a :class:`schedlab.parallel.Executor`.

Examples
--------
>>> cfg = TrainConfig(iterations=1, rollouts=2, episode_s=0.05, servers=2, models=("alexnet",), load=0.5)
>>> cfg.iterations, cfg.init
(1, 'scratch')
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from schedlab.nona.decima.policy import (
    EMBED_DIM,
    GNN_SLOPE,
    LAYOUT,
    NUM_DAG_FEATURES,
    NUM_NODE_FEATURES,
    DecimaWeights,
    load_weights,
    weights_from_state_dict,
)

EVAL_SEED_BASE = 10_000_000  # evaluation arrival seeds: EVAL_SEED_BASE + i (never a training seed)


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a training run (the DVC stage's ``nona.decima_train.train``).

    Parameters
    ----------
    models : Nona inference models of the workload (plus background jobs, as in Fig. 3).
    servers, bandwidth_gbps, load : the training cluster and its compute load.
    workload : extra :func:`~schedlab.nona.workload.build_workload` arguments.
    episode_s : arrivals per episode span ``[0, episode_s)`` seconds; the episode then drains.
    iterations, rollouts : policy-gradient iterations; episodes per iteration (one shared
        arrival sequence: the input-dependent baseline averages over them).
    lr : Adam step size. entropy : entropy-bonus weight ``beta`` (0 disables it).
    init : ``"scratch"`` (default: random weights) or ``"public"`` (start from the public
        TPC-H-trained weights).
    seed : the run's seed (initialisation and every iteration's draws).
    checkpoint_every : write a checkpoint every this many iterations (and at the end).
    message_passing : as :mod:`.policy` (the public weights' ``"spark-sched-sim"``).
    discount_s : continuous-time discount timescale ``tau`` of the return (seconds; 0 = none,
        Decima's paper). See :func:`returns_to_go`.
    exec_head : whether the executor head's log-probability enters the policy gradient. In
        the Nona world a stage is one task, so the executor choice never changes what happens
        (:mod:`.scheduler`, "Executor count"); its score-function term has mean zero and only
        adds variance. ``False`` leaves that head at its initial weights.
    grad_clip : clip the gradient's global L2 norm to this (0 = no clipping).
    """

    models: tuple = ("gpt2", "densenet121", "vgg16", "alexnet", "resnet18")
    servers: int = 16
    bandwidth_gbps: float = 10.0
    load: float = 0.5
    workload: dict = field(default_factory=dict)
    episode_s: float = 0.5
    iterations: int = 40
    rollouts: int = 4
    lr: float = 3e-3
    entropy: float = 0.0
    init: str = "scratch"
    seed: int = 0
    checkpoint_every: int = 5
    message_passing: str = "spark-sched-sim"
    discount_s: float = 0.0
    exec_head: bool = True
    grad_clip: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", tuple(self.models))
        object.__setattr__(self, "workload", dict(self.workload or {}))
        if self.init not in ("scratch", "public"):
            raise ValueError(f"TrainConfig.init: expected 'scratch' or 'public', got {self.init!r}")
        for name in ("servers", "iterations", "rollouts", "checkpoint_every"):
            v = getattr(self, name)
            if not (isinstance(v, (int, np.integer)) and v >= 1):
                raise ValueError(f"TrainConfig.{name}: expected an integer >= 1, got {v!r}")
        if self.rollouts < 2:
            raise ValueError("TrainConfig.rollouts: the baseline averages over episodes; need >= 2")
        for name in ("episode_s", "lr", "bandwidth_gbps"):
            if not (getattr(self, name) > 0):
                raise ValueError(f"TrainConfig.{name}: expected > 0, got {getattr(self, name)!r}")
        if not (0 < self.load < 1):
            raise ValueError(f"TrainConfig.load: expected in (0, 1), got {self.load!r}")
        if self.entropy < 0:
            raise ValueError(f"TrainConfig.entropy: expected >= 0, got {self.entropy!r}")
        for name in ("discount_s", "grad_clip"):
            if not (getattr(self, name) >= 0):
                raise ValueError(f"TrainConfig.{name}: expected >= 0, got {getattr(self, name)!r}")
        object.__setattr__(self, "exec_head", bool(self.exec_head))


# -------------------------------------------------------------------------- the network
def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Decima training needs PyTorch: install the 'trace' extra (pip install -e .[trace])"
        ) from exc
    return torch


def make_module(weights: DecimaWeights | None = None, generator=None):
    """A :class:`torch.nn.Module` with Decima's layout (float64). ``weights`` copies them in;
    otherwise PyTorch's default ``Linear`` initialisation drawn from ``generator``."""
    torch = _torch()
    nn = torch.nn

    def mlp(prefix):
        act, shapes = LAYOUT[prefix]
        a = (lambda: nn.LeakyReLU(GNN_SLOPE)) if act == "leaky_relu" else nn.Tanh
        (o0, i0), (o1, i1), (o2, i2) = shapes
        return nn.Sequential(nn.Linear(i0, o0), a(), nn.Linear(i1, o1), a(), nn.Linear(i2, o2))

    root = nn.Module()
    root.encoder = nn.Module()
    root.encoder.node_encoder = nn.Module()
    root.encoder.node_encoder.mlp_prep = mlp("encoder.node_encoder.mlp_prep")
    root.encoder.node_encoder.mlp_msg = mlp("encoder.node_encoder.mlp_msg")
    root.encoder.node_encoder.mlp_update = mlp("encoder.node_encoder.mlp_update")
    root.encoder.dag_encoder = nn.Module()
    root.encoder.dag_encoder.mlp = mlp("encoder.dag_encoder.mlp")
    root.encoder.global_encoder = nn.Module()
    root.encoder.global_encoder.mlp = mlp("encoder.global_encoder.mlp")
    root.stage_policy_network = nn.Module()
    root.stage_policy_network.mlp_score = mlp("stage_policy_network.mlp_score")
    root.exec_policy_network = nn.Module()
    root.exec_policy_network.mlp_score = mlp("exec_policy_network.mlp_score")
    root.double()
    with torch.no_grad():
        if weights is not None:
            state = {
                f"{p}.{i}.{k}": torch.from_numpy(np.asarray(arr, dtype=np.float64).copy())
                for p, m in weights.mlps.items()
                for i, (w, b) in zip((0, 2, 4), zip(m.weights, m.biases))
                for k, arr in (("weight", w), ("bias", b))
            }
            root.load_state_dict(state, strict=True)
        else:
            g = generator if generator is not None else torch.Generator().manual_seed(0)
            for name, prm in sorted(root.named_parameters()):
                fan_in = prm.shape[1] if prm.ndim == 2 else None
                if fan_in is None:  # a bias: PyTorch's bound uses its layer's fan-in
                    w = dict(root.named_parameters())[name[: -len("bias")] + "weight"]
                    fan_in = w.shape[1]
                bound = 1.0 / np.sqrt(fan_in)
                prm.uniform_(-bound, bound, generator=g)
    return root


def export_weights(module, source: str = "<trained>") -> DecimaWeights:
    """The module's weights in the NumPy policy's layout (checked by ``weights_from_state_dict``)."""
    state = {k: v.detach().cpu().numpy().astype(np.float64) for k, v in module.state_dict().items()}
    return weights_from_state_dict(state, source)


def save_weights_npz(module, path: str | Path) -> None:
    """Write the module's state dict as ``.npz`` (keys = state-dict names, float64), atomically."""
    from schedlab.io import atomic_path

    state = {k: v.detach().cpu().numpy().astype(np.float64) for k, v in module.state_dict().items()}
    weights_from_state_dict(state, str(path))  # refuse to write a layout the policy cannot load
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **state)


# ----------------------------------------------------------------------- batch of decisions
@dataclass
class Episode:
    """One rollout: its decisions, the scheduler (for the job states) and per-decision return-to-go."""

    records: list
    scheduler: Any
    returns: np.ndarray  # G(t_k), job-seconds (<= 0)
    total_return: float  # G(0) = -sum of JCTs
    mean_jct_s: float
    jobs: int
    arrival: np.ndarray  # every job's arrival and completion (the baseline re-evaluates G)
    completion: np.ndarray


def batch_log_probs(
    module, episodes: Sequence[Episode], message_passing: str = "spark-sched-sim", exec_head: bool = True
):
    """``(log_prob, entropy)`` tensors, one entry per decision of ``episodes`` (in order).

    ``exec_head=False``: the stage head's terms only (the executor head's are left out).

    Distinct job shares ``(state, cap, source, any edge)`` are embedded once for the batch.
    """
    torch = _torch()
    from schedlab.nona.decima.engine import job_plan

    ne = module.encoder.node_encoder
    prep, msg, upd = ne.mlp_prep, ne.mlp_msg, ne.mlp_update
    dag, glob = module.encoder.dag_encoder.mlp, module.encoder.global_encoder.mlp
    stage, exe = module.stage_policy_network.mlp_score, module.exec_policy_network.mlp_score
    F, E16, D3 = NUM_NODE_FEATURES, EMBED_DIM, NUM_DAG_FEATURES

    # --- distinct job shares
    step_cache: dict = {}
    index: dict = {}
    ent_x, ent_plan, ent_rows, ent_edge = [], [], [], []
    dec_jobs = []  # per decision: entry ids of its jobs (arrival order)
    plans_cache: dict = {}
    for ep in episodes:
        sch = ep.scheduler
        for rec in ep.records:
            ids = []
            for sid, cap, src in rec.jobs:
                st = sch.structs[sid]
                key = (st.key, cap, src, rec.any_edge)
                e = index.get(key)
                if e is None:
                    e = index[key] = len(ent_x)
                    ent_x.append(sch.job_features(st, cap, src))
                    pk = (st.key[0], st.key[1])
                    plan = plans_cache.get(pk)
                    if plan is None:
                        plan = plans_cache[pk] = (
                            st.plan
                            if message_passing == sch.message_passing
                            else job_plan(np.zeros((0, 2)), st.n)
                        )
                    ent_plan.append(plan)
                    ent_rows.append(st.rows)
                    ent_edge.append(rec.any_edge)
                ids.append(e)
            dec_jobs.append(ids)
    n_ent = len(ent_x)
    sizes = np.array([p.n for p in ent_plan])
    offs = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    X = torch.from_numpy(np.concatenate(ent_x))
    node_entry = torch.from_numpy(np.repeat(np.arange(n_ent), sizes))

    # --- node encoder: message passing by generation depth across all shares with an edge.
    # h is written in place (h[receivers] = ...): autograd records it (CopySlices), and the reads
    # h[senders] save only indices, so every step costs O(its nodes), not a copy of h.
    h0 = prep(X)
    with_mp = [i for i in range(n_ent) if ent_edge[i]]
    if with_mp:
        h = h0.clone()
        leaves = np.concatenate([ent_plan[i].leaves + offs[i] for i in with_mp])
        lv = torch.from_numpy(leaves)
        h[lv] = upd(h0[lv])
        by_depth: dict = {}
        for i in with_mp:
            for g, st in enumerate(_edge_steps(ent_plan[i], step_cache)):
                if st is not None:
                    by_depth.setdefault(g, []).append((st, offs[i]))
        for g in sorted(by_depth, reverse=True):
            snd, rcv, es, er = [], [], [], []
            ns = nr = 0
            for (senders, receivers, e_snd, e_rcv), o in by_depth[g]:
                snd.append(senders + o)
                rcv.append(receivers + o)
                es.append(e_snd + ns)
                er.append(e_rcv + nr)
                ns += senders.size
                nr += receivers.size
            senders = torch.from_numpy(np.concatenate(snd))
            receivers = torch.from_numpy(np.concatenate(rcv))
            m = msg(h[senders])[torch.from_numpy(np.concatenate(es))]
            agg = torch.zeros((nr, E16), dtype=torch.float64).index_add(
                0, torch.from_numpy(np.concatenate(er)), m
            )
            h[receivers] = h0[receivers] + upd(agg)
    else:
        h = h0

    # --- per share: DAG summary, glob term, partial head inputs
    per_node = dag(torch.cat([X, h], dim=1))
    h_dag = torch.zeros((n_ent, E16), dtype=torch.float64).index_add(0, node_entry, per_node)
    gterm = glob(h_dag)
    W0s, b0s = stage[0].weight, stage[0].bias
    W0e, b0e = exe[0].weight, exe[0].bias
    first = torch.from_numpy(offs)
    exec_pre = X[first, :D3] @ W0e[:, :D3].T + h_dag @ W0e[:, D3 : D3 + E16].T + b0e
    row_off = np.concatenate([[0], np.cumsum([len(r) for r in ent_rows])])
    rows_g = torch.from_numpy(
        np.concatenate([np.asarray(r, dtype=np.int64) + offs[i] for i, r in enumerate(ent_rows)])
    )
    rows_e = torch.from_numpy(np.repeat(np.arange(n_ent), [len(r) for r in ent_rows]))
    stage_pre = (
        X[rows_g] @ W0s[:, :F].T
        + h[rows_g] @ W0s[:, F : F + E16].T
        + h_dag[rows_e] @ W0s[:, F + E16 : F + 2 * E16].T
        + b0s
    )

    # --- per decision: h_glob, stage candidates, executor actions
    recs = [rec for ep in episodes for rec in ep.records]
    n_dec = len(recs)
    pair_d = np.repeat(np.arange(n_dec), [len(j) for j in dec_jobs])
    pair_e = np.concatenate([np.asarray(j, dtype=np.int64) for j in dec_jobs])
    h_glob = torch.zeros((n_dec, E16), dtype=torch.float64).index_add(
        0, torch.from_numpy(pair_d), gterm[torch.from_numpy(pair_e)]
    )
    cand_d, cand_r, pick_s = [], [], np.empty(n_dec, dtype=np.int64)
    ex_d, ex_k, pick_x = [], [], np.empty(n_dec, dtype=np.int64)
    ex_ent = np.empty(n_dec, dtype=np.int64)
    n_cand = n_ex = 0
    for d, (rec, ids) in enumerate(zip(recs, dec_jobs)):
        rr = [np.arange(row_off[e], row_off[e + 1]) for e in ids if row_off[e + 1] > row_off[e]]
        rr = np.concatenate(rr)
        pick_s[d] = n_cand + rec.stage_pick
        cand_r.append(rr)
        cand_d.append(np.full(rr.size, d))
        n_cand += rr.size
        cap = rec.jobs[rec.job_pos][1]
        ex_ent[d] = ids[rec.job_pos]
        ex_d.append(np.full(cap, d))
        ex_k.append(np.arange(cap))
        pick_x[d] = n_ex + rec.exec_pick
        n_ex += cap
    cd = torch.from_numpy(np.concatenate(cand_d))
    cr = torch.from_numpy(np.concatenate(cand_r))
    z = torch.tanh(stage_pre[cr] + h_glob[cd] @ W0s[:, F + 2 * E16 :].T)
    s_logit = stage[4](stage[3](stage[2](z)))[:, 0]
    E = float(recs[0].num_executors)
    xd = torch.from_numpy(np.concatenate(ex_d))
    xk = torch.from_numpy(np.concatenate(ex_k)).to(torch.float64) / E
    ze = torch.tanh(
        exec_pre[torch.from_numpy(ex_ent)][xd]
        + h_glob[xd] @ W0e[:, D3 + E16 : D3 + 2 * E16].T
        + xk[:, None] * W0e[:, D3 + 2 * E16][None, :]
    )
    x_logit = exe[4](exe[3](exe[2](ze)))[:, 0]

    def seg_logsoftmax(logit, seg):
        mx = torch.zeros(n_dec, dtype=torch.float64).scatter_reduce(
            0, seg, logit.detach(), "amax", include_self=False
        )
        z = torch.exp(logit - mx[seg])
        lse = torch.log(torch.zeros(n_dec, dtype=torch.float64).index_add(0, seg, z)) + mx
        logp = logit - lse[seg]
        ent = -torch.zeros(n_dec, dtype=torch.float64).index_add(0, seg, torch.exp(logp) * logp)
        return logp, ent

    lps, ents = seg_logsoftmax(s_logit, cd)
    if not exec_head:
        return lps[torch.from_numpy(pick_s)], ents
    lpx, entx = seg_logsoftmax(x_logit, xd)
    log_prob = lps[torch.from_numpy(pick_s)] + lpx[torch.from_numpy(pick_x)]
    return log_prob, ents + entx


def _edge_steps(plan, cache: dict) -> list:
    """Per step of ``plan``: ``(senders, receivers, edge -> sender position, edge -> receiver position)``."""
    out = cache.get(id(plan))
    if out is None:
        out = []
        for s in plan.steps:
            if s is None:
                out.append(None)
                continue
            cnt = np.diff(np.append(s.recv_start, s.edge_sender.size))
            out.append((s.senders, s.receivers, s.edge_sender, np.repeat(np.arange(s.receivers.size), cnt)))
        cache[id(plan)] = (plan, out)  # keep plan alive: its id stays unique
        return out
    return out[1]


# --------------------------------------------------------------------------- episodes
def returns_to_go(
    arrival: np.ndarray, completion: np.ndarray, times: np.ndarray, tau: float = 0.0
) -> tuple[np.ndarray, float]:
    """``G(t) = -integral_t^end w(s - t) N(s) ds`` at ``times`` and ``G(0)`` (N: jobs in the system).

    ``tau = 0``: ``w = 1`` (undiscounted, Decima's paper); ``tau > 0``: continuous-time
    discount ``w(u) = exp(-u / tau)`` (``tau`` in seconds, as spark-sched-sim's trainers'
    ``beta`` discount), so a decision is credited with the job-seconds of the next few ``tau``.

    >>> G, G0 = returns_to_go(np.array([0.0, 1.0]), np.array([2.0, 4.0]), np.array([0.0, 1.0, 3.0]))
    >>> G.tolist(), G0  # JCTs 2 + 3 = 5 job-seconds in all
    ([-5.0, -4.0, -1.0], -5.0)
    >>> G, G0 = returns_to_go(np.array([0.0]), np.array([1.0]), np.array([0.0, 0.5]), tau=1.0)
    >>> np.round(G, 6).tolist(), round(G0, 6)  # -(1 - e^-1), -(1 - e^-0.5)
    ([-0.632121, -0.393469], -0.632121)
    """
    times = np.asarray(times, dtype=np.float64)
    ev_t = np.concatenate([arrival, completion])
    ev_d = np.concatenate([np.ones(arrival.size), -np.ones(completion.size)])
    order = np.argsort(ev_t, kind="stable")
    t, d = ev_t[order], ev_d[order]
    n_after = np.cumsum(d)  # jobs in the system just after each event
    if tau <= 0:
        area = np.concatenate([[0.0], np.cumsum(n_after[:-1] * np.diff(t))])  # A(t_e)
        total = area[-1]
        A = np.interp(times, t, area, left=0.0, right=total)
        return A - total, float(-total)
    # D_j = discounted area from event j on: D_j = N_j tau (1 - e^{-dt_j/tau}) + e^{-dt_j/tau} D_{j+1}
    decay = np.exp(-np.diff(t) / tau)
    gain = n_after[:-1] * tau * (1.0 - decay)
    D = np.zeros(t.size)
    for j in range(t.size - 2, -1, -1):
        D[j] = gain[j] + decay[j] * D[j + 1]
    j = np.searchsorted(t, times, side="right")  # times[i] in [t_{j-1}, t_j)
    jc = np.minimum(j, t.size - 1)
    h = t[jc] - times
    e = np.exp(-h / tau)
    n_before = np.where(j > 0, n_after[np.maximum(j - 1, 0)], 0.0)
    out = n_before * tau * (1.0 - e) + e * D[jc]
    out[j >= t.size] = 0.0  # after the last event nobody is left
    G0 = float(np.exp(-max(t[0], 0.0) / tau) * D[0]) if t.size else 0.0
    return -out, -G0


def run_episode(
    weights: DecimaWeights,
    cfg: TrainConfig,
    arrival_seed: int,
    policy_seed: int,
    job_classes=None,
    cluster=None,
    *,
    record: bool = True,
    greedy: bool = False,
    shared: dict | None = None,
) -> Episode:
    """Simulate one episode of ``cfg`` with ``weights`` (arrivals from ``arrival_seed``).

    ``shared``: a dict reused across episodes (job states, plans, embeddings of these weights).
    """
    from schedlab.nona.decima.scheduler import DecimaScheduler
    from schedlab.nona.sim import simulate

    if job_classes is None or cluster is None:
        job_classes, cluster = training_workload(cfg)
    recs: list = [] if record else None
    sch = DecimaScheduler(
        rng=np.random.default_rng(policy_seed),
        weights=weights,
        compute_rate=cluster.compute_rate,
        message_passing=cfg.message_passing,
        record=recs,
        greedy=greedy,
        shared=shared,
    )
    res = simulate(
        job_classes,
        cluster,
        sch,
        duration=cfg.episode_s,
        warmup=0.0,
        cooldown=0.0,
        rng=np.random.default_rng(arrival_seed),
    )
    j = res.jobs
    times = np.array([r.time for r in recs]) if record else np.zeros(0)
    arr, comp = j.arrival.to_numpy(), j.completion.to_numpy()
    G, G0 = returns_to_go(arr, comp, times, cfg.discount_s)
    return Episode(
        recs or [], sch, G, G0, float(j.jct.mean()) if len(j) else float("nan"), int(len(j)), arr, comp
    )


def initial_weights(cfg: TrainConfig) -> DecimaWeights:
    """The network :func:`train` starts from (``cfg.init``, the same seeded draws), in NumPy."""
    torch = _torch()
    return export_weights(
        make_module(
            load_weights() if cfg.init == "public" else None,
            generator=torch.Generator().manual_seed(int(cfg.seed)),
        )
    )


def training_workload(cfg: TrainConfig):
    """The job classes and cluster of ``cfg`` (models whose inputs are missing are an error)."""
    from schedlab.nona.workload import Cluster, build_workload

    cluster = Cluster(servers=int(cfg.servers), bandwidth_gbps=float(cfg.bandwidth_gbps))
    return build_workload(list(cfg.models), load=float(cfg.load), cluster=cluster, **cfg.workload), cluster


# ------------------------------------------------------------------------ the training loop
@dataclass
class TrainResult:
    """Trained module, its NumPy weights, the learning curve and the measured training time."""

    module: Any
    weights: DecimaWeights
    curve: list
    train_seconds: float
    resumed_from: int


def _checkpoint_path(directory: Path) -> Path:
    return Path(directory) / "checkpoint.pt"


def save_checkpoint(
    directory: str | Path, module, opt, iteration: int, curve: list, cfg: TrainConfig
) -> Path:
    """Atomically write ``checkpoint.pt`` (model, Adam state, iteration, curve, config)."""
    torch = _torch()
    from schedlab.io import atomic_path

    path = _checkpoint_path(Path(directory))
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save(
            {
                "model": module.state_dict(),
                "optimizer": opt.state_dict(),
                "iteration": iteration,
                "curve": curve,
                "config": json.dumps(asdict(cfg), sort_keys=True),
            },
            tmp,
        )
    return path


def train(
    cfg: TrainConfig,
    checkpoint_dir: str | Path | None = None,
    *,
    resume: bool = True,
    stop_after: int | None = None,
    progress: bool = True,
    job_classes=None,
    cluster=None,
) -> TrainResult:
    """Train (or resume training) Decima in the Nona simulator; see the module docstring.

    ``checkpoint_dir``: where ``checkpoint.pt`` goes every ``cfg.checkpoint_every`` iterations
    (None: no checkpoints). ``resume``: continue from a checkpoint there if its config equals
    ``cfg`` (a checkpoint of another config is an error). ``stop_after``: stop after this many
    iterations of *this call* (tests use it to simulate an interruption). ``job_classes`` and
    ``cluster`` replace the workload ``cfg`` describes (tests use toy workloads).
    """
    torch = _torch()
    torch.set_num_threads(1)  # determinism (resume == no stop) and the shared 2-core machine
    gen = torch.Generator().manual_seed(int(cfg.seed))
    module = make_module(load_weights() if cfg.init == "public" else None, generator=gen)
    opt = torch.optim.Adam(module.parameters(), lr=cfg.lr)
    curve: list = []
    start = 0
    ckpt = _checkpoint_path(Path(checkpoint_dir)) if checkpoint_dir is not None else None
    if resume and ckpt is not None and ckpt.is_file():
        state = torch.load(ckpt, weights_only=False)
        if json.loads(state["config"]) != json.loads(json.dumps(asdict(cfg), sort_keys=True)):
            raise ValueError(
                f"{ckpt}: checkpoint of another training config; delete it or change the directory"
            )
        module.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start, curve = int(state["iteration"]), list(state["curve"])
    if job_classes is None or cluster is None:
        job_classes, cluster = training_workload(cfg)
    shared: dict = {}
    bar = None
    if progress:
        from schedlab.progress import bar as progress_bar

        bar = progress_bar(total=cfg.iterations, initial=start, desc="train decima", unit="it")
    done_here = 0
    for it in range(start, cfg.iterations):
        if stop_after is not None and done_here >= stop_after:
            break
        t0 = time.perf_counter()
        arrival_seed, *policy_seeds = (
            np.random.SeedSequence([int(cfg.seed), it]).generate_state(1 + cfg.rollouts).tolist()
        )
        weights = export_weights(module)
        eps = [
            run_episode(weights, cfg, arrival_seed, s, job_classes, cluster, shared=shared)
            for s in policy_seeds
        ]
        eps = [e for e in eps if e.records]
        t_sim = time.perf_counter() - t0
        stats = {
            "iteration": it,
            "mean_jct_s": float(np.mean([e.mean_jct_s for e in eps])) if eps else float("nan"),
            "mean_return": float(np.mean([e.total_return for e in eps])) if eps else float("nan"),
            "decisions": int(sum(len(e.records) for e in eps)),
            "jobs": int(sum(e.jobs for e in eps)),
        }
        if len(eps) >= 2:
            advs = _advantages(eps, cfg.discount_s)
            log_prob, ent = batch_log_probs(module, eps, cfg.message_passing, cfg.exec_head)
            a = torch.from_numpy(advs)
            loss = -(a * log_prob).mean() - cfg.entropy * ent.mean()
            opt.zero_grad()
            loss.backward()
            if cfg.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(module.parameters(), cfg.grad_clip)
            opt.step()
            stats.update(loss=float(loss.detach()), entropy=float(ent.detach().mean()))
        stats.update(sim_s=t_sim, wall_s=time.perf_counter() - t0)
        curve.append(stats)
        done_here += 1
        if bar is not None:
            bar.update(1)
            bar.set_postfix(jct=f"{stats['mean_jct_s']:.3f}", refresh=False)
        if ckpt is not None and ((it + 1) % cfg.checkpoint_every == 0 or it + 1 == cfg.iterations):
            save_checkpoint(ckpt.parent, module, opt, it + 1, curve, cfg)
    if bar is not None:
        bar.close()
    return TrainResult(module, export_weights(module), curve, float(sum(c["wall_s"] for c in curve)), start)


def _advantages(eps: Sequence[Episode], tau: float = 0.0) -> np.ndarray:
    """``G_i(t_k) - mean_j G_j(t_k)``, divided by the batch's standard deviation (see module docstring)."""
    out = []
    for e in eps:
        times = np.array([r.time for r in e.records])
        base = np.mean([returns_to_go(o.arrival, o.completion, times, tau)[0] for o in eps], axis=0)
        out.append(e.returns - base)
    a = np.concatenate(out)
    sd = a.std()
    return a / sd if sd > 0 else a


def numpy_log_probs(
    weights: DecimaWeights, episodes: Sequence[Episode], message_passing: str = "spark-sched-sim"
) -> np.ndarray:
    """The NumPy policy's log-probabilities of the recorded decisions (no PyTorch; for checks).

    Each decision's observation is rebuilt from its record (job states, caps, source flags)
    and evaluated by :class:`~schedlab.nona.decima.engine.Engine` (tested against the
    reference forward pass and the PyTorch fixture).
    """
    from schedlab.nona.decima.engine import Engine

    eng = Engine(weights, message_passing)
    out = []
    for ep in episodes:
        sch = ep.scheduler
        for rec in ep.records:
            sts = [(sch.structs[sid], cap, src) for sid, cap, src in rec.jobs]
            emb = eng.embed(
                [sch.job_features(st, cap, src) for st, cap, src in sts],
                [st.plan for st, _c, _s in sts],
                [st.rows for st, _c, _s in sts],
                rec.any_edge,
            )
            h_glob = np.sum([e.g for e in emb], axis=0)
            pre = [e.stage_pre for e, (st, _c, _s) in zip(emb, sts) if st.rows.size]
            s = eng.stage_logits(np.concatenate(pre), h_glob)
            ls = s[rec.stage_pick] - (s.max() + np.log(np.exp(s - s.max()).sum()))
            x = eng.exec_logits(
                emb[rec.job_pos].exec_pre, h_glob, rec.jobs[rec.job_pos][1], rec.num_executors
            )
            lx = x[rec.exec_pick] - (x.max() + np.log(np.exp(x - x.max()).sum()))
            out.append(ls + lx)
    return np.array(out)


# ------------------------------------------------------------------- held-out evaluation
#: the summary columns of one evaluation run
EVAL_COLUMNS = ("jobs", "mean_jct_s", "p99_jct_s", "inference_mean_jct_s", "inference_p99_jct_s")
#: evaluation schemes besides those of :func:`~schedlab.nona.schedulers.make_scheduler`: the
#: trained and the initial network, sampled or greedy (``(weights key, greedy)``)
EVAL_DECIMA_VARIANTS = {
    "decima_retrained": ("trained", False),
    "decima_retrained_greedy": ("trained", True),
    "decima_init": ("init", False),
    "decima_init_greedy": ("init", True),
}
#: the other schemes an evaluation runs on the training workload (no tables to give but Nona's)
EVAL_OTHER_SCHEMES = ("decima", "nona", "spark_fair", "random", "opportunistic")


def evaluation_seeds(n: int) -> list[int]:
    """The ``n`` held-out arrival seeds, ``EVAL_SEED_BASE + i``.

    >>> evaluation_seeds(2)
    [10000000, 10000001]
    """
    return [EVAL_SEED_BASE + i for i in range(n)]


def training_arrival_seeds(cfg: TrainConfig) -> set[int]:
    """Every arrival seed the training run of ``cfg`` draws (one per iteration)."""
    return {
        int(np.random.SeedSequence([cfg.seed, it]).generate_state(1 + cfg.rollouts)[0])
        for it in range(cfg.iterations)
    }


def evaluate(
    cfg: TrainConfig,
    schemes: Sequence[str],
    seeds: Sequence[int],
    *,
    duration: float,
    weights: DecimaWeights,
    init_weights: DecimaWeights,
    nona_tables: str | Path | None = None,
    executor: Any = None,
    progress: bool = True,
):
    """Held-out evaluation: every scheme on every arrival sequence ``seeds`` of ``cfg``'s workload.

    Schemes: ``decima_retrained``/``decima_init`` (``weights``/``init_weights``, sampling
    actions from a Generator seeded with the arrival seed) and their ``_greedy`` variants,
    plus :data:`EVAL_OTHER_SCHEMES` as :func:`~schedlab.nona.schedulers.make_scheduler` builds
    them (``decima``: the public weights). ``nona`` reads the optimiser's tables at ``nona_tables``, solved there
    once for this workload (before the runs) when the file does not exist. Each run measures
    ``duration`` s after a 10% warm-up with ``numpy.random.default_rng(seed)`` arrivals.

    Every (scheme, seed) is one task of ``executor`` (a :class:`schedlab.parallel.Executor`,
    a worker count, a Dask address, or ``None``: the default), so the numbers do not depend on
    where it runs. A scheme that cannot run gets rows whose ``status`` says why.

    Returns a DataFrame, one row per (scheme, seed), schemes in the order given.
    """
    import pandas as pd

    from schedlab.parallel import resolve

    unknown = [s for s in schemes if s not in EVAL_DECIMA_VARIANTS and s not in EVAL_OTHER_SCHEMES]
    if unknown:
        raise ValueError(
            f"unknown evaluation scheme(s) {unknown}; expected some of "
            f"{', '.join([*EVAL_DECIMA_VARIANTS, *EVAL_OTHER_SCHEMES])}"
        )
    overlap = training_arrival_seeds(cfg) & set(int(s) for s in seeds)
    if overlap:
        raise ValueError(f"evaluation seeds {sorted(overlap)} are training arrival seeds of this config")
    if "nona" in schemes:
        nona_tables = _nona_tables_for(cfg, nona_tables)
    cells = [(scheme, int(sd)) for scheme in schemes for sd in seeds]
    ex, must_close = resolve(executor)
    try:
        rows = ex.map(
            _evaluate_run,
            cells,
            cfg,
            float(duration),
            {"trained": weights, "init": init_weights},
            nona_tables,
            desc="decima evaluation",
            progress=progress,
        )
    finally:
        if must_close:
            ex.close()
    return pd.DataFrame(rows)


def _nona_tables_for(cfg: TrainConfig, path: str | Path | None) -> Path:
    """Nona's tables for the training workload at ``path`` (solved there if missing)."""
    from schedlab.nona.tables import solve_tables

    if path is None:
        raise ValueError("evaluating 'nona' needs nona_tables: where its optimiser JSON is (or goes)")
    path = Path(path)
    if not path.is_file():
        wl, cluster = training_workload(cfg)
        solve_tables(wl, cluster, path, load=cfg.load)
    return path


def _evaluate_run(
    cell: tuple[str, int], cfg: TrainConfig, duration: float, weights: dict, nona_tables: Path | None
) -> dict:
    """One evaluation run: ``cell`` = (scheme, arrival seed)."""
    from schedlab.nona.decima.scheduler import DecimaScheduler
    from schedlab.nona.schedulers import SchemeUnavailable, make_scheduler
    from schedlab.nona.sim import SimInputError, simulate
    from schedlab.nona.tables import check_tables_match, load_tables

    scheme, sd = cell
    wl, cluster = training_workload(cfg)
    row: dict[str, Any] = {"scheme": scheme, "seed": sd, "status": "ok"}
    try:
        if scheme in EVAL_DECIMA_VARIANTS:
            which, greedy = EVAL_DECIMA_VARIANTS[scheme]
            sch = DecimaScheduler(
                rng=sd, compute_rate=cluster.compute_rate, weights=weights[which], greedy=greedy
            )
        elif scheme == "nona":
            doc = load_tables(nona_tables)
            check_tables_match(doc, wl, cluster)
            sch = make_scheduler("nona", tables=doc)
        else:
            sch = make_scheduler(scheme, seed=sd, compute_rate=cluster.compute_rate)
    except (SchemeUnavailable, SimInputError, FileNotFoundError) as exc:
        row["status"] = f"unavailable: {type(exc).__name__}: {exc}"  # a row saying why, not a gap
        return row
    t0 = time.perf_counter()
    r = simulate(wl, cluster, sch, duration=duration, warmup=0.1 * duration, rng=np.random.default_rng(sd))
    s = r.summary()
    row.update({k: s[k] for k in EVAL_COLUMNS})
    row["link_offered_load"] = r.stats["link_offered_load"]
    row["wall_s"] = time.perf_counter() - t0
    return row
