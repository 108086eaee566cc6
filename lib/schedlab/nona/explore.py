"""Nona's optimiser at one operating point, in tables a reader can take in at a glance.

The interactive explorer (``notebooks/explore/nona.ipynb``) moves sliders for the compute load,
the link bandwidth and the background link load, and shows what Nona's optimisation
(section III-C) chooses there: for every job class and bottleneck subgraph the optimal
probability of each placement option (the distribution theta_t), the link's load rho and its
Pollaczek-Khinchine wait phi, and the predicted JCT of every class next to its JCT on one
server with no transfer.

Two workloads:

* ``"job_f"`` (default): the motivating job f of section II / Fig. 1a on two servers, with
  background transfers of ``background_mb`` MB loading the link (the table1 notebook's setup);
  its optimum moves from "distribute f" to "keep f together" as the link fills up (Table I).
* a tuple of model names (e.g. ``("resnet18",)``): the section IV workload of those PipeDream
  models on ``servers`` servers, built as :func:`schedlab.nona.optimise.solve_point` builds it.

Only the optimiser's public API is used (:func:`~schedlab.nona.optimise.solve` and its
``Result``: ``distributions()``, ``tau``, ``rho``, ``phi``, ``objective``).

Examples
--------
>>> s = placement_summary(0.2, 80.0)
>>> round(float(s.subgraphs.p_split.iloc[0]), 3)  # low load: f is always distributed
1.0
>>> s = placement_summary(0.8, 80.0)
>>> round(float(s.subgraphs.p_split.iloc[0]), 3)  # high load: f stays on one server
0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from schedlab.nona.optimise import Result, solve
from schedlab.nona.workload import INFERENCE, Cluster, JobClass, build_workload, job_f

#: the workload of section II's example (job f on two servers)
JOB_F = "job_f"


@dataclass(frozen=True)
class PlacementSummary:
    """What Nona's optimum looks like at one operating point.

    Attributes
    ----------
    load, bandwidth_gbps, comm_load : the operating point (``comm_load``: the background
        offered load of the link, equal to ``load`` unless set).
    rho : the link's total offered load at the optimum (background + the jobs' own transfers).
    phi_ms : the link's mean queueing wait (PK formula, equation VIII), milliseconds.
    objective : the optimum of (I), sum over classes of arrival rate x predicted JCT.
    options : one row per placement option with probability > ``min_p``: ``job_class``,
        ``subgraph`` ("source->sink"), ``option`` (readable), ``parts`` (servers used),
        ``split`` (True if the subgraph uses more than one server), ``p``.
    subgraphs : one row per (class, subgraph): ``p_split`` and ``p_together``.
    classes : one row per class: ``kind``, ``arrival_rate`` (jobs/s), ``predicted_jct_ms``,
        ``one_server_jct_ms`` (its compute alone on one server, no transfer, no wait).
    """

    load: float
    bandwidth_gbps: float
    comm_load: float
    rho: float
    phi_ms: float
    objective: float
    options: pd.DataFrame
    subgraphs: pd.DataFrame
    classes: pd.DataFrame


def describe_option(option, source: str, sink: str) -> str:
    """A placement option in words, e.g. ``"together"`` or ``"{det} | {det_sparse}; source with
    part 1, sink with part 1"``."""
    if len(option.partition) == 1:
        return "together (one server)"
    parts = " | ".join("{" + ", ".join(map(str, p)) + "}" for p in option.partition)
    return f"{parts}; {source} with part {option.source_part + 1}, {sink} with part {option.sink_part + 1}"


def _solve(
    load: float,
    bandwidth_gbps: float,
    comm_load: float,
    workload: str | Sequence[str],
    servers: int,
    background_mb: float,
    method: str,
) -> tuple[Result, list[JobClass], Cluster]:
    """Build the workload and solve it; the classes and cluster are returned with the result so
    that nothing below reads the solver's internal ``Problem``."""
    if workload == JOB_F:
        cluster = Cluster(servers=2, bandwidth_gbps=bandwidth_gbps)
        classes = build_workload(
            classes=[job_f()],
            load=load,
            cluster=cluster,
            comm_load=comm_load,
            background_comm_bytes=background_mb * 1e6,
        )
    elif isinstance(workload, str):
        raise ValueError(f"workload must be {JOB_F!r} or a sequence of model names, got {workload!r}")
    else:  # the section IV workload, as solve_point builds it
        cluster = Cluster(servers=servers, bandwidth_gbps=bandwidth_gbps)
        classes = build_workload(list(workload), load=load, cluster=cluster, comm_load=comm_load)
    return solve(classes, cluster, method=method), classes, cluster


