"""Where Nona's split pays: a map of the simulated gain of splitting a DAG's parallel branches.

The paper's claim (section IV-B): placing parts of a job's DAG on other servers, with some
probability, lowers the JCT "when low amounts of data are transmitted on the parallel
branches". The paper's five models barely have parallel branches once contracted, so this
module asks the question on models that do (``inception_v3``: eight Inception modules of 3-4
branches) over a grid of

* ``load``: the compute load of :func:`~schedlab.nona.workload.build_workload`;
* ``bandwidth_gbps``: the bottleneck link;
* ``byte_scale``: a multiplier of the inference classes' transfer sizes only (the branch data
  size; task times stay).

At every point (:func:`map_point`) it solves certified Nona (``method="global"``) under each
pricing of :data:`schedlab.nona.optimise.PRICINGS`, prices "keep every subgraph together"
(:func:`schedlab.nona.tables.together_option`) with the same model, and simulates both
placements on the SAME arrivals (seed ``i`` gives the same arrival times to every placement;
the gain of a seed is a paired difference). A row says how many subgraphs the tables split
or mix, the predicted and the simulated gain (mean, min and max over the seeds) and whether
the simulator confirms the sign of the predicted gain.

Why splitting can pay, and why it often cannot: a split branch runs in parallel on another
server, saving at most the compute of the branches it overlaps (0.7-11 ms per Inception
branch), but its input and output cross the link, costing the transfer time ``bytes / mu``
plus the link's queueing wait (PK). Splitting pays when the parallel compute saved exceeds the
link time added.

Examples
--------
>>> from schedlab.nona.workload import Cluster, build_workload, job_f
>>> cl = Cluster(servers=8, bandwidth_gbps=80)
>>> wl = build_workload(classes=[job_f()], load=0.2, cluster=cl, comm_load=0.0)
>>> rows = compare_placements(wl, cl, seeds=[0, 1], duration=20.0)
>>> [(r["pricing"], r["split_subgraphs"]) for r in rows]
[('paper', 1), ('critical_path', 1)]
>>> all(r["sim_gain_max"] < 0 and r["confirmed"] for r in rows)
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.nona import optimise, tables
from schedlab.nona.schedulers import TableScheduler
from schedlab.nona.sim import simulate
from schedlab.nona.workload import INFERENCE, Cluster, JobClass, build_workload

#: the columns of one row of the map (one point, one pricing)
COLUMNS = (
    "load",
    "bandwidth_gbps",
    "byte_scale",
    "pricing",
    "split_subgraphs",
    "mixed_subgraphs",
    "pred_nona_s",
    "pred_together_s",
    "pred_gain",
    "sim_nona_s",
    "sim_together_s",
    "sim_gain",
    "sim_gain_min",
    "sim_gain_max",
    "confirmed",
    "verdict",
    "pred_link_load",
    "seeds",
    "duration_s",
)


def check_grid(
    loads: Sequence[float], bandwidths_gbps: Sequence[float], byte_scales: Sequence[float]
) -> None:
    """Refuse an empty axis or a value outside its range, naming the axis.

    >>> check_grid([0.5], [10.0], [0.0])
    Traceback (most recent call last):
    ...
    ValueError: byte_scales must be positive finite numbers (multipliers of the transfer sizes), got [0.0]
    """
    axes = {
        "loads": (loads, lambda x: 0 < x < 1, "numbers in (0, 1) (compute load)"),
        "bandwidths_gbps": (bandwidths_gbps, lambda x: x > 0 and math.isfinite(x), "positive finite Gbit/s"),
        "byte_scales": (
            byte_scales,
            lambda x: x > 0 and math.isfinite(x),
            "positive finite numbers (multipliers of the transfer sizes)",
        ),
    }
    for name, (values, ok, what) in axes.items():
        values = list(values)
        if not values or not all(isinstance(v, (int, float)) and ok(v) for v in values):
            raise ValueError(f"{name} must be {what}, got {values}")


VERDICTS = ("confirmed", "refuted", "unresolved", "no split")


def verdict(pred_gain: float, seed_gains: Sequence[float], splits: bool) -> str:
    """The simulator's verdict on a predicted gain, seed by seed (paired gains, one per seed).

    ``confirmed``: every seed's gain has the predicted sign; ``refuted``: every seed's has the
    opposite sign; ``unresolved``: the seeds disagree (the difference is within the noise of the
    windows); ``no split``: the tables split nothing, both placements are the same job flow.

    >>> verdict(-0.1, [-0.2, -0.05], True), verdict(-0.1, [0.01, 0.02], True), verdict(-0.1, [-0.1, 0.1], True)
    ('confirmed', 'refuted', 'unresolved')
    >>> verdict(0.0, [0.0], False)
    'no split'
    """
    if not splits:
        return "no split"
    signs = {bool(g < 0) for g in seed_gains}
    if len(signs) > 1:
        return "unresolved"
    return "confirmed" if signs == {bool(pred_gain < 0)} else "refuted"


def inference_mean(classes: Sequence[JobClass], tau: Sequence[float]) -> float:
    """Rate-weighted mean of ``tau`` over the inference classes: the model's mean inference JCT.

    >>> from schedlab.nona.workload import job_f
    >>> inference_mean([job_f().with_rate(1.0), job_f().with_rate(3.0)], [1.0, 2.0])
    1.75
    """
    w = np.array([c.arrival_rate if c.kind == INFERENCE else 0.0 for c in classes])
    return float(w @ np.asarray(tau, dtype=float) / w.sum())


def together_tables(workload: Sequence[JobClass]) -> dict:
    """Tables that keep every subgraph of every inference class on one server."""
    return tables.option_tables(workload, lambda *x: [tables.together_option(*x)])


def simulated_means(
    workload: Sequence[JobClass], cluster: Cluster, doc: dict, *, seeds: Sequence[int], duration: float
) -> np.ndarray:
    """Mean inference JCT (s) of one run per seed with the placement ``doc``, in the order of ``seeds``
    (seed ``i`` gives the same arrivals to every placement, so gains can be paired per seed)."""
    out = []
    for seed in seeds:
        r = simulate(
            workload,
            cluster,
            TableScheduler(doc),
            duration=duration,
            warmup=0.1 * duration,
            rng=np.random.default_rng(seed),
        )
        inf = r.jobs[r.jobs.kind == INFERENCE]
        out.append(float(inf.jct.mean()))
    return np.array(out)


def compare_placements(
    workload: Sequence[JobClass],
    cluster: Cluster,
    *,
    seeds: Sequence[int],
    duration: float,
    pricings: Sequence[str] = optimise.PRICINGS,
    oversized: str = "keep_together",
    keep_tables: bool = False,
) -> list[dict]:
    """Nona (certified, per pricing) against keep-together at one workload: model and simulator.

    Returns one row per pricing with the keys of :data:`COLUMNS` except the grid coordinates
    (and ``tables``, Nona's JSON, when ``keep_tables``). Gains are ``nona / together - 1`` (negative:
    Nona is faster); ``sim_gain`` is the mean over the seeds of the paired per-seed gain.
    ``confirmed`` is True when the simulated mean gain has the predicted sign, ``None`` when the
    tables split nothing (the two placements are the same); ``verdict`` judges it seed by seed
    (:func:`verdict`).
    """
    together = together_tables(workload)
    sim_t = simulated_means(workload, cluster, together, seeds=seeds, duration=duration)
    rows = []
    for pricing in pricings:
        res = optimise.solve(workload, cluster, method="global", pricing=pricing, oversized=oversized)
        prob, doc = res.problem, optimise.to_json(res)
        pred_t = inference_mean(
            prob.classes, optimise.evaluate(prob, optimise.theta_from_tables(prob, together)).tau
        )
        pred_n = inference_mean(prob.classes, [res.tau[c.name] for c in prob.classes])
        counts = optimise.placement_counts(res)
        splits = counts["split_subgraphs"] > 0
        sim_n = simulated_means(workload, cluster, doc, seeds=seeds, duration=duration) if splits else sim_t
        gains = sim_n / sim_t - 1
        pred_gain = pred_n / pred_t - 1
        row = {
            "pricing": pricing,
            **counts,
            "pred_nona_s": pred_n,
            "pred_together_s": pred_t,
            "pred_gain": pred_gain,
            "sim_nona_s": float(sim_n.mean()),
            "sim_together_s": float(sim_t.mean()),
            "sim_gain": float(gains.mean()),
            "sim_gain_min": float(gains.min()),
            "sim_gain_max": float(gains.max()),
            "confirmed": (bool((pred_gain < 0) == (gains.mean() < 0)) if splits else None),
            "verdict": verdict(pred_gain, gains, splits),
            "pred_link_load": res.rho,
            "seeds": len(seeds),
            "duration_s": float(duration),
        }
        if keep_tables:
            row["tables"] = doc
        rows.append(row)
    return rows


def map_point(
    load: float,
    bandwidth_gbps: float,
    byte_scale: float,
    *,
    models: Sequence[str],
    servers: int,
    workload: Mapping[str, Any],
    seeds: Sequence[int],
    duration: float,
    pricings: Sequence[str] = optimise.PRICINGS,
    tables_dir: str | Path | None = None,
) -> list[dict]:
    """:func:`compare_placements` at one grid point of the ``models`` workload; ``workload`` holds
    :func:`~schedlab.nona.workload.build_workload`'s other arguments. With ``tables_dir``, the
    ``critical_path`` tables are written there as ``nona_bs<byte_scale>_load<load>_bw<Gbps>.json``
    (:func:`tables_name`), for the baselines' sweep."""
    cluster = Cluster(servers=int(servers), bandwidth_gbps=float(bandwidth_gbps))
    wl = build_workload(
        list(models), load=float(load), cluster=cluster, byte_scale=float(byte_scale), **workload
    )
    rows = compare_placements(
        wl, cluster, seeds=seeds, duration=duration, pricings=pricings, keep_tables=tables_dir is not None
    )
    for r in rows:
        doc = r.pop("tables", None)
        if doc is not None and r["pricing"] == "critical_path":
            from schedlab.io import atomic_write_json

            doc["load"] = float(load)
            name = tables_name(byte_scale).format(load=load, bandwidth_gbps=bandwidth_gbps)
            atomic_write_json(Path(tables_dir) / name, doc)
        r.update(load=float(load), bandwidth_gbps=float(bandwidth_gbps), byte_scale=float(byte_scale))
    return rows


