"""The shared executor side by side: Nona Figs. 3-5 sweeps and PCS Fig. 7, serial vs k workers.

For each workload, in one run on the same machine: the wall time with ``Executor(workers=1)``
(in this process) and with ``Executor(workers=k)`` (k loky processes), their ratio, and whether
the numbers are identical (wall-clock columns aside). Each workload is the one its notebook
runs under ``--profile`` (params.yaml), so a row is what the pipeline stage spends in it.

Run: ``python benchmarks/bench_parallel.py [--profile teaching] [--workers 1 2] [--only nona|pcs]
[--figures nona_fig5 pcs_fig7]``.
The machine (cores, load average) is printed first: on a shared machine, compare the ratio,
not the seconds.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Callable

import pandas as pd

TIMING_COLUMNS = ["wall_s", "events_per_s", "tables", "cpu_s"]


def nona_runs(profile: str | None) -> dict[str, Callable]:
    """Fig. 3, 4 and 5 sweeps as their notebooks set them up, each ``run(executor) -> rows``."""
    from schedlab.notebooks import load_params
    from schedlab.nona import experiments

    def sweep(name: str, points_of: Callable[[dict], list[dict]]) -> Callable:
        p = load_params(f"nona/{name}", profile=profile)

        def run(executor):
            with tempfile.TemporaryDirectory() as tmp:
                setup = experiments.FigureSweep.from_params(p, tables_dir=tmp)
                rows, _ = setup.run(points_of(p), executor=executor, progress=False)
            return rows

        run.label = (
            f"Nona {name} sweep ({p['profile']}: window {p['duration']:g} s, "
            f"Expert {p['expert_budget']} sims, Decima {p['decima_duration']:g} s)"
        )
        return run

    return {
        "nona_fig3": sweep(
            "fig3", lambda p: [{"load": x, "bandwidth_gbps": p["bandwidth_gbps"]} for x in p["loads"]]
        ),
        "nona_fig4": sweep(
            "fig4", lambda p: [{"load": p["load"], "bandwidth_gbps": b} for b in p["bandwidths_gbps"]]
        ),
        "nona_fig5": sweep("fig5", lambda p: [{"load": p["load"], "bandwidth_gbps": p["bandwidth_gbps"]}]),
    }


def pcs_runs(profile: str | None) -> dict[str, Callable]:
    """PCS Fig. 7 (traces x policies, predictions on) as its notebook runs it."""
    from schedlab import data
    from schedlab.notebooks import load_params
    from schedlab.pcs import experiments as X, load_trace

    p = load_params("pcs/fig7", profile=profile)
    workloads = {
        tr: load_trace(data.require(f"pcs/workload2_philly_traces/trace_{tr}.csv.gz"), p["num_jobs"] or None)
        for tr in p["traces"]
    }

    def run(executor):
        return X.fig7_table(workloads, p["policies"], p["gpus"], executor=executor)

    run.label = (
        f"PCS Fig. 7 ({p['profile']}: traces {', '.join(p['traces'])} x {len(p['policies'])} policies, "
        f"{sum(len(w) for w in workloads.values()):,} jobs)"
    )
    return {"pcs_fig7": run}


def numbers(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.drop(columns=[c for c in TIMING_COLUMNS if c in rows], errors="ignore").reset_index(drop=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--profile", default="teaching", help="params.yaml profile of every workload (default: teaching)"
    )
    ap.add_argument(
        "--workers", type=int, nargs="+", default=[1, 2], help="executor sizes, the first is the reference"
    )
    ap.add_argument("--only", choices=["nona", "pcs"], default=None)
    ap.add_argument(
        "--figures",
        nargs="+",
        default=None,
        help="a subset of nona_fig3 nona_fig4 nona_fig5 pcs_fig7 (default: all)",
    )
    args = ap.parse_args()
    os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars would interleave with the figures

    from schedlab.parallel import Executor, available_cores

    print(
        f"machine: {available_cores()} cores available, load average {os.getloadavg()[0]:.2f} "
        f"(1 min) at start; profile {args.profile}"
    )
    runs = {}
    if args.only in (None, "nona"):
        runs.update(nona_runs(args.profile))
    if args.only in (None, "pcs"):
        runs.update(pcs_runs(args.profile))
    if args.figures:
        unknown = sorted(set(args.figures) - set(runs))
        if unknown:
            ap.error(f"unknown --figures {unknown}; choose from {sorted(runs)}")
        runs = {k: v for k, v in runs.items() if k in args.figures}
    for name, run in runs.items():
        ref, ref_wall = None, None
        for k in args.workers:
            with Executor(workers=k) as ex:
                t0 = time.perf_counter()
                rows = run(ex)
                wall = time.perf_counter() - t0
            got = numbers(rows)
            if ref is None:
                ref, ref_wall = got, wall
                note = "reference"
            else:
                note = (
                    f"x{ref_wall / wall:.2f} vs {args.workers[0]} worker(s), numbers identical: "
                    f"{got.equals(ref)}"
                )
            print(
                f"{run.label}: {k} worker(s) {wall:7.1f} s  ({note}; load avg {os.getloadavg()[0]:.2f})",
                flush=True,
            )


if __name__ == "__main__":
    main()
