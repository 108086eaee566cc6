"""Experiment helpers behind the PCS notebooks (each figure = a few calls of these).

Examples
--------
>>> sorted(policy_set(["FIFO", "Tiresias"]))
['FIFO', 'Tiresias']
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from schedlab.pcs import metrics
from schedlab.pcs.policies import make_policy
from schedlab.pcs.sim import simulate

#: paper label -> our policy name
LABELS = {"FIFO": "FIFO", "Tiresias": "SRSF", "SRSF": "SRSF", "LAS": "LAS", "Max-Min": "FS",
          "FS": "FS", "AFS": "AFS"}


def pcs_config(label: str, workload: str):
    """WFQ config of ``PCS-JCT``/``PCS-bal``/``PCS-pred`` for a workload name.

    ``workload`` is a key of ``pcs_configs.json`` (``0e4a51``, ``gavel``, ``themis1``,
    ``themis1_scaled``, ``toy``, ...); ``fig7_0e4a51`` selects the versions behind the
    paper's Fig. 7 for that trace (README: Pareto members #5/#6 and the b313687 pred config).
    """
    from schedlab.pcs.configs import history_config, load_config, pareto_config

    kind = {"PCS-JCT": "jct", "PCS-bal": "bal", "PCS-pred": "pred"}[label]
    if workload == "fig7_0e4a51":
        if kind == "pred":
            return history_config("0e4a51_avg_jct_avg_pred_error_pred", "b313687")
        return pareto_config("0e4a51", 5 if kind == "jct" else 6)
    return load_config(f"PCS_config_{workload}_{kind}")


def themis_quantum(workload: str | None) -> float:
    """The authors' Themis lease: 10 s for ``gavel``, 600 s otherwise (1 time unit: toy)."""
    if workload == "toy":
        return 1.0
    return 10.0 if workload == "gavel" else 600.0


def policy_set(labels: Iterable[str], workload: str | None = None,
               themis_lease_s: float | None = None) -> dict:
    """Policies by paper label (PCS labels need ``workload`` for their config).

    ``themis_lease_s`` overrides :func:`themis_quantum` (the authors' Fig. 8 runs used 600 s
    on workload-3: their workload was named ``gavel-contsingle``, not ``gavel``). On
    workload-3 (``"gavel"``) Themis predicts as the authors' Fig. 8 runs
    (:meth:`~schedlab.pcs.policies.Themis.fig8_runs`), elsewhere as their Fig. 7 code.
    """
    from schedlab.pcs.policies import Themis

    out = {}
    for lab in labels:
        if lab == "Themis":
            lease = themis_lease_s if themis_lease_s is not None else themis_quantum(workload)
            out[lab] = Themis.fig8_runs(lease) if workload == "gavel" else Themis(lease)
        elif lab.startswith("PCS"):
            out[lab] = make_policy("PCS", pcs_config(lab, workload))
            out[lab].name = lab
        else:
            out[lab] = make_policy(LABELS[lab])
    return out


def run_many(workload, policies: Mapping, gpus: int, *, predict: bool = True,
             p_error: float | None = None, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Simulate ``workload`` under each policy; per-job frames by label."""
    from tqdm import tqdm

    runs = {}
    for lab, pol in tqdm(list(policies.items()), desc=workload.name, leave=False):
        runs[lab] = simulate(workload, pol, gpus, predict=predict, p_error=p_error,
                             rng=np.random.default_rng(seed))
    return runs


def toy_table(runs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Fig. 1b: mean JCT, mean Pred_err (%) and peak unfairness (%) per policy."""
    rows = []
    for lab, df in runs.items():
        rows.append({"policy": lab, "mean_jct": float(metrics.jct(df).mean()),
                     "mean_pred_error": float(metrics.pred_error(df).mean()),
                     "peak_unfairness_pct": 100 * float(metrics.unfairness(df).max())})
    return pd.DataFrame(rows)


def exactness_table(gpus: int = 64) -> pd.DataFrame:
    """Every deterministic authors' run vs ours: per column, jobs off by > 1e-6 rel."""
    from schedlab.pcs.artifacts import RUNS, compare, load_run, run_config, trace_0e4a51

    w = trace_0e4a51(1001)
    rows = []
    for name in RUNS:
        pol = make_policy("PCS", run_config(name)) if name.startswith("PCS") else \
            make_policy(name)
        ours = simulate(w, pol, gpus, predict=True)
        for col, a in compare(ours, load_run(name)).items():
            rows.append({"run": name, "column": col, "jobs": a.n, "jobs_off": a.n_bad,
                         "max_rel_diff": a.max_rel})
    return pd.DataFrame(rows)


W3_RUN = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/{}_64_1.2_gavel-contsingle_{}.csv.gz"


def themis_exactness_table(seeds: Iterable[int], gpus: int = 64) -> pd.DataFrame:
    """Our Themis against the authors' workload-3 THEMIS files (the runs behind Fig. 8).

    The workload is regenerated exactly (``generate("gavel", 3000, authors_rng(seed),
    load=1.2)``), lease 600 s, predictions on. One row per seed and column: jobs off by
    more than 1e-6 relative.
    """
    from schedlab.pcs.artifacts import compare, load_run
    from schedlab.pcs.generators import authors_rng, generate
    from schedlab.pcs.policies import Themis

    rows = []
    for seed in seeds:
        w = generate("gavel", 3000, authors_rng(seed), load=1.2, gpus=gpus)
        ours = simulate(w, Themis.fig8_runs(600.0), gpus, predict=True)
        for col, a in compare(ours, load_run(W3_RUN.format("THEMIS", seed))).items():
            rows.append({"run": f"THEMIS gavel seed {seed}", "column": col, "jobs": a.n,
                         "jobs_off": a.n_bad, "max_rel_diff": a.max_rel})
    return pd.DataFrame(rows)


#: Themis variants compared on Fig. 7 (see :class:`~schedlab.pcs.policies.Themis`)
THEMIS_VARIANTS = {
    "default (speedup, replay: estimated size + leases)": {},
    "speedup, replay: true size, no leases (Fig. 8 runs)":
        {"replay_size": "true", "replay_leases": False},
    "linear, replay: estimated size + leases (2024 code)": {"valuation": "linear"},
    "linear, replay: true size, no leases":
        {"valuation": "linear", "replay_size": "true", "replay_leases": False},
}


def themis_variants_fig7(workloads: Mapping[str, object], gpus: int = 64) -> pd.DataFrame:
    """Themis variants on workload-2 traces (``{trace: workload}``): normalised avg JCT (by
    AFS) and avg / p99 Pred_err, p99 with numpy's ``linear`` percentile as Fig. 7."""
    from schedlab.pcs.policies import Themis

    rows = []
    for trace, workload in workloads.items():
        afs = float(metrics.jct(simulate(workload, make_policy("AFS"), gpus)).mean())
        for label, kw in THEMIS_VARIANTS.items():
            df = simulate(workload, Themis(600.0, **kw), gpus, predict=True)
            e = metrics.pred_error(df)
            rows.append({"trace": trace, "variant": label,
                         "norm_avg_jct": float(metrics.jct(df).mean()) / afs,
                         "avg_pred_error": float(e.mean()),
                         "p99_pred_error": metrics.percentile(e, 99, method="linear")})
    return pd.DataFrame(rows)
