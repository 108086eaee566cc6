"""``schedlab polaris ...``: PolarisProfiler on the Alibaba PAI trace, step by step:
synthesize (or take the real archives), ingest, sample, grid, train, predict."""

from __future__ import annotations

import click

from schedlab.cli._checks import POSITIVE_INTS as _POSITIVE_INTS

#: the columns of `polaris grid`'s table that `polaris train` reads
_GRID_COLUMNS = ("algorithm", "transform", "metric", "min_cluster_size", "key", "scores_v1")


@click.group()
def polaris() -> None:
    """PolarisProfiler on the Alibaba PAI trace (real archives or a synthetic stand-in)."""


def _polaris_errors():
    from schedlab.polaris.ingest import TraceFormatError

    return (ValueError, FileNotFoundError, TraceFormatError)


def _parquet_with(path: str, needed, what: str):
    """``path`` if it is a Parquet file with the ``needed`` columns, else one line naming the file,
    the missing columns and ``what`` it should be (read from the footer: no rows are loaded)."""
    import pyarrow.parquet as pq

    from schedlab.cli._checks import require_columns
    from schedlab.polaris import ingest

    try:
        ingest.require_parquet(path, what)
        names = pq.read_schema(path).names
    except (ingest.TraceFormatError, OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise click.ClickException(str(exc).splitlines()[0]) from None
    require_columns(names, tuple(needed), path, what)
    return path


@polaris.command("synthesize")
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option(
    "--jobs",
    default="ci",
    show_default=True,
    help="Number of jobs, or a preset: ci (3,000), small, medium, real (1,055,501).",
)
@click.option("--seed", type=int, default=0, show_default=True)
def polaris_synthesize(out_dir, jobs, seed):
    """Write a SYNTHETIC trace (pai_<table>.tar.gz, upstream format) calibrated on the 800 real rows."""
    import numpy as np

    from schedlab.cli._checks import writable
    from schedlab.polaris import synthetic

    writable(out_dir, "OUT_DIR", folder=True)
    try:
        counts = synthetic.synthesize(
            out_dir, int(jobs) if str(jobs).isdigit() else jobs, np.random.default_rng(seed)
        )
    except _polaris_errors() as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"SYNTHETIC trace in {out_dir}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))


@polaris.command("ingest")
@click.argument("trace_dir", type=click.Path(file_okay=False))
@click.argument("work_dir", type=click.Path(file_okay=False))
@click.option(
    "--join",
    "kind",
    type=click.Choice(["faithful", "corrected", "authors"]),
    default="faithful",
    show_default=True,
    help="authors: the authors' pandas row-count quirks (schedlab.polaris.ingest).",
)
@click.option("--memory-limit", default="4GB", show_default=True, help="DuckDB memory limit (spills beyond).")
@click.option("--threads", type=int, default=2, show_default=True)
@click.option(
    "--verify",
    is_flag=True,
    help="Check each archive's size and sha256 against the upstream ones "
    "(data manifest) before anything is converted.",
)
@click.option(
    "--materialize",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Write the joined rows out too: auto = only a join of at most 2,000,000 rows (the real "
    "trace's 36.7 M stay a plan; `polaris sample` builds just the rows it draws).",
)
def polaris_ingest(trace_dir, work_dir, kind, memory_limit, threads, verify, materialize):
    """Convert TRACE_DIR's archives to Parquet (WORK_DIR/parquet/) and plan the join, as the pipeline.

    The faithful and authors joins are planned from the key columns only
    (WORK_DIR/plan_<join>.parquet, the rows per workload and every row's number); a plan of at
    most 2,000,000 rows is also written out as WORK_DIR/joined_<join>.parquet (--materialize).
    `schedlab polaris sample` reads either and draws the same rows. The corrected join is always
    written out.
    """
    from pathlib import Path

    from schedlab.cli._checks import writable
    from schedlab.polaris import pipeline

    writable(work_dir, "WORK_DIR", folder=True)
    try:
        info = pipeline.ingest_and_join(
            Path(trace_dir),
            Path(work_dir),
            kind,
            memory_limit,
            verify=verify,
            materialize={"auto": None, "always": True, "never": False}[materialize],
            threads=threads,
            temp_directory=Path(work_dir) / ".duckdb_tmp",
        )
    except _polaris_errors() as exc:
        raise click.ClickException(str(exc)) from None
    what = "rows" if info.path.name.startswith("joined_") else "rows planned"
    click.echo(f"{info.kind} join: {info.rows:,} {what} -> {info.path}")
    for w, n in info.per_workload.items():
        click.echo(f"  {w}: {n:,}")


@polaris.command("sample")
@click.argument("joined", type=click.Path(dir_okay=False, exists=True))
@click.argument("out", type=click.Path(dir_okay=False))
@click.option(
    "--total",
    type=int,
    default=100_000,
    show_default=True,
    help="Target size; per-stratum rounding gives 100,001 on the real trace.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="The pipeline's seed: the same seed draws the same rows as notebook polaris/pipeline.",
)
@click.option(
    "--authors-seed",
    type=int,
    default=None,
    help="Draw as the authors' pandas code instead: DataFrame.sample(n, random_state=SEED) per "
    "stratum (their EDA notebook used 123); --seed is then ignored.",
)
@click.option(
    "--keep-zero-strata", is_flag=True, help="Strata rounding to 0 rows give 0 rows instead of an error."
)
def polaris_sample(joined, out, total, seed, authors_seed, keep_zero_strata):
    """Table I: stratified sample of JOINED (the join plan or joined table `polaris ingest` wrote)
    by workload, written to OUT (Parquet); the 17 features NaN-filled with 0, as the pipeline."""
    from schedlab.cli._checks import writable
    from schedlab.io import atomic_path
    from schedlab.polaris import ingest, pipeline

    writable(out, "OUT")
    # before DuckDB opens it (and its spill folder): a file of other columns ends in one line
    try:
        plan = ingest.is_plan(joined)
    except (ingest.TraceFormatError, OSError, ValueError) as exc:
        raise click.ClickException(str(exc).splitlines()[0]) from None
    if not plan:
        _parquet_with(joined, ("row", "workload"), "the joined trace written by `schedlab polaris ingest`")
    try:
        df = pipeline.draw_sample(
            joined, total, seed, keep_zero_strata=keep_zero_strata, authors_seed=authors_seed
        )
    except _polaris_errors() as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(out) as tmp:
        df.to_parquet(tmp)
    click.echo(f"{len(df):,} rows -> {out}: {df.workload.value_counts().to_dict()}")


@polaris.command("grid")
@click.argument("sample", type=click.Path(dir_okay=False, exists=True))
@click.argument("out_csv", type=click.Path(dir_okay=False))
@click.option(
    "--cache",
    "cache_dir",
    type=click.Path(file_okay=False),
    required=True,
    help="Per-configuration cache (an interrupted grid resumes from it).",
)
@click.option("--algorithms", default="hdbscan,optics", show_default=True)
@click.option(
    "--min-cluster-sizes",
    type=_POSITIVE_INTS,
    default="50,100,200,300,400,600,1000",
    show_default=True,
    help="Comma-separated positive integers, each at most the rows clustered.",
)
@click.option(
    "--workers",
    "--n-jobs",
    "n_jobs",
    type=int,
    default=None,
    help="Local worker processes (default 1: in this process).",
)
@click.option(
    "--scheduler",
    default=None,
    help="Dask scheduler address (tcp://host:8786): run the grid on that cluster instead.",
)
@click.option("--optics-subsample", type=int, default=10_000, show_default=True, help="0 = all rows.")
@click.option("--silhouette-sample", type=int, default=0, show_default=True, help="0 = all rows.")
@click.option("--seed", type=int, default=0, show_default=True)
def polaris_grid(
    sample,
    out_csv,
    cache_dir,
    algorithms,
    min_cluster_sizes,
    n_jobs,
    scheduler,
    optics_subsample,
    silhouette_sample,
    seed,
):
    """Tables III/IV: run the clustering grid on SAMPLE's 17 features; per-run table to OUT_CSV."""
    from schedlab.cli._checks import writable
    from schedlab.io import atomic_path
    from schedlab.polaris import grid, ingest

    if n_jobs is not None and scheduler is not None:
        raise click.BadParameter("give either --workers or --scheduler", param_hint="--scheduler")
    writable(out_csv, "OUT_CSV")
    writable(cache_dir, "--cache", folder=True)
    _parquet_with(sample, ingest.FEATURES, "a sample with the 17 features (`schedlab polaris sample`)")
    try:
        X = ingest.feature_matrix(ingest.load_features(sample))
        cfgs = grid.configs(algorithms=algorithms.split(","), min_cluster_sizes=min_cluster_sizes)
        _check_sizes(cfgs, len(X), optics_subsample or None, sample)
        table = grid.run_grid(
            X,
            cfgs,
            cache_dir,
            n_jobs=n_jobs or 1,
            scheduler=scheduler,
            seed=seed,
            silhouette_sample=silhouette_sample or None,
            optics_subsample=optics_subsample or None,
        )
    except _polaris_errors() as exc:
        raise click.ClickException(str(exc)) from None
    try:
        bests = {a: grid.best(table, a) for a in table.algorithm.unique()}  # before the CSV is written
    except ValueError as exc:
        raise click.ClickException(
            f"{exc}: every run of it on {sample} found no cluster (all rows noise), so no "
            f"{out_csv} was written; expected --min-cluster-sizes small enough for "
            "clusters to form"
        ) from None
    with atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)
    for a, b in bests.items():
        click.echo(
            f"best {a}: {b['transform']}, {b.metric}, {b.min_cluster_size} -> {b.n_clusters} clusters, "
            f"{b.n_outliers} outliers, ACQUIRES {b.scores_v1:.4f}"
        )


def _check_sizes(cfgs, n_rows: int, optics_subsample: int | None, sample: str) -> None:
    """Refuse a ``--min-cluster-sizes`` larger than the rows a configuration clusters (all rows for
    HDBSCAN; at most ``--optics-subsample`` for OPTICS) before the grid starts: such a run finds no
    cluster, or the library refuses it, after the cache is written."""
    for cfg in cfgs:
        rows = n_rows if cfg.algorithm != "optics" or not optics_subsample else min(n_rows, optics_subsample)
        if cfg.min_cluster_size > rows:
            of = f"the {rows:,} rows {cfg.algorithm} clusters in {sample}"
            raise click.BadParameter(
                f"{cfg.min_cluster_size} is larger than {of}; expected sizes <= {rows:,}",
                param_hint="--min-cluster-sizes",
            )


@polaris.command("train")
@click.argument("sample", type=click.Path(dir_okay=False, exists=True))
@click.argument("grid_csv", type=click.Path(dir_okay=False, exists=True))
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False), required=True)
@click.option("--algorithm", default="hdbscan", show_default=True)
def polaris_train(sample, grid_csv, model, cache_dir, algorithm):
    """Table V: train the metadata classifier on the best run's profiles; save it to MODEL (joblib)."""
    import joblib

    from schedlab.cli._checks import read_csv, writable
    from schedlab.io import atomic_path
    from schedlab.polaris import ingest, pipeline
    from schedlab.polaris.schema import METADATA

    writable(model, "MODEL")
    _parquet_with(
        sample, (*METADATA, "duration"), "the sample the grid clustered (`schedlab polaris sample`)"
    )
    table = read_csv(grid_csv, "the grid table written by `schedlab polaris grid`", _GRID_COLUMNS)
    try:
        df, run = pipeline.attach_profiles(
            ingest.load_features(sample), table, cache_dir, algorithm=algorithm
        )
        clf, rep, _ = pipeline.train_and_report(df)
    except _polaris_errors() as exc:
        raise click.ClickException(str(exc)) from None
    with atomic_path(model) as tmp:
        joblib.dump(clf, tmp)
    acc = pipeline.report_accuracy(rep)
    click.echo(
        f"profiles of {run.algorithm} {run['transform']}/{run.metric}/{run.min_cluster_size}; "
        f"validation accuracy {acc:.4f} -> {model}"
    )


