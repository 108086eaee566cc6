"""Version ``v2``'s model of the PAI trace's jobs, fitted on the 800 real joined rows.

A job is a *template* built from the real rows of its workload: a non-``ps`` task alone, or a
``ps`` row paired with the non-``ps`` row nearest in start time (:class:`JobTemplates`). The model
(:class:`JobModel`, :func:`fit_job_model`) holds the real rows' values, the templates per workload,
the job and terminated shares that size every workload's faithful-join stratum as Table I
(:func:`strata_shares`), and each row's local noise scale (:data:`BANDWIDTH`). Drawing jobs from
it is :mod:`schedlab.polaris.synthetic`'s job; planting known profiles into it is
:mod:`schedlab.polaris.planted`'s.

Examples
--------
>>> from schedlab.polaris.calibration import load_calibration_rows  # doctest: +SKIP
>>> model = calibrate(load_calibration_rows())                       # doctest: +SKIP
>>> round(sum(model.job_share.values()), 3)                          # doctest: +SKIP
0.126
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from schedlab.polaris.schema import (
    JOB_STATUS_COUNTS,
    REAL_GROUP_TAG_ROWS,
    REAL_JOB_ROWS,
    SENSOR_FEATURES,
    TABLE_I_SIZES,
    TASK_FEATURES,
    WORKLOAD_JOB_COUNTS,
    WORKLOADS,
)

if TYPE_CHECKING:  # the planted module builds on this one, so the name is only for annotations
    from schedlab.polaris.planted import PlantedModes

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
    return JobTemplates(
        idx[first], np.where(second >= 0, idx[np.maximum(second, 0)], -1), float(np.mean(n_tasks * n_inst**2))
    )


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
    log_sd: dict[str, np.ndarray] = field(
        default_factory=dict
    )  # per column: robust sd of log values, per row
    #: planted profiles (:class:`schedlab.polaris.planted.PlantedModes`, set by
    #: :func:`schedlab.polaris.planted.plant_profiles`); None: none planted. Not imported here: the
    #: planted module builds on this one.
    planted: PlantedModes | None = None


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
    meta = {
        "user": rows["user"].astype(str).to_numpy(),
        "group": rows["group"].astype(str).to_numpy(),
        "gpu_type": rows["gpu_type"].fillna("").astype(str).to_numpy(),
        "task_name": rows["task_name"].astype(str).to_numpy(),
        # which rows are one job, and their workload: the groups' recurrence is fitted per job
        "job_name": rows["job_name"].astype(str).to_numpy(),
        "workload": rows["workload"].fillna("").astype(str).to_numpy(),
    }
    pooled = _templates(np.arange(len(rows)), rows)
    templates = {"": pooled}
    for w in WORKLOADS:
        idx = np.flatnonzero((rows["workload"] == w).to_numpy())
        has_other = idx.size > 0 and bool((rows["task_name"].iloc[idx] != "ps").any())
        templates[w] = _templates(idx, rows) if has_other else pooled
    job_share, term, pair_none, none_share = strata_shares(
        {w: templates[w].rows_per_job for w in WORKLOADS}, {w: templates[w].pair_share for w in WORKLOADS}
    )
    model = JobModel(values, meta, templates, job_share, term, pair_none, float(np.std(values["start_time"])))
    model.none_weights = _none_weights(model, none_share)
    model.log_sd = _log_sd_per_row(rows, (*NOISY_SENSORS, "duration"))
    return model


def strata_shares(
    rows_per_job: dict[str, float],
    pair_share: dict[str, float],
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


#: the columns of the real rows :func:`fit_job_model` reads
CALIBRATION_COLUMNS: tuple[str, ...] = (
    *TASK_FEATURES,
    "duration",
    *SENSOR_FEATURES,
    "workload",
    "user",
    "group",
    "task_name",
    "gpu_type",
    "job_name",  # which rows are one job: the groups' recurrence is fitted per job
)


def calibrate(rows: pd.DataFrame) -> JobModel:
    """Check real joined rows (``calibration.load_calibration_rows()``) and fit the v2 job model on them.

    Parameters
    ----------
    rows : pandas.DataFrame
        Real rows of the authors' joined table with every column of :data:`CALIBRATION_COLUMNS`.

    Returns
    -------
    JobModel
        :func:`fit_job_model` of ``rows``.

    Raises
    ------
    ValueError
        When a column is missing or a workload name is not one of the trace's.
    """
    missing = [c for c in CALIBRATION_COLUMNS if c not in rows]
    if missing:
        raise ValueError(f"calibration rows lack columns {missing}")
    unknown = sorted(set(rows["workload"].dropna()) - set(WORKLOADS))
    if unknown:
        raise ValueError(f"calibration rows: unknown workload names {unknown}")
    return fit_job_model(rows)
