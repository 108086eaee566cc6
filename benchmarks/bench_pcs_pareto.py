"""Time of the PCS SPEA2 Pareto search (issue 8), 1 vs 2 local workers.

Prints: seconds per evaluation (one simulation with predictions), the wall time of one search
with 1 and with 2 loky workers (same seed, identical fronts checked), the speed-up, and an
extrapolation to the paper's budget next to the paper's Fig. 9b (15-65 min on 10 machines;
the authors' stored workload-2 searches: 370 evaluations, 2001 jobs, up to 3.8 h).

Run: ``python benchmarks/bench_pcs_pareto.py [--num-jobs 500] [--budget 175]``. The full
search (``--num-jobs 2001 --budget 1280``) takes tens of minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from schedlab import data
from schedlab.pcs.artifacts import trace_0e4a51
from schedlab.pcs.pareto import LocalExecutor, pareto_search

OBJ = ["jct:avg", "pred_err:avg"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--num-jobs", type=int, default=500)
    ap.add_argument("--budget", type=int, default=175)
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args()
    w = trace_0e4a51(args.num_jobs)
    # warm the compiled engine once (JIT), outside the timings
    pareto_search(trace_0e4a51(30), OBJ, budget=70, rng=np.random.default_rng(0),
                  executor=LocalExecutor(1), progress=False)
    times, tables = {}, {}
    for k in args.workers:
        t0 = time.perf_counter()
        f = pareto_search(w, OBJ, budget=args.budget, gpus=args.gpus,
                          rng=np.random.default_rng(1), executor=LocalExecutor(k),
                          progress=args.progress)
        times[k] = time.perf_counter() - t0
        tables[k] = f.table
        print(f"{k} worker(s): {f.n_evaluations} evaluations of {len(w)} jobs in {times[k]:.1f} s "
              f"({times[k] / f.n_evaluations:.3f} s/evaluation), front {len(f)}")
    ks = sorted(times)
    same = all(tables[k].equals(tables[ks[0]]) for k in ks)
    if len(ks) > 1:
        print(f"speed-up {ks[0]} -> {ks[-1]} workers: {times[ks[0]] / times[ks[-1]]:.2f}x; "
              f"identical fronts: {same}")
    per_eval = times[ks[-1]] / max(args.budget, 1)
    print(f"extrapolated {args.budget} -> 1280 evaluations with {ks[-1]} worker(s): "
          f"{per_eval * 1280 / 60:.1f} min (this job count)")
    fig9b = json.loads(open(data.require("pcs/paper_figure_data/figure9b.json")).read())
    print("paper Fig. 9b, seconds per front on 10 machines (GPUs 128/256/512/1024):",
          {k: v["values"] for k, v in fig9b.items() if k != "gpus"})
    print("paper text: 15-65 min on 10 machines")


if __name__ == "__main__":
    main()
