"""Trace GPT-2 small into a PipeDream-format ``graph.txt`` (no public profile exists).

Needs the optional ``trace`` extra (``pip install -e .[trace]``: torch, transformers);
nothing else in the suite imports this module. Run::

    python -m schedlab.nona.gpt2_trace            # -> data/generated/nona/gpt2/graph.txt

What is traced
--------------
Hugging Face ``GPT2LMHeadModel`` with the default ``GPT2Config`` (12 layers, 768 wide,
12 heads, vocabulary 50257), random weights (``torch.manual_seed(seed)``; nothing is
downloaded), eager attention (explicit matmul/softmax, as GPT-2 was written when PipeDream
profiled models; the fused SDPA kernel would hide the attention's structure), no KV cache,
one query of ``batch`` x ``seq_len`` token ids.

The model is captured with ``torch.export`` (an ATen-level FX graph with each op's module
stack). Tasks follow PipeDream's profiler (``graph_creator.py``: one node per call of a
module with no sub-modules, plus one node per tensor operation applied to activations):

* all ATen ops whose innermost module is a *leaf* module (Embedding, LayerNorm, Conv1D,
  Dropout, NewGELU, the LM head) form one task, described by ``str(module)``;
* every other op on the activation path (a descendant of ``input_ids``) is its own task:
  ``Add``, ``View``, ``Transpose``, ``Split``, ``__getitem__(i)``, ``MatMul``, ``Softmax``...;
* ops that do not depend on the input values (the causal mask, position ids) are constants
  and are not tasks, as PipeDream does not see unwrapped tensors; a leaf module whose
  inputs are all constants (the position embedding ``wpe``) is a task fed by ``Input``;
* ``_assert_tensor_metadata`` checks and ops whose result is unused are dropped.

Attributes: ``forward_compute_time`` is the median over ``repeats`` CPU runs (single thread,
after one warm-up) of the task's ops timed one by one with an FX interpreter, in ms;
``backward_compute_time`` is 0 (inference; not profiled); ``activation_size`` is the
bytes of the task's output tensor(s) from their shapes (a list for multi-output ops, as
PipeDream writes ``[a; b]``); ``parameter_size`` the bytes of the parameters the module owns,
a tied parameter (the LM head shares ``wte``) counted once, at its first user. The ``Input``
node's description records the traced batch, ``Input(batch=1, seq_len=128)``.

Known differences from the paper's GPT-2 (reported, not patched): the Hugging Face model of
today has no ``attn.bias`` causal-mask buffers (12 x 1024 x 1024 bools = 12 MiB), so the
size is 474.7 MiB of parameters, not 487; and our operator granularity gives more tasks than
the paper's 178 (see the GPT-2 notebook for the counts).
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


def build_model(seed: int = 0):
    """GPT-2 small, default config, random weights, eager attention, eval mode."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config()
    cfg.use_cache = False
    model = GPT2LMHeadModel(cfg)
    model.config._attn_implementation = "eager"
    return model.eval()


def trace(seq_len: int = 128, batch: int = 1, repeats: int = 5, seed: int = 0,
          progress: bool = True) -> nx.DiGraph:
    """The task graph of GPT-2 (node attrs as :func:`schedlab.nona.graphs.read_graph`)."""
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
        attrs = dict(desc=desc.replace(" -- ", " - "), forward_ms=sum(times.get(n.name, 0.0) for n in members),
                     backward_ms=0.0, parameter_bytes=float(params))
        if len(sizes) > 1:
            attrs["activation_sizes"] = tuple(sizes)
            attrs["activation_bytes"] = float(sum(sizes))
        else:
            attrs["activation_bytes"] = float(sizes[0]) if sizes else 0.0
        g.add_node(names[key], **attrs)
    for i, (u, v) in enumerate(sorted(edges, key=lambda e: (order.index(e[0]), order.index(e[1])))):
        g.add_edge(names[u], names[v], order=i)
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
    a = parser.parse_args(argv)
    g = trace(seq_len=a.seq_len, batch=a.batch, repeats=a.repeats, seed=a.seed)
    write_graph(g, a.out)
    os.chmod(a.out, 0o644)  # atomic writes create 0600 temporaries; this file is committed
    print(f"wrote {a.out}: {g.number_of_nodes()} tasks, {g.number_of_edges()} edges")


if __name__ == "__main__":
    main()
