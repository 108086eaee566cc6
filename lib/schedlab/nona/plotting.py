"""Pictures of DAGs before and after contraction (in the spirit of Nona's Fig. 2a), and the
schemes' labels, colours and markers in the figure notebooks."""

from __future__ import annotations

from typing import Any

import networkx as nx

#: scheme -> (label, matplotlib colour, marker), the same in every Nona figure
SCHEME_STYLE = {
    "nona": ("Nona", "C0", "o"), "nona_star": ("Nona*", "C9", "v"), "expert": ("Expert", "k", "s"),
    "spark_fair": ("Spark fair", "C1", "^"), "opportunistic": ("Opportunistic", "C2", "D"),
    "random": ("Random", "C3", "x"), "decima": ("Decima (public TPC-H-trained weights)", "C4", "P"),
    "decima_retrained": ("Decima (retrained in our simulator)", "C6", "*"),
}


def layered_layout(g: nx.DiGraph) -> dict[Any, tuple[float, float]]:
    """Left-to-right layout: x = longest-path depth, parallel branches spread vertically."""
    depth: dict[Any, int] = {}
    for n in nx.topological_sort(g):
        depth[n] = max((depth[p] + 1 for p in g.pred[n]), default=0)
    columns: dict[int, list] = {}
    for n in nx.lexicographical_topological_sort(g, key=str):
        columns.setdefault(depth[n], []).append(n)
    pos = {}
    for x, nodes in columns.items():
        for i, n in enumerate(nodes):
            pos[n] = (float(x), (len(nodes) - 1) / 2.0 - i)
    return pos


def plot_contraction(g: nx.DiGraph, h: nx.DiGraph, title: str = "") -> Any:
    """Two panels: the profile graph coloured by contracted node, and the contracted DAG.

    The contracted DAG's nodes show their member count and forward time; edges show the
    megabytes that would cross the network if the two ends were on different servers.
    """
    import matplotlib.pyplot as plt

    groups = {m: i for i, (_, d) in enumerate(h.nodes(data=True)) for m in d["members"]}
    cmap = plt.get_cmap("tab10" if h.number_of_nodes() <= 10 else "tab20")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(13, 7.5), gridspec_kw={"height_ratios": [1, 1.2]})

    pos = layered_layout(g)
    nx.draw_networkx_edges(g, pos, ax=top, arrowsize=6, width=0.6, edge_color="0.55", node_size=60)
    nx.draw_networkx_nodes(g, pos, ax=top, node_size=60, linewidths=0.4, edgecolors="0.2",
                           node_color=[cmap(groups[n] % cmap.N) for n in g])
    top.set_title(f"{title} profile: {g.number_of_nodes()} tasks, {g.number_of_edges()} edges "
                  "(colour = contracted task)")
    top.axis("off")

    hpos = layered_layout(h)
    labels = {n: f"{len(d['members'])} ops\n{d['forward_ms']:.1f} ms" for n, d in h.nodes(data=True)}
    nx.draw_networkx_edges(h, hpos, ax=bottom, arrowsize=14, width=1.2, edge_color="0.35", node_size=2600)
    nx.draw_networkx_nodes(h, hpos, ax=bottom, node_size=2600, edgecolors="0.2",
                           node_color=[cmap(groups[d["members"][0]] % cmap.N) for _, d in h.nodes(data=True)])
    nx.draw_networkx_labels(h, hpos, labels, ax=bottom, font_size=7)
    edge_labels = {(u, v): f"{d['bytes'] / 1e6:.0f} MB" for u, v, d in h.edges(data=True)}
    nx.draw_networkx_edge_labels(h, hpos, edge_labels, ax=bottom, font_size=6.5, rotate=False)
    bottom.set_title(f"after Nona contraction: {h.number_of_nodes()} tasks, {h.number_of_edges()} edges "
                     "(forward ms per minibatch; MB per transfer)")
    bottom.axis("off")
    fig.tight_layout()
    return fig
