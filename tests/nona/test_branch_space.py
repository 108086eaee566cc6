"""The branch space of an oversized subgraph (decision.py, ``oversized="branches"``): partitions of
whole parallel branches, checked against a brute force over Omega_t, closed-form sizes, the chains
rule, the pricing's oracle, and certified solves of nasnetamobile, gnmt and inception_v3."""

from __future__ import annotations

from math import comb

import networkx as nx
import numpy as np
import pytest

from schedlab.nona import optimise
from schedlab.nona.contraction import Subgraph
from schedlab.nona.decision import (
    BranchOptionList,
    Option,
    OptionList,
    branch_moves,
    branch_options,
    branch_space_size,
    class_space,
    omega_size,
    options,
    set_partitions,
    subgraph_branches,
)
from schedlab.nona.workload import Cluster, build_workload, inference_classes

BELL = [1, 1, 2, 5, 15, 52, 203, 877]


# ------------------------------------------------------------------ independent helpers


def brute_force(sub: Subgraph, branches, moved: int | None = None) -> set:
    """Omega_t of ``sub`` (every task partition, every source/sink part) filtered to the options
    whose parts are unions of ``branches`` and that move at most ``moved`` branches off the part of
    the first branch (the trunk)."""
    owner = {x: i for i, b in enumerate(branches) for x in b}
    keep = set()
    for o in OptionList(sub.intermediate):
        unions = all(set(p) == {x for b in {owner[y] for y in p} for x in branches[b]} for p in o.partition)
        if not unions:
            continue
        trunk = next(p for p in o.partition if branches[0][0] in p)
        off = len({owner[x] for p in o.partition if p is not trunk for x in p})
        if moved is None or off <= moved:
            keep.add(o)
    return keep


def chains(dag: nx.DiGraph, inner) -> list[set]:
    """Maximal runs u -> v with u having one successor and v one predecessor among ``inner``
    (written apart from the library's rule)."""
    sub = dag.subgraph(inner)
    link = nx.Graph()
    link.add_nodes_from(inner)
    link.add_edges_from((u, v) for u, v in sub.edges if sub.out_degree(u) == 1 and sub.in_degree(v) == 1)
    return [set(c) for c in nx.connected_components(link)]


def random_subgraph(rng: np.random.Generator, n: int) -> tuple[nx.DiGraph, Subgraph]:
    """A random DAG s -> n tasks -> t (edges only forward in a random order), random work, some zero."""
    inner = [f"x{i}" for i in range(n)]
    g = nx.DiGraph()
    g.add_nodes_from(["s", *inner, "t"])
    for j, v in enumerate(inner):
        preds = [u for u in inner[:j] if rng.random() < 0.35]
        g.add_edges_from((u, v) for u in preds)
        if not preds or rng.random() < 0.2:
            g.add_edge("s", v)
    for v in inner:
        if g.out_degree(v) == 0 or rng.random() < 0.2:
            g.add_edge(v, "t")
    for x in g:
        g.nodes[x]["work_s"] = 0.0 if rng.random() < 0.2 else float(rng.uniform(1e-3, 5e-3))
    for e in g.edges:
        g.edges[e]["bytes"] = float(rng.choice([0.0, 1e5, 1e6]))
    return g, Subgraph("s", "t", tuple(inner))


def fork(k: int) -> tuple[nx.DiGraph, Subgraph]:
    """s -> k parallel two-task branches -> t."""
    g = nx.DiGraph()
    for i in range(k):
        g.add_edges_from([("s", f"a{i}"), (f"a{i}", f"b{i}"), (f"b{i}", "t")])
    nx.set_node_attributes(g, 1e-3, "work_s")
    nx.set_edge_attributes(g, 1e5, "bytes")
    return g, Subgraph("s", "t", tuple(x for i in range(k) for x in (f"a{i}", f"b{i}")))


