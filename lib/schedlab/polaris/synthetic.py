"""A synthetic Alibaba PAI trace in the exact upstream format, calibrated on the 800 real rows.

Everything produced from it is **synthetic**: it has the real trace's layout (five header-less
CSVs, each the single member ``pai_<table>.csv`` of ``pai_<table>.tar.gz``; real ID formats; the
real machine-spec archive copied unchanged) and per-workload feature distributions fitted on the
800 real joined rows, but it is not the trace and cannot reproduce the paper's numbers.

This module draws jobs and writes the archives; the model it draws from is
:mod:`schedlab.polaris.job_model` (:func:`calibrate`), the planted structure
:mod:`schedlab.polaris.planted`. The earlier Gaussian-copula generator (``v1``) lives with the
benchmarks that still compare with it (``benchmarks/_synthetic_v1.py``).

The generator (version ``v2``; each choice is an assumption, stated here once):

* **Jobs from real rows.** A job is a *template* built from the real rows of its workload: a
  non-``ps`` task alone, or a ``ps`` row paired with the non-``ps`` row nearest in start time
  (``ps`` tasks never plan GPUs and never run alone). Templates are drawn uniformly: the real rows
  behave as one row per job (the bert rows' mean ``tasks x instances^2`` is 180, Table I's rows per
  bert job 199), not as rows drawn from the join. ``inst_num``, ``plan_*``, ``gpu_type`` and
  ``max_gpu_wrk_mem`` are copied exactly (the real discrete values); start times move by a
  job-level normal shift (2 % of the real spread), durations and the other sensor columns by
  log-normal noise scaled to each row's local spread (adaptive kernel bandwidth
  :data:`BANDWIDTH` x the log distance to the 3rd nearest value in its workload). All instances of
  a job derive their sensor values from one of its template rows (a real row's sensor values come
  from any instance of its job), with smaller per-instance noise.
* **Metadata** (:mod:`schedlab.polaris.metadata`): task name with the template (plus fitted
  borrowing of pooled templates, task names as the authors' join shows them per workload); user
  from the template row, any real user or an **invented** one of a 1,300-user Zipf vocabulary
  (fitted Good-Turing rates); group from the (workload, user) pair's Pitman–Yor random measure,
  fitted to the real rows' partition of each user's jobs into groups
  (:mod:`schedlab.polaris.groups`), a real user's heaviest atoms carrying its real groups. Which
  ids are real: :data:`METADATA_PROVENANCE` beside the archives.
* **Strata sized as Table I.** Terminated jobs per workload = Table I rows / expected
  ``tasks x instances^2`` of its templates; a workload has max(real group-tag jobs, that) jobs, the
  rest of them Failed/Running/Waiting (nmt: 0.5 % terminate, since its 3 real rows have 16
  instances). ``rl`` and ``vgg`` (no real rows: **invented**) use all rows' templates with the
  task-name mix of the authors' join. Jobs without a workload
  (pooled templates, weight ``instances^-a``) keep the real totals: 69.4 % terminated, 1.195 tasks
  and about 7.2 instances per job (the last estimated from the instance CSV's size).
* **Job sizes** (:mod:`schedlab.polaris.synthetic_size`): a workload job's tasks get
  ``round(inst_num x K)`` workers (instance and sensor rows), ``K >= 1`` from a Pareto tail whose
  shape is fitted per workload so that the mean join rows per terminated job equal Table I's rows
  over the real group-tag jobs x the terminated share (bert, graphlearn, inception, rl; the
  others' templates already have enough rows), clipped at the planted top job's rows. The strata
  above are sized with these rows. Not with planted profiles (their traces stay as before).
* **Planted job.** The paper's most recurrent job name is an ``rl`` job of a fixed share of the rl
  stratum, one :data:`TOP_JOB_TASK` task; **planted profiles** (``planted="authors"``, off by
  default): the authors' 26 profiles with a ground-truth label per task beside the archives; a
  planted profile's jobs get ``planted_spread`` log-normal noise in every nonzero column, the
  exactly copied ones included (zeros stay zero: a CPU-only task plans no GPU). Both:
  :mod:`schedlab.polaris.planted`.
* **Machines.** Instances run on machines of the real spec table with the task's ``gpu_type``.
* Validation on held-out real rows: :mod:`schedlab.polaris.realism`.

Examples
--------
>>> counts = synthesize(tmp_path, n_jobs=200, rng=np.random.default_rng(0))  # doctest: +SKIP
>>> sorted(counts)  # doctest: +SKIP
['pai_group_tag_table', 'pai_instance_table', 'pai_job_table', 'pai_sensor_table', 'pai_task_table']
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from schedlab.progress import bar as progress_bar

from schedlab import data
from schedlab.csvrows import write_rows
from schedlab.io import atomic_path, atomic_write_text
from schedlab.polaris.calibration import load_calibration_rows
from schedlab.polaris import job_model
from schedlab.polaris.job_model import BANDWIDTH, NOISY_SENSORS, JobModel, calibrate
from schedlab.polaris.metadata import draw_users  # noqa: F401 (public here too: the frozen v1 benchmark)
from schedlab.polaris.metadata import (
    hex_ids,
    N_USERS,
    MetadataModel,
    draw_metadata,
    fit_metadata,
    mixed_template_moments,
    provenance,
    template_mix,
)
from schedlab.polaris import synthetic_size
from schedlab.polaris.synthetic_size import JobSize
from schedlab.polaris.planted import (
    PAPER_TOP_JOB_NAME,
    PLANTED_KEY,
    PLANTED_LABELS,  # noqa: F401
    PLANTED_PROFILES,
    PLANTED_SPECS,
    PLANTED_SPREAD,
    draw_planted,
    plant_profiles,
    planted_top_job_instances,
    spread_factor,
    spread_inst_num,
)
from schedlab.polaris.schema import (
    JOB_STATUS_COUNTS,
    REAL_GROUP_TAG_ROWS,
    REAL_JOB_ROWS,
    SENSOR_FEATURES,
    TABLES,
    TRACE_TABLES,
    WORKLOADS,
)

SIZES: dict[str, int] = {"ci": 3_000, "small": 30_000, "medium": 200_000, "real": REAL_JOB_ROWS}
MACHINE_SPEC = "alibaba-pai/pai_machine_spec.tar.gz"
#: beside the archives: which user and group ids are real (any other is invented) and which
#: workloads are invented (:func:`schedlab.polaris.metadata.provenance`)
METADATA_PROVENANCE = "metadata_provenance.json"


#: the task name of the paper's top job (2,150 rows of the authors' 100,001-row sample): not
#: PyTorchWorker (193 sample rows in all), tensorflow (67) or evaluator (the authors' rl jobs have
#: none), and one task, so not ps: worker, the rl jobs' main task (6,019 of their 6,515
#: instance-merge rows). Before, any non-ps row, so a seed could make it a tensorflow job
TOP_JOB_TASK = "worker"


def _choice(values, p, size, rng):
    return np.asarray(values)[rng.choice(len(values), size=size, p=np.asarray(p, dtype=float))]


def _load_machines() -> pd.DataFrame:
    path = data.require(MACHINE_SPEC)
    return pd.read_csv(path, header=None, names=list(TABLES["pai_machine_spec"]), compression="tar")


def _fmt_num(x: np.ndarray, integer: bool = False) -> np.ndarray:
    """Numbers as text; NaN -> empty field (the trace's missing values)."""
    x = np.asarray(x, dtype=float)
    nan = np.isnan(x)
    text = (np.round(np.where(nan, 0, x)).astype(np.int64).astype(str) if integer else x.astype(str)).astype(
        object
    )
    text[nan] = ""
    return text


def _task_states(plan_gpu, gpu_type, status, t_job, start, end, n_jobs: int):
    """Per task: GPU type (``""`` without GPUs, ``MISC`` for GPUs of no known type), status,
    start and end (NaN while waiting / running); per job: first start and last end."""
    gpu_type = np.where(np.isnan(plan_gpu), "", gpu_type)
    gpu_type = np.where((gpu_type == "") & ~np.isnan(plan_gpu), "MISC", gpu_type)
    t_status = status[t_job]
    t_start = np.where(t_status == "Waiting", np.nan, start)
    t_end = np.where(np.isin(t_status, ["Waiting", "Running"]), np.nan, end)
    job_start = pd.Series(t_start).groupby(t_job).min().reindex(range(n_jobs)).to_numpy()
    job_end = pd.Series(t_end).groupby(t_job).max().reindex(range(n_jobs)).to_numpy()
    return gpu_type, t_status, t_start, t_end, job_start, job_end


def job_count(n_jobs: int | str) -> int:
    """``n_jobs`` as a number of jobs: a positive count, or a preset name of :data:`SIZES`.

    >>> job_count("ci")
    3000
    """
    if isinstance(n_jobs, str):
        if n_jobs not in SIZES:
            raise ValueError(f"unknown size preset {n_jobs!r}; known: {sorted(SIZES)}")
        n_jobs = SIZES[n_jobs]
    if n_jobs <= 0:
        raise ValueError(f"n_jobs must be positive, got {n_jobs}")
    return n_jobs


#: ``make_chunk(m, done)``: the trace tables of the next ``m`` jobs, ``done`` jobs being written
#: already (with planted profiles also the ground-truth frame :data:`PLANTED_KEY`)
ChunkMaker = Callable[[int, int], dict[str, pd.DataFrame]]


def write_archives(
    out_dir: Path, n_jobs: int, make_chunk: ChunkMaker, *, chunk_jobs: int, progress: bool
) -> tuple[dict[str, int], list[pd.DataFrame]]:
    """Write ``n_jobs`` jobs, ``chunk_jobs`` at a time from ``make_chunk``, as ``pai_<table>.tar.gz``
    plus the real machine spec into ``out_dir`` (atomically: an interrupted run leaves no partial
    archive).

    Returns
    -------
    counts : dict of str to int
        Rows written per table.
    labels : list of pandas.DataFrame
        The chunks' :data:`PLANTED_KEY` frames, in order (empty without planted profiles).
    """
    label_parts: list[pd.DataFrame] = []
    counts = dict.fromkeys(TRACE_TABLES, 0)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".synth-") as tmp:
        csvs = {t: Path(tmp) / f"{t}.csv" for t in TRACE_TABLES}
        handles = {t: open(p, "wb") for t, p in csvs.items()}
        try:
            done = 0
            with progress_bar(total=n_jobs, unit="job", desc="synthesize", disable=not progress) as bar:
                while done < n_jobs:
                    m = min(chunk_jobs, n_jobs - done)
                    tables = make_chunk(m, done)
                    if PLANTED_KEY in tables:
                        label_parts.append(tables.pop(PLANTED_KEY))
                    for t, df in tables.items():
                        write_rows(handles[t], df)  # df.to_csv's bytes, ~10x faster
                        counts[t] += len(df)
                    done += m
                    bar.update(m)
        finally:
            for h in handles.values():
                h.close()
        for t in TRACE_TABLES:
            with atomic_path(out_dir / f"{t}.tar.gz") as dest:
                with tarfile.open(dest, "w:gz", compresslevel=1) as tar:
                    tar.add(csvs[t], arcname=f"{t}.csv")
    with atomic_path(out_dir / "pai_machine_spec.tar.gz") as dest:
        shutil.copyfile(data.require(MACHINE_SPEC), dest)
    return counts, label_parts


