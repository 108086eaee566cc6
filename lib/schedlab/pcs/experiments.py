"""Experiment helpers behind the PCS notebooks (each figure = a few calls of these).

Independent simulations (Fig. 7's traces x policies, the exactness runs, Fig. 9's timing
grid) go through :class:`schedlab.parallel.Executor`: every function taking ``executor``
accepts an executor, a number of local worker processes, a Dask scheduler address or client,
or ``None`` (``$SCHEDLAB_WORKERS`` / all cores), see :func:`schedlab.parallel.resolve`. Each
task is a module-level function that builds its own policy, so results are identical on
every backend and rows come back in the serial order.

Examples
--------
>>> sorted(policy_set(["FIFO", "Tiresias"]))
['FIFO', 'Tiresias']
>>> fig7_labels("2869ce", ["AFS", "PCS-JCT", "Themis"])  # no stored PCS config for 2869ce
['AFS', 'Themis']
"""

from __future__ import annotations

import time
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from schedlab import parallel
from schedlab.pcs import metrics
from schedlab.pcs.policies import make_policy
from schedlab.pcs.sim import fig8_afs_run, simulate, simulate_counted
from schedlab.pcs.workload import Workload

Executorish = parallel.Executor | int | str | None


#: paper label -> our policy name
LABELS = {
    "FIFO": "FIFO",
    "Tiresias": "SRSF",
    "SRSF": "SRSF",
    "LAS": "LAS",
    "Max-Min": "FS",
    "FS": "FS",
    "AFS": "AFS",
}


def pcs_config(label: str, workload: str):
    """WFQ config of ``PCS-JCT``/``PCS-bal``/``PCS-pred`` for a workload name.

    ``workload`` is a key of ``pcs_configs.json`` (``0e4a51``, ``gavel``, ``themis1``,
    ``themis1_scaled``, ``toy``, ...); ``fig7_0e4a51`` selects the versions behind the
    paper's Fig. 7 for that trace (README: Pareto members #5/#6 and the b313687 pred config).
    """
    from schedlab.pcs.configs import history_config, load_config, pareto_config

    kind = {"PCS-JCT": "jct", "PCS-bal": "bal", "PCS-pred": "pred"}[label]
    if workload == "fig7_0e4a51":
        if kind == "pred":
            return history_config("0e4a51_avg_jct_avg_pred_error_pred", "b313687")
        return pareto_config("0e4a51", 5 if kind == "jct" else 6)
    return load_config(f"PCS_config_{workload}_{kind}")


def themis_quantum(workload: str | None) -> float:
    """The authors' Themis lease: 10 s for ``gavel``, 600 s otherwise (1 time unit: toy)."""
    if workload == "toy":
        return 1.0
    return 10.0 if workload == "gavel" else 600.0


def policy_set(
    labels: Iterable[str], workload: str | None = None, themis_lease_s: float | None = None
) -> dict:
    """Policies by paper label (PCS labels need ``workload`` for their config).

    ``themis_lease_s`` overrides :func:`themis_quantum` (the authors' Fig. 8 runs used 600 s
    on workload-3: their workload was named ``gavel-contsingle``, not ``gavel``). On
    workload-3 (``"gavel"``) Themis predicts as the authors' Fig. 8 runs
    (:meth:`~schedlab.pcs.policies.Themis.fig8_runs`), on the Fig. 1 toy (``"toy"``) as their
    current code, whose replay keeps the pending lease tick as the toy's predictions do
    (:meth:`~schedlab.pcs.policies.Themis.authors_code`), elsewhere as their Fig. 7 code.
    """
    from schedlab.pcs.policies import Themis

    variant = {"gavel": Themis.fig8_runs, "toy": Themis.authors_code}
    out = {}
    for lab in labels:
        if lab == "Themis":
            lease = themis_lease_s if themis_lease_s is not None else themis_quantum(workload)
            out[lab] = variant.get(workload, Themis)(lease)
        elif lab.startswith("PCS"):
            out[lab] = make_policy("PCS", pcs_config(lab, workload))
            out[lab].name = lab
        else:
            out[lab] = make_policy(LABELS[lab])
    return out


def _simulate_policy(
    policy, workload: Workload, gpus: int, predict: bool, p_error: float | None, seed: int
) -> pd.DataFrame:
    """One simulation of :func:`run_many` (an executor task)."""
    return simulate(workload, policy, gpus, predict=predict, p_error=p_error, rng=np.random.default_rng(seed))


