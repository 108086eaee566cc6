"""The metadata of a stand-in's Table I sample without writing or joining the trace.

The pipeline (:mod:`schedlab.polaris.pipeline`) writes a synthetic trace
(:func:`schedlab.polaris.synthetic.synthesize`, generator ``default_rng([seed, 1])``), ingests it,
plans the faithful join and draws Table I's sample (``default_rng([seed, 2])``). At the real
trace's size that takes minutes and gigabytes, whereas the metadata of the sample (what the
authors' one-hot encoding sees: ``job_name, user, task_name, group, workload``) needs only the
job, task and group-tag tables and each job's instance count. :func:`metadata_sample` draws the
same chunks from the same generator stream, keeps those columns, builds the faithful join's units
as :func:`schedlab.polaris.ingest.plan_join` does (terminated tasks of jobs with a workload tag,
ordered by ``job_name, task_name``, each weighing ``instances x sensor rows`` of its job) and draws
the positions with :func:`schedlab.polaris.sampling.draw_positions`: the rows the pipeline's sample
would hold (``tests/polaris/test_synthetic_size.py`` checks it against the pipeline's own path).

Examples
--------
>>> s = metadata_sample(2_000, 0, 500)                                # doctest: +SKIP
>>> authors_one_hot_width(s)["total"]                                 # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from schedlab.polaris import sampling, synthetic
from schedlab.polaris.calibration import load_calibration_rows
from schedlab.polaris.job_model import BANDWIDTH, calibrate
from schedlab.polaris.metadata import N_USERS
from schedlab.polaris.schema import METADATA


def _chunk_units(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The faithful join's units of one chunk: terminated task rows of workload-tagged jobs, with
    the job's user, group, workload and ``weight`` = instances x sensor rows of its ``inst_id``."""
    job, task, tag = tables["pai_job_table"], tables["pai_task_table"], tables["pai_group_tag_table"]
    n_inst = tables["pai_instance_table"].groupby("inst_id").size().rename("ni")
    n_sens = tables["pai_sensor_table"].groupby("inst_id").size().rename("ns")
    tag = tag[tag["workload"].astype(str) != ""]
    units = (
        task.loc[task["status"] == "Terminated", ["job_name", "task_name"]]
        .merge(job[["job_name", "inst_id", "user"]], on="job_name")
        .merge(tag[["inst_id", "group", "workload"]], on="inst_id")
        .join(n_inst, on="inst_id", how="inner")
        .join(n_sens, on="inst_id", how="inner")
    )
    units["weight"] = units.pop("ni").astype(np.int64) * units.pop("ns").astype(np.int64)
    return units.drop(columns="inst_id")


def stand_in_units(n_jobs: int | str, seed: int, *, chunk_jobs: int = 50_000) -> pd.DataFrame:
    """The faithful join's units of the stand-in the pipeline writes for ``n_jobs`` and ``seed``
    (no planted profiles), in the plan's row order: columns ``job_name, task_name, user, group,
    workload, weight``. Draws exactly what :func:`schedlab.polaris.synthetic.synthesize` draws."""
    n_jobs = synthetic.job_count(n_jobs)
    rng = np.random.default_rng([seed, 1])  # the pipeline's trace generator (trace_folder)
    model, meta, size, plant = synthetic.setup(n_jobs, calibrate(load_calibration_rows()), rng, N_USERS)
    machines = synthetic._load_machines()
    parts, done = [], 0
    while done < n_jobs:
        m = min(chunk_jobs, n_jobs - done)
        tables = synthetic._generate_chunk_v2(
            m, model, machines, meta.invented_users, meta.invented_p, rng, meta=meta,
            sensor_jitter=BANDWIDTH, plant_top_job=plant if done == 0 else 0, size=size,
        )  # fmt: skip
        parts.append(_chunk_units(tables))
        done += m
    units = pd.concat(parts, ignore_index=True)
    return units.sort_values(["job_name", "task_name"], kind="stable").reset_index(drop=True)


def sample_units(units: pd.DataFrame, total: int, seed: int, *, on_zero: str = "error") -> pd.DataFrame:
    """Table I's stratified sample of ``total`` rows drawn from ``units`` as
    :func:`schedlab.polaris.pipeline.draw_sample` draws it (``default_rng([seed, 2])``): one
    row per drawn join row, with the unit's metadata columns. ``on_zero``: as
    :func:`schedlab.polaris.sampling.stratum_sizes` (``"keep"``: a stratum rounding to 0 rows is left out).

    >>> u = pd.DataFrame({"job_name": ["a", "b"], "task_name": ["ps", "worker"], "user": ["u", "u"],
    ...                   "group": ["g", "h"], "workload": ["bert", "bert"], "weight": [1, 3]})
    >>> sample_units(u, 4, 0)["job_name"].tolist()
    ['a', 'b', 'b', 'b']
    """
    missing = [c for c in (*METADATA, "weight") if c not in units]
    if missing:
        raise ValueError(f"sample_units needs columns {missing}")
    counts = {w: int(n) for w, n in units.groupby("workload")["weight"].sum().sort_index().items()}
    sizes = sampling.stratum_sizes(counts, total, on_zero=on_zero)
    picks = sampling.draw_positions(counts, sizes, np.random.default_rng([seed, 2]))
    out = []
    for w, part in picks.groupby("workload", sort=False):
        u = units[units["workload"] == w]
        end = np.cumsum(u["weight"].to_numpy())
        out.append(u.iloc[np.searchsorted(end, part["k"].to_numpy(), side="right")])
    return pd.concat(out, ignore_index=True)[list(METADATA)]


def metadata_sample(n_jobs: int | str, seed: int, total: int, *, on_zero: str = "error") -> pd.DataFrame:
    """The metadata columns (``job_name, user, task_name, group, workload``) of the Table I sample
    of ``total`` rows the pipeline draws from its stand-in of ``n_jobs`` jobs with ``seed``
    (about 90 s and 2 GB at the real trace's size, against minutes and a written trace on the
    pipeline's path)."""
    return sample_units(stand_in_units(n_jobs, seed), total, seed, on_zero=on_zero)