def synthesize(
    out_dir: str | Path,
    n_jobs: int | str,
    rng: np.random.Generator,
    *,
    calibration: JobModel | None = None,
    chunk_jobs: int = 50_000,
    n_users: int = N_USERS,
    sensor_jitter: float | None = None,
    planted: str | None = None,
    planted_spread: float = PLANTED_SPREAD,
    progress: bool = True,
) -> dict[str, int]:
    """Write ``pai_<table>.tar.gz`` for the five trace tables plus the real machine spec into ``out_dir``.

    ``n_jobs`` is a job count or a preset name in :data:`SIZES` (``"real"`` = 1,055,501 jobs, the
    real trace's job-table size). Returns the number of rows written per table. Archives are
    written atomically: an interrupted run leaves no partial archive.

    Jobs are built from real rows (see :func:`generate_tables`); ``calibration`` is the model
    :func:`calibrate` fits (default: on the 800 real rows). The join's size bias is corrected by
    construction (templates weighted by 1 / instances^2). ``sensor_jitter``: the job-level noise as
    a fraction of each column's robust log spread in its workload (default :data:`BANDWIDTH`;
    instances get half of it). ``n_users``: the trace's user vocabulary (real users of the
    calibration rows plus invented ones, :func:`schedlab.polaris.metadata.fit_metadata`); which ids
    are real is written to :data:`METADATA_PROVENANCE`.

    ``planted="authors"`` (default ``None`` plants nothing and leaves the trace as before)
    plants the authors' 26 profiles as known structure (:func:`schedlab.polaris.planted.plant_profiles`)
    and writes the ground truth beside the archives: :data:`PLANTED_LABELS` (``job_name, task_name,
    planted`` for every task of a workload job, -1 = background) and :data:`PLANTED_PROFILES` (one
    row per planted profile); :func:`schedlab.polaris.planted.attach_planted` adds the label to
    sampled rows. ``planted_spread``: the planted profiles' noise
    (:data:`schedlab.polaris.planted.PLANTED_SPREAD`; 0 = every row of a profile repeats its
    template's exact plan values, as before it existed).
    """
    if planted is not None and planted not in PLANTED_SPECS:
        raise ValueError(f"unknown planted structure planted={planted!r}; known: {PLANTED_SPECS}")
    n_jobs = job_count(n_jobs)
    sensor_jitter = BANDWIDTH if sensor_jitter is None else sensor_jitter
    model = _job_model(calibrate(load_calibration_rows()) if calibration is None else calibration)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    machines = _load_machines()
    model, meta, size, plant = setup(n_jobs, model, rng, n_users, planted, planted_spread)
    users, user_p = meta.invented_users, meta.invented_p  # jobs without a workload

    def make_chunk(m: int, done: int) -> dict[str, pd.DataFrame]:
        # the paper's top job is the first job of the first chunk
        return _generate_chunk_v2(
            m,
            model,
            machines,
            users,
            user_p,
            rng,
            meta=meta,
            sensor_jitter=sensor_jitter,
            plant_top_job=plant if done == 0 else 0,
            size=size,
        )

    counts, label_parts = write_archives(
        out_dir, n_jobs, make_chunk, chunk_jobs=chunk_jobs, progress=progress
    )
    if planted is not None:
        with atomic_path(out_dir / PLANTED_LABELS) as dest:
            pd.concat(label_parts, ignore_index=True).to_parquet(dest, index=False)
        atomic_write_text(out_dir / PLANTED_PROFILES, model.planted.profiles.to_csv(index=False))
    atomic_write_text(out_dir / METADATA_PROVENANCE, json.dumps(provenance(meta), indent=1) + "\n")
    return counts


