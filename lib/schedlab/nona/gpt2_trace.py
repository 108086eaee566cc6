"""Trace GPT-2 small into a PipeDream-format ``graph.txt`` (no public profile exists).

Needs the optional ``trace`` extra (``pip install -e .[trace]``: torch, transformers);
nothing else in the suite imports torch (this module imports it lazily). Run::

    python -m schedlab.nona.gpt2_trace                 # -> data/generated/nona/gpt2/graph.txt
    python -m schedlab.nona.gpt2_trace --granularity operator --out .../graph_operator.txt
    python -m schedlab.nona.gpt2_trace --whitelist GPT2Attention --out .../graph_whitelist_attention.txt
    python -m schedlab.nona.gpt2_trace --split-qkv --out .../graph_split_qkv.txt

What is traced
--------------
Hugging Face ``GPT2LMHeadModel`` with the default ``GPT2Config`` (12 layers, 768 wide,
12 heads, vocabulary 50257), random weights (``torch.manual_seed(seed)``; nothing is
downloaded), eager attention (explicit matmul/softmax, as GPT-2 was written when PipeDream
profiled models; the fused SDPA kernel would hide the attention's structure), no KV cache,
one query of ``batch`` x ``seq_len`` token ids.

Granularity (``trace(granularity=...)``)
----------------------------------------
``"module"`` (default; :func:`trace_module`), PipeDream's profiler granularity
(``graph_creator.py``: one node per call of a module with no sub-modules, plus one node per
tensor function applied to activations between modules). Leaf-module calls are caught with
forward hooks, the functions between them with a ``TorchFunctionMode`` at the level the
model's Python code calls them (``split``, ``view``, ``transpose``, ``matmul``, ``softmax``,
the residual ``add`` ...). ``whitelist`` keeps named module classes whole, like PipeDream's
``module_whitelist``. PipeDream's own tensor wrapper only knows ``view``, ``transpose``,
``+``, ``+=``, ``*``, ``[]``, ``size`` and ``cat`` (:data:`PIPEDREAM_FUNCTIONS`), so it cannot
run through today's GPT-2 attention (``split``, ``matmul``, ``softmax``) unless
``GPT2Attention`` is whitelisted: the ``--whitelist GPT2Attention`` variant is the graph such a
profile would give.

``"operator"`` (:func:`trace_operator`, the previous default): ``torch.export`` ATen graph,
all ATen ops of a leaf module form one task, every other ATen op on the activation path is
a task.

Separate q/k/v projections (``trace(split_qkv=True)``, module granularity only)
------------------------------------------------------------------------------
GPT-2 computes its queries, keys and values with one fused ``Conv1D`` ``c_attn``
(768 -> 2304) and splits the result, so the three attention branches traced above are views
(``__getitem__``, ``View``, ``Transpose``) that carry almost no compute. With ``split_qkv``,
:func:`split_qkv_projections` replaces each block's ``c_attn`` by three ``Conv1D`` (768 -> 768)
modules ``q``, ``k``, ``v`` whose weights and biases are the column slices of ``c_attn``'s:
the same numbers, so the same model up to float rounding (``tests/nona/test_gpt2_trace_split_qkv.py``),
but each attention branch now starts with a real projection task. This is the layout of models
with separate projections (GPT-NeoX, LLaMA); it is not the paper's GPT-2.

Known differences from the paper's GPT-2 (reported, not patched)
----------------------------------------------------------------
* Table II's "Layers 164" is exactly ``len(list(GPT2LMHeadModel(GPT2Config()).modules()))``
  (12 blocks x 13 modules + 8), which suggests the paper profiled this very model class.
* Size: today's ``transformers`` GPT-2 has no attention buffers, so the graph holds
  474.70 MiB of parameters (124,439,808 float32, ``wte``/``lm_head`` tied, counted once). The
  4.x versions registered per block a causal mask ``bias`` (1x1x1024x1024 bool) and a scalar
  ``masked_bias`` (float32): :func:`legacy_attention_buffer_bytes` = 12,582,960 bytes; with
  them, parameters + buffers = 486.70 MiB, Table II's "487 MB" (MiB, as its other rows).
  The graph is not edited to add them. Checked once against ``transformers`` 4.30.2
  (installed aside with ``pip install --no-deps --target``, not part of the pipeline):
  164 modules, 497,759,232 parameter + 12,582,960 buffer bytes = 486.70 MiB; its module trace
  has 405 tasks -> 88 (same contracted structure as today's), and with ``GPT2Attention``
  whitelisted 117 -> 4 at 486.70 MiB (the buffers belong to the whitelisted module).
* Tasks: 395 (module granularity; 382 at operator level; 131 with ``GPT2Attention``
  whitelisted) against the paper's 178; after contraction 88 (88; 4) against 40. See the
  ``gpt2_dag`` notebook.
"""

