"""PipeDream ``graph.txt`` profiles as typed ``networkx.DiGraph`` objects, and back.

Format (see ``../shared/data/nona/README.md``): a node line
``nodeN -- <description> -- forward_compute_time=F, backward_compute_time=B,
activation_size=A, parameter_size=P[ -- stage_id=S]`` and an edge line
``\\tnodeA -- nodeB``. Times are milliseconds per minibatch, sizes bytes.

Node attributes after :func:`read_graph`:

=================  ====================================================================
``desc``           module or op description (``Conv2d(3, 64, ...)``, ``Add(inplace)``)
``forward_ms``     forward compute time, ms (for ``Input``: data-loading time)
``backward_ms``    backward compute time, ms
``activation_bytes``  output tensor bytes (a ``[a; b]`` list is summed, as PipeDream does)
``parameter_bytes``   parameter bytes
``stage_id``       PipeDream stage, only in partitioned graphs (else absent)
``number_text``    ``{metadata key: text}`` for numbers not written in PipeDream's 3-decimal
                   form (GNMT's profile writes ``activation_size=0.0``); only when present
=================  ====================================================================

Node and edge order of the file are kept (graph insertion order and the ``order`` edge
attribute), so writing a parsed file reproduces it byte for byte.

Examples
--------
>>> text = ("node1 -- Input -- forward_compute_time=1.000, backward_compute_time=0.000, "
...         "activation_size=8.000, parameter_size=0.000\\n"
...         "node2 -- ReLU() -- forward_compute_time=0.500, backward_compute_time=0.100, "
...         "activation_size=8.000, parameter_size=0.000\\n\\tnode1 -- node2")
>>> g = parse_graph(text)
>>> g.nodes["node2"]["forward_ms"], list(g.edges)
(0.5, [('node1', 'node2')])
>>> format_graph(g) == text
True
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import networkx as nx

from schedlab.io import atomic_write_text

SEP = " -- "
METADATA_KEYS = ("forward_compute_time", "backward_compute_time", "activation_size", "parameter_size")
_ATTR = dict(zip(METADATA_KEYS, ("forward_ms", "backward_ms", "activation_bytes", "parameter_bytes")))


class GraphFormatError(ValueError):
    """A ``graph.txt`` that does not follow the PipeDream format; names file and line."""

    def __init__(self, source: str, line: int | None, message: str):
        self.source, self.line = source, line
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


def _number(text: str, source: str, lineno: int, key: str) -> float:
    """A time (ms) or size (bytes): a finite number >= 0."""
    try:
        x = float(text)
    except ValueError:
        raise GraphFormatError(source, lineno, f"{key} must be a number, got {text!r}") from None
    if not (math.isfinite(x) and x >= 0):
        raise GraphFormatError(source, lineno, f"{key} must be a finite number >= 0, got {text!r}")
    return x


def _parse_metadata(text: str, source: str, lineno: int) -> dict:
    items = text.split(", ")
    if len(items) != len(METADATA_KEYS):
        raise GraphFormatError(
            source, lineno, f"expected 4 metadata items {', '.join(METADATA_KEYS)}, got {text!r}"
        )
    attrs: dict = {}
    for item, key in zip(items, METADATA_KEYS):
        name, eq, value = item.partition("=")
        if not eq or name != key:
            raise GraphFormatError(source, lineno, f"expected '{key}=<number>', got {item!r}")
        if key == "activation_size" and value.startswith("["):
            if not value.endswith("]"):
                raise GraphFormatError(source, lineno, f"unterminated activation list {value!r}")
            texts = [v.strip() for v in value[1:-1].split(";")]
            parts = tuple(_number(v, source, lineno, key) for v in texts)
            attrs["activation_sizes"] = parts
            attrs["activation_bytes"] = float(sum(parts))
            if value != "[" + "; ".join(_fmt(a) for a in parts) + "]":  # kept for writing back
                attrs.setdefault("number_text", {})["activation_sizes"] = value
        else:
            attrs[_ATTR[key]] = _number(value, source, lineno, key)
            if value != _fmt(attrs[_ATTR[key]]):  # e.g. GNMT's "activation_size=0.0": kept for writing back
                attrs.setdefault("number_text", {})[key] = value
    return attrs


def _parse_node(line: str, source: str, lineno: int) -> tuple[str, dict]:
    fields = line.split(SEP)
    if len(fields) not in (3, 4):
        raise GraphFormatError(
            source, lineno, f"a node line has 3 or 4 fields separated by ' -- ', got {len(fields)}: {line!r}"
        )
    node_id, desc = fields[0].strip(), fields[1]
    if not node_id or " " in node_id:
        raise GraphFormatError(source, lineno, f"bad node id {fields[0]!r}")
    attrs = {"desc": desc, **_parse_metadata(fields[2], source, lineno)}
    if len(fields) == 4:
        key, eq, value = fields[3].partition("=")
        if key != "stage_id" or not eq or not value.strip().lstrip("-").isdigit():
            raise GraphFormatError(source, lineno, f"4th field must be 'stage_id=<int>', got {fields[3]!r}")
        attrs["stage_id"] = int(value)
    return node_id, attrs


def parse_graph(text: str, source: str = "<string>") -> nx.DiGraph:
    """Parse the text of a PipeDream ``graph.txt``; errors name ``source`` and the line."""
    g = nx.DiGraph(source=source)
    node_line: dict[str, int] = {}
    edges: list[tuple[str, str, int]] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if line.startswith("\t"):
            parts = line[1:].split(SEP)
            if len(parts) != 2 or not all(p.strip() for p in parts):
                raise GraphFormatError(source, lineno, f"an edge line is '\\tnodeA -- nodeB', got {line!r}")
            edges.append((parts[0].strip(), parts[1].strip(), lineno))
            continue
        node_id, attrs = _parse_node(line, source, lineno)
        if node_id in node_line:
            raise GraphFormatError(
                source, lineno, f"duplicate node {node_id!r} (first defined on line {node_line[node_id]})"
            )
        node_line[node_id] = lineno
        g.add_node(node_id, **attrs)
    for order, (a, b, lineno) in enumerate(edges):
        for end in (a, b):
            if end not in node_line:
                raise GraphFormatError(source, lineno, f"edge {a} -> {b} names unknown node {end!r}")
        if a == b:
            raise GraphFormatError(source, lineno, f"self-loop on {a!r}: the graph must be a DAG")
        if g.has_edge(a, b):
            raise GraphFormatError(source, lineno, f"duplicate edge {a} -> {b}")
        g.add_edge(a, b, order=order, line=lineno)
    if g.number_of_nodes() == 0:
        raise GraphFormatError(
            source,
            None,
            "no nodes: an empty profile (expected node lines "
            "'nodeN -- <description> -- forward_compute_time=..., ...')",
        )
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return g
    lines = sorted(g.edges[u, v]["line"] for u, v in cycle)
    path = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
    raise GraphFormatError(
        source, lines[-1], f"cycle {path} (edges on lines {lines}): the graph must be a DAG"
    )


def read_graph(path: str | os.PathLike[str]) -> nx.DiGraph:
    """Read a PipeDream ``graph.txt`` file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="ascii")
    except UnicodeDecodeError as exc:
        raise GraphFormatError(str(path), None, f"not ASCII text ({exc})") from None
    g = parse_graph(text, source=str(path))
    g.graph["name"] = path.parent.name
    return g


