"""Figures a reader of the papers recognises: every figure a stage writes is a PNG (150 dpi) and a PDF."""

from __future__ import annotations

import re

import matplotlib
import pytest

from schedlab import notebooks

matplotlib.use("Agg")


def test_every_png_figure_has_its_pdf(pipeline_outputs):
    outs = pipeline_outputs
    pngs = sorted(o for o in outs if o.startswith("figures/") and o.endswith(".png"))
    assert pngs
    assert [p for p in pngs if p[:-4] + ".pdf" not in outs] == []


@pytest.mark.parametrize("path", notebooks.stage_notebooks(), ids=lambda p: p.stem)
def test_stage_notebooks_save_figures_through_outputs(path):
    """``out.savefig`` writes both formats at >= 150 dpi; a direct ``savefig`` call would bypass it."""
    src = path.with_suffix(".py").read_text()
    assert not re.search(r"\bio\.savefig\(|\.savefig\([^)]*dpi\s*=\s*1[0-4]\d\b", src), path.name


def test_outputs_savefig_writes_png_and_pdf(tmp_path):
    import matplotlib.pyplot as plt
    from PIL import Image

    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [0, 1])
    written = notebooks.Outputs(tmp_path, "nona/x").savefig(fig, "demo")
    assert [p.name for p in written] == ["demo.png", "demo.pdf"]
    assert written[1].read_bytes().startswith(b"%PDF")
    dpi = Image.open(written[0]).info["dpi"]
    assert round(dpi[0]) >= 150
    with pytest.raises(ValueError, match="150 dpi"):
        notebooks.Outputs(tmp_path, "nona/x").savefig(fig, "low", dpi=100)


# --------------------------------------------------------------------------- read at a glance
# Two checks every figure-building function must pass, on small synthetic inputs: a log (or
# symlog) axis shows everything plotted on it (no bar, point or value label outside the view,
# which is how a collapsed axis shows: every bar runs off the top), and no two pieces of text
# (tick labels, axis labels, titles, legends, annotations) overlap once drawn.

_TOL = 1e-6  # relative slack on a limit (floating point of autoscaling)


def _data_dims(transform, ax) -> tuple[bool, bool]:
    """Which of x, y an artist's ``transform`` puts in data coordinates (axhline: y only)."""
    return transform.contains_branch_seperately(ax.transData)


def _outside(values, lo: float, hi: float, scale: str) -> bool:
    import numpy as np

    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    if scale == "log":
        v = v[v > 0]  # a log axis cannot show <= 0 (bars start there): not a clipping
    if v.size == 0:
        return False
    slack = _TOL * max(abs(lo), abs(hi), 1e-300)
    return bool(v.min() < lo - slack or v.max() > hi + slack)


def _name(ax) -> str:
    return ax.get_title() or ax.get_title(loc="left") or ax.get_ylabel() or "<untitled axes>"


def log_axis_problems(fig) -> list[str]:
    """Everything drawn on a log/symlog axis must lie inside its view: lines and markers, bar
    tops (a bar's base may sit at 0, below a log axis), scatter points, annotated points."""
    import numpy as np
    from matplotlib.patches import Rectangle
    from matplotlib.text import Annotation

    problems = []
    for ax in fig.axes:
        for dim, scale, lim in (("x", ax.get_xscale(), ax.get_xlim()), ("y", ax.get_yscale(), ax.get_ylim())):
            if scale not in ("log", "symlog"):
                continue
            lo, hi = sorted(lim)
            i = 0 if dim == "x" else 1
            found = []
            if scale == "log" and lo <= 0:  # log(0) = -inf: every value collapses to the top
                found.append(f"everything (the view starts at {lo:g})")
            for line in ax.lines:
                if line.get_visible() and _data_dims(line.get_transform(), ax)[i]:
                    if _outside(line.get_xdata() if dim == "x" else line.get_ydata(), lo, hi, scale):
                        found.append(f"line {line.get_label()!r}")
            for p in ax.patches:
                if isinstance(p, Rectangle) and p.get_visible() and _data_dims(p.get_transform(), ax)[i]:
                    start = p.get_x() if dim == "x" else p.get_y()
                    size = p.get_width() if dim == "x" else p.get_height()
                    tip = start + size if size >= 0 else start  # the far end of a bar from its base
                    if np.isfinite(tip) and _outside([tip], lo, hi, scale):
                        found.append(f"bar ending at {tip:g}")
            for c in ax.collections:
                if c.get_visible() and _data_dims(c.get_offset_transform(), ax)[i]:
                    off = np.asarray(c.get_offsets())
                    if off.size and _outside(off[:, i], lo, hi, scale):
                        found.append(f"points of {c.get_label()!r}")
            for t in ax.texts:
                if isinstance(t, Annotation) and t.xycoords == "data" and t.get_text().strip():
                    if _outside([t.xy[i]], lo, hi, scale):
                        found.append(f"label {t.get_text()!r} at {t.xy[i]:g}")
            if found:
                problems.append(
                    f"{_name(ax)!r}: {dim} {scale} view [{lo:g}, {hi:g}] leaves out " + "; ".join(found)
                )
    return problems


