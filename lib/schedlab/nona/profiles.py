"""The five DNN models of Nona and the per-model figures of its Table II.

Four profiles are PipeDream's (raw inputs ``nona/<model>/graph.txt``). GPT-2 has no public
PipeDream profile; the project traces one itself (Nona optimiser issue) into
``data/generated/nona/gpt2/graph.txt``. Until that file exists, GPT-2 is reported as a
missing input rather than guessed.

Three more PipeDream profiles are usable by name (:data:`EXTRA_MODELS`, not in the paper):
``inception_v3``, ``nasnetamobile`` and ``gnmt``, whose DAGs have parallel branches that carry
compute. ``inception_v3`` and ``nasnetamobile`` have several sinks (auxiliary heads) and
``gnmt`` several roots and sinks; :func:`schedlab.nona.workload.close_dag` gives them the one
root and one sink Nona's decision space needs.

Examples
--------
>>> MODELS
('gpt2', 'densenet121', 'vgg16', 'alexnet', 'resnet18')
>>> EXTRA_MODELS
('inception_v3', 'nasnetamobile', 'gnmt')
>>> raw_input_name("resnet18")
'nona/resnet18/graph.txt'
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pandas as pd

from schedlab import data, paths
from schedlab.nona.contraction import contract
from schedlab.nona.graphs import read_graph

MODELS: tuple[str, ...] = ("gpt2", "densenet121", "vgg16", "alexnet", "resnet18")  # Table II order
#: PipeDream profiles with real parallel branches (not in the paper; shown beside its models)
EXTRA_MODELS: tuple[str, ...] = ("inception_v3", "nasnetamobile", "gnmt")
ALL_MODELS: tuple[str, ...] = MODELS + EXTRA_MODELS
GENERATED_MODELS = {"gpt2"}
MIB = 2**20

# Tensor ops PipeDream records as graph nodes that are not network layers: the input,
# branch merges and the shape op before the classifier's flatten.
NON_LAYER_OPS = ("Input", "Add", "Concat", "Size")


def raw_input_name(model: str) -> str:
    _check(model)
    return f"nona/{model}/graph.txt"


def _check(model: str) -> None:
    if model not in ALL_MODELS:
        raise ValueError(f"unknown Nona model {model!r}; expected one of {', '.join(ALL_MODELS)}")


def graph_path(model: str) -> Path | None:
    """Where the model's ``graph.txt`` is; ``None`` if it is a generated input not built yet.

    PipeDream profiles are fetched through the data layer on first use.
    """
    _check(model)
    if model in GENERATED_MODELS:
        path = paths.GENERATED / "nona" / model / "graph.txt"
        return path if path.is_file() else None
    return data.require(raw_input_name(model))


def load(model: str, drop_input_time: bool = False) -> nx.DiGraph:
    """The model's profile graph; ``drop_input_time`` zeroes the Input node's forward time.

    PipeDream records data-loading time as the Input node's forward time (635.9 ms for
    AlexNet); for inference it is not compute, so analyses of compute drop it.
    """
    path = graph_path(model)
    if path is None:
        raise FileNotFoundError(
            f"no graph for {model!r}: {paths.GENERATED / 'nona' / model / 'graph.txt'} has not been "
            "generated yet (see the Nona optimiser issue: the GPT-2 tracer)"
        )
    g = read_graph(path)
    g.graph["name"] = model
    if drop_input_time:
        for _, d in g.nodes(data=True):
            if d["desc"] == "Input":
                d["forward_ms"] = 0.0
    return g


def model_size_mib(g: nx.DiGraph) -> float:
    """Parameters + buffers, MiB, as PyTorch counts them (the Table II "Size (MB)" column).

    PipeDream records only parameter bytes. A ``BatchNorm`` with ``track_running_stats``
    also holds ``running_mean`` and ``running_var`` (as many floats as its weight and bias,
    so again its ``parameter_bytes``) and an int64 ``num_batches_tracked`` (8 bytes).
    """
    total = 0.0
    for _, d in g.nodes(data=True):
        total += d["parameter_bytes"]
        if d["desc"].startswith("BatchNorm") and "track_running_stats=True" in d["desc"]:
            total += d["parameter_bytes"] + 8
    return total / MIB


def layer_count(g: nx.DiGraph) -> int:
    """Our reading of Table II's "Layers": nodes other than Input, Add/Concat merges and Size.

    The paper does not define the column. This reading gives its DenseNet (369) and ResNet18
    (61) values exactly and is one below its AlexNet (22) and VGG16 (40) values; no single
    rule we found over the graph matches all four.
    """
    return sum(1 for _, d in g.nodes(data=True) if not d["desc"].startswith(NON_LAYER_OPS))


def table2_row(model: str) -> dict:
    """One row of Table II for ``model``; fields are ``None`` when its input is missing."""
    path = graph_path(model)
    row: dict = {"model": model, "input": str(path.relative_to(paths.ROOT)) if path else None}
    if path is None:
        row.update(status="missing input", size_mib=None, layers=None, pre_tasks=None,
                   post_tasks=None, pre_edges=None, post_edges=None, forward_ms=None)
        return row
    g = load(model)
    h = contract(g)
    row.update(
        status="ok",
        size_mib=round(model_size_mib(g), 2),
        layers=layer_count(g),
        pre_tasks=g.number_of_nodes(),
        post_tasks=h.number_of_nodes(),
        pre_edges=g.number_of_edges(),
        post_edges=h.number_of_edges(),
        # inference compute per minibatch: the Input node's time is data loading, not compute
        forward_ms=round(sum(d["forward_ms"] for n, d in g.nodes(data=True) if d["desc"] != "Input"), 3),
    )
    return row


COUNT_COLUMNS = ("layers", "pre_tasks", "post_tasks", "pre_edges", "post_edges")


def table2(models: tuple[str, ...] | list[str] = MODELS) -> pd.DataFrame:
    """Table II as a data frame (integer columns stay integers where a row is missing)."""
    frame = pd.DataFrame([table2_row(m) for m in models])
    return frame.astype({c: "Int64" for c in COUNT_COLUMNS})