def setup(
    n_jobs: int,
    model: JobModel,
    rng: np.random.Generator,
    n_users: int = N_USERS,
    planted: str | None = None,
    planted_spread: float = PLANTED_SPREAD,
) -> tuple[JobModel, MetadataModel, JobSize | None, int]:
    """What :func:`synthesize` draws a trace of ``n_jobs`` jobs from, in its order of draws: the
    model (planted profiles in it with ``planted``), the metadata model, the job sizes
    (:func:`job_size`; None with planted profiles, whose jobs keep one worker per instance) and
    the planted top job's instances."""
    plant = planted_top_job_instances(n_jobs)
    if planted is not None:
        model = plant_profiles(model, planted, rng, top_job=plant, spread=planted_spread)
    meta = fit_metadata(model, rng, n_users)
    size = job_size(model, meta, n_jobs)
    return resize_strata(model, meta, size), meta, size, plant


def job_size(model: JobModel, meta: MetadataModel, n_jobs: int) -> JobSize | None:
    """The workers-per-instance model of a trace of ``n_jobs`` jobs
    (:func:`schedlab.polaris.synthetic_size.fit_job_size`, largest job the planted top job's
    size at this scale); None with planted profiles (their strata are not resized either)."""
    if model.planted is not None:
        return None
    mixes = {w: template_mix(meta, model, w) for w in WORKLOADS}
    return synthetic_size.fit_job_size(model, mixes, max(planted_top_job_instances(n_jobs), 1))


