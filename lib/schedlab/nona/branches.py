"""Where Nona's split pays: a map of the simulated gain of splitting a DAG's parallel branches.

The paper's claim (section IV-B): placing parts of a job's DAG on other servers, with some
probability, lowers the JCT "when low amounts of data are transmitted on the parallel
branches". The paper's five models barely have parallel branches once contracted, so this
module asks the question on models that do (``inception_v3``: eight Inception modules of 3-4
branches) over a grid of

* ``load``: the compute load of :func:`~schedlab.nona.workload.build_workload`;
* ``bandwidth_gbps``: the bottleneck link;
* ``byte_scale``: a multiplier of the inference classes' transfer sizes only (the branch data
  size; task times stay);
* ``comm_load`` (optional axis): the background link load, whose transfers are sized by the
  100:1 ratio of section IV-A.

At every point (:func:`map_point`) it solves certified Nona (``method="global"``) under each
pricing of :data:`MAP_PRICINGS`, prices "keep every subgraph together"
(:func:`schedlab.nona.tables.together_option`) with the same model, and simulates both
placements on the SAME arrivals (seed ``i`` gives the same arrival times to every placement;
the gain of a seed is a paired difference). A row says how many subgraphs the tables split
or mix, the predicted and the simulated gain (mean, 95% confidence interval, min and max over
the seeds) and the simulator's verdict (:func:`verdict`: the interval on the predicted side of 0,
on the other side, or across it; an unresolved point runs ``extra_seeds`` once more).

Against the figures' baselines (:func:`baseline_rows`), :func:`wins` says where Nona splits, gains
over keep-together and is faster than every baseline: the region the paper's claim needs.

Why splitting can pay, and why it often cannot: a split branch runs in parallel on another
server, saving at most the compute of the branches it overlaps (0.7-11 ms per Inception
branch), but its input and output cross the link, costing the transfer time ``bytes / mu``
plus the link's queueing wait (PK). Splitting pays when the parallel compute saved exceeds the
link time added. With background transfers at 1/100 of the inference rate, each one is large
(``comm_load / lambda_bg`` seconds of link time), so the mean wait grows like
``comm_load**2 / ((1 - rho) lambda_bg)`` whatever the bandwidth: a moderate background link
load rules splitting out at light compute loads (small ``lambda_bg``) before it does at heavy ones.

Examples
--------
>>> from schedlab.nona.workload import Cluster, build_workload, job_f
>>> cl = Cluster(servers=8, bandwidth_gbps=80)
>>> wl = build_workload(classes=[job_f()], load=0.2, cluster=cl, comm_load=0.0)
>>> rows = compare_placements(wl, cl, seeds=[0, 1], duration=20.0)
>>> [r["verdict"] for r in rows]
['confirmed', 'confirmed']
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
    "comm_load",
    "pricing",
    "split_subgraphs",
    "mixed_subgraphs",
    "pred_nona_s",
    "pred_together_s",
    "pred_gain",
    "sim_nona_s",
    "sim_together_s",
    "sim_gain",
    "sim_gain_lo",
    "sim_gain_hi",
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


#: the pricings the map compares by default: the paper's literal one and the dependency-aware default
MAP_PRICINGS = ("paper", "critical_path")

VERDICTS = ("confirmed", "refuted", "unresolved", "no split")

#: confidence level of the paired-gain interval behind every verdict
CI_LEVEL = 0.95


def paired_ci(gains: Sequence[float], level: float = CI_LEVEL) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of paired per-seed gains.

    Each seed runs both placements on the same arrivals, so its gain is one paired difference;
    the seeds are independent, so ``mean +- t_{(1+level)/2, n-1} * sd / sqrt(n)`` is the interval
    of the mean gain. One seed has no spread to estimate: the interval is ``(-inf, inf)``.

    Parameters
    ----------
    gains : per-seed gains (``nona / together - 1``), at least one, all finite.
    level : confidence level in (0, 1).

    Returns
    -------
    tuple ``(mean, low, high)``.

    Examples
    --------
    >>> m, lo, hi = paired_ci([-0.10, -0.12, -0.08, -0.10])
    >>> round(m, 3), round(lo, 4), round(hi, 4)
    (-0.1, -0.126, -0.074)
    >>> paired_ci([0.2])
    (0.2, -inf, inf)
    >>> paired_ci([0.01, 0.01, 0.01])
    (0.01, 0.01, 0.01)
    """
    from scipy.stats import t

    g = np.asarray(gains, dtype=float)
    if g.ndim != 1 or len(g) == 0 or not np.isfinite(g).all():
        raise ValueError(f"gains must be a non-empty 1-D sequence of finite numbers, got {list(np.ravel(g))}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1) (a confidence level), got {level!r}")
    mean = float(g.mean())
    if len(g) == 1:
        return mean, -math.inf, math.inf
    half = float(t.ppf((1 + level) / 2, len(g) - 1) * g.std(ddof=1) / math.sqrt(len(g)))
    return mean, mean - half, mean + half


