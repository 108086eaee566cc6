"""Nona's DAG contraction: Table II counts, graph properties, and an independent slow check."""

from __future__ import annotations

import json
import random

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import pipedream_graph
from schedlab import data
from schedlab.cli import main
from schedlab.nona import profiles
from schedlab.nona.contraction import (
    bottleneck_nodes,
    bottleneck_subgraphs,
    contract,
    contraction_partition,
)

# Table II of the paper (section IV-A): tasks before -> after contraction
TABLE2 = {"alexnet": (23, 1), "densenet121": (429, 4), "vgg16": (41, 1), "resnet18": (71, 10)}


def test_table2_counts(pipedream_model):
    name, g = pipedream_model
    h = contract(g)
    assert (g.number_of_nodes(), h.number_of_nodes()) == TABLE2[name]


def test_table2_sizes_match_paper_rounding(pipedream_model):
    name, g = pipedream_model
    paper = {"alexnet": 233, "densenet121": 31, "vgg16": 528, "resnet18": 45}[name]
    assert abs(profiles.model_size_mib(g) - paper) <= 0.5


def test_resnet18_structure():
    g = pipedream_graph("resnet18")
    h = contract(g)
    # four residual stages: a diamond per downsampling block, bottlenecks between them
    assert len(bottleneck_nodes(h)) == 4
    assert [len(s.intermediate) for s in bottleneck_subgraphs(h)] == [2, 2, 2]
    # the first contracted task holds the Input and the stem
    assert h.nodes["node1"]["members"][0] == "node1"
    # bytes on a cross edge = the producer's activation (one tensor per feeding member)
    for u, v, d in h.edges(data=True):
        feeders = {a for a in h.nodes[u]["members"] for b in h.nodes[v]["members"] if g.has_edge(a, b)}
        assert d["bytes"] == sum(g.nodes[a]["activation_bytes"] for a in feeders)


def test_forward_time_is_conserved(pipedream_model):
    _, g = pipedream_model
    h = contract(g)
    assert sum(d["forward_ms"] for _, d in h.nodes(data=True)) == pytest.approx(
        sum(d["forward_ms"] for _, d in g.nodes(data=True))
    )


def test_densenet_size_node_is_what_keeps_four_tasks():
    """README: deleting the Size(0) node first contracts DenseNet121 to a single task."""
    g = pipedream_graph("densenet121")
    pruned = g.copy()
    size_nodes = [n for n, d in g.nodes(data=True) if d["desc"].startswith("Size")]
    pruned.remove_nodes_from(size_nodes)
    assert contract(pruned).number_of_nodes() == 1


# --- an independent, slow implementation of the same rule ---------------------------------


def slow_contract(g: nx.DiGraph) -> set[frozenset]:
    """Contract one qualifying edge at a time with networkx, re-checking from scratch."""
    h = nx.DiGraph(g)
    nx.set_node_attributes(h, {n: frozenset([n]) for n in h}, "m")
    while True:
        for a, b in sorted(h.edges, key=str):
            if set(h.predecessors(b)) - {a} <= set(h.predecessors(a)) and set(h.successors(a)) - {b} <= set(
                h.successors(b)
            ):
                merged = h.nodes[a]["m"] | h.nodes[b]["m"]
                h = nx.contracted_nodes(h, a, b, self_loops=False, copy=True)
                h.nodes[a]["m"] = merged
                break
        else:
            return {h.nodes[n]["m"] for n in h}


@st.composite
def dags(draw, max_nodes=11):
    n = draw(st.integers(1, max_nodes))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    mask = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(p for p, keep in zip(pairs, mask) if keep)
    return g


def shuffled(g: nx.DiGraph, seed: int) -> nx.DiGraph:
    """Same graph, other node and edge insertion order (so another edge visiting order)."""
    rng = random.Random(seed)
    nodes, edges = list(g.nodes), list(g.edges)
    rng.shuffle(nodes)
    rng.shuffle(edges)
    h = nx.DiGraph()
    h.add_nodes_from(nodes)
    h.add_edges_from(edges)
    return h


def as_partition(parts) -> set[frozenset]:
    return {frozenset(p) for p in parts}


@settings(max_examples=300, deadline=None)
@given(dags(), st.integers(0, 2**16))
def test_contraction_properties(g, seed):
    h = contract(g)
    parts = [set(d["members"]) for _, d in h.nodes(data=True)]
    # a DAG
    assert nx.is_directed_acyclic_graph(h)
    # member sets partition the nodes
    assert sorted(n for p in parts for n in p) == sorted(g.nodes)
    # independent of edge visiting order, and of the schedule (rounds vs sequential)
    expected = as_partition(parts)
    assert as_partition(contraction_partition(shuffled(g, seed), "rounds")) == expected
    assert as_partition(contraction_partition(shuffled(g, seed), "sequential")) == expected
    # equal to an independent slow implementation
    assert slow_contract(g) == expected
    # contracting twice changes nothing
    assert contract(h).number_of_nodes() == h.number_of_nodes()
    # no dependency created or lost
    owner = {m: n for n, d in h.nodes(data=True) for m in d["members"]}
    for u in g:
        reach_g = nx.descendants(g, u)
        reach_h = nx.descendants(h, owner[u])
        for v in g:
            if owner[u] != owner[v]:
                assert (v in reach_g) == (owner[v] in reach_h), (u, v)


@settings(max_examples=200, deadline=None)
@given(dags())
def test_bottlenecks_are_on_every_root_to_sink_path(g):
    cuts = set(bottleneck_nodes(g))
    roots = [n for n in g if g.in_degree(n) == 0]
    sinks = [n for n in g if g.out_degree(n) == 0]
    for n in g:
        removed = g.copy()
        removed.remove_node(n)
        blocks = not any(nx.has_path(removed, r, s) for r in roots if r != n for s in sinks if s != n)
        assert (n in cuts) == blocks, n
    # subgraphs: intermediates are exactly the non-bottleneck nodes, each once
    inner = [m for s in bottleneck_subgraphs(g) for m in s.intermediate]
    assert sorted(inner) == sorted(set(g) - cuts)


def test_cycle_is_rejected():
    with pytest.raises(ValueError, match="needs a DAG"):
        contract(nx.DiGraph([(0, 1), (1, 0)]))


def test_unknown_schedule():
    with pytest.raises(ValueError, match="schedule must be"):
        contraction_partition(nx.DiGraph([(0, 1)]), "greedy")  # type: ignore[arg-type]


def test_cli_contract_json():
    path = data.require("nona/resnet18/graph.txt")
    result = CliRunner().invoke(main, ["nona", "contract", str(path), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert (out["pre_nodes"], out["post_nodes"], out["pre_edges"], out["post_edges"]) == (71, 10, 79, 12)
    members = [m for node in out["nodes"] for m in node["members"]]
    assert len(members) == 71 == len(set(members))
    assert {"source", "target", "bytes"} <= set(out["edges"][0])


def test_cli_contract_reports_parse_error(tmp_path):
    bad = tmp_path / "graph.txt"
    bad.write_text("node1 -- Input")
    result = CliRunner().invoke(main, ["nona", "contract", str(bad)])
    assert result.exit_code != 0 and f"{bad}:1:" in result.output
