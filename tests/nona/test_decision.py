"""Nona's decision space Omega_t: enumeration against closed-form counts."""

from __future__ import annotations

import networkx as nx
import pytest

from schedlab.nona.contraction import Subgraph
from schedlab.nona.decision import class_space, omega_size, options, set_partitions, space_size
from schedlab.nona.workload import inference_classes

BELL = [1, 1, 2, 5, 15, 52, 203]


@pytest.mark.parametrize("n", range(0, 7))
def test_set_partitions_are_bell_many_and_distinct(n):
    parts = list(set_partitions(range(n)))
    assert len(parts) == BELL[n]
    canon = {frozenset(frozenset(p) for p in pi) for pi in parts}
    assert len(canon) == len(parts)
    for pi in parts:
        assert sorted(x for p in pi for x in p) == list(range(n))


@pytest.mark.parametrize("n", range(1, 6))
def test_omega_size_matches_enumeration(n):
    sub = Subgraph("s", "t", tuple(range(n)))
    opts = options(sub)
    assert len(opts) == omega_size(n) == sum(len(pi) ** 2 for pi in set_partitions(range(n)))
    assert opts[0].partition == (tuple(range(n)),) and opts[0].source_part == opts[0].sink_part == 0
    assert len(set(opts)) == len(opts)


def test_option_limit_and_open_ends():
    with pytest.raises(ValueError, match="max_options"):
        options(Subgraph("s", "t", tuple(range(8))), max_options=1000)
    with pytest.raises(ValueError, match="source/sink"):
        options(Subgraph(None, "t", ("a",)))


def test_two_roots_rejected():
    g = nx.DiGraph([("a", "c"), ("b", "c")])
    with pytest.raises(ValueError, match="one root"):
        class_space("two_roots", g)


def test_pipedream_models_search_space():
    spaces = [
        class_space(j.name, j.dag) for j in inference_classes(["densenet121", "vgg16", "alexnet", "resnet18"])
    ]
    by = {s.name: s for s in spaces}
    # ResNet18: three downsampling blocks with two non-trivial branches (5 options each);
    # DenseNet121: one (the classifier's Size/View branch); AlexNet and VGG16 contract to 1 task
    assert [len(o) for o in by["resnet18"].options] == [5, 5, 5]
    assert [len(o) for o in by["densenet121"].options] == [5]
    assert by["vgg16"].options == () and by["alexnet"].options == ()
    assert space_size(spaces) == (20, 4)
