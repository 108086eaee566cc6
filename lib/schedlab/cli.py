"""The ``schedlab`` command line.

Subcommands: ``fetch`` (raw inputs), ``notebook run`` (a pipeline stage), ``compare``
(paper vs ours), and one group per paper (``nona ...``). Each paper issue adds its commands
to its group; heavy imports stay inside the commands so ``schedlab --help`` is instant.
"""

from __future__ import annotations

import json
import sys

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="schedlab")
def main() -> None:
    """Reproducible research suite for Nona, PolarisProfiler and PCS."""


@main.command()
@click.argument("names", nargs=-1)
@click.option("--mirror", type=click.Path(file_okay=False), default=None,
              help="Mirror folder (default: $SCHEDLAB_MIRROR, else ../shared/data). Use '' to download.")
@click.option("--force", is_flag=True, help="Fetch and verify again even if a verified copy exists.")
@click.option("--optional", "include_optional", is_flag=True,
              help="Also fetch optional upstream archives (the full PAI trace, ~1.5 GB).")
@click.option("--list", "list_only", is_flag=True, help="List the matching manifest entries and exit.")
def fetch(names: tuple[str, ...], mirror: str | None, force: bool, include_optional: bool, list_only: bool) -> None:
    """Fetch raw inputs NAMES (entries or folders like 'nona', 'pcs/workload2_philly_traces').

    With no NAMES, every non-optional entry of the manifest. Files are verified by sha256
    and written atomically, read-only, under data/raw/.
    """
    from schedlab import data

    try:
        chosen = data.select(list(names), include_optional=include_optional)
        if list_only:
            for e in chosen:
                src = e.urls[0] if e.urls else f"(mirror only: {e.derived or 'no public URL'})"
                click.echo(f"{e.name}\t{e.size}\t{e.sha256[:12]}\t{src}")
            return
        mirror_arg = "default" if mirror is None else (mirror or None)
        fetched = [data.fetch_entry(e, mirror=mirror_arg, force=force) for e in chosen]
    except (KeyError, data.FetchError) as exc:
        raise click.ClickException(str(exc).strip('"')) from None
    click.echo(f"{len(fetched)} raw input(s) verified under data/raw/")


@main.group()
def notebook() -> None:
    """Run the suite's notebooks."""


@notebook.command("run")
@click.argument("name")
@click.option("--output-root", type=click.Path(file_okay=False), default=None,
              help="Root for results/ and figures/ (default: the repository).")
def notebook_run(name: str, output_root: str | None) -> None:
    """Execute notebooks/NAME.ipynb with its params.yaml section (e.g. nona/table2)."""
    from pathlib import Path

    from schedlab import notebooks

    try:
        out = notebooks.run(name, output_root=Path(output_root) if output_root else None)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"executed {name} -> {out}")


@main.command()
@click.argument("paper")
@click.option("--out-dir", type=click.Path(file_okay=False), default=None,
              help="Where comparison.json/.md go (default: results/PAPER).")
def compare(paper: str, out_dir: str | None) -> None:
    """Compare the pipeline's numbers with reference/PAPER.yaml; write comparison.json and .md."""
    from pathlib import Path

    from schedlab import paths, reference

    try:
        table = reference.write_comparison(paper, Path(out_dir) if out_dir else paths.results(paper))
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(reference.to_markdown(table, f"{paper}: paper vs schedlab"))


@main.group()
def nona() -> None:
    """Nona: DNN inference DAGs, contraction, optimisation, simulation."""


@nona.command("contract")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--schedule", type=click.Choice(["rounds", "sequential"]), default="rounds", show_default=True,
              help="rounds: the paper's contract-all-of-C-per-round; sequential: one edge at a time.")