def _corners(artist, renderer):
    """The four corners (pixels) of a drawn text as it is rotated, or of a legend's box: the
    axis-aligned extent of a text written at 20 degrees is far larger than the text."""
    import numpy as np
    from matplotlib.text import Text

    box = artist.get_window_extent(renderer)
    angle = artist.get_rotation() if isinstance(artist, Text) else 0.0
    if angle % 180 == 0:
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    artist.set_rotation(0)  # the unrotated size; rotation keeps the box's centre
    flat = artist.get_window_extent(renderer)
    artist.set_rotation(angle)
    t = np.deg2rad(angle)
    half = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [flat.width / 2, flat.height / 2]
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    return half @ rot.T + [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]


def _text_boxes(fig, renderer) -> list[tuple[str, object]]:
    """(description, corners) of every visible, non-empty piece of text of ``fig``."""
    boxes = []

    def add(kind, artist, where=""):
        if artist is not None and artist.get_visible() and artist.get_text().strip():
            boxes.append((f"{kind} {artist.get_text()!r}{where}", _corners(artist, renderer)))

    for ax in fig.axes:
        if not ax.get_visible():
            continue
        where = f" in {_name(ax)!r}"
        if ax.axison:
            for axis in (ax.xaxis, ax.yaxis):
                lo, hi = sorted(axis.get_view_interval())
                for minor in (False, True):
                    locs = axis.get_minorticklocs() if minor else axis.get_majorticklocs()
                    ticks = axis.get_minor_ticks(len(locs)) if minor else axis.get_major_ticks(len(locs))
                    for loc, tick in zip(locs, ticks):
                        if lo - _TOL * abs(hi - lo) <= loc <= hi + _TOL * abs(hi - lo):
                            for lab in (tick.label1, tick.label2):
                                add("tick label", lab, where)
                add("axis label", axis.label, where)
                add("offset", axis.get_offset_text(), where)
        for loc in ("center", "left", "right"):
            if ax.get_title(loc=loc):
                add(
                    "title",
                    {"center": ax.title, "left": ax._left_title, "right": ax._right_title}[loc],
                    where,
                )
        for t in ax.texts:
            add("text", t, where)
        if ax.get_legend() is not None and ax.get_legend().get_visible():
            boxes.append((f"legend{where}", _corners(ax.get_legend(), renderer)))
    for i, leg in enumerate(fig.legends):
        boxes.append((f"figure legend {i}", _corners(leg, renderer)))
    sup = {attr.strip("_"): getattr(fig, attr, None) for attr in ("_suptitle", "_supxlabel", "_supylabel")}
    for t in fig.texts:
        if not any(t is s for s in sup.values()):
            add("figure text", t)
    for kind, t in sup.items():
        add(kind, t)
    return boxes


def _separated(a, b, gap: float) -> bool:
    """Two convex quadrilaterals at least ``gap`` pixels apart along some edge normal
    (separating-axis test)."""
    import numpy as np

    for poly in (a, b):
        edges = np.roll(poly, -1, axis=0) - poly
        for n in np.stack([-edges[:, 1], edges[:, 0]], axis=1):
            norm = np.hypot(*n)
            if norm == 0:
                continue
            pa, pb = a @ n / norm, b @ n / norm
            if pa.min() >= pb.max() + gap or pb.min() >= pa.max() + gap:
                return True
    return False


