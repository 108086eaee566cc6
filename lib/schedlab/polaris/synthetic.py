"""A synthetic Alibaba PAI trace in the exact upstream format, calibrated on the 800 real rows.

Everything produced from it is **synthetic**: it has the real trace's layout (five header-less
CSVs, each the single member ``pai_<table>.csv`` of ``pai_<table>.tar.gz``; real ID formats; the
real machine-spec archive copied unchanged) and per-workload feature distributions fitted on the
800 real joined rows, but it is not the trace and cannot reproduce the paper's numbers.

Version ``v2`` (default; each choice is an assumption, stated here once):

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
  from any instance of its job), with smaller per-instance noise. ``user`` and ``group`` come
  with the template (real heavy tail: one user has 566 of the 800 rows); half the groups are fresh.
* **Strata sized as Table I.** Terminated jobs per workload = Table I rows / expected
  ``tasks x instances^2`` of its templates; a workload has max(real group-tag jobs, that) jobs, the
  rest of them Failed/Running/Waiting (nmt: 0.5 % terminate, since its 3 real rows have 16
  instances). ``rl`` and ``vgg`` (no real rows) use all rows' templates. Jobs without a workload
  (pooled templates, weight ``instances^-a``) keep the real totals: 69.4 % terminated, 1.195 tasks
  and about 7.2 instances per job (the last estimated from the instance CSV's size).
* **Planted job.** The paper's most recurrent job name (:data:`PAPER_TOP_JOB_NAME`) is an ``rl``
  job whose ``instances^2`` join rows are :data:`PLANTED_JOB_SHARE` of the rl stratum.
* **Planted profiles** (``planted="authors"``, off by default): the authors' 26 profiles as their
  notebook printed them (workload, task name, sample rows; :data:`AUTHORS_PROFILES`) planted as
  job modes built from real rows, with a ground-truth label per task beside the archives
  (:func:`plant_profiles`, :func:`attach_planted`), to score a clustering by adjusted Rand index
  (:func:`schedlab.polaris.scoring.planted_recovery`).
* Validation on held-out real rows: :mod:`schedlab.polaris.realism`.

Version ``v1`` (``version="v1"``, the earlier model, kept for comparison):

* **Jobs.** ``n_jobs`` jobs; status drawn with the real mix (Terminated 69.4 %, Failed 24.3 %,
  Running 6.0 %, Waiting 0.3 %). A job carries a ``workload`` with probability
  102,798 / 1,055,032 (the real group-tag share), the workload drawn with the real per-job counts.
  Jobs have ``1 + Binomial(2, 0.35)`` tasks (task names: the first from the workload's real
  ``task_name`` frequencies, further ones again from them, without repeats); each task has
  ``inst_num`` instances and each instance one sensor row (``worker_name`` is the key).
* **Features.** Per workload, a Gaussian copula over 16 numeric columns (``inst_num, start_time,
  duration, plan_cpu, plan_mem, plan_gpu`` and the 10 sensor columns; ``end_time = start_time +
  duration``) fitted on that workload's real rows: normal scores of mid-ranks, correlation shrunk
  by ``shrink`` towards the identity; marginals are the empirical quantile functions (discrete
  columns use the inverted CDF, so e.g. ``plan_mem = 29.296875`` recurs exactly). Workloads with
  fewer than ``min_rows`` real rows keep their own marginals but use the pooled correlation; those
  with none (``rl``, ``vgg`` in the 800 rows) use the pooled model. Jobs without a workload use
  the pooled model. Instances of a task share its sensor vector times a log-normal jitter
  (sigma ``sensor_jitter``), so a job's sensor rows differ.
* **Metadata.** Each workload job copies ``user``, ``group`` and ``gpu_type`` from a random real
  row of its workload (keeps their co-occurrence); with probability ``fresh_group`` the group is a
  new random one. Jobs without workload get users from a Zipf vocabulary of ``n_users`` synthetic
  users. ``plan_gpu == 0`` is written empty, as for real CPU-only tasks.
* **Machines** (both versions). Instances run on machines of the real spec table with the task's
  ``gpu_type``.

Known bias of v1: the 800 rows are rows of the authors' *joined* table; v1 does not model the
join's ``tasks x instances^2`` multiplicity, so its faithful join is about twice the real one per
job (about 75 rows per generated job vs 35 on the real trace). No re-weighting is done.

Examples
--------
>>> counts = synthesize(tmp_path, n_jobs=200, rng=np.random.default_rng(0))  # doctest: +SKIP
>>> sorted(counts)  # doctest: +SKIP
['pai_group_tag_table', 'pai_instance_table', 'pai_job_table', 'pai_sensor_table', 'pai_task_table']
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from schedlab.progress import bar as progress_bar

from schedlab import data
from schedlab.io import atomic_path, atomic_write_text
from schedlab.polaris.schema import (JOB_STATUS_COUNTS, REAL_GROUP_TAG_ROWS, REAL_JOB_ROWS, SENSOR_FEATURES,
                                       TABLE_I_SIZES, TABLES, TASK_FEATURES, TRACE_TABLES, WORKLOAD_JOB_COUNTS,
                                       WORKLOADS)

COPULA_COLUMNS: tuple[str, ...] = ("inst_num", "start_time", "duration", "plan_cpu", "plan_mem", "plan_gpu",
                                   *SENSOR_FEATURES)
DISCRETE: frozenset[str] = frozenset({"inst_num", "plan_cpu", "plan_mem", "plan_gpu"})
SIZES: dict[str, int] = {"ci": 3_000, "small": 30_000, "medium": 200_000, "real": REAL_JOB_ROWS}
MACHINE_SPEC = "alibaba-pai/pai_machine_spec.tar.gz"
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


@dataclass
class Copula:
    """A Gaussian copula with empirical marginals over :data:`COPULA_COLUMNS`."""

    sorted_values: list[np.ndarray]
    corr: np.ndarray
    n_rows: int

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        chol = np.linalg.cholesky(self.corr)
        z = rng.standard_normal((n, len(self.sorted_values))) @ chol.T
        u = stats.norm.cdf(z)
        out = np.empty_like(u)
        for j, (col, vals) in enumerate(zip(COPULA_COLUMNS, self.sorted_values)):
            m = vals.size
            if col in DISCRETE or m == 1:
                out[:, j] = vals[np.minimum((u[:, j] * m).astype(int), m - 1)]
            else:
                out[:, j] = np.interp(u[:, j] * (m - 1), np.arange(m), vals)
        return out


def _normal_scores(Y: np.ndarray) -> np.ndarray:
    n = Y.shape[0]
    ranks = np.apply_along_axis(stats.rankdata, 0, Y)
    return stats.norm.ppf((ranks - 0.5) / n)


def _corr(Y: np.ndarray, shrink: float) -> np.ndarray:
    z = _normal_scores(Y)
    sd = z.std(axis=0)
    c = np.eye(Y.shape[1])
    ok = sd > 0  # constant columns stay independent
    if ok.sum() >= 2 and Y.shape[0] >= 3:
        c[np.ix_(ok, ok)] = np.corrcoef(z[:, ok], rowvar=False)
    c = (1 - shrink) * c + shrink * np.eye(Y.shape[1])
    w, v = np.linalg.eigh(c)  # keep it positive definite
    c = (v * np.clip(w, 1e-6, None)) @ v.T
    d = np.sqrt(np.diag(c))
    return c / np.outer(d, d)


def fit_copula(Y: np.ndarray, *, shrink: float = 0.1, corr: np.ndarray | None = None) -> Copula:
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 2 or Y.shape[1] != len(COPULA_COLUMNS) or Y.shape[0] == 0:
        raise ValueError(f"fit_copula needs an (n>0, {len(COPULA_COLUMNS)}) matrix, got {Y.shape}")
    return Copula([np.sort(Y[:, j]) for j in range(Y.shape[1])],
                  corr if corr is not None else _corr(Y, shrink), Y.shape[0])


@dataclass
class Calibration:
    copulas: dict[str, Copula]
    pooled: Copula
    templates: dict[str, pd.DataFrame]  # per workload: user, group, gpu_type of real rows
    task_names: dict[str, pd.Series]  # per workload: task_name frequencies
    pooled_task_names: pd.Series
    source: dict[str, str] = field(default_factory=dict)  # which model each workload uses (v1)
    jobs: "JobModel | None" = None  # version v2's job templates


def calibrate(rows: pd.DataFrame, *, min_rows: int = 10, shrink: float = 0.1) -> Calibration:
    """Fit both generators' models on real joined rows (``calibration.load_calibration_rows()``):
    the v1 copulas and the v2 job templates (:func:`fit_job_model`)."""
    missing = [c for c in (*COPULA_COLUMNS, "workload", "user", "group", "task_name", "gpu_type") if c not in rows]
    if missing:
        raise ValueError(f"calibration rows lack columns {missing}")
    unknown = sorted(set(rows["workload"].dropna()) - set(WORKLOADS))
    if unknown:
        raise ValueError(f"calibration rows: unknown workload names {unknown}")
    Y = rows[list(COPULA_COLUMNS)].to_numpy(dtype=float)
    pooled = fit_copula(Y, shrink=shrink)
    copulas, templates, names, source = {}, {}, {}, {}
    for w in WORKLOADS:
        sel = (rows["workload"] == w).to_numpy()
        if sel.sum() >= min_rows:
            copulas[w], source[w] = fit_copula(Y[sel], shrink=shrink), f"own copula ({sel.sum()} rows)"
        elif sel.sum() > 0:
            copulas[w] = fit_copula(Y[sel], corr=pooled.corr)
            source[w] = f"own marginals ({sel.sum()} rows), pooled correlation"
        else:
            copulas[w], source[w] = pooled, "pooled model (no real rows)"
        sub = rows[sel] if sel.sum() else rows
        templates[w] = sub[["user", "group", "gpu_type"]].reset_index(drop=True)
        names[w] = sub["task_name"].value_counts(normalize=True)
    return Calibration(copulas, pooled, templates, names, rows["task_name"].value_counts(normalize=True), source,
                       fit_job_model(rows))


def size_bias_resample(rows: pd.DataFrame, power: float, rng: np.random.Generator) -> pd.DataFrame:
    """Weighted bootstrap of calibration rows with weights ``inst_num ** -power``, per workload.

    The 800 rows are rows of the authors' *joined* table, in which a job shows up about
    ``tasks x instances x sensors`` times, so many-instance jobs are over-represented. Resampling
    with weights ``inst_num ** -power`` (same number of rows per workload, all columns of a row
    kept together, so dependence is preserved) undoes part of that bias; ``power = 0`` returns
    ``rows`` unchanged. The exponent is a knob, not an estimate: ``power = 1`` brings the synthetic
    faithful join near the real trace's rows per job (see ``benchmarks/bench_polaris.py``).

    >>> r = pd.DataFrame({"workload": ["a"] * 4, "inst_num": [1, 1, 10, 100]})
    >>> size_bias_resample(r, 0.0, np.random.default_rng(0)).equals(r)
    True
    >>> bool(size_bias_resample(r, 3.0, np.random.default_rng(0)).inst_num.max() < 100)
    True
    """
    if power == 0:
        return rows
    if power < 0:
        raise ValueError(f"size-bias power must be >= 0, got {power}")
    w = np.maximum(rows["inst_num"].to_numpy(dtype=float), 1.0) ** -float(power)
    parts = []
    for _, idx in sorted(rows.groupby(rows["workload"].fillna("")).indices.items()):
        p = w[idx] / w[idx].sum()
        parts.append(idx[rng.choice(idx.size, size=idx.size, replace=True, p=p)])
    return rows.iloc[np.sort(np.concatenate(parts))].reset_index(drop=True)


def hex_ids(n: int, n_chars: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random lowercase hex strings of ``n_chars`` characters (the trace's ID format).

    >>> [len(s) for s in hex_ids(2, 24, np.random.default_rng(0))]
    [24, 24]
    """
    digits = rng.integers(0, 16, size=(n, n_chars), dtype=np.uint8)
    return _HEX[digits].view(f"S{n_chars}").ravel().astype(str)