from __future__ import annotations

import argparse
import operator
import os
import re
import statistics
import time
from pathlib import Path

import networkx as nx

from schedlab import paths
from schedlab.nona.graphs import write_graph

DEFAULT_OUT = paths.GENERATED / "nona" / "gpt2" / "graph.txt"
DROPPED_OPS = ("_assert_tensor_metadata",)


def _op_desc(target) -> str:
    if target is operator.getitem:
        return "__getitem__"
    name = getattr(target, "__name__", str(target)).split(".")[0]
    name = name.strip("_")
    return "".join(part.capitalize() for part in name.split("_")) or str(target)


def _nbytes(val) -> list[float]:
    import torch

    if isinstance(val, torch.Tensor):
        return [float(val.numel() * val.element_size())]
    if isinstance(val, list | tuple):
        return [b for v in val for b in _nbytes(v)]
    return []


def _inputs(node) -> list:
    import torch.fx

    out: list = []
    torch.fx.node.map_arg((node.args, node.kwargs), out.append)
    return out


def build_model(seed: int = 0, split_qkv: bool = False):
    """GPT-2 small, default config, random weights, eager attention, eval mode.

    ``split_qkv`` replaces each block's fused ``c_attn`` by separate q/k/v projections with
    the same weights (:func:`split_qkv_projections`).
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config()
    cfg.use_cache = False
    model = GPT2LMHeadModel(cfg)
    model.config._attn_implementation = "eager"
    if split_qkv:
        split_qkv_projections(model)
    return model.eval()


def split_qkv_projections(model) -> int:
    """Replace, in place, every block's fused ``c_attn`` by three projections ``q``, ``k``, ``v``.

    ``c_attn`` is a ``Conv1D`` (768 -> 3 x 768) whose output ``GPT2Attention`` splits with
    ``.split(split_size, dim=2)`` into queries, keys and values. The replacement holds three
    ``Conv1D`` (768 -> 768) children whose weights and biases are copies of ``c_attn``'s column
    slices ``[0:768]``, ``[768:1536]``, ``[1536:2304]``, so every projection computes the same
    numbers as its slice of the fused product. Its forward returns the three outputs in a tuple
    that answers the attention's ``.split`` call itself, so ``transformers``' attention code runs
    unchanged and no concatenate-then-split is added to the traced graph.

    Returns the number of blocks changed.

    Examples
    --------
    >>> model = build_model(split_qkv=True)  # doctest: +SKIP
    >>> model.transformer.h[0].attn.c_attn  # doctest: +SKIP
    SplitQKV(
      (q): Conv1D(nf=768, nx=768)
      (k): Conv1D(nf=768, nx=768)
      (v): Conv1D(nf=768, nx=768)
    )
    """
    from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

    split_cls = _split_qkv_class()
    changed = 0
    for mod in model.modules():
        if isinstance(mod, GPT2Attention) and not isinstance(mod.c_attn, split_cls):
            if getattr(mod, "is_cross_attention", False):
                raise ValueError("split_qkv_projections: cross-attention blocks are not supported")
            mod.c_attn = split_cls(mod.c_attn, mod.split_size)
            changed += 1
    if not changed:
        raise ValueError("split_qkv_projections: the model has no GPT2Attention with a fused c_attn")
    return changed


_SPLIT_QKV_CLASS: list = []


def _split_qkv_class():
    """The ``SplitQKV`` module class (built on first use: torch is imported lazily)."""
    if _SPLIT_QKV_CLASS:
        return _SPLIT_QKV_CLASS[0]
    import torch
    from transformers.pytorch_utils import Conv1D

    class QKV(tuple):
        """(q, k, v) answering ``GPT2Attention``'s ``c_attn(x).split(split_size, dim=2)``."""

        def split(self, split_size: int, dim: int = 0) -> tuple:
            last = self[0].dim() - 1
            if dim not in (last, -1) or any(t.shape[-1] != split_size for t in self):
                raise ValueError(
                    f"SplitQKV output: expected split({self[0].shape[-1]}, dim={last}), "
                    f"got split({split_size}, dim={dim})"
                )
            return tuple(self)

    class SplitQKV(torch.nn.Module):
        """Three ``Conv1D`` projections with the column slices of a fused ``c_attn``."""

        def __init__(self, fused: Conv1D, split_size: int):
            super().__init__()
            if fused.nf != 3 * split_size:
                raise ValueError(
                    f"c_attn: expected nf = 3 x split_size = {3 * split_size}, got nf={fused.nf}"
                )
            for i, name in enumerate(("q", "k", "v")):
                part = Conv1D(split_size, fused.nx)
                cols = slice(i * split_size, (i + 1) * split_size)
                with torch.no_grad():  # copies, so the three own contiguous memory like c_attn did
                    part.weight.copy_(fused.weight[:, cols])
                    part.bias.copy_(fused.bias[cols])
                setattr(self, name, part)

        def forward(self, x):
            return QKV((self.q(x), self.k(x), self.v(x)))

    _SPLIT_QKV_CLASS.append(SplitQKV)
    return SplitQKV