def nona_contract(path: str, as_json: bool, schedule: str) -> None:
    """Contract the PipeDream graph.txt at PATH with Nona's rule."""
    from schedlab.nona.contraction import bottleneck_nodes, contract
    from schedlab.nona.graphs import GraphFormatError, read_graph

    try:
        g = read_graph(path)
    except GraphFormatError as exc:
        raise click.ClickException(str(exc)) from None
    h = contract(g, schedule)  # type: ignore[arg-type]
    result = {
        "path": path,
        "pre_nodes": g.number_of_nodes(),
        "post_nodes": h.number_of_nodes(),
        "pre_edges": g.number_of_edges(),
        "post_edges": h.number_of_edges(),
        "bottlenecks": bottleneck_nodes(h),
        "nodes": [
            {"id": n, "members": list(d["members"]), "forward_ms": d["forward_ms"],
             "parameter_bytes": d["parameter_bytes"]}
            for n, d in h.nodes(data=True)
        ],
        "edges": [{"source": u, "target": v, "bytes": d["bytes"]} for u, v, d in h.edges(data=True)],
    }
    if as_json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return
    click.echo(f"{path}: {result['pre_nodes']} tasks / {result['pre_edges']} edges -> "
               f"{result['post_nodes']} tasks / {result['post_edges']} edges")
    for node in result["nodes"]:
        click.echo(f"  {node['id']}: {len(node['members'])} member(s), {node['forward_ms']:.3f} ms")


@nona.command("simulate")
@click.option("--scheme", required=True,
              help="random | opportunistic | spark_fair | nona | nona_star | expert | decima")
@click.option("--load", type=float, required=True, help="Compute load sum_j lambda_j S_j / servers, in (0, 1).")
@click.option("--bandwidth-gbps", type=float, default=10.0, show_default=True, help="Bottleneck link capacity.")
@click.option("--servers", type=int, default=80, show_default=True)
@click.option("--duration", type=float, default=60.0, show_default=True, help="Measured window, seconds.")
@click.option("--warmup", type=float, default=None, help="Warm-up, seconds (default 10% of --duration).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--models", default="gpt2,densenet121,vgg16,alexnet,resnet18", show_default=True,
              help="Comma-separated inference classes (gpt2 needs data/generated/nona/gpt2/graph.txt).")
@click.option("--tables", type=click.Path(dir_okay=False), default=None,
              help="Optimiser JSON (`schedlab nona solve --json`); required for nona, nona_star, expert.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="Per-job records (parquet).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def nona_simulate(scheme, load, bandwidth_gbps, servers, duration, warmup, seed, models, tables, out, as_json):
    """Simulate SCHEME at compute LOAD on Nona's cluster; write per-job records to OUT."""
    from schedlab.nona import schedulers
    from schedlab.nona.sim import SimInputError

    try:
        schedulers.check_point(scheme, load, bandwidth_gbps, servers, duration, tables)
        res = schedulers.run_point(scheme, load=load, bandwidth_gbps=bandwidth_gbps, servers=servers,
                                   duration=duration, warmup=warmup, seed=seed,
                                   models=[m.strip() for m in models.split(",") if m.strip()], tables=tables)
    except (ValueError, FileNotFoundError, SimInputError, schedulers.SchemeUnavailable) as exc:
        raise click.ClickException(str(exc)) from None
    res.to_parquet(out)
    summary = res.summary()
    summary["out"] = out
    if as_json:
        json.dump(summary, sys.stdout, default=float)
        sys.stdout.write("\n")
        return
    click.echo(f"{scheme} at load {load}, {bandwidth_gbps} Gbps, {servers} servers: {summary['jobs']} jobs, "
               f"mean JCT {summary['mean_jct_s']:.4g} s, p99 {summary['p99_jct_s']:.4g} s, "
               f"inference mean {summary['inference_mean_jct_s']:.4g} s; "
               f"{summary['events']} events in {summary['wall_s']:.2f} s -> {out}")


# --------------------------------------------------------------------------------------------
# PolarisProfiler (issue 6): `schedlab profile ...`


@main.group()
def profile() -> None:
    """PolarisProfiler on the Alibaba PAI trace (real archives or a synthetic stand-in)."""


def _profile_errors():
    from schedlab.profiling.ingest import TraceFormatError

    return (ValueError, FileNotFoundError, TraceFormatError)


@profile.command("synthesize")
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--jobs", default="ci", show_default=True,
              help="Number of jobs, or a preset: ci (3,000), small, medium, real (1,055,501).")
