"""Nona's workload: job classes (contracted DAGs with task times and transfer sizes) and rates.

This module turns the PipeDream profiles into the inputs of Nona's optimisation (paper
section III-C) and of the simulator (section IV-A/B). Every modelling choice the paper
leaves open is a named parameter here; the defaults are the ones below.

From profiles to tasks
----------------------
* **Task compute time** ``p^t / nu``: the contracted node's summed ``forward_ms`` (inference
  runs the forward pass only), in seconds, at ``compute_rate`` 1 (the profiling GPU). The
  ``Input`` node's forward time is PipeDream's *data-loading* time, not compute, so it is
  dropped (``profiles.load(model, drop_input_time=True)``). Stored as node attribute
  ``work_s``; a server of :class:`Cluster` ``compute_rate`` nu runs it in ``work_s / nu``.
* **Transfer bytes** ``b^(t,t')``: the contracted edge's ``bytes`` (activation bytes of the
  distinct producing members, see :mod:`schedlab.nona.contraction`). Edge attribute
  ``bytes``.
* **Query scaling** (the paper leaves it open). PipeDream profiled *training minibatches*
  (AlexNet/ResNet18 B=256, VGG16 B=128, DenseNet121 B=64; our GPT-2 trace uses its own
  batch). ``query_scale`` multiplies every task time *and* every transfer size of the
  inference classes (linear-in-batch scaling). Default ``1.0``: one inference query is one
  profiled minibatch, exactly the numbers in the files. ``per_sample=True`` first divides
  each model by its profiled minibatch so that ``query_scale`` is the number of samples per
  query. Because times and bytes scale together and arrival rates are derived from the
  load, a uniform ``query_scale`` only rescales time (all JCTs scale by it, the optimal
  probabilities do not change); ``per_sample`` changes the models' relative weights.
* **Hardware class** (the paper leaves it open). The PipeDream profiles are GPU times; our
  GPT-2 trace is single-thread CPU time (:mod:`schedlab.nona.gpt2_trace`). ``time_scale``
  (``{model: factor}``) multiplies the named models' task times only (not their bytes), e.g.
  ``{"gpt2": r}`` with ``r`` the GPU/CPU time ratio measured on a profiled model
  (:mod:`schedlab.nona.hardware`). Default: none (GPT-2 as traced).
* **Branch data size** (not in the paper; the axis of ``notebooks/nona/branches``).
  ``byte_scale`` multiplies every transfer size of the inference classes and nothing else
  (task times and the background classes stay), to ask how much data may cross the link
  before splitting a DAG's parallel branches stops paying. Default ``1.0``.

Rates (:func:`build_workload`)
------------------------------
* Every inference class has the same arrival rate ``lam`` (section IV-B varies "the
  interarrival rates" and reports the compute load ``sum_j lambda_j S_j``).
* Two background classes (section IV-A): ``background_compute`` (one task, no transfer)
  and ``background_comm`` (one transfer, no compute). "Inference-to-background arrival rates
  100:1" is read as: each background class arrives at ``sum_inference_rates /
  background_ratio``.
* ``lam`` solves ``sum_j lambda_j S_j / servers == load`` over the inference *and* the
  background compute classes (the compute load of section IV-B): ``load_basis="server"``,
  the default, reads the paper's load as a utilisation per server. Section IV-B's formula
  is literally ``sum_j lambda_j S_j`` with no division; ``load_basis="cluster"`` takes it at
  its word (a load of 0.9 is 0.9 busy servers in the whole cluster, so each of 80 servers is
  ~1% busy). The calibration stage (``notebooks/nona/calibration``) compares both.
* The background compute task lasts ``background_work_s`` (default: the unweighted mean of
  the inference classes' service times at ``compute_rate`` 1).
* The background communication job sends ``transfer_bytes = comm_load * mu / lambda_comm``
  bytes, so that the link's background offered load is ``comm_load`` (default: equal to
  ``load``, as Fig. 5's "70% communication and compute load"). ``comm_load=0`` omits the class.

Examples
--------
>>> import networkx as nx
>>> c = Cluster(servers=2, bandwidth_gbps=80.0)
>>> c.link_bytes_per_s
10000000000.0
>>> f = job_f()
>>> round(f.service_s(c), 3)
0.022
>>> w = build_workload(classes=[f], load=0.5, cluster=c, comm_load=0.2)
>>> [j.name for j in w]
['f', 'background_compute', 'background_comm']
>>> round(sum(j.arrival_rate * j.service_s(c) for j in w) / c.servers, 6)
0.5
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import networkx as nx

from schedlab.nona import profiles
from schedlab.nona.contraction import contract

INFERENCE = "inference"
BACKGROUND_COMPUTE = "background_compute"
BACKGROUND_COMM = "background_comm"
KINDS = (INFERENCE, BACKGROUND_COMPUTE, BACKGROUND_COMM)
LOAD_BASES = ("server", "cluster")  # how build_workload reads `load` (see the module docstring)

# One 224x224 RGB float32 image: the Input size per sample of the paper's four image profiles
# (../shared/data/nona/README.md). inception_v3 takes 299x299 images, so profiled_batch reads the
# batch from the classifier instead of assuming this size (see there).
IMAGE_INPUT_BYTES_PER_SAMPLE = 4 * 3 * 224 * 224


@dataclass(frozen=True)
class Cluster:
    """Servers behind one bottleneck link (section III-B).

    Parameters
    ----------
    servers : number of identical servers.
    bandwidth_gbps : capacity of the bottleneck link, Gbit/s (mu = bandwidth_gbps*1e9/8 B/s).
    compute_rate : nu, server speed relative to the profiling GPU (task time = work_s / nu).

    Examples
    --------
    >>> Cluster(bandwidth_gbps=10).link_bytes_per_s
    1250000000.0
    """

    servers: int = 80
    bandwidth_gbps: float = 10.0
    compute_rate: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.servers, int | float) or self.servers < 1 or int(self.servers) != self.servers:
            raise ValueError(f"Cluster.servers must be a positive integer, got {self.servers!r}")
        if not (self.bandwidth_gbps > 0 and math.isfinite(self.bandwidth_gbps)):
            raise ValueError(
                f"Cluster.bandwidth_gbps must be a positive finite number, got {self.bandwidth_gbps!r}"
            )
        if not (self.compute_rate > 0 and math.isfinite(self.compute_rate)):
            raise ValueError(
                f"Cluster.compute_rate must be a positive finite number, got {self.compute_rate!r}"
            )

    @property
    def link_bytes_per_s(self) -> float:
        """mu, the link capacity in bytes per second."""
        return self.bandwidth_gbps * 1e9 / 8


@dataclass(frozen=True)
class JobClass:
    """One class of jobs: a contracted DAG and its Poisson arrival rate beta_j (jobs/s).

    ``dag`` node attribute ``work_s``: compute seconds at compute_rate 1; edge attribute
    ``bytes``. Background compute: a single node. Background comm: a single node with
    ``work_s`` 0 and graph attribute ``transfer_bytes``.
    """

    name: str
    kind: str
    dag: nx.DiGraph = field(repr=False, compare=False)
    arrival_rate: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"JobClass {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if not (self.arrival_rate >= 0 and math.isfinite(self.arrival_rate)):
            raise ValueError(
                f"JobClass {self.name!r}: arrival_rate must be >= 0 and finite, got {self.arrival_rate!r}"
            )
        validate_dag(self.dag, self.name)

    def service_s(self, cluster: Cluster) -> float:
        """S_j: the sum of the class's task times on ``cluster`` (seconds)."""
        return sum(d["work_s"] for _, d in self.dag.nodes(data=True)) / cluster.compute_rate

    @property
    def transfer_bytes(self) -> float:
        """Bytes of the background communication job (0 for other kinds)."""
        return float(self.dag.graph.get("transfer_bytes", 0.0))

    def with_rate(self, rate: float) -> JobClass:
        return replace(self, arrival_rate=float(rate))