def verdict(pred_gain: float, seed_gains: Sequence[float], splits: bool, level: float = CI_LEVEL) -> str:
    """The simulator's verdict on a predicted gain, from the paired per-seed gains.

    ``confirmed``: the ``level`` confidence interval of the mean paired gain (:func:`paired_ci`)
    lies entirely on the predicted side of 0 (below 0 when Nona is predicted faster, above 0
    otherwise); ``refuted``: it lies entirely on the other side; ``unresolved``: it contains 0
    (the difference is within the noise of the seeds; more seeds or longer windows may resolve
    it); ``no split``: the tables split nothing, both placements are the same job flow.

    >>> verdict(-0.1, [-0.2, -0.15, -0.1], True), verdict(-0.1, [0.01, 0.02, 0.015], True)
    ('confirmed', 'refuted')
    >>> verdict(-0.1, [-0.1, 0.1, 0.0], True), verdict(-0.1, [-0.1], True)
    ('unresolved', 'unresolved')
    >>> verdict(0.0, [0.0], False)
    'no split'
    """
    if not splits:
        return "no split"
    _, lo, hi = paired_ci(seed_gains, level)
    faster = bool(pred_gain < 0)
    if hi < 0 or lo > 0:
        return "confirmed" if (hi < 0) == faster else "refuted"
    return "unresolved"


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
    extra_seeds: Sequence[int] = (),
    pricings: Sequence[str] = MAP_PRICINGS,
    oversized: str = "keep_together",
    keep_tables: bool = False,
    level: float = CI_LEVEL,
) -> list[dict]:
    """Nona (certified, per pricing) against keep-together at one workload: model and simulator.

    Returns one row per pricing with the keys of :data:`COLUMNS` except the grid coordinates
    (and ``tables``, Nona's JSON, when ``keep_tables``). Gains are ``nona / together - 1`` (negative:
    Nona is faster); ``sim_gain`` is the mean over the seeds of the paired per-seed gain,
    ``sim_gain_lo``/``sim_gain_hi`` its ``level`` confidence interval (:func:`paired_ci`).
    ``verdict`` (:func:`verdict`) judges the predicted sign by that interval; where it is
    ``unresolved`` after ``seeds``, both placements run again with ``extra_seeds`` and the verdict
    is taken over all of them (one extra round, decided before any result is seen, so the seeds
    spent follow the noise of each point). ``confirmed`` is the older test on the mean alone: True
    when the mean gain has the predicted sign, ``None`` when the tables split nothing.
    """
    together = together_tables(workload)
    cache: dict[int, float] = {}

    def together_means(ss: Sequence[int]) -> np.ndarray:
        # keep-together runs once per seed, whatever the pricings and rounds that need it
        todo = [x for x in ss if x not in cache]
        cache.update(zip(todo, simulated_means(workload, cluster, together, seeds=todo, duration=duration)))
        return np.array([cache[x] for x in ss])

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
        pred_gain = pred_n / pred_t - 1
        used = list(seeds)
        sim_t = together_means(used)
        sim_n = simulated_means(workload, cluster, doc, seeds=used, duration=duration) if splits else sim_t
        if splits and extra_seeds and verdict(pred_gain, sim_n / sim_t - 1, splits, level) == "unresolved":
            more = [x for x in extra_seeds if x not in used]
            used += more
            sim_t = together_means(used)
            sim_n = np.concatenate(
                [sim_n, simulated_means(workload, cluster, doc, seeds=more, duration=duration)]
            )
        gains = sim_n / sim_t - 1
        mean, lo, hi = paired_ci(gains, level) if splits else (0.0, 0.0, 0.0)
        row = {
            "pricing": pricing,
            **counts,
            "pred_nona_s": pred_n,
            "pred_together_s": pred_t,
            "pred_gain": pred_gain,
            "sim_nona_s": float(sim_n.mean()),
            "sim_together_s": float(sim_t.mean()),
            "sim_gain": mean,
            "sim_gain_lo": lo,
            "sim_gain_hi": hi,
            "sim_gain_min": float(gains.min()),
            "sim_gain_max": float(gains.max()),
            "confirmed": (bool((pred_gain < 0) == (mean < 0)) if splits else None),
            "verdict": verdict(pred_gain, gains, splits, level),
            "pred_link_load": res.rho,
            "seeds": len(used),
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
    comm_load: float | None = None,
    *,
    models: Sequence[str],
    servers: int,
    workload: Mapping[str, Any],
    seeds: Sequence[int],
    duration: float,
    extra_seeds: Sequence[int] = (),
    pricings: Sequence[str] = MAP_PRICINGS,
    tables_dir: str | Path | None = None,
) -> list[dict]:
    """:func:`compare_placements` at one grid point of the ``models`` workload; ``workload`` holds
    :func:`~schedlab.nona.workload.build_workload`'s other arguments, ``comm_load`` (the background
    link load) overrides its ``comm_load`` unless ``None``. With ``tables_dir``, the ``critical_path``
    tables are written there as :func:`tables_name` (for the baselines' sweep)."""
    wk = dict(workload)
    if comm_load is not None:
        wk["comm_load"] = float(comm_load)
    # build_workload's own default: the background link load equals the compute load
    cl = float(wk["comm_load"]) if wk.get("comm_load") is not None else float(load)
    cluster = Cluster(servers=int(servers), bandwidth_gbps=float(bandwidth_gbps))
    wl = build_workload(list(models), load=float(load), cluster=cluster, byte_scale=float(byte_scale), **wk)
    rows = compare_placements(
        wl,
        cluster,
        seeds=seeds,
        extra_seeds=extra_seeds,
        duration=duration,
        pricings=pricings,
        keep_tables=tables_dir is not None,
    )
    for r in rows:
        doc = r.pop("tables", None)
        if doc is not None and r["pricing"] == "critical_path":
            from schedlab.io import atomic_write_json

            doc["load"] = float(load)
            name = tables_name(byte_scale, cl).format(load=load, bandwidth_gbps=bandwidth_gbps)
            atomic_write_json(Path(tables_dir) / name, doc)
        r.update(
            load=float(load), bandwidth_gbps=float(bandwidth_gbps), byte_scale=float(byte_scale), comm_load=cl
        )
    return rows