def _load_model(path: str):
    """The classifier ``schedlab polaris train`` saved, or a clear error naming the file."""
    import joblib

    from schedlab.polaris.classifier import ProfileClassifier

    try:
        clf = joblib.load(path)
    except Exception as exc:  # joblib/pickle raise many types on foreign or damaged files
        raise click.ClickException(
            f"{path}: not a model file saved by `schedlab polaris train` "
            f"({type(exc).__name__}: {str(exc)[:120]})"
        ) from None
    if not isinstance(clf, ProfileClassifier):
        raise click.ClickException(
            f"{path}: holds a {type(clf).__name__}, not the ProfileClassifier `schedlab polaris train` saves"
        )
    return clf


def _read_jobs(path: str):
    """JOBS as a DataFrame (Parquet by extension, else CSV), or a clear error naming the file."""
    import pandas as pd

    try:
        return pd.read_parquet(path) if str(path).endswith(".parquet") else pd.read_csv(path)
    except Exception as exc:  # pandas/pyarrow raise parser-specific types
        kind = "Parquet" if str(path).endswith(".parquet") else "CSV"
        raise click.ClickException(
            f"{path}: cannot be read as {kind} job metadata ({type(exc).__name__}: {str(exc)[:120]})"
        ) from None


@polaris.command("predict")
@click.argument("model", type=click.Path(dir_okay=False, exists=True))
@click.argument("jobs", type=click.Path(dir_okay=False, exists=True))
@click.argument("out", type=click.Path(dir_okay=False))
def polaris_predict(model, jobs, out):
    """Predict profile and expected duration for JOBS (CSV or Parquet with the metadata columns);
    OUT's format follows its extension (.csv or .parquet)."""
    from schedlab.cli._checks import table_format, writable, write_table

    fmt = table_format(out, "OUT")
    writable(out, "OUT")
    clf = _load_model(model)
    df = _read_jobs(jobs)
    try:
        res = df.assign(profile=clf.predict(df), expected_duration=clf.predict_duration(df))
    except _polaris_errors() as exc:
        raise click.ClickException(str(exc)) from None
    write_table(res, out, fmt)
    click.echo(f"{len(res):,} predictions -> {out}")
