"""Put GPT-2's CPU-traced task times on the GPU scale of the PipeDream profiles.

The four PipeDream profiles hold **GPU** forward times (ms per training minibatch: AlexNet
B=256, VGG16 B=128, ResNet18 B=256, DenseNet121 B=64). GPT-2 has no public profile, so
:mod:`schedlab.nona.gpt2_trace` timed it on **one CPU thread** (about 1,041 ms for one
query of 1 x 128 tokens). This module measures a profiled model with the same tracer
method on this CPU, and gives the GPU/CPU ratio that moves GPT-2's times to the profiles'
hardware class. Run::

    python -m schedlab.nona.hardware --models alexnet --gpt2   # -> benchmarks/results/nona_gpu_scale.json
    python -m schedlab.nona.hardware --models alexnet vgg16 --batch vgg16=4 --gpt2

The default batch is the profiled one. AlexNet at B=256 takes about 4.6 s of thread time
per forward here (7-8 s wall on the busy 2-core machine), so that is the default; VGG16 at
B=128 would take about 52 s of thread time per forward (over 3 min for warm-up + 3 runs),
so run it at a smaller batch (``--batch vgg16=16``, or ``vgg16=4``; see the batch caveat).
``--gpt2`` also times GPT-2's plain forward in the same session.

Method
------
Only *chain-shaped* profiles can be rebuilt from their node descriptions alone (AlexNet,
VGG16: ``Input -> ... -> logits``; the ``Size(0)`` node is a metadata side branch feeding
the flatten ``View``). :func:`chain_model` builds one ``torch.nn`` module per node from its
``desc``; :func:`measure_cpu_ms` runs it with random weights (``torch.manual_seed(seed)``),
float32, one thread, ``torch.no_grad`` and eval mode, one warm-up run, then ``repeats``
runs. A node's time is taken as in ``gpt2_trace``: ``time.perf_counter`` in the module's
forward pre-hook and forward hook, median over the runs. ``time.thread_time`` is recorded
the same way: on a shared machine wall time counts the time the thread waits for a core,
thread time does not.

Assumptions (read before using the ratio)
-----------------------------------------
* **Linear in batch.** If a smaller batch ``b`` is run than the profiled ``B``, CPU times are
  multiplied by ``B / b``. The ratio ``sum(gpu_ms) / sum(cpu_ms)`` is therefore a per-sample
  ratio: ``(gpu_ms(B) / B) / (cpu_ms(b) / b)``. On one CPU thread per-sample time depends
  on batch by some 10-20 %, in either direction: measured here (thread clock), AlexNet at
  b=4 costs 22 % more per sample than at B=256 (dense layers at small batch are bound by
  reading their weights), and VGG16 at b=4 costs less per sample (44-47 s per 128 images
  over two runs) than at b=16 or 32 (48-52 s; activations leave the cache at larger batch).
  Thread time itself moved by up to ~7 % between runs as the other job's load changed
  (shared caches and memory bandwidth). Use the profiled batch where affordable. On a GPU
  the linear rule fails at small batch (next item).
* **GPT-2's scaled time is a lower bound on its GPU time.** The ratio is the GPU's
  per-sample speed-up at the *profiled* batch (64-256 images), where the GPU is busy.
  GPT-2 was traced at batch 1 (128 tokens), where a GPU runs far below its peak, so
  ``gpt2_cpu_ms * ratio`` under-states the GPU time of that query.
* **Different operator mix.** The ratio is measured on convolutions and dense layers of a
  CNN; GPT-2 is matrix products, layer norms, softmax and many small element-wise ops. A
  GPU's advantage differs per op kind (small element-wise ops gain least), so the ratio is
  an order-of-magnitude scale for GPT-2, not a calibration of each of its tasks.
* **Training vs inference.** PipeDream timed the forward pass of a training step (Dropout
  active; its recorded time is 0); we time inference (eval mode, no autograd). For
  AlexNet and VGG16 the forward computations are otherwise the same.
* **Same machine, same load, same clock.** ``gpt2_trace`` used wall time, which on this shared
  2-core machine grows with the load of other jobs (here 1.0x-1.6x the thread time). The
  committed GPT-2 trace sums to 1,041 ms; re-traced on 2026-11-26 under load ~4.3 it summed
  to 762 ms, and GPT-2's plain forward took ~480 ms of thread time (the tracer's own hooks
  and ``TorchFunctionMode`` add ~25 % thread time). So scale a GPT-2 thread time measured in
  the same session (:func:`measure_gpt2_cpu_ms`, ``--gpt2``) by ``ratio_thread``; scaling the
  committed 1,041 ms over-states GPT-2 by about 2x.
* The ``Input`` node's profile time is data loading, not compute: it is left out of every
  sum. ``Size``, ``View`` and ``Dropout`` take 0 ms in the profile and near 0 here.

Examples
--------
>>> parse_desc("ReLU(inplace)")
('ReLU', [], {'inplace': True})
>>> table = pd.DataFrame({"desc": ["Input", "Conv2d(...)", "ReLU(inplace)"],
...                       "gpu_ms": [600.0, 3.0, 1.0], "cpu_wall_ms": [0.0, 30.0, 10.0],
...                       "cpu_thread_ms": [0.0, 20.0, 5.0]})
>>> gpu_cpu_ratio(table)
{'wall': 0.1, 'thread': 0.16}
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import os
import platform
import statistics
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd

from schedlab import paths
from schedlab.io import atomic_write_json
from schedlab.nona import profiles

IMAGE_SHAPE = (3, 224, 224)  # PipeDream's ImageNet input: B x 3 x 224 x 224 float32
DEFAULT_OUT = paths.ROOT / "benchmarks" / "results" / "nona_gpu_scale.json"  # a timing, not a pipeline output
CLOCKS = ("wall", "thread")

# desc name -> torch.nn class name; only these are built (no eval of arbitrary text)
_NN_CLASSES = ("Conv2d", "Linear", "ReLU", "MaxPool2d", "Dropout")


def _view_class():
    """``View(n)``: PipeDream's record of ``x.view(x.size(0), n)`` (the classifier's flatten)."""
    import torch

    class View(torch.nn.Module):
        def __init__(self, features: int):
            super().__init__()
            self.features = features

        def forward(self, x):
            return x.reshape(x.shape[0], self.features)

        def extra_repr(self) -> str:
            return str(self.features)

    return View


def _literal(node: ast.expr, desc: str) -> Any:
    """A constant argument (number, tuple, bool); ``inplace`` alone means ``inplace=True``."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ValueError(f"unsupported argument {ast.unparse(node)!r} in desc {desc!r}") from None