def _choice(values, p, size, rng):
    return np.asarray(values)[rng.choice(len(values), size=size, p=np.asarray(p, dtype=float))]


def _load_machines() -> pd.DataFrame:
    path = data.require(MACHINE_SPEC)
    return pd.read_csv(path, header=None, names=list(TABLES["pai_machine_spec"]), compression="tar")


def _fmt_num(x: np.ndarray, integer: bool = False) -> np.ndarray:
    """Numbers as text; NaN -> empty field (the trace's missing values)."""
    x = np.asarray(x, dtype=float)
    nan = np.isnan(x)
    text = (np.round(np.where(nan, 0, x)).astype(np.int64).astype(str) if integer else x.astype(str)).astype(object)
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


def _generate_chunk_v1(n_jobs: int, cal: Calibration, machines: pd.DataFrame, users: np.ndarray,
                    user_p: np.ndarray, rng: np.random.Generator, *, sensor_jitter: float,
                    fresh_group: float) -> dict[str, pd.DataFrame]:
    wl_share = sum(WORKLOAD_JOB_COUNTS.values()) / REAL_GROUP_TAG_ROWS
    wl_names = list(WORKLOAD_JOB_COUNTS)
    wl_p = np.array(list(WORKLOAD_JOB_COUNTS.values()), float)
    has_wl = rng.random(n_jobs) < wl_share
    workload = np.where(has_wl, _choice(wl_names, wl_p / wl_p.sum(), n_jobs, rng), "")
    st_names = list(JOB_STATUS_COUNTS)
    st_p = np.array(list(JOB_STATUS_COUNTS.values()), float)
    status = _choice(st_names, st_p / st_p.sum(), n_jobs, rng)
    job_name, inst_id = hex_ids(n_jobs, 24, rng), hex_ids(n_jobs, 60, rng)
    user = _choice(users, user_p, n_jobs, rng)
    group = hex_ids(n_jobs, 32, rng)
    gpu_type_job = np.full(n_jobs, "", dtype=object)
    for w in sorted(set(workload) - {""}):  # sorted: set order varies with hash seeds
        idx = np.flatnonzero(workload == w)
        tpl = cal.templates[w].iloc[rng.integers(0, len(cal.templates[w]), idx.size)]
        user[idx] = tpl["user"].to_numpy()
        keep = rng.random(idx.size) >= fresh_group
        group[idx[keep]] = tpl["group"].to_numpy()[keep]
        gpu_type_job[idx] = tpl["gpu_type"].fillna("").to_numpy()

    # tasks
    n_tasks = 1 + rng.binomial(2, 0.35, n_jobs)
    t_job = np.repeat(np.arange(n_jobs), n_tasks)
    t_wl = workload[t_job]
    feats = np.empty((t_job.size, len(COPULA_COLUMNS)))
    t_name = np.empty(t_job.size, dtype=object)
    for w in sorted(set(t_wl)):
        idx = np.flatnonzero(t_wl == w)
        cop = cal.copulas[w] if w else cal.pooled
        feats[idx] = cop.sample(idx.size, rng)
        freq = cal.task_names[w] if w else cal.pooled_task_names
        t_name[idx] = _choice(freq.index.to_numpy(), freq.to_numpy(), idx.size, rng)
    # no repeated task name inside a job: later duplicates get a numbered suffix-free fallback
    tdf = pd.DataFrame({"j": t_job, "name": t_name})
    dup = tdf.duplicated(["j", "name"]).to_numpy()
    t_name[dup] = np.where(t_name[dup] == "worker", "ps", "worker")
    dup = pd.DataFrame({"j": t_job, "name": t_name}).duplicated(["j", "name"]).to_numpy()
    t_name[dup] = "evaluator"
    keep = ~pd.DataFrame({"j": t_job, "name": t_name}).duplicated(["j", "name"]).to_numpy()
    t_job, t_wl, feats, t_name = t_job[keep], t_wl[keep], feats[keep], t_name[keep]
    col = {c: feats[:, i] for i, c in enumerate(COPULA_COLUMNS)}
    inst_num = np.maximum(1, np.round(col["inst_num"])).astype(np.int64)
    # tasks of a job start together (the first task's drawn start, plus up to a minute)
    first = np.r_[0, np.flatnonzero(np.diff(t_job)) + 1]
    start = np.round(np.repeat(col["start_time"][first], np.diff(np.r_[first, t_job.size]))
                     + rng.integers(0, 60, t_job.size))
    end = start + np.maximum(1, np.round(col["duration"]))
    plan_gpu = np.where(col["plan_gpu"] > 0, col["plan_gpu"], np.nan)
    gpu_type, t_status, t_start, t_end, job_start, job_end = _task_states(
        plan_gpu, gpu_type_job[t_job], status, t_job, start, end, n_jobs)

    # instances (none for waiting jobs) and one sensor row per instance
    n_inst = np.where(t_status == "Waiting", 0, inst_num)
    i_task = np.repeat(np.arange(t_job.size), n_inst)
    i_job = t_job[i_task]
    m_idx = np.empty(i_task.size, dtype=np.int64)
    i_type = gpu_type[i_task]
    for g in sorted(set(i_type)):
        sel = np.flatnonzero(i_type == g)
        pool = np.flatnonzero(machines["gpu_type"].to_numpy() == g) if g else np.arange(len(machines))
        if pool.size == 0:
            pool = np.arange(len(machines))
        m_idx[sel] = pool[rng.integers(0, pool.size, sel.size)]
    machine = machines["machine"].to_numpy()[m_idx]
    cap_gpu = machines["cap_gpu"].to_numpy()[m_idx].astype(int)
    worker_name, inst_name = hex_ids(i_task.size, 60, rng), hex_ids(i_task.size, 60, rng)
    i_start = t_start[i_task] + rng.integers(0, 30, i_task.size)
    i_end = t_end[i_task]
    gpu_name = np.where(cap_gpu > 0, np.char.add("/dev/nvidia", (rng.integers(0, 1 << 30, i_task.size)
                                                                 % np.maximum(cap_gpu, 1)).astype(str)), "")
    jitter = np.exp(rng.normal(0.0, sensor_jitter, (i_task.size, len(SENSOR_FEATURES))))
    sens = np.column_stack([col[c][i_task] for c in SENSOR_FEATURES]) * jitter

    tables = {
        "pai_job_table": pd.DataFrame({"job_name": job_name, "inst_id": inst_id, "user": user, "status": status,
                                       "start_time": _fmt_num(job_start, True), "end_time": _fmt_num(job_end, True)}),
        "pai_task_table": pd.DataFrame({
            "job_name": job_name[t_job], "task_name": t_name, "inst_num": inst_num, "status": t_status,
            "start_time": _fmt_num(t_start, True), "end_time": _fmt_num(t_end, True),
            "plan_cpu": _fmt_num(col["plan_cpu"]), "plan_mem": _fmt_num(col["plan_mem"]),
            "plan_gpu": _fmt_num(plan_gpu), "gpu_type": gpu_type}),
        "pai_instance_table": pd.DataFrame({
            "job_name": job_name[i_job], "task_name": t_name[i_task], "inst_name": inst_name,
            "worker_name": worker_name, "inst_id": inst_id[i_job], "status": t_status[i_task],
            "start_time": _fmt_num(i_start, True), "end_time": _fmt_num(i_end, True), "machine": machine}),
        "pai_sensor_table": pd.DataFrame({
            "job_name": job_name[i_job], "task_name": t_name[i_task], "worker_name": worker_name,
            "inst_id": inst_id[i_job], "machine": machine, "gpu_name": gpu_name,
            **{c: sens[:, k] for k, c in enumerate(SENSOR_FEATURES)}}),
    }
    # a few jobs have no group-tag row, as in the real trace (1,055,032 of 1,055,501)
    tagged = rng.random(n_jobs) < REAL_GROUP_TAG_ROWS / REAL_JOB_ROWS
    tables["pai_group_tag_table"] = pd.DataFrame({
        "inst_id": inst_id[tagged], "user": user[tagged], "gpu_type_spec": "", "group": group[tagged],
        "workload": workload[tagged]})
    for name, df in tables.items():
        assert tuple(df.columns) == TABLES[name], name
    return tables


