"""Figures of the PCS reproduction: one function per figure, each returning a matplotlib Figure.

The stage notebooks compute their tables with the library, then call these functions and
``Outputs.savefig(fig, stem)`` (150 dpi PNG + PDF). Conventions, the same in every figure:

* one colour per policy (:data:`POLICY_COLORS`), our values filled, **the paper's printed values
  as black or hollow markers** (from ``reference/pcs.yaml`` via
  :func:`schedlab.reference.paper_values`, passed in as a ``{id: value}`` mapping);
* axes labelled with units; ``Pred_err`` axes in % on a symmetric-log scale (linear below 1 %,
  log above) so that FIFO's 0 % stays visible where the paper uses a log axis;
* legends outside the data (below or right of the axes).

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"policy": ["FIFO", "Tiresias"], "mean_jct": [15.75, 11.25],
...                   "mean_pred_error": [0.0, 45.6]})
>>> fig = fig1b(t, {"fig1.fifo.mean_jct": 15.75, "fig1.tiresias.mean_jct": 11.25})
>>> [a.get_ylabel() for a in fig.axes]
['mean JCT (time units)', 'mean Pred$_\\\\mathrm{err}$ (%)']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

#: Pred_err as the paper writes it
PRED = r"Pred$_\mathrm{err}$"
#: the command that runs what the default profile leaves out
PAPER_PROFILE_CMD = "make reproduce PROFILE=paper"

POLICY_COLORS = {
    "AFS": "#1f77b4",
    "Tiresias": "#ff7f0e",
    "SRSF": "#ff7f0e",
    "Themis": "#8c564b",
    "FIFO": "#7f7f7f",
    "Max-Min": "#9467bd",
    "LAS": "#bcbd22",
    "PCS-JCT": "#2ca02c",
    "PCS-bal": "#17becf",
    "PCS-pred": "#d62728",
}
#: workload-2 traces in the order of the paper's Fig. 7 (rows 1-6 of its fig7_*.csv)
FIG7_TRACES = ("0e4a51", "b436b2", "6214e9", "6c71a0", "2869ce", "ee9e8c")
FIG7_POLICIES = ("AFS", "Tiresias", "Themis", "FIFO", "PCS-JCT", "PCS-bal", "PCS-pred")
#: (our column, reference id suffix, panel title, y label, y scale)
FIG7_PANELS = (
    (
        "norm_avg_jct",
        "norm_avg_jct",
        "(a) Performance: average JCT, normalised to the best policy",
        "avg JCT / best avg JCT (×, log)",
        "log",
    ),
    (
        "avg_pred_error",
        "avg_pred_error_pct",
        f"(b) Predictability: average {PRED}",
        f"avg {PRED} (%, log above 1)",
        "symlog",
    ),
    (
        "p99_pred_error",
        "p99_pred_error_pct",
        f"(c) Predictability: p99 {PRED}",
        f"p99 {PRED} (%, log above 1)",
        "symlog",
    ),
)


def color(policy: str) -> str:
    """The policy's colour (grey for a policy the table does not know)."""
    return POLICY_COLORS.get(policy, "#333333")


def _symlog(ax, axis: str = "y") -> None:
    """Symmetric-log axis for a non-negative percentage: linear below 1 % so that 0 % (FIFO)
    has a place, log above as the paper's log axes; ticks at 1-2-5 steps, written plainly.
    Call after plotting (the lower limit is set just under 0)."""
    from matplotlib.ticker import FuncFormatter, SymmetricalLogLocator

    (ax.set_yscale if axis == "y" else ax.set_xscale)("symlog", linthresh=1.0, linscale=0.5)
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(SymmetricalLogLocator(base=10, linthresh=1.0, subs=[1.0, 2.0, 5.0]))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    (ax.set_ylim if axis == "y" else ax.set_xlim)(-0.15, None)