def validate_dag(g: nx.DiGraph, name: str = "dag") -> None:
    """Raise ``ValueError`` naming the class/node/edge unless ``g`` is a valid job DAG."""
    if g.number_of_nodes() == 0:
        raise ValueError(f"{name}: the DAG has no task")
    if not nx.is_directed_acyclic_graph(g):
        cycle = " -> ".join(str(u) for u, _ in nx.find_cycle(g))
        raise ValueError(f"{name}: the job graph must be a DAG; found the cycle {cycle}")
    for n, d in g.nodes(data=True):
        w = d.get("work_s")
        if w is None or not (w >= 0 and math.isfinite(w)):
            raise ValueError(f"{name}: node {n!r} needs work_s >= 0 (seconds), got {w!r}")
    for u, v, d in g.edges(data=True):
        b = d.get("bytes")
        if b is None or not (b >= 0 and math.isfinite(b)):
            raise ValueError(f"{name}: edge {u!r} -> {v!r} needs bytes >= 0, got {b!r}")
    tb = g.graph.get("transfer_bytes", 0.0)
    if not (tb >= 0 and math.isfinite(tb)):
        raise ValueError(f"{name}: transfer_bytes must be >= 0, got {tb!r}")


def profiled_batch(g: nx.DiGraph) -> float:
    """The minibatch a PipeDream profile was taken at, read from the graph's own tensor sizes.

    In order:

    1. an explicit ``batch=B`` in the Input node's description (our GPT-2 trace writes
       ``Input(batch=B, ...)``);
    2. an image classifier: its ``Linear(in_features=..., out_features=K)`` layers output
       ``4 * B * K`` bytes, whatever the image size (224x224 for the paper's four models,
       299x299 for inception_v3). The Input then must hold ``4 * B * 3 * s * s`` bytes for an
       integer side ``s``; a graph where it does not is refused;
    3. a recurrent model (GNMT, whose Inputs record 0 bytes): an ``LSTM(in, hidden)`` layer
       lists its outputs ``[out; h; c]``, and ``h`` holds ``4 * B * hidden`` bytes.

    Raises ``ValueError`` naming the graph when none applies or the sizes disagree.

    Examples
    --------
    >>> g = nx.DiGraph(name="tiny")
    >>> g.add_node(1, desc="Input", activation_bytes=4 * 8 * 3 * 299 * 299)
    >>> g.add_node(2, desc="Linear(in_features=2048, out_features=1000, bias=True)", activation_bytes=4 * 8 * 1000)
    >>> g.add_edge(1, 2)
    >>> profiled_batch(g)
    8.0
    """
    name = g.graph.get("name", "graph")
    nodes = [d for _, d in g.nodes(data=True)]
    inputs = [d for d in nodes if d.get("desc", "").startswith("Input")]
    if not inputs:
        raise ValueError(f"{name}: no Input node to read the profiled batch from")
    for d in inputs:
        if "batch=" in d["desc"]:
            return float(d["desc"].split("batch=")[1].rstrip(")").split(",")[0])
    batch = _classifier_batch(nodes, name)
    if batch is not None:
        _check_image_input(sum(d.get("activation_bytes", 0.0) for d in inputs), batch, name)
        return batch
    batch = _recurrent_batch(nodes, name)
    if batch is not None:
        return batch
    raise ValueError(
        f"{name}: cannot read the profiled batch: no batch= in the Input, no Linear classifier "
        "and no LSTM hidden state"
    )