def tables_name(byte_scale: float) -> str:
    """The file name pattern (``{load:g}``, ``{bandwidth_gbps:g}``) of the Nona tables at ``byte_scale``.

    >>> tables_name(0.1).format(load=0.5, bandwidth_gbps=25.0)
    'nona_bs0.1_load0.5_bw25.json'
    """
    return f"nona_bs{byte_scale:g}_" + "load{load:g}_bw{bandwidth_gbps:g}.json"


def gain_map(
    loads: Sequence[float],
    bandwidths_gbps: Sequence[float],
    byte_scales: Sequence[float],
    *,
    models: Sequence[str],
    servers: int,
    workload: Mapping[str, Any],
    seeds: Sequence[int],
    duration: float,
    tables_dir: str | Path | None = None,
    executor: Any = None,
    progress: bool = False,
) -> pd.DataFrame:
    """:func:`map_point` over the grid ``loads x bandwidths_gbps x byte_scales``: one row per point and
    pricing, columns :data:`COLUMNS`, in grid order (byte scale, bandwidth, load, pricing).

    ``executor``: see :func:`schedlab.parallel.executor` (points are independent and carry their seeds).
    """
    from schedlab import parallel

    check_grid(loads, bandwidths_gbps, byte_scales)
    points = [
        (float(l), float(b), float(s)) for s, b, l in itertools.product(byte_scales, bandwidths_gbps, loads)
    ]
    kw = {
        "models": tuple(models),
        "servers": int(servers),
        "workload": dict(workload),
        "seeds": tuple(seeds),
        "duration": float(duration),
        "tables_dir": tables_dir,
    }
    with parallel.executor(executor) as ex:
        parts = ex.map(_point_task, points, kw, desc="branches map", progress=progress)
    return pd.DataFrame([r for part in parts for r in part])[list(COLUMNS)]