def trace_operator(
    seq_len: int = 128, batch: int = 1, repeats: int = 5, seed: int = 0, progress: bool = True
) -> nx.DiGraph:
    """Operator-granularity task graph (``torch.export`` ATen ops; see the module docstring)."""
    import torch

    torch.set_num_threads(1)
    model = build_model(seed)
    ids = torch.zeros((batch, seq_len), dtype=torch.long)
    with torch.no_grad():
        ep = torch.export.export(model, (), {"input_ids": ids, "use_cache": False}, strict=False)
    gm = ep.graph_module
    sig = ep.graph_signature
    user_inputs = set(sig.user_inputs)
    fx_nodes = list(gm.graph.nodes)
    input_node = next(n for n in fx_nodes if n.op == "placeholder" and n.name in user_inputs)
    output_node = next(n for n in fx_nodes if n.op == "output")
    logits = _inputs(output_node)[0]

    # activation path: descendants of input_ids
    data = {input_node}
    for n in fx_nodes:
        if n.op == "call_function" and any(m in data for m in _inputs(n)):
            data.add(n)

    def leaf_of(n) -> str | None:
        stack = n.meta.get("nn_module_stack") or {}
        if not stack:
            return None
        fqn = list(stack.values())[-1][0]
        mod = model.get_submodule(fqn) if fqn else model
        return fqn if not list(mod.children()) else None

    task_of: dict = {input_node: "Input"}
    for n in fx_nodes:
        if n.op != "call_function" or getattr(n.target, "__name__", "").startswith(DROPPED_OPS):
            continue
        fqn = leaf_of(n)
        if fqn is not None:
            task_of[n] = ("module", fqn)
        elif n in data:
            task_of[n] = ("op", n.name)

    # keep tasks on a path to the logits
    needed, stack = set(), [logits]
    while stack:
        n = stack.pop()
        if n in needed:
            continue
        needed.add(n)
        stack.extend(m for m in _inputs(n) if m.op != "placeholder" or m is input_node)
    tasks: dict = {}
    for n in fx_nodes:
        if n in task_of and n in needed:
            tasks.setdefault(task_of[n], []).append(n)

    memo: dict = {}

    def producers(m) -> set:
        """Tasks whose output reaches ``m`` through constant (non-task) ops, e.g. wpe -> to -> add."""
        if m in memo:
            return memo[m]
        key = task_of.get(m)
        if key is not None and key in tasks:
            out = {key}
        elif m.op == "call_function":
            out = set().union(*(producers(x) for x in _inputs(m))) if _inputs(m) else set()
        else:
            out = set()
        memo[m] = out
        return out

    edges: set = set()
    for key, members in tasks.items():
        for n in members:
            for m in _inputs(n):
                for src in producers(m):
                    if src != key:
                        edges.add((src, key))
    for key in tasks:  # a module fed only by constants (wpe on position ids): fed by the input
        if key != "Input" and not any(v == key for _, v in edges):
            edges.add(("Input", key))

    times = _profile(ep, ids, repeats, progress)
    # deterministic numbering: topological, ties broken by the first op's position in the graph
    pos = {n: i for i, n in enumerate(fx_nodes)}
    first = {key: min(pos[n] for n in members) for key, members in tasks.items()}
    dag = nx.DiGraph()
    dag.add_nodes_from(tasks)
    dag.add_edges_from(edges)
    order = list(nx.lexicographical_topological_sort(dag, key=lambda k: first[k]))
    names = {key: f"node{i}" for i, key in enumerate(order, start=1)}
    g = nx.DiGraph(name="gpt2")
    owner: dict[int, str] = {}
    for key in order:
        members = tasks[key]
        consumed = [n for n in members if n is logits or any(task_of.get(u) != key for u in n.users)]
        sizes = [b for n in consumed for b in _nbytes(n.meta.get("val"))]
        if key == "Input":
            desc, sizes = f"Input(batch={batch}, seq_len={seq_len})", _nbytes(ids)
            params = 0.0
        elif key[0] == "module":
            mod = model.get_submodule(key[1])
            desc = re.sub(r"\s+", " ", str(mod))
            params = 0.0
            for p in mod.parameters(recurse=False):
                if id(p) not in owner:
                    owner[id(p)] = key[1]
                    params += p.numel() * p.element_size()
        else:
            n = members[0]
            desc = _op_desc(n.target)
            if n.target is operator.getitem:
                desc += f"({n.args[1]})"
            params = 0.0
        attrs = dict(
            desc=desc.replace(" -- ", " - "),
            forward_ms=sum(times.get(n.name, 0.0) for n in members),
            backward_ms=0.0,
            parameter_bytes=float(params),
        )
        if len(sizes) > 1:
            attrs["activation_sizes"] = tuple(sizes)
            attrs["activation_bytes"] = float(sum(sizes))
        else:
            attrs["activation_bytes"] = float(sizes[0]) if sizes else 0.0
        g.add_node(names[key], **attrs)
    for i, (u, v) in enumerate(sorted(edges, key=lambda e: (order.index(e[0]), order.index(e[1])))):
        g.add_edge(names[u], names[v], order=i)
    return g