def resize_strata(model: JobModel, meta: MetadataModel, size: JobSize | None = None) -> JobModel:
    """``model`` with job and terminated shares sized for the templates its workload jobs draw
    with borrowing (:func:`schedlab.polaris.metadata.mixed_template_moments`) and, with ``size``,
    their extra workers (:mod:`schedlab.polaris.synthetic_size`), so the faithful join's strata
    stay proportional to Table I; unchanged with planted profiles (their jobs do not borrow). A
    copy: the calibrated model is shared."""
    if model.planted is not None:
        return model
    moments = {w: mixed_template_moments(meta, model, w) for w in WORKLOADS}
    if size is not None:
        moments = {w: _sized_moments(model, meta, size, w) for w in WORKLOADS}
    job_share, term, pair_none, none_share = job_model.strata_shares(
        {w: m[0] for w, m in moments.items()}, {w: m[1] for w, m in moments.items()}
    )
    out = dataclasses.replace(model, job_share=job_share, terminated_share=term, pair_share_none=pair_none)
    out.none_weights = job_model._none_weights(out, none_share)
    return out


def _sized_moments(model: JobModel, meta: MetadataModel, size: JobSize, w: str) -> tuple[float, float]:
    """Expected join rows of a terminated ``w`` job with its extra workers, and the two-task share
    of ``w`` jobs, the templates weighted by ``size``'s class weights."""
    mix = template_mix(meta, model, w)
    rows, prob = synthetic_size.workload_rows(model, mix, size, w)
    first, second, p = size.weighted(w, mix, synthetic_size.template_classes(model, *mix[:2]))
    return float(np.sum(prob * rows)), float(np.sum(p[second >= 0]))


def _job_model(calibration: JobModel) -> JobModel:
    if not isinstance(calibration, JobModel):
        raise TypeError(
            f"calibration must be the JobModel of synthetic.calibrate(rows), got {type(calibration).__name__}"
        )
    return calibration