def _point_task(point: tuple[float, float, float], kw: dict) -> list[dict]:
    return map_point(*point, **kw)


def baseline_points(rows: pd.DataFrame, n_split: int = 2) -> pd.DataFrame:
    """The points where the baselines run: the ``n_split`` points where critical-path Nona's
    simulated gain is largest (most negative) among those it splits, and the point with the
    lowest load, bandwidth and byte scale where it splits nothing (if any). Column ``why``.

    >>> rows = pd.DataFrame({"pricing": ["critical_path"] * 3, "load": [0.1, 0.5, 0.9],
    ...     "bandwidth_gbps": [10.0, 100.0, 100.0], "byte_scale": [1.0, 1.0, 1.0],
    ...     "split_subgraphs": [0, 5, 4], "sim_gain": [0.0, -0.07, -0.02]})
    >>> baseline_points(rows, n_split=1)[["load", "why"]].values.tolist()
    [[0.5, 'splits'], [0.1, 'no split']]
    """
    cp = rows[rows.pricing == "critical_path"]
    split = cp[cp.split_subgraphs > 0].nsmallest(n_split, "sim_gain").assign(why="splits")
    keep = cp[cp.split_subgraphs == 0].sort_values(["byte_scale", "bandwidth_gbps", "load"]).head(1)
    return pd.concat([split, keep.assign(why="no split")])[["load", "bandwidth_gbps", "byte_scale", "why"]]