def legend_under(fig: plt.Figure, axes: Sequence[plt.Axes], ncol: int = 3) -> None:
    """One legend for the figure, below every axes and its labels (the figure must use the
    constrained layout, which makes room for it): a legend anchored under one axes at a fixed
    offset ends up over that axes' x label. Entries with the same label are drawn once.

    Examples
    --------
    >>> fig, ax = plt.subplots(1, 2, layout="constrained")
    >>> _ = ax[0].plot([0, 1], label="(a) ours"); _ = ax[1].plot([0, 1], label="(b) ours")
    >>> legend_under(fig, ax)
    >>> [t.get_text() for t in fig.legends[0].get_texts()]
    ['(a) ours', '(b) ours']
    """
    seen: dict[str, object] = {}
    for a in axes:
        for h, lab in zip(*a.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if seen:
        fig.legend(
            list(seen.values()), list(seen), loc="outside lower center", ncol=ncol, fontsize=8, frameon=False
        )


def _paper_handle(marker: str = "_", label: str = "paper (printed value)") -> Line2D:
    return Line2D([], [], color="black", marker=marker, ls="none", markersize=12, mew=2, label=label)


# ----------------------------------------------------------------------------- Fig. 1b
def fig1b(table: pd.DataFrame, paper: Mapping[str, float]) -> plt.Figure:
    """Toy example: mean JCT and mean Pred_err per policy; paper values (``fig1.<policy>.*``,
    policy lower-case) as black ticks."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    x = np.arange(len(table))
    for ax, col, title, ylabel in [
        (axes[0], "mean_jct", "Performance: mean JCT", "mean JCT (time units)"),
        (axes[1], "mean_pred_error", f"Predictability: mean {PRED}", f"mean {PRED} (%)"),
    ]:
        ax.bar(x, table[col], color=[color(p) for p in table.policy], width=0.6)
        for xi, pol in zip(x, table.policy):
            v = paper.get(f"fig1.{pol.lower()}.{col}")
            if v is not None:
                ax.plot(xi, v, "_", color="black", markersize=22, mew=2.5)
        ax.set_xticks(x, table.policy)
        ax.set(title=title, ylabel=ylabel)
    fig.legend(
        handles=[Patch(color="#999999", label="ours (simulated)"), _paper_handle()],
        loc="lower center",
        ncol=2,
        bbox_to_anchor=(0.5, -0.08),
        frameon=False,
    )
    fig.suptitle("PCS Fig. 1b: toy example (1 GPU, four jobs)")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- Fig. 7
def fig7(
    ours: pd.DataFrame,
    paper: Mapping[str, float],
    *,
    traces: Sequence[str] = FIG7_TRACES,
    policies: Sequence[str] = FIG7_POLICIES,
    paper_only: Sequence[str] | None = None,
    gpus: int = 64,
) -> plt.Figure:
    """Workload-2: grouped bars (ours) per trace and policy with the paper's values as black
    ticks, in three panels (normalised avg JCT, avg and p99 Pred_err) on log axes.

    ``ours`` is ``results/pcs/fig7.csv`` (columns ``trace``, ``policy`` and the three metrics);
    ``paper`` maps ids ``fig7.<trace>.<policy>.<metric>`` to values. Traces the table lacks get
    only the paper's ticks and are labelled "paper profile only" if they are in ``paper_only``
    (default: all of them), else "not run in this profile"."""
    fig, axes = plt.subplots(3, 1, figsize=(11, 10.5), sharex=True)
    width = 0.8 / len(policies)
    ran = set(ours.trace.astype(str))
    x = np.arange(len(traces))
    pred_cols = [col for col, *_ in FIG7_PANELS if col != "norm_avg_jct"]
    # traces with JCT rows but no predictions (a run without the predictor)
    jct_only = {t for t in ran if ours.loc[ours.trace.astype(str) == t, pred_cols].isna().all().all()}
    for ax, (col, suffix, title, ylabel, scale) in zip(axes, FIG7_PANELS):
        for k, pol in enumerate(policies):
            xs = x - 0.4 + width * (k + 0.5)
            mine = ours[ours.policy == pol].set_index(ours[ours.policy == pol].trace.astype(str))[col]
            heights = [mine.get(t, np.nan) for t in traces]
            ax.bar(xs, heights, width=width * 0.92, color=color(pol))
            pv = [paper.get(f"fig7.{t}.{pol}.{suffix}", np.nan) for t in traces]
            ax.plot(xs, pv, "_", color="black", markersize=max(4.0, 60 * width), mew=2)
        if scale == "log":
            ax.set_yscale("log")
        else:
            _symlog(ax)
        for i, t in enumerate(traces):
            if t not in ran or (col in pred_cols and t in jct_only):
                # shaded: only the paper's ticks until the paper profile runs it
                ax.axvspan(i - 0.45, i + 0.45, color="#eeeeee", zorder=0)
        ax.set_title(title, loc="left", fontsize=11)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3, which="both")
    only = set(traces) - ran if paper_only is None else set(paper_only)
    labels = [
        f"{t}\n(JCT only)"
        if t in jct_only
        else t
        if t in ran
        else f"{t}\n(paper profile only)"
        if t in only
        else f"{t}\n(not run in this profile)"
        for t in traces
    ]
    axes[-1].set_xticks(x, labels)
    axes[-1].set_xlabel("workload-2 trace (Philly VC)")
    handles = [Patch(color=color(p), label=p) for p in policies] + [_paper_handle()]
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=len(handles),
        frameon=False,
        bbox_to_anchor=(0.5, -0.035),
        fontsize=9,
    )
    missing = [t for t in traces if t not in ran or t in jct_only]
    note = (
        f"Pred_err of {', '.join(missing)} (JCT only: runs without the predictor): not run in this profile; "
        f"`{PAPER_PROFILE_CMD}` runs all six."
        if missing
        else ""
    )
    fig.suptitle(
        f"PCS Fig. 7: workload-2, {gpus} GPUs — ours (bars) vs the paper (black ticks)\n" + note, fontsize=12
    )
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- Fig. 8a
#: the policies of the paper's Fig. 8a, in its order (its fig8a_pred_error_bars_workload3.csv)
FIG8A_POLICIES = ("AFS", "Tiresias", "Themis", "PCS-JCT")


def fig8a(
    ours: pd.DataFrame,
    paper: Mapping[str, float],
    *,
    policies: Sequence[str] = FIG8A_POLICIES,
    gpus: int = 64,
    seeds: int = 5,
) -> plt.Figure:
    """Workload-3: average (filled) and p99 (hatched) Pred_err per policy, on the symmetric-log
    axis of the other Pred_err figures; the paper's bars (``fig8a.simulated.<policy>.avg_pred_error``
    and ``.p99_pred_error``, already without the authors' plotting offset of 5) as black ticks.

    ``ours`` is ``results/pcs/fig8.csv`` (``policy``, ``avg_pred_error``, ``p99_pred_error``, in %).

    Examples
    --------
    >>> t = pd.DataFrame({"policy": ["AFS", "PCS-JCT"], "avg_pred_error": [12.2, 5.9],
    ...                   "p99_pred_error": [328.8, 79.3]})
    >>> fig = fig8a(t, {"fig8a.simulated.AFS.p99_pred_error": 328.8}, policies=["AFS", "PCS-JCT"])
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['AFS', 'PCS-JCT']
    """
    missing = [c for c in ("policy", "avg_pred_error", "p99_pred_error") if c not in ours.columns]
    if missing:
        raise ValueError(
            f"fig8a: the table lacks column(s) {missing}; expected results/pcs/fig8.csv's columns"
        )
    by = ours.set_index("policy")
    fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    x = np.arange(len(policies))
    for off, col, hatch in ((-0.2, "avg_pred_error", None), (0.2, "p99_pred_error", "//")):
        heights = [by[col].get(p, np.nan) for p in policies]
        colours = [color(p) for p in policies]
        if hatch:
            ax.bar(x + off, heights, 0.38, color="white", edgecolor=colours, hatch=hatch, lw=1.2)
        else:
            ax.bar(x + off, heights, 0.38, color=colours)
        pv = [paper.get(f"fig8a.simulated.{p}.{col}", np.nan) for p in policies]
        ax.plot(x + off, pv, "_", color="black", markersize=22, mew=2)
    _symlog(ax)
    ax.set_xticks(x, policies)
    ax.set(
        ylabel=f"{PRED} (%, log above 1)",
        title=f"PCS Fig. 8a: workload-3 (Gavel), {gpus} GPUs, {seeds} seeds: avg and p99 {PRED}",
    )
    ax.title.set_fontsize(10)
    ax.grid(axis="y", alpha=0.3, which="both")
    handles = [
        Patch(color="#999999", label=f"avg {PRED} (ours, filled)"),
        Patch(facecolor="white", edgecolor="#555555", hatch="//", label=f"p99 {PRED} (ours, hatched)"),
        _paper_handle(),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    return fig


# ----------------------------------------------------------------------------- Fig. 8b
def fig8b(ours: pd.DataFrame, paper: Mapping[str, float], *, gpus: int = 64, seeds: int = 5) -> plt.Figure:
    """Workload-3: p99 Pred_err against normalised avg JCT; ours filled, the paper's
    (``fig8b.simulated.<policy>.*``) hollow, joined by a dotted line. Names in the legend,
    not on the points (they overlap: Tiresias and AFS are 2 % apart)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    handles = []
    for _, r in ours.iterrows():
        c = color(r.policy)
        ax.plot(r.norm_avg_jct, r.p99_pred_error, "o", color=c, markersize=8)
        px = paper.get(f"fig8b.simulated.{r.policy}.norm_avg_jct")
        py = paper.get(f"fig8b.simulated.{r.policy}.p99_pred_error")
        if px is not None and py is not None:
            ax.plot(px, py, "o", mfc="none", mec=c, markersize=12, mew=1.5)
            ax.plot([r.norm_avg_jct, px], [r.p99_pred_error, py], ":", color=c, lw=1)
        handles.append(Line2D([], [], color=c, marker="o", ls="none", label=r.policy))
    handles += [
        Line2D([], [], color="black", marker="o", ls="none", label="ours (filled)"),
        Line2D(
            [], [], color="black", marker="o", mfc="none", ls="none", markersize=10, label="paper (hollow)"
        ),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set(
        xlabel="avg JCT / best avg JCT (×)",
        ylabel=f"p99 {PRED} (%)",
        title=f"PCS Fig. 8b: workload-3 (Gavel), {gpus} GPUs, {seeds} seeds",
    )
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- Fig. 3
def fig3(
    front: pd.DataFrame,
    baselines: pd.DataFrame,
    authors: pd.DataFrame,
    *,
    err_col: str,
    trace: str,
    jobs: int,
    evaluations: int,
    authors_jobs: int,
    authors_evaluations: int,
    same_jobs: bool,
    best_avg_jct: float,
    gpus: int = 64,
) -> plt.Figure:
    """Pareto front: our SPEA2 front and the baselines (left); the authors' stored front on
    the same axes when on the same jobs (``same_jobs``), else in its own panel (right).

    ``front``/``baselines`` have ``norm_avg_jct`` and ``err_col``; ``authors`` has ``avg_jct``
    and ``avg_pred_error`` (s, %)."""
    n = 1 if same_jobs else 2
    fig, axes = plt.subplots(1, n, figsize=(6.2 * n, 4.4), squeeze=False)
    a = axes[0, 0]
    a.scatter(
        front.norm_avg_jct,
        front[err_col],
        s=18,
        color=color("PCS-JCT"),
        label=f"PCS front (ours, {evaluations} simulations)",
    )
    for _, r in baselines.iterrows():
        a.scatter(r.norm_avg_jct, r[err_col], marker="s", s=50, color=color(r.policy), label=r.policy)
    if same_jobs:
        a.scatter(
            authors.avg_jct / best_avg_jct,
            authors.avg_pred_error,
            marker="x",
            color="black",
            label=f"authors' SPEA2 ({authors_evaluations} simulations)",
        )
    _symlog(a)
    a.set(
        title=f"ours: trace {trace}, first {jobs} jobs",
        xlabel="avg JCT / best avg JCT (×)",
        ylabel=f"avg {PRED} (%, log above 1)",
    )
    a.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if not same_jobs:
        b = axes[0, 1]
        b.scatter(authors.avg_jct / authors.avg_jct.min(), authors.avg_pred_error, marker="x", color="black")
        _symlog(b)
        b.set(
            title=f"authors' stored front: {trace}, {authors_jobs} jobs, {authors_evaluations} simulations",
            xlabel="avg JCT / its best avg JCT (×)",
            ylabel=f"avg {PRED} (%, log above 1)",
        )
        b.title.set_fontsize(10)
    for ax in axes[0]:
        ax.grid(alpha=0.3, which="both")
    note = "" if same_jobs else f"\n(different job sets: same axes with `{PAPER_PROFILE_CMD}`)"
    fig.suptitle(
        f"PCS Fig. 3: Pareto front, avg JCT vs avg {PRED}, workload-2, {gpus} GPUs{note}", fontsize=11
    )
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- Fig. 9
def fig9ab(f9a: pd.DataFrame, f9b: pd.DataFrame, paper: Mapping[str, dict], workers: int) -> plt.Figure:
    """Times: minutes per simulation (9a) and per Pareto front (9b) vs cluster size, ours
    (this machine) and the paper's (``paper`` = the ``figure9{a,b}.json`` documents)."""
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.8), layout="constrained")
    for jobs, g in f9a.groupby("jobs"):
        ax[0].errorbar(
            g.gpus,
            g.cpu_s / 60,
            yerr=g.cpu_s_std.fillna(0) / 60,
            marker="o",
            label=f"(a) ours (CPU), {jobs} jobs",
        )
    for k in ("512", "1024"):
        vals, stds = np.asarray(paper["a"][k]["values"], float), np.asarray(paper["a"][k]["stds"], float)
        # on a log axis a bar down to <= 0 would run off the plot: the lower bar stops at 10 % of the value
        yerr = np.vstack([np.minimum(stds, 0.9 * vals), stds])
        ax[0].errorbar(
            paper["a"]["gpus"],
            vals,
            yerr=yerr,
            ls="--",
            capsize=3,
            marker="x",
            color="black" if k == "512" else "#555555",
            label=f"(a) paper, {k} jobs",
        )
    ax[0].set(
        xscale="log",
        yscale="log",
        xlabel="cluster size (GPUs)",
        ylabel="minutes per simulation",
        title="(a) time per simulation",
    )
    for (jobs, gpus), g in f9b.groupby(["jobs", "gpus"]):
        ax[1].scatter(
            [gpus],
            g.wall_s / 60,
            marker="o",
            label=f"(b) ours wall, {jobs} jobs, {int(g.evaluations.iloc[0])} sims",
        )
        ax[1].scatter(
            [gpus], g.projected_wall_idle_s / 60, marker="^", label=f"(b) ours CPU/{workers}, {jobs} jobs"
        )
    for k in ("512", "1024"):
        ax[1].plot(
            paper["b"]["gpus"],
            np.array(paper["b"][k]["values"]) / 60,
            "--x",
            color="black" if k == "512" else "#555555",
            label=f"(b) paper, {k} jobs",
        )
    ax[1].set(
        xscale="log",
        yscale="log",
        xlabel="cluster size (GPUs)",
        ylabel="minutes per Pareto front",
        title="(b) time per Pareto front",
    )
    for a in ax:
        a.grid(alpha=0.3, which="both")
    legend_under(fig, ax, ncol=3)
    fig.suptitle("PCS Fig. 9a/b: search cost (ours on this machine; the paper on 10 CloudLab machines)")
    return fig


