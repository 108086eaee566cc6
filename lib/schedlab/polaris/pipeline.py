"""The end-to-end pipeline's steps (notebook ``polaris/pipeline`` and the CLI): trace, Table I
sample, profiles from a grid run, classifier training, the duration test on unseen jobs.

Every random step draws from its own generator ``default_rng([seed, k])`` (``k`` fixed per
step), so a step's result does not depend on which other steps ran before it.

Examples
--------
>>> work_dir("/repo", "", 3000, 0).as_posix()
'/repo/data/cache/polaris/synthetic_3000_0'
>>> df = attach_profiles(sample, grid_table, cache_dir)        # doctest: +SKIP
>>> clf, rep, test = train_and_report(df)                       # doctest: +SKIP
"""

from __future__ import annotations

import multiprocessing
import shutil
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from schedlab.cachekey import compute_fingerprint
from schedlab.io import atomic_write_text
from schedlab.polaris import classifier, duration, grid, ingest, sampling, synthetic
from schedlab.polaris import planted as planted_mod  # `planted` is also a parameter name here
from schedlab.polaris.schema import FEATURES

#: the relative-error thresholds Figure 5's shares are reported at (the text's 5 % and the
#: authors' code's 5.0 = 500 %, see :mod:`schedlab.polaris.duration`, and two in between)
FIG5_THRESHOLDS = (0.05, 0.2, 1.0, 5.0)
#: the metadata columns Figure 4's heatmaps set against the profiles (as the authors' repository)
HEATMAP_COLUMNS = ("workload", "user", "task_name", "group", "job_name")


def data_label(trace_dir: str | Path) -> str:
    """``REAL`` with a trace folder of real archives, else ``SYNTHETIC`` (printed on every output)."""
    return "REAL" if trace_dir else "SYNTHETIC"


def work_dir(
    root: str | Path,
    trace_dir: str | Path,
    n_jobs: int | str,
    seed: int,
    planted: str = "",
    planted_spread: float = planted_mod.PLANTED_SPREAD,
) -> Path:
    """The pipeline's cache folder under ``root``: one per real trace or synthetic size, seed,
    planted structure (:func:`schedlab.polaris.planted.plant_profiles`; ``""``: none) and its spread.

    >>> work_dir("/repo", "", 3000, 0, "authors").name
    'synthetic_3000_0_planted-authors-s0.1'
    """
    name = (
        "real"
        if trace_dir
        else f"synthetic_{n_jobs}_{seed}" + (f"_planted-{planted}-s{planted_spread:g}" if planted else "")
    )
    return Path(root) / "data" / "cache" / "polaris" / name