# ------------------------------------------------------------------ the space


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_fork_branches_are_the_parallel_chains_and_the_space_is_omega_over_them(k):
    g, sub = fork(k)
    br = subgraph_branches(g, sub)
    assert br == tuple((f"a{i}", f"b{i}") for i in range(k))
    sp = branch_options(g, sub, max_options=10**6)
    assert len(sp) == omega_size(k) == branch_space_size(k)
    assert len({o.partition for o in sp}) == BELL[k]  # every partition of the k branches, once
    assert set(sp) == brute_force(sub, br)
    assert sp[0] == Option((sub.intermediate,), 0, 0)


@pytest.mark.parametrize("seed", range(12))
def test_random_dags_branch_space_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    g, sub = random_subgraph(rng, int(rng.integers(3, 8)))
    br = subgraph_branches(g, sub)
    m = len(br)
    for moved in range(m):
        sp = BranchOptionList(br, moved, order=sub.intermediate)
        want = brute_force(sub, br, moved)
        assert list(sp) == [sp[i] for i in range(len(sp))]  # iteration and indexing agree
        assert len(set(sp)) == len(sp) == len(want) == branch_space_size(m, moved)
        assert set(sp) == want
        assert sp[0] == Option((sub.intermediate,), 0, 0)


@pytest.mark.parametrize("seed", range(12))
def test_every_part_is_a_union_of_chains_and_branches_partition_the_tasks(seed):
    rng = np.random.default_rng(100 + seed)
    g, sub = random_subgraph(rng, int(rng.integers(3, 9)))
    br = subgraph_branches(g, sub)
    assert sorted(x for b in br for x in b) == sorted(sub.intermediate)
    assert br[0][0] == sub.intermediate[0]
    rank = {x: i for i, x in enumerate(sub.intermediate)}
    assert all(list(b) == sorted(b, key=rank.get) for b in br)
    assert [rank[b[0]] for b in br] == sorted(rank[b[0]] for b in br)
    for o in branch_options(g, sub, max_options=10**6):
        for p in o.partition:
            assert all(c <= set(p) or not (c & set(p)) for c in chains(g, sub.intermediate))
    # a branch but the trunk holds some compute (zero-compute branches are folded back)
    assert all(any(g.nodes[x]["work_s"] > 0 for x in b) for b in br[1:])


def test_zero_compute_branch_joins_its_predecessors_branch():
    # f forks into a, b and z; z has no compute: it stays with f's branch (the trunk)
    g = nx.DiGraph(
        [
            ("s", "f"),
            ("f", "a"),
            ("f", "b"),
            ("f", "z"),
            ("a", "j"),
            ("b", "j"),
            ("z", "t"),
            ("j", "t"),
            ("b", "y"),
            ("y", "t"),
        ]
    )
    nx.set_node_attributes(g, 1.0, "work_s")
    g.nodes["z"]["work_s"] = g.nodes["y"]["work_s"] = 0.0
    sub = Subgraph("s", "t", ("f", "a", "b", "z", "j", "y"))
    # y forks off b: with no compute it follows b
    assert subgraph_branches(g, sub) == (("f", "a", "z", "j"), ("b", "y"))


@pytest.mark.parametrize("m", range(1, 8))
def test_sizes_closed_form(m):
    for moved in range(m):
        # by counting: choose the moved branches, partition them, place source and sink
        count = sum(
            comb(m - 1, j) * sum((len(pi) + 1) ** 2 for pi in set_partitions(range(j)))
            for j in range(moved + 1)
        )
        assert branch_space_size(m, moved) == count
    assert branch_space_size(m) == branch_space_size(m, m - 1) == omega_size(m)


def test_branch_moves_is_the_largest_budget_within_the_cap():
    for m in range(1, 9):
        for cap in (1, 5, 13, 60, 500, 10**5):
            j = branch_moves(m, cap)
            assert branch_space_size(m, j) <= cap or j == 0
            assert j == m - 1 or branch_space_size(m, j + 1) > cap
    with pytest.raises(ValueError, match="max_branch_options must be >= 1"):
        branch_moves(3, 0)