def tables_name(byte_scale: float, comm_load: float) -> str:
    """The file name pattern (``{load:g}``, ``{bandwidth_gbps:g}``) of the Nona tables at ``byte_scale``
    and background link load ``comm_load``.

    >>> tables_name(0.1, 0.05).format(load=0.5, bandwidth_gbps=25.0)
    'nona_bs0.1_cl0.05_load0.5_bw25.json'
    """
    return f"nona_bs{byte_scale:g}_cl{comm_load:g}_" + "load{load:g}_bw{bandwidth_gbps:g}.json"


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
    comm_loads: Sequence[float] | None = None,
    extra_seeds: Sequence[int] = (),
    pricings: Sequence[str] = MAP_PRICINGS,
    tables_dir: str | Path | None = None,
    executor: Any = None,
    progress: bool = False,
) -> pd.DataFrame:
    """:func:`map_point` over the grid ``loads x bandwidths_gbps x byte_scales`` (``x comm_loads``, the
    background link load, when given; else ``workload``'s): one row per point and pricing, columns
    :data:`COLUMNS`, in grid order (comm load, byte scale, bandwidth, load, pricing).

    ``executor``: see :func:`schedlab.parallel.executor` (points are independent and carry their seeds).
    """
    from schedlab import parallel

    check_grid(loads, bandwidths_gbps, byte_scales)
    if comm_loads is not None and (
        not list(comm_loads) or not all(isinstance(c, (int, float)) and 0 <= c < 1 for c in comm_loads)
    ):
        raise ValueError(f"comm_loads must be numbers in [0, 1) (background link load), got {comm_loads}")
    cls_ = [None] if comm_loads is None else [float(c) for c in comm_loads]
    points = [
        (float(l), float(b), float(s), c)
        for c, s, b, l in itertools.product(cls_, byte_scales, bandwidths_gbps, loads)
    ]
    kw = {
        "models": tuple(models),
        "servers": int(servers),
        "workload": dict(workload),
        "seeds": tuple(seeds),
        "extra_seeds": tuple(extra_seeds),
        "duration": float(duration),
        "pricings": tuple(pricings),
        "tables_dir": tables_dir,
    }
    with parallel.executor(executor) as ex:
        parts = ex.map(_point_task, points, kw, desc="branches map", progress=progress)
    return pd.DataFrame([r for part in parts for r in part])[list(COLUMNS)]