def parse_desc(desc: str) -> tuple[str, list, dict]:
    """Split ``Name(args, key=value)`` into name, positional and keyword constants.

    Old PyTorch printed ``ReLU(inplace=True)`` as ``ReLU(inplace)``: a bare ``inplace``
    becomes the keyword ``inplace=True``.

    Examples
    --------
    >>> parse_desc("Conv2d(3, 64, kernel_size=(11, 11), stride=(4, 4), padding=(2, 2))")
    ('Conv2d', [3, 64], {'kernel_size': (11, 11), 'stride': (4, 4), 'padding': (2, 2)})
    >>> parse_desc("ReLU(inplace)")
    ('ReLU', [], {'inplace': True})
    """
    try:
        tree = ast.parse(desc.strip(), mode="eval").body
    except SyntaxError:
        raise ValueError(f"cannot parse desc {desc!r}") from None
    if isinstance(tree, ast.Name):  # e.g. "Input"
        return tree.id, [], {}
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)):
        raise ValueError(f"desc {desc!r} is not of the form Name(...)")
    args, kwargs = [], {}
    for a in tree.args:
        if isinstance(a, ast.Name) and a.id == "inplace":
            kwargs["inplace"] = True
        else:
            args.append(_literal(a, desc))
    for k in tree.keywords:
        if k.arg is None:
            raise ValueError(f"desc {desc!r}: **kwargs not supported")
        kwargs[k.arg] = _literal(k.value, desc)
    return tree.func.id, args, kwargs