def test_label_table_matches_the_options():
    rng = np.random.default_rng(7)
    g, sub = random_subgraph(rng, 7)
    sp = branch_options(g, sub, max_options=200)
    lab, K, labT = sp.label_table()
    assert lab.shape == (len(sp), len(sub.intermediate) + 2) and np.array_equal(labT, lab.T)
    for row, k, o in zip(lab, K, sp):
        part = {x: i for i, p in enumerate(o.partition) for x in p}
        assert list(row[:-2]) == [part[x] for x in sub.intermediate]
        assert (row[-2], row[-1]) == (o.source_part, o.sink_part) and k == len(o.partition)


@pytest.mark.parametrize("seed", range(4))
def test_critical_path_pricing_of_branch_options_matches_the_oracle(seed):
    rng = np.random.default_rng(200 + seed)
    g, sub = random_subgraph(rng, 8)
    sp = branch_options(g, sub, max_options=300)
    mu, nu = 1e9, 1.0
    A, n, _, _ = optimise._subgraph_rows_critical(g, sub, sp, mu, nu)
    for phi in (0.0, 2e-4):
        ref = optimise._subgraph_rows_critical_reference(g, sub, list(sp), mu, nu, phi)
        assert np.allclose(np.max(A + n * phi, axis=1), ref, rtol=1e-12, atol=1e-15)


def test_options_switch():
    g, sub = fork(3)
    full = options(sub, max_options=10, oversized="branches", dag=g, max_branch_options=13)
    assert isinstance(full, BranchOptionList) and full.moved == 1 and len(full) == 9
    # within max_options the subgraph keeps its whole Omega_t under every mode
    assert isinstance(options(sub, oversized="branches", dag=g), OptionList)
    assert len(options(sub, max_options=10, oversized="keep_together")) == 1
    with pytest.raises(ValueError, match="needs the subgraph's dag"):
        options(sub, max_options=10, oversized="branches")
    with pytest.raises(ValueError, match="oversized must be one of"):
        options(sub, oversized="bogus")
    with pytest.raises(ValueError, match="branches must be non-empty groups partitioning"):
        BranchOptionList((("a0",),), order=sub.intermediate)


# ------------------------------------------------------------------ the models


@pytest.fixture(scope="module")
def models():
    return {c.name: c for c in inference_classes(["inception_v3", "nasnetamobile", "gnmt"])}


@pytest.mark.parametrize(
    "name, n_branches, moved",
    [("nasnetamobile", 119, 1), ("gnmt", 2, 1), ("inception_v3", 14, 2)],
)
def test_oversized_subgraphs_of_the_models_get_a_finite_branch_space(models, name, n_branches, moved):
    c = models[name]
    sp = class_space(name, c.dag, oversized="branches")
    big = [o for s, o in zip(sp.subgraphs, sp.options) if omega_size(len(s.intermediate)) > 100_000]
    assert len(big) == 1 and isinstance(big[0], BranchOptionList)
    assert (len(big[0].branches), big[0].moved) == (n_branches, moved)
    assert len(big[0]) == branch_space_size(n_branches, moved) <= 2_000
    sub = next(s for s in sp.subgraphs if omega_size(len(s.intermediate)) > 100_000)
    cs = chains(c.dag, sub.intermediate)
    for o in big[0]:
        for p in o.partition:
            ps = set(p)
            assert all(ch <= ps or not (ch & ps) for ch in cs)


@pytest.mark.parametrize("name", ["gnmt", "nasnetamobile", "inception_v3"])
def test_models_solve_certified_with_the_branch_space(name):
    cl = Cluster(servers=80, bandwidth_gbps=25.0)
    wl = build_workload(
        [name],
        load=0.5,
        cluster=cl,
        byte_scale=0.1,
        load_basis="server",
        comm_load=0.05,
        background_ratio=100.0,
    )
    prob = optimise.compile_problem(wl, cl, oversized="branches")
    g = optimise.solve(prob, cl, method="global")
    loc = optimise.solve(prob, cl, method="local")
    together = optimise.solve(
        optimise.compile_problem(wl, cl, oversized="keep_together"), cl, method="global"
    )
    assert g.gap <= 1e-6 * g.objective + 1e-12
    assert g.objective <= loc.objective * (1 + 1e-9)
    # the branch space contains keep-together, so the optimum cannot be worse
    assert g.objective <= together.objective * (1 + 1e-12)