VERSIONS: tuple[str, ...] = ("v2", "v1")


def synthesize(out_dir: str | Path, n_jobs: int | str, rng: np.random.Generator, *,
               calibration: Calibration | None = None, chunk_jobs: int = 50_000, n_users: int = 1_300,
               sensor_jitter: float | None = None, fresh_group: float = 0.5, size_bias_power: float | None = None,
               version: str = "v2", planted: str | None = None, progress: bool = True) -> dict[str, int]:
    """Write ``pai_<table>.tar.gz`` for the five trace tables plus the real machine spec into ``out_dir``.

    ``n_jobs`` is a job count or a preset name in :data:`SIZES` (``"real"`` = 1,055,501 jobs, the
    real trace's job-table size). Returns the number of rows written per table. Archives are
    written atomically: an interrupted run leaves no partial archive.

    ``version="v2"`` (default) builds jobs from real rows (see :func:`generate_tables`);
    ``version="v1"`` is the earlier per-workload Gaussian copula, kept for before/after
    comparisons. ``size_bias_power > 0`` (v1 only) calibrates on :func:`size_bias_resample` of the
    real rows; v2 corrects the join's size bias by construction and warns if it is given.
    ``sensor_jitter``: v1, sigma of the instances' log-normal jitter (default 0.1); v2, the job-level
    noise as a fraction of each column's robust log spread in its workload (default
    :data:`BANDWIDTH`; instances get half of it).

    ``planted="authors"`` (v2 only; default ``None`` plants nothing and leaves the trace as before)
    plants the authors' 26 profiles as known structure (:func:`plant_profiles`) and writes the
    ground truth beside the archives: :data:`PLANTED_LABELS` (``job_name, task_name, planted``
    for every task of a workload job, -1 = background) and :data:`PLANTED_PROFILES` (one row
    per planted profile); :func:`attach_planted` adds the label to sampled rows.
    """
    if version not in VERSIONS:
        raise ValueError(f"unknown generator version {version!r}; known: {list(VERSIONS)}")
    if planted is not None and (version != "v2" or planted not in PLANTED_SPECS):
        raise ValueError(f"planted={planted!r} needs version='v2' and one of {PLANTED_SPECS}")
    if isinstance(n_jobs, str):
        if n_jobs not in SIZES:
            raise ValueError(f"unknown size preset {n_jobs!r}; known: {sorted(SIZES)}")
        n_jobs = SIZES[n_jobs]
    if n_jobs <= 0:
        raise ValueError(f"n_jobs must be positive, got {n_jobs}")
    if version == "v2" and size_bias_power:
        warnings.warn(f"size_bias_power={size_bias_power} applies to version='v1' only; v2 weights its job "
                      "templates by 1 / instances^2 instead", stacklevel=2)
    sensor_jitter = (0.1 if version == "v1" else BANDWIDTH) if sensor_jitter is None else sensor_jitter
    if calibration is None:
        from schedlab.polaris.calibration import load_calibration_rows

        rows = load_calibration_rows()
        if version == "v1":
            rows = size_bias_resample(rows, size_bias_power or 0.0, np.random.default_rng([0, 17]))
        calibration = calibrate(rows)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    machines = _load_machines()
    users = hex_ids(n_users, 12, rng)
    user_p = 1.0 / np.arange(1, n_users + 1) ** 1.1
    user_p /= user_p.sum()
    plant = planted_top_job_instances(n_jobs)
    model = _job_model(calibration) if version == "v2" else None
    if planted is not None:
        model = plant_profiles(model, planted, rng, top_job=plant)
    label_parts: list[pd.DataFrame] = []
    counts = dict.fromkeys(TRACE_TABLES, 0)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".synth-") as tmp:
        csvs = {t: Path(tmp) / f"{t}.csv" for t in TRACE_TABLES}
        handles = {t: open(p, "w", newline="") for t, p in csvs.items()}
        try:
            done = 0
            with progress_bar(total=n_jobs, unit="job", desc="synthesize", disable=not progress) as bar:
                while done < n_jobs:
                    m = min(chunk_jobs, n_jobs - done)
                    if version == "v1":
                        tables = _generate_chunk_v1(m, calibration, machines, users, user_p, rng,
                                                    sensor_jitter=sensor_jitter, fresh_group=fresh_group)
                    else:
                        tables = _generate_chunk_v2(m, model, machines, users, user_p, rng,
                                                    sensor_jitter=sensor_jitter, fresh_group=fresh_group,
                                                    plant_top_job=plant if done == 0 else 0)
                    if PLANTED_KEY in tables:
                        label_parts.append(tables.pop(PLANTED_KEY))
                    for t, df in tables.items():
                        df.to_csv(handles[t], header=False, index=False, lineterminator="\n")
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
    if planted is not None:
        with atomic_path(out_dir / PLANTED_LABELS) as dest:
            pd.concat(label_parts, ignore_index=True).to_parquet(dest, index=False)
        atomic_write_text(out_dir / PLANTED_PROFILES, model.planted.profiles.to_csv(index=False))
    return counts


