"""The earlier synthetic PAI generator (``v1``), kept for the benchmarks that compare with it.

The library's generator is :mod:`schedlab.polaris.synthetic` (``v2``, jobs built from real rows);
this one draws every task's features from a per-workload Gaussian copula. Only benchmarks use it:
``bench_polaris.py --size-bias-power`` (the 21-Nov full-scale run) and ``bench_polaris_realism.py``
(v2 against v1 on held-out real rows, :func:`v1_rows`). It writes the same archives with the same
helpers as v2 (:func:`schedlab.polaris.synthetic.write_archives`).

The model (each choice an assumption):

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

Known bias of v1: the 800 rows are rows of the authors' *joined* table; v1 does not model the
join's ``tasks x instances^2`` multiplicity, so its faithful join is about twice the real one per
job (about 75 rows per generated job vs 35 on the real trace). No re-weighting is done.

Examples
--------
>>> counts = synthesize_v1(tmp_path, 200, np.random.default_rng(0))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from schedlab.polaris.calibration import load_calibration_rows
from schedlab.polaris.realism import one_row_per_job
from schedlab.polaris.schema import (
    JOB_STATUS_COUNTS,
    REAL_GROUP_TAG_ROWS,
    REAL_JOB_ROWS,
    SENSOR_FEATURES,
    TABLES,
    WORKLOAD_JOB_COUNTS,
    WORKLOADS,
)

# v1 writes its tables with v2's helpers: ids, choices, number format, task states, machines
from schedlab.polaris.synthetic import (
    _choice,
    _fmt_num,
    _load_machines,
    _machines_for,
    _task_states,
    draw_users,
    hex_ids,
    job_count,
    write_archives,
)

COPULA_COLUMNS: tuple[str, ...] = (
    "inst_num",
    "start_time",
    "duration",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    *SENSOR_FEATURES,
)
DISCRETE: frozenset[str] = frozenset({"inst_num", "plan_cpu", "plan_mem", "plan_gpu"})


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
    return Copula(
        [np.sort(Y[:, j]) for j in range(Y.shape[1])],
        corr if corr is not None else _corr(Y, shrink),
        Y.shape[0],
    )


@dataclass
class CalibrationV1:
    """What v1 draws from: a copula per workload, the pooled one, and per workload the real rows'
    ``user, group, gpu_type`` (copied together) and ``task_name`` frequencies."""

    copulas: dict[str, Copula]
    pooled: Copula
    templates: dict[str, pd.DataFrame]  # per workload: user, group, gpu_type of real rows
    task_names: dict[str, pd.Series]  # per workload: task_name frequencies
    pooled_task_names: pd.Series
    source: dict[str, str] = field(default_factory=dict)  # which model each workload uses


def calibrate_v1(rows: pd.DataFrame, *, min_rows: int = 10, shrink: float = 0.1) -> CalibrationV1:
    """Fit v1's copulas on real joined rows (``calibration.load_calibration_rows()``): a workload's
    own with ``min_rows`` rows or more, its own marginals and the pooled correlation with fewer,
    the pooled model with none; correlations shrunk by ``shrink`` towards the identity."""
    missing = [
        c for c in (*COPULA_COLUMNS, "workload", "user", "group", "task_name", "gpu_type") if c not in rows
    ]
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
    return CalibrationV1(
        copulas, pooled, templates, names, rows["task_name"].value_counts(normalize=True), source
    )


def size_bias_resample(rows: pd.DataFrame, power: float, rng: np.random.Generator) -> pd.DataFrame:
    """Weighted bootstrap of calibration rows with weights ``inst_num ** -power``, per workload.

    The 800 rows are rows of the authors' *joined* table, in which a job shows up about
    ``tasks x instances x sensors`` times, so many-instance jobs are over-represented. Resampling
    with weights ``inst_num ** -power`` (same number of rows per workload, all columns of a row
    kept together, so dependence is preserved) undoes part of that bias; ``power = 0`` returns
    ``rows`` unchanged. The exponent is a knob, not an estimate: ``power = 1`` brings the synthetic
    faithful join near the real trace's rows per job (see ``bench_polaris.py``).

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


