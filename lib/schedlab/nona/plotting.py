"""Nona's figures: pictures of DAGs before and after contraction (in the spirit of Fig. 2a), the
schemes' labels, colours and markers, Figs. 3-5 with the paper's printed gains beside ours,
Table I's job f, the model-error figure, and the "paper vs ours" table of every notebook."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import networkx as nx
import numpy as np

#: scheme -> (label, matplotlib colour, marker), the same in every Nona figure
SCHEME_STYLE = {
    "nona": ("Nona", "C0", "o"),
    "nona_star": ("Nona*", "C9", "v"),
    "expert": ("Expert", "k", "s"),
    "spark_fair": ("Spark fair", "C1", "^"),
    "opportunistic": ("Opportunistic", "C2", "D"),
    "random": ("Random", "C3", "x"),
    "decima": ("Decima (public TPC-H-trained weights)", "C4", "P"),
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
    nx.draw_networkx_nodes(
        g,
        pos,
        ax=top,
        node_size=60,
        linewidths=0.4,
        edgecolors="0.2",
        node_color=[cmap(groups[n] % cmap.N) for n in g],
    )
    top.set_title(
        f"{title} profile: {g.number_of_nodes()} tasks, {g.number_of_edges()} edges "
        "(colour = contracted task)"
    )
    top.axis("off")

    hpos = layered_layout(h)
    labels = {n: f"{len(d['members'])} ops\n{d['forward_ms']:.1f} ms" for n, d in h.nodes(data=True)}
    nx.draw_networkx_edges(h, hpos, ax=bottom, arrowsize=14, width=1.2, edge_color="0.35", node_size=2600)
    nx.draw_networkx_nodes(
        h,
        hpos,
        ax=bottom,
        node_size=2600,
        edgecolors="0.2",
        node_color=[cmap(groups[d["members"][0]] % cmap.N) for _, d in h.nodes(data=True)],
    )
    nx.draw_networkx_labels(h, hpos, labels, ax=bottom, font_size=7)
    edge_labels = {(u, v): f"{d['bytes'] / 1e6:.0f} MB" for u, v, d in h.edges(data=True)}
    nx.draw_networkx_edge_labels(h, hpos, edge_labels, ax=bottom, font_size=6.5, rotate=False)
    bottom.set_title(
        f"after Nona contraction: {h.number_of_nodes()} tasks, {h.number_of_edges()} edges "
        "(forward ms per minibatch; MB per transfer)"
    )
    bottom.axis("off")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- figure helpers
# Shared by the figure notebooks: readable log axes, legends off the data, and the paper's
# printed gains drawn next to ours (values from reference/nona.yaml, never typed here).

#: readable names of the simulator's job classes, for titles and legends
CLASS_LABEL = {
    "gpt2": "GPT-2",
    "densenet121": "DenseNet-121",
    "vgg16": "VGG-16",
    "alexnet": "AlexNet",
    "resnet18": "ResNet-18",
    "background_compute": "background compute jobs",
    "background_comm": "background communication jobs",
    "f": "job f",
}


def class_label(name: str) -> str:
    """Readable name of a job class (unknown names are returned unchanged)."""
    return CLASS_LABEL.get(name, name)


def load_label(workload: Mapping[str, Any]) -> str:
    """The x-axis label of a load sweep under ``workload`` (``build_workload`` arguments):
    what "load" means depends on its ``load_basis``.

    >>> load_label({})
    'compute load (share of server time busy)'
    >>> load_label({"load_basis": "cluster"})
    'compute load (sum of arrival rate x service time: busy servers, cluster-wide)'
    """
    if workload.get("load_basis", "server") == "cluster":
        return "compute load (sum of arrival rate x service time: busy servers, cluster-wide)"
    return "compute load (share of server time busy)"


def scheme_label(scheme: str) -> str:
    """Readable name of a scheme (``SCHEME_STYLE``'s label; unknown names unchanged)."""
    return SCHEME_STYLE[scheme][0] if scheme in SCHEME_STYLE else scheme


def readable_log_axis(ax: Any, axis: str = "y", ticks: Sequence[float] | None = None) -> None:
    """A log axis whose labels never overlap: decades only (``1``, ``10``, ``100`` ...) or the
    given ``ticks`` written as plain numbers (e.g. the bandwidths of Fig. 4), no minor labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    if ticks is not None:
        target.set_major_locator(FixedLocator(list(ticks)))
        target.set_minor_locator(FixedLocator([]))
    else:
        lo, hi = ax.get_xlim() if axis == "x" else ax.get_ylim()
        # fewer than two decades shown: 1-2-5 ticks, so the axis has more than one label
        subs = (1.0, 2.0, 5.0) if lo > 0 and hi / lo < 100 else (1.0,)
        target.set_major_locator(LogLocator(base=10, subs=subs, numticks=8))
        target.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10) * 0.1, numticks=8))
    target.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    target.set_minor_formatter(NullFormatter())


def wrap_label(text: str, width: int = 50) -> str:
    """An axis label broken into lines of at most ``width`` characters, so that the labels of
    panels side by side do not run into each other.

    >>> wrap_label("compute load (sum of arrival rate x service time: busy servers, cluster-wide)")
    'compute load (sum of arrival rate x service time:\\nbusy servers, cluster-wide)'
    """
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def legend_below(fig: Any, handles: Sequence[Any], labels: Sequence[str], ncol: int = 4) -> Any:
    """One legend for the whole figure, under the axes (never over a curve)."""
    return fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=8, frameon=False)


def _handles(axes: Sequence[Any]) -> tuple[list, list]:
    seen: dict[str, Any] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    return list(seen.values()), list(seen)


def _paper_marks(
    ax: Any,
    x_right: float,
    step: float,
    paper_high: Mapping[str, float],
    paper_low: Mapping[str, float] | None,
    log_x: bool,
) -> None:
    """The paper's printed gains at the right edge of a gain panel: a bar from the lowest to the
    highest factor it prints (a single mark when it prints only "up to")."""
    for i, (s, high) in enumerate(paper_high.items()):
        _, color, marker = SCHEME_STYLE[s]
        x = x_right * step ** (i + 1) if log_x else x_right + step * (i + 1)
        low = (paper_low or {}).get(s)
        if low is not None:
            ax.plot([x, x], [low, high], color=color, lw=3, alpha=0.55, solid_capstyle="butt")
        ax.plot([x], [high], marker=marker, color=color, mfc="white", ms=8, ls="none")
        # upright labels: the marks sit a few points apart and their values can be close
        ax.annotate(
            f"{high:g}x",
            (x, high),
            textcoords="offset points",
            xytext=(0, 7),
            ha="center",
            va="bottom",
            rotation=90,
            fontsize=7,
            color=color,
        )


def plot_sweep(
    rows: Any,
    x: str,
    schemes: Sequence[str],
    *,
    xlabel: str,
    title: str,
    panels: Sequence[tuple[str, str]] = (
        ("mean_jct_s", "(a) all jobs"),
        ("inference_mean_jct_s", "(b) inference jobs"),
    ),
    log_x: bool = False,
    paper_high: Mapping[str, float] | None = None,
    paper_low: Mapping[str, float] | None = None,
    gain_of: str = "mean_jct_s",
) -> Any:
    """Figs. 3 and 4: average JCT of every scheme against ``x`` (one panel per ``panels``
    column, log JCT axis), and a last panel with each baseline's gain (its JCT / Nona's, column
    ``gain_of``) next to the paper's printed factors (``paper_high``/``paper_low``, by scheme,
    drawn right of the sweep's last point). ``rows``: the sweep's table (``scheme``, ``status``,
    ``x`` and the columns). Schemes with no successful row appear in the legend as "(not run)".
    """
    import matplotlib.pyplot as plt

    ok = rows[rows.status == "ok"]
    xs = sorted(ok[x].unique())
    xlabel = wrap_label(xlabel)
    fig, axes = plt.subplots(1, len(panels) + 1, figsize=(5.2 * (len(panels) + 1), 4.6), layout="constrained")
    for ax, (col, sub) in zip(axes, panels):
        for s in schemes:
            label, color, marker = SCHEME_STYLE[s]
            g = ok[ok.scheme == s].sort_values(x)
            if g.empty:
                ax.plot([], [], color=color, marker=marker, label=f"{label} (not run)")
            else:
                ax.plot(g[x], g[col], color=color, marker=marker, label=label)
        readable_log_axis(ax, "y")
        if log_x:
            readable_log_axis(ax, "x", ticks=xs)
        else:
            ax.set_xticks(xs)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("average JCT (s, log scale)")
        ax.set_title(sub)
        ax.grid(True, which="major", alpha=0.3)

    gain = axes[-1]
    base = ok[ok.scheme == "nona"].set_index(x)[gain_of]
    for s in schemes:
        if s in ("nona",) or s not in SCHEME_STYLE:
            continue
        label, color, marker = SCHEME_STYLE[s]
        g = ok[ok.scheme == s].set_index(x)[gain_of]
        if len(g):
            r = (g / base).dropna()
            gain.plot(r.index, r.values, color=color, marker=marker, label=label)
    gain.axhline(1.0, color="0.3", lw=0.8)
    if paper_high:
        if log_x:
            _paper_marks(gain, max(xs), 1.22, paper_high, paper_low, True)
        else:
            span = (max(xs) - min(xs)) or 1.0
            _paper_marks(gain, max(xs), 0.06 * span, paper_high, paper_low, False)
        if paper_low:
            gain.plot(
                [],
                [],
                color="0.4",
                lw=3,
                alpha=0.55,
                marker="o",
                mfc="white",
                label="paper's printed factors (bar: its range, open marker: its highest)",
            )
        else:
            gain.plot(
                [],
                [],
                color="0.4",
                ls="none",
                marker="o",
                mfc="white",
                label="paper's printed factor ('up to', open marker)",
            )
        gain.axvline(
            max(xs) * 1.1 if log_x else max(xs) + 0.025 * ((max(xs) - min(xs)) or 1.0),
            color="0.6",
            lw=0.6,
            ls=":",
        )
    readable_log_axis(gain, "y")
    if paper_high:  # head room for the upright labels of the paper's marks
        gain.set_ylim(top=max(gain.get_ylim()[1], 6 * max(paper_high.values())))
    if log_x:
        readable_log_axis(gain, "x", ticks=xs)
    else:  # only the swept points: the paper's marks right of them are not a load
        gain.set_xticks(xs)
    gain.set_xlabel(xlabel)
    gain.set_ylabel("scheme's average JCT / Nona's (x, log scale)")
    gain.set_title(f"({chr(ord('a') + len(panels))}) Nona's gain, all jobs; paper's values at the right")
    gain.grid(True, which="major", alpha=0.3)
    legend_below(fig, *_handles(axes), ncol=5)
    fig.suptitle(title)
    return fig


def factor_text(v: float) -> str:
    """A gain factor as a short label: three significant digits, no exponent.

    >>> [factor_text(v) for v in (0.752, 15, 303.1, 1667.4, 33100.0)]
    ['0.752x', '15x', '303x', '1667x', '33100x']
    """
    return f"{v:.0f}x" if abs(v) >= 100 else f"{v:.3g}x"


def _gain_bars(ax: Any, gains: Mapping[str, float], paper_gains: Mapping[str, float] | None) -> None:
    """Fig. 5's gain panel: ours (filled) and the paper's (hatched) factor per baseline on a log
    axis whose view holds every bar and its value label (limits set after the log scale: a
    linear lower limit of 0 would collapse the log axis)."""
    names = [s for s in (paper_gains or gains) if s in SCHEME_STYLE]
    pos = np.arange(len(names))
    ours = np.array([gains.get(s, np.nan) for s in names], dtype=float)
    theirs = np.array([(paper_gains or {}).get(s, np.nan) for s in names], dtype=float)
    colors = [SCHEME_STYLE[s][1] for s in names]
    ax.bar(pos - 0.2, ours, 0.4, color=colors)
    if paper_gains:
        ax.bar(pos + 0.2, theirs, 0.4, color="white", edgecolor=colors, hatch="//")
    ax.axhline(1.0, color="0.3", lw=0.8)
    shown = np.concatenate([ours, theirs, [1.0]])
    shown = shown[np.isfinite(shown) & (shown > 0)]
    ax.set_yscale("log")
    # below: half the smallest value; above: room for the value labels (a factor on a log axis)
    ax.set_ylim(shown.min() / 2, shown.max() * 4)
    readable_log_axis(ax, "y")
    for offset, values in ((-0.2, ours), (0.2, theirs)):
        for p, v in zip(pos, values):
            if np.isfinite(v) and v > 0:
                ax.annotate(
                    factor_text(v),
                    (p + offset, v),
                    textcoords="offset points",
                    xytext=(0, 2),
                    ha="center",
                    fontsize=7,
                )
    ax.set_xticks(pos, [scheme_label(s).split(" (")[0] for s in names], rotation=20, fontsize=8)
    ax.set_ylabel("their p99 JCT / Nona's (x, log)")
    ax.set_title("Nona's inference p99 gain\n(filled: ours; hatched: paper)", fontsize=10)


def plot_cdfs(
    jobs: Mapping[str, Any],
    schemes: Sequence[str],
    classes: Sequence[str],
    *,
    title: str,
    gains: Mapping[str, float] | None = None,
    paper_gains: Mapping[str, float] | None = None,
) -> Any:
    """Fig. 5: the CDF of the JCT of every job class (one panel each, log time axis), a legend
    panel, and (``gains``/``paper_gains``) a panel of Nona's inference p99 gain per baseline next
    to the paper's. ``jobs``: scheme -> that scheme's jobs (``job_class``, ``jct``)."""
    import math

    import matplotlib.pyplot as plt

    extra = 1 + (gains is not None)
    cols = 3
    n_rows = math.ceil((len(classes) + extra) / cols)
    fig, axes = plt.subplots(n_rows, cols, figsize=(13, 3.5 * n_rows), layout="constrained")
    flat = list(axes.flat)
    for ax, c in zip(flat, classes):
        for s in schemes:
            label, color, _ = SCHEME_STYLE[s]
            if s not in jobs:
                ax.plot([], [], color=color, label=f"{label} (not run)")
                continue
            v = np.sort(jobs[s].loc[jobs[s].job_class == c, "jct"].to_numpy())
            if len(v):
                ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", color=color, label=label)
            else:
                ax.plot([], [], color=color, label=label)
        readable_log_axis(ax, "x")
        ax.set_title(class_label(c))
        ax.set_xlabel("JCT (s, log scale)")
        ax.set_ylabel("fraction of jobs (CDF)")
        ax.set_ylim(0, 1.02)
        ax.grid(True, which="major", alpha=0.3)
    spare = flat[len(classes) :]
    handles, labels = _handles(flat[: len(classes)])
    spare[0].axis("off")
    spare[0].legend(handles, labels, loc="center", fontsize=9, frameon=False, title="scheme")
    if gains is not None:
        _gain_bars(spare[1], gains, paper_gains)
    for ax in spare[extra:]:
        ax.axis("off")
    fig.suptitle(title)
    return fig


def plot_job_f(
    sweep: Any, other: Any, paper: Mapping[str, float], table_loads: Mapping[str, float], *, title: str
) -> Any:
    """Table I / Fig. 1: the optimal probability of distributing job f (and of each allocation)
    against the load, the congestion-oblivious 50/50, and Table I's printed shares at our
    low/medium/high loads. ``sweep``/``other``: the table1 notebook's sweeps (``other`` with
    other background transfer sizes, column ``background_mb``)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4.4), layout="constrained")
    ax.plot(sweep.load, sweep.p_distribute, "o-", lw=2, label="Nona (optimal): P(distribute f)")
    for c in [c for c in sweep.columns if c.startswith(("allocation", "split"))]:
        ax.plot(sweep.load, sweep[c], "--", label=f"Nona: P({c})")
    ax.axhline(0.5, color="0.4", ls=":", label="congestion-oblivious: 50% each allocation")
    xs = [table_loads[k] for k in paper]
    ax.scatter(
        xs,
        list(paper.values()),
        marker="X",
        s=80,
        color="k",
        zorder=5,
        label="paper, Table I: Nona distributes (our load positions)",
    )
    for k, xv in zip(paper, xs):
        ax.annotate(
            f"{k}: {paper[k]:.0%}", (xv, paper[k]), textcoords="offset points", xytext=(6, 6), fontsize=8
        )
    for mb, grp in other.groupby("background_mb"):
        ax.plot(
            grp.load,
            grp.p_distribute,
            ".-",
            lw=0.8,
            alpha=0.7,
            label=f"P(distribute f), {mb:g} MB background transfers",
        )
    ax.set_xlabel("load (compute load = background link load)")
    ax.set_ylabel("probability")
    ax.set_ylim(-0.05, 1.1)
    ax.grid(True, alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=8, loc="outside right center", frameon=False)
    ax.set_title(title)
    return fig