def _layer_args(desc: str, layer: str) -> list[str] | None:
    """The arguments of a layer description ``Layer(a, b=c, ...)`` (``None`` for another layer)."""
    if not desc.startswith(layer + "("):
        return None
    return [a.strip() for a in desc[len(layer) + 1 :].split(")")[0].split(",")]


def _one_batch(candidates: list[float], what: str, name: str) -> float | None:
    """The batch every candidate agrees on (``None`` without any); refuse fractions or disagreement."""
    if not candidates:
        return None
    batches = sorted(set(candidates))
    if len(batches) > 1 or batches[0] < 1 or batches[0] != int(batches[0]):
        raise ValueError(
            f"{name}: the {what} sizes imply the batches {batches}; expected one positive integer"
        )
    return float(batches[0])


def _classifier_batch(nodes: list[dict], name: str) -> float | None:
    """B from the ``Linear`` layers' 2-D outputs, ``4 * B * out_features`` bytes each."""
    out = []
    for d in nodes:
        args = _layer_args(d.get("desc", ""), "Linear")
        if args is None:
            continue
        k = int(next(a for a in args if a.startswith("out_features=")).split("=")[1])
        out.append(d["activation_bytes"] / (4 * k))
    return _one_batch(out, "Linear layers' output", name)


def _check_image_input(input_bytes: float, batch: float, name: str) -> None:
    """An image Input holds ``4 * B * 3 * s * s`` bytes for an integer side ``s``."""
    side = math.sqrt(input_bytes / (4 * 3 * batch))
    if abs(side - round(side)) > 1e-9 * side or round(side) < 1:
        raise ValueError(
            f"{name}: the Input holds {input_bytes:g} bytes, not 4*B*3*s*s for the batch B={batch:g} "
            f"of the classifier and an integer image side s (got s={side:.4g})"
        )