def run_many(
    workload,
    policies: Mapping,
    gpus: int,
    *,
    predict: bool = True,
    p_error: float | None = None,
    seed: int = 0,
    executor: Executorish = 1,
) -> dict[str, pd.DataFrame]:
    """Simulate ``workload`` under each policy; per-job frames by label.

    Each simulation draws its size errors from ``default_rng(seed)``. ``executor``: where
    the simulations run (default 1: in this process; see the module docstring).
    """
    with parallel.executor(executor) as ex:
        frames = ex.map(
            _simulate_policy,
            list(policies.values()),
            workload,
            gpus,
            predict,
            p_error,
            seed,
            desc=workload.name,
        )
    return dict(zip(policies, frames))


def simulate_label(
    task: tuple[Workload, str | None, str],
    gpus: int,
    *,
    predict: bool = True,
    p_error: float | None = None,
    seed: int = 0,
    themis_lease_s: float | None = None,
    predict_sample: int | None = None,
) -> pd.DataFrame:
    """One simulation of ``(workload, workload key, paper label)``: an executor task.

    The policy is built here (:func:`policy_set`), as :func:`run_many` would use it; the
    size-error draws, then the predicted subset's (``predict_sample``, see
    :func:`~schedlab.pcs.sim.simulate`), come from ``default_rng(seed)``.
    """
    workload, key, label = task
    policy = policy_set([label], key, themis_lease_s)[label]
    return simulate(
        workload,
        policy,
        gpus,
        predict=predict,
        p_error=p_error,
        rng=np.random.default_rng(seed),
        predict_sample=predict_sample,
    )


def _fig8_afs_task(seed: int, num_apps: int, gpus: int, load: float) -> pd.DataFrame:
    return fig8_afs_run(seed, num_apps, load=load, gpus=gpus)


def fig8_afs_runs(
    seeds: Sequence[int], num_apps: int, gpus: int, load: float, executor: Executorish = None
) -> dict[int, pd.DataFrame]:
    """AFS as the authors' Fig. 8 runs made it, one executor task per seed: the randomised
    allocator continuing each seed's workload stream (:func:`~schedlab.pcs.sim.fig8_afs_run`;
    compiled loop, about 4 s per seed of 3000 apps, identical to the reference engine)."""
    seeds = list(seeds)
    with parallel.executor(executor) as ex:
        frames = ex.map(_fig8_afs_task, seeds, num_apps, gpus, load, desc="Fig. 8 AFS (randomised)")
    return dict(zip(seeds, frames))


def fig7_config_key(trace: str) -> str:
    """The PCS config key of a Fig. 7 trace (0e4a51: the versions behind the paper's Fig. 7)."""
    return "fig7_0e4a51" if trace == "0e4a51" else trace


def fig7_labels(trace: str, policies: Sequence[str]) -> list[str]:
    """``policies`` without the PCS labels that have no stored config for ``trace``."""
    labels = []
    for p in policies:
        if p.startswith("PCS"):
            try:
                pcs_config(p, fig7_config_key(trace))
            except ValueError:  # no stored PCS config for this trace (2869ce)
                continue
        labels.append(p)
    return labels