@click.option("--seed", type=int, default=0, show_default=True)
def profile_synthesize(out_dir, jobs, seed):
    """Write a SYNTHETIC trace (pai_<table>.tar.gz, upstream format) calibrated on the 800 real rows."""
    import numpy as np

    from schedlab.profiling import synthetic

    try:
        counts = synthetic.synthesize(out_dir, int(jobs) if str(jobs).isdigit() else jobs,
                                      np.random.default_rng(seed))
    except _profile_errors() as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"SYNTHETIC trace in {out_dir}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))


@profile.command("ingest")
@click.argument("trace_dir", type=click.Path(file_okay=False))
@click.argument("work_dir", type=click.Path(file_okay=False))
@click.option("--join", "kind", type=click.Choice(["faithful", "corrected"]), default="faithful", show_default=True)
@click.option("--memory-limit", default="4GB", show_default=True, help="DuckDB memory limit (spills beyond).")
@click.option("--threads", type=int, default=2, show_default=True)
@click.option("--verify", is_flag=True, help="Check each archive's sha256 against the upstream checksums.")
def profile_ingest(trace_dir, work_dir, kind, memory_limit, threads, verify):
    """Convert TRACE_DIR's archives to Parquet and write WORK_DIR/joined_<join>.parquet."""
    from pathlib import Path

    from schedlab import data
    from schedlab.profiling import ingest
    from schedlab.profiling.schema import TRACE_TABLES

    try:
        sums = {t: data.entry(f"alibaba-pai/{t}.tar.gz").sha256 for t in TRACE_TABLES} if verify else None
        pq = ingest.ingest_archives(trace_dir, work_dir, checksums=sums)
        info = ingest.join(pq, Path(work_dir) / f"joined_{kind}.parquet", kind=kind, memory_limit=memory_limit,
                           threads=threads, temp_directory=Path(work_dir) / ".duckdb_tmp")
    except _profile_errors() as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{info.kind} join: {info.rows:,} rows -> {info.path}")
    for w, n in info.per_workload.items():
        click.echo(f"  {w}: {n:,}")


@profile.command("sample")
@click.argument("joined", type=click.Path(dir_okay=False, exists=True))
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--total", type=int, default=100_000, show_default=True,
              help="Target size; per-stratum rounding gives 100,001 on the real trace.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--keep-zero-strata", is_flag=True, help="Strata rounding to 0 rows give 0 rows instead of an error.")
def profile_sample(joined, out, total, seed, keep_zero_strata):
    """Table I: stratified sample of JOINED by workload, written to OUT (Parquet)."""
    import numpy as np

    from schedlab.io import atomic_path
    from schedlab.profiling import sampling

    try:
        df = sampling.stratified_sample(joined, total, np.random.default_rng(seed),
                                         on_zero="keep" if keep_zero_strata else "error")
    except _profile_errors() as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(out) as tmp:
        df.to_parquet(tmp)
    click.echo(f"{len(df):,} rows -> {out}: {df.workload.value_counts().to_dict()}")


@profile.command("grid")
@click.argument("sample", type=click.Path(dir_okay=False, exists=True))
@click.argument("out_csv", type=click.Path(dir_okay=False))
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False), required=True,
              help="Per-configuration cache (an interrupted grid resumes from it).")
@click.option("--algorithms", default="hdbscan,optics", show_default=True)
@click.option("--min-cluster-sizes", default="50,100,200,300,400,600,1000", show_default=True)
@click.option("--workers", "--n-jobs", "n_jobs", type=int, default=None,
              help="Local worker processes (default 1: in this process).")
@click.option("--scheduler", default=None,
              help="Dask scheduler address (tcp://host:8786): run the grid on that cluster instead.")