def module_from_desc(desc: str):
    """The ``torch.nn`` module a PipeDream node description stands for.

    Raises ``ValueError`` for any name other than ``Conv2d``, ``Linear``, ``ReLU``,
    ``MaxPool2d``, ``Dropout`` and ``View`` (``Input`` and ``Size`` are not modules; see
    :func:`chain_model`).
    """
    import torch

    name, args, kwargs = parse_desc(desc)
    if name == "View":
        if len(args) != 1 or kwargs or not isinstance(args[0], int):
            raise ValueError(f"View takes one integer, got desc {desc!r}")
        return _view_class()(args[0])
    if name not in _NN_CLASSES:
        raise ValueError(f"unsupported desc {desc!r}: no module for {name!r}")
    try:
        return getattr(torch.nn, name)(*args, **kwargs)
    except TypeError as exc:
        raise ValueError(f"desc {desc!r}: {exc}") from None


def chain_order(g: nx.DiGraph) -> list[str]:
    """The nodes of a chain profile from ``Input`` to the logits, ``Size`` nodes left out.

    ``Size`` nodes only read the shape (``x.size(0)``) for the following ``View``; without
    them every node must have at most one predecessor and one successor.
    """
    h = g.subgraph(n for n, d in g.nodes(data=True) if not d["desc"].startswith("Size"))
    for n in nx.lexicographical_topological_sort(h, key=_node_number):
        for kind, degree in (("predecessors", h.in_degree(n)), ("successors", h.out_degree(n))):
            if degree > 1:
                raise ValueError(f"not a chain graph: {n} ({g.nodes[n]['desc']}) has {degree} {kind}")
    roots = [n for n in h if h.in_degree(n) == 0]
    if len(roots) != 1 or h.nodes[roots[0]]["desc"] != "Input":
        raise ValueError(f"not a chain graph: expected one root 'Input', got {roots}")
    order = [roots[0]]
    while h.out_degree(order[-1]):
        order.append(next(iter(h.successors(order[-1]))))
    if len(order) != h.number_of_nodes():
        raise ValueError(
            f"not a chain graph: nodes not on the path from {roots[0]}: "
            f"{sorted(set(h) - set(order), key=_node_number)}"
        )
    return order


def _node_number(n: str) -> tuple[int, str]:
    digits = "".join(c for c in n if c.isdigit())
    return (int(digits) if digits else -1, n)


def chain_model(g: nx.DiGraph):
    """``torch.nn.Sequential`` of a chain profile's nodes, named by node id (Input left out).

    Raises ``ValueError`` naming the node and its desc for an unsupported description or a
    graph that is not a chain (e.g. ResNet18's residual ``Add``).
    """
    import torch

    layers = OrderedDict()
    for n in chain_order(g)[1:]:
        desc = g.nodes[n]["desc"]
        try:
            layers[n] = module_from_desc(desc)
        except ValueError as exc:
            raise ValueError(f"{n} ({desc}): {exc}") from None
    return torch.nn.Sequential(layers)


def profiled_batch(g: nx.DiGraph) -> int:
    """The profile's minibatch (:func:`schedlab.nona.workload.profiled_batch`), which must be a
    whole number of images to build an input of."""
    from schedlab.nona.workload import profiled_batch as batch_of

    batch = batch_of(g)
    if batch != int(batch):
        raise ValueError(
            f"{g.graph.get('name', 'graph')}: Input activation bytes are not 4*B*3*224*224 "
            f"for a whole B (B = {batch})"
        )
    return int(batch)


def _timed_run(model, x) -> dict[str, tuple[float, float, int]]:
    """One forward; per child module: (wall ms, thread ms, output numel), via hooks as gpt2_trace."""
    out: dict[str, tuple[float, float, int]] = {}
    start: dict[str, tuple[float, float]] = {}
    handles = []
    for name, mod in model.named_children():

        def pre(m, args, name=name):
            start[name] = (time.perf_counter(), time.thread_time())

        def post(m, args, y, name=name):
            wall, cpu = time.perf_counter(), time.thread_time()
            out[name] = ((wall - start[name][0]) * 1e3, (cpu - start[name][1]) * 1e3, y.numel())

        handles += [mod.register_forward_pre_hook(pre), mod.register_forward_hook(post)]
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
    return out