GRANULARITIES = ("module", "operator")

# The tensor functions PipeDream's profiler records as nodes (``TensorWrapper`` in
# ``profiler/torchmodules/torchgraph/graph_creator.py``): everything else raises on its
# wrapper, so a module calling anything else must be whitelisted (kept whole) there.
PIPEDREAM_FUNCTIONS = ("view", "transpose", "__add__", "__iadd__", "__mul__", "__getitem__", "size", "cat")


def legacy_attention_buffer_bytes(n_layer: int = 12, n_positions: int = 1024) -> int:
    """Bytes of the attention buffers GPT-2 carried in ``transformers`` 4.x (none today).

    Per block: ``bias``, the causal mask ``tril(ones(n_positions, n_positions, dtype=bool))``
    viewed as 1x1xPxP (1 byte per element), and ``masked_bias``, a float32 scalar.

    >>> legacy_attention_buffer_bytes()
    12582960
    """
    return n_layer * (n_positions * n_positions + 4)


def _func_name(func) -> str:
    name = getattr(func, "__name__", None) or str(func)
    return name


def _func_desc(func, args) -> str:
    name = _func_name(func)
    if name == "__getitem__" and len(args) > 1:
        return f"__getitem__({args[1]})".replace(" -- ", " - ")
    name = name.strip("_")
    if name.startswith("i") and name[1:] in ("add", "sub", "mul"):  # __iadd__ -> Add(inplace)
        return name[1:].capitalize() + "(inplace)"
    return "".join(part.capitalize() for part in name.split("_")) or name