def _job_model(calibration: Calibration) -> "JobModel":
    if calibration.jobs is None:
        raise ValueError("this Calibration has no v2 job model; build it with synthetic.calibrate(rows)")
    return calibration.jobs


def generate_tables(n_jobs: int, rng: np.random.Generator, *, calibration: Calibration,
                    version: str = "v2", workload: np.ndarray | None = None, sensor_jitter: float | None = None,
                    fresh_group: float = 0.5, n_users: int = 1_300, planted: str | None = None,
                    ) -> dict[str, pd.DataFrame]:
    """The five trace tables of ``n_jobs`` jobs as in-memory frames (what :func:`synthesize`
    writes, without archives; no planted top job). ``workload`` (v2 only) fixes each job's workload,
    e.g. to draw many jobs of one stratum for a realism check. ``planted`` (v2 only, see
    :func:`synthesize`) adds the frame :data:`PLANTED_KEY` with each workload task's planted profile."""
    if version not in VERSIONS:
        raise ValueError(f"unknown generator version {version!r}; known: {list(VERSIONS)}")
    sensor_jitter = (0.1 if version == "v1" else BANDWIDTH) if sensor_jitter is None else sensor_jitter
    machines = _load_machines()
    users = hex_ids(n_users, 12, rng)
    user_p = 1.0 / np.arange(1, n_users + 1) ** 1.1
    user_p /= user_p.sum()
    if version == "v1":
        if workload is not None:
            raise ValueError("workload= is supported by version 'v2' only")
        return _generate_chunk_v1(n_jobs, calibration, machines, users, user_p, rng,
                                  sensor_jitter=sensor_jitter, fresh_group=fresh_group)
    model = _job_model(calibration)
    if planted is not None:
        if planted not in PLANTED_SPECS:
            raise ValueError(f"unknown planted structure {planted!r}; known: {PLANTED_SPECS}")
        model = plant_profiles(model, planted, rng)
    return _generate_chunk_v2(n_jobs, model, machines, users, user_p, rng, workload=workload,
                              sensor_jitter=sensor_jitter, fresh_group=fresh_group)


# --------------------------------------------------------------------------------------------
# version "v2": jobs -> tasks -> instances built from real rows (the default)
# --------------------------------------------------------------------------------------------

#: the job name the paper calls the most recurrent one in its sample (Section III-C, SHAP), in
#: profiles 5 and 6, which it characterises as ``rl`` profiles with low spread
PAPER_TOP_JOB_NAME = "94b340f2cdedf37303d41bf2"
#: share of the ``rl`` stratum's faithful-join rows given to the planted job (an assumption: the
#: paper names the job but not its size)
PLANTED_JOB_SHARE = 0.25
#: columns copied from a template row without noise: discrete plan values and the GPU-memory
#: maximum, which sits on repeated exact values in the real rows
EXACT: tuple[str, ...] = ("inst_num", "plan_cpu", "plan_mem", "plan_gpu", "max_gpu_wrk_mem")
NOISY_SENSORS: tuple[str, ...] = tuple(c for c in SENSOR_FEATURES if c != "max_gpu_wrk_mem")


#: tasks per job in the real trace (job ⋈ task 1,261,048 rows over 1,055,501 jobs)
REAL_TASKS_PER_JOB = 1_261_048 / REAL_JOB_ROWS
#: instances per job in the real trace, estimated: the instance CSV is 1.98 GB at about 260 bytes a
#: row (24 + 60 + 60 + 60 hex characters, names, times, machine), about 7.6 M rows over 1,055,501 jobs
REAL_INSTANCES_PER_JOB = 7.2


@dataclass
class JobTemplates:
    """Job templates built from real rows: a task alone, or a ``ps`` task with a partner task.

    ``first``/``second`` index real rows (``second == -1``: one task); templates are drawn
    uniformly. ``rows_per_job`` is the expected faithful-join rows of a terminated job
    (``tasks x instances^2``, instances summed over the job's tasks).
    """

    first: np.ndarray
    second: np.ndarray
    rows_per_job: float

    @property
    def pair_share(self) -> float:
        return float(np.mean(self.second >= 0))


