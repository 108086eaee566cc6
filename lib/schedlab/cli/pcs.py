"""``schedlab pcs ...``: the PCS elastic GPU-job simulator and its Pareto search."""

from __future__ import annotations

import click


@click.group()
def pcs() -> None:
    """PCS: WFQ and baseline GPU schedulers with the JCT predictor."""


@pcs.command("simulate")
@click.option(
    "--trace",
    "trace_path",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Trace CSV in the authors' format (app_id,submit_time,service,num_jobs,sleep_time[,model_name]), .csv or .csv.gz.",
)
@click.option(
    "--workload",
    "workload_name",
    default=None,
    help="Instead of --trace: generate this synthetic workload in-process (as `schedlab pcs workload`).",
)
@click.option("--num-apps", default=None, type=click.IntRange(min=1), help="With --workload: number of apps.")
@click.option(
    "--workload-seed",
    default=4567,
    show_default=True,
    type=int,
    help="With --workload: np.random.seed of the authors' generator.",
)
@click.option(
    "--load",
    default=0.8,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="With --workload: offered load.",
)
@click.option("--service-cdf", default=None, help="With --workload: size CDF instead of the workload's own.")
@click.option(
    "--draw-order",
    type=click.Choice(["per-app", "vector", "per-trial"]),
    default="per-app",
    show_default=True,
    help="With --workload: where the gaps come in the stream (see `schedlab pcs workload`).",
)
@click.option(
    "--policy",
    required=True,
    help="FIFO, SRSF (Tiresias), LAS, FS (Max-Min), AFS, THEMIS, PCS (WFQ), or a user policy "
    "package.module:Class (a schedlab.pcs.policies.Policy subclass).",
)
@click.option(
    "--afs-variant",
    type=click.Choice(["tournament", "randomised"]),
    default="tournament",
    show_default=True,
    help="AFS as the authors' simulator (deterministic alg_c_concept tournament; their workload-2 "
    "runs) or as their stored Fig. 8 runs (randomised top-priority allocator; its own compiled loop). "
    "randomised draws from the --workload generator's stream, continued, as the authors did "
    "(exact); with --trace from np.random.RandomState(--seed).",
)
@click.option(
    "--themis-lease",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Themis lease in seconds, > 0 (the authors: 600, 10 for the gavel workload).",
)
@click.option(
    "--themis-variant",
    type=click.Choice(["paper", "62a6ca3", "2024-05-07", "2024", "fig8-runs"]),
    default="paper",
    show_default=True,
    help="Themis as the paper's Fig. 7 (speedup valuation), the authors' code at 62a6ca3 (linear "
    "valuation; the replay keeps attained + estimated size and starts with the pending lease "
    "tick), their per-job output of 2024-05-07 (linear valuation; '2024' is the same), or their "
    "stored Fig. 8 runs (replay with true sizes, no lease ticks).",
)
@click.option(
    "--pcs-variant",
    type=click.Choice(["exact", "62a6ca3"]),
    default="exact",
    show_default=True,
    help="PCS (WFQ) class water-filling: exact (the paper's procedure), or as the authors' code at "
    "62a6ca3, where amounts within 1e-3 GPUs of 0 count as 0 (matters with small class shares).",
)
@click.option(
    "--config",
    "config",
    default=None,
    help="WFQ config: a JSON file with one config, or a name in pcs_configs.json (PCS only).",
)
@click.option("--gpus", default=64, show_default=True, type=int, help="Cluster size.")
@click.option(
    "--num-jobs", default=None, type=int, help="Simulate the first N jobs of --trace (default: all)."
)
@click.option("--predict", is_flag=True, help="Predict each job's JCT at its arrival.")
@click.option(
    "--p-error",
    default=None,
    type=click.FloatRange(min=0, max=100, max_open=True),
    help="Job-size estimation error in percent, 0 <= p < 100 (with --predict): each job's size "
    "estimate is its size times U(1 - p/100, 1 + p/100).",
)
@click.option(
    "--predict-sample",
    default=None,
    type=click.IntRange(min=1),
    help="With --predict: predict each arrival with probability min(N / jobs, 1), the "
    "authors' subset on long traces (their N: 5000); default: every arrival.",
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=int,
    help="Seed of the p-error and --predict-sample draws (and of the randomised AFS with --trace).",
)
@click.option(
    "--engine",
    type=click.Choice(["auto", "fast", "reference"]),
    default="auto",
    show_default=True,
    help="auto: the compiled engine when the policy has a kernel, else the reference engine "
    "(with a one-line notice).",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Per-job CSV to write.")
def pcs_simulate(
    trace_path,
    workload_name,
    num_apps,
    workload_seed,
    load,
    service_cdf,
    draw_order,
    policy,
    afs_variant,
    themis_lease,
    themis_variant,
    pcs_variant,
    config,
    gpus,
    num_jobs,
    predict,
    p_error,
    predict_sample,
    seed,
    engine,
    out,
):
    """Simulate a trace or a generated workload; write one row per job (times in seconds since the
    first arrival).

    Example, the authors' Fig. 8 AFS run of seed 1954 (about 11 s of CPU; 51 s wall at load 10 on
    2 cores):
    `schedlab pcs simulate --workload gavel --num-apps 3000 --workload-seed 1954 --load 1.2
    --policy AFS --afs-variant randomised --predict --out afs_1954.csv`.
    """
    import time

    import numpy as np

    from schedlab.io import atomic_path
    from schedlab.pcs import ConfigError, SimulationError, TraceError, load_config, load_trace, simulate
    from schedlab.pcs.generators import authors_rng, generate

    from schedlab.cli._checks import writable

    if (trace_path is None) == (workload_name is None):
        raise click.UsageError("give exactly one of --trace FILE or --workload NAME")
    writable(out, "--out")
    if workload_name is not None and num_apps is None:
        raise click.BadParameter("--workload needs --num-apps", param_hint="--num-apps")
    if trace_path is not None:
        given = [
            f"--{n.replace('_', '-')}"
            for n in ("num_apps", "workload_seed", "load", "service_cdf", "draw_order")
            if click.get_current_context().get_parameter_source(n) != click.core.ParameterSource.DEFAULT
        ]
        if given:
            raise click.UsageError(
                f"{', '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} with "
                "--workload (for a trace use --num-jobs)"
            )
    if workload_name is not None and num_jobs is not None:
        raise click.UsageError("--num-jobs applies to --trace; with --workload use --num-apps")
    if num_jobs is not None and num_jobs <= 0:
        raise click.BadParameter("must be >= 1", param_hint="--num-jobs")
    if gpus <= 0:
        raise click.BadParameter("must be >= 1", param_hint="--gpus")
    is_afs = policy.upper() in ("AFS", "AFS-L")
    if afs_variant != "tournament" and not is_afs:
        raise click.BadParameter("only applies to --policy AFS", param_hint="--afs-variant")
    if pcs_variant != "exact" and policy.upper() not in ("PCS", "WFQ", "MCS"):
        raise click.BadParameter("only applies to --policy PCS", param_hint="--pcs-variant")
    try:
        cfg = load_config(config) if config else None
        if cfg is not None and policy.upper() not in ("PCS", "WFQ", "MCS"):
            raise click.BadParameter("--config only applies to --policy PCS", param_hint="--config")
        # the stream a randomised AFS draws from: with --workload the generator's, continued after the
        # workload is drawn (the policy only draws once the simulation starts), as the authors' code
        stream = authors_rng(workload_seed) if workload_name is not None else np.random.RandomState(seed)
        pol = _simulation_policy(policy, cfg, afs_variant, stream, themis_lease, themis_variant, pcs_variant)
        if trace_path is not None:
            w = load_trace(trace_path, num_jobs)
        else:
            w = generate(
                workload_name,
                num_apps,
                stream,
                load=load,
                gpus=gpus,
                service_cdf=service_cdf,
                draw_order=draw_order,
            )
        if engine == "auto":
            from schedlab.pcs.sim import choose_engine

            engine = choose_engine(pol, notify=lambda msg: click.echo(msg, err=True))
        t0 = time.perf_counter()
        df = simulate(
            w,
            pol,
            gpus,
            predict=predict,
            p_error=p_error,
            rng=np.random.default_rng(seed),
            predict_sample=predict_sample,
            engine=engine,
        )
        dt = time.perf_counter() - t0
    except (ConfigError, TraceError, SimulationError, ValueError, TypeError) as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(out) as tmp:
        df.to_csv(tmp, index=False, float_format="%.17g")
    click.echo(
        f"{len(df)} jobs, {pol.name}, {gpus} GPUs, predictions {'on' if predict else 'off'}: "
        f"avg JCT {float((df.end_time - df.submit_time).mean()):.1f} s, {dt:.2f} s -> {out}"
    )


def _simulation_policy(policy, cfg, afs_variant, stream, themis_lease, themis_variant, pcs_variant="exact"):
    from schedlab.pcs import make_policy
    from schedlab.pcs.configs import WFQConfig
    from schedlab.pcs.policies import WFQ, RandomisedAFS, Themis

    if afs_variant == "randomised":
        return RandomisedAFS(stream)
    if policy.upper() == "THEMIS":
        variants = {
            "paper": Themis,
            "62a6ca3": Themis.authors_code,
            "2024-05-07": Themis.output_2024_05_07,
            "2024": Themis.output_2024_05_07,
            "fig8-runs": Themis.fig8_runs,
        }
        return variants[themis_variant](themis_lease)
    if pcs_variant == "62a6ca3":
        return WFQ.authors_code(cfg if cfg is not None else WFQConfig.default())
    return make_policy(policy, cfg)


@pcs.command("workload")
@click.argument("name")
@click.option("--num-apps", required=True, type=click.IntRange(min=1), help="Number of apps (jobs).")
@click.option(
    "--seed",
    default=4567,
    show_default=True,
    type=int,
    help="np.random.seed of the authors' generator (their sim.py default: 4567).",
)
@click.option(
    "--load",
    default=0.8,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Offered load (ignored when the workload has an inter-arrival CDF, as the authors).",
)
@click.option(
    "--gpus",
    default=64,
    show_default=True,
    type=click.IntRange(min=1),
    help="Cluster size the load refers to.",
)
@click.option(
    "--service-cdf",
    default=None,
    help="Size CDF to use instead of NAME's own (e.g. gavel-contmultiple: the older gavel sizes).",
)
@click.option(
    "--draw-order",
    type=click.Choice(["per-app", "vector", "per-trial"]),
    default="per-app",
    show_default=True,
    help="per-app: each app's demand then its gap (the authors' stored Fig. 8 runs); vector: all "
    "gaps drawn as one vector first (the authors' sim.py of 2024); per-trial: each trial's GPUs "
    "and an unused min-GPU draw, then the gap (their themis1 baseline files, seed 4567).",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False),
    help="Trace CSV to write (.csv or .csv.gz), read by `schedlab pcs simulate --trace`.",
)
def pcs_workload(name, num_apps, seed, load, gpus, service_cdf, draw_order, out):
    """Generate a synthetic workload NAME exactly as the authors' generator does.

    NAME: workload-1 (= themis1), workload-3 (= gavel) or any CDF set of the mirror
    (`schedlab pcs workloads`). Example, the workload of the authors'
    *_gavel_result.csv runs: `schedlab pcs workload gavel --num-apps 3000 --seed 4567
    --load 1.2 --service-cdf gavel-contmultiple --draw-order vector --out gavel.csv`.
    """
    from schedlab.pcs.generators import authors_rng, generate
    from schedlab.cli._checks import writable
    from schedlab.pcs.workload import write_trace

    writable(out, "--out")
    try:
        w = generate(
            name,
            num_apps,
            authors_rng(seed),
            load=load,
            gpus=gpus,
            service_cdf=service_cdf,
            draw_order=draw_order,
        )
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    write_trace(w, out)
    click.echo(
        f"{len(w)} apps of {w.name.rsplit('_', 1)[0]} (seed {seed}, load {load:g}, {gpus} GPUs, "
        f"{draw_order} gaps): {int(w.demand.sum())} GPUs demanded, last arrival "
        f"{w.submit_us[-1] / 1e6:.0f} s -> {out}"
    )