@contextmanager
def timed(timings: dict[str, float], name: str) -> Iterator[None]:
    """Add the wall time of the ``with`` block to ``timings[name]`` (seconds)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = time.perf_counter() - t0


def trace_folder(
    trace_dir: str | Path,
    work: Path,
    n_jobs: int | str,
    seed: int,
    planted: str = "",
    planted_spread: float = planted_mod.PLANTED_SPREAD,
) -> Path:
    """``trace_dir`` if given; else a synthetic trace of ``n_jobs`` jobs (a count or a preset of
    :data:`schedlab.polaris.synthetic.SIZES`, e.g. ``"real"``) under ``work/trace``, written once;
    ``planted`` plants profiles in it and writes their labels beside it (``synthesize(planted=)``)."""
    if trace_dir:
        return Path(trace_dir)
    tdir = work / "trace"
    _drop_if_other_generator(work)
    done = (tdir / "pai_task_table.tar.gz").is_file() and (
        not planted or (tdir / planted_mod.PLANTED_LABELS).is_file()
    )
    if not done:
        synthetic.synthesize(
            tdir,
            n_jobs,
            np.random.default_rng([seed, 1]),
            planted=planted or None,
            planted_spread=planted_spread,
            progress=False,
        )
        atomic_write_text(work / GENERATOR_STAMP, generator_fingerprint())
    return tdir


#: the file in a synthetic work folder naming the generator that wrote its trace
GENERATOR_STAMP = "generator.sha256"
#: the modules whose code decides a synthetic trace's bytes
GENERATOR_MODULES = ("synthetic", "synthetic_size", "metadata", "groups", "job_model", "planted")


def generator_fingerprint() -> str:
    """SHA-256 of the stand-in generator's source (:data:`GENERATOR_MODULES`) and of how it
    computes (:func:`schedlab.cachekey.compute_fingerprint`): a synthetic work
    folder's trace, and everything derived from it there (Parquet, join, grid runs), is only
    reused while this is unchanged.

    >>> len(generator_fingerprint())
    64
    """
    # with the package versions and CPU pins it ran under (schedlab.cachekey): a trace another
    # numeric setup drew is not reused either
    # schedlab.csvrows writes the trace's CSV text
    sources = [Path(__file__).parent / f"{name}.py" for name in GENERATOR_MODULES]
    return compute_fingerprint(*sources, Path(__file__).parents[1] / "csvrows.py")


def _drop_if_other_generator(work: Path) -> None:
    """Remove a synthetic work folder written by another version of the generator (its trace and
    every cache derived from it would silently stand in for the new generator's)."""
    stamp = work / GENERATOR_STAMP
    if not work.exists() or (stamp.is_file() and stamp.read_text() == generator_fingerprint()):
        return
    print(f"{work}: written by another version of the stand-in generator; rebuilding it", file=sys.stderr)
    shutil.rmtree(work)


def ingest_and_join(
    tdir: Path,
    work: Path,
    join: str,
    memory_limit: str,
    *,
    verify: bool | None = None,
    materialize: bool | None = None,
    threads: int = 2,
    temp_directory: str | Path | None = None,
) -> ingest.JoinInfo:
    """The trace's archives to Parquet (one decompression each), then the ``join`` (faithful /
    authors / corrected).

    faithful and authors joins are first *planned* (``work/plan_<join>.parquet``: per-workload
    row counts and every row's number, from the key columns only). With ``materialize=None`` a
    join of at most :data:`schedlab.polaris.ingest.MATERIALIZE_MAX_ROWS` rows is then also
    written to ``work/joined_<join>.parquet`` (the stand-in explorer reads it) and
    ``JoinInfo.path`` is that table; a larger one stays a plan, and :func:`draw_sample` /
    :func:`unseen_jobs` build just the rows they draw (the same rows either way).
    ``materialize=True`` always writes the table, ``False`` never; corrected is always written.

    A trace folder other than the synthetic ``work/trace`` is taken for the real trace and checked
    against the upstream sizes and sha256 before use (``verify`` overrides the guess).
    ``threads`` / ``temp_directory``: DuckDB's threads and spill folder (default: next to the output).
    This is also ``schedlab polaris ingest``'s path.
    """
    if verify is None:
        verify = Path(tdir).resolve() != (work / "trace").resolve()
    sums, sizes = ingest.upstream_checksums() if verify else (None, None)
    pq = ingest.ingest_archives(tdir, work / "parquet", checksums=sums, sizes=sizes, progress=False)
    if join in ingest.PLANNED_KINDS and materialize is not True:
        plan = ingest.plan_join(
            pq,
            work / f"plan_{join}.parquet",
            kind=join,
            memory_limit=memory_limit,
            threads=threads,
            temp_directory=temp_directory,
            progress=False,
        )
        if materialize is False or plan.rows > ingest.MATERIALIZE_MAX_ROWS:
            return plan
    return ingest.join(
        pq,
        work / f"joined_{join}.parquet",
        kind=join,
        memory_limit=memory_limit,
        threads=threads,
        temp_directory=temp_directory,
        progress=False,
    )


def draw_sample(
    joined: Path, total: int, seed: int, *, keep_zero_strata: bool, authors_seed: int | None = None
) -> pd.DataFrame:
    """Table I's stratified sample of ``joined`` (a join plan or a materialised join: same seed,
    same rows), the 17 features NaN-filled with 0. Draws from ``default_rng([seed, 2])``; with
    ``authors_seed`` as the authors' pandas code instead (:class:`schedlab.polaris.sampling.AuthorsDraw`,
    their EDA notebook's 123), ``seed`` then unused."""
    on_zero = "keep" if keep_zero_strata else "error"
    rng = np.random.default_rng([seed, 2]) if authors_seed is None else sampling.AuthorsDraw(authors_seed)
    if ingest.is_plan(joined):
        sample = sampling.sample_plan(joined, total, rng, on_zero=on_zero)
    else:
        sample = sampling.stratified_sample(joined, total, rng, on_zero=on_zero)
    sample[list(FEATURES)] = sample[list(FEATURES)].astype(float).fillna(0.0)
    return sample


def table1(per_workload: dict[str, int], sample: pd.DataFrame, label: str) -> pd.DataFrame:
    """Table I: rows per workload in the joined table and in the sample, with a Total row.

    >>> s = pd.DataFrame({"workload": ["bert", "bert", "ctr"]})
    >>> table1({"bert": 10, "ctr": 5}, s, "SYNTHETIC").to_dict("records")[-1]
    {'data': 'SYNTHETIC', 'workload': 'Total', 'size': 15, 'sampled': 3}
    """
    t1 = pd.DataFrame({"workload": list(per_workload), "size": list(per_workload.values())})
    t1["sampled"] = t1.workload.map(sample.workload.value_counts()).fillna(0).astype(int)
    t1 = pd.concat(
        [t1, pd.DataFrame([{"workload": "Total", "size": t1["size"].sum(), "sampled": len(sample)}])]
    )
    t1.insert(0, "data", label)
    return t1


def attach_profiles(
    sample: pd.DataFrame,
    table: pd.DataFrame,
    cache_dir: str | Path,
    *,
    algorithm: str = "hdbscan",
    config: dict | None = None,
) -> tuple[pd.DataFrame, pd.Series]:
    """Add a ``profile`` column (labels of the best-ACQUIRES run of ``algorithm``, or of the run
    matching ``config``: transform/metric/min_cluster_size). Rows outside a subsample get NaN."""
    if config:
        sub = table[
            (table.algorithm == algorithm)
            & (table["transform"] == config["transform"])
            & (table.metric == config["metric"])
            & (table.min_cluster_size == int(config["min_cluster_size"]))
        ]
        if sub.empty:
            raise ValueError(f"no grid run matches {config}")
        run = sub.iloc[0]
    else:
        run = grid.best(table, algorithm)
    idx, labels = grid.load_labels(cache_dir, run.key)
    prof = np.full(len(sample), np.nan)
    prof[idx] = labels
    return sample.assign(profile=prof), run


def train_and_report(df: pd.DataFrame, *, random_state: int = 5, n_jobs: int = 1):
    """Train on the clustered rows (outliers left out, as the paper), 80/20 split with
    ``random_state=5``; returns (classifier, Table V report, validation rows)."""
    clustered = df[df.profile >= 0].copy()
    clustered["profile"] = clustered["profile"].astype(int)
    if clustered["profile"].nunique() < 2:
        raise ValueError("need at least two profiles to train the classifier")
    train, test = classifier.split(clustered, random_state=random_state)
    clf = classifier.ProfileClassifier(random_state=0, n_jobs=n_jobs).fit(
        train, train.profile, train.duration
    )
    rep = classifier.report(test.profile, clf.predict(test))
    return clf, rep, test


def duration_test(clf: classifier.ProfileClassifier, jobs: pd.DataFrame) -> pd.DataFrame:
    """Predict each job's duration as its predicted profile's mean; relative error per job.
    Jobs with a non-positive duration are dropped (relative error undefined) and counted."""
    ok = jobs[jobs.duration > 0]
    pred = clf.predict(ok)
    yhat = clf.predict_duration(ok)
    out = pd.DataFrame(
        {"predicted_profile": pred, "duration": ok.duration.to_numpy(), "predicted_duration": yhat}
    )
    out["rel_error"] = duration.relative_error(yhat, out.duration)
    out.attrs["dropped_nonpositive"] = int(len(jobs) - len(ok))
    return out


def report_accuracy(report: pd.DataFrame) -> float:
    """The validation accuracy of a Table V report (:func:`schedlab.polaris.classifier.report`)."""
    return float(report.set_index("profile").loc["accuracy", "f1-score"])


#: the one-hot features the paper names as particularly relevant among its SHAP top twenty
#: (Section III-C1: task name "ps", workload "graphlearn", and a user it does not name: any user column)
PAPER_SHAP_FEATURES = ("task_name_ps", "workload_graphlearn", "user_")
#: the planted check's fields the pipeline summary keeps (:func:`planted_recovery_run`)
PLANTED_SUMMARY_KEYS = (
    "planted_spread",
    "rows",
    "planted_profiles",
    "found_profiles",
    "ari",
    "ari_non_noise",
    "lookup_ari",
    "lookup_ari_non_noise",
    "lookup_groups",
    "lookup_planted_rows_kept",
    "kmeans_k",
    "kmeans_ari",
    "kmeans_ari_non_noise",
    "margin_ari",
    "passes",
)


def paper_shap_features(top: pd.Series) -> dict:
    """Where the paper's named SHAP features (:data:`PAPER_SHAP_FEATURES`) stand in our top list
    ``top`` (one-hot column names as index, best first, :func:`shap_top`): the 1-based rank of
    each (of the best user column for ``user_``; None: not in the list) and how many are in it.

    >>> t = pd.Series([3.0, 2.0, 1.0], index=["workload_bert", "user_ab12", "task_name_ps"])
    >>> paper_shap_features(t)
    {'task_name_ps': 3, 'workload_graphlearn': None, 'user_': 2, 'in_top': 2, 'top': 3}
    """
    names = [str(c) for c in top.index]
    ranks: dict = {}
    for f in PAPER_SHAP_FEATURES:
        hit = [i + 1 for i, c in enumerate(names) if (c.startswith(f) if f.endswith("_") else c == f)]
        ranks[f] = hit[0] if hit else None
    return {**ranks, "in_top": sum(r is not None for r in ranks.values()), "top": len(names)}


def shap_top(shap_abs: pd.DataFrame, n: int = 20) -> pd.Series:
    """The ``n`` one-hot columns with the largest mean |SHAP| summed over the profiles."""
    return shap_abs.sum(axis=1).sort_values(ascending=False).head(n).rename("mean_abs_shap")


def heatmap_table(df: pd.DataFrame, columns=HEATMAP_COLUMNS, *, top: int | None) -> pd.DataFrame:
    """Rows per (metadata column, value, profile) behind Figure 4's heatmaps (long format)."""
    from schedlab.polaris import plots

    heat = []
    for c in columns:
        t = plots.metadata_profile_table(df, c, top=top)
        heat.append(t.stack().rename("rows").reset_index().rename(columns={c: "value"}).assign(column=c))
    return pd.concat(heat, ignore_index=True)[["column", "value", "profile", "rows"]]


def profile_kinds(df: pd.DataFrame) -> dict:
    """Each profile's kind, its most common workload and task name (``"bert/ps"``), against the
    kinds of the authors' 26 profiles (:data:`schedlab.polaris.planted.AUTHORS_PROFILES`, 10
    kinds): ``kinds`` (kind -> profiles), ``authors`` (kind -> their profiles), ``matched`` (how many
    of the authors' kinds have a profile), ``missing`` and ``extra`` kinds. ``df``: the sample with
    ``workload``, ``task_name`` and ``profile`` (-1: noise, left out).

    >>> d = pd.DataFrame({"workload": ["bert", "bert", "ctr"], "task_name": ["ps", "ps", "worker"],
    ...                   "profile": [0, 0, 1]})
    >>> k = profile_kinds(d)
    >>> k["kinds"], k["matched"], k["missing"][:2]
    ({'bert/ps': 1, 'ctr/worker': 1}, 2, ['bert/worker', 'ctr/evaluator'])
    """
    from schedlab.polaris.planted import AUTHORS_PROFILES

    clustered = df[df["profile"] >= 0]
    kind = (clustered["workload"].astype(str) + "/" + clustered["task_name"].astype(str)).groupby(
        clustered["profile"].to_numpy()
    )
    ours = kind.agg(lambda k: k.value_counts().sort_index().idxmax()).value_counts().sort_index()
    authors = pd.Series([f"{w}/{t}" for _, w, t, _ in AUTHORS_PROFILES]).value_counts().sort_index()
    return {
        "kinds": {k: int(v) for k, v in ours.items()},
        "authors": {k: int(v) for k, v in authors.items()},
        "matched": int(authors.index.isin(ours.index).sum()),
        "missing": sorted(set(authors.index) - set(ours.index)),
        "extra": sorted(set(ours.index) - set(authors.index)),
    }


#: how Figure 5's test rows avoid the sample (:func:`unseen_jobs`)
UNSEEN_MODES = ("jobs", "rows")
_NO_UNSEEN = (
    "{joined}: no row left for Figure 5's test with exclude={mode!r}: the sample holds every job (or "
    "row) of the join; use a larger trace (n_jobs) or a smaller sample, or duration_test_exclude: rows"
)


def unseen_jobs(
    joined: Path, sample: pd.DataFrame, n: int, seed: int, *, exclude: str = "jobs"
) -> pd.DataFrame:
    """Up to ``n`` rows of ``joined`` for Figure 5's test, drawn without replacement from
    ``default_rng([seed, 5])``, in row order.

    ``exclude="jobs"`` (default): rows of jobs with no row in ``sample`` (a job is its ``inst_id``,
    the key its rows are joined on), so no test row shares a job, and so a ``job_name``, with the
    rows the classifier learnt from. ``"rows"``: rows not in ``sample`` (a test row's job may be in it).
    The paper: "making sure they are not part of our train and validation set"; the authors'
    encoder, fitted on their whole sample, stored 3,591 values for their 999 test rows' five
    metadata columns (``reference/polaris.yaml``, ``standin.test_known_per_row``), which
    rows of sampled jobs would exceed (docs/polaris.md).
    """
    if exclude not in UNSEEN_MODES:
        raise ValueError(f"exclude must be one of {UNSEEN_MODES}, got {exclude!r}")
    rng = np.random.default_rng([seed, 5])
    if ingest.is_plan(joined):
        units, meta = ingest.read_plan(joined)
        if exclude == "rows":
            rows = ingest.unseen_rows(meta["rows"], sample["row"].to_numpy(), n, rng)
        else:
            rows = ingest.rows_of_other_jobs(units, sample["inst_id"].unique(), n, rng)
        if rows.size == 0:
            raise ValueError(_NO_UNSEEN.format(joined=joined, mode=exclude))
        return ingest.build_rows(joined, rows, units=units)
    keys = pd.read_parquet(joined, columns=["row", "inst_id"])
    if exclude == "rows":
        free = np.setdiff1d(keys["row"].to_numpy(), sample["row"].to_numpy())
    else:
        free = np.sort(keys.loc[~keys["inst_id"].isin(sample["inst_id"].unique()), "row"].to_numpy())
    if free.size == 0:
        raise ValueError(_NO_UNSEEN.format(joined=joined, mode=exclude))
    pick = np.sort(rng.choice(free, size=min(n, free.size), replace=False))
    con = ingest.connect(progress=False)
    try:
        con.register("pick", pd.DataFrame({"row": pick}))
        return con.execute(
            f"SELECT j.* FROM read_parquet('{Path(joined).as_posix()}') j JOIN pick USING (\"row\") "
            'ORDER BY "row"'
        ).fetch_df()
    finally:
        con.close()


def job_count(n_jobs: int | str) -> int:
    """A synthetic trace's job count: ``n_jobs`` itself or the count of its preset name.

    >>> job_count("real"), job_count(3000)
    (1055501, 3000)
    """
    if isinstance(n_jobs, str):
        if n_jobs not in synthetic.SIZES:
            raise ValueError(f"unknown size preset {n_jobs!r}; known: {sorted(synthetic.SIZES)}")
        return synthetic.SIZES[n_jobs]
    return int(n_jobs)


def prepare_planted(
    root: str | Path,
    n_jobs: int | str,
    seed: int,
    *,
    planted: str,
    join: str,
    memory_limit: str,
    planted_spread: float = planted_mod.PLANTED_SPREAD,
) -> tuple[Path, ingest.JoinInfo]:
    """The planted check's stand-in (its trace, Parquet and join plan) in its work folder
    (:func:`work_dir`), written once: the work folder and the join. Nothing here depends on the
    grid, so it may run before or beside it (:func:`prepare_planted_in_background`);
    :func:`planted_recovery_run` calls it again and reads what it wrote."""
    work = work_dir(root, "", n_jobs, seed, planted, planted_spread)
    tdir = trace_folder("", work, n_jobs, seed, planted, planted_spread)
    return work, ingest_and_join(tdir, work, join, memory_limit)


def prepare_planted_in_background(*args, **kwargs) -> Future:
    """:func:`prepare_planted` (same arguments) in a second process; wait with ``.result()``
    (which re-raises its error) before :func:`planted_recovery_run`.

    Synthesizing a stand-in is single-threaded (about 4 min at the paper's size), so the pipeline
    writes the planted one beside its main one and the two share the machine's cores. The trace's
    bytes do not depend on when or where it is written: it draws only from its own generator
    (``default_rng([seed, 1])`` in its own folder).
    """
    return _in_second_process(prepare_planted, *args, **kwargs)


def planted_recovery_in_background(*args, **kwargs) -> Future:
    """:func:`planted_recovery_run` (same arguments) in a second process; ``.result()`` gives its
    ``(record, sample)`` or re-raises its error.

    The check clusters one configuration on its own 100,000-row sample with one thread (about
    3 min at the paper's size) and depends only on the grid's chosen configuration, so the
    pipeline starts it as soon as that is known and draws Figure 4 and trains the classifier
    meanwhile. Its result does not depend on where it runs: the run is seeded by its
    configuration and data (:func:`schedlab.polaris.grid.run_one`), and the process is fresh.
    """
    return _in_second_process(planted_recovery_run, *args, **kwargs)


def realism(folds: int, seed: int, **options) -> pd.DataFrame:
    """The stand-in's realism table: :func:`schedlab.polaris.realism.realism_table` on the 800 real
    rows in ``folds`` folds, drawn from ``default_rng(seed)`` (what the notebook shows);
    ``options`` go to ``realism_table`` (e.g. ``min_rows``)."""
    from schedlab.polaris import calibration, realism as realism_mod

    rows = calibration.load_calibration_rows()
    return realism_mod.realism_table(rows, folds, np.random.default_rng(seed), **options)


def realism_in_background(folds: int, seed: int, **options) -> Future:
    """:func:`realism` (same arguments) in a second process; ``.result()`` gives its table or
    re-raises its error.

    The check calibrates the generator on the real rows and fits its classifiers with one thread
    (1-2 min), and depends on nothing the pipeline computes, so the pipeline starts it first and
    synthesizes the stand-ins meanwhile. Its table does not depend on where it runs: it draws only
    from its own generator, and the process is fresh.
    """
    return _in_second_process(realism, folds, seed, **options)


def _in_second_process(fn, *args, **kwargs) -> Future:
    """``fn(*args, **kwargs)`` in a fresh interpreter (``spawn``: no thread or open file of the
    caller's, a Jupyter kernel's, is copied into it)."""
    executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    try:
        return executor.submit(fn, *args, **kwargs)
    finally:
        executor.shutdown(wait=False)  # the submitted work still runs; the process exits after it


def planted_recovery_run(
    root: str | Path,
    n_jobs: int | str,
    seed: int,
    config: grid.Config,
    *,
    planted: str,
    join: str,
    memory_limit: str,
    sample_total: int,
    keep_zero_strata: bool,
    silhouette_sample: int | None = None,
    planted_spread: float = planted_mod.PLANTED_SPREAD,
) -> tuple[dict, pd.DataFrame]:
    """One configuration on a stand-in with planted profiles, scored against them.

    The same steps as the pipeline (a synthetic trace of ``n_jobs`` jobs and ``seed``, now with
    ``planted`` profiles, in its own work folder :func:`work_dir`; ``join``; Table I's sample of
    ``sample_total`` rows), the planted label attached to every sampled row
    (:func:`schedlab.polaris.planted.attach_planted`), then ``config`` run on the sample (cached
    as a grid run) and :func:`schedlab.polaris.scoring.planted_recovery`. Returns a record (the
    configuration, the run's cluster/outlier counts and silhouette, the recovery figures) and the
    sample with ``planted`` and found ``profile`` columns. The record also holds the check the
    clustering must earn (:func:`schedlab.polaris.planted.baselines`): the same scores for a lookup
    on the exactly copied columns and for k-means with the true k, and ``passes`` (the
    clustering beats the lookup). ``planted_spread``: the profiles' spread
    (:data:`schedlab.polaris.planted.PLANTED_SPREAD`; 0 = each profile repeats its template's plan
    values exactly).
    """
    from schedlab.polaris import scoring

    work, info = prepare_planted(
        root,
        n_jobs,
        seed,
        planted=planted,
        join=join,
        memory_limit=memory_limit,
        planted_spread=planted_spread,
    )
    tdir = work / "trace"
    sample = planted_mod.attach_planted(
        draw_sample(info.path, sample_total, seed, keep_zero_strata=keep_zero_strata), tdir
    )
    X = sample[list(FEATURES)].to_numpy(float)
    row = grid.run_one(X, config, work / "grid_cache", seed=seed, silhouette_sample=silhouette_sample)
    idx, labels = grid.load_labels(work / "grid_cache", row["key"])
    found = np.full(len(sample), -1, dtype=np.int64)
    found[idx] = labels
    rec = scoring.planted_recovery(found, sample["planted"].to_numpy())
    base = planted_mod.baselines(
        sample, grid.transform(X, config.transform), found, min_size=config.min_cluster_size, seed=seed
    )
    record = {
        "data": data_label(""),
        "planted": planted,
        "planted_spread": float(planted_spread),
        "n_jobs": job_count(n_jobs),
        "seed": seed,
        "join": join,
        "joined_rows": int(info.rows),
        "algorithm": config.algorithm,
        "transform": config.transform,
        "metric": config.metric,
        "min_cluster_size": config.min_cluster_size,
        "n_clusters": int(row["n_clusters"]),
        "n_outliers": int(row["n_outliers"]),
        "avg_silhouette": float(row["avg_silhouette"]),
        **rec,
        **base,
    }
    return record, sample.assign(profile=found)


def run_record(
    run: pd.Series, keys=("transform", "metric", "min_cluster_size", "n_clusters", "n_outliers", "scores_v1")
) -> dict:
    """A grid run's fields as plain Python values (for a JSON summary)."""
    return {k: (run[k].item() if hasattr(run[k], "item") else run[k]) for k in keys}