def overlap_problems(fig, min_gap_px: float = 1.0) -> list[str]:
    """Pairs of texts (tick labels, axis labels, titles, legends, annotations) that are drawn
    less than ``min_gap_px`` pixels apart (at the figure's dpi; rotated texts as rotated
    rectangles): labels that touch read as one ("10111213")."""
    import numpy as np

    fig.canvas.draw()
    boxes = _text_boxes(fig, fig.canvas.get_renderer())
    if len(boxes) < 2:
        return []
    lo = np.array([c.min(axis=0) for _, c in boxes]) - min_gap_px
    hi = np.array([c.max(axis=0) for _, c in boxes])
    # candidates: envelopes closer than the gap; then the exact test on the rotated shapes
    near = (
        (lo[:, None, 0] < hi[None, :, 0])
        & (lo[None, :, 0] < hi[:, None, 0])
        & (lo[:, None, 1] < hi[None, :, 1])
        & (lo[None, :, 1] < hi[:, None, 1])
    )
    i, j = np.nonzero(np.triu(near, k=1))
    return [
        f"{boxes[a][0]} overlaps {boxes[b][0]}"
        for a, b in zip(i, j)
        if not _separated(boxes[a][1], boxes[b][1], min_gap_px)
    ]


def figure_problems(fig) -> list[str]:
    """Both checks; ``[]`` for a figure that reads at a glance."""
    return log_axis_problems(fig) + overlap_problems(fig)


# ----- the checks themselves: they flag the faults they are meant to flag, and pass a clean figure
def _plt():
    import matplotlib.pyplot as plt

    return plt


def test_checks_pass_a_clean_figure():
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    ax.bar([0, 1], [15, 145])
    ax.set_yscale("log")
    ax.set(xlabel="scheme", ylabel="gain (x)", title="clean")
    assert figure_problems(fig) == []
    plt.close(fig)


def test_checks_flag_the_old_fig5_gain_panel():
    """The gain panel as drawn before: limits set while the axis was linear (bottom 0), then
    switched to log. Every bar (15x and 145x alike) fills the panel and the decade labels sit
    on top of each other."""
    from schedlab.nona.plotting import readable_log_axis

    plt = _plt()
    fig, ax = plt.subplots(figsize=(4, 3))
    values = [303.0, 15.0, 963.0, 145.0]
    ax.bar(range(4), values)
    ax.set_ylim(top=max(values) * 3)  # the old order: a linear limit first ...
    readable_log_axis(ax, "y")  # ... then the log scale
    problems = figure_problems(fig)
    assert any("view starts at 0" in p for p in problems), problems
    assert any(p.startswith("tick label") for p in problems), problems
    plt.close(fig)


def test_checks_flag_bars_running_off_a_log_axis_and_a_label_left_out():
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0, 1], [15, 145])
    ax.annotate("145x", (1, 145))
    ax.set_yscale("log")
    ax.set_ylim(1, 20)
    problems = log_axis_problems(fig)
    assert len(problems) == 1 and "bar ending at 145" in problems[0] and "'145x'" in problems[0], problems
    plt.close(fig)


def test_checks_flag_axis_labels_running_into_each_other():
    """Fig. 3 as drawn before: three panels with the long load label unwrapped."""
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(15.6, 4.6), layout="constrained")
    for ax in axes:
        ax.plot([0.1, 0.9], [1, 2])
        ax.set_xlabel("compute load (sum of arrival rate x service time: busy servers, cluster-wide)")
    problems = overlap_problems(fig)
    assert len(problems) == 2 and all(p.startswith("axis label") for p in problems), problems
    plt.close(fig)