def trace(
    seq_len: int = 128,
    batch: int = 1,
    repeats: int = 5,
    seed: int = 0,
    progress: bool = True,
    granularity: str = "module",
    whitelist: tuple[str, ...] = (),
    split_qkv: bool = False,
) -> nx.DiGraph:
    """The task graph of GPT-2 (node attrs as :func:`schedlab.nona.graphs.read_graph`).

    Parameters
    ----------
    granularity
        ``"module"`` (default, PipeDream's granularity): one task per call of a leaf
        ``nn.Module`` plus one per tensor function applied to activations between modules
        (see :func:`trace_module`). ``"operator"``: one task per ATen operator outside leaf
        modules (:func:`trace_operator`, the previous default; finer).
    whitelist
        Module class names kept whole as one task (PipeDream's ``module_whitelist``), e.g.
        ``("GPT2Attention",)``; only with ``granularity="module"``.
    split_qkv
        Separate q/k/v projections with ``c_attn``'s weights (:func:`split_qkv_projections`);
        only with ``granularity="module"``.
    """
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}")
    if granularity == "operator":
        if whitelist:
            raise ValueError("whitelist applies to granularity='module' only")
        if split_qkv:
            raise ValueError("split_qkv applies to granularity='module' only")
        return trace_operator(seq_len=seq_len, batch=batch, repeats=repeats, seed=seed, progress=progress)
    return trace_module(
        seq_len=seq_len,
        batch=batch,
        repeats=repeats,
        seed=seed,
        progress=progress,
        whitelist=whitelist,
        split_qkv=split_qkv,
    )