def baseline_rows(
    points: pd.DataFrame, setup: Any, *, tables_dir: str | Path, executor: Any = None
) -> pd.DataFrame:
    """Every scheme of ``setup`` (an :class:`~schedlab.nona.experiments.FigureSweep` whose ``models``
    and ``workload`` are the map's) at ``points`` (:func:`baseline_points`), Nona with the tables
    :func:`map_point` wrote into ``tables_dir``. Adds ``byte_scale``, ``why`` and ``ratio`` (a scheme's
    mean inference JCT over Nona's at the same point and window; Decima runs a shorter window of its
    own, so its ratio is against Nona run again on that window, ``ratio_same_window``)."""
    from schedlab.nona import experiments

    out = []
    for (bs, why), pts in points.groupby(["byte_scale", "why"], sort=False):
        # the Expert's tables are named by load and bandwidth only: one folder per byte scale
        st = setup.with_changes(
            workload={**setup.workload, "byte_scale": float(bs)},
            tables_dir=Path(tables_dir) / f"bs{bs:g}",
            nona_tables=str(Path(tables_dir).resolve() / tables_name(bs)),
        )
        rows, _ = st.run(
            pts[["load", "bandwidth_gbps"]].to_dict("records"), executor=executor, progress=False
        )
        out.append(rows.assign(byte_scale=float(bs), why=why))
        short = [s for s in experiments.DECIMA_SCHEMES if s in st.schemes]
        if short and st.decima_duration:
            again = st.with_changes(schemes=("nona",), duration=st.decima_duration, decima_duration=None)
            nrows, _ = again.run(
                pts[["load", "bandwidth_gbps"]].to_dict("records"), executor=executor, progress=False
            )
            out.append(nrows.assign(scheme="nona_decima_window", byte_scale=float(bs), why=why))
    rows = pd.concat(out, ignore_index=True)
    key = ["byte_scale", "bandwidth_gbps", "load"]
    nona = rows[rows.scheme == "nona"].set_index(key).inference_mean_jct_s
    short = rows[rows.scheme == "nona_decima_window"].set_index(key).inference_mean_jct_s
    idx = pd.MultiIndex.from_frame(rows[key])
    rows["ratio"] = rows.inference_mean_jct_s.to_numpy() / nona.reindex(idx).to_numpy()
    rows["ratio_same_window"] = (
        rows.inference_mean_jct_s.to_numpy() / short.reindex(idx).to_numpy() if len(short) else float("nan")
    )
    return rows


def refuted(confirmed: Any) -> bool:
    """True only for a point whose sign the simulator refutes (``confirmed`` False; ``None``/NaN:
    nothing split, nothing to refute).

    >>> [refuted(v) for v in (True, False, None, float("nan"), np.False_)]
    [False, True, False, False, True]
    """
    if confirmed is None or (isinstance(confirmed, float) and math.isnan(confirmed)):
        return False
    return not bool(confirmed)


