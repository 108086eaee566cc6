"""Time of the PCS SPEA2 Pareto search, 1 vs 2 local workers.

Prints, for each worker count: the wall time of one search (same seed; identical fronts
checked across worker counts), the summed CPU seconds of its evaluations (measured inside the
worker processes, so meaningful on a shared machine), CPU seconds per evaluation, and the
projected wall time on ``--cores`` idle cores (summed CPU / cores). Then the speed-up, the
paper's Fig. 9b next to it (15-65 min on 10 machines; the authors' stored workload-2
searches: 370 evaluations, 2001 jobs, up to 3.8 h), and, with ``--fallback-sample K``, what
the configurations with more than 8 WFQ classes cost before the compiled engine supported
them (they ran on the pure-Python reference engine): K of them are timed on both engines.

Run: ``python benchmarks/bench_pcs_pareto.py [--num-jobs 500] [--budget 175]``. The full
search: ``--num-jobs 2001 --budget 1280 --workers 2`` (2026-11-21, shared 2-core machine:
1330 evaluations, 9.0 min wall, 7.2 CPU-min = 0.33 s/evaluation, i.e. 3.6 min on 2 idle cores).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from schedlab import data
from schedlab.parallel import Executor
from schedlab.pcs.artifacts import trace_0e4a51
from schedlab.pcs.pareto import HeuristicSpace, evaluate_config, parse_objectives, pareto_search

OBJ = ["jct:avg", "pred_err:avg"]


def fallback_cost(front, w, k: int, gpus: int) -> None:
    """Time ``k`` feasible >8-class configurations of ``front`` on both engines."""
    from schedlab.pcs.pareto import wfq_policy
    from schedlab.pcs.sim import simulate

    sp = HeuristicSpace.for_workload(w)
    ev = front.evaluations
    cols = list(sp.names)
    ncls = np.array([sp.decode(x).num_classes for x in ev[cols].to_numpy()])
    feas = np.isfinite(ev.iloc[:, len(cols)].to_numpy())
    big = np.flatnonzero((ncls > 8) & feas)
    print(
        f"evaluations with > 8 classes: {int((ncls > 8).sum())} of {len(ev)} "
        f"({(ncls > 8).mean():.1%}); feasible: {len(big)}"
    )
    if len(big) == 0 or k <= 0:
        return
    cpu = front.eval_cpu_seconds
    ref, fast = [], []
    for j in big[:k]:
        cfg = sp.decode(ev[cols].to_numpy()[j])
        t0 = time.process_time()
        simulate(w, wfq_policy(cfg), gpus, predict=True, engine="reference")
        ref.append(time.process_time() - t0)
        fast.append(cpu[j])
        print(
            f"  {cfg.num_classes} classes: reference engine {ref[-1]:.1f} s CPU, "
            f"compiled {fast[-1]:.2f} s CPU"
        )
    est = len(big) * float(np.mean(ref))
    print(
        f"estimated reference-engine cost of the {len(big)} feasible >8-class evaluations: "
        f"{est / 60:.1f} CPU-min (now {float(np.sum(cpu[big])) / 60:.2f} CPU-min); "
        f"whole search now {float(np.nansum(cpu)) / 60:.1f} CPU-min"
    )


def _logger(ck: str, t0: float):
    """Print generation, evaluations, wall and summed evaluation CPU after each checkpoint."""
    import pickle
    from pathlib import Path

    def log(gen: int, n: int) -> None:
        cpu = pickle.loads((Path(ck) / "checkpoint.pkl").read_bytes()).get("cpu", [])
        print(
            f"generation {gen}: {n} evaluations, wall {(time.perf_counter() - t0) / 60:.2f} "
            f"min, evaluation CPU {np.nansum(cpu) / 60:.2f} min "
            f"({np.nansum(cpu) / max(len(cpu), 1):.3f} s/evaluation)",
            flush=True,
        )

    return log


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--num-jobs", type=int, default=500)
    ap.add_argument("--budget", type=int, default=175)
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--cores", type=int, default=2, help="for the idle-machine projection")
    ap.add_argument("--fallback-sample", type=int, default=0)
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--out", help="write the numbers as JSON here")
    ap.add_argument("--checkpoint", help="checkpoint folder (resumes; logs every generation)")
    args = ap.parse_args()
    w = trace_0e4a51(args.num_jobs)
    # warm the compiled engine once (JIT), outside the timings
    evaluate_config(
        HeuristicSpace.for_workload(w).decode([1.0, 0.5, 0.5, 0.1]),
        trace_0e4a51(30),
        parse_objectives(OBJ),
        args.gpus,
    )
    res, tables, fronts = {}, {}, {}
    for k in args.workers:
        t0 = time.perf_counter()
        ck = f"{args.checkpoint}/w{k}" if args.checkpoint else None
        with Executor(workers=k) as ex:
            f = pareto_search(
                w,
                OBJ,
                budget=args.budget,
                gpus=args.gpus,
                rng=np.random.default_rng(1),
                executor=ex,
                progress=args.progress,
                checkpoint_dir=ck,
                on_generation=_logger(ck, t0) if ck else None,
            )
        wall = time.perf_counter() - t0
        cpu = float(np.nansum(f.eval_cpu_seconds))
        res[k] = {
            "wall_s": wall,
            "cpu_s": cpu,
            "evaluations": f.n_evaluations,
            "cpu_per_eval_s": cpu / f.n_evaluations,
            "cpu_per_eval_median_s": float(np.nanmedian(f.eval_cpu_seconds)),
            "projected_wall_idle_s": cpu / min(k, args.cores),
            "front": len(f),
        }
        tables[k], fronts[k] = f.table, f
        print(
            f"{k} worker(s): {f.n_evaluations} evaluations of {len(w)} jobs: wall "
            f"{wall / 60:.2f} min, evaluation CPU {cpu / 60:.2f} min "
            f"({res[k]['cpu_per_eval_s']:.3f} s/evaluation, median "
            f"{res[k]['cpu_per_eval_median_s']:.3f} s), projected on {min(k, args.cores)} idle "
            f"core(s): {res[k]['projected_wall_idle_s'] / 60:.2f} min; front {len(f)}",
            flush=True,
        )
    ks = sorted(res)
    same = all(tables[k].equals(tables[ks[0]]) for k in ks)
    if len(ks) > 1:
        print(
            f"speed-up {ks[0]} -> {ks[-1]} workers (wall, shared machine): "
            f"{res[ks[0]]['wall_s'] / res[ks[-1]]['wall_s']:.2f}x; identical fronts: {same}"
        )
    fig9b = json.loads(open(data.require("pcs/paper_figure_data/figure9b.json")).read())
    print(
        "paper Fig. 9b, seconds per front on 10 machines (GPUs 128/256/512/1024):",
        {k: v["values"] for k, v in fig9b.items() if k != "gpus"},
    )
    print("paper text: 15-65 min on 10 machines")
    if args.fallback_sample:
        fallback_cost(fronts[ks[-1]], w, args.fallback_sample, args.gpus)
    if args.out:
        from schedlab.io import atomic_write_json

        atomic_write_json(
            args.out,
            {
                "num_jobs": len(w),
                "budget": args.budget,
                "identical_fronts": same,
                "runs": {str(k): v for k, v in res.items()},
            },
        )


if __name__ == "__main__":
    main()