def _point_task(point: tuple[float, float, float, float | None], kw: dict) -> list[dict]:
    return map_point(*point, **kw)


def baseline_points(rows: pd.DataFrame, n_split: int = 2) -> pd.DataFrame:
    """The points where the baselines run: the ``n_split`` points where critical-path Nona's
    simulated gain is largest (most negative) among those it splits, and the point with the
    lowest load, bandwidth and byte scale where it splits nothing (if any). Column ``why``.
    ``n_split=None`` takes every point where it splits.

    >>> rows = pd.DataFrame({"pricing": ["critical_path"] * 3, "load": [0.1, 0.5, 0.9],
    ...     "bandwidth_gbps": [10.0, 100.0, 100.0], "byte_scale": [1.0, 1.0, 1.0], "comm_load": 0.05,
    ...     "split_subgraphs": [0, 5, 4], "sim_gain": [0.0, -0.07, -0.02]})
    >>> baseline_points(rows, n_split=1)[["load", "why"]].values.tolist()
    [[0.5, 'splits'], [0.1, 'no split']]
    """
    cp = rows[rows.pricing == "critical_path"]
    split = cp[cp.split_subgraphs > 0]
    split = (split if n_split is None else split.nsmallest(n_split, "sim_gain")).assign(why="splits")
    keep = (
        cp[cp.split_subgraphs == 0].sort_values(["comm_load", "byte_scale", "bandwidth_gbps", "load"]).head(1)
    )
    cols = ["load", "bandwidth_gbps", "byte_scale", "comm_load", "why"]
    return pd.concat([split, keep.assign(why="no split")])[cols]


def baseline_rows(
    points: pd.DataFrame, setup: Any, *, tables_dir: str | Path, executor: Any = None
) -> pd.DataFrame:
    """Every scheme of ``setup`` (an :class:`~schedlab.nona.experiments.FigureSweep` whose ``models``
    and ``workload`` are the map's) at ``points`` (:func:`baseline_points`), Nona with the tables
    :func:`map_point` wrote into ``tables_dir``. Adds ``byte_scale``, ``comm_load``, ``why`` and
    ``ratio`` (a scheme's mean inference JCT over Nona's at the same point and window; Decima runs a
    shorter window of its own, so its ratio is against Nona run again on that window,
    ``ratio_same_window``)."""
    from schedlab.nona import experiments

    out = []
    for (bs, cl, why), pts in points.groupby(["byte_scale", "comm_load", "why"], sort=False):
        # the Expert's tables are named by load and bandwidth only: one folder per byte scale and link load
        st = setup.with_changes(
            workload={**setup.workload, "byte_scale": float(bs), "comm_load": float(cl)},
            tables_dir=Path(tables_dir) / f"bs{bs:g}_cl{cl:g}",
            nona_tables=str(Path(tables_dir).resolve() / tables_name(bs, cl)),
        )
        rows, _ = st.run(
            pts[["load", "bandwidth_gbps"]].to_dict("records"), executor=executor, progress=False
        )
        out.append(rows.assign(byte_scale=float(bs), comm_load=float(cl), why=why))
        short = [s for s in experiments.DECIMA_SCHEMES if s in st.schemes]
        if short and st.decima_duration:
            again = st.with_changes(schemes=("nona",), duration=st.decima_duration, decima_duration=None)
            nrows, _ = again.run(
                pts[["load", "bandwidth_gbps"]].to_dict("records"), executor=executor, progress=False
            )
            out.append(
                nrows.assign(scheme="nona_decima_window", byte_scale=float(bs), comm_load=float(cl), why=why)
            )
    rows = pd.concat(out, ignore_index=True)
    key = ["comm_load", "byte_scale", "bandwidth_gbps", "load"]
    nona = rows[rows.scheme == "nona"].set_index(key).inference_mean_jct_s
    short = rows[rows.scheme == "nona_decima_window"].set_index(key).inference_mean_jct_s
    idx = pd.MultiIndex.from_frame(rows[key])
    rows["ratio"] = rows.inference_mean_jct_s.to_numpy() / nona.reindex(idx).to_numpy()
    rows["ratio_same_window"] = (
        rows.inference_mean_jct_s.to_numpy() / short.reindex(idx).to_numpy() if len(short) else float("nan")
    )
    return rows