@click.option("--optics-subsample", type=int, default=10_000, show_default=True, help="0 = all rows.")
@click.option("--silhouette-sample", type=int, default=0, show_default=True, help="0 = all rows.")
@click.option("--seed", type=int, default=0, show_default=True)
def profile_grid(sample, out_csv, cache_dir, algorithms, min_cluster_sizes, n_jobs, scheduler, optics_subsample,
                 silhouette_sample, seed):
    """Tables III/IV: run the clustering grid on SAMPLE's 17 features; per-run table to OUT_CSV."""
    from schedlab.io import atomic_path
    from schedlab.profiling import grid, ingest

    if n_jobs is not None and scheduler is not None:
        raise click.BadParameter("give either --workers or --scheduler", param_hint="--scheduler")
    try:
        X = ingest.feature_matrix(ingest.load_features(sample))
        cfgs = grid.configs(algorithms=algorithms.split(","),
                            min_cluster_sizes=[int(k) for k in min_cluster_sizes.split(",")])
        table = grid.run_grid(X, cfgs, cache_dir, n_jobs=n_jobs or 1, scheduler=scheduler, seed=seed,
                              silhouette_sample=silhouette_sample or None, optics_subsample=optics_subsample or None)
    except _profile_errors() as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)
    for a in table.algorithm.unique():
        b = grid.best(table, a)
        click.echo(f"best {a}: {b['transform']}, {b.metric}, {b.min_cluster_size} -> {b.n_clusters} clusters, "
                   f"{b.n_outliers} outliers, ACQUIRES {b.scores_v1:.4f}")


@profile.command("train")
@click.argument("sample", type=click.Path(dir_okay=False, exists=True))
@click.argument("grid_csv", type=click.Path(dir_okay=False, exists=True))
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False), required=True)
@click.option("--algorithm", default="hdbscan", show_default=True)
def profile_train(sample, grid_csv, model, cache_dir, algorithm):
    """Table V: train the metadata classifier on the best run's profiles; save it to MODEL (joblib)."""
    import joblib
    import pandas as pd

    from schedlab.io import atomic_path
    from schedlab.profiling import ingest, pipeline

    try:
        df, run = pipeline.attach_profiles(ingest.load_features(sample), pd.read_csv(grid_csv), cache_dir,
                                           algorithm=algorithm)
        clf, rep, _ = pipeline.train_and_report(df)
    except _profile_errors() as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(model) as tmp:
        joblib.dump(clf, tmp)
    acc = rep.set_index("profile").loc["accuracy", "f1-score"]
    click.echo(f"profiles of {run.algorithm} {run['transform']}/{run.metric}/{run.min_cluster_size}; "
               f"validation accuracy {acc:.4f} -> {model}")


@profile.command("predict")
@click.argument("model", type=click.Path(dir_okay=False, exists=True))
@click.argument("jobs", type=click.Path(dir_okay=False, exists=True))
@click.argument("out", type=click.Path(dir_okay=False))
def profile_predict(model, jobs, out):
    """Predict profile and expected duration for JOBS (CSV or Parquet with the metadata columns)."""
    import joblib
    import pandas as pd

    from schedlab.io import atomic_path

    df = pd.read_parquet(jobs) if str(jobs).endswith(".parquet") else pd.read_csv(jobs)
    clf = joblib.load(model)
    try:
        res = df.assign(profile=clf.predict(df), expected_duration=clf.predict_duration(df))
    except _profile_errors() as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(out) as tmp:
        res.to_csv(tmp, index=False)
    click.echo(f"{len(res):,} predictions -> {out}")


# ---------------------------------------------------------------------------------------------
# PCS (issue 7): the elastic GPU-job simulator
@main.group()
def pcs() -> None:
    """PCS: WFQ and baseline GPU schedulers with the JCT predictor."""


@pcs.command("simulate")
@click.option("--trace", "trace_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Trace CSV in the authors' format (app_id,submit_time,service,num_jobs,sleep_time[,model_name]), .csv or .csv.gz.")
@click.option("--policy", required=True, help="FIFO, SRSF (Tiresias), LAS, FS (Max-Min), AFS, THEMIS, PCS (WFQ).")
@click.option("--themis-lease", default=600.0, show_default=True, type=float,
              help="Themis lease in seconds (the authors: 600, 10 for the gavel workload).")