def _recurrent_batch(nodes: list[dict], name: str) -> float | None:
    """B from the hidden state ``h`` (``4 * B * hidden`` bytes) of single-layer ``LSTM(in, hidden)`` layers."""
    out = []
    for d in nodes:
        args = _layer_args(d.get("desc", ""), "LSTM")
        sizes = d.get("activation_sizes")
        if args is None or sizes is None or len(sizes) != 3 or len(args) != 2:
            continue  # bidirectional or multi-layer LSTMs hold more than one h per sample
        out.append(sizes[1] / (4 * int(args[1])))
    return _one_batch(out, "LSTM hidden states'", name)


def dag_from_profile(g: nx.DiGraph, scale: float = 1.0) -> nx.DiGraph:
    """Contract a profile graph and attach ``work_s`` (forward seconds * scale) and scaled ``bytes``.

    The Input node's forward time must already be dropped (see the module docstring).
    """
    h = contract(g)
    out = nx.DiGraph(name=g.graph.get("name", ""))
    for n, d in h.nodes(data=True):
        out.add_node(
            n,
            work_s=d["forward_ms"] / 1e3 * scale,
            members=d["members"],
            parameter_bytes=d["parameter_bytes"],
        )
    for u, v, d in h.edges(data=True):
        out.add_edge(u, v, bytes=d["bytes"] * scale)
    return out


VIRTUAL_ROOT = "virtual_root"
VIRTUAL_SINK = "virtual_sink"


def close_dag(dag: nx.DiGraph) -> nx.DiGraph:
    """``dag`` with one root and one sink: a zero-cost virtual root and/or sink where it has several.

    Nona's decision space (section III-C) cuts a DAG at its bottleneck nodes, which needs one
    root and one sink. A DAG with several roots gets a node :data:`VIRTUAL_ROOT` feeding every
    root; one with several sinks a node :data:`VIRTUAL_SINK` fed by every sink. Both do no work
    (``work_s = 0``) and their edges carry no data (``bytes = 0``), so they change no completion
    time: in the simulator a zero-byte edge never crosses the link, and the ``critical_path``
    pricing charges it nothing (the ``paper`` pricing charges a crossing edge the link wait phi
    even at zero bytes, as (IX) is typeset). A DAG that already has one root and one sink is
    returned unchanged (the same object).

    >>> g = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d"), ("c", "e")])
    >>> nx.set_node_attributes(g, 1.0, "work_s"); nx.set_edge_attributes(g, 8.0, "bytes")
    >>> h = close_dag(g)
    >>> sorted(h.succ[VIRTUAL_ROOT]), sorted(h.pred[VIRTUAL_SINK]), h.nodes[VIRTUAL_SINK]["work_s"]
    (['a', 'b'], ['d', 'e'], 0.0)
    """
    roots = [n for n in dag if dag.in_degree(n) == 0]
    sinks = [n for n in dag if dag.out_degree(n) == 0]
    if len(roots) <= 1 and len(sinks) <= 1:
        return dag
    for name in (VIRTUAL_ROOT, VIRTUAL_SINK):
        if name in dag:
            raise ValueError(
                f"{dag.graph.get('name', 'dag')}: already has a node named {name!r}; "
                "cannot add the virtual root/sink"
            )
    out = dag.copy()
    if len(roots) > 1:
        out.add_node(VIRTUAL_ROOT, work_s=0.0, members=(), parameter_bytes=0.0)
        out.add_edges_from(((VIRTUAL_ROOT, r) for r in roots), bytes=0.0)
    if len(sinks) > 1:
        out.add_node(VIRTUAL_SINK, work_s=0.0, members=(), parameter_bytes=0.0)
        out.add_edges_from(((s, VIRTUAL_SINK) for s in sinks), bytes=0.0)
    return out


