"""Speed of Decima in the Nona simulator: the first plug-in vs the fast one, side by side.

Both schedulers make the same decisions (tests/nona/test_decima_speed.py); the old one
(:class:`ReferenceDecimaScheduler`) rebuilds the observation and runs the whole forward pass at
every decision, the new one (:class:`DecimaScheduler`) keeps per-job state, caches each job's
share of the network and runs the node encoder as a compiled kernel (:mod:`.engine`).

For each point (80 servers, 10 Gbps, the five models, default workload) both run on the same
arrivals and window; printed: decisions, task events, wall and process CPU seconds, decisions/s
and task events/s (per CPU second, the fairer figure on a shared machine), and the new/old
ratio. Then the new one alone on the longer windows the figures use.

Run: ``python benchmarks/bench_decima.py [--loads 0.3 0.5 0.9] [--window 0.3] [--long 4]``.
"""

from __future__ import annotations

import argparse
import time


def run(cls, load: float, window: float, seed: int = 0):
    import numpy as np

    from schedlab.nona.sim import simulate
    from schedlab.nona.workload import Cluster, build_workload

    cluster = Cluster(servers=80, bandwidth_gbps=10.0)
    wl = build_workload(load=load, cluster=cluster)
    sched = cls(rng=seed, compute_rate=cluster.compute_rate)
    w0, c0 = time.perf_counter(), time.process_time()
    res = simulate(wl, cluster, sched, duration=window, warmup=0.1 * window, rng=np.random.default_rng(seed))
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return res, sched, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=float, nargs="+", default=[0.3, 0.5, 0.9])
    parser.add_argument(
        "--window", type=float, default=0.3, help="measured window (s) of the side-by-side runs"
    )
    parser.add_argument("--long", type=float, default=4.0, help="window (s) of the new-only runs (0: skip)")
    args = parser.parse_args()

    import os

    from schedlab.nona.decima.scheduler import DecimaScheduler, ReferenceDecimaScheduler

    print(f"machine: {os.cpu_count()} cores, shared with other jobs (wall > CPU means waiting for a core)")
    # compile/load the numba kernel once so it is not charged to the first run
    run(DecimaScheduler, 0.1, 0.01)
    head = (
        f"{'load':>4s} {'scheduler':10s} {'decisions':>9s} {'tasks':>7s} {'wall s':>7s} {'CPU s':>7s} "
        f"{'dec/s wall':>10s} {'dec/s CPU':>10s} {'tasks/s CPU':>11s} {'mean JCT s':>10s}"
    )
    print(f"\nside by side, window {args.window:g} s (+10% warm-up, +10% cool-down, then drain)")
    print(head)
    for load in args.loads:
        rows = {}
        for name, cls in (("old", ReferenceDecimaScheduler), ("new", DecimaScheduler)):
            res, sched, wall, cpu = run(cls, load, args.window)
            d, t = sched.stats["decisions"], res.stats["task_events"]
            rows[name] = (d / cpu, d / wall, res.jobs.jct.to_numpy())
            print(
                f"{load:4.1f} {name:10s} {d:9d} {t:7d} {wall:7.2f} {cpu:7.2f} {d / wall:10.0f} {d / cpu:10.0f} "
                f"{t / cpu:11.0f} {res.jobs.jct.mean():10.3f}"
            )
        same = (rows["old"][2].shape == rows["new"][2].shape) and bool(
            (rows["old"][2] == rows["new"][2]).all()
        )
        print(
            f"{load:4.1f} new/old    speed-up x{rows['new'][0] / rows['old'][0]:.1f} (CPU), "
            f"x{rows['new'][1] / rows['old'][1]:.1f} (wall); identical JCTs: {same}"
        )
    if args.long > 0:
        print(
            f"\nnew only, window {args.long:g} s (Decima's jobs pile up behind the link, so the cost per decision grows)"
        )
        print(head)
        for load in args.loads:
            res, sched, wall, cpu = run(DecimaScheduler, load, args.long)
            d, t = sched.stats["decisions"], res.stats["task_events"]
            print(
                f"{load:4.1f} {'new':10s} {d:9d} {t:7d} {wall:7.2f} {cpu:7.2f} {d / wall:10.0f} {d / cpu:10.0f} "
                f"{t / cpu:11.0f} {res.jobs.jct.mean():10.3f}   (max nodes {sched.stats['max_nodes']}, "
                f"mean schedulable {sched.stats['stage_rows'] / max(1, d):.0f}, "
                f"embedded {sched.stats['embedded_jobs']}, cache hits {sched.stats['cache_hits']})"
            )


if __name__ == "__main__":
    main()