@pcs.command("workloads")
def pcs_workloads():
    """List the workload names and size CDFs that `schedlab pcs workload` accepts."""
    from schedlab.pcs.generators import service_cdf_names, workload_names

    click.echo("workloads: " + " ".join(workload_names()))
    click.echo("service CDFs (--service-cdf): " + " ".join(service_cdf_names()))


# ---------------------------------------------------------------------------------------------
# PCS: preference interface and SPEA2 Pareto search
@pcs.command("pareto", context_settings={"allow_interspersed_args": True})
@click.option(
    "--trace",
    "trace_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Search workload: a trace CSV in the authors' format (.csv or .csv.gz).",
)
@click.option(
    "--objectives",
    "objectives",
    required=True,
    multiple=True,
    help="Objectives METRIC:MEASURE (jct | pred_err | unfairness : avg | pQ), e.g. "
    "`--objectives jct:avg pred_err:avg` (space- or comma-separated).",
)
@click.argument("more_objectives", nargs=-1)
@click.option(
    "--budget",
    default=370,
    show_default=True,
    type=int,
    help="Simulations (evaluations); the authors' stored searches used 370.",
)
@click.option(
    "--num-jobs",
    default=2001,
    show_default=True,
    type=int,
    help="First N jobs of the trace (the authors' searches: 2001).",
)
@click.option("--gpus", default=64, show_default=True, type=int)
@click.option(
    "--space",
    type=click.Choice(["heuristic", "raw"]),
    default="heuristic",
    show_default=True,
    help="heuristic: (T, W, zeta_min, delta) as the paper; raw: 13 variables.",
)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option(
    "--workers", default=None, type=int, help="Local processes (default: $SCHEDLAB_WORKERS, else all cores)."
)
@click.option(
    "--scheduler", default=None, help="Dask scheduler address (tcp://host:8786) instead of local processes."
)
@click.option(
    "--resume",
    "resume",
    default=None,
    type=click.Path(file_okay=False),
    help="Checkpoint directory: written after every generation, resumed from if present.",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Front CSV to write.")
@click.option(
    "--pick",
    "preference",
    default=None,
    help="Pick one configuration from the front: PCS-JCT (jct), PCS-bal (bal), PCS-pred (pred), "
    "unfairness or an objective label (schedlab.pcs.pareto.pick).",
)
@click.option(
    "--pick-out",
    default=None,
    type=click.Path(dir_okay=False),
    help="With --pick: write the picked WFQ config as JSON (for `pcs simulate --config`).",
)
def pcs_pareto(
    trace_path,
    objectives,
    more_objectives,
    budget,
    num_jobs,
    gpus,
    space,
    seed,
    workers,
    scheduler,
    resume,
    out,
    preference,
    pick_out,
):
    """Find Pareto-optimal WFQ configurations (paper §3.2-3.3: SPEA2, population 70)."""
    import time

    import numpy as np

    from schedlab.io import atomic_path
    from schedlab.pcs import TraceError, load_trace
    from schedlab.parallel import Executor
    from schedlab.pcs.pareto import PreferenceError, parse_objectives, pareto_search

    items = [s for o in list(objectives) + list(more_objectives) for s in o.split(",") if s.strip()]
    try:
        objs = parse_objectives(items)
    except PreferenceError as exc:
        raise click.BadParameter(str(exc), param_hint="--objectives") from None
    if workers is not None and scheduler is not None:
        raise click.BadParameter("give either --workers or --scheduler", param_hint="--scheduler")
    if num_jobs <= 0 or budget < 70 or gpus <= 0:
        raise click.BadParameter("need --num-jobs >= 1, --budget >= 70 (one population), --gpus >= 1")
    if pick_out is not None and preference is None:
        raise click.BadParameter("needs --pick", param_hint="--pick-out")
    if preference is not None:
        _check_preference(preference, objs)
    from schedlab.cli._checks import writable

    writable(out, "--out")
    writable(resume, "--resume", folder=True)
    writable(pick_out, "--pick-out")
    try:
        w = load_trace(trace_path, num_jobs)
        t0 = time.perf_counter()
        with Executor(workers=workers, scheduler=scheduler) as ex:
            front = pareto_search(
                w,
                objs,
                budget=budget,
                space=space,
                gpus=gpus,
                rng=np.random.default_rng(seed),
                executor=ex,
                checkpoint_dir=resume,
            )
        dt = time.perf_counter() - t0
    except (TraceError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(out) as tmp:
        front.table.to_csv(tmp, index=False, float_format="%.17g")
    click.echo(
        f"{len(front)} Pareto-optimal configs from {front.n_evaluations} simulations of {len(w)} jobs "
        f"in {dt:.1f} s -> {out}"
    )
    if preference is not None:
        _report_pick(front.table, preference, pick_out)


def _check_preference(preference, objs):
    """Refuse a preference the objectives cannot serve before a long search starts."""
    import pandas as pd

    from schedlab.pcs.pareto import PreferenceError, pick

    dummy = pd.DataFrame({o.label: [0.0] for o in objs})
    try:
        pick(dummy, preference)
    except PreferenceError as exc:
        raise click.BadParameter(str(exc), param_hint="--pick") from None


def _report_pick(table, preference, pick_out):
    import json
    import math
    from fractions import Fraction

    from schedlab.io import atomic_path
    from schedlab.pcs.configs import WFQConfig
    from schedlab.pcs.pareto import PreferenceError, objective_columns, pick

    try:
        i = pick(table, preference)
    except PreferenceError as exc:
        raise click.ClickException(str(exc)) from None
    row = table.iloc[i]
    objs = ", ".join(f"{c} {float(row[c]):.6g}" for c in objective_columns(table))
    click.echo(
        f"{preference}: row {i} ({objs}): {int(row['num_classes'])} classes, thresholds "
        f"{row['class_thresholds']}, rates {row['class_rates']}, zeta_min {float(row['zeta_min']):.6g}, "
        f"delta {float(row['delta']):.6g}"
    )
    if pick_out is not None:
        thr = tuple(math.inf if t == "inf" else float(t) for t in str(row["class_thresholds"]).split(";"))
        rates = tuple(Fraction(r) for r in str(row["class_rates"]).split(";"))
        cfg = WFQConfig(thr, rates, float(row["zeta_min"]), float(row["delta"]), f"pick_{preference}")
        with atomic_path(pick_out) as tmp:
            tmp.write_text(json.dumps(cfg.to_dict(), indent=1) + "\n")
        click.echo(f"config -> {pick_out}")


@pcs.command("pick")
@click.argument("front_csv", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--preference",
    "preference",
    required=True,
    help="PCS-JCT (jct), PCS-bal (bal), PCS-pred (pred), unfairness or an objective label.",
)
@click.option(
    "--out",
    "pick_out",
    default=None,
    type=click.Path(dir_okay=False),
    help="Write the picked WFQ config as JSON (for `pcs simulate --config`).",
)
def pcs_pick(front_csv, preference, pick_out):
    """Pick a configuration from a front CSV written by `schedlab pcs pareto`."""
    from schedlab.cli._checks import read_csv, writable
    from schedlab.pcs.pareto import objective_columns

    writable(pick_out, "--out")
    what = "a front CSV written by `schedlab pcs pareto --out`"
    table = read_csv(front_csv, what, ("num_classes", "class_thresholds", "class_rates", "zeta_min", "delta"))
    if not objective_columns(table):
        raise click.ClickException(
            f"{front_csv}: no objective column (jct_avg, pred_err_p99, ...); expected {what}"
        )
    _report_pick(table, preference, pick_out)
