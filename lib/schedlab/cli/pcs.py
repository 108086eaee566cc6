"""``schedlab pcs ...``: the PCS elastic GPU-job simulator and its Pareto search."""

from __future__ import annotations

import click


@click.group()
def pcs() -> None:
    """PCS: WFQ and baseline GPU schedulers with the JCT predictor."""


@pcs.command("simulate")
@click.option("--trace", "trace_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Trace CSV in the authors' format (app_id,submit_time,service,num_jobs,sleep_time[,model_name]), .csv or .csv.gz.")
@click.option("--policy", required=True, help="FIFO, SRSF (Tiresias), LAS, FS (Max-Min), AFS, THEMIS, PCS (WFQ).")
@click.option("--themis-lease", default=600.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Themis lease in seconds, > 0 (the authors: 600, 10 for the gavel workload).")
@click.option("--themis-variant", type=click.Choice(["paper", "2024", "fig8-runs"]), default="paper",
              show_default=True,
              help="Themis as the paper's Fig. 7 (speedup valuation), the authors' 2024 code (linear "
                   "valuation) or their stored Fig. 8 runs (replay with true sizes, no lease ticks).")
@click.option("--config", "config", default=None,
              help="WFQ config: a JSON file with one config, or a name in pcs_configs.json (PCS only).")
@click.option("--gpus", default=64, show_default=True, type=int, help="Cluster size.")
@click.option("--num-jobs", default=None, type=int, help="Simulate the first N jobs (default: all).")
@click.option("--predict", is_flag=True, help="Predict each job's JCT at its arrival.")
@click.option("--p-error", default=None, type=click.FloatRange(min=0, max=100, max_open=True),
              help="Job-size estimation error in percent, 0 <= p < 100 (with --predict): each job's size "
                   "estimate is its size times U(1 - p/100, 1 + p/100).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the p-error generator.")
@click.option("--engine", type=click.Choice(["fast", "reference"]), default="fast", show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Per-job CSV to write.")
def pcs_simulate(trace_path, policy, themis_lease, themis_variant, config, gpus, num_jobs, predict, p_error, seed, engine, out):
    """Simulate a trace; write one row per job (times in seconds since the first arrival)."""
    import time

    import numpy as np

    from schedlab.io import atomic_path
    from schedlab.pcs import ConfigError, SimulationError, TraceError, load_config, load_trace, make_policy, simulate

    if num_jobs is not None and num_jobs <= 0:
        raise click.BadParameter("must be >= 1", param_hint="--num-jobs")
    if gpus <= 0:
        raise click.BadParameter("must be >= 1", param_hint="--gpus")
    try:
        cfg = load_config(config) if config else None
        if cfg is not None and policy.upper() not in ("PCS", "WFQ", "MCS"):
            raise click.BadParameter("--config only applies to --policy PCS", param_hint="--config")
        pol = make_policy(policy, cfg)
        if policy.upper() == "THEMIS":
            from schedlab.pcs.policies import Themis

            pol = (Themis.fig8_runs(themis_lease) if themis_variant == "fig8-runs" else
                   Themis(themis_lease, valuation="linear" if themis_variant == "2024" else "speedup"))
        w = load_trace(trace_path, num_jobs)
        t0 = time.perf_counter()
        df = simulate(w, pol, gpus, predict=predict, p_error=p_error,
                      rng=np.random.default_rng(seed), engine=engine)
        dt = time.perf_counter() - t0
    except (ConfigError, TraceError, SimulationError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(out) as tmp:
        df.to_csv(tmp, index=False, float_format="%.17g")
    click.echo(f"{len(df)} jobs, {pol.name}, {gpus} GPUs, predictions {'on' if predict else 'off'}: "
               f"avg JCT {float((df.end_time - df.submit_time).mean()):.1f} s, {dt:.2f} s -> {out}")



# ---------------------------------------------------------------------------------------------
# PCS (issue 8): preference interface and SPEA2 Pareto search
@pcs.command("pareto", context_settings={"allow_interspersed_args": True})
@click.option("--trace", "trace_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Search workload: a trace CSV in the authors' format (.csv or .csv.gz).")
@click.option("--objectives", "objectives", required=True, multiple=True,
              help="Objectives METRIC:MEASURE (jct | pred_err | unfairness : avg | pQ), e.g. "
                   "`--objectives jct:avg pred_err:avg` (space- or comma-separated).")
@click.argument("more_objectives", nargs=-1)
@click.option("--budget", default=370, show_default=True, type=int,
              help="Simulations (evaluations); the authors' stored searches used 370.")
@click.option("--num-jobs", default=2001, show_default=True, type=int,
              help="First N jobs of the trace (the authors' searches: 2001).")
@click.option("--gpus", default=64, show_default=True, type=int)
@click.option("--space", type=click.Choice(["heuristic", "raw"]), default="heuristic", show_default=True,
              help="heuristic: (T, W, zeta_min, delta) as the paper; raw: 13 variables.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--workers", default=None, type=int,
              help="Local processes (default: $SCHEDLAB_WORKERS, else all cores).")
@click.option("--scheduler", default=None, help="Dask scheduler address (tcp://host:8786) instead of local processes.")
@click.option("--resume", "resume", default=None, type=click.Path(file_okay=False),
              help="Checkpoint directory: written after every generation, resumed from if present.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Front CSV to write.")
def pcs_pareto(trace_path, objectives, more_objectives, budget, num_jobs, gpus, space, seed, workers,
               scheduler, resume, out):
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
    try:
        w = load_trace(trace_path, num_jobs)
        t0 = time.perf_counter()
        with Executor(workers=workers, scheduler=scheduler) as ex:
            front = pareto_search(w, objs, budget=budget, space=space, gpus=gpus,
                                  rng=np.random.default_rng(seed), executor=ex, checkpoint_dir=resume)
        dt = time.perf_counter() - t0
    except (TraceError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(out) as tmp:
        front.table.to_csv(tmp, index=False, float_format="%.17g")
    click.echo(f"{len(front)} Pareto-optimal configs from {front.n_evaluations} simulations of {len(w)} jobs "
               f"in {dt:.1f} s -> {out}")