def scheme_ratio(base: pd.DataFrame) -> pd.Series:
    """Each baseline row's JCT over Nona's on the same window: ``ratio_same_window`` for Decima's
    schemes (their own short window), ``ratio`` for the others (above 1: slower than Nona).

    >>> base = pd.DataFrame({"scheme": ["spark_fair", "decima"], "ratio": [1.5, 3.0],
    ...                      "ratio_same_window": [1.4, 2.0]})
    >>> scheme_ratio(base).tolist()
    [1.5, 2.0]
    """
    from schedlab.nona import experiments

    return base.ratio_same_window.where(base.scheme.isin(experiments.DECIMA_SCHEMES), base.ratio)


def wins(base: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Per baseline point: does Nona split, with a gain the simulator confirms against keep-together
    (``verdict`` of the map's critical-path row), and beat every other scheme that ran?

    Columns: the point, ``split_subgraphs``, ``verdict``, ``sim_gain`` (vs keep-together),
    ``closest`` (the scheme with the lowest ratio to Nona), ``min_ratio`` (its ratio; above 1: every
    scheme is slower than Nona) and ``wins`` (splits, confirmed, and ``min_ratio > 1``).

    >>> rows = pd.DataFrame({"pricing": ["critical_path"], "load": [0.5], "bandwidth_gbps": [25.0],
    ...     "byte_scale": [0.1], "comm_load": [0.1], "split_subgraphs": [1], "verdict": ["confirmed"],
    ...     "sim_gain": [-0.03]})
    >>> base = pd.DataFrame({"load": 0.5, "bandwidth_gbps": 25.0, "byte_scale": 0.1, "comm_load": 0.1,
    ...     "why": "splits", "status": "ok", "scheme": ["nona", "spark_fair", "decima", "nona_decima_window"],
    ...     "ratio": [1.0, 1.1, 9.0, 1.0], "ratio_same_window": [1.0, 1.1, 8.0, 1.0]})
    >>> wins(base, rows)[["closest", "min_ratio", "wins"]].values.tolist()
    [['spark_fair', 1.1, True]]
    """
    key = ["comm_load", "byte_scale", "bandwidth_gbps", "load"]
    ran = base[(base.status == "ok") & ~base.scheme.isin(["nona", "nona_decima_window"])]
    ran = ran.assign(r=scheme_ratio(ran))
    best = ran.loc[ran.groupby(key, sort=False).r.idxmin()].set_index(key)
    cp = rows[rows.pricing == "critical_path"].set_index(key)[["split_subgraphs", "verdict", "sim_gain"]]
    out = best[["why", "scheme", "r"]].rename(columns={"scheme": "closest", "r": "min_ratio"}).join(cp)
    out["wins"] = (out.split_subgraphs > 0) & (out.verdict == "confirmed") & (out.min_ratio > 1)
    return out.reset_index()[
        [*key, "why", "split_subgraphs", "verdict", "sim_gain", "closest", "min_ratio", "wins"]
    ]


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
    points that split (mean over seeds; %), ``mean_against_prediction``: points whose simulated mean
    gain has the opposite sign of the predicted one (however wide its interval), points where the seeds disagree on the sign, the
    fewest and most seeds a point used, and the verdicts of the paired 95% interval
    (:func:`verdict`: confirmed / refuted / unresolved). JSON-ready.

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
            "mean_against_prediction": int(sum(map(refuted, split.confirmed))),
            "seeds_disagree": int(((split.sim_gain_min < 0) & (split.sim_gain_max > 0)).sum()),
            "seeds_used": [int(g.seeds.min()), int(g.seeds.max())] if "seeds" in g else None,
            "verdicts": {v: int((split.verdict == v).sum()) for v in VERDICTS[:3]},
        }
    return out


#: axis labels of the map's coordinates (plots)
AXIS_LABELS = {
    "load": "compute load",
    "bandwidth_gbps": "link bandwidth (Gbit/s)",
    "byte_scale": "branch data (x profiled)",
    "comm_load": "background link load",
}


def plot_gain_map(
    rows: pd.DataFrame,
    *,
    x: str = "bandwidth_gbps",
    y: str = "load",
    panel: str = "byte_scale",
    title: str = "",
) -> Any:
    """Heatmaps of critical-path Nona's simulated gain (%) over ``y`` x ``x``, one panel per value of
    ``panel`` (the fourth coordinate must take one value per panel). A hatched cell splits nothing
    (gain 0 by construction); ``x`` marks a cell the simulator refutes (the 95% interval of the
    paired gain is on the other side of 0), ``?`` one it cannot resolve (the interval contains 0),
    ``P`` one where it refutes the ``paper`` pricing's choice. Each cell prints the mean gain, below
    it the interval and the seeds used, and the subgraphs split."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    key = ["comm_load", "byte_scale", "bandwidth_gbps", "load"]
    cp = rows[rows.pricing == "critical_path"]
    paper = rows[rows.pricing == "paper"].set_index(key)
    if cp.groupby([panel, y, x]).size().max() > 1:
        raise ValueError(
            f"plot_gain_map: more than one point per ({panel}, {y}, {x}) cell; the other coordinate varies"
        )
    values = sorted(cp[panel].unique())
    lim = max(1.0, float(100 * cp.sim_gain.abs().max()))
    norm = TwoSlopeNorm(vmin=-lim, vcenter=0.0, vmax=lim)
    fig, axes = plt.subplots(
        1, len(values), figsize=(4.6 * len(values) + 1, 4.2), layout="constrained", squeeze=False
    )
    for ax, v in zip(axes[0], values):
        g = cp[cp[panel] == v]
        ys, xs = sorted(g[y].unique()), sorted(g[x].unique())
        grid = g.pivot(index=y, columns=x, values="sim_gain").reindex(index=ys, columns=xs) * 100
        # blue: Nona faster than keep-together, red: slower
        im = ax.imshow(grid.to_numpy(), cmap="RdBu_r", norm=norm, origin="lower", aspect="auto")
        for _, r in g.iterrows():
            i, j = ys.index(r[y]), xs.index(r[x])
            if r.split_subgraphs == 0:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", ec="0.6", lw=0))
                ax.text(j, i, "no split", ha="center", va="center", fontsize=8, color="0.3")
                continue
            k = tuple(r[c] for c in key)
            marks = {"refuted": "  x", "unresolved": "  ?"}.get(r.verdict, "") + (
                "  P" if k in paper.index and paper.loc[k, "verdict"] == "refuted" else ""
            )
            ax.text(
                j,
                i,
                f"{100 * r.sim_gain:+.1f}%{marks}\n[{100 * r.sim_gain_lo:+.1f}, {100 * r.sim_gain_hi:+.1f}] n={int(r.seeds)}"
                f"\n{int(r.split_subgraphs)} split",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if abs(100 * r.sim_gain) > 0.6 * lim else "black",
            )
        ax.set_xticks(range(len(xs)), [f"{b:g}" for b in xs])
        ax.set_yticks(range(len(ys)), [f"{t:g}" for t in ys])
        ax.set_xlabel(AXIS_LABELS[x])
        ax.set_ylabel(AXIS_LABELS[y])
        ax.set_title(f"{AXIS_LABELS[panel]} {v:g}")
    fig.colorbar(im, ax=axes[0].tolist(), label="simulated gain vs keep-together (%, < 0: Nona faster)")
    fig.suptitle(
        title or "Where Nona's split pays (x: refuted, ?: unresolved at 95%, P: paper pricing refuted)"
    )
    return fig
