"""The authors' per-job output files (``artifact_runs/``) and job-by-job comparison.

The authors' times are seconds since their scheduler object was created, which happens a
few hundred microseconds of wall-clock time before the first arrival (e.g. 0.000179 s in
``AFS_0e4a51``). That offset is not part of the model; :func:`load_run` subtracts the first
job's ``submit_time`` so that times count from the first arrival, as ours do.

Examples
--------
>>> RUNS["FIFO"]
'pcs/artifact_runs/workload2_1001apps_and_gavel/FIFO_0e4a51.csv.gz'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

_W2 = "pcs/artifact_runs/workload2_1001apps_and_gavel/"
#: Deterministic workload-2 runs (trace 0e4a51, first 1001 jobs, 64 GPUs, predictions on).
RUNS = {
    "FIFO": _W2 + "FIFO_0e4a51.csv.gz",
    "SRSF": _W2 + "SRSF_0e4a51.csv.gz",
    "AFS": _W2 + "AFS_0e4a51.csv.gz",
    "PCS_jct": _W2 + "PCS_0e4a51_avg_jct_avg_pred_error_jct.csv.gz",
    "PCS_bal": _W2 + "PCS_0e4a51_avg_jct_avg_pred_error_bal.csv.gz",
    "PCS_pred": _W2 + "PCS_0e4a51_avg_jct_avg_pred_error_pred.csv.gz",
}
#: The WFQ configuration behind each PCS run of :data:`RUNS`, found by re-simulating every
#: version in ``pcs_configs_history.json``: PCS-JCT used today's ``PCS_config_0e4a51_jct``;
#: PCS-bal and PCS-pred used the ``..._avg_jct_avg_pred_error_{bal,pred}.pkl`` versions of
#: commit b313687 (2024-05-01; full-precision ζ_min/δ), not today's rounded ones.
RUN_CONFIGS = {
    "PCS_jct": ("current", "PCS_config_0e4a51_jct"),
    "PCS_bal": ("history", "0e4a51_avg_jct_avg_pred_error_bal", "b313687"),
    "PCS_pred": ("history", "0e4a51_avg_jct_avg_pred_error_pred", "b313687"),
}


def run_config(name: str):
    """The :class:`~schedlab.pcs.configs.WFQConfig` of PCS run ``name`` (see RUN_CONFIGS)."""
    from schedlab.pcs.configs import history_config, load_config

    spec = RUN_CONFIGS[name]
    return load_config(spec[1]) if spec[0] == "current" else history_config(spec[1], spec[2])


TIME_COLUMNS = ["submit_time", "start_time", "end_time", "estimated_start_time", "estimated_end_time"]


def load_run(name_or_path: str, *, shift: bool = True) -> pd.DataFrame:
    """An authors' per-job CSV, sorted by ``app_id``; times shifted to the first arrival.

    ``estimated_*`` values of ``-1`` (no prediction) are left as ``-1``.
    """
    from schedlab import data

    entry = RUNS.get(name_or_path, name_or_path)
    path = data.require(entry) if entry.startswith("pcs/") else entry
    df = pd.read_csv(path).sort_values("app_id")
    df = df.reset_index(drop=True)
    if shift:
        off = float(df.loc[df["app_id"].idxmin(), "submit_time"])
        for c in TIME_COLUMNS:
            none = df[c] == -1
            df[c] = np.where(none, -1.0, df[c] - off)
    return df


@dataclass
class Agreement:
    """Job-by-job agreement of one column."""

    column: str
    n: int
    n_bad: int
    max_rel: float
    first_bad: int | None

    def ok(self) -> bool:
        """True when every job agrees within the tolerance used."""
        return self.n_bad == 0


def compare(
    ours: pd.DataFrame,
    theirs: pd.DataFrame,
    rtol: float = 1e-6,
    atol: float = 1e-6,
    columns: tuple = ("start_time", "end_time", "estimated_start_time", "estimated_end_time"),
) -> dict[str, Agreement]:
    """Per-column agreement ``|a-b| <= atol + rtol*|b|`` joined on ``app_id``.

    ``atol`` (1 µs, the authors' clock resolution) only matters for times near 0. Jobs the
    authors did not predict (``estimated_*`` of ``-1``: their code predicts a random subset
    of arrivals on traces over 5000 jobs) are left out of the ``estimated_*`` columns;
    ``Agreement.n`` counts the jobs compared.
    """
    m = ours.merge(theirs, on="app_id", suffixes=("_ours", "_theirs"))
    if len(m) != len(theirs) or len(m) != len(ours):
        raise ValueError(f"job sets differ: ours {len(ours)}, theirs {len(theirs)}, common {len(m)}")
    out = {}
    for c in columns:
        a = m[c + "_ours"].to_numpy(float)
        b = m[c + "_theirs"].to_numpy(float)
        ids = m["app_id"].to_numpy()
        if c.startswith("estimated_"):
            made = b != -1
            a, b, ids = a[made], b[made], ids[made]
        d = np.abs(a - b)
        rel = d / np.maximum(np.abs(b), 1e-300)
        bad = d > atol + rtol * np.abs(b)
        out[c] = Agreement(
            c,
            len(a),
            int(bad.sum()),
            float(np.max(np.where(d == 0, 0, rel), initial=0.0)),
            int(ids[bad][0]) if bad.any() else None,
        )
    return out


#: The workload-2 trace behind :data:`RUNS`.
TRACE_0E4A51 = "pcs/workload2_philly_traces/trace_0e4a51.csv.gz"


def trace_0e4a51(num_jobs: int = 1001):
    """First ``num_jobs`` jobs of VC 0e4a51 (the artifact runs used 1001: ``-num_apps 1000``)."""
    from schedlab import data
    from schedlab.pcs.workload import load_trace

    return load_trace(data.require(TRACE_0E4A51), num_jobs)