def test_checks_flag_a_legend_over_the_x_label():
    """PCS Fig. 10 as drawn before: a legend anchored at a fixed offset under the axes."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax in axes:
        for name in ("PCS-JCT (ours)", "FIFO (ours)", "FIFO: paper"):  # a taller legend shrinks the axes
            ax.plot([0, 40], [1, 2], label=name)
        ax.set_xlabel("job-size estimation error p (%)")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0.0, -0.17), frameon=False)
    fig.suptitle("PCS Fig. 10a/b")
    fig.tight_layout()
    problems = overlap_problems(fig)
    assert len(problems) == 2 and all("axis label" in p and "legend" in p for p in problems), problems
    plt.close(fig)


def test_checks_tell_rotated_labels_apart_from_overlapping_ones():
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    names = ["minmax_scaler", "robust_scaler", "standard_scaler", "yeo-johnson"]
    ax.bar(range(4), [1, 2, 3, 4])
    ax.set_xticks(range(4), names, rotation=20)  # envelopes overlap, the texts do not
    assert overlap_problems(fig) == []
    ax.set_xticks(range(4), names, rotation=0, fontsize=16)  # now they do
    assert overlap_problems(fig)
    plt.close(fig)


# ----- every figure-building function, on small synthetic inputs
def _nona_sweep(x: str, xs):
    import numpy as np
    import pandas as pd

    rows = []
    factor = {
        "nona": 1,
        "nona_star": 1.05,
        "expert": 1.1,
        "spark_fair": 15,
        "opportunistic": 145,
        "random": 1500,
        "decima": 40,
        "decima_retrained": 3,
    }
    for i, v in enumerate(xs):
        for s, f in factor.items():
            base = 0.1 * (1 + i) ** 2
            rows.append(
                {
                    x: v,
                    "scheme": s,
                    "status": "ok",
                    "mean_jct_s": base * f,
                    "inference_mean_jct_s": base * f * 1.1,
                }
            )
    rows.append(
        {
            x: xs[0],
            "scheme": "decima",
            "status": "failed",
            "mean_jct_s": np.nan,
            "inference_mean_jct_s": np.nan,
        }
    )
    return pd.DataFrame(rows)


def _nona_jobs(lo: float, hi: float):
    import numpy as np
    import pandas as pd

    classes = ["gpt2", "alexnet", "background_comm"]
    jobs = {}
    for k, s in enumerate(["nona", "expert", "spark_fair", "random"]):
        jct = np.geomspace(lo * (1 + k), hi, 40)
        jobs[s] = pd.DataFrame({"job_class": np.repeat(classes, 40)[:120], "jct": np.tile(jct, 3)})
    return jobs, classes


def _nona_figures():
    import pandas as pd

    from schedlab.nona import plotting as P

    schemes = list(P.SCHEME_STYLE)
    paper_high = {"spark_fair": 56, "opportunistic": 180, "random": 202, "decima": 350}
    paper_low = {"spark_fair": 30, "opportunistic": 30, "random": 70, "decima": 140}
    label = P.load_label({"load_basis": "cluster"})
    jobs, classes = _nona_jobs(0.045, 4.0)  # just under two decades: 1-2-5 ticks
    wide, _ = _nona_jobs(0.001, 5000.0)
    paper5 = {"spark_fair": 57, "opportunistic": 15, "random": 89, "decima": 58}
    err = pd.DataFrame(
        {
            "job_class": ["gpt2"] * 3 + ["vgg16"] * 3,
            "load": [0.1, 0.5, 0.9] * 2,
            "simulated_jct_s": [0.005, 0.006, 0.008, 0.2, 0.25, 0.4],
            "predicted_jct_s": [0.005, 0.005, 0.006, 0.2, 0.24, 0.45],
        }
    )
    err["relative_error"] = err.predicted_jct_s / err.simulated_jct_s - 1
    sweep = pd.DataFrame(
        {"load": [0.1, 0.5, 0.9], "p_distribute": [1.0, 0.6, 0.0], "allocation 1": [0, 0.4, 1.0]}
    )
    other = pd.DataFrame(
        {"background_mb": [2, 2, 200, 200], "load": [0.1, 0.9, 0.1, 0.9], "p_distribute": [1, 0.2, 0.9, 0]}
    )
    return {
        "nona.fig3": lambda: P.plot_sweep(
            _nona_sweep("load", [0.1, 0.3, 0.5, 0.7, 0.9]),
            "load",
            schemes,
            xlabel=label,
            title="Fig. 3",
            paper_high=paper_high,
            paper_low=paper_low,
        ),
        "nona.fig4": lambda: P.plot_sweep(
            _nona_sweep("bandwidth_gbps", [2.5, 5, 10, 20, 40]),
            "bandwidth_gbps",
            schemes,
            xlabel="link bandwidth (Gbps, log scale)",
            log_x=True,
            title="Fig. 4",
            paper_high=paper_high,
        ),
        "nona.fig5": lambda: P.plot_cdfs(
            jobs,
            schemes,
            classes,
            title="Fig. 5",
            paper_gains=paper5,
            gains={"spark_fair": 15, "opportunistic": 145, "random": 1667.4, "decima": 536},
        ),
        "nona.fig5_wide_and_below_one": lambda: P.plot_cdfs(
            wide,
            schemes,
            classes,
            title="Fig. 5",
            paper_gains=paper5,
            gains={"spark_fair": 0.752, "opportunistic": 1667.4, "random": 3312, "decima": float("nan")},
        ),
        "nona.model_error": lambda: P.plot_model_error(err, title="model error"),
        "nona.table1": lambda: P.plot_job_f(
            sweep,
            other,
            {"Low": 0.8, "Medium": 0.5, "High": 0.2},
            {"Low": 0.2, "Medium": 0.5, "High": 0.8},
            title="job f",
        ),
    }


def _pcs_figures():
    import numpy as np
    import pandas as pd

    from schedlab.pcs import plots as P

    rng = np.random.default_rng(3)
    pols = list(P.FIG7_POLICIES)
    f7 = pd.DataFrame(
        [
            {
                "trace": t,
                "policy": p,
                "norm_avg_jct": 1 + 10 * k * (t == "0e4a51"),
                "avg_pred_error": 0.0 if p == "FIFO" else 3.0 * (k + 1),
                "p99_pred_error": 0.0 if p == "FIFO" else 40.0 * (k + 1),
            }
            for t in ("0e4a51", "2869ce")
            for k, p in enumerate(pols)
        ]
    )
    f8 = pd.DataFrame(
        {
            "policy": ["AFS", "Tiresias", "Themis", "FIFO", "PCS-JCT"],
            "avg_pred_error": [12.2, 10.9, 15.9, 0.0, 5.9],
            "p99_pred_error": [328.8, 343.2, 103.7, 0.0, 79.3],
            "norm_avg_jct": [1.06, 1.05, 1.40, 3.17, 1.20],
        }
    )
    paper8 = {
        f"fig8a.simulated.{p}.{c}": v
        for p, a, q in [("AFS", 12.2, 328.8), ("Themis", 15.9, 103.7)]
        for c, v in (("avg_pred_error", a), ("p99_pred_error", q))
    }
    front = pd.DataFrame(
        {"norm_avg_jct": np.linspace(1.1, 1.4, 12), "pred_err_avg": np.geomspace(40, 0.01, 12)}
    )
    base = pd.DataFrame({"policy": ["FIFO", "AFS"], "norm_avg_jct": [1.4, 1.0], "pred_err_avg": [0.0, 30.0]})
    auth = pd.DataFrame({"avg_jct": np.linspace(100, 550, 10), "avg_pred_error": np.geomspace(10, 0.01, 10)})
    f10 = pd.DataFrame(
        [
            {
                "p_error": e,
                "policy": p,
                "avg_pred_error": e / 4 + (5 if p == "PCS-JCT" else 0),
                "jct_vs_afs": 1.24,
            }
            for e in (0, 5, 10, 20, 40)
            for p in ("PCS-JCT", "FIFO")
        ]
    )
    curves = {"FIFO": {0: 0.0, 40: 11.3}, "PCS-JCT": {0: 1.7, 40: 19.6}}
    ft = pd.DataFrame({"jct_avg": np.linspace(93000, 103000, 20), "pred_err_avg": np.geomspace(6, 1, 20)})
    moved = pd.DataFrame({"jct_avg_at_test": [94000, 116500], "pred_err_avg_at_test": [5.0, 0.0]})
    tir = pd.DataFrame(
        {
            "service": np.geomspace(30, 1e4, 200),
            "pred_error": np.r_[np.zeros(150), np.geomspace(0.1, 100, 50)],
        }
    )
    theirs = pd.DataFrame({"submit_time": np.zeros(50), "estimated_end_time": np.geomspace(20, 4e6, 50)})
    f9a = pd.DataFrame(
        {"jobs": [512, 512], "gpus": [64, 256], "cpu_s": [30.0, 60.0], "cpu_s_std": [1.0, np.nan]}
    )
    f9b = pd.DataFrame(
        {
            "jobs": [512],
            "gpus": [64],
            "wall_s": [600.0],
            "projected_wall_idle_s": [300.0],
            "evaluations": [256],
        }
    )
    paper9 = {
        k: {
            "gpus": [64, 256],
            "512": {"values": [1.0, 3.0], "stds": [0.5, 4.0]},
            "1024": {"values": [2.0, 5.0], "stds": [1.0, 1.0]},
        }
        for k in ("a", "b")
    }
    f9c = pd.DataFrame(
        {"space": ["heuristic"] * 2 + ["raw"] * 2, "budget": [64, 256] * 2, "share_pct": [80, 91, 15, 95]}
    )
    paper9c = {
        "labels": [128, 256, 512, 1024],
        "heuristics": [30, 60, 70, 95],
        "without_heuristics": [20, 46, 47, 90],
    }
    cdf = {p: rng.exponential(30, 100) * (p != "FIFO") for p in pols}
    return {
        "pcs.fig1b": lambda: P.fig1b(
            pd.DataFrame(
                {
                    "policy": ["FIFO", "Tiresias", "Themis"],
                    "mean_jct": [15.75, 11.25, 13.5],
                    "mean_pred_error": [0.0, 45.6, 45.3],
                }
            ),
            {"fig1.themis.mean_pred_error": 24},
        ),
        "pcs.fig7": lambda: P.fig7(
            f7, {"fig7.b436b2.AFS.avg_pred_error_pct": 80.0, "fig7.0e4a51.FIFO.norm_avg_jct": 9.0}
        ),
        "pcs.fig8a": lambda: P.fig8a(f8, paper8),
        "pcs.fig8b": lambda: P.fig8b(
            f8, {"fig8b.simulated.AFS.norm_avg_jct": 1.06, "fig8b.simulated.AFS.p99_pred_error": 328.8}
        ),
        "pcs.fig3_same_jobs": lambda: P.fig3(
            front,
            base,
            auth,
            err_col="pred_err_avg",
            trace="0e4a51",
            jobs=300,
            evaluations=280,
            authors_jobs=300,
            authors_evaluations=370,
            same_jobs=True,
            best_avg_jct=100.0,
        ),
        "pcs.fig3_other_jobs": lambda: P.fig3(
            front,
            base,
            auth,
            err_col="pred_err_avg",
            trace="0e4a51",
            jobs=300,
            evaluations=280,
            authors_jobs=2001,
            authors_evaluations=370,
            same_jobs=False,
            best_avg_jct=100.0,
        ),
        "pcs.fig9ab": lambda: P.fig9ab(f9a, f9b, paper9, 2),
        "pcs.fig9c": lambda: P.fig9c(f9c, paper9c),
        "pcs.fig10": lambda: P.fig10(f10, 1.05, curves),
        "pcs.fig10c": lambda: P.fig10c(
            ft,
            moved,
            ["jct_avg", "pred_err_avg"],
            train_load=0.6,
            test_load=0.8,
            workload="themis1",
            num_apps=1000,
            gpus=64,
        ),
        "pcs.fig11": lambda: P.fig11(tir, pd.Series(rng.normal(80, 25, 500).clip(5, None))),
        "pcs.testbed": lambda: P.fig4_fig6a_cdfs(cdf, {p: v / 100 for p, v in cdf.items()}),
        "pcs.agreement": lambda: P.prediction_agreement(theirs, theirs, "PCS-JCT"),
    }


def _polaris_figures():
    import numpy as np
    import pandas as pd

    from schedlab.polaris import plots as P
    from schedlab.polaris.schema import FEATURES

    rng = np.random.default_rng(5)
    grid = pd.DataFrame(
        [
            {"transform_function": t, "metric": m, "min_cluster_size": c, "scores_v1": rng.uniform(0.3, 0.7)}
            for t in ("minmax_scaler", "robust_scaler", "standard_scaler", "yeo-johnson")
            for m in ("euclidean", "manhattan")
            for c in (50, 100, 200, 300, 400, 600, 1000)
        ]
    )
    profiles = np.repeat(np.arange(-1, 26), 12)
    df = pd.DataFrame(
        {
            "profile": profiles,
            "cpu_usage": rng.gamma(2.0, 50.0, profiles.size),
            "write": rng.lognormal(14, 3, profiles.size),
            "user": rng.choice([f"{k:012x}" for k in range(40)], profiles.size),
        }
    )
    # every feature heavy-tailed (symlog panels), medians from 20 to 8,000
    heavy = pd.DataFrame(
        {f: rng.lognormal(3 + 3 * (i % 3), 1 + (i % 4), profiles.size) for i, f in enumerate(FEATURES)}
    )
    heavy["profile"] = profiles
    shap = pd.DataFrame(
        rng.exponential(1.0, (30, 8)), index=[f"job_name_{k:024x}" for k in range(30)], columns=range(8)
    )
    sil = pd.DataFrame(
        {
            "profile": list(range(26)) + [-1],
            "silhouette": np.r_[rng.uniform(0.3, 1, 26), -0.55],
            "share_negative": np.r_[np.zeros(26), 1.0],
        }
    )
    err = rng.lognormal(-0.5, 2.0, profiles.size)
    pts = P.fig5_paper_points(
        {"fig5.share_le_5pct": 0.8, "fig5.share_le_20pct": 0.9, "fig5.share_le_500pct": 0.8}
    )
    return {
        "polaris.grid": lambda: P.score_vs_parameters(
            grid, label="SYNTHETIC", reference={"authors' best": 0.718}
        ),
        "polaris.fig4_cpu": lambda: P.feature_boxplots(df, "cpu_usage", label="SYNTHETIC"),
        "polaris.fig4_write": lambda: P.feature_boxplots(df, "write", label="SYNTHETIC"),
        "polaris.fig4_all": lambda: P.feature_boxplots_grid(heavy, list(FEATURES), label="SYNTHETIC"),
        "polaris.heatmap": lambda: P.metadata_heatmap(df, "user", top=15, label="SYNTHETIC"),
        "polaris.shap": lambda: P.shap_bar(shap, label="SYNTHETIC"),
        "polaris.silhouettes": lambda: P.profile_silhouettes(sil, label="SYNTHETIC", overall=0.62),
        "polaris.fig5": lambda: P.figure5(err, profiles, label="SYNTHETIC", paper=pts),
    }


_FIGURES = {**_nona_figures(), **_pcs_figures(), **_polaris_figures()}


@pytest.mark.parametrize("name", sorted(_FIGURES))
def test_figure_reads_at_a_glance(name):
    """No log axis leaves out what it plots, and no two texts touch, for every figure builder."""
    fig = _FIGURES[name]()
    try:
        assert figure_problems(fig) == []
    finally:
        _plt().close(fig)


def test_fig8a_draws_ours_and_the_papers_values():
    """Fig. 8a: one avg and one p99 bar per policy at our values, the paper's as ticks."""
    import numpy as np
    import pandas as pd

    from schedlab.pcs import plots as P

    t = pd.DataFrame(
        {
            "policy": ["AFS", "Tiresias", "Themis", "PCS-JCT"],
            "avg_pred_error": [12.2, 10.9, 15.9, 5.9],
            "p99_pred_error": [328.8, 343.2, 103.7, 79.3],
        }
    )
    paper = {"fig8a.simulated.PCS-JCT.avg_pred_error": 6.29, "fig8a.simulated.PCS-JCT.p99_pred_error": 111.27}
    fig = P.fig8a(t, paper)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == [12.2, 10.9, 15.9, 5.9, 328.8, 343.2, 103.7, 79.3]
    ticks = [ln for ln in ax.lines if ln.get_marker() == "_"]
    ys = np.concatenate([ln.get_ydata() for ln in ticks]).astype(float)
    assert sorted(ys[np.isfinite(ys)].tolist()) == [6.29, 111.27]
    _plt().close(fig)
    with pytest.raises(ValueError, match="p99_pred_error"):
        P.fig8a(t.drop(columns="p99_pred_error"), paper)