def generate_tables(
    n_jobs: int,
    rng: np.random.Generator,
    *,
    calibration: JobModel,
    workload: np.ndarray | None = None,
    sensor_jitter: float | None = None,
    n_users: int = N_USERS,
    planted: str | None = None,
    planted_spread: float = PLANTED_SPREAD,
    metadata: MetadataModel | None = None,
    missed_rows: str | None = None,
) -> dict[str, pd.DataFrame]:
    """The five trace tables of ``n_jobs`` jobs as in-memory frames (what :func:`synthesize`
    writes, without archives; no planted top job). ``workload`` fixes each job's workload,
    e.g. to draw many jobs of one stratum for a realism check. ``planted`` (see
    :func:`synthesize`) adds the frame :data:`PLANTED_KEY` with each workload task's planted profile.
    ``metadata``: the metadata model (default: :func:`schedlab.polaris.metadata.fit_metadata` of
    ``calibration``). ``missed_rows`` (``"classes"`` or ``"templates"``, :func:`missed_templates`'
    ``draw``): a workload job's template is that of a row drawn from the rows of the jobs a Table I
    sample of the real trace misses, so one row per job is such a row, as the real rows are read
    (:mod:`schedlab.polaris.realism`)."""
    sensor_jitter = BANDWIDTH if sensor_jitter is None else sensor_jitter
    machines = _load_machines()
    model = _job_model(calibration)
    if planted is not None:
        if planted not in PLANTED_SPECS:
            raise ValueError(f"unknown planted structure {planted!r}; known: {PLANTED_SPECS}")
        model = plant_profiles(model, planted, rng, spread=planted_spread)
    meta = fit_metadata(model, rng, n_users) if metadata is None else metadata
    size = job_size(model, meta, n_jobs)
    template_p = None if missed_rows is None else missed_templates(model, meta, missed_rows)
    model = resize_strata(model, meta, size)
    users, user_p = meta.invented_users, meta.invented_p  # jobs without a workload
    return _generate_chunk_v2(
        n_jobs,
        model,
        machines,
        users,
        user_p,
        rng,
        meta=meta,
        workload=workload,
        sensor_jitter=sensor_jitter,
        size=size,
        template_p=template_p,
    )


#: how :func:`missed_templates` draws the templates of rows of missed jobs
MISSED_DRAWS: tuple[str, ...] = ("classes", "templates")


def missed_templates(model: JobModel, meta: MetadataModel, draw: str = "classes") -> dict[str, np.ndarray]:
    """Per workload, probabilities over :func:`schedlab.polaris.metadata.template_mix`'s templates
    for the template of a row drawn from the rows of the jobs a Table I sample of the real trace
    misses (:func:`schedlab.polaris.synthetic_size.missed_template_rows`, the job sizes of the real
    trace's size).

    ``draw="templates"``: exactly those probabilities. ``"classes"`` (default): each template class
    (:func:`schedlab.polaris.synthetic_size.template_classes`) keeps its probability under that
    reading, and within a class the templates keep ``template_mix``'s (the calibration rows'). The
    sizes make a small job's rows grow with its planned instances while the sample misses it all the
    same, so the first tilts the rows to more instances than the real rows show
    (:mod:`schedlab.polaris.realism`)."""
    if draw not in MISSED_DRAWS:
        raise ValueError(f"unknown draw {draw!r}; known: {MISSED_DRAWS}")
    if model.planted is not None:
        raise ValueError(
            "rows of missed jobs need the job sizes, which a model with planted profiles has none of"
        )
    full = job_size(model, meta, SIZES["real"])
    sample = synthetic_size.table_i_sample_rows()
    out = {}
    for w in WORKLOADS:
        mix = template_mix(meta, model, w)
        m = synthetic_size.missed_template_rows(model, mix, full, w, sample[w])
        if draw == "classes":
            cls = synthetic_size.template_classes(model, *mix[:2])
            names, inv = np.unique(cls.astype(str), return_inverse=True)
            class_p = np.bincount(inv, weights=m, minlength=names.size)
            within = np.bincount(inv, weights=mix[2], minlength=names.size)
            m = class_p[inv] * mix[2] / within[inv]
        out[w] = m / m.sum()
    return out


def _job_status(workload: np.ndarray, model: JobModel, rng: np.random.Generator) -> np.ndarray:
    """Terminated with the workload's share; other jobs Failed / Running / Waiting in the real
    proportions."""
    p_term = np.array([model.terminated_share[w] for w in workload])
    other = [s for s in JOB_STATUS_COUNTS if s != "Terminated"]
    op = np.array([JOB_STATUS_COUNTS[s] for s in other], float)
    status = _choice(other, op / op.sum(), workload.size, rng).astype(object)
    status[rng.random(workload.size) < p_term] = "Terminated"
    return status