def _fmt(x: float) -> str:
    return f"{x:.3f}"  # PipeDream's own formatting


def _text(attrs: dict, key: str) -> str:
    """A metadata number as the file wrote it, if it was read from a file and is unchanged;
    else PipeDream's 3-decimal form."""
    x = attrs[_ATTR[key]]
    raw = attrs.get("number_text", {}).get(key)
    return raw if raw is not None and float(raw) == x else _fmt(x)


def format_node(node_id: str, attrs: dict) -> str:
    if "activation_sizes" in attrs:
        act = "[" + "; ".join(_fmt(a) for a in attrs["activation_sizes"]) + "]"
        raw = attrs.get("number_text", {}).get("activation_sizes")
        if raw is not None and tuple(float(v) for v in raw[1:-1].split(";")) == tuple(
            attrs["activation_sizes"]
        ):
            act = raw
    else:
        act = _text(attrs, "activation_size")
    line = (
        f"{node_id}{SEP}{attrs['desc']}{SEP}forward_compute_time={_text(attrs, 'forward_compute_time')}, "
        f"backward_compute_time={_text(attrs, 'backward_compute_time')}, activation_size={act}, "
        f"parameter_size={_text(attrs, 'parameter_size')}"
    )
    if "stage_id" in attrs:
        line += f"{SEP}stage_id={attrs['stage_id']}"
    return line


def format_graph(g: nx.DiGraph) -> str:
    """The ``graph.txt`` text of ``g`` (file order kept; no trailing newline, as PipeDream)."""
    nodes = [format_node(n, a) for n, a in g.nodes(data=True)]
    ordered = sorted(g.edges(data=True), key=lambda e: e[2].get("order", float("inf")))
    edges = [f"\t{a}{SEP}{b}" for a, b, _ in ordered]
    return "\n".join(nodes + edges)


def write_graph(g: nx.DiGraph, path: str | os.PathLike[str]) -> None:
    """Write ``g`` as a PipeDream ``graph.txt`` (atomically)."""
    atomic_write_text(path, format_graph(g))