def _generate_chunk_v1(
    n_jobs: int,
    cal: CalibrationV1,
    machines: pd.DataFrame,
    users: np.ndarray,
    user_p: np.ndarray,
    rng: np.random.Generator,
    *,
    sensor_jitter: float,
    fresh_group: float,
) -> dict[str, pd.DataFrame]:
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
    start = np.round(
        np.repeat(col["start_time"][first], np.diff(np.r_[first, t_job.size]))
        + rng.integers(0, 60, t_job.size)
    )
    end = start + np.maximum(1, np.round(col["duration"]))
    plan_gpu = np.where(col["plan_gpu"] > 0, col["plan_gpu"], np.nan)
    gpu_type, t_status, t_start, t_end, job_start, job_end = _task_states(
        plan_gpu, gpu_type_job[t_job], status, t_job, start, end, n_jobs
    )

    # instances (none for waiting jobs) and one sensor row per instance
    n_inst = np.where(t_status == "Waiting", 0, inst_num)
    i_task = np.repeat(np.arange(t_job.size), n_inst)
    i_job = t_job[i_task]
    m_idx = _machines_for(gpu_type[i_task], machines, rng)  # v2's draw: the same calls in the same order
    machine = machines["machine"].to_numpy()[m_idx]
    cap_gpu = machines["cap_gpu"].to_numpy()[m_idx].astype(int)
    worker_name, inst_name = hex_ids(i_task.size, 60, rng), hex_ids(i_task.size, 60, rng)
    i_start = t_start[i_task] + rng.integers(0, 30, i_task.size)
    i_end = t_end[i_task]
    gpu_name = np.where(
        cap_gpu > 0,
        np.char.add(
            "/dev/nvidia", (rng.integers(0, 1 << 30, i_task.size) % np.maximum(cap_gpu, 1)).astype(str)
        ),
        "",
    )
    jitter = np.exp(rng.normal(0.0, sensor_jitter, (i_task.size, len(SENSOR_FEATURES))))
    sens = np.column_stack([col[c][i_task] for c in SENSOR_FEATURES]) * jitter

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
                "plan_cpu": _fmt_num(col["plan_cpu"]),
                "plan_mem": _fmt_num(col["plan_mem"]),
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
                "end_time": _fmt_num(i_end, True),
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
                **{c: sens[:, k] for k, c in enumerate(SENSOR_FEATURES)},
            }
        ),
    }
    # a few jobs have no group-tag row, as in the real trace (1,055,032 of 1,055,501)
    tagged = rng.random(n_jobs) < REAL_GROUP_TAG_ROWS / REAL_JOB_ROWS
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
    return tables


def synthesize_v1(
    out_dir: str | Path,
    n_jobs: int | str,
    rng: np.random.Generator,
    *,
    calibration: CalibrationV1 | None = None,
    chunk_jobs: int = 50_000,
    n_users: int = 1_300,
    sensor_jitter: float = 0.1,
    fresh_group: float = 0.5,
    size_bias_power: float | None = None,
    progress: bool = True,
) -> dict[str, int]:
    """Write a v1 trace into ``out_dir``, as :func:`schedlab.polaris.synthetic.synthesize` writes v2's.

    ``calibration`` defaults to :func:`calibrate_v1` of the 800 real rows, resampled by
    :func:`size_bias_resample` with ``size_bias_power`` when that is given (a given
    ``calibration`` is used as it is, so the two cannot be combined). ``sensor_jitter`` is the
    sigma of the instances' log-normal jitter. Returns the number of rows written per table.
    """
    if calibration is not None and size_bias_power:
        raise ValueError(
            "size_bias_power resamples the default calibration rows; it cannot apply to a "
            "given calibration (resample its rows with size_bias_resample instead)"
        )
    n_jobs = job_count(n_jobs)
    if calibration is None:
        rows = size_bias_resample(
            load_calibration_rows(), size_bias_power or 0.0, np.random.default_rng([0, 17])
        )
        calibration = calibrate_v1(rows)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    machines = _load_machines()
    users, user_p = draw_users(n_users, rng)

    def make_chunk(m: int, done: int) -> dict[str, pd.DataFrame]:
        return _generate_chunk_v1(
            m, calibration, machines, users, user_p, rng, sensor_jitter=sensor_jitter, fresh_group=fresh_group
        )

    counts, _ = write_archives(out_dir, n_jobs, make_chunk, chunk_jobs=chunk_jobs, progress=progress)
    return counts


def generate_tables_v1(
    n_jobs: int,
    rng: np.random.Generator,
    *,
    calibration: CalibrationV1,
    sensor_jitter: float = 0.1,
    fresh_group: float = 0.5,
    n_users: int = 1_300,
) -> dict[str, pd.DataFrame]:
    """The five trace tables of ``n_jobs`` v1 jobs as in-memory frames (what :func:`synthesize_v1`
    writes, without archives)."""
    machines = _load_machines()
    users, user_p = draw_users(n_users, rng)
    return _generate_chunk_v1(
        n_jobs,
        calibration,
        machines,
        users,
        user_p,
        rng,
        sensor_jitter=sensor_jitter,
        fresh_group=fresh_group,
    )


def v1_rows(
    train: pd.DataFrame, wanted: dict[str, int], rng: np.random.Generator, *, n_jobs: int = 30_000
) -> pd.DataFrame:
    """A :data:`schedlab.polaris.realism.RowSource` for v1: one row per terminated job of ``n_jobs``
    v1 jobs calibrated on ``train`` (v1 draws workloads at the real job shares, so ``wanted`` is
    reached only with enough jobs; :func:`schedlab.polaris.realism.realism_table` says when not)."""
    tables = generate_tables_v1(n_jobs, rng, calibration=calibrate_v1(train))
    return one_row_per_job(tables, rng)
