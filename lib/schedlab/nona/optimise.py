"""Nona's optimisation (section III-C, equations (I)-(XII)) and three solvers.

The formulation
---------------
Decision variables: one distribution theta_t on Omega_t per bottleneck subgraph
(:mod:`schedlab.nona.decision`). For an option omega = (pi, k, l) of a subgraph with source
t_0, sink t_m and intermediate tasks T, place t_0 with part k and t_m with part l; an edge
(u, v) of the subgraph *crosses* the link when u and v are in different parts. Then

(IV)   lambda_e = sum_omega beta_j theta[omega] 1(e crosses under omega)
(V)    S_e = b_e / mu
(VI)   rho = sum_e lambda_e S_e  (+ the background communication jobs' load)
(VII)  rho < 1
(VIII) phi = sum_e lambda_e S_e^2 / (2 (1 - rho))  (PK, :mod:`schedlab.nona.queueing`)
(IX)   c_e = phi + S_e
(X)    chi_i(omega) = sum_{x in pi_i} p^x/nu + sum of c_e over the crossing edges *into*
       part i (from another part, or from the source if i != k) + sum of c_e over the
       crossing edges from part i to the sink (if i != l)
(XI)   kappa^t = sum_omega theta[omega] max_i chi_i(omega) + p^{sink}/nu
(XII)  tau^j = p^{root}/nu + sum_t kappa^t
(I)    objective sum_j beta_j tau^j (over all classes, background included).

Background compute jobs have tau = p/nu; background communication jobs are one transfer
that always crosses the link: tau = phi + S (they add to rho and to the PK numerator).

Reading of the paper's typeset equations (documented choices):

* (IV) for an edge source -> sink that skips the intermediate tasks: crosses iff k != l
  (the literal "1(t' not in pi_k)" would make it always cross; sinks sit with pi_l).
* (X) as typeset puts p^{t'}/nu inside the sum over predecessors and tests
  "1(t_2 not in pi_i)" (always false for t_2 in pi_i). We read it as: each task's compute
  once, plus the delay of every incoming edge from another part (t_1 not in pi_i).
* Such a direct source -> sink edge, when it crosses, is one more branch in the max of (XI)
  (its delay c_e), since the sink cannot start before it arrives. (X) omits it; with
  ``direct_edge_branch=False`` it is left out, as typeset.

Pricing (``pricing=``, :data:`PRICINGS`; default :data:`DEFAULT_PRICING`)
----------------------------------------------------------------------
``"paper"`` is (X)-(XI) as read above: every part is priced on its own, as if the parts ran in
parallel (kappa = max over parts), so a part that waits for a predecessor's compute in another
part is priced without that wait, and a job's transfers never queue behind each other.
``"critical_path"`` (:func:`_subgraph_rows_critical`) prices an option by scheduling it as
the simulator runs it on an idle cluster, plus the wait phi per transfer: each part's tasks in
sequence on its server, each task after its predecessors in any part and their transfers,
the job's own transfers one after another on the FIFO link, zero-byte edges free. It is still
a max of lines ``A + n phi`` per option (a longest path), so every solver and certificate
applies unchanged. On an idle cluster it equals the simulated JCT of any placement whose
senders finish in the subgraph's topological order (``tests/nona/test_model_vs_sim.py``);
the paper's reading ("the time required for all branches in part pi_i to complete") needs
this whenever a part is not a set of whole parallel branches.
``"critical_path_queued"`` (not the default; beyond the paper, whose model has no server
queue) adds the servers' FIFO buffers that the simulator has: a task joins its server's queue
when its last input is ready and waits there W_s, the M/G/1 (PK) mean wait of a server whose
customers are single tasks (:func:`server_queue`: per-server load rho_s = sum_j lambda_j S_j / N,
W_s = sum_j lambda_j sum_{x in j} (p^x/nu)^2 / (2 N (1 - rho_s)), background compute included,
background transfers excluded); the job's own tasks already queued on that server still run
first. Every row becomes ``A + m W_s + n phi`` (m: the queue waits on the path), still lines in
phi, so the solvers and the certificate are unchanged. W_s does not depend on theta: Nona's
tables (like Random and Opportunistic) put every task on a uniformly random server, so moving
a part moves work between servers without changing any server's load or task mix. Assumed and
measured (``tests/nona/test_server_queue.py``): a server's tasks arrive as a Poisson stream. Exact
for one-task jobs (M/D/1); where every job is a chain of equal tasks, arrivals come in bursts
and a chained task waits ~1.7 W_s (the pricing under-predicts by ~20%); on inception_v3 at
per-server load 0.5 it is within -3%..+8% of the simulated mean JCT (``critical_path``: -59%..-70%).
Like ``critical_path`` it charges each transfer the full mean link wait phi, independently.

Structure used by the solvers: for a fixed phi every tau^j is *linear* in theta, each
max_i chi_i(omega) is a non-decreasing convex piecewise-linear function of phi, and
"phi(theta) <= psi" is the linear constraint sum lambda S^2 <= 2 psi (1 - rho(theta)).

Solvers (:func:`solve`)
-----------------------
``global``
    branch and bound over the wait phi, certified: the result carries ``lower_bound`` and
    ``gap``, and stops when every bound is within ``rtol`` of the best value. Default
    (``lp="lagrange"``, :mod:`schedlab.nona._lagrange`): no LP solver. For a fixed wait psi the
    problem "min over theta with phi(theta) <= psi" is an LP over the product of simplices
    with ONE coupling row (a multiple-choice knapsack LP), solved exactly by its
    one-multiplier Lagrangian dual; a basic optimum mixes two options in at most one
    distribution, and so does the global optimum (it solves that LP at its own wait).
    Interval bounds are Lagrangian (weak duality: valid for any multiplier) with the
    multiplier moving along psi as the LP's basis dictates, which makes them second-order
    accurate around the optimum: a few nodes instead of hundreds of LPs.
    Reference (``lp="highspy"``, or ``"scipy"``): on an interval [a, b], the LP (HiGHS) "minimise
    the objective with phi fixed at a, subject to a <= phi(theta) <= b" is a lower bound for
    every theta whose wait is in [a, b]; its solution, evaluated exactly, is an upper bound;
    the bound also keeps a linear under-estimate of how the background jobs' wait grows
    inside the interval (see :func:`_interval_cost`). HiGHS never prints (its banner is sent
    to /dev/null); if it ends an LP without an optimum or an infeasibility proof, that
    interval falls back to the one-row relaxation solved exactly (counted in
    ``info["lp_fallbacks"]``).
``local``
    softmax parametrisation of each theta_t, exact gradients, L-BFGS-B from several feasible
    starts (uniform, biased to "all together", random; the random ones from ``seed``), on an
    active set of options that grows until the first-order (KKT) conditions hold over all
    options (column generation; ``active_set=False`` runs L-BFGS on every option instead).
    The answer is a KKT point of the full problem either way; the active set keeps the
    L-BFGS dimension at tens of options instead of GPT-2's 28,637.
``penalty``
    the paper's approach (section IV-F): the equality constraints (II) and theta >= 0 (III)
    are relaxed into a quadratic penalty whose weight is orders of magnitude above the
    expected JCTs; plain first-order descent (gradient steps with Armijo backtracking);
    the final point is clipped and renormalised onto the simplices.

Examples
--------
>>> from schedlab.nona.workload import Cluster, build_workload, job_f
>>> c = Cluster(servers=2, bandwidth_gbps=80)
>>> w = build_workload(classes=[job_f()], load=0.3, cluster=c, background_ratio=float("inf"))
>>> r = solve(w, c, method="global")
>>> r.gap <= 1e-6 * r.objective + 1e-12
True
>>> r.tau["f"] < 0.022  # distributing f beats its 22 ms on one server
True
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import heapq
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from schedlab.nona import _lagrange
from schedlab.nona.decision import DEFAULT_MAX_OPTIONS, ClassSpace, class_space, set_partitions, space_size
from schedlab.nona.queueing import UnstableLinkError
from schedlab.nona.workload import BACKGROUND_COMM, BACKGROUND_COMPUTE, INFERENCE, Cluster, JobClass

METHODS = ("global", "local", "penalty")
#: how an option's subgraph time is priced: (X)-(XI) as typeset, or the dependency-aware longest path
PRICINGS = ("paper", "critical_path", "critical_path_queued")
#: the pricing every public entry point uses unless told otherwise: the dependency-aware one, which
#: the simulator confirms (tests/nona/test_model_vs_sim.py); "paper" (the literal (X)-(XI)) predicts
#: gains for splits of a dependent chain that the simulator refutes (docs/nona.md, "Pricing a partition")
DEFAULT_PRICING = "critical_path"


class InfeasibleError(ValueError):
    """No theta satisfies the stability condition (VII), rho < 1."""


@dataclass
class Problem:
    """The formulation compiled to arrays (one row per option omega of every Omega_t).

    ``A[o, i]`` / ``n[o, i]``: chi_i(omega_o) = A + n * phi (``-inf`` pads missing parts);
    ``S1``/``S2``: sums of S_e / S_e^2 over the crossing edges of the option;
    ``beta``: arrival rate of the option's class; ``cls``: class index; ``starts``: first
    option of each distribution (options of a distribution are contiguous, the "all
    together" option first). ``const``/``phi_coef``: tau^j = const_j + phi_coef_j phi +
    sum of the class's theta * max chi.
    """

    classes: list[JobClass]
    cluster: Cluster
    spaces: list[ClassSpace | None]
    A: np.ndarray
    n: np.ndarray
    S1: np.ndarray
    S2: np.ndarray
    beta: np.ndarray
    cls: np.ndarray
    starts: np.ndarray
    const: np.ndarray
    phi_coef: np.ndarray
    rho0: float
    N0: float
    search_space: int
    n_distributions: int
    pricing: str = "paper"
    #: ``critical_path_queued``: per-server load rho_s and task wait W_s (:func:`server_queue`); else 0
    server_load: float = 0.0
    server_wait: float = 0.0
    rates: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.rates = np.array([j.arrival_rate for j in self.classes])
        self.r = self.beta * self.S1  # d rho / d theta
        self.a = self.beta * self.S2  # d N / d theta (N = PK numerator)
        self.size = np.diff(np.append(self.starts, len(self.beta)))
        self.dist = np.repeat(np.arange(len(self.starts)), self.size)
        self.const_total = float(self.rates @ self.const)
        self.phi_weight = float(self.rates @ self.phi_coef)

    @property
    def n_options(self) -> int:
        return len(self.beta)

    def local_theta(self) -> np.ndarray:
        """Every distribution on its "all intermediate tasks together with source and sink" option."""
        th = np.zeros(self.n_options)
        th[self.starts] = 1.0
        return th

    def uniform_theta(self) -> np.ndarray:
        return 1.0 / self.size[self.dist]

    def phi_min(self) -> float:
        """The wait with no inference transfer (background only): a lower bound on phi(theta)."""
        return self.N0 / (2 * (1 - self.rho0))


def compile_problem(
    classes: Sequence[JobClass],
    cluster: Cluster,
    *,
    direct_edge_branch: bool = True,
    max_options: int = DEFAULT_MAX_OPTIONS,
    pricing: str = DEFAULT_PRICING,
    oversized: str = "error",
) -> Problem:
    """Build the arrays of (IV)-(XII) for ``classes`` on ``cluster``; validates the inputs.

    ``pricing`` (one of :data:`PRICINGS`) chooses how an option's subgraph time is priced:
    ``"paper"`` (X)-(XI) as typeset, ``"critical_path"`` the dependency-aware longest path
    (see the module docstring). ``direct_edge_branch`` applies to ``"paper"`` only.
    ``oversized`` (:data:`schedlab.nona.decision.OVERSIZED`): a subgraph whose Omega_t exceeds
    ``max_options`` is an error (default) or kept on one server (``"keep_together"``).
    """
    _check_pricing(pricing, direct_edge_branch)
    classes = list(classes)
    if not classes:
        raise ValueError("the workload has no job class")
    names = [j.name for j in classes]
    if len(set(names)) != len(names):
        raise ValueError(f"job class names must be unique, got {names}")
    mu, nu = cluster.link_bytes_per_s, cluster.compute_rate
    blocks: list[tuple[np.ndarray, np.ndarray]] = []
    S1: list[np.ndarray] = []  # per subgraph, concatenated at the end (list.extend of arrays is slow)
    S2: list[np.ndarray] = []
    beta: list[np.ndarray] = []
    cls: list[np.ndarray] = []
    starts: list[int] = []
    n_rows = 0
    const = np.zeros(len(classes))
    phi_coef = np.zeros(len(classes))
    spaces: list[ClassSpace | None] = []
    rho0 = N0 = 0.0
    rho_s = wait = 0.0
    if pricing == "critical_path_queued":
        rho_s, wait = server_queue(classes, cluster)
    for ci, j in enumerate(classes):
        if j.kind == BACKGROUND_COMM:
            s = j.transfer_bytes / mu
            const[ci] = s + sum(d["work_s"] for _, d in j.dag.nodes(data=True)) / nu
            phi_coef[ci] = 1.0
            rho0 += j.arrival_rate * s
            N0 += j.arrival_rate * s * s
            spaces.append(None)
            continue
        if j.kind == BACKGROUND_COMPUTE or j.dag.number_of_nodes() == 1:
            const[ci] = sum(d["work_s"] for _, d in j.dag.nodes(data=True)) / nu + wait
            spaces.append(class_space(j.name, j.dag, max_options, oversized) if j.kind == INFERENCE else None)
            continue
        sp = class_space(j.name, j.dag, max_options, oversized)
        spaces.append(sp)
        dag = j.dag
        inner = {x for sub in sp.subgraphs for x in sub.intermediate}
        const[ci] = sum(d["work_s"] for x, d in dag.nodes(data=True) if x not in inner) / nu
        if pricing == "critical_path_queued":
            const[ci] += wait * _queued_tasks(dag, sp, inner)
        for sub, opts in zip(sp.subgraphs, sp.options):
            starts.append(n_rows)
            if pricing == "paper":
                A, cnt, s1, s2 = _subgraph_rows(dag, sub, opts, mu, nu, direct_edge_branch)
            else:
                A, cnt, s1, s2 = _subgraph_rows_critical(dag, sub, opts, mu, nu, wait)
            blocks.append((A, cnt))
            S1.append(np.asarray(s1, dtype=float))
            S2.append(np.asarray(s2, dtype=float))
            beta.append(np.full(len(opts), float(j.arrival_rate)))
            cls.append(np.full(len(opts), ci, dtype=int))
            n_rows += len(opts)
    width = max((b[0].shape[1] for b in blocks), default=1)
    # column-major: the per-branch columns are contiguous (the global solver scans them one at a time)
    A_arr = np.full((n_rows, width), -np.inf, order="F")
    n_arr = np.zeros((n_rows, width), order="F")
    row = 0
    for A, cnt in blocks:
        A_arr[row : row + len(A), : A.shape[1]] = A
        n_arr[row : row + len(A), : A.shape[1]] = cnt
        row += len(A)
    ss, nd = space_size([s for s in spaces if s is not None])

    def cat(parts: list[np.ndarray], dtype=float) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    return Problem(
        classes,
        cluster,
        spaces,
        A_arr,
        n_arr,
        cat(S1),
        cat(S2),
        cat(beta),
        cat(cls, int),
        np.array(starts, dtype=int),
        const,
        phi_coef,
        rho0,
        N0,
        ss,
        nd,
        pricing,
        server_load=rho_s,
        server_wait=wait,
    )


def _check_pricing(pricing: str, direct_edge_branch: bool) -> None:
    """Refuse an unknown pricing, and ``direct_edge_branch=False`` where it has no meaning."""
    if pricing not in PRICINGS:
        raise ValueError(f"pricing must be one of {PRICINGS}, got {pricing!r}")
    if pricing != "paper" and not direct_edge_branch:
        raise ValueError(
            f"direct_edge_branch=False applies to pricing='paper' only: under {pricing!r} a "
            "crossing source -> sink edge is a dependency like any other and is always priced"
        )


def server_queue(classes: Sequence[JobClass], cluster: Cluster) -> tuple[float, float]:
    """``(rho_s, W_s)``: per-server compute load and PK task wait of ``classes`` on ``cluster``.

    Every task of every class with compute (inference and background compute; background
    transfers use no server) is one customer of a uniformly chosen server
    (:func:`schedlab.nona.queueing.server_wait`). Independent of theta: every placement Nona's
    tables draw puts each task on a uniformly random server, so a server's load and task mix
    do not depend on the partition chosen.

    Examples
    --------
    >>> from schedlab.nona.workload import Cluster, build_workload, job_f
    >>> c = Cluster(servers=2, bandwidth_gbps=80)
    >>> w = build_workload(classes=[job_f()], load=0.3, cluster=c, background_ratio=float("inf"))
    >>> rho, wait = server_queue(w, c)
    >>> round(rho, 6), wait > 0
    (0.3, True)
    """
    from schedlab.nona.queueing import server_wait

    nu = cluster.compute_rate
    jobs = [j for j in classes if j.kind != BACKGROUND_COMM]
    times = [np.array([d["work_s"] / nu for _, d in j.dag.nodes(data=True)]) for j in jobs]
    return server_wait(
        np.array([j.arrival_rate for j in jobs]),
        np.array([t.sum() for t in times]),
        np.array([(t * t).sum() for t in times]),
        int(cluster.servers),
    )


def _queued_tasks(dag, sp: ClassSpace, inner: set) -> int:
    """How many of a class's queue waits ``critical_path_queued`` charges to its constant term:
    one per task outside the subgraphs' intermediate tasks that is not a subgraph's sink (the
    root, at the job's arrival, and the bottlenecks of a chain); the sinks' waits are in their
    subgraphs' rows (:func:`_subgraph_rows_critical`)."""
    sinks = {sub.sink for sub in sp.subgraphs}
    return sum(1 for x in dag.nodes if x not in inner and x not in sinks)


def _subgraph_edges(dag, sub, mu: float):
    """The subgraph's edges as (u, v, S_e), in the order of its tasks (source, intermediate in
    topological order, sink) and of the DAG's successor lists: never in the order of a Python
    set of names, which changes with the hash seed from process to process and would change
    the sums of (VI)/(VIII) in their last bits, and with them near-tied optima."""
    members = {sub.source, sub.sink, *sub.intermediate}
    order = [sub.source, *sub.intermediate, sub.sink]
    return [(u, v, dag.edges[u, v]["bytes"] / mu) for u in order for v in dag.succ[u] if v in members]


@functools.lru_cache(maxsize=16)
def _option_labels(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels (part of each intermediate task, then source part, sink part) of Omega for m tasks.

    Same order as :func:`schedlab.nona.decision.options`: partitions in restricted-growth
    order, then the source part, then the sink part.
    """
    rgs, sizes = [], []
    for pi in set_partitions(range(m)):
        lab = [0] * m
        for i, part in enumerate(pi):
            for x in part:
                lab[x] = i
        rgs.append(lab)
        sizes.append(len(pi))
    rows, K = [], []
    for lab, k in zip(rgs, sizes):
        for s_ in range(k):
            for t_ in range(k):
                rows.append([*lab, s_, t_])
                K.append(k)
    out = np.array(rows, dtype=np.int64).reshape(len(rows), m + 2), np.array(K, dtype=np.int64)
    out[0].flags.writeable = False
    out[1].flags.writeable = False
    return out


def _labels_of(opts, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, parts per option, labels transposed) of an option list: the full Omega table, or
    the one all-together row of a ``together_only`` list (whose full table is never built), or the
    table of a list that lays out its own options (``label_table``: a branch space)."""
    if hasattr(opts, "label_table"):
        return opts.label_table()
    if getattr(opts, "together_only", False):
        lab = np.zeros((1, m + 2), dtype=np.int64)
        return lab, np.ones(1, dtype=np.int64), np.ascontiguousarray(lab.T)
    lab, K = _option_labels(m)
    return lab, K, _option_labels_T(m)


@functools.lru_cache(maxsize=16)
def _option_labels_T(m: int) -> np.ndarray:
    """:func:`_option_labels` labels, transposed and contiguous (one row per task)."""
    out = np.ascontiguousarray(_option_labels(m)[0].T)
    out.flags.writeable = False
    return out


def _subgraph_rows(dag, sub, opts, mu: float, nu: float, direct_edge_branch: bool):
    """(A, n, S1, S2) of every option of one subgraph, vectorised over the options.

    Options come from :func:`schedlab.nona.decision.options`; each is turned into a label per
    task (its part; the source gets ``source_part``, the sink ``sink_part``). Column ``i`` of A
    is branch i's chi at phi = 0 (X); the last column holds the crossing direct source -> sink
    transfer when ``direct_edge_branch``. Padding is ``-inf``. Same result as
    :func:`_subgraph_rows_reference`, the per-option loop kept as the test oracle.
    """
    inter = list(sub.intermediate)
    idx = {x: i for i, x in enumerate(inter)}
    m = len(inter)
    src, snk = m, m + 1
    idx[sub.source], idx[sub.sink] = src, snk
    lab, K, labT = _labels_of(opts, m)
    O = len(opts)
    if len(lab) != O or (
        O and tuple(opts[-1].partition[0]) != tuple(inter[i] for i in range(m) if lab[-1, i] == 0)
    ):
        raise AssertionError("options are not in decision.options() order")  # guards the vectorised layout
    edges = _subgraph_edges(dag, sub, mu)
    width = int(K.max()) + (1 if direct_edge_branch else 0)
    work = np.array([dag.nodes[x]["work_s"] / nu for x in inter])
    base = np.arange(O) * width  # flat index of each option's first column
    # A and cnt are accumulated by one bincount over (flat index, value) pairs listed in the
    # order of the former sequential updates (tasks, then edges), so every entry is the same
    # sum in the same order: bit-identical to the per-update version, much faster
    a_idx: list[np.ndarray] = []
    a_val: list[np.ndarray] = []
    c_idx: list[np.ndarray] = []
    for x in range(m):  # each task's compute in its part (X)
        a_idx.append(base + labT[x])
        a_val.append(np.full(O, work[x]))
    S1 = np.zeros(O)
    S2 = np.zeros(O)
    for u, v, sv in edges:
        iu, iv = idx[u], idx[v]
        cross = labT[iu] != labT[iv]
        S1 += cross * sv
        S2 += cross * sv * sv
        hit = np.flatnonzero(cross)
        if iu == src and iv == snk:
            if direct_edge_branch:
                a_idx.append(base[hit] + (width - 1))
                a_val.append(np.full(len(hit), sv))
                c_idx.append(a_idx[-1])
            continue
        recv = labT[iu] if iv == snk else labT[iv]  # sink edges wait in the sender's branch
        a_idx.append(base[hit] + recv[hit])
        a_val.append(np.full(len(hit), sv))
        c_idx.append(a_idx[-1])
    size = O * width
    A = (
        np.bincount(
            np.concatenate(a_idx) if a_idx else np.zeros(0, dtype=np.int64),
            weights=np.concatenate(a_val) if a_val else None,
            minlength=size,
        )
        .astype(float)
        .reshape(O, width)
    )
    cnt = (
        np.bincount(np.concatenate(c_idx) if c_idx else np.zeros(0, dtype=np.int64), minlength=size)
        .astype(float)
        .reshape(O, width)
    )
    pad = np.arange(width)[None, :] >= K[:, None]
    if direct_edge_branch:
        pad[:, width - 1] = cnt[:, width - 1] == 0
    A[pad] = -np.inf
    cnt[pad] = 0.0
    return A, cnt, S1, S2


def _subgraph_rows_reference(dag, sub, opts, mu: float, nu: float, direct_edge_branch: bool):
    """Per-option loop version of :func:`_subgraph_rows` (slow; the tests' oracle)."""
    edges = _subgraph_edges(dag, sub, mu)
    rows_A, rows_n, S1, S2 = [], [], [], []
    for o in opts:
        part = {x: i for i, p in enumerate(o.partition) for x in p}
        part[sub.source], part[sub.sink] = o.source_part, o.sink_part
        A = [sum(dag.nodes[x]["work_s"] for x in p) / nu for p in o.partition]
        cnt = [0.0] * len(o.partition)
        s1 = s2 = 0.0
        direct = None
        for u, v, sv in edges:
            if part[u] == part[v]:
                continue
            s1 += sv
            s2 += sv * sv
            if u == sub.source and v == sub.sink:
                direct = sv
                continue
            i = part[u] if v == sub.sink else part[v]
            A[i] += sv
            cnt[i] += 1
        if direct is not None and direct_edge_branch:
            A.append(direct)
            cnt.append(1.0)
        rows_A.append(A)
        rows_n.append(cnt)
        S1.append(s1)
        S2.append(s2)
    return rows_A, rows_n, S1, S2


def _subgraph_rows_critical(dag, sub, opts, mu: float, nu: float, task_wait: float = 0.0):
    """(A, n, S1, S2) of every option under the dependency-aware pricing (``critical_path``).

    The option's subgraph is scheduled as the simulator runs it on an otherwise idle cluster,
    with the link wait phi added to every transfer:

    * each part's server runs its tasks one at a time, in the subgraph's topological order
      (the paper's chi_i also sums a part's compute); a task starts when its predecessors are
      done, their outputs have arrived and the previous task of its part is done;
    * an edge whose ends are on different servers and that carries ``b > 0`` bytes is a
      transfer: it waits phi (the other jobs' traffic, PK) and the job's own earlier transfers
      (the link is one FIFO queue), then takes ``b / mu``. Transfers enter the link in the
      order their senders are scheduled here (the subgraph's topological order; a sender's
      transfers in its receivers' order). A zero-byte edge sends nothing, as in the simulator.

    The time from the source's completion to the sink's start is then a longest path, max over
    paths P of ``a_P + n_P phi`` (``n_P``: the transfers entered along P). Column ``c`` of A holds
    the largest ``a_P`` with ``n_P = c`` (``n = c``), so ``max_c (A + n phi)`` is that time
    exactly, a convex non-decreasing piecewise-linear function of phi as the solvers need.
    One dynamic programme over the tasks, vectorised over the options;
    :func:`_subgraph_rows_critical_reference` is the per-option oracle.

    ``task_wait`` adds the servers' queues (``critical_path_queued``, see :func:`server_queue`):
    a task joins its server's FIFO queue when its last input is ready (its own server's
    predecessor done, or a transfer arrived) and waits ``task_wait`` there for other jobs' work
    before it can start; tasks of the job already queued on the same server still run first
    (siblings enqueued together wait once). A constant per task, so the rows stay lines in phi;
    at 0 (the default) they are the idle-cluster rows, bit for bit.
    """
    inter = list(sub.intermediate)
    m = len(inter)
    lab, _, labT = _labels_of(opts, m)
    O = len(opts)
    if len(lab) != O:
        raise AssertionError("options are not in decision.options() order")  # guards the vectorised layout
    idx = {x: i for i, x in enumerate(inter)}
    idx[sub.source], idx[sub.sink] = m, m + 1
    width = m + 2  # a path enters at most one transfer per task it leaves: <= m + 1 (source included)
    order = [*inter, sub.sink]
    rank = {x: i for i, x in enumerate([sub.source, *order])}
    S1, S2 = np.zeros(O), np.zeros(O)
    ancestors: dict = {sub.source: frozenset()}
    for x in inter:  # topological order: the subgraph's ancestors of x, built from its predecessors'
        ancestors[x] = frozenset().union(*(ancestors[u] | {u} for u in dag.pred[x] if u in ancestors))
    # lines are kept as (crossings, options): a shift by one crossing is a row slice
    finish: dict = {}
    arrival: dict = {}
    link = np.full((width, O), -np.inf)  # when the job's last transfer so far leaves the link

    def send(u) -> None:
        for v in sorted((v for v in dag.succ[u] if v in rank), key=rank.__getitem__):
            b = dag.edges[u, v]["bytes"]
            if b <= 0:
                continue
            cross = labT[idx[u]] != labT[idx[v]]
            S1[:] += cross * (b / mu)
            S2[:] += cross * (b / mu) ** 2
            out = np.full((width, O), -np.inf)
            out[1:] = finish[u][:-1]  # + phi
            np.maximum(out, link, out=out)
            out += b / mu
            np.copyto(link, out, where=cross)
            arrival[u, v] = out

    start = np.full((width, O), -np.inf)
    start[0] = 0.0
    finish[sub.source] = start  # times are counted from the source's completion
    send(sub.source)
    for pos_x, x in enumerate(order):
        ready = np.full((width, O), -np.inf)
        lx = labT[idx[x]]
        for u in dag.pred[x]:
            if u not in finish:
                continue
            if (u, x) in arrival:
                cross = labT[idx[u]] != lx
                np.maximum(ready, finish[u], out=ready, where=~cross)
                np.maximum(ready, arrival[u, x], out=ready, where=cross)
            else:
                np.maximum(ready, finish[u], out=ready)
        if task_wait:  # x joins its server's queue when its last input is ready, and waits there
            ready += task_wait
        if x != sub.sink:  # the sink's predecessors already include every task (it is their bottleneck)
            for y in inter[:pos_x]:  # the previous tasks of x's part run first on its server
                if y not in ancestors[x]:  # (an ancestor's path into x already dominates: phi >= 0)
                    np.maximum(ready, finish[y], out=ready, where=labT[idx[y]] == lx)
            ready += dag.nodes[x]["work_s"] / nu
            finish[x] = ready
            send(x)
        else:
            finish[x] = ready
    used = np.isfinite(finish[sub.sink]).any(axis=1)
    last = int(np.flatnonzero(used).max()) + 1 if used.any() else 1
    A = finish[sub.sink][:last].T  # (options, crossings), column-major like the paper's rows
    cnt = np.where(np.isfinite(A), np.arange(last, dtype=float)[None, :], 0.0)
    return A, cnt, S1, S2


def _subgraph_rows_critical_reference(dag, sub, opts, mu: float, nu: float, phi: float) -> list[float]:
    """Per-option schedule at wait ``phi``: the sink's start after the source's completion.

    The slow oracle of :func:`_subgraph_rows_critical`, with the same rules: tasks in
    topological order, each at the latest of its inputs' arrivals and its part's server being
    free; transfers through one FIFO link in the order their senders are scheduled, each
    waiting phi first.
    """
    order = [*sub.intermediate, sub.sink]
    rank = {x: i for i, x in enumerate([sub.source, *order])}
    out = []
    for o in opts:
        part = {x: i for i, p in enumerate(o.partition) for x in p}
        part[sub.source], part[sub.sink] = o.source_part, o.sink_part
        done = {sub.source: 0.0}
        arrive: dict = {}
        free: dict[int, float] = {}
        link = -math.inf

        def send(u):
            nonlocal link
            for v in sorted((v for v in dag.succ[u] if v in rank), key=rank.__getitem__):
                b = dag.edges[u, v]["bytes"]
                if part[u] != part[v] and b > 0:
                    link = max(done[u] + phi, link) + b / mu
                    arrive[u, v] = link

        send(sub.source)
        for x in order:
            t = free.get(part[x], 0.0) if x != sub.sink else 0.0
            for u in dag.pred[x]:
                if u in done:
                    t = max(t, arrive.get((u, x), done[u]))
            if x == sub.sink:
                out.append(t)
                break
            done[x] = t + dag.nodes[x]["work_s"] / nu
            free[part[x]] = done[x]
            send(x)
    return out


@dataclass
class Evaluation:
    """Objective (I) and its pieces at one theta."""

    objective: float
    rho: float
    phi: float
    tau: np.ndarray
    grad: np.ndarray | None = None


def evaluate(prob: Problem, theta: np.ndarray, grad: bool = False) -> Evaluation:
    """(IV)-(XII) and (I) at ``theta`` (any non-negative vector; not required to sum to 1).

    The gradient is exact wherever the max in (XI) is attained by one branch (a
    subgradient at ties). Raises :class:`UnstableLinkError` if rho >= 1.
    """
    rho = prob.rho0 + prob.r @ theta
    if not rho < 1:
        raise UnstableLinkError(f"link load rho = {rho:.6g} >= 1 (constraint VII)")
    N = prob.N0 + prob.a @ theta
    phi = N / (2 * (1 - rho))
    chi = prob.A + prob.n * phi
    arg = chi.argmax(axis=1) if prob.n_options else np.zeros(0, dtype=int)
    M = chi[np.arange(prob.n_options), arg] if prob.n_options else np.zeros(0)
    tau = prob.const + prob.phi_coef * phi + np.bincount(prob.cls, theta * M, minlength=len(prob.classes))
    obj = float(prob.rates @ tau)
    g = None
    if grad:
        slope = prob.beta * prob.n[np.arange(prob.n_options), arg] if prob.n_options else np.zeros(0)
        dF_dphi = float(slope @ theta) + prob.phi_weight
        dphi = prob.a / (2 * (1 - rho)) + N * prob.r / (2 * (1 - rho) ** 2)
        g = prob.beta * M + dF_dphi * dphi
    return Evaluation(obj, float(rho), float(phi), tau, g)


def _M(prob: Problem, phi: float) -> np.ndarray:
    return (prob.A + prob.n * phi).max(axis=1) if prob.n_options else np.zeros(0)


def _clean(prob: Problem, theta: np.ndarray) -> np.ndarray:
    th = np.clip(theta, 0.0, None)
    sums = np.add.reduceat(th, prob.starts) if prob.n_options else np.zeros(0)
    bad = sums <= 0
    if bad.any():  # a distribution with no mass: fall back to its all-together option
        th[prob.starts[bad]] = 1.0
        sums[bad] = 1.0
    return th / sums[prob.dist]


@dataclass
class Result:
    """A solution: theta (concatenated distributions) and what it predicts."""

    method: str
    problem: Problem
    theta: np.ndarray
    objective: float
    rho: float
    phi: float
    tau: dict[str, float]
    solve_seconds: float
    lower_bound: float | None = None
    info: dict = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        return None if self.lower_bound is None else self.objective - self.lower_bound

    @property
    def mean_jct_s(self) -> float:
        return self.objective / float(self.problem.rates.sum())

    def distributions(self) -> dict[str, list[tuple]]:
        """Per inference class: [(Subgraph, [(Option, p), ...]), ...]."""
        out: dict[str, list[tuple]] = {}
        k = 0
        for j, sp in zip(self.problem.classes, self.problem.spaces):
            if sp is None:
                continue
            if j.dag.number_of_nodes() == 1:
                out[j.name] = []
                continue
            rows = []
            for sub, opts in zip(sp.subgraphs, sp.options):
                rows.append((sub, [(o, float(self.theta[k + i])) for i, o in enumerate(opts)]))
                k += len(opts)
            out[j.name] = rows
        return out


def theta_from_tables(prob: Problem, doc: dict) -> np.ndarray:
    """The theta of ``prob`` that a probability table (optimiser JSON format, ``doc["classes"]``)
    describes: the model's view of the placement a table scheme draws in the simulator.

    Parts may be listed in any order. Every distribution of ``prob`` needs an entry; an
    option that is not in Omega_t, or probabilities not summing to 1, are refused.
    """
    theta = np.zeros(prob.n_options)
    k = 0
    known = doc.get("classes", {})
    for j, sp in zip(prob.classes, prob.spaces):
        if sp is None or j.dag.number_of_nodes() == 1:
            continue
        entries = {(e["source"], e["sink"]): e for e in known.get(j.name, {}).get("subgraphs", [])}
        for sub, opts in zip(sp.subgraphs, sp.options):
            e = entries.get((sub.source, sub.sink))
            if e is None:
                raise ValueError(
                    f"tables: class {j.name!r} has no entry for subgraph {sub.source!r} -> {sub.sink!r}"
                )
            index = {o: i for i, o in enumerate(opts)}
            for o in e["options"]:
                i = index.get(_canonical_option(sub, o))
                if i is None:
                    raise ValueError(
                        f"tables: class {j.name!r}, subgraph {sub.source!r} -> {sub.sink!r}: option "
                        f"{o} is not in Omega_t of intermediate tasks {list(sub.intermediate)}"
                    )
                theta[k + i] += float(o["p"])
            total = theta[k : k + len(opts)].sum()
            if abs(total - 1.0) > 1e-9:
                raise ValueError(
                    f"tables: class {j.name!r}, subgraph {sub.source!r} -> {sub.sink!r}: "
                    f"probabilities sum to {total}, not 1"
                )
            k += len(opts)
    return theta


def _canonical_option(sub, o: dict):
    """A table option as the :class:`~schedlab.nona.decision.Option` of Omega_t (parts ordered by
    their first task in the subgraph's order, source/sink part indices remapped)."""
    from schedlab.nona.decision import Option

    rank = {x: i for i, x in enumerate(sub.intermediate)}
    parts = [tuple(sorted(p, key=lambda x: rank.get(x, -1))) for p in o["partition"]]
    if any(x not in rank for p in parts for x in p):
        return None
    order = sorted(range(len(parts)), key=lambda i: rank[parts[i][0]])
    new = {old: pos for pos, old in enumerate(order)}
    return Option(tuple(parts[i] for i in order), new[o.get("source_part", 0)], new[o.get("sink_part", 0)])


def placement_counts(result: Result, tol: float = 1e-6) -> dict[str, int]:
    """How many subgraphs the solution splits and how many it places at random.

    ``split_subgraphs``: distributions whose "all together" option (each distribution's
    first) has probability below ``1 - tol``; ``mixed_subgraphs``: distributions with more
    than one option above ``tol`` (Nona's stochastic placement). Probabilities within ``tol``
    of 0 or 1 are solver rounding (the local solver's softmax never reaches exactly 0).

    >>> from schedlab.nona.workload import Cluster, build_workload, job_f
    >>> cl = Cluster(servers=2, bandwidth_gbps=80)
    >>> wl = build_workload(classes=[job_f()], load=0.5, cluster=cl, comm_load=0.0)
    >>> placement_counts(solve(wl, cl))
    {'split_subgraphs': 1, 'mixed_subgraphs': 0}
    """
    p = result.problem
    if not p.n_options:
        return {"split_subgraphs": 0, "mixed_subgraphs": 0}
    support = np.add.reduceat((result.theta > tol).astype(int), p.starts)
    return {
        "split_subgraphs": int(np.sum(result.theta[p.starts] < 1 - tol)),
        "mixed_subgraphs": int(np.sum(support > 1)),
    }


def distributed_share(result: Result, job: str) -> float:
    """Probability that Nona places job ``job``'s one subgraph split over servers (Table I's
    "distribute" share): one minus the probability of its all-together options.

    >>> from schedlab.nona.workload import Cluster, build_workload, job_f
    >>> cl = Cluster(servers=2, bandwidth_gbps=80)
    >>> wl = build_workload(classes=[job_f()], load=0.5, cluster=cl, comm_load=0.0)
    >>> distributed_share(solve(wl, cl), "f")
    1.0
    """
    rows = result.distributions().get(job)
    if rows is None or len(rows) != 1:
        raise ValueError(
            f"distributed_share needs a job with exactly one subgraph; {job!r} has "
            f"{'no distribution' if rows is None else len(rows)}"
        )
    ((_, opts),) = rows
    return 1.0 - sum(p for o, p in opts if len(o.partition) == 1)


def _finish(prob: Problem, method: str, theta: np.ndarray, t0: float, **kw) -> Result:
    theta = _clean(prob, theta)
    ev = evaluate(prob, theta)
    return Result(
        method,
        prob,
        theta,
        ev.objective,
        ev.rho,
        ev.phi,
        {j.name: float(t) for j, t in zip(prob.classes, ev.tau)},
        time.perf_counter() - t0,
        **kw,
    )


def _check_feasible(prob: Problem) -> None:
    if not prob.rho0 < 1:
        raise InfeasibleError(
            f"the background communication jobs alone load the link to rho = {prob.rho0:.4g} "
            ">= 1: no placement is stable (constraint VII)"
        )


# --------------------------------------------------------------------------- global


def _interval_cost(prob: Problem, lo: float) -> tuple[np.ndarray, float]:
    """Linear lower bound c.theta + k of the objective over {theta : phi(theta) >= lo}.

    Each max_i chi_i is non-decreasing in phi, so it is >= its value at ``lo``. The
    background term W phi(theta) (W = sum of the background comm rates) is bounded below
    linearly: phi - lo = (N - 2 lo (1 - rho)) / (2 (1 - rho)) >= (N - 2 lo (1 - rho)) /
    (2 (1 - rho0)) because the numerator is >= 0 when phi >= lo and 1 - rho <= 1 - rho0.
    """
    W, u0 = prob.phi_weight, 1 - prob.rho0
    c = prob.beta * _M(prob, lo) + W * (prob.a + 2 * lo * prob.r) / (2 * u0)
    k = prob.const_total + W * lo + W * (prob.N0 - 2 * lo * u0) / (2 * u0)
    return c, k


def _interval_lp(prob: Problem, lo: float, hi: float, with_lower: bool):
    """min_theta of the lower bound of :func:`_interval_cost` s.t. lo <= phi(theta) <= hi (hi may be inf)."""
    c, k = _interval_cost(prob, lo)
    rows, rhs = [], []
    if math.isfinite(hi):  # N(theta) <= 2 hi (1 - rho(theta))
        rows.append(prob.a + 2 * hi * prob.r)
        rhs.append(2 * hi * (1 - prob.rho0) - prob.N0)
    if with_lower:  # N(theta) >= 2 lo (1 - rho(theta))
        rows.append(-(prob.a + 2 * lo * prob.r))
        rhs.append(prob.N0 - 2 * lo * (1 - prob.rho0))
    rows.append(prob.r)  # rho <= 1 (closure of VII)
    rhs.append(1 - prob.rho0)
    A_eq = np.zeros((len(prob.starts), prob.n_options))
    A_eq[prob.dist, np.arange(prob.n_options)] = 1.0
    from scipy.optimize import linprog

    res = linprog(
        c,
        A_ub=np.array(rows),
        b_ub=np.array(rhs),
        A_eq=A_eq,
        b_eq=np.ones(len(prob.starts)),
        bounds=(0, None),
        method="highs",
    )
    if res.status == 2:
        return None, math.inf
    if res.status != 0:
        raise _LPFailure(f"scipy/HiGHS status {res.status} ({res.message})")
    return res.x, float(res.fun) + k


class _LPFailure(RuntimeError):
    """HiGHS ended an interval LP without an optimum or an infeasibility proof."""


def _relaxed_interval_bound(prob: Problem, lo: float, hi: float):
    """Fallback for an interval LP that HiGHS could not solve: the same bound without the lower row.

    min c.theta + k s.t. phi(theta) <= hi (one row, exact by :func:`_lagrange.mckp`, no LP
    solver). Dropping "phi >= lo" enlarges the feasible set, so this stays a lower bound on the
    interval (weaker than the LP's); its solution is still an upper-bound candidate.
    """
    c, k = _interval_cost(prob, lo)
    if math.isinf(hi):  # no row: the cheapest option of every distribution
        S = _lagrange.select(c, prob.a, prob.starts, prob.dist, largest=False)
        theta = np.zeros(prob.n_options)
        theta[S] = 1.0
        return theta, float(c[S].sum()) + k
    sol = _lagrange.mckp(
        c, prob.a + 2 * hi * prob.r, 2 * hi * (1 - prob.rho0) - prob.N0, prob.starts, prob.dist
    )
    if not math.isfinite(sol.value):
        return None, math.inf
    return _lagrange.theta_of(prob.n_options, sol), sol.dual + k


@contextlib.contextmanager
def _stdout_to_devnull():
    """Discard what C code writes to file descriptor 1 (the HiGHS banner is printed by its
    constructor, before ``output_flag`` can be set); Python's own stdout is flushed first."""
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        ctypes.CDLL(None).fflush(None)  # C stdio buffers go to /dev/null, not to the restored stdout
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def _decoupled(prob: Problem, lo: float, hi: float, with_lower: bool):
    """The interval LP's optimum without HiGHS when the coupling rows do not bind.

    Without the three rows coupling the distributions (phi <= hi, phi >= lo, rho <= 1), the LP
    splits into one "pick the cheapest option" per distribution; if that choice satisfies the
    rows it is optimal for the full LP. Returns (theta, bound) or (None, None).
    """
    c, k = _interval_cost(prob, lo)
    pick = np.minimum.reduceat(c, prob.starts)
    theta = np.zeros(prob.n_options)
    # first option attaining each distribution's minimum
    hit = np.flatnonzero(c == pick[prob.dist])
    first = hit[np.unique(prob.dist[hit], return_index=True)[1]]
    theta[first] = 1.0
    R = prob.r @ theta
    N = prob.N0 + prob.a @ theta
    u = 1 - prob.rho0 - R
    if u < 0:
        return None, None
    if math.isfinite(hi) and N > 2 * hi * u:
        return None, None
    if with_lower and N < 2 * lo * u:
        return None, None
    return theta, float(pick.sum()) + k


class _HighsIntervalLP:
    """The interval LP of :func:`_interval_lp` kept in one HiGHS model and re-solved warm.

    Columns: theta (n options), then R = rho(theta) - rho0 and y = (N(theta) - N0) / sa as
    two auxiliary variables, so that changing the interval only changes two coefficients
    and two row bounds (and the costs): rows are the distribution sums (= 1),
    R - r.theta = 0, y - a.theta / sa = 0, the upper row (N0 + sa y) / (2 hi) + R <= 1 - rho0
    and the lower row (N0 + sa y) / (2 lo) + R >= 1 - rho0. R <= 1 - rho0 is a column bound.
    """

    def __init__(self, prob: Problem):
        import highspy

        self.hs = highspy
        self.prob = prob
        n, d = prob.n_options, len(prob.starts)
        self.n, self.row_up, self.row_lo = n, d + 2, d + 3
        # y = N'/sa keeps the N row O(1) (a = beta S^2 is tiny in seconds); the up/lo rows
        # are divided by 2 hi / 2 lo for the same reason: HiGHS tolerances are absolute
        self.sa = float(prob.a.max()) if prob.a.max() > 0 else 1.0
        # column-wise matrix: theta_o has (dist row: 1, R row: -r_o, y row: -a_o/sa); then R, y
        rows_theta = np.stack([prob.dist, np.full(n, d), np.full(n, d + 1)], axis=1).ravel()
        vals_theta = np.stack([np.ones(n), -prob.r, -prob.a / self.sa], axis=1).ravel()
        index = np.concatenate([rows_theta, [d, d + 2, d + 3], [d + 1, d + 2, d + 3]]).astype(np.int32)
        value = np.concatenate([vals_theta, [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
        start = np.arange(0, 3 * (n + 2) + 1, 3, dtype=np.int32)
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n + 2, d + 4
        inf = highspy.kHighsInf
        lp.col_cost_ = np.zeros(n + 2)
        lp.col_lower_ = np.zeros(n + 2)
        lp.col_upper_ = np.concatenate([np.full(n, inf), [1 - prob.rho0, inf]])
        lp.row_lower_ = np.concatenate([np.ones(d), [0.0, 0.0, -inf, -inf]])
        lp.row_upper_ = np.concatenate([np.ones(d), [0.0, 0.0, inf, inf]])
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = start
        lp.a_matrix_.index_ = index
        lp.a_matrix_.value_ = value
        with _stdout_to_devnull():
            self.h = highspy.Highs()
            self.h.setOptionValue("output_flag", False)
        self.h.setOptionValue("primal_feasibility_tolerance", 1e-10)
        self.h.setOptionValue("dual_feasibility_tolerance", 1e-10)
        self.h.passModel(lp)
        self.idx = np.arange(n, dtype=np.int32)

    def __call__(self, lo: float, hi: float, with_lower: bool):
        prob, h, inf = self.prob, self.h, self.hs.kHighsInf
        c, k = _interval_cost(prob, lo)
        h.changeColsCost(self.n, self.idx, c)
        if math.isfinite(hi):  # (N0 + sa y) / (2 hi) + R <= 1 - rho0
            h.changeCoeff(self.row_up, self.n + 1, self.sa / (2 * hi))
            h.changeRowBounds(self.row_up, -inf, 1 - prob.rho0 - prob.N0 / (2 * hi))
        else:
            h.changeRowBounds(self.row_up, -inf, inf)
        if with_lower:  # (N0 + sa y) / (2 lo) + R >= 1 - rho0
            h.changeCoeff(self.row_lo, self.n + 1, self.sa / (2 * lo))
            h.changeRowBounds(self.row_lo, 1 - prob.rho0 - prob.N0 / (2 * lo), inf)
        else:
            h.changeRowBounds(self.row_lo, -inf, inf)
        h.run()
        status = h.getModelStatus()
        if status == self.hs.HighsModelStatus.kInfeasible:
            return None, math.inf
        if status != self.hs.HighsModelStatus.kOptimal:
            raise _LPFailure(f"highspy status {h.modelStatusToString(status)!r}")
        x = np.asarray(h.getSolution().col_value)[: self.n]
        return x, float(h.getInfo().objective_function_value) + k


def _solve_global(
    prob: Problem,
    t0: float,
    rtol: float = 1e-6,
    atol: float = 1e-12,
    max_lps: int = 5000,
    lp: str = "lagrange",
    split: str = "bisect",
) -> Result:
    if prob.n_options == 0 or prob.size.max() == 1:
        return _finish(
            prob,
            "global",
            prob.local_theta(),
            t0,
            lower_bound=evaluate(prob, prob.local_theta()).objective,
            info={"lps": 0, "converged": True, "lp": lp},
        )
    if lp == "lagrange":
        if prob.pricing in ROOT_RELAXATION_PRICINGS:
            certified = _root_relaxation(prob, t0, rtol, atol)
            if certified is not None:
                return certified
        g = _lagrange.solve_global(prob, rtol=rtol, atol=atol, max_nodes=max_lps)
        # loading the compiled kernels (once per process) is not solve time: info["kernel_load_s"]
        res = _finish(
            prob, "global", g.theta, t0 + g.info["kernel_load_s"], lower_bound=g.lower_bound, info=g.info
        )
        # the bound is certified against the search's own evaluation; the final evaluation can
        # differ in the last bits, and a bound above an achieved value is never informative
        res.lower_bound = min(res.lower_bound, res.objective)
        return res
    return _solve_global_lp(prob, t0, rtol, atol, max_lps, lp, split)


#: pricings whose certified solve first tries :func:`_root_relaxation` (a valid bound under every pricing)
ROOT_RELAXATION_PRICINGS = PRICINGS


def _root_relaxation(prob: Problem, t0: float, rtol: float, atol: float) -> Result | None:
    """ "All together" certified by the root relaxation, or ``None``.

    Every theta has phi(theta) >= phi_min, so the linear under-estimate of
    :func:`_interval_cost` at ``lo = phi_min``, minimised distribution by distribution with the
    coupling rows dropped, is a lower bound of the objective over every theta (a relaxation).
    When "all together" is within tolerance of it, it is optimal. This settles in one pass the
    points where splitting pays only at the background-only wait, which the Lagrangian search
    otherwise brackets towards phi_min node after node (under the critical-path pricing:
    5,000 nodes, 1.6 s, unconverged at gap 3.7e-6 at one point of the benchmark grid).
    """
    c, k = _interval_cost(prob, prob.phi_min())
    bound = float(np.minimum.reduceat(c, prob.starts).sum()) + k
    together = evaluate(prob, prob.local_theta()).objective
    if together - bound > max(atol, rtol * abs(together)):
        return None
    res = _finish(
        prob,
        "global",
        prob.local_theta(),
        t0,
        lower_bound=min(bound, together),
        info={
            "nodes": 0,
            "lps": 0,
            "converged": True,
            "rtol": rtol,
            "lp": "lagrange",
            "root_relaxation": True,
        },
    )
    return res


def _solve_global_lp(
    prob: Problem, t0: float, rtol: float, atol: float, max_lps: int, lp: str, split: str
) -> Result:
    """The reference branch and bound: interval LPs (two rows) solved by HiGHS."""
    if lp == "highspy":
        model: list = []

        def solve_lp(lo, hi, with_lower):  # the HiGHS model is built on first use only
            if not model:
                model.append(_HighsIntervalLP(prob))
            return model[0](lo, hi, with_lower)
    elif lp == "scipy":
        solve_lp = lambda lo, hi, with_lower: _interval_lp(prob, lo, hi, with_lower)  # noqa: E731
    else:
        raise ValueError(f"lp must be 'lagrange', 'highspy' or 'scipy', got {lp!r}")
    best_theta = prob.local_theta()
    best = evaluate(prob, best_theta).objective
    lo0 = prob.phi_min()
    n_shortcut = 0
    S_pos = prob.S1[prob.S1 > 0]
    scale = float(np.median(S_pos)) if S_pos.size else 1.0
    n_lp = 0

    def consider(theta):
        nonlocal best, best_theta
        th = _clean(prob, theta)
        try:
            ev = evaluate(prob, th)
        except UnstableLinkError:
            return math.nan
        if ev.objective < best:
            best, best_theta = ev.objective, th
        return ev.phi

    heap: list[tuple[float, float, float, float]] = []

    n_fallback = 0

    def push(lo: float, hi: float) -> None:
        nonlocal n_lp, n_shortcut, n_fallback
        theta, lb = _decoupled(prob, lo, hi, with_lower=lo > lo0)
        if theta is None:
            try:
                theta, lb = solve_lp(lo, hi, with_lower=lo > lo0)
            except _LPFailure:  # documented fallback: the one-row relaxation, solved exactly
                theta, lb = _relaxed_interval_bound(prob, lo, hi)
                n_fallback += 1
            n_lp += 1
        else:
            n_shortcut += 1
        if theta is None:
            return
        f_phi = consider(theta)
        heapq.heappush(heap, (lb, lo, hi, f_phi))

    def tol() -> float:
        return max(atol, rtol * abs(best))

    push(lo0, math.inf)
    while heap and n_lp < max_lps:
        lb, lo, hi, f_phi = heap[0]
        if lb >= best - tol():
            break
        heapq.heappop(heap)
        if math.isinf(hi):
            mid = lo + max(2 * (lo - lo0), scale)
        elif split == "solution" and lo + 0.05 * (hi - lo) < f_phi < hi - 0.05 * (hi - lo):
            mid = f_phi  # the relaxation's own wait: where the bound is loosest
        else:
            mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # interval below float resolution
            continue
        push(lo, mid)
        push(mid, hi)
    lower = min(best, heap[0][0]) if heap else best  # heap entries: (bound, lo, hi, wait of the LP point)
    return _finish(
        prob,
        "global",
        best_theta,
        t0,
        lower_bound=lower,
        info={
            "lps": n_lp,
            "decoupled": n_shortcut,
            "rtol": rtol,
            "lp": lp,
            "lp_fallbacks": n_fallback,
            "converged": (best - lower) <= tol(),
        },
    )


# --------------------------------------------------------------------------- local


def _softmax(prob: Problem, z: np.ndarray) -> np.ndarray:
    zmax = np.maximum.reduceat(z, prob.starts)
    e = np.exp(z - zmax[prob.dist])
    return e / np.add.reduceat(e, prob.starts)[prob.dist]


def _restrict(prob: Problem, idx: np.ndarray) -> Problem:
    """The problem on the options ``idx`` only (sorted; at least one option per distribution)."""
    return Problem(
        prob.classes,
        prob.cluster,
        prob.spaces,
        prob.A[idx],
        prob.n[idx],
        prob.S1[idx],
        prob.S2[idx],
        prob.beta[idx],
        prob.cls[idx],
        np.searchsorted(idx, prob.starts),
        prob.const,
        prob.phi_coef,
        prob.rho0,
        prob.N0,
        prob.search_space,
        prob.n_distributions,
        prob.pricing,
    )


def _lbfgs(prob: Problem, starts: list[np.ndarray], maxiter: int, tight: bool = False):
    """Softmax-parametrised L-BFGS-B from each start; the best result and the evaluation count."""
    if prob.size.max() == 1:  # nothing to decide on this (sub)problem
        z = np.zeros(prob.n_options)
        return z, evaluate(prob, _softmax(prob, z)).objective, 0
    cap = 1e6 * max(1.0, abs(evaluate(prob, prob.local_theta()).objective))

    def fun(z):
        th = _softmax(prob, z)
        try:
            ev = evaluate(prob, th, grad=True)
        except UnstableLinkError:  # a steep wall beyond rho = 1, pointing back into the stable region
            rho = prob.rho0 + prob.r @ th
            g = cap * prob.r
            gz = th * (g - np.add.reduceat(th * g, prob.starts)[prob.dist])
            return cap * (1 + rho), gz
        g = ev.grad
        gz = th * (g - np.add.reduceat(th * g, prob.starts)[prob.dist])  # softmax chain rule
        return ev.objective, gz

    local_bias = np.zeros(prob.n_options)
    local_bias[prob.starts] = 3.0
    best, evals = None, 0
    for z in starts:
        for _ in range(30):  # move an infeasible start towards "all together" until rho < 1
            if prob.rho0 + prob.r @ _softmax(prob, z) < 1:
                break
            z = z + local_bias
        opts = {"maxiter": maxiter, "ftol": 1e-14, "gtol": 1e-12} if tight else {"maxiter": maxiter}
        from scipy.optimize import minimize

        res = minimize(fun, z, jac=True, method="L-BFGS-B", options=opts)
        evals += res.nfev
        if best is None or res.fun < best.fun:
            best = res
    return best.x, float(best.fun), evals


def _multistarts(prob: Problem, n_starts: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Uniform, biased to "all together", and ``n_starts - 2`` random softmax points."""
    local_bias = np.zeros(prob.n_options)
    local_bias[prob.starts] = 3.0
    return [np.zeros(prob.n_options), local_bias] + [
        rng.normal(0, 2, prob.n_options) for _ in range(max(0, n_starts - 2))
    ]


def _solve_local(
    prob: Problem,
    t0: float,
    n_starts: int = 4,
    seed: int = 0,
    rng: np.random.Generator | None = None,
    maxiter: int = 500,
    active_set: bool = True,
    initial_per_distribution: int = 3,
    add_per_round: int = 4,
    kkt_rtol: float = 1e-6,
    max_rounds: int = 100,
) -> Result:
    """Local optimisation with exact gradients (see the module docstring).

    ``active_set=True`` (default): the multi-start L-BFGS runs on a small set of options
    (per distribution: "all together" plus the ``initial_per_distribution`` options with the
    smallest max chi at the all-together wait); then the full gradient is checked against
    the first-order (KKT) conditions of the whole problem on the product of simplices: an
    option whose partial derivative is below its distribution's theta-weighted mean
    derivative by more than ``kkt_rtol`` (relative) could take mass and lower the objective.
    The most violating options (``add_per_round`` per distribution) join the set and the
    solve resumes from the current point (plus the uniform and "all together" points of the
    enlarged set), until no option outside the set violates the conditions. ``info`` reports
    the largest relative violation over all options (``kkt_violation``) and whether it is
    within ``kkt_rtol`` (``kkt``). The
    answer is then a KKT point of the full problem, as a full-space L-BFGS run would give,
    at a fraction of the cost (the GPT-2 subgraphs have 2,386 options each).
    ``active_set=False``: L-BFGS on all options from every start.
    """
    rng = rng if rng is not None else np.random.default_rng(seed)
    if prob.n_options == 0 or prob.size.max() == 1:
        return _finish(prob, "local", prob.local_theta(), t0, info={"starts": 0})
    if not active_set:
        z, _, evals = _lbfgs(prob, _multistarts(prob, n_starts, rng), maxiter)
        return _finish(
            prob,
            "local",
            _softmax(prob, z),
            t0,
            info={"starts": n_starts, "evaluations": evals, "active_set": False},
        )
    # initial set: all together + the options fastest at the wait of the all-together point
    M = _M(prob, evaluate(prob, prob.local_theta()).phi)
    keep = np.zeros(prob.n_options, dtype=bool)
    keep[prob.starts] = True
    order = np.lexsort((M, prob.dist))  # by distribution, then by max chi
    rank = np.empty(prob.n_options, dtype=int)
    rank[order] = np.arange(prob.n_options) - np.repeat(prob.starts, prob.size)
    keep |= rank < initial_per_distribution
    idx = np.flatnonzero(keep)
    sub = _restrict(prob, idx)
    z, _, evals = _lbfgs(sub, _multistarts(sub, n_starts, rng), maxiter, tight=True)
    rounds = 1
    while True:
        theta = np.zeros(prob.n_options)
        theta[idx] = _softmax(sub, z)
        g = evaluate(prob, theta, grad=True).grad
        lam = np.add.reduceat(theta * g, prob.starts)  # theta-weighted mean derivative per distribution
        slack = g - lam[prob.dist]
        rel = -slack / np.maximum(np.abs(lam), np.finfo(float).tiny)[prob.dist]  # > 0: would take mass
        viol = (rel > kkt_rtol) & ~keep
        if not viol.any() or rounds >= max_rounds:
            break
        # the most violating options of each distribution join the set
        cand = np.flatnonzero(viol)
        ranked = cand[np.lexsort((slack[cand], prob.dist[cand]))]
        d = prob.dist[ranked]
        first = np.searchsorted(d, d, side="left")
        new = ranked[np.arange(len(ranked)) - first < add_per_round]
        zfull = np.full(prob.n_options, -np.inf)
        zfull[idx] = z - np.maximum.reduceat(z, sub.starts)[sub.dist]
        # new options enter with a visible mass (with a tiny one the softmax gradient vanishes and
        # the descent cannot move them); the current point, uniform and "all together" are the starts
        zfull[new] = np.log(0.1)
        keep[new] = True
        idx = np.flatnonzero(keep)
        sub = _restrict(prob, idx)
        z, _, e = _lbfgs(sub, [zfull[idx]] + _multistarts(sub, 2, rng), maxiter, tight=True)
        evals += e
        rounds += 1
    violation = float(max(rel.max(), 0.0))
    return _finish(
        prob,
        "local",
        theta,
        t0,
        info={
            "starts": n_starts,
            "evaluations": evals,
            "active_set": True,
            "rounds": rounds,
            "active_options": int(len(idx)),
            "kkt_violation": violation,
            "kkt": violation <= kkt_rtol,
        },
    )


# --------------------------------------------------------------------------- penalty


def _solve_penalty(
    prob: Problem, t0: float, weight: float = 1e3, max_iter: int = 20_000, ftol: float = 1e-12
) -> Result:
    """The paper's Lagrangian-penalty descent (see the module docstring)."""
    if prob.n_options == 0 or prob.size.max() == 1:
        return _finish(prob, "penalty", prob.local_theta(), t0, info={"iterations": 0})
    theta = prob.uniform_theta()
    if not prob.rho0 + prob.r @ theta < 1:
        theta = prob.local_theta()
    # "multiple orders of magnitude above the expected JCTs"
    L = weight * max(1e-12, evaluate(prob, theta).objective)

    def P(th):
        try:
            ev = evaluate(prob, th, grad=True)
        except UnstableLinkError:
            return math.inf, None
        sums = np.add.reduceat(th, prob.starts) - 1.0
        neg = np.minimum(th, 0.0)
        val = ev.objective + L * (sums @ sums + neg @ neg)
        return val, ev.grad + 2 * L * (sums[prob.dist] + neg)

    def projected(th):  # the iterate clipped and renormalised, if it is stable
        th = _clean(prob, th)
        try:
            return evaluate(prob, th).objective, th
        except UnstableLinkError:
            return math.inf, th

    val, g = P(theta)
    best_f, best_th = projected(theta)
    step = 1.0 / (2 * L * prob.size.max())
    it = 0
    small = 0
    for it in range(1, max_iter + 1):
        if it % 50 == 0:  # keep the best stable projected iterate (penalty methods are infeasible en route)
            f, th = projected(theta)
            if f < best_f:
                best_f, best_th = f, th
        while True:  # Armijo backtracking
            cand = theta - step * g
            v2, g2 = P(cand)
            if v2 <= val - 1e-4 * step * (g @ g):
                break
            step *= 0.5
            if step < 1e-30:
                break
        if step < 1e-30:
            break
        small = small + 1 if val - v2 <= ftol * abs(val) else 0
        theta, val, g = cand, v2, g2
        step *= 2.0
        if small >= 20:
            break
    f, th = projected(theta)
    if f <= best_f:
        best_f, best_th = f, th
    return _finish(prob, "penalty", best_th, t0, info={"iterations": it, "penalty_weight": L})


# --------------------------------------------------------------------------- API


def solve(
    workload: Sequence[JobClass] | Problem,
    cluster: Cluster | None = None,
    method: str = "global",
    *,
    direct_edge_branch: bool = True,
    pricing: str | None = None,
    oversized: str = "error",
    **options,
) -> Result:
    """Solve Nona's problem for ``workload`` on ``cluster`` with ``method`` (global | local | penalty).

    ``options`` go to the solver: global ``rtol`` (default 1e-6), ``max_lps`` (nodes for
    "lagrange"), ``lp`` ("lagrange": Lagrangian bounds, no LP solver, default; "highspy": the
    interval LPs in one warm-started HiGHS model, the reference; "scipy":
    ``scipy.optimize.linprog`` with HiGHS, a cold solve per LP, a cross-check); local
    ``n_starts``, ``seed``/``rng``, ``maxiter``, ``active_set`` (default True),
    ``initial_per_distribution``, ``add_per_round``, ``kkt_rtol``, ``max_rounds``; penalty ``weight`` (1e3), ``max_iter``.
    ``pricing``: one of :data:`PRICINGS`; ``None`` means :data:`DEFAULT_PRICING` for a workload
    and the problem's own for a compiled :class:`Problem` (a different one is refused).
    ``oversized``: see :func:`compile_problem` (for a workload only).
    ``solve_seconds`` includes compiling the decision space, not loading the global solver's compiled
    kernels (numba imported and its cache read once per process, 0.4-0.6 s; ``info["kernel_load_s"]``).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if pricing is not None:
        _check_pricing(pricing, direct_edge_branch)
    # everything here is small vectors: threaded BLAS only adds start-up costs (up to ~40x
    # slower on a busy machine), so solves run single-threaded
    with threadpool_limits(limits=1, user_api="blas"):
        return _solve(workload, cluster, method, direct_edge_branch, pricing, oversized, options)


def _solve(workload, cluster, method, direct_edge_branch, pricing, oversized, options) -> Result:
    t0 = time.perf_counter()
    if isinstance(workload, Problem):
        prob = workload
        if pricing is not None and prob.pricing != pricing:
            raise ValueError(
                f"the compiled problem was priced {prob.pricing!r}, solve was asked for {pricing!r}: "
                "compile it again with compile_problem(..., pricing=...)"
            )
    else:
        if cluster is None:
            raise ValueError("solve needs a Cluster")
        prob = compile_problem(
            workload,
            cluster,
            direct_edge_branch=direct_edge_branch,
            pricing=DEFAULT_PRICING if pricing is None else pricing,
            oversized=oversized,
        )
    _check_feasible(prob)
    fn = {"global": _solve_global, "local": _solve_local, "penalty": _solve_penalty}[method]
    return fn(prob, t0, **options)


def to_json(result: Result, load: float | None = None, all_options: bool = False) -> dict:
    """The optimiser output read by the simulator (format in helpers' nona_api.md).

    Options with probability exactly 0 are left out unless ``all_options`` (they are never
    sampled; GPT-2's traced DAG has ~2400 options per attention block). The wall-clock
    ``result.solve_seconds`` is left out too: these tables are dependencies of the simulations,
    and a time in them would make every re-solve look like new input (the notebooks write the
    times to ``results/nona/timings/``).
    """
    prob = result.problem
    dists = result.distributions()
    classes = {}
    for j in prob.classes:
        entry = {"kind": j.kind, "arrival_rate": j.arrival_rate, "predicted_jct_s": result.tau[j.name]}
        if j.name in dists:
            entry["subgraphs"] = [
                {
                    "source": sub.source,
                    "sink": sub.sink,
                    "intermediate": list(sub.intermediate),
                    "options": [
                        {
                            "partition": [list(p) for p in o.partition],
                            "source_part": o.source_part,
                            "sink_part": o.sink_part,
                            "p": p,
                        }
                        for o, p in opts
                        if all_options or p > 0
                    ],
                }
                for sub, opts in dists[j.name]
            ]
        classes[j.name] = entry
    return {
        "method": result.method,
        "pricing": prob.pricing,
        "objective": result.objective,
        "mean_jct_s": result.mean_jct_s,
        "link_load": result.rho,
        "phi_s": result.phi,
        "lower_bound": result.lower_bound,
        "gap": result.gap,
        "load": load,
        "bandwidth_gbps": prob.cluster.bandwidth_gbps,
        "servers": prob.cluster.servers,
        "compute_rate": prob.cluster.compute_rate,
        "search_space": prob.search_space,
        "n_distributions": prob.n_distributions,
        "classes": classes,
    }


def solve_point(
    load: float,
    *,
    bandwidth_gbps: float = 10.0,
    servers: int = 80,
    compute_rate: float = 1.0,
    method: str = "global",
    models: Sequence[str] | None = None,
    workload_kwargs: dict | None = None,
    pricing: str = DEFAULT_PRICING,
    **options,
) -> tuple[Result, dict]:
    """Build the section IV-B workload at ``load`` and solve it (``pricing``: see :func:`solve`);
    returns (result, JSON dict).

    ``models`` default: the five models of the paper (GPT-2 needs its traced graph).
    ``solve_seconds`` covers compiling the decision space and solving, not reading graphs.
    """
    from schedlab.nona import profiles
    from schedlab.nona.workload import build_workload

    cluster = Cluster(servers=servers, bandwidth_gbps=bandwidth_gbps, compute_rate=compute_rate)
    wl = build_workload(
        list(models) if models is not None else profiles.MODELS,
        load=load,
        cluster=cluster,
        **(workload_kwargs or {}),
    )
    res = solve(wl, cluster, method=method, pricing=pricing, **options)
    return res, to_json(res, load=load)