def measure_cpu_ms(
    model_name: str, batch: int | None = None, repeats: int = 3, seed: int = 0
) -> pd.DataFrame:
    """Per-node single-thread CPU forward times of a chain profile, next to its GPU times.

    Parameters
    ----------
    model_name
        A chain-shaped PipeDream profile (``"alexnet"``, ``"vgg16"``).
    batch
        Images per run; default the profiled minibatch. CPU times of a smaller batch are
        scaled linearly to the profiled batch (see the module docstring).
    repeats
        Timed runs after one warm-up run; each node's time is the median over them.
    seed
        ``torch.manual_seed`` for the random weights and input.

    Returns
    -------
    pandas.DataFrame
        Indexed by node id in chain order, ``Input`` first (its ``gpu_ms`` is the profile's
        data-loading time, CPU times 0). Columns ``desc``, ``gpu_ms`` (profile forward time),
        ``cpu_wall_ms``, ``cpu_thread_ms`` (per profiled minibatch), ``output_bytes`` (4 x
        numel of the output at the run batch, scaled likewise) and ``activation_bytes`` (profile).
        ``attrs`` holds ``batch``, ``profiled_batch``, ``repeats``, ``scale``.
    """
    import torch

    g = profiles.load(model_name)
    big = profiled_batch(g)
    batch = big if batch is None else int(batch)
    if not 1 <= batch <= big:
        raise ValueError(f"batch must be in 1..{big} (the profiled minibatch), got {batch}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as gpt2_trace: one thread
    try:
        torch.manual_seed(seed)
        model = chain_model(g).eval()
        x = torch.randn(batch, *IMAGE_SHAPE)
        runs = []
        with torch.no_grad():
            for r in range(repeats + 1):
                t = _timed_run(model, x)
                if r:  # run 0 is the warm-up
                    runs.append(t)
    finally:  # leave the caller's thread setting as it was
        torch.set_num_threads(threads)
    scale = big / batch  # linear in batch
    order = chain_order(g)
    rows = []
    for n in order:
        d = g.nodes[n]
        wall = statistics.median(run[n][0] for run in runs) if n in runs[0] else 0.0
        cpu = statistics.median(run[n][1] for run in runs) if n in runs[0] else 0.0
        numel = runs[0][n][2] if n in runs[0] else d["activation_bytes"] / 4 / scale
        rows.append(
            dict(
                node=n,
                desc=d["desc"],
                gpu_ms=d["forward_ms"],
                cpu_wall_ms=wall * scale,
                cpu_thread_ms=cpu * scale,
                output_bytes=4.0 * numel * scale,
                activation_bytes=d["activation_bytes"],
            )
        )
    table = pd.DataFrame(rows).set_index("node")
    table.attrs.update(
        model=model_name, batch=batch, profiled_batch=big, repeats=repeats, scale=scale, seed=seed
    )
    return table


def gpu_cpu_ratio(table: pd.DataFrame) -> dict[str, float]:
    """``sum(gpu_ms) / sum(cpu_ms)`` over the compute nodes (``Input`` left out), per clock.

    Both sums are per profiled minibatch, so this is also the per-sample ratio
    ``(gpu_ms / B) / (cpu_ms / B)``: multiply a CPU time per query by it to get the GPU
    time at the profile's per-sample efficiency (a lower bound for a batch-1 query).

    Examples
    --------
    >>> t = pd.DataFrame({"desc": ["Input", "Linear(...)"], "gpu_ms": [9.0, 2.0],
    ...                   "cpu_wall_ms": [0.0, 40.0], "cpu_thread_ms": [0.0, 20.0]})
    >>> gpu_cpu_ratio(t)
    {'wall': 0.05, 'thread': 0.1}
    """
    compute = table[table["desc"] != "Input"]
    gpu = float(compute["gpu_ms"].sum())
    return {clock: gpu / float(compute[f"cpu_{clock}_ms"].sum()) for clock in CLOCKS}


def ratio_by_kind(table: pd.DataFrame) -> dict[str, dict[str, float]]:
    """:func:`gpu_cpu_ratio` per layer kind (``Conv2d``, ``Linear``, ``ReLU``, ...).

    Kinds differ a lot (a GPU gains most on convolutions and least on element-wise ops), which
    is why one model-wide ratio is only a scale for GPT-2's differently mixed tasks. Kinds
    with no CPU time (all zero) are left out.

    Examples
    --------
    >>> t = pd.DataFrame({"desc": ["Input", "ReLU()", "ReLU(inplace)", "Linear(...)"],
    ...                   "gpu_ms": [9.0, 1.0, 1.0, 2.0], "cpu_wall_ms": [0.0, 10.0, 10.0, 400.0],
    ...                   "cpu_thread_ms": [0.0, 10.0, 10.0, 200.0]})
    >>> ratio_by_kind(t)["ReLU"]
    {'wall': 0.1, 'thread': 0.1}
    """
    kinds = table["desc"].str.split("(", n=1).str[0]
    out = {}
    for kind, part in table.groupby(kinds, sort=False):
        if kind != "Input" and (part[[f"cpu_{c}_ms" for c in CLOCKS]].sum() > 0).all():
            out[kind] = gpu_cpu_ratio(part)
    return out


def _gpt2_cpu_ms() -> float:
    """Sum of the forward times of the committed GPT-2 trace (``profiles.load("gpt2")``; a
    missing trace is an error there, not a number made up here)."""
    g = profiles.load("gpt2")
    return float(sum(d["forward_ms"] for _, d in g.nodes(data=True) if not d["desc"].startswith("Input")))


def measure_gpt2_cpu_ms(repeats: int = 3, seed: int = 0, seq_len: int = 128) -> dict[str, float]:
    """GPT-2's whole forward (batch 1 x ``seq_len``) on one thread: median wall and thread ms.

    The same model as :mod:`schedlab.nona.gpt2_trace` (``build_model(seed)``), timed without
    the tracer's hooks and ``TorchFunctionMode`` (they add work of their own), after one
    warm-up run. Measured in the same session as :func:`measure_cpu_ms`, it shares the
    machine and load, so ``thread ms * ratio_thread`` is the consistent GPU estimate.
    Needs ``transformers``.
    """
    import torch

    from schedlab.nona.gpt2_trace import build_model

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = build_model(seed)
        ids = torch.zeros((1, seq_len), dtype=torch.long)
        wall, cpu = [], []
        with torch.no_grad():
            for r in range(repeats + 1):
                t, c = time.perf_counter(), time.thread_time()
                model(input_ids=ids, use_cache=False)
                if r:  # run 0 is the warm-up
                    wall.append((time.perf_counter() - t) * 1e3)
                    cpu.append((time.thread_time() - c) * 1e3)
    finally:
        torch.set_num_threads(threads)
    return {
        "wall_ms": statistics.median(wall),
        "thread_ms": statistics.median(cpu),
        "repeats": repeats,
        "seq_len": seq_len,
    }


def summarise(table: pd.DataFrame, gpt2_cpu_ms: float) -> dict:
    """Per-model sums and ratios for the JSON report (``Input`` left out of the sums)."""
    compute = table[table["desc"] != "Input"]
    ratio = gpu_cpu_ratio(table)
    a = table.attrs
    return {
        "batch": a["batch"],
        "profiled_batch": a["profiled_batch"],
        "repeats": a["repeats"],
        "seed": a["seed"],
        "cpu_scale_to_profiled_batch": a["scale"],
        "gpu_ms_sum": float(compute["gpu_ms"].sum()),
        "cpu_wall_ms_sum": float(compute["cpu_wall_ms"].sum()),
        "cpu_thread_ms_sum": float(compute["cpu_thread_ms"].sum()),
        "ratio_wall": ratio["wall"],
        "ratio_thread": ratio["thread"],
        "gpt2_scaled_ms_wall": gpt2_cpu_ms * ratio["wall"],
        "gpt2_scaled_ms_thread": gpt2_cpu_ms * ratio["thread"],
        "ratio_by_kind": ratio_by_kind(table),
        "nodes": table.reset_index().to_dict(orient="records"),
    }


def parse_batches(tokens: list[str], models: list[str]) -> dict[str, int | None]:
    """``--batch`` values: ``N`` for every model, or ``model=N`` pairs.

    Examples
    --------
    >>> parse_batches(["32", "vgg16=4"], ["alexnet", "vgg16"])
    {'alexnet': 32, 'vgg16': 4}
    """
    out: dict[str, int | None] = dict.fromkeys(models)
    for tok in tokens:
        name, eq, value = tok.rpartition("=")
        if eq and name not in out:
            raise ValueError(f"--batch {tok!r} names a model not in --models {models}")
        for m in [name] if eq else models:
            out[m] = int(value)
    return out


def main(argv: list[str] | None = None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["alexnet"])
    parser.add_argument("--batch", nargs="*", default=[], help="N (all models) or model=N; default: profiled")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--gpt2",
        action="store_true",
        help="also time GPT-2's plain forward in this session (needs transformers)",
    )
    a = parser.parse_args(argv)
    batches = parse_batches(a.batch, a.models)
    gpt2_ms = _gpt2_cpu_ms()
    report: dict = {
        "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "threads": 1,
        "machine": {
            "processor": platform.processor(),
            "machine": platform.machine(),
            "cpu_count": os.cpu_count(),
        },
        "loadavg_start": list(os.getloadavg()),
        "gpt2_cpu_ms": gpt2_ms,  # sum of the committed trace's task times (wall, another session)
        "models": {},
    }
    for m in a.models:
        t0 = time.perf_counter()
        table = measure_cpu_ms(m, batch=batches[m], repeats=a.repeats, seed=a.seed)
        s = summarise(table, gpt2_ms)
        s["elapsed_s"] = time.perf_counter() - t0
        report["models"][m] = s
        print(
            f"{m}: batch {s['batch']} (profiled {s['profiled_batch']}): GPU {s['gpu_ms_sum']:.2f} ms, "
            f"CPU wall {s['cpu_wall_ms_sum']:.1f} ms, thread {s['cpu_thread_ms_sum']:.1f} ms; "
            f"ratio wall {s['ratio_wall']:.5f}, thread {s['ratio_thread']:.5f}; "
            f"GPT-2 {gpt2_ms:.0f} ms -> {s['gpt2_scaled_ms_wall']:.2f} / {s['gpt2_scaled_ms_thread']:.2f} ms",
            flush=True,
        )
    if a.gpt2:
        g2 = measure_gpt2_cpu_ms(repeats=a.repeats, seed=a.seed)
        g2["scaled_ms"] = {
            m: {"wall": g2["wall_ms"] * s["ratio_wall"], "thread": g2["thread_ms"] * s["ratio_thread"]}
            for m, s in report["models"].items()
        }
        report["gpt2_same_session"] = g2
        # the factor on the committed trace's task times (workload time_scale={"gpt2": f}): GPT-2's
        # thread time measured now, on the profiles' hardware class, over the committed sum
        report["gpt2_time_scale"] = {
            m: g2["thread_ms"] * s["ratio_thread"] / gpt2_ms for m, s in report["models"].items()
        }
        print(
            f"GPT-2 plain forward here: wall {g2['wall_ms']:.1f} ms, thread {g2['thread_ms']:.1f} ms; scaled "
            + ", ".join(f"{m} {v['wall']:.2f} / {v['thread']:.2f} ms" for m, v in g2["scaled_ms"].items())
            + "; time_scale on the committed trace: "
            + ", ".join(f"{m} {f:.5f}" for m, f in report["gpt2_time_scale"].items()),
            flush=True,
        )
    report["loadavg_end"] = list(os.getloadavg())
    atomic_write_json(a.out, report)  # temp file in the same folder, then os.replace
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