def _workload_templates(
    w: str,
    n: int,
    model: JobModel,
    meta: MetadataModel,
    rng: np.random.Generator,
    size: JobSize | None,
    template_p: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(first, second) rows of ``n`` jobs of workload ``w``, drawn from
    :func:`schedlab.polaris.metadata.template_mix` (a uniform own template, or with probability
    ``meta.borrow[w]``, 1 for a workload without real rows, a borrowed pooled one), the templates
    weighted by ``size``'s class weights (:meth:`JobSize.weighted`); ``template_p``: other
    probabilities over those templates (:func:`missed_templates`)."""
    mix = template_mix(meta, model, w)
    if size is not None:
        mix = size.weighted(w, mix, synthetic_size.template_classes(model, *mix[:2]))
    first, second, p = mix
    p = p if template_p is None else template_p
    k = rng.choice(p.size, n, p=p)
    return first[k], second[k]


def _draw_templates(
    workload: np.ndarray,
    model: JobModel,
    meta: MetadataModel,
    rng: np.random.Generator,
    size: JobSize | None = None,
    template_p: dict[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(first, second) real-row indices per job and the planted profile of each of the two tasks
    (-1: none): templates of the job's workload (:func:`_workload_templates`; with planted
    profiles: a profile's template or a background one, :func:`draw_planted`); jobs without a
    workload take a pair with :attr:`JobModel.pair_share_none`, and templates with
    :attr:`JobModel.none_weights`. A workload job borrows a pooled template with probability
    ``meta.borrow[w]`` (every job of a workload without real rows does), and ``size`` weights the
    templates' classes (``template_p[w]``, if given, replaces the probabilities)."""
    first = np.empty(workload.size, dtype=np.int64)
    second = np.empty(workload.size, dtype=np.int64)
    labels = np.full((2, workload.size), -1, dtype=np.int64)
    for w in sorted(set(workload)):
        idx = np.flatnonzero(workload == w)
        tpl = model.templates[w]
        if w and model.planted is not None:
            first[idx], second[idx], labels[0, idx], labels[1, idx] = draw_planted(
                idx.size, w, model.planted, rng
            )
            continue
        if w:
            tp = None if template_p is None else template_p[w]
            first[idx], second[idx] = _workload_templates(w, idx.size, model, meta, rng, size, tp)
            continue
        else:
            pairs, singles = np.flatnonzero(tpl.second >= 0), np.flatnonzero(tpl.second < 0)
            pick_pair = rng.random(idx.size) < model.pair_share_none
            ws, wp = model.none_weights
            k = np.where(
                pick_pair,
                pairs[rng.choice(pairs.size, idx.size, p=wp)],
                singles[rng.choice(singles.size, idx.size, p=ws)],
            )
        first[idx], second[idx] = tpl.first[k], tpl.second[k]
    return first, second, labels[0], labels[1]


def _generate_chunk_v2(
    n_jobs: int,
    model: JobModel,
    machines: pd.DataFrame,
    users: np.ndarray,
    user_p: np.ndarray,
    rng: np.random.Generator,
    *,
    meta: MetadataModel,
    workload: np.ndarray | None = None,
    sensor_jitter: float,
    plant_top_job: int = 0,
    size: JobSize | None = None,
    template_p: dict[str, np.ndarray] | None = None,
) -> dict[str, pd.DataFrame]:
    """One chunk of jobs of version ``v2``; ``workload`` forces the jobs' workloads (realism
    checks), ``plant_top_job > 0`` makes the first job the paper's top job with that many instances,
    ``size`` gives a workload job's tasks ``round(inst_num x K)`` workers each
    (:mod:`schedlab.polaris.synthetic_size`; None: ``inst_num``, and no draw); ``template_p``
    replaces the workload templates' probabilities (:func:`missed_templates`)."""
    if workload is None:
        names = ["", *WORKLOADS]
        p = np.array([1.0 - sum(model.job_share.values()), *(model.job_share[w] for w in WORKLOADS)])
        workload = _choice(names, p, n_jobs, rng)
    workload = np.asarray(workload, dtype=object)
    status = _job_status(workload, model, rng)
    first, second, label_first, label_second = _draw_templates(workload, model, meta, rng, size, template_p)
    job_name, inst_id = hex_ids(n_jobs, 24, rng), hex_ids(n_jobs, 60, rng)
    if plant_top_job:
        workload[0], status[0], second[0], job_name[0] = "rl", "Terminated", -1, PAPER_TOP_JOB_NAME
        if model.planted is not None:  # the top job is one of its planted profile's jobs
            first[0], label_first[0], label_second[0] = model.planted.top_row, model.planted.top_profile, -1
        else:
            rows = np.flatnonzero(model.meta["task_name"] == TOP_JOB_TASK)
            first[0] = rows[rng.integers(0, rows.size)]
    user = _choice(users, user_p, n_jobs, rng).astype(object)
    group = hex_ids(n_jobs, 32, rng).astype(object)
    wl = workload != ""
    user[wl], group[wl] = draw_metadata(meta, workload[wl], first[wl], rng)
    meta = model.meta

    # tasks: the template's one or two rows
    two = second >= 0
    t_job = np.r_[np.arange(n_jobs), np.flatnonzero(two)]
    t_row = np.r_[first, second[two]]
    order = np.argsort(t_job, kind="stable")
    t_job, t_row = t_job[order], t_row[order]
    t_label = np.r_[label_first, label_second[two]][order]
    v = model.values
    inst_num = v["inst_num"][t_row].astype(np.int64)
    # a planted profile's jobs spread in every nonzero column (no draw at all without one, so an
    # unplanted trace keeps its random stream)
    spread = model.planted.spread if model.planted is not None else 0.0
    p_task = (label_first >= 0)[t_job] if spread > 0 else np.zeros(t_job.size, dtype=bool)
    plan = {c: v[c][t_row].copy() for c in ("plan_cpu", "plan_mem", "plan_gpu")}
    if p_task.any():
        inst_num[p_task] = spread_inst_num(inst_num[p_task], spread, rng)
        for c in plan:
            plan[c][p_task] *= spread_factor(int(p_task.sum()), spread, rng)
    if plant_top_job:
        inst_num[t_job == 0] = plant_top_job
    shift = rng.normal(0.0, 0.02 * model.start_sd, n_jobs)  # job-level: tasks of a job move together
    start = np.round(v["start_time"][t_row] + shift[t_job])
    dur_sd = BANDWIDTH * model.log_sd["duration"][t_row]
    dur_sd = np.where(p_task, np.maximum(dur_sd, spread), dur_sd)
    duration = np.maximum(1, np.round(v["duration"][t_row] * np.exp(rng.normal(0, 1, t_job.size) * dur_sd)))
    end = start + duration
    plan_gpu = np.where(plan["plan_gpu"] > 0, plan["plan_gpu"], np.nan)
    t_name = meta["task_name"][t_row].astype(object)
    gpu_type, t_status, t_start, t_end, job_start, job_end = _task_states(
        plan_gpu, meta["gpu_type"][t_row], status, t_job, start, end, n_jobs
    )

    # instances (none for waiting jobs), one sensor row each. A real row's sensor values come from
    # any instance of its job (the join is on the job id), so a job's instances all derive from one
    # of its template rows (drawn uniformly per job: each template row keeps its share of the
    # join's sensor values) times a job-level and a smaller instance-level log-normal factor
    n_inst = np.where(
        t_status == "Waiting", 0, _workers(inst_num, t_job, workload, first, second, model, size, rng)
    )
    if plant_top_job:
        n_inst[t_job == 0] = np.where(t_status[t_job == 0] == "Waiting", 0, inst_num[t_job == 0])
    i_task = np.repeat(np.arange(t_job.size), n_inst)
    i_job = t_job[i_task]
    sensor_row = np.where((second >= 0) & (rng.random(n_jobs) < 0.5), second, first)[i_job]
    z_job = rng.normal(0.0, 1.0, (n_jobs, len(NOISY_SENSORS)))
    z_inst = rng.normal(0.0, 0.5, (i_task.size, len(NOISY_SENSORS)))
    p_inst = p_task[i_task]
    sens = {}
    for k, c in enumerate(NOISY_SENSORS):
        sd = sensor_jitter * model.log_sd[c][sensor_row]
        sd = np.where(p_inst, np.maximum(sd, spread), sd)
        sens[c] = v[c][sensor_row] * np.exp((z_job[i_job, k] + z_inst[:, k]) * sd)
    sens["max_gpu_wrk_mem"] = v["max_gpu_wrk_mem"][sensor_row]
    if p_task.any():  # job-level, as the real maximum repeats across a job's instances
        f_job = spread_factor(n_jobs, spread, rng)
        sens["max_gpu_wrk_mem"] = np.where(
            p_inst, sens["max_gpu_wrk_mem"] * f_job[i_job], sens["max_gpu_wrk_mem"]
        )
    sens["max_mem"] = np.maximum(sens["max_mem"], sens["avg_mem"])
    has_max = sens["max_gpu_wrk_mem"] > 0
    sens["avg_gpu_wrk_mem"] = np.where(
        has_max, np.minimum(sens["avg_gpu_wrk_mem"], sens["max_gpu_wrk_mem"]), sens["avg_gpu_wrk_mem"]
    )
    m_idx = _machines_for(gpu_type[i_task], machines, rng)
    machine = machines["machine"].to_numpy()[m_idx]
    cap_gpu = machines["cap_gpu"].to_numpy()[m_idx].astype(int)
    worker_name, inst_name = hex_ids(i_task.size, 60, rng), hex_ids(i_task.size, 60, rng)
    i_start = t_start[i_task] + rng.integers(0, 30, i_task.size)
    gpu_name = np.where(
        cap_gpu > 0,
        np.char.add(
            "/dev/nvidia", (rng.integers(0, 1 << 30, i_task.size) % np.maximum(cap_gpu, 1)).astype(str)
        ),
        "",
    )
    tables = {
        "pai_job_table": pd.DataFrame(
            {
                "job_name": job_name,
                "inst_id": inst_id,
                "user": user,
                "status": status,
                "start_time": _fmt_num(job_start, True),
                "end_time": _fmt_num(job_end, True),
            }
        ),
        "pai_task_table": pd.DataFrame(
            {
                "job_name": job_name[t_job],
                "task_name": t_name,
                "inst_num": inst_num,
                "status": t_status,
                "start_time": _fmt_num(t_start, True),
                "end_time": _fmt_num(t_end, True),
                "plan_cpu": _fmt_num(plan["plan_cpu"]),
                "plan_mem": _fmt_num(plan["plan_mem"]),
                "plan_gpu": _fmt_num(plan_gpu),
                "gpu_type": gpu_type,
            }
        ),
        "pai_instance_table": pd.DataFrame(
            {
                "job_name": job_name[i_job],
                "task_name": t_name[i_task],
                "inst_name": inst_name,
                "worker_name": worker_name,
                "inst_id": inst_id[i_job],
                "status": t_status[i_task],
                "start_time": _fmt_num(i_start, True),
                "end_time": _fmt_num(t_end[i_task], True),
                "machine": machine,
            }
        ),
        "pai_sensor_table": pd.DataFrame(
            {
                "job_name": job_name[i_job],
                "task_name": t_name[i_task],
                "worker_name": worker_name,
                "inst_id": inst_id[i_job],
                "machine": machine,
                "gpu_name": gpu_name,
                **{c: sens[c] for c in SENSOR_FEATURES},
            }
        ),
    }
    tagged = rng.random(n_jobs) < REAL_GROUP_TAG_ROWS / REAL_JOB_ROWS
    tagged[0] |= bool(plant_top_job)
    tables["pai_group_tag_table"] = pd.DataFrame(
        {
            "inst_id": inst_id[tagged],
            "user": user[tagged],
            "gpu_type_spec": "",
            "group": group[tagged],
            "workload": workload[tagged],
        }
    )
    for name, df in tables.items():
        assert tuple(df.columns) == TABLES[name], name
    if model.planted is not None:  # ground truth beside the tables, per task of a workload job
        keep = workload[t_job] != ""
        tables[PLANTED_KEY] = pd.DataFrame(
            {"job_name": job_name[t_job][keep], "task_name": t_name[keep], "planted": t_label[keep]}
        )
    return tables


def _workers(
    inst_num: np.ndarray,
    t_job: np.ndarray,
    workload: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    model: JobModel,
    size: JobSize | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """Workers (instance and sensor rows) per task: ``inst_num``, or with ``size`` ``round(inst_num
    x K)`` with one factor ``K`` per job (:func:`schedlab.polaris.synthetic_size.draw_factor`)."""
    if size is None:
        return inst_num
    caps = synthetic_size.job_caps(model, first, second, size.max_workers)
    classes = synthetic_size.template_classes(model, first, second)
    k = synthetic_size.draw_factor(size, workload, caps, rng, classes)
    return np.maximum(np.round(inst_num * k[t_job]), 1).astype(np.int64)


def _machines_for(gpu_type: np.ndarray, machines: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """A machine of the spec table with the task's GPU type for every instance (any machine for
    CPU-only tasks or types the spec lacks)."""
    m_idx = np.empty(gpu_type.size, dtype=np.int64)
    for g in sorted(set(gpu_type)):
        sel = np.flatnonzero(gpu_type == g)
        pool = np.flatnonzero(machines["gpu_type"].to_numpy() == g) if g else np.arange(len(machines))
        if pool.size == 0:
            pool = np.arange(len(machines))
        m_idx[sel] = pool[rng.integers(0, pool.size, sel.size)]
    return m_idx