def _pair_ps_rows(start: np.ndarray, is_ps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair each ``ps`` row with the non-``ps`` row nearest in start time (unused ones first):
    a ``ps`` task never runs alone in the trace, and rows of one job start at about the same time.
    Returns ``(first, second)`` over templates; unpaired non-``ps`` rows are single-task templates."""
    ps, other = np.flatnonzero(is_ps), np.flatnonzero(~is_ps)
    if other.size == 0:
        return other, other
    used = np.zeros(other.size, dtype=bool)
    partner = np.empty(ps.size, dtype=np.int64)
    for k in ps[np.argsort(start[ps], kind="stable")]:
        gap = np.abs(start[other] - start[k]) + np.where(used, np.inf, 0.0)
        if np.isinf(gap).all():
            gap = np.abs(start[other] - start[k])
        j = int(np.argmin(gap))
        used[j] = True
        partner[np.searchsorted(ps, k)] = other[j]
    alone = other[~used]
    return np.r_[ps, alone], np.r_[partner, np.full(alone.size, -1)]


def _templates(idx: np.ndarray, rows: pd.DataFrame) -> JobTemplates:
    sub = rows.iloc[idx]
    first, second = _pair_ps_rows(sub["start_time"].to_numpy(float), (sub["task_name"] == "ps").to_numpy())
    if first.size == 0:
        raise ValueError("job templates need at least one non-ps row")
    inst = sub["inst_num"].to_numpy(float)
    n_inst = inst[first] + np.where(second >= 0, inst[np.maximum(second, 0)], 0.0)
    n_tasks = 1.0 + (second >= 0)
    return JobTemplates(idx[first], np.where(second >= 0, idx[np.maximum(second, 0)], -1),
                        float(np.mean(n_tasks * n_inst ** 2)))


@dataclass
class JobModel:
    """Everything version ``v2`` draws from: the real rows and per-workload job templates."""

    values: dict[str, np.ndarray]  # numeric columns of the real rows
    meta: dict[str, np.ndarray]  # user, group, gpu_type ('' = none), task_name
    templates: dict[str, JobTemplates]  # per workload; '' = jobs without a workload (pooled)
    job_share: dict[str, float]  # P(job has workload w)
    terminated_share: dict[str, float]  # P(Terminated | workload), '' included
    pair_share_none: float  # P(two tasks) for jobs without a workload
    start_sd: float
    none_weights: tuple[np.ndarray, np.ndarray] = (np.ones(0), np.ones(0))  # singles, pairs (no workload)
    log_sd: dict[str, np.ndarray] = field(default_factory=dict)  # per column: robust sd of log values, per row
    planted: "PlantedModes | None" = None  # planted profiles (:func:`plant_profiles`); None: none planted


#: noise of v2's continuous columns, as a fraction of each row's local spread: the log distance
#: to its :data:`NEIGHBOURS`-th nearest value in the same workload (an adaptive kernel bandwidth:
#: tight real clusters such as bert's max_mem stay tight, isolated values move more)
BANDWIDTH = 0.5
NEIGHBOURS = 3


def _local_log_sd(x: np.ndarray) -> np.ndarray:
    """Per value: log distance to its ``NEIGHBOURS``-th nearest positive value (0 for zeros).

    >>> _local_log_sd(np.array([1.0, 1.0, 1.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0]
    """
    out = np.zeros(x.size)
    pos = np.flatnonzero(x > 0)
    if pos.size <= NEIGHBOURS:
        return out
    lx = np.log(x[pos])
    d = np.abs(lx[:, None] - lx[None, :])
    out[pos] = np.sort(d, axis=1)[:, NEIGHBOURS]
    return out


def _log_sd_per_row(rows: pd.DataFrame, cols: tuple[str, ...]) -> dict[str, np.ndarray]:
    """:func:`_local_log_sd` per column within each workload (``''`` = rows without one)."""
    key = rows["workload"].fillna("").to_numpy()
    out = {}
    for c in cols:
        x = rows[c].to_numpy(float)
        sd = np.zeros(x.size)
        for w in np.unique(key):
            sel = np.flatnonzero(key == w)
            sd[sel] = _local_log_sd(x[sel])
        out[c] = sd
    return out


def fit_job_model(rows: pd.DataFrame) -> JobModel:
    """Job templates per workload (pooled for workloads without a non-``ps`` real row) and the
    job and terminated shares that size each workload's faithful-join stratum as Table I.

    A workload needs ``Table I rows / rows_per_job`` terminated jobs; it gets
    ``max(real group-tag jobs, that)`` jobs, of which that many terminate. Jobs without a
    workload fill the rest, with the terminated share that keeps the real 69.4 % overall and the
    two-task share that keeps the real 1.195 tasks per job overall.
    """
    rows = rows.reset_index(drop=True)
    values = {c: rows[c].to_numpy(dtype=float) for c in (*TASK_FEATURES, "duration", *SENSOR_FEATURES)}
    values["plan_gpu"] = np.nan_to_num(values["plan_gpu"])  # NaN = CPU-only task
    meta = {"user": rows["user"].astype(str).to_numpy(), "group": rows["group"].astype(str).to_numpy(),
            "gpu_type": rows["gpu_type"].fillna("").astype(str).to_numpy(),
            "task_name": rows["task_name"].astype(str).to_numpy()}
    pooled = _templates(np.arange(len(rows)), rows)
    templates = {"": pooled}
    for w in WORKLOADS:
        idx = np.flatnonzero((rows["workload"] == w).to_numpy())
        has_other = idx.size > 0 and bool((rows["task_name"].iloc[idx] != "ps").any())
        templates[w] = _templates(idx, rows) if has_other else pooled
    job_share, term, pair_none, none_share = _strata_shares({w: templates[w].rows_per_job for w in WORKLOADS},
                                                            {w: templates[w].pair_share for w in WORKLOADS})
    model = JobModel(values, meta, templates, job_share, term, pair_none, float(np.std(values["start_time"])))
    model.none_weights = _none_weights(model, none_share)
    model.log_sd = _log_sd_per_row(rows, (*NOISY_SENSORS, "duration"))
    return model


def _strata_shares(rows_per_job: dict[str, float], pair_share: dict[str, float],
                   ) -> tuple[dict[str, float], dict[str, float], float, float]:
    """Job and terminated shares per workload that size each faithful-join stratum as Table I,
    given a workload job's expected join rows and two-task share; returns them with the two-task
    share and the share of jobs without a workload."""
    job_share, term = {}, {}
    for w in WORKLOADS:
        need = TABLE_I_SIZES[w] / rows_per_job[w]  # terminated jobs for Table I's rows
        n_w = max(WORKLOAD_JOB_COUNTS[w], need)
        job_share[w], term[w] = n_w / REAL_GROUP_TAG_ROWS, need / n_w
    none_share = 1.0 - sum(job_share.values())
    if none_share <= 0:
        raise ValueError("Table I strata need more jobs than the trace has; check TABLE_I_SIZES")
    p_term = JOB_STATUS_COUNTS["Terminated"] / sum(JOB_STATUS_COUNTS.values())
    term[""] = float(np.clip((p_term - sum(job_share[w] * term[w] for w in WORKLOADS)) / none_share, 0, 1))
    extra = REAL_TASKS_PER_JOB - 1 - sum(job_share[w] * pair_share[w] for w in WORKLOADS)
    return job_share, term, float(np.clip(extra / none_share, 0, 1)), none_share


def _job_instances(tpl: JobTemplates, inst: np.ndarray) -> np.ndarray:
    return inst[tpl.first] + np.where(tpl.second >= 0, inst[np.maximum(tpl.second, 0)], 0.0)


def _none_weights(model: JobModel, none_share: float) -> tuple[np.ndarray, np.ndarray]:
    """Template weights ``instances ** -a`` for jobs without a workload (which never reach the
    join), ``a`` in [0, 3] chosen by bisection so that instances per job match
    :data:`REAL_INSTANCES_PER_JOB` overall."""
    inst = model.values["inst_num"]
    wl_inst = sum(model.job_share[w] * _job_instances(model.templates[w], inst).mean() for w in WORKLOADS)
    tpl = model.templates[""]
    n_inst = _job_instances(tpl, inst)
    pair = tpl.second >= 0

    def weights(a: float) -> tuple[np.ndarray, np.ndarray]:
        ws, wp = n_inst[~pair] ** -a, n_inst[pair] ** -a
        return ws / ws.sum(), wp / wp.sum()

    def mean_inst(a: float) -> float:
        ws, wp = weights(a)
        q = model.pair_share_none
        return wl_inst + none_share * ((1 - q) * ws @ n_inst[~pair] + q * wp @ n_inst[pair])

    lo, hi = 0.0, 3.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean_inst(mid) > REAL_INSTANCES_PER_JOB else (lo, mid)
    return weights(hi)


def _job_status(workload: np.ndarray, model: JobModel, rng: np.random.Generator) -> np.ndarray:
    """Terminated with the workload's share; other jobs Failed / Running / Waiting in the real
    proportions."""
    p_term = np.array([model.terminated_share[w] for w in workload])
    other = [s for s in JOB_STATUS_COUNTS if s != "Terminated"]
    op = np.array([JOB_STATUS_COUNTS[s] for s in other], float)
    status = _choice(other, op / op.sum(), workload.size, rng).astype(object)
    status[rng.random(workload.size) < p_term] = "Terminated"
    return status


def _draw_templates(workload: np.ndarray, model: JobModel, rng: np.random.Generator,
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(first, second) real-row indices per job and the planted profile of each of the two tasks
    (-1: none): templates of the job's workload drawn uniformly (with planted profiles: a
    profile's template or a background one, :func:`_draw_planted`); jobs without a workload take a
    pair with :attr:`JobModel.pair_share_none`, and templates with :attr:`JobModel.none_weights`."""
    first = np.empty(workload.size, dtype=np.int64)
    second = np.empty(workload.size, dtype=np.int64)
    labels = np.full((2, workload.size), -1, dtype=np.int64)
    for w in sorted(set(workload)):
        idx = np.flatnonzero(workload == w)
        tpl = model.templates[w]
        if w and model.planted is not None:
            first[idx], second[idx], labels[0, idx], labels[1, idx] = _draw_planted(idx.size, w, model.planted, rng)
            continue
        if w:
            k = rng.integers(0, tpl.first.size, idx.size)
        else:
            pairs, singles = np.flatnonzero(tpl.second >= 0), np.flatnonzero(tpl.second < 0)
            pick_pair = rng.random(idx.size) < model.pair_share_none
            ws, wp = model.none_weights
            k = np.where(pick_pair, pairs[rng.choice(pairs.size, idx.size, p=wp)],
                         singles[rng.choice(singles.size, idx.size, p=ws)])
        first[idx], second[idx] = tpl.first[k], tpl.second[k]
    return first, second, labels[0], labels[1]


def _generate_chunk_v2(n_jobs: int, model: JobModel, machines: pd.DataFrame, users: np.ndarray,
                       user_p: np.ndarray, rng: np.random.Generator, *, workload: np.ndarray | None = None,
                       sensor_jitter: float, fresh_group: float, plant_top_job: int = 0,
                       ) -> dict[str, pd.DataFrame]:
    """One chunk of jobs of version ``v2``; ``workload`` forces the jobs' workloads (realism
    checks), ``plant_top_job > 0`` makes the first job the paper's top job with that many instances."""
    if workload is None:
        names = ["", *WORKLOADS]
        p = np.array([1.0 - sum(model.job_share.values()), *(model.job_share[w] for w in WORKLOADS)])
        workload = _choice(names, p, n_jobs, rng)
    workload = np.asarray(workload, dtype=object)
    status = _job_status(workload, model, rng)
    first, second, label_first, label_second = _draw_templates(workload, model, rng)
    job_name, inst_id = hex_ids(n_jobs, 24, rng), hex_ids(n_jobs, 60, rng)
    if plant_top_job:
        workload[0], status[0], second[0], job_name[0] = "rl", "Terminated", -1, PAPER_TOP_JOB_NAME
        if model.planted is not None:  # the top job is one of its planted profile's jobs
            first[0], label_first[0], label_second[0] = model.planted.top_row, model.planted.top_profile, -1
        else:
            nonps = np.flatnonzero(model.meta["task_name"] != "ps")
            first[0] = nonps[rng.integers(0, nonps.size)]
    meta = model.meta
    user = _choice(users, user_p, n_jobs, rng).astype(object)
    group = hex_ids(n_jobs, 32, rng).astype(object)
    wl = workload != ""
    user[wl] = meta["user"][first[wl]]
    keep = wl & (rng.random(n_jobs) >= fresh_group)
    group[keep] = meta["group"][first[keep]]

    # tasks: the template's one or two rows
    two = second >= 0
    t_job = np.r_[np.arange(n_jobs), np.flatnonzero(two)]
    t_row = np.r_[first, second[two]]
    order = np.argsort(t_job, kind="stable")
    t_job, t_row = t_job[order], t_row[order]
    t_label = np.r_[label_first, label_second[two]][order]
    v = model.values
    inst_num = v["inst_num"][t_row].astype(np.int64)
    if plant_top_job:
        inst_num[t_job == 0] = plant_top_job
    shift = rng.normal(0.0, 0.02 * model.start_sd, n_jobs)  # job-level: tasks of a job move together
    start = np.round(v["start_time"][t_row] + shift[t_job])
    dur_sd = BANDWIDTH * model.log_sd["duration"][t_row]
    duration = np.maximum(1, np.round(v["duration"][t_row] * np.exp(rng.normal(0, 1, t_job.size) * dur_sd)))
    end = start + duration
    plan_gpu = np.where(v["plan_gpu"][t_row] > 0, v["plan_gpu"][t_row], np.nan)
    t_name = meta["task_name"][t_row].astype(object)
    gpu_type, t_status, t_start, t_end, job_start, job_end = _task_states(
        plan_gpu, meta["gpu_type"][t_row], status, t_job, start, end, n_jobs)

    # instances (none for waiting jobs), one sensor row each. A real row's sensor values come from
    # any instance of its job (the join is on the job id), so a job's instances all derive from one
    # of its template rows (drawn uniformly per job: each template row keeps its share of the
    # join's sensor values) times a job-level and a smaller instance-level log-normal factor
    n_inst = np.where(t_status == "Waiting", 0, inst_num)
    i_task = np.repeat(np.arange(t_job.size), n_inst)
    i_job = t_job[i_task]
    sensor_row = np.where((second >= 0) & (rng.random(n_jobs) < 0.5), second, first)[i_job]
    z_job = rng.normal(0.0, 1.0, (n_jobs, len(NOISY_SENSORS)))
    z_inst = rng.normal(0.0, 0.5, (i_task.size, len(NOISY_SENSORS)))
    sens = {}
    for k, c in enumerate(NOISY_SENSORS):
        sd = sensor_jitter * model.log_sd[c][sensor_row]
        sens[c] = v[c][sensor_row] * np.exp((z_job[i_job, k] + z_inst[:, k]) * sd)
    sens["max_gpu_wrk_mem"] = v["max_gpu_wrk_mem"][sensor_row]
    sens["max_mem"] = np.maximum(sens["max_mem"], sens["avg_mem"])
    has_max = sens["max_gpu_wrk_mem"] > 0
    sens["avg_gpu_wrk_mem"] = np.where(has_max, np.minimum(sens["avg_gpu_wrk_mem"], sens["max_gpu_wrk_mem"]),
                                       sens["avg_gpu_wrk_mem"])
    m_idx = _machines_for(gpu_type[i_task], machines, rng)
    machine = machines["machine"].to_numpy()[m_idx]
    cap_gpu = machines["cap_gpu"].to_numpy()[m_idx].astype(int)
    worker_name, inst_name = hex_ids(i_task.size, 60, rng), hex_ids(i_task.size, 60, rng)
    i_start = t_start[i_task] + rng.integers(0, 30, i_task.size)
    gpu_name = np.where(cap_gpu > 0, np.char.add("/dev/nvidia", (rng.integers(0, 1 << 30, i_task.size)
                                                                 % np.maximum(cap_gpu, 1)).astype(str)), "")
    tables = {
        "pai_job_table": pd.DataFrame({"job_name": job_name, "inst_id": inst_id, "user": user, "status": status,
                                       "start_time": _fmt_num(job_start, True), "end_time": _fmt_num(job_end, True)}),
        "pai_task_table": pd.DataFrame({
            "job_name": job_name[t_job], "task_name": t_name, "inst_num": inst_num, "status": t_status,
            "start_time": _fmt_num(t_start, True), "end_time": _fmt_num(t_end, True),
            "plan_cpu": _fmt_num(v["plan_cpu"][t_row]), "plan_mem": _fmt_num(v["plan_mem"][t_row]),
            "plan_gpu": _fmt_num(plan_gpu), "gpu_type": gpu_type}),
        "pai_instance_table": pd.DataFrame({
            "job_name": job_name[i_job], "task_name": t_name[i_task], "inst_name": inst_name,
            "worker_name": worker_name, "inst_id": inst_id[i_job], "status": t_status[i_task],
            "start_time": _fmt_num(i_start, True), "end_time": _fmt_num(t_end[i_task], True), "machine": machine}),
        "pai_sensor_table": pd.DataFrame({
            "job_name": job_name[i_job], "task_name": t_name[i_task], "worker_name": worker_name,
            "inst_id": inst_id[i_job], "machine": machine, "gpu_name": gpu_name,
            **{c: sens[c] for c in SENSOR_FEATURES}}),
    }
    tagged = rng.random(n_jobs) < REAL_GROUP_TAG_ROWS / REAL_JOB_ROWS
    tagged[0] |= bool(plant_top_job)
    tables["pai_group_tag_table"] = pd.DataFrame({
        "inst_id": inst_id[tagged], "user": user[tagged], "gpu_type_spec": "", "group": group[tagged],
        "workload": workload[tagged]})
    for name, df in tables.items():
        assert tuple(df.columns) == TABLES[name], name
    if model.planted is not None:  # ground truth beside the tables, per task of a workload job
        keep = workload[t_job] != ""
        tables[PLANTED_KEY] = pd.DataFrame({"job_name": job_name[t_job][keep], "task_name": t_name[keep],
                                            "planted": t_label[keep]})
    return tables


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


def planted_top_job_instances(n_jobs: int) -> int:
    """Instances of the planted top job: ``instances^2`` faithful-join rows make
    :data:`PLANTED_JOB_SHARE` of the ``rl`` stratum's Table I rows at this scale (0: too small to plant).

    >>> planted_top_job_instances(REAL_JOB_ROWS)
    461
    """
    rows = PLANTED_JOB_SHARE * TABLE_I_SIZES["rl"] * n_jobs / REAL_JOB_ROWS
    return int(round(np.sqrt(rows))) if rows >= 4 else 0


# --------------------------------------------------------------------------------------------
# planted profiles (v2, ``planted="authors"``): known structure to score a clustering against
# --------------------------------------------------------------------------------------------

#: the planted structures :func:`plant_profiles` knows
PLANTED_SPECS: tuple[str, ...] = ("authors",)
#: files :func:`synthesize` writes beside the archives when it plants profiles
PLANTED_LABELS = "planted_labels.parquet"
PLANTED_PROFILES = "planted_profiles.csv"
#: key of the ground-truth frame in :func:`generate_tables`' result
PLANTED_KEY = "planted"

#: The authors' 26 HDBSCAN profiles of the 100,001-row sample: (profile, workload, task name,
#: sample rows). Printed in ``polaris-slo-cloud/polaris-ai`` ``ml_data-profiling/
#: alibaba_data-evaluation.ipynb``: cell 84 gives each workload's share of its sample rows per
#: profile and cell 83 the rows per workload, cell 77/76 the same per task name (their products
#: give these counts; the clustered rows add up to 75,398 = Table V's set; Table V's validation
#: support is about a fifth of each). Every profile is almost entirely one workload and one task
#: name (profile 9 also holds 1 graphlearn and 7 xlnet rows, profile 0 one tensorflow row, 13 four
#: worker rows: left to the background). Their notebooks print no per-profile feature medians or
#: means (only boxplot figures), so the planted profiles' feature values come from real rows.
AUTHORS_PROFILES: tuple[tuple[int, str, str, int], ...] = (
    (0, "bert", "worker", 2101), (1, "ctr", "ps", 5751), (2, "ctr", "ps", 836), (3, "ctr", "ps", 3043),
    (4, "rl", "worker", 717), (5, "rl", "worker", 735), (6, "rl", "worker", 340), (7, "inception", "worker", 737),
    (8, "bert", "worker", 12522), (9, "bert", "ps", 11604), (10, "graphlearn", "ps", 648),
    (11, "graphlearn", "ps", 302), (12, "ctr", "worker", 5501), (13, "ctr", "evaluator", 2283),
    (14, "graphlearn", "worker", 686), (15, "ctr", "worker", 777), (16, "ctr", "worker", 1943),
    (17, "graphlearn", "worker", 567), (18, "graphlearn", "worker", 585), (19, "graphlearn", "worker", 2072),
    (20, "graphlearn", "ps", 2128), (21, "graphlearn", "ps", 395), (22, "inception", "worker", 1891),
    (23, "inception", "worker", 7474), (24, "inception", "ps", 1994), (25, "inception", "ps", 7754))
#: the authors' sample rows per workload (same cell 83; Table I's rounding of TABLE_I_SIZES)
AUTHORS_SAMPLE_ROWS: dict[str, int] = {"bert": 29818, "inception": 29385, "ctr": 24881, "graphlearn": 13323,
                                       "rl": 2316, "resnet": 166, "xlnet": 43, "nmt": 37, "vgg": 32}
#: the profile holding most rows of the paper's top job (cell 72: 68 % in profile 5, 32 % in 6):
#: the planted top job copies its template row
TOP_JOB_PROFILE = 5
#: the planted top job's own label: it has its own instance count (a feature), so its rows are
#: not those of :data:`TOP_JOB_PROFILE`'s other jobs
TOP_JOB_LABEL = 26


@dataclass
class PlantedModes:
    """Planted job modes per workload (index 0 = background) and the planted profiles' table.

    A *mode* is one job template (one task, or a ``ps`` task with a partner task); each of its
    tasks carries a planted profile label (-1: background). ``weights[w]`` is P(mode) for a job of
    workload ``w``; background jobs draw uniformly from ``background[w]`` (the workload's v2
    templates that use no planted row).
    """

    profiles: pd.DataFrame
    first: dict[str, np.ndarray]
    second: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]  # (2, modes): planted profile of the first / second task
    weights: dict[str, np.ndarray]
    background: dict[str, JobTemplates]
    top_row: int = -1
    top_profile: int = -1


def _authors_modes() -> list[tuple[str, int, int]]:
    """The authors' profiles as job modes ``(workload, first-task profile, second-task profile)``.

    Rule (documented, not fitted): within a workload the ``ps`` profiles, largest first, are the
    ``ps`` tasks of jobs whose ``worker`` task is the ``worker`` profile of the same rank (a ``ps``
    task never runs alone; bert's top jobs split about 50/50 between profiles 8 and 9 in cell 72);
    the other profiles are single-task jobs; a ``ps`` profile left over gets a background
    partner (-1). Pairs here: 9/8, 1/12, 3/16, 2/15, 25/23, 24/22, 20/19, 10/14, 21/18, 11/17.

    >>> _authors_modes()[:2]
    [('bert', 9, 8), ('bert', 0, -1)]
    """
    table = pd.DataFrame(AUTHORS_PROFILES, columns=["profile", "workload", "task_name", "rows"])
    modes = []
    for w in WORKLOADS:
        sub = table[table.workload == w].sort_values(["rows", "profile"], ascending=[False, True])
        ps = sub[sub.task_name == "ps"].profile.tolist()
        workers = sub[sub.task_name == "worker"].profile.tolist()
        k = min(len(ps), len(workers))
        modes += [(w, p, q) for p, q in zip(ps[:k], workers[:k])] + [(w, p, -1) for p in ps[k:]]
        modes += [(w, p, -1) for p in sub.profile if p not in ps and p not in workers[:k]]
    return modes


def _pick_row(model: JobModel, own: np.ndarray, task: str, used: np.ndarray, rng: np.random.Generator,
              near: float | None = None) -> int:
    """An unused real row with ``task_name == task``: of the workload's rows ``own`` if one is
    left, else of all rows; uniformly, or the one nearest in start time to ``near``."""
    match = (model.meta["task_name"] == task) & ~used
    for pool in (own[match[own]], np.flatnonzero(match)):
        if pool.size:
            if near is None:
                return int(pool[rng.integers(0, pool.size)])
            return int(pool[np.argmin(np.abs(model.values["start_time"][pool] - near))])
    raise ValueError(f"planted profiles: no unused real row with task_name {task!r} left")


def plant_profiles(model: JobModel, planted: str, rng: np.random.Generator, *, top_job: int = 0) -> JobModel:
    """A copy of ``model`` whose workload jobs carry planted profiles (``planted="authors"``).

    The authors' 26 profiles (:data:`AUTHORS_PROFILES`: workload, task name and sample rows as
    their notebook printed them) become job modes (:func:`_authors_modes`). Each mode is one job
    template made of distinct real rows of its workload with the profile's task name (drawn
    uniformly with ``rng``: the real rows are rows of the join, so this already favours jobs by
    their join rows; a ``ps`` task's partner is the unused ``worker`` row nearest in start time,
    and a one-instance task other than a worker, ctr's evaluator, also gets such a partner whose
    rows are background; workloads without such rows, ``rl`` and ``vgg``, use other workloads'
    rows; no row serves two profiles). Its jobs get the v2 noise, so a profile is a blob around one real row.
    The mode weights make each profile's share of its workload's faithful-join rows the authors'
    share of the workload's sample rows (a mode's job has ``tasks x instances^2`` join rows; the
    two tasks of a pair have equal rows, so a pair's profiles get the mean of the authors' two
    sizes); the rest of the stratum (the authors' outliers, 24.6 %, and the small workloads) is
    background: ordinary v2 jobs from templates that use no planted row, label -1. Strata stay
    sized as Table I (:func:`_strata_shares`). ``top_job > 0`` (the planted top job's instances,
    :func:`planted_top_job_instances`): the paper's top job copies :data:`TOP_JOB_PROFILE`'s
    template row with its own instance count, is labelled :data:`TOP_JOB_LABEL` (27 planted
    profiles then) and takes :data:`PLANTED_JOB_SHARE` of the rl stratum out of that profile's
    share. Jobs without a workload keep the unplanted model's template weights.
    """
    if planted not in PLANTED_SPECS:
        raise ValueError(f"unknown planted structure {planted!r}; known: {PLANTED_SPECS}")
    size = {p: n for p, _, _, n in AUTHORS_PROFILES}
    modes = sorted(_authors_modes(), key=lambda m: (model.templates[m[0]] is model.templates[""],
                                                     WORKLOADS.index(m[0])))  # own rows first
    n_rows = model.values["inst_num"].size
    used = np.zeros(n_rows, dtype=bool)
    wl_rows = {w: np.unique(np.r_[model.templates[w].first, model.templates[w].second[model.templates[w].second >= 0]])
               for w in WORKLOADS}
    task_of = {p: t for p, _, t, _ in AUTHORS_PROFILES}
    inst_one = model.values["inst_num"] <= 1
    picked = []
    for w, p, q in modes:
        own = wl_rows[w] if model.templates[w] is not model.templates[""] else np.arange(0)
        a = _pick_row(model, own, task_of[p], used, rng)
        used[a] = True
        b = -1
        # a ps task runs with a partner task; so does a one-instance task other than a worker
        # (ctr's evaluators, all 44 real ones): alone, its job would have one join row
        if task_of[p] == "ps" or (task_of[p] != "worker" and inst_one[a]):
            b = _pick_row(model, own, task_of[q] if q >= 0 else "worker", used, rng,
                          near=model.values["start_time"][a])
            used[b] = True
        picked.append((w, p, q, a, b))
    inst = model.values["inst_num"]
    first, second, labels, weights, background, rpj, pair_share = {}, {}, {}, {}, {}, {}, {}
    records = []
    for w in WORKLOADS:
        mine = [m for m in picked if m[0] == w]
        bg = _unused_templates(model, w, used)
        n_tasks_bg = 1.0 + (bg.second >= 0)
        r_bg = bg.rows_per_job
        f = np.array([mm[3] for mm in mine], dtype=np.int64)
        s = np.array([mm[4] for mm in mine], dtype=np.int64)
        n_tasks = 1.0 + (s >= 0)
        i_tot = inst[f] + np.where(s >= 0, inst[np.maximum(s, 0)], 0.0)
        r = n_tasks * i_tot ** 2
        # share of the stratum's rows per mode: the labelled tasks' authors' rows, a pair's two
        # tasks having equal rows (a leftover ps profile's partner rows are background)
        share = np.array([(size[p] + (size[q] if q >= 0 else size[p] * (s_ >= 0))) / AUTHORS_SAMPLE_ROWS[w]
                          for (_, p, q, _, s_) in mine])
        if top_job and w == "rl":
            share = share - PLANTED_JOB_SHARE * np.array([p == TOP_JOB_PROFILE for _, p, _, _, _ in mine])
            share = np.maximum(share, 0.0)
            top_share = PLANTED_JOB_SHARE
        else:
            top_share = 0.0
        q0 = max(0.0, 1.0 - share.sum() - top_share)
        # P(mode) proportional to (row share) / (rows per job): expected rows then follow the shares;
        # Table I rows / rows_per_job terminated jobs then make 1 - top_share of the stratum
        a_all = np.r_[q0 / r_bg, share / r]
        rows_per_job = 1.0 / a_all.sum()
        first[w], second[w] = np.r_[-1, f], np.r_[-1, s]
        labels[w] = np.vstack([np.r_[-1, [mm[1] for mm in mine]], np.r_[-1, [mm[2] for mm in mine]]]).astype(np.int64)
        weights[w] = a_all / a_all.sum()
        background[w], rpj[w] = bg, rows_per_job
        pair_share[w] = float(weights[w][0] * np.mean(n_tasks_bg - 1) + weights[w][1:] @ (n_tasks - 1))
        for k, (_, p, q, a, b) in enumerate(mine):
            for prof, row, role in ((p, a, "first"), (q, b, "second")):
                if prof >= 0:
                    records.append({"profile": prof, "workload": w, "task_name": model.meta["task_name"][row],
                                    "row": row, "task": role, "partner_profile": q if role == "first" else p,
                                    "authors_rows": size[prof], "mode_weight": float(weights[w][k + 1]),
                                    "stratum_share": float(share[k] * (0.5 if s[k] >= 0 else 1.0)),
                                    "rows_per_job": float(r[k]), "inst_num": int(inst[row]),
                                    **{c: float(model.values[c][row]) for c in ("plan_cpu", "plan_mem", "plan_gpu")}})
    top_row = next(r["row"] for r in records if r["profile"] == TOP_JOB_PROFILE)
    if top_job:
        records.append({**next(r for r in records if r["profile"] == TOP_JOB_PROFILE), "profile": TOP_JOB_LABEL,
                        "partner_profile": -1, "authors_rows": -1, "mode_weight": float("nan"),
                        "stratum_share": PLANTED_JOB_SHARE, "rows_per_job": float(top_job) ** 2,
                        "inst_num": int(top_job)})
    profiles = pd.DataFrame(records).sort_values("profile").reset_index(drop=True)
    job_share, term, pair_none, _ = _strata_shares(rpj, pair_share)
    out = JobModel(model.values, model.meta, model.templates, job_share, term, pair_none, model.start_sd,
                   model.none_weights, model.log_sd)
    out.planted = PlantedModes(profiles, first, second, labels, weights, background, int(top_row), TOP_JOB_LABEL)
    return out


def _unused_templates(model: JobModel, w: str, used: np.ndarray) -> JobTemplates:
    """Workload ``w``'s v2 templates (pooled if it has none, or if none is left) that use no
    planted row: its background."""
    for tpl in (model.templates[w], model.templates[""]):
        ok = ~used[tpl.first] & ((tpl.second < 0) | ~used[np.maximum(tpl.second, 0)])
        if ok.any():
            f, s = tpl.first[ok], tpl.second[ok]
            inst = model.values["inst_num"]
            n_inst = inst[f] + np.where(s >= 0, inst[np.maximum(s, 0)], 0.0)
            return JobTemplates(f, s, float(np.mean((1.0 + (s >= 0)) * n_inst ** 2)))
    raise ValueError(f"planted profiles: no background template left for workload {w!r}")


def _draw_planted(n: int, w: str, planted: PlantedModes, rng: np.random.Generator,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` jobs of workload ``w``: a mode per job (0 = background, a uniform background template)."""
    mode = rng.choice(planted.weights[w].size, size=n, p=planted.weights[w])
    bg = planted.background[w]
    k = rng.integers(0, bg.first.size, n)
    is_bg = mode == 0
    first = np.where(is_bg, bg.first[k], planted.first[w][mode])
    second = np.where(is_bg, bg.second[k], planted.second[w][mode])
    return first, second, planted.labels[w][0, mode], planted.labels[w][1, mode]


def attach_planted(sample: pd.DataFrame, trace_dir: str | Path) -> pd.DataFrame:
    """``sample`` (rows of the joined trace) with a ``planted`` column: the planted profile of
    each row's task (-1 = background), from :data:`PLANTED_LABELS` in ``trace_dir``, matched on
    ``job_name, task_name``. Every sampled row must find its label (they all carry a workload)."""
    path = Path(trace_dir) / PLANTED_LABELS
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no planted labels (synthesize the trace with planted='authors')")
    labels = pd.read_parquet(path)
    if labels.duplicated(["job_name", "task_name"]).any():
        raise ValueError(f"{path}: (job_name, task_name) is not unique")
    out = sample.drop(columns=["planted"], errors="ignore").merge(labels, on=["job_name", "task_name"],
                                                                  how="left", validate="many_to_one")
    missing = int(out["planted"].isna().sum())
    if missing:
        raise ValueError(f"{path}: {missing} sampled rows have no planted label (trace and labels differ?)")
    out.index = sample.index
    out["planted"] = out["planted"].astype(np.int64)
    return out