def plot_model_error(err: Any, *, title: str) -> Any:
    """Nona's predicted JCT (dashed) against the simulated mean JCT (solid) per class and
    load, and their relative error; ``err``: the model_error notebook's table."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), layout="constrained")
    for i, c in enumerate(dict.fromkeys(err.job_class)):
        g = err[err.job_class == c]
        axes[0].plot(g.load, g.simulated_jct_s, color=f"C{i}", marker="o", label=class_label(c))
        axes[0].plot(g.load, g.predicted_jct_s, color=f"C{i}", ls="--", marker="x")
        axes[1].plot(g.load, 100 * g.relative_error, color=f"C{i}", marker="o")
    axes[0].plot([], [], color="0.3", marker="o", label="simulated (solid)")
    axes[0].plot([], [], color="0.3", ls="--", marker="x", label="predicted by the optimiser (dashed)")
    readable_log_axis(axes[0], "y")
    axes[0].set_ylabel("mean JCT (s, log scale)")
    axes[0].set_title("(a) predicted vs simulated")
    axes[1].axhline(0, color="k", lw=0.8)
    axes[1].set_ylabel("prediction error (%): predicted / simulated - 1")
    axes[1].set_title("(b) relative error of the model")
    for ax in axes:
        ax.set_xlabel("compute load")
        ax.grid(True, which="major", alpha=0.3)
    legend_below(fig, *_handles(axes), ncol=5)
    fig.suptitle(title)
    return fig
