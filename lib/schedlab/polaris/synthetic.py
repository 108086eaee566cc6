"""A synthetic Alibaba PAI trace in the exact upstream format, calibrated on the 800 real rows.

Everything produced from it is **synthetic**: it has the real trace's layout (five header-less
CSVs, each the single member ``pai_<table>.csv`` of ``pai_<table>.tar.gz``; real ID formats; the
real machine-spec archive copied unchanged) and per-workload feature distributions fitted on the
800 real joined rows, but it is not the trace and cannot reproduce the paper's numbers.

Model (each choice is an assumption, stated here once):

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
* **Machines.** Instances run on machines of the real spec table with the task's ``gpu_type``.

Known bias: the 800 rows are rows of the authors' *joined* table, where a job appears about
``tasks x instances x sensors`` times, so jobs with many instances are over-represented in the
calibration (e.g. ``inst_num``); the synthetic faithful join is therefore about twice the real
one per job (about 75 rows per generated job vs 35 on the real trace). No re-weighting is done.

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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from schedlab.progress import bar as progress_bar

from schedlab import data
from schedlab.io import atomic_path
from schedlab.polaris.schema import (JOB_STATUS_COUNTS, REAL_GROUP_TAG_ROWS, REAL_JOB_ROWS, SENSOR_FEATURES,
                                       TABLES, TRACE_TABLES, WORKLOAD_JOB_COUNTS, WORKLOADS)

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
    source: dict[str, str] = field(default_factory=dict)  # which model each workload uses


def calibrate(rows: pd.DataFrame, *, min_rows: int = 10, shrink: float = 0.1) -> Calibration:
    """Fit the per-workload models on real joined rows (``calibration.load_calibration_rows()``)."""
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
    return Calibration(copulas, pooled, templates, names, rows["task_name"].value_counts(normalize=True), source)


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


def _generate_chunk(n_jobs: int, cal: Calibration, machines: pd.DataFrame, users: np.ndarray,
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
    gpu_type = np.where(np.isnan(plan_gpu), "", gpu_type_job[t_job])
    gpu_type = np.where((gpu_type == "") & ~np.isnan(plan_gpu), "MISC", gpu_type)
    t_status = status[t_job]
    t_start = np.where(t_status == "Waiting", np.nan, start)
    t_end = np.where(np.isin(t_status, ["Waiting", "Running"]), np.nan, end)

    job_start = pd.Series(t_start).groupby(t_job).min().reindex(range(n_jobs)).to_numpy()
    job_end = pd.Series(t_end).groupby(t_job).max().reindex(range(n_jobs)).to_numpy()

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


def synthesize(out_dir: str | Path, n_jobs: int | str, rng: np.random.Generator, *,
               calibration: Calibration | None = None, chunk_jobs: int = 50_000, n_users: int = 1_300,
               sensor_jitter: float = 0.1, fresh_group: float = 0.5, size_bias_power: float = 0.0,
               progress: bool = True) -> dict[str, int]:
    """Write ``pai_<table>.tar.gz`` for the five trace tables plus the real machine spec into ``out_dir``.

    ``n_jobs`` is a job count or a preset name in :data:`SIZES` (``"real"`` = 1,055,501 jobs, the
    real trace's job-table size). Returns the number of rows written per table. Archives are
    written atomically: an interrupted run leaves no partial archive. ``size_bias_power > 0``
    calibrates on :func:`size_bias_resample` of the real rows (ignored if ``calibration`` given).
    """
    if isinstance(n_jobs, str):
        if n_jobs not in SIZES:
            raise ValueError(f"unknown size preset {n_jobs!r}; known: {sorted(SIZES)}")
        n_jobs = SIZES[n_jobs]
    if n_jobs <= 0:
        raise ValueError(f"n_jobs must be positive, got {n_jobs}")
    if calibration is None:
        from schedlab.polaris.calibration import load_calibration_rows

        calibration = calibrate(size_bias_resample(load_calibration_rows(), size_bias_power,
                                                   np.random.default_rng([0, 17])))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    machines = _load_machines()
    users = hex_ids(n_users, 12, rng)
    user_p = 1.0 / np.arange(1, n_users + 1) ** 1.1
    user_p /= user_p.sum()
    counts = dict.fromkeys(TRACE_TABLES, 0)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".synth-") as tmp:
        csvs = {t: Path(tmp) / f"{t}.csv" for t in TRACE_TABLES}
        handles = {t: open(p, "w", newline="") for t, p in csvs.items()}
        try:
            done = 0
            with progress_bar(total=n_jobs, unit="job", desc="synthesize", disable=not progress) as bar:
                while done < n_jobs:
                    m = min(chunk_jobs, n_jobs - done)
                    tables = _generate_chunk(m, calibration, machines, users, user_p, rng,
                                             sensor_jitter=sensor_jitter, fresh_group=fresh_group)
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
    return counts