def inference_classes(
    models: Sequence[str] = profiles.MODELS,
    *,
    query_scale: float = 1.0,
    per_sample: bool = False,
    time_scale: Mapping[str, float] | None = None,
    byte_scale: float = 1.0,
) -> list[JobClass]:
    """One inference :class:`JobClass` per model, arrival rates 0 (see :func:`build_workload`).

    Parameters
    ----------
    models : model names of :data:`schedlab.nona.profiles.ALL_MODELS` (the paper's five and the
        three with parallel branches; DAGs with several roots or sinks are closed by
        :func:`close_dag`). GPT-2 needs the traced
        graph (``data/generated/nona/gpt2/graph.txt``); a missing graph is an error.
    query_scale : multiplier of task times and transfer bytes (the query scaling; see the
        module docstring). Default 1: one query = one profiled minibatch.
    per_sample : divide each model by its profiled minibatch first.
    time_scale : ``{model: factor}`` multiplying that model's task times only (hardware
        class; see the module docstring). Every key must be one of ``models``.
    byte_scale : multiplier of every transfer size only (the branch data size; see the
        module docstring). Default 1.

    Examples
    --------
    >>> (a,), (b,) = inference_classes(["resnet18"]), inference_classes(["resnet18"], byte_scale=0.5)
    >>> edges = list(a.dag.edges)
    >>> all(b.dag.edges[e]["bytes"] == 0.5 * a.dag.edges[e]["bytes"] for e in edges)
    True
    >>> all(b.dag.nodes[n]["work_s"] == a.dag.nodes[n]["work_s"] for n in a.dag)
    True
    """
    if not (query_scale > 0 and math.isfinite(query_scale)):
        raise ValueError(f"query_scale must be a positive finite number, got {query_scale!r}")
    if not (byte_scale > 0 and math.isfinite(byte_scale)):
        raise ValueError(
            f"byte_scale must be a positive finite number (multiplier of the transfer sizes), "
            f"got {byte_scale!r}"
        )
    time_scale = dict(time_scale or {})
    unknown = sorted(set(time_scale) - set(models))
    if unknown:
        raise ValueError(f"time_scale names models not in the workload: {unknown} (models: {list(models)})")
    for m, f in time_scale.items():
        if not (isinstance(f, (int, float)) and f > 0 and math.isfinite(f)):
            raise ValueError(f"time_scale[{m!r}] must be a positive finite number, got {f!r}")
    out = []
    for m in models:
        g = profiles.load(m, drop_input_time=True)
        scale = query_scale / profiled_batch(g) if per_sample else query_scale
        dag = close_dag(dag_from_profile(g, scale))  # several roots/sinks: virtual ones (no cost)
        if m in time_scale:
            for _, d in dag.nodes(data=True):
                d["work_s"] *= float(time_scale[m])
        if byte_scale != 1.0:
            for _, _, d in dag.edges(data=True):
                d["bytes"] *= float(byte_scale)
        out.append(JobClass(name=m, kind=INFERENCE, dag=dag))
    return out


def background_compute_class(work_s: float) -> JobClass:
    """A background compute job: one task of ``work_s`` seconds, no transfer."""
    g = nx.DiGraph(name=BACKGROUND_COMPUTE)
    g.add_node("task", work_s=float(work_s))
    return JobClass(BACKGROUND_COMPUTE, BACKGROUND_COMPUTE, g)


def background_comm_class(transfer_bytes: float) -> JobClass:
    """A background communication job: one transfer of ``transfer_bytes``, no compute."""
    g = nx.DiGraph(name=BACKGROUND_COMM, transfer_bytes=float(transfer_bytes))
    g.add_node("transfer", work_s=0.0)
    return JobClass(BACKGROUND_COMM, BACKGROUND_COMM, g)