def fig9c(f9c: pd.DataFrame, paper_c: Mapping) -> plt.Figure:
    """Share of the Pareto points found vs evaluation budget, with and without the heuristic
    parameterisation; the paper's (``figure9c.json``) dashed."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    names = {"heuristic": "heuristic (T, W, ζ_min, δ)", "raw": "without heuristics (raw encoding)"}
    for (space, g), c in zip(f9c.groupby("space"), ("C2", "C3")):
        ax.plot(g.budget, g.share_pct, "-o", color=c, label=f"ours, {names.get(space, space)}")
    ax.plot(paper_c["labels"], paper_c["heuristics"], "--x", color="C2", label="paper, heuristics")
    ax.plot(paper_c["labels"], paper_c["without_heuristics"], "--x", color="C3", label="paper, without")
    if max(paper_c["labels"]) > f9c.budget.max():
        ax.text(
            0.98,
            0.03,
            f"budgets > {f9c.budget.max()}: paper profile only\n(`{PAPER_PROFILE_CMD}`)",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=8,
            color="#555555",
        )
    ax.set(
        xlabel="evaluation budget (simulations)",
        ylabel="Pareto points found (%)",
        ylim=(0, 102),
        title="PCS Fig. 9c: Pareto points found vs budget",
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- Fig. 10
def fig10a_paper_curves(values: Mapping[str, float]) -> dict[str, dict[int, float]]:
    """The paper's Fig. 10a points by policy from ``paper_values("pcs", "fig10a.")``
    (ids ``fig10a.<policy>.avg_pred_error.p_error_<p>``): ``{policy: {p: avg Pred_err}}``.

    >>> fig10a_paper_curves({"fig10a.FIFO.avg_pred_error.p_error_5": 1.4})
    {'FIFO': {5: 1.4}}
    """
    out: dict[str, dict[int, float]] = {}
    for key, val in values.items():
        parts = key.split(".")
        if len(parts) != 4 or parts[0] != "fig10a" or not parts[3].startswith("p_error_"):
            raise ValueError(f"reference id {key!r}: expected fig10a.<policy>.avg_pred_error.p_error_<p>")
        out.setdefault(parts[1], {})[int(parts[3].removeprefix("p_error_"))] = float(val)
    return out


def fig10(
    f10: pd.DataFrame,
    paper_ratio: float | None,
    paper_curves: Mapping[str, Mapping[int, float]] | None = None,
) -> plt.Figure:
    """Job-size error: avg Pred_err of PCS-JCT and FIFO (a) and PCS-JCT avg JCT / AFS without
    error (b); ``paper_ratio`` (the paper's "within 1.05×") as a dashed line; ``paper_curves``
    (:func:`fig10a_paper_curves`, the paper's own workload) dashed in (a)."""
    fig, ax = plt.subplots(1, 2, figsize=(10, 4.4), layout="constrained")
    for lab in ["PCS-JCT", "FIFO"]:
        d = f10[f10.policy == lab]
        ax[0].plot(d.p_error, d.avg_pred_error, "o-", color=color(lab), label=f"(a) {lab} (ours)")
    for lab, pts in (paper_curves or {}).items():
        if len(pts) > 1:  # single points (AFS at 0 %) are in the table, not the plot
            xs = sorted(pts)
            ax[0].plot(
                xs,
                [pts[x] for x in xs],
                "s--",
                mfc="none",
                color=color(lab),
                label=f"(a) {lab}: paper (its workload)",
            )
    d = f10[f10.policy == "PCS-JCT"]
    ax[1].plot(d.p_error, d.jct_vs_afs, "o-", color=color("PCS-JCT"), label="(b) PCS-JCT / AFS (ours)")
    if paper_ratio is not None:
        ax[1].axhline(
            paper_ratio, ls="--", color="black", label=f"(b) paper: within {paper_ratio:g}× (its workload)"
        )
    ax[1].axhline(1.0, ls=":", color=color("AFS"), label="(b) AFS, no error")
    ax[0].set(
        xlabel="job-size estimation error p (%)",
        ylabel=f"avg {PRED} (%)",
        title=f"(a) average {PRED} vs size error",
    )
    ax[1].set(
        xlabel="job-size estimation error p (%)",
        ylabel="avg JCT / AFS avg JCT (×)",
        title="(b) performance vs size error",
    )
    for a in ax:
        a.grid(alpha=0.3)
    legend_under(fig, ax, ncol=3)
    fig.suptitle("PCS Fig. 10a/b: job-size estimation error (trace 0e4a51, our sensitivity run)")
    return fig


def fig10c(
    front_test: pd.DataFrame,
    moved: pd.DataFrame,
    cols: Sequence[str],
    *,
    train_load: float,
    test_load: float,
    workload: str,
    num_apps: int,
    gpus: int,
) -> plt.Figure:
    """Configurations searched at ``train_load`` and run at ``test_load`` against the front
    searched at ``test_load``; ``moved`` has ``<col>_at_test`` columns."""
    fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
    ax.scatter(
        front_test[cols[0]],
        front_test[cols[1]],
        marker="o",
        s=28,
        color="C0",
        label=f"searched at {test_load:.0%} load, run at {test_load:.0%}",
    )
    ax.scatter(
        moved[f"{cols[0]}_at_test"],
        moved[f"{cols[1]}_at_test"],
        marker="x",
        color="C3",
        label=f"searched at {train_load:.0%} load, run at {test_load:.0%}",
    )
    _symlog(ax)
    ax.set(
        xlabel="avg JCT (s)",
        ylabel=f"avg {PRED} (%, log above 1)",
        title=f"PCS Fig. 10c: load mismatch — {workload}, {num_apps} apps, {gpus} GPUs",
    )
    ax.grid(alpha=0.3, which="both")
    legend_under(fig, [ax], ncol=2)
    return fig


# ----------------------------------------------------------------------------- Fig. 11
def fig11(tiresias: pd.DataFrame, contention: pd.Series, *, gpus: int = 64) -> plt.Figure:
    """(a) Tiresias: job size vs Pred_err (``tiresias`` has ``service``, ``pred_error``);
    (b) Max-Min: histogram of the mean number of jobs each job shared the cluster with."""
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
    ax[0].scatter(tiresias.service, tiresias.pred_error, s=4, color=color("Tiresias"))
    ax[0].set_xscale("log")
    _symlog(ax[0])
    ax[0].set(
        xlabel="job size (GPU-seconds, log)",
        ylabel=f"{PRED} (%, log above 1)",
        title=f"(a) Tiresias: job size vs {PRED}",
    )
    ax[1].hist(contention, bins=50, color=color("Max-Min"))
    ax[1].axvline(float(np.mean(contention)), color="black", ls="--", label="mean")
    ax[1].axvline(float(np.percentile(contention, 99, method="lower")), color="black", ls=":", label="p99")
    ax[1].set(
        xlabel="mean contention a job saw (active jobs)",
        ylabel="jobs",
        title="(b) Max-Min: contention per job",
    )
    ax[1].legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for a in ax:
        a.grid(alpha=0.3)
    fig.suptitle(f"PCS Fig. 11: size and contention are poor predictors (workload-3, {gpus} GPUs)")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- testbed (Figs. 4, 6a)
def fig4_fig6a_cdfs(
    pred_errors: Mapping[str, np.ndarray],
    unfairness: Mapping[str, np.ndarray],
    *,
    gpus: int = 16,
    apps: int = 101,
) -> plt.Figure:
    """Simulated Figs. 4 and 6a: CDFs of Pred_err (%) and unfairness per policy."""
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.9))
    for lab, e in pred_errors.items():
        e = np.sort(np.asarray(e, dtype=float))
        ax[0].plot(e, np.arange(1, len(e) + 1) / len(e), color=color(lab), label=lab)
    for lab, u in unfairness.items():
        u = np.sort(np.asarray(u, dtype=float))
        ax[1].plot(100 * u, np.arange(1, len(u) + 1) / len(u), color=color(lab), label=lab)
    _symlog(ax[0], "x")
    _symlog(ax[1], "x")
    ax[0].set(
        xlabel=f"{PRED} (%, log above 1)",
        ylabel="fraction of jobs",
        title=f"Fig. 4 (simulated): CDF of {PRED}",
    )
    ax[1].set(
        xlabel="unfairness: JCT beyond fair finish time (%, log above 1)",
        ylabel="fraction of jobs",
        title="Fig. 6a (simulated): CDF of unfairness",
    )
    for a in ax:
        a.grid(alpha=0.3)
    ax[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(
        f"PCS testbed trace ({apps} apps) on {gpus} simulated GPUs — not the paper's GPU measurements"
    )
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- exactness
def prediction_agreement(theirs: pd.DataFrame, ours: pd.DataFrame, title: str) -> plt.Figure:
    """Predicted JCT per job, the authors' run against ours, with the diagonal."""
    fig, ax = plt.subplots(figsize=(4.8, 4.6))
    a = theirs.estimated_end_time - theirs.submit_time
    b = ours.estimated_end_time - ours.submit_time
    ax.loglog(a, b, ".", ms=3, color=color("PCS-JCT"), label="one job")
    lo, hi = float(min(a.min(), b.min())), float(max(a.max(), b.max()))
    ax.plot([lo, hi], [lo, hi], "--", color="black", lw=0.8, label="equal")
    # the same square view on both axes, its corner 0.22 decade below a decade: the first x and
    # y decade labels would otherwise meet at the corner when the data start at a power of 10
    view = (10 ** np.floor(np.log10(lo)) * 0.6, hi * 1.5)
    ax.set(xlim=view, ylim=view, aspect="equal")
    ax.set(xlabel="authors' simulator: predicted JCT (s)", ylabel="ours: predicted JCT (s)", title=title)
    ax.legend(fontsize=8, loc="upper left", frameon=False)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- prose helpers
def span(values, fmt: str = "+.3g", unit: str = "") -> str:
    """``"lo to hi"`` of the finite values (for prose), or ``"n/a"`` if there are none.

    >>> span([0.5, -1.25, float("nan")])
    '-1.25 to +0.5'
    >>> span([2.0, 2.0], ".1f", " %")
    '2.0 %'
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return "n/a"
    lo, hi = f"{v.min():{fmt}}{unit}", f"{v.max():{fmt}}{unit}"
    return lo if lo == hi else f"{lo} to {hi}"