def summary(rows: pd.DataFrame) -> dict:
    """The map in numbers, per pricing: points, points split, the simulated gain's range over the
    points that split (mean over seeds; %), points refuted (the simulated mean gain has the opposite
    sign of the predicted one), points where the seeds disagree on the sign, and the seed-by-seed
    verdicts (:func:`verdict`: confirmed / refuted by every seed / unresolved). JSON-ready.

    >>> rows = pd.DataFrame({"pricing": ["paper", "paper"], "split_subgraphs": [0, 3],
    ...     "sim_gain": [0.0, -0.05], "sim_gain_min": [0.0, -0.07], "sim_gain_max": [0.0, 0.01],
    ...     "pred_gain": [0.0, -0.1], "confirmed": [None, True], "verdict": ["no split", "unresolved"]})
    >>> summary(rows)["paper"]["sim_gain_pct"], summary(rows)["paper"]["seeds_disagree"]
    ([-5.0, -5.0], 1)
    >>> summary(rows)["paper"]["verdicts"]
    {'confirmed': 0, 'refuted': 0, 'unresolved': 1}
    """
    out = {}
    for pricing, g in rows.groupby("pricing", sort=False):
        split = g[g.split_subgraphs > 0]
        rng = (
            [round(100 * float(split.sim_gain.min()), 2), round(100 * float(split.sim_gain.max()), 2)]
            if len(split)
            else None
        )
        pred = (
            [round(100 * float(split.pred_gain.min()), 2), round(100 * float(split.pred_gain.max()), 2)]
            if len(split)
            else None
        )
        out[str(pricing)] = {
            "points": int(len(g)),
            "split": int(len(split)),
            "sim_gain_pct": rng,
            "pred_gain_pct": pred,
            "refuted": int(sum(map(refuted, split.confirmed))),
            "seeds_disagree": int(((split.sim_gain_min < 0) & (split.sim_gain_max > 0)).sum()),
            "verdicts": {v: int((split.verdict == v).sum()) for v in VERDICTS[:3]},
        }
    return out


def plot_gain_map(rows: pd.DataFrame, *, title: str = "") -> Any:
    """Heatmaps of critical-path Nona's simulated gain (%) over load x bandwidth, one panel per byte
    scale. A hatched cell splits nothing (gain 0 by construction); ``x`` marks a cell where every
    seed refutes the sign of critical-path Nona's predicted gain, ``?`` one where the seeds disagree,
    ``P`` one where every seed refutes the ``paper`` pricing's choice. Each cell prints the mean gain and, below, its min..max over seeds."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    cp = rows[rows.pricing == "critical_path"]
    paper = rows[rows.pricing == "paper"].set_index(["byte_scale", "bandwidth_gbps", "load"])
    scales = sorted(cp.byte_scale.unique())
    lim = max(1.0, float(100 * cp.sim_gain.abs().max()))
    norm = TwoSlopeNorm(vmin=-lim, vcenter=0.0, vmax=lim)
    fig, axes = plt.subplots(
        1, len(scales), figsize=(4.6 * len(scales) + 1, 4.2), layout="constrained", squeeze=False
    )
    for ax, bs in zip(axes[0], scales):
        g = cp[cp.byte_scale == bs]
        loads, bws = sorted(g.load.unique()), sorted(g.bandwidth_gbps.unique())
        grid = g.pivot(index="load", columns="bandwidth_gbps", values="sim_gain").loc[loads, bws] * 100
        # blue: Nona faster than keep-together, red: slower
        im = ax.imshow(grid.to_numpy(), cmap="RdBu_r", norm=norm, origin="lower", aspect="auto")
        for _, r in g.iterrows():
            i, j = loads.index(r.load), bws.index(r.bandwidth_gbps)
            if r.split_subgraphs == 0:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", ec="0.6", lw=0))
                ax.text(j, i, "no split", ha="center", va="center", fontsize=8, color="0.3")
                continue
            # x: every seed refutes the predicted sign; ?: the seeds disagree; P: every seed refutes the paper pricing
            marks = {"refuted": "  x", "unresolved": "  ?"}.get(r.verdict, "") + (
                "  P" if paper.loc[(bs, r.bandwidth_gbps, r.load), "verdict"] == "refuted" else ""
            )
            ax.text(
                j,
                i,
                f"{100 * r.sim_gain:+.1f}%{marks}\n{100 * r.sim_gain_min:+.1f}..{100 * r.sim_gain_max:+.1f}"
                f"\n{int(r.split_subgraphs)} split",
                ha="center",
                va="center",
                fontsize=7.5,
                color="white" if abs(100 * r.sim_gain) > 0.6 * lim else "black",
            )
        ax.set_xticks(range(len(bws)), [f"{b:g}" for b in bws])
        ax.set_yticks(range(len(loads)), [f"{x:g}" for x in loads])
        ax.set_xlabel("link bandwidth (Gbit/s)")
        ax.set_ylabel("compute load")
        ax.set_title(f"branch data x{bs:g}")
    fig.colorbar(im, ax=axes[0].tolist(), label="simulated gain vs keep-together (%, < 0: Nona faster)")
    fig.suptitle(
        title
        or "Where Nona's split pays (x: sign refuted by every seed, ?: seeds disagree, "
        "P: paper pricing refuted)"
    )
    return fig