def build_workload(
    models: Sequence[str] = profiles.MODELS,
    *,
    load: float,
    cluster: Cluster,
    background_ratio: float = 100.0,
    comm_load: float | None = None,
    background_work_s: float | None = None,
    query_scale: float = 1.0,
    per_sample: bool = False,
    classes: Iterable[JobClass] | None = None,
    background_comm_bytes: float | None = None,
    time_scale: Mapping[str, float] | None = None,
    load_basis: str = "server",
    byte_scale: float = 1.0,
) -> list[JobClass]:
    """Inference classes plus background jobs, with arrival rates for a compute ``load``.

    Parameters
    ----------
    models, query_scale, per_sample, time_scale, byte_scale : passed to :func:`inference_classes`
        (ignored when ``classes`` is given).
    load : compute load in (0, 1): ``sum_j lambda_j S_j / servers`` (section IV-B), or
        ``sum_j lambda_j S_j`` with ``load_basis="cluster"``.
    cluster : the :class:`Cluster`.
    background_ratio : inference-to-background arrival-rate ratio (section IV-A: 100);
        ``inf`` drops both background classes.
    comm_load : background offered load of the link in [0, 1) (default: ``load``).
    background_work_s : background compute task time at rate 1 (default: mean inference S_j).
    classes : inference classes to use instead of the profiles (e.g. :func:`job_f`).
    background_comm_bytes : if given, the size of each background transfer; its rate is then
        ``comm_load * mu / background_comm_bytes`` instead of the 100:1 ratio (used for the
        two-server example of section II, where the ratio of section IV-A does not apply).
    load_basis : ``"server"`` (default: ``load`` is each server's utilisation) or
        ``"cluster"`` (section IV-B's formula taken literally, no division by the servers).

    Returns
    -------
    list of JobClass: the inference classes in order, then ``background_compute`` and
    ``background_comm`` (the latter omitted when ``comm_load == 0``).
    """
    if not (0 < load < 1):
        raise ValueError(
            f"load must be in (0, 1) (compute load sum_j lambda_j S_j / servers), got {load!r}; "
            "a load >= 1 makes the servers unstable"
        )
    if comm_load is None:
        comm_load = load
    if not (0 <= comm_load < 1):
        raise ValueError(
            f"comm_load must be in [0, 1) (background offered load of the link), got {comm_load!r}"
        )
    if not background_ratio > 0:
        raise ValueError(f"background_ratio must be > 0 (or inf for no background), got {background_ratio!r}")
    if load_basis not in LOAD_BASES:
        raise ValueError(f"load_basis must be one of {LOAD_BASES}, got {load_basis!r}")
    inf = (
        list(classes)
        if classes is not None
        else inference_classes(
            models,
            query_scale=query_scale,
            per_sample=per_sample,
            time_scale=time_scale,
            byte_scale=byte_scale,
        )
    )
    if not inf:
        raise ValueError("build_workload needs at least one inference class")
    for j in inf:
        if j.kind != INFERENCE:
            raise ValueError(f"class {j.name!r} has kind {j.kind!r}; pass only inference classes")
    s_inf = [sum(d["work_s"] for _, d in j.dag.nodes(data=True)) for j in inf]
    if background_work_s is None:
        background_work_s = sum(s_inf) / len(s_inf)
    if not (background_work_s >= 0 and math.isfinite(background_work_s)):
        raise ValueError(f"background_work_s must be >= 0, got {background_work_s!r}")
    bg_share = 0.0 if math.isinf(background_ratio) else len(inf) / background_ratio
    # compute seconds per unit of lam (each inference class arrives at lam, background at lam*bg_share)
    per_lam = (sum(s_inf) + bg_share * background_work_s) / cluster.compute_rate
    if per_lam <= 0:
        raise ValueError("the workload has no compute: cannot set arrival rates for a compute load")
    lam = load * (cluster.servers if load_basis == "server" else 1) / per_lam
    out = [j.with_rate(lam) for j in inf]
    if bg_share > 0:
        out.append(background_compute_class(background_work_s).with_rate(lam * bg_share))
    if comm_load > 0 and background_comm_bytes is not None:
        if not background_comm_bytes > 0:
            raise ValueError(f"background_comm_bytes must be > 0, got {background_comm_bytes!r}")
        rate = comm_load * cluster.link_bytes_per_s / background_comm_bytes
        out.append(background_comm_class(background_comm_bytes).with_rate(rate))
    elif comm_load > 0 and bg_share > 0:
        rate = lam * bg_share
        out.append(background_comm_class(comm_load * cluster.link_bytes_per_s / rate).with_rate(rate))
    return out


def job_f(
    small_ms: float = 1.0,
    big_ms: float = 10.0,
    dense_bytes: float = 200e6,
    sparse_bytes: float = 20e6,
    result_bytes: float = 8.0,
) -> JobClass:
    """The motivating job f of section II / Fig. 1a (rate 0).

    Tasks: ``sum`` (1 ms) -> ``det`` (10 ms, needs all of A+B: 200 MB) and ``det_sparse``
    (10 ms, needs r(A+B): 20 MB) -> ``add`` (1 ms). The determinants send one float64
    (``result_bytes`` = 8) to ``add``; the paper does not give this size, it is negligible.
    """
    g = nx.DiGraph(name="f")
    g.add_node("sum", work_s=small_ms / 1e3)
    g.add_node("det", work_s=big_ms / 1e3)
    g.add_node("det_sparse", work_s=big_ms / 1e3)
    g.add_node("add", work_s=small_ms / 1e3)
    g.add_edge("sum", "det", bytes=dense_bytes)
    g.add_edge("sum", "det_sparse", bytes=sparse_bytes)
    g.add_edge("det", "add", bytes=result_bytes)
    g.add_edge("det_sparse", "add", bytes=result_bytes)
    return JobClass("f", INFERENCE, g)