@click.option("--themis-variant", type=click.Choice(["paper", "2024", "fig8-runs"]), default="paper",
              show_default=True,
              help="Themis as the paper's Fig. 7 (speedup valuation), the authors' 2024 code (linear "
                   "valuation) or their stored Fig. 8 runs (replay with true sizes, no lease ticks).")
@click.option("--config", "config", default=None,
              help="WFQ config: a JSON file with one config, or a name in pcs_configs.json (PCS only).")
@click.option("--gpus", default=64, show_default=True, type=int, help="Cluster size.")
@click.option("--num-jobs", default=None, type=int, help="Simulate the first N jobs (default: all).")
@click.option("--predict", is_flag=True, help="Predict each job's JCT at its arrival.")
@click.option("--p-error", default=None, type=float, help="Job-size estimation error in percent (with --predict).")
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


@nona.command("solve")
@click.option("--load", type=float, default=0.5, show_default=True,
              help="Compute load sum_j lambda_j S_j / servers, in (0, 1).")
@click.option("--bandwidth-gbps", type=float, default=10.0, show_default=True, help="Bottleneck link capacity.")
@click.option("--servers", type=int, default=80, show_default=True)
@click.option("--method", type=click.Choice(["global", "local", "penalty"]), default="global", show_default=True,
              help="global: certified LP branch and bound over the link wait; local: softmax + L-BFGS "
                   "multi-start; penalty: the paper's Lagrangian penalty, first order.")
@click.option("--models", default="gpt2,densenet121,vgg16,alexnet,resnet18", show_default=True,
              help="Comma-separated inference classes (gpt2 needs data/generated/nona/gpt2/graph.txt).")
@click.option("--comm-load", type=float, default=None, help="Background link load (default: --load).")
@click.option("--json", "as_json", is_flag=True, help="Print the optimiser JSON (the simulator's input).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Also write the JSON to this file.")
def nona_solve(load, bandwidth_gbps, servers, method, models, comm_load, as_json, out):
    """Solve Nona's placement optimisation (section III-C) for the section IV workload."""
    from schedlab.io import atomic_write_json
    from schedlab.nona.optimise import solve_point

    try:
        res, doc = solve_point(load, bandwidth_gbps=bandwidth_gbps, servers=servers, method=method,
                               models=[m.strip() for m in models.split(",") if m.strip()],
                               workload_kwargs={"comm_load": comm_load})
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    if out:
        atomic_write_json(out, doc)
    if as_json:
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
        return
    gap = "" if res.gap is None else f", certified gap {res.gap:.3g}"
    click.echo(f"{method}: objective {res.objective:.6g} (mean JCT {res.mean_jct_s:.4g} s), link load "
               f"{res.rho:.3f}, wait {res.phi * 1e3:.3g} ms, search space {doc['search_space']} over "
               f"{doc['n_distributions']} distributions, {res.solve_seconds:.3f} s{gap}")
    for name, c in doc["classes"].items():
        dist = sum(1 - sg["options"][0]["p"] if sg["options"] and len(sg["options"][0]["partition"]) == 1 else 1
                   for sg in c.get("subgraphs", []))
        click.echo(f"  {name}: rate {c['arrival_rate']:.4g}/s, predicted JCT {c['predicted_jct_s']:.4g} s"
                   + (f", {len(c['subgraphs'])} subgraph(s), expected distributed {dist:.3f}" if c.get("subgraphs") else ""))


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
@click.option("--workers", default=None, type=int, help="Local processes (default: all cores).")
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
    from schedlab.pcs.pareto import PreferenceError, make_executor, parse_objectives, pareto_search

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
        ex = make_executor(workers, scheduler)
        t0 = time.perf_counter()
        try:
            front = pareto_search(w, objs, budget=budget, space=space, gpus=gpus,
                                  rng=np.random.default_rng(seed), executor=ex, checkpoint_dir=resume)
        finally:
            ex.close()
        dt = time.perf_counter() - t0
    except (TraceError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(out) as tmp:
        front.table.to_csv(tmp, index=False, float_format="%.17g")
    click.echo(f"{len(front)} Pareto-optimal configs from {front.n_evaluations} simulations of {len(w)} jobs "
               f"in {dt:.1f} s -> {out}")