def fig7_table(
    workloads: Mapping[str, Workload],
    policies: Sequence[str],
    gpus: int,
    executor: Executorish = None,
    *,
    predict: bool = True,
    predict_sample: int | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Fig. 7: :func:`~schedlab.pcs.metrics.fig7_aggregate` per trace (``{trace: workload}``),
    one executor task per (trace, policy) simulation; rows by trace, then policy, in the
    given orders.

    ``predict_sample``: predict a random subset of arrivals, as the authors did on traces
    over 5000 jobs (``5000``: their rule, see :func:`~schedlab.pcs.sim.simulate`), drawn from
    ``default_rng(seed)`` per simulation. ``predict=False`` gives the same JCTs (a prediction
    never changes the schedule) in a fraction of the time; the Pred_err columns are then NaN.
    """
    keys = [(tr, lab) for tr in workloads for lab in fig7_labels(tr, policies)]
    tasks = [(workloads[tr], fig7_config_key(tr), lab) for tr, lab in keys]
    desc = "Fig. 7 traces x policies" + ("" if predict else " (JCT only)")
    # longest first, so that no long simulation starts last on an idle pool: Themis's (its
    # replays tick at every lease; on ee9e8c's 5,452 jobs it takes longer than every other
    # policy on 6214e9's 51,258 but one), then by trace length
    order = sorted(range(len(tasks)), key=lambda k: (tasks[k][2] != "Themis", -len(tasks[k][0])))
    with parallel.executor(executor) as ex:
        done = ex.map(
            simulate_label,
            [tasks[k] for k in order],
            gpus,
            predict=predict,
            seed=seed,
            predict_sample=predict_sample if predict else None,
            desc=desc,
        )
    frames = [None] * len(tasks)
    for k, df in zip(order, done):
        frames[k] = df
    rows = []
    for tr, w in workloads.items():
        runs = {lab: df for (t, lab), df in zip(keys, frames) if t == tr}
        rows.append(metrics.fig7_aggregate(runs).assign(trace=tr, jobs=len(w)))
    return pd.concat(rows, ignore_index=True)


JCT_COLUMNS = ["trace", "policy", "jobs", "avg_jct", "norm_avg_jct"]


def fig7_jct_table(
    predicted: pd.DataFrame,
    workloads: Mapping[str, Workload],
    policies: Sequence[str],
    gpus: int,
    executor: Executorish = None,
) -> pd.DataFrame:
    """Normalised avg JCT of every trace in ``workloads``, in their order.

    Traces already in ``predicted`` (a :func:`fig7_table` with predictions) keep its JCTs: a
    prediction never changes the schedule. The others run without the predictor, and so does
    the smallest trace the two share, whose JCTs must then equal the predicted run's
    (``RuntimeError`` if not): the check costs one small trace, not a second pass over all.
    """
    shared = [t for t in workloads if t in set(predicted.trace)]
    check = min(shared, key=lambda t: len(workloads[t]), default=None)
    run = [t for t in workloads if t not in shared or t == check]
    fresh = fig7_table({t: workloads[t] for t in run}, policies, gpus, executor, predict=False)
    if check is not None:
        both = predicted.merge(fresh[fresh.trace == check], on=["trace", "policy"], suffixes=("", "_jct"))
        bad = both[both.avg_jct != both.avg_jct_jct]
        if len(both) == 0 or len(bad):
            raise RuntimeError(
                f"trace {check}: avg JCT with and without predictions differ for "
                f"{list(bad.policy) or 'every policy'}: a prediction changed a schedule"
            )
    rows = pd.concat(
        [predicted[predicted.trace.isin(shared)][JCT_COLUMNS], fresh[~fresh.trace.isin(shared)][JCT_COLUMNS]],
        ignore_index=True,
    )
    order = {t: k for k, t in enumerate(workloads)}
    return rows.sort_values("trace", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def toy_table(runs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Fig. 1b: mean JCT, mean Pred_err (%) and peak unfairness (%) per policy."""
    rows = []
    for lab, df in runs.items():
        rows.append(
            {
                "policy": lab,
                "mean_jct": float(metrics.jct(df).mean()),
                "mean_pred_error": float(metrics.pred_error(df).mean()),
                "peak_unfairness_pct": 100 * float(metrics.unfairness(df).max()),
            }
        )
    return pd.DataFrame(rows)


def _artifact_run(name: str, gpus: int) -> list[dict]:
    """Our run of the authors' artifact run ``name`` against theirs (an executor task)."""
    from schedlab.pcs.artifacts import compare, load_run, run_config, trace_0e4a51

    pol = make_policy("PCS", run_config(name)) if name.startswith("PCS") else make_policy(name)
    ours = simulate(trace_0e4a51(1001), pol, gpus, predict=True)
    return [
        {"run": name, "column": col, "jobs": a.n, "jobs_off": a.n_bad, "max_rel_diff": a.max_rel}
        for col, a in compare(ours, load_run(name)).items()
    ]


def exactness_table(gpus: int = 64, executor: Executorish = None) -> pd.DataFrame:
    """Every deterministic authors' run vs ours: per column, jobs off by > 1e-6 rel."""
    from schedlab.pcs.artifacts import RUNS

    with parallel.executor(executor) as ex:
        parts = ex.map(_artifact_run, list(RUNS), gpus, desc="authors' runs")
    return pd.DataFrame([row for part in parts for row in part])


W3_RUN = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/{}_64_1.2_gavel-contsingle_{}.csv.gz"


def authors_w3_runs(seeds: Iterable[int]) -> dict[str, dict[int, pd.DataFrame]]:
    """The authors' workload-3 per-job files (their runs behind Fig. 8), ``{label: {seed:
    frame}}`` in :func:`~schedlab.pcs.metrics.fig8_aggregate`'s order; their ``MCS`` runs
    0/1/2 are PCS-pred/bal/JCT."""
    from schedlab.pcs.artifacts import load_run

    seeds = list(seeds)
    runs = {
        p: {s: load_run(W3_RUN.format(p, s)) for s in seeds} for p in ["AFS", "SRSF", "THEMIS", "FIFO", "FS"]
    }
    for k, label in [(0, "PCS-pred"), (1, "PCS-bal"), (2, "PCS-JCT")]:
        runs[label] = {s: load_run(W3_RUN.format("MCS", f"{s}_{k}")) for s in seeds}
    return runs


def _themis_w3_run(seed: int, gpus: int) -> list[dict]:
    """Our Themis on the authors' workload-3 seed ``seed`` against theirs (an executor task)."""
    from schedlab.pcs.artifacts import compare, load_run
    from schedlab.pcs.generators import authors_rng, generate
    from schedlab.pcs.policies import Themis

    w = generate("gavel", 3000, authors_rng(seed), load=1.2, gpus=gpus)
    ours = simulate(w, Themis.fig8_runs(600.0), gpus, predict=True)
    return [
        {
            "run": f"THEMIS gavel seed {seed}",
            "column": col,
            "jobs": a.n,
            "jobs_off": a.n_bad,
            "max_rel_diff": a.max_rel,
        }
        for col, a in compare(ours, load_run(W3_RUN.format("THEMIS", seed))).items()
    ]


def themis_exactness_table(
    seeds: Iterable[int], gpus: int = 64, executor: Executorish = None
) -> pd.DataFrame:
    """Our Themis against the authors' workload-3 THEMIS files (the runs behind Fig. 8).

    The workload is regenerated exactly (``generate("gavel", 3000, authors_rng(seed),
    load=1.2)``), lease 600 s, predictions on. One row per seed and column: jobs off by
    more than 1e-6 relative.
    """
    with parallel.executor(executor) as ex:
        parts = ex.map(_themis_w3_run, list(seeds), gpus, desc="Themis workload-3 seeds")
    return pd.DataFrame([row for part in parts for row in part])


#: Themis variants compared on Fig. 7 (see :class:`~schedlab.pcs.policies.Themis`)
THEMIS_VARIANTS = {
    "default (speedup, replay: estimated size + leases)": {},
    "speedup, replay: true size, no leases (Fig. 8 runs)": {"replay_size": "true", "replay_leases": False},
    "linear, replay: estimated size + leases (2024 code)": {"valuation": "linear"},
    "linear, replay: true size, no leases": {
        "valuation": "linear",
        "replay_size": "true",
        "replay_leases": False,
    },
}


def _themis_variant_run(task: tuple[Workload, str | None], gpus: int) -> pd.DataFrame:
    """AFS without predictions (``variant None``) or a Themis variant (an executor task)."""
    from schedlab.pcs.policies import Themis

    workload, variant = task
    if variant is None:
        return simulate(workload, make_policy("AFS"), gpus)
    return simulate(workload, Themis(600.0, **THEMIS_VARIANTS[variant]), gpus, predict=True)


def themis_variants_fig7(
    workloads: Mapping[str, Workload], gpus: int = 64, executor: Executorish = None
) -> pd.DataFrame:
    """Themis variants on workload-2 traces (``{trace: workload}``): normalised avg JCT (by
    AFS) and avg / p99 Pred_err, p99 with numpy's ``linear`` percentile as Fig. 7."""
    variants = [None, *THEMIS_VARIANTS]
    tasks = [(w, v) for w in workloads.values() for v in variants]
    with parallel.executor(executor) as ex:
        frames = iter(ex.map(_themis_variant_run, tasks, gpus, desc="Themis variants"))
    rows = []
    for trace in workloads:
        afs = float(metrics.jct(next(frames)).mean())
        for label in THEMIS_VARIANTS:
            df = next(frames)
            e = metrics.pred_error(df)
            rows.append(
                {
                    "trace": trace,
                    "variant": label,
                    "norm_avg_jct": float(metrics.jct(df).mean()) / afs,
                    "avg_pred_error": float(e.mean()),
                    "p99_pred_error": metrics.percentile(e, 99, method="linear"),
                }
            )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Fig. 9, 10c


def fig9_workload(full: Workload, jobs: int, gpus: int) -> Workload:
    """The first ``jobs`` jobs of ``full`` with arrivals scaled by ``64 / gpus`` (the trace's
    load on 64 GPUs carried to ``gpus``)."""
    from schedlab.pcs.pareto import scale_arrivals

    w = full.head(jobs)
    return w if gpus == 64 else scale_arrivals(w, 64 / gpus)


def _fig9a_point(point: tuple[int, int], full: Workload, config: Sequence[float], repeats: int) -> list[dict]:
    """CPU/wall time of ``repeats`` simulations at ``(jobs, gpus)`` (an executor task)."""
    from schedlab.pcs.pareto import HeuristicSpace, wfq_policy

    jobs, gpus = point
    w = fig9_workload(full, jobs, gpus)
    cfg = HeuristicSpace.for_workload(w).decode(config)
    simulate(w.head(20), wfq_policy(cfg), gpus, predict=True)  # compile outside the timing
    rows = []
    for r in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        _, events = simulate_counted(w, wfq_policy(cfg), gpus, predict=True)
        rows.append(
            {
                "jobs": jobs,
                "gpus": gpus,
                "repeat": r,
                "classes": cfg.num_classes,
                "cpu_s": time.process_time() - c0,
                "wall_s": time.perf_counter() - t0,
                "events": events.total,
            }
        )
    return rows


#: Fig. 9a/9b columns that are times (or depend on the machine: ``workers``), kept apart from
#: the deterministic columns (events, classes, evaluations, front size) so that the pipeline's
#: outputs are the same on every run; the Fig. 9 notebook writes them under ``timings/``.
FIG9A_TIMING_COLUMNS = ("cpu_s", "cpu_s_std", "wall_s")
FIG9B_TIMING_COLUMNS = ("wall_s", "eval_cpu_s", "cpu_per_eval_s", "workers", "projected_wall_idle_s")
FIG9_KEY_COLUMNS = ("jobs", "gpus")


def fig9a_timings(
    full: Workload,
    sim_jobs: Sequence[int],
    sim_gpus: Sequence[int],
    repeats: int,
    config: Sequence[float],
    executor: Executorish = None,
) -> pd.DataFrame:
    """Fig. 9a: time per simulation of the heuristic ``config`` per (jobs, GPUs): mean CPU
    and wall seconds over ``repeats`` runs (CPU measured in the process that ran them),
    events per run. One executor task per grid point; the Fig. 9 notebook passes
    ``executor=1`` so that no other simulation competes for the machine while one is timed."""
    points = [(j, g) for j in sim_jobs for g in sim_gpus]
    with parallel.executor(executor) as ex:
        parts = ex.map(_fig9a_point, points, full, config, repeats, desc="Fig. 9a grid")
    t9a = pd.DataFrame([row for part in parts for row in part])
    return (
        t9a.groupby(["jobs", "gpus"])
        .agg(
            classes=("classes", "first"),
            cpu_s=("cpu_s", "mean"),
            cpu_s_std=("cpu_s", "std"),
            wall_s=("wall_s", "mean"),
            events=("events", "mean"),
        )
        .reset_index()
    )


def fig9b_searches(
    full: Workload,
    grid: Sequence[Sequence[int]],
    objectives,
    executor: Executorish = None,
    *,
    return_fronts: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, list]:
    """Fig. 9b: one Pareto search (seed 0) per ``(jobs, gpus, budget)`` of ``grid``, its
    evaluations on the executor; wall seconds, summed evaluation CPU seconds, and the wall
    time that CPU would take on the executor's workers if they were idle.
    ``return_fronts``: also return the searches' :class:`~schedlab.pcs.pareto.ParetoFront`
    (for :func:`fig9c_coverage`'s ``reuse``)."""
    from schedlab.pcs.pareto import pareto_search

    rows, fronts = [], []
    with parallel.executor(executor) as ex:
        for jobs, gpus, budget in grid:
            t0 = time.perf_counter()
            f = pareto_search(
                fig9_workload(full, jobs, gpus),
                objectives,
                budget=budget,
                gpus=gpus,
                rng=np.random.default_rng(0),
                executor=ex,
                progress=f"Fig. 9b search, {jobs} jobs x {gpus} GPUs",
            )
            wall = time.perf_counter() - t0
            cpu = float(np.nansum(f.eval_cpu_seconds))
            fronts.append(f)
            rows.append(
                {
                    "jobs": jobs,
                    "gpus": gpus,
                    "evaluations": f.n_evaluations,
                    "front": len(f),
                    "wall_s": wall,
                    "eval_cpu_s": cpu,
                    "cpu_per_eval_s": cpu / f.n_evaluations,
                    "workers": ex.workers,
                    "projected_wall_idle_s": cpu / ex.workers,
                }
            )
    table = pd.DataFrame(rows)
    return (table, fronts) if return_fronts else table


def fig9c_coverage(
    workload: Workload,
    objectives,
    budgets: Sequence[int],
    seeds: Sequence[int],
    eps: float,
    executor: Executorish = None,
    *,
    reuse: Sequence = (),
) -> tuple[pd.DataFrame, np.ndarray]:
    """Fig. 9c: share of the reference front found within each budget, with and without the
    heuristics (one search per space and seed, the largest budget; smaller budgets read the
    first evaluations of its archive). The reference front is the non-dominated union of
    all archives. Returns the table (mean over seeds) and the reference points.

    ``reuse``: finished searches (:class:`~schedlab.pcs.pareto.ParetoFront`, e.g. Fig. 9b's
    longest). One with the identity of a search needed here (same workload, objectives,
    space, 64 GPUs and seed) and at least its evaluations stands in for it: a search's
    evaluations do not depend on its budget (:func:`~schedlab.pcs.pareto.search_identity`),
    so the table is the same, without running the search twice.
    """
    from schedlab.pcs.pareto import (
        archive_front,
        coverage,
        nondominated,
        pareto_search,
        reuse_evaluations,
        search_identity,
    )

    cols = [o.label for o in objectives]
    top = max(budgets)
    archives = {}
    with parallel.executor(executor) as ex:
        for space in ["heuristic", "raw"]:
            for seed in seeds:
                ident = search_identity(workload, objectives, space=space, seed=seed)
                ev = reuse_evaluations(reuse, ident, top)
                if ev is not None:
                    print(
                        f"Fig. 9c search, {space} space, seed {seed}: the first {len(ev)} "
                        f"evaluations of an earlier search with the same identity (not re-run)"
                    )
                else:
                    ev = pareto_search(
                        workload,
                        objectives,
                        budget=top,
                        space=space,
                        rng=np.random.default_rng(seed),
                        executor=ex,
                        progress=f"Fig. 9c search, {space} space, seed {seed}",
                    ).evaluations
                archives[space, seed] = ev[cols].to_numpy()
    union = np.vstack([archive_front(F, top) for F in archives.values()])
    reference = union[nondominated(union)]
    rows = []
    for (space, seed), F in archives.items():
        for b in budgets:
            A = archive_front(F, b)
            rows.append(
                {
                    "space": space,
                    "seed": seed,
                    "budget": b,
                    "points": len(A),
                    "share_pct": 100 * coverage(A, reference, eps),
                    "share_exact_pct": 100 * coverage(A, reference, 0.0),
                }
            )
    t9c = pd.DataFrame(rows)
    f9c = (
        t9c.groupby(["budget", "space"])
        .agg(
            share_pct=("share_pct", "mean"),
            share_exact_pct=("share_exact_pct", "mean"),
            points=("points", "mean"),
        )
        .reset_index()
    )
    return f9c, reference


def fig10c_transfer(
    w_train: Workload,
    w_test: Workload,
    objectives,
    *,
    budget: int,
    gpus: int,
    seed: int,
    within: float,
    executor: Executorish = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 10c: the front searched at the training load, re-run at the test load, against
    the front searched at the test load (both searches seeded with ``seed``).

    Returns the training front with its objectives at both loads, its gap to the test
    front (:func:`~schedlab.pcs.pareto.front_gap`) and whether that is within ``within``;
    and the test front.
    """
    from schedlab.pcs.pareto import evaluate_config, front_gap, pareto_search

    cols = [o.label for o in objectives]
    with parallel.executor(executor) as ex:
        f_train = pareto_search(
            w_train,
            objectives,
            budget=budget,
            gpus=gpus,
            rng=np.random.default_rng(seed),
            executor=ex,
            progress="Fig. 10c search at the training load",
        )
        f_test = pareto_search(
            w_test,
            objectives,
            budget=budget,
            gpus=gpus,
            rng=np.random.default_rng(seed),
            executor=ex,
            progress="Fig. 10c search at the test load",
        )
        moved = np.array(
            ex.map(
                evaluate_config,
                f_train.configs,
                w_test,
                objectives,
                gpus,
                desc="training front at the test load",
            ),
            dtype=float,
        )
    gap = front_gap(moved, f_test.table[cols].to_numpy())
    res = f_train.table.copy()
    for j, c in enumerate(cols):
        res[f"{c}_at_train"] = res[c]
        res[f"{c}_at_test"] = moved[:, j]
    res["gap_to_test_front"] = gap
    res["within"] = gap <= within
    return res, f_test.table


def _subsample_stat(values: np.ndarray, stat: str) -> float:
    if stat == "mean":
        return float(values.mean())
    return metrics.percentile(values, float(stat[1:]), method="linear")


def subsample_spread(
    values, p: float, stat: str = "mean", *, rng: np.random.Generator, draws: int = 4000, level: float = 0.999
) -> float:
    """How far apart two runs that predict different random subsets of the same jobs can be.

    The authors predicted each arrival with probability ``p = min(5000/N, 1)`` (unseeded), and
    so does our Fig. 7 run (seeded): on a trace over 5000 jobs the published Pred_err and ours
    are a statistic of two independent Bernoulli(``p``) subsets of the same per-job errors
    (the schedule, hence each job's error, does not depend on which jobs are predicted). This
    draws ``draws`` such pairs from ``values`` (the per-job errors with every job predicted)
    and returns the ``level`` quantile of ``|stat(subset a) - stat(subset b)|``: a tolerance
    that a correct reproduction exceeds with probability ``1 - level``.

    Parameters
    ----------
    values : array-like
        Per-job Pred_err (%) with every arrival predicted.
    p : float
        Inclusion probability, in (0, 1].
    stat : {"mean", "p<q>"}
        The statistic: the mean, or numpy's linear percentile ``q`` (Fig. 7's p99 is "p99").
    rng : numpy.random.Generator
    draws : int
    level : float
        In (0, 1).

    Returns
    -------
    float

    Examples
    --------
    >>> x = np.random.default_rng(0).exponential(30.0, 5452)
    >>> h = subsample_spread(x, 5000 / 5452, rng=np.random.default_rng(1), draws=2000)
    >>> sd = np.sqrt(2 * (1 - 5000 / 5452) / 5000) * x.std()   # closed form of the difference
    >>> bool(abs(h / (3.29 * sd) - 1) < 0.15)
    True
    >>> subsample_spread(x, 1.0, "p99", rng=np.random.default_rng(1), draws=10)
    0.0
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) == 0 or not np.isfinite(x).all():
        raise ValueError("values: expected a non-empty 1-D array of finite per-job errors")
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p = {p}: expected an inclusion probability in (0, 1]")
    if not (
        stat == "mean"
        or (
            stat.startswith("p")
            and stat[1:].replace(".", "", 1).isdigit()
            and 0.0 <= float(stat[1:]) <= 100.0
        )
    ):
        raise ValueError(f"stat = {stat!r}: expected 'mean' or 'p<q>' with 0 <= q <= 100")
    if int(draws) < 1 or not 0.0 < level < 1.0:
        raise ValueError(f"draws = {draws}, level = {level}: expected draws >= 1 and 0 < level < 1")
    gaps = np.empty(int(draws))
    for k in range(int(draws)):
        a, b = rng.random(len(x)) < p, rng.random(len(x)) < p
        if not a.any() or not b.any():  # an empty subset has no statistic: draw again next time
            gaps[k] = np.nan
            continue
        gaps[k] = abs(_subsample_stat(x[a], stat) - _subsample_stat(x[b], stat))
    return float(np.nanquantile(gaps, level))