def placement_summary(
    load: float,
    bandwidth_gbps: float = 80.0,
    *,
    comm_load: float | None = None,
    workload: str | Sequence[str] = JOB_F,
    servers: int = 80,
    background_mb: float = 20.0,
    method: str = "global",
    min_p: float = 1e-9,
) -> PlacementSummary:
    """Solve Nona's problem at one point and summarise the optimum (see :class:`PlacementSummary`).

    Parameters
    ----------
    load : compute load in (0, 1).
    bandwidth_gbps : the bottleneck link's capacity.
    comm_load : background offered load of the link in [0, 1); ``None``: equal to ``load``.
    workload : ``"job_f"`` (two servers, background transfers of ``background_mb`` MB) or
        model names (section IV workload on ``servers`` servers, 100:1 background rates).
    method : the solver (``global``: certified optimum; ``local``; ``penalty``).
    min_p : options with a smaller probability are left out of ``options``.
    """
    comm = load if comm_load is None else comm_load
    res, workload_classes, cluster = _solve(
        load, bandwidth_gbps, comm, workload, servers, background_mb, method
    )
    options, subgraphs = [], []
    for name, rows in res.distributions().items():
        for sub, opts in rows:
            label = f"{sub.source}->{sub.sink}"
            p_together = sum(p for o, p in opts if len(o.partition) == 1)
            subgraphs.append(
                {
                    "job_class": name,
                    "subgraph": label,
                    "intermediate": len(sub.intermediate),
                    "p_split": 1.0 - p_together,
                    "p_together": p_together,
                }
            )
            options += [
                {
                    "job_class": name,
                    "subgraph": label,
                    "option": describe_option(o, sub.source, sub.sink),
                    "parts": len(o.partition),
                    "split": len(o.partition) > 1,
                    "p": p,
                }
                for o, p in opts
                if p > min_p
            ]
    classes = [
        {
            "job_class": j.name,
            "kind": j.kind,
            "arrival_rate": j.arrival_rate,
            "predicted_jct_ms": 1e3 * res.tau[j.name],
            "one_server_jct_ms": 1e3
            * sum(w for _, w in j.dag.nodes(data="work_s", default=0.0))
            / cluster.compute_rate
            if j.kind == INFERENCE
            else float("nan"),
        }
        for j in workload_classes
    ]
    return PlacementSummary(
        load=load,
        bandwidth_gbps=bandwidth_gbps,
        comm_load=comm,
        rho=res.rho,
        phi_ms=1e3 * res.phi,
        objective=res.objective,
        options=pd.DataFrame(options),
        subgraphs=pd.DataFrame(
            subgraphs, columns=["job_class", "subgraph", "intermediate", "p_split", "p_together"]
        ),
        classes=pd.DataFrame(classes),
    )


def split_curve(
    loads: Sequence[float], bandwidth_gbps: float = 80.0, *, comm_load: float | None = None, **kwargs
) -> pd.DataFrame:
    """``p_split`` of every (class, subgraph), with ``rho`` and ``phi_ms``, at each of ``loads``
    (one :func:`placement_summary` per load; ``kwargs`` as there). Long format, one row per
    (load, class, subgraph)."""
    frames = []
    for x in loads:
        s = placement_summary(x, bandwidth_gbps, comm_load=comm_load, **kwargs)
        frames.append(s.subgraphs.assign(load=x, rho=s.rho, phi_ms=s.phi_ms))
    return pd.concat(frames, ignore_index=True)


def plot_summary(summary: PlacementSummary, curve: pd.DataFrame | None = None):
    """Left: P(split) of every subgraph at this point (bars). Right (if ``curve``): P(split)
    against the load, the current load marked. Returns the figure."""
    import matplotlib.pyplot as plt

    ncols = 1 if curve is None else 2
    fig, axes = plt.subplots(1, ncols, figsize=(5.5 * ncols, 3.8), layout="constrained", squeeze=False)
    ax = axes[0, 0]
    sg = summary.subgraphs
    labels = [f"{c}\n{s}" for c, s in zip(sg.job_class, sg.subgraph)]
    ax.bar(range(len(sg)), sg.p_split, width=0.5, color="C0")
    ax.set_xticks(range(len(sg)), labels, fontsize=8)
    ax.set_xlim(-1, len(sg))
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("P(split over servers)")
    ax.set_title(
        f"load {summary.load:.2f}, {summary.bandwidth_gbps:g} Gbps: "
        f"link load {summary.rho:.2f}, wait {summary.phi_ms:.3g} ms",
        fontsize=9,
    )
    if curve is not None:
        ax = axes[0, 1]
        for (c, s), g in curve.groupby(["job_class", "subgraph"], sort=False):
            ax.plot(g.load, g.p_split, "o-", ms=3, label=f"{c}: {s}")
        ax.axvline(summary.load, color="0.4", ls=":", label="this load")
        wait = ax.twinx()  # the link's PK wait, the quantity the trade-off turns on
        per_load = curve.drop_duplicates("load")
        wait.plot(per_load.load, per_load.phi_ms, color="C3", ls="--", label="link wait phi (ms, right axis)")
        wait.set_yscale("log")
        wait.set_ylabel("mean link wait phi (ms, log scale)", color="C3")
        ax.set_xlabel("compute load")
        ax.set_ylabel("P(split over servers)")
        ax.set_ylim(-0.05, 1.05)
        ax.set_title("optimal P(split) and link wait against the load", fontsize=9)
        handles = ax.get_legend_handles_labels()[0] + wait.get_legend_handles_labels()[0]
        fig.legend(
            handles,
            [h.get_label() for h in handles],
            fontsize=7,
            loc="outside lower center",
            ncol=3,
            frameon=False,
        )
        ax.grid(True, alpha=0.3)
    return fig