def _record(model, ids, whitelist: tuple[str, ...]) -> list[dict]:
    """Run ``model`` once, recording leaf-module calls and activation functions in call order.

    Each event is ``{"kind", "desc", "inputs" (event indices; -1 = the input ids),
    "sizes" (bytes of each output tensor), "params" (module only), "ms"}``. Data flow is
    followed through Python object identity of the tensors (all kept alive until the end,
    so ids are not reused); a function whose tensor arguments have no producer works on
    constants (causal mask, position ids) and is not a task, as PipeDream sees only tensors
    derived from the input.
    """
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_leaves

    events: list[dict] = []
    producer: dict[int, tuple[int, int]] = {id(ids): (-1, 0)}  # tensor id -> (event, output index)
    alive: list = [ids]
    state = {"depth": 0, "t0": []}

    def sources(obj) -> list[tuple[int, int]]:
        out: list = []
        for t in tree_leaves(obj):
            if isinstance(t, torch.Tensor) and id(t) in producer and producer[id(t)] not in out:
                out.append(producer[id(t)])
        return out

    def emit(kind, desc, ins, out, ms, params=0.0):
        tensors = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        events.append(
            dict(
                kind=kind,
                desc=desc,
                inputs=ins,
                ms=ms,
                params=params,
                sizes=[float(t.numel() * t.element_size()) for t in tensors],
            )
        )
        for i, t in enumerate(tensors):
            producer[id(t)] = (len(events) - 1, i)
            alive.append(t)

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if state["depth"]:  # inside a task module: part of that task
                return func(*args, **kwargs)
            ins = sources((args, kwargs))
            t = time.perf_counter()
            out = func(*args, **kwargs)
            ms = (time.perf_counter() - t) * 1e3
            if ins and any(isinstance(x, torch.Tensor) for x in tree_leaves(out)):
                emit("function", _func_desc(func, args), ins, out, ms)
            return out

    def pre(mod, args, kwargs):
        state["depth"] += 1
        state["t0"].append(time.perf_counter())

    def post(mod, args, kwargs, out):
        ms = (time.perf_counter() - state["t0"].pop()) * 1e3
        state["depth"] -= 1
        # parameters and buffers the task owns (a tied parameter once, at its first user)
        params = 0.0
        for tensor in [*mod.parameters(), *mod.buffers()]:
            if id(tensor) not in owned:
                owned.add(id(tensor))
                params += tensor.numel() * tensor.element_size()
        emit(
            "module",
            re.sub(r"\s+", " ", str(mod)).replace(" -- ", " - "),
            sources((args, kwargs)),
            out,
            ms,
            params,
        )

    known = {type(m).__name__ for m in model.modules()}
    unknown = sorted(set(whitelist) - known)
    if unknown:
        raise ValueError(f"whitelist names no module class of the model: {unknown}; classes: {sorted(known)}")
    owned: set[int] = set()
    handles = []
    for _, mod in model.named_modules():
        if mod is model:
            continue
        is_task = type(mod).__name__ in whitelist or not list(mod.children())
        inside_task = any(type(a).__name__ in whitelist for a in _ancestors(model, mod))
        if is_task and not inside_task:
            handles.append(mod.register_forward_pre_hook(pre, with_kwargs=True))
            handles.append(mod.register_forward_hook(post, with_kwargs=True))
    try:
        with torch.no_grad(), Mode():
            out = model(input_ids=ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    if id(out.logits) not in producer:
        raise RuntimeError("GPT-2 trace: the logits were not produced by a recorded task")
    events.append(
        dict(kind="output", desc="", inputs=[producer[id(out.logits)]], ms=0.0, params=0.0, sizes=[])
    )
    return events


def _ancestors(model, mod) -> list:
    """Modules strictly above ``mod`` in ``model``'s hierarchy."""
    names = {m: n for n, m in model.named_modules()}
    name = names[mod]
    parts = name.split(".")
    return [model.get_submodule(".".join(parts[:i])) for i in range(1, len(parts))]


def trace_module(
    seq_len: int = 128,
    batch: int = 1,
    repeats: int = 5,
    seed: int = 0,
    progress: bool = True,
    whitelist: tuple[str, ...] = (),
    split_qkv: bool = False,
) -> nx.DiGraph:
    """Module-granularity task graph of GPT-2, as PipeDream's profiler builds it.

    Tasks: ``Input`` (the token ids); one per call of a leaf ``nn.Module`` (or of a module
    whose class is in ``whitelist``, kept whole with its children), described by
    ``str(module)``; one per tensor function called outside task modules on activations
    (``View``, ``Split``, ``Transpose``, ``Matmul``, ``Mul``, ``Add``, ``Softmax``, ``Type``,
    ``Dropout``, ``Reshape``, ``Contiguous``, ``To``...), captured with a
    ``TorchFunctionMode`` at the level the model's Python code calls them (not ATen).
    A function with several tensor outputs (``split`` into q, k, v) is one task with a list
    ``activation_size`` and one ``__getitem__(i)`` selector task per used output, so each
    consumer's edge carries the bytes it reads (PipeDream's representation of multi-output
    nodes). Edges: real tensor data flow. A module fed only by constants (``wpe`` on the
    position ids) is fed by ``Input``. Tasks with no path to the logits are dropped.

    Attributes: ``forward_compute_time`` = median over ``repeats`` recorded CPU runs
    (single thread, after one warm-up run) of the call's wall time in ms (a leaf module:
    from its forward pre-hook to its forward hook); ``backward_compute_time`` = 0;
    ``activation_size`` = output bytes from shapes; ``parameter_size`` = bytes of the
    module's parameters and buffers (a tied tensor counted once, at its first user).
    Metadata-only calls (``size()``, ``dim()``, shape getters) return no tensor and are not
    tasks; PipeDream writes 4-byte ``Size`` nodes for them, which we omit.
    """
    import torch

    torch.set_num_threads(1)
    model = build_model(seed, split_qkv=split_qkv)
    ids = torch.zeros((batch, seq_len), dtype=torch.long)
    runs = range(repeats + 1)
    if progress:
        from tqdm import tqdm

        runs = tqdm(runs, desc="tracing GPT-2 (module granularity) on CPU")
    recorded = []
    for r in runs:
        ev = _record(model, ids, tuple(whitelist))
        if r == 0:  # warm-up run discarded (structure is checked against it)
            first = ev
            continue
        if [(e["desc"], e["inputs"]) for e in ev] != [(e["desc"], e["inputs"]) for e in first]:
            raise RuntimeError("GPT-2 trace: two runs recorded different graphs")
        recorded.append(ev)
    events = recorded[0] if recorded else first
    times = [
        statistics.median(run[i]["ms"] for run in recorded) if recorded else 0.0 for i in range(len(events))
    ]

    # keep the events on a path to the logits
    needed, stack = set(), [len(events) - 1]
    while stack:
        i = stack.pop()
        if i in needed or i < 0:
            continue
        needed.add(i)
        stack.extend(src for src, _ in events[i]["inputs"])
    # selectors for multi-output tasks, in first-use order
    selectors: list[tuple[int, int]] = []
    for i in sorted(needed):
        for src, k in events[i]["inputs"]:
            if src >= 0 and len(events[src]["sizes"]) > 1 and (src, k) not in selectors:
                selectors.append((src, k))

    g = nx.DiGraph(name="gpt2")
    name: dict = {}

    def add(key, **attrs):
        name[key] = f"node{len(name) + 1}"
        g.add_node(name[key], **attrs)

    add(
        -1,
        desc=f"Input(batch={batch}, seq_len={seq_len})",
        forward_ms=0.0,
        backward_ms=0.0,
        activation_bytes=float(ids.numel() * ids.element_size()),
        parameter_bytes=0.0,
    )
    edges: list = []

    def link(src, k, dst):
        u = ("sel", src, k) if (src, k) in selectors else src
        if (name[u], name[dst]) not in edges:
            edges.append((name[u], name[dst]))

    for i in sorted(needed):
        e = events[i]
        if e["kind"] == "output":
            continue
        attrs = dict(desc=e["desc"], forward_ms=times[i], backward_ms=0.0, parameter_bytes=float(e["params"]))
        if len(e["sizes"]) > 1:
            attrs["activation_sizes"] = tuple(e["sizes"])
        attrs["activation_bytes"] = float(sum(e["sizes"]))
        add(i, **attrs)
        for k in range(len(e["sizes"])):
            if (i, k) in selectors:
                add(
                    ("sel", i, k),
                    desc=f"__getitem__({k})",
                    forward_ms=0.0,
                    backward_ms=0.0,
                    activation_bytes=e["sizes"][k],
                    parameter_bytes=0.0,
                )
                edges.append((name[i], name[("sel", i, k)]))
        ins = e["inputs"] or [(-1, 0)]  # fed by constants only: fed by the input
        for src, k in ins:
            link(src, k, i)
    for j, (u, v) in enumerate(edges):
        g.add_edge(u, v, order=j)
    return g


def _profile(ep, ids, repeats: int, progress: bool) -> dict[str, float]:
    """Median wall time (ms) of each call_function node over ``repeats`` interpreted runs."""
    import torch
    import torch.fx

    gm = ep.graph_module
    state = {**ep.state_dict, **ep.constants}
    args = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind.name == "USER_INPUT":
            args.append(ids)
        else:
            args.append(state[spec.target])
    samples: dict[str, list[float]] = {}

    class Timer(torch.fx.Interpreter):
        def run_node(self, n):
            if n.op != "call_function":
                return super().run_node(n)
            t = time.perf_counter()
            out = super().run_node(n)
            samples.setdefault(n.name, []).append((time.perf_counter() - t) * 1e3)
            return out

    runs = range(repeats + 1)
    if progress:
        from tqdm import tqdm

        runs = tqdm(runs, desc="profiling GPT-2 forward (CPU)")
    with torch.no_grad():
        for r in runs:
            Timer(gm).run(*args)
            if r == 0:  # warm-up run discarded
                samples.clear()
    return {k: statistics.median(v) for k, v in samples.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--granularity", choices=GRANULARITIES, default="module")
    parser.add_argument(
        "--whitelist",
        nargs="*",
        default=[],
        help="module classes kept whole (PipeDream's module_whitelist), e.g. GPT2Attention",
    )
    parser.add_argument(
        "--split-qkv",
        action="store_true",
        help="separate q/k/v projections with c_attn's weights (module granularity only)",
    )
    a = parser.parse_args(argv)
    g = trace(
        seq_len=a.seq_len,
        batch=a.batch,
        repeats=a.repeats,
        seed=a.seed,
        granularity=a.granularity,
        whitelist=tuple(a.whitelist),
        split_qkv=a.split_qkv,
    )
    write_graph(g, a.out)
    os.chmod(a.out, 0o644)  # atomic writes create 0600 temporaries; this file is committed
    print(f"wrote {a.out}: {g.number_of_nodes()} tasks, {g.number_of_edges()} edges")


if __name__ == "__main__":
    main()
