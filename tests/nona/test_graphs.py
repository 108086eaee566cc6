"""PipeDream graph.txt parsing, writing and its errors."""

from __future__ import annotations

import pytest

from schedlab.nona.graphs import GraphFormatError, format_graph, parse_graph, read_graph, write_graph

NODE = (
    "{id} -- {desc} -- forward_compute_time=1.000, backward_compute_time=0.500, "
    "activation_size=4.000, parameter_size=0.000"
)


def node(i, desc="ReLU()"):
    return NODE.format(id=f"node{i}", desc=desc)


def test_every_shipped_graph_round_trips_byte_for_byte(nona_graph_paths, tmp_path):
    # the four paper models, resnet18's second run, and inception_v3, nasnetamobile, gnmt
    assert len(nona_graph_paths) == 8
    for path in nona_graph_paths:
        g = read_graph(path)
        out = tmp_path / path.parent.name / path.name
        write_graph(g, out)
        assert out.read_bytes() == path.read_bytes(), path
        h = read_graph(out)
        assert list(g.nodes(data=True)) == list(h.nodes(data=True))
        assert list(g.edges(data=True)) == list(h.edges(data=True))


def test_typed_attributes(pipedream_model):
    name, g = pipedream_model
    d = g.nodes["node1"]
    assert d["desc"] == "Input"
    assert isinstance(d["forward_ms"], float) and d["activation_bytes"] > 0
    # README: the Input activation is 4 * B * 3 * 224 * 224 bytes
    batch = {"alexnet": 256, "vgg16": 128, "resnet18": 256, "densenet121": 64}[name]
    assert d["activation_bytes"] == 4 * batch * 3 * 224 * 224


def test_activation_list_is_summed_and_kept():
    text = node(1).replace("activation_size=4.000", "activation_size=[4.000; 8.000]")
    g = parse_graph(text)
    assert g.nodes["node1"]["activation_bytes"] == 12.0
    assert format_graph(g) == text


def test_stage_id_field():
    text = node(1) + " -- stage_id=3"
    g = parse_graph(text)
    assert g.nodes["node1"]["stage_id"] == 3 and format_graph(g) == text


@pytest.mark.parametrize(
    "text, line, message",
    [
        (node(1) + "\nnode2 -- ReLU()", 2, "3 or 4 fields"),
        (node(1) + "\n" + node(2).replace("backward_compute_time", "bwd"), 2, "backward_compute_time="),
        (node(1) + "\n" + node(2).replace("1.000", "fast"), 2, "must be a number"),
        (node(1) + "\n" + node(1), 2, "duplicate node 'node1' \\(first defined on line 1\\)"),
        (node(1) + "\n" + node(2) + "\n\tnode1 -- node9", 3, "unknown node 'node9'"),
        (node(1) + "\n\tnode1 -- node1", 2, "self-loop"),
        (node(1) + "\n" + node(2) + "\n\tnode1 -- node2\n\tnode1 -- node2", 4, "duplicate edge"),
        (node(1) + "\n" + node(2) + "\n\tnode1 node2", 3, "edge line"),
        (
            node(1)
            + "\n"
            + node(2)
            + "\n"
            + node(3)
            + "\n\tnode1 -- node2\n\tnode2 -- node3\n\tnode3 -- node1",
            6,
            "cycle",
        ),
        (
            node(1) + "\n" + node(2).replace("forward_compute_time=1.000", "forward_compute_time=-1.000"),
            2,
            "forward_compute_time must be a finite number >= 0, got '-1.000'",
        ),
        (
            node(1).replace("parameter_size=0.000", "parameter_size=nan"),
            1,
            "parameter_size must be a finite number",
        ),
    ],
)
def test_errors_name_file_and_line(text, line, message):
    with pytest.raises(GraphFormatError, match=message) as info:
        parse_graph(text, source="bad/graph.txt")
    assert info.value.line == line
    assert str(info.value).startswith(f"bad/graph.txt:{line}:")


def test_read_graph_names_the_file(tmp_path):
    bad = tmp_path / "graph.txt"
    bad.write_text(node(1) + "\nbroken line")
    with pytest.raises(GraphFormatError, match=f"{bad}:2:"):
        read_graph(bad)


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_an_empty_profile_is_an_error(tmp_path, text):
    empty = tmp_path / "graph.txt"
    empty.write_text(text)
    with pytest.raises(GraphFormatError, match=f"{empty}: no nodes"):
        read_graph(empty)


def test_numbers_in_another_style_round_trip_until_changed():
    # GNMT's profile writes "activation_size=0.0" and "[6291456.0; 131072.0]"
    text = (
        "node1 -- Input0 -- forward_compute_time=0.000, backward_compute_time=0.000, activation_size=0.0, "
        "parameter_size=0.000\n"
        "node2 -- LSTM -- forward_compute_time=1.500, backward_compute_time=0.100, "
        "activation_size=[64.0; 8.0], parameter_size=16.000\n\tnode1 -- node2"
    )
    g = parse_graph(text)
    assert format_graph(g) == text
    assert g.nodes["node2"]["activation_bytes"] == 72.0
    g.nodes["node1"]["activation_bytes"] = 4.0  # a changed value is written in PipeDream's form
    g.nodes["node2"]["activation_sizes"] = (64.0, 16.0)
    out = format_graph(g)
    assert "activation_size=4.000," in out and "activation_size=[64.000; 16.000]" in out
