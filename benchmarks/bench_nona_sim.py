"""Speed of the Nona simulator: events/s per scheme and the default Fig. 3 sweep.

Prints, per scheme, at one load of the default Fig. 3 setup (80 servers, 10 Gbps, the five
models, background jobs): heap events processed (job arrivals + task completions + transfer
arrivals), task completions, wall time, events/s and task events/s, and the ratio of task
events/s to decima-sim's own loop (~67k task events/s for its fair heuristic on a 2-core
machine, the figure the speed target was set against; decima-sim is not installed here, so that side is the
quoted number, not re-measured). Then the wall time of the Fig. 3 sweep (params.yaml
``nona.fig3`` under ``--profile``, default: the pipeline's) for each ``--workers`` count (1: in
this process; k > 1: k local processes of :class:`schedlab.parallel.Executor`), and whether
their numbers are identical.

Run: ``python benchmarks/bench_nona_sim.py [--load 0.7] [--duration 60] [--decima-duration 0.2]
[--profile teaching] [--workers 1 2] [--no-sweep]``.
"""

from __future__ import annotations

import argparse
import time

DECIMA_SIM_TASK_EVENTS_PER_S = 67_000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--load", type=float, default=0.7)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--decima-duration", type=float, default=0.2)
    parser.add_argument("--no-sweep", action="store_true", help="skip the Fig. 3 sweep timing")
    parser.add_argument(
        "--profile", default=None, help="params.yaml profile of the sweep (default: the file's)"
    )
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1, 2], help="executor sizes to time the sweep with"
    )
    args = parser.parse_args()

    from schedlab import paths
    from schedlab.notebooks import load_params
    from schedlab.nona import experiments
    from schedlab.nona.schedulers import SchemeUnavailable

    p3 = load_params("nona/fig3", profile=args.profile)
    models = p3["models"]
    tables = (
        paths.ROOT / p3["nona_tables"].format(load=args.load, bandwidth_gbps=10.0)
        if p3.get("nona_tables")
        else None
    )
    print(
        f"load {args.load}, 80 servers, 10 Gbps, models {models}, window {args.duration:g} s "
        f"(Decima {args.decima_duration:g} s)"
    )
    print(
        f"{'scheme':14s} {'events':>9s} {'tasks':>9s} {'wall s':>8s} {'events/s':>10s} {'tasks/s':>10s} "
        f"{'x decima-sim':>12s}"
    )
    for scheme in ("nona", "random", "opportunistic", "spark_fair", "decima"):
        tab = None
        if scheme == "nona":
            if tables is None or not tables.is_file():
                print(f"{scheme:14s} skipped: no optimiser JSON at {tables}")
                continue
            tab = tables
        d = args.decima_duration if scheme == "decima" else args.duration
        try:
            t0 = time.perf_counter()
            res = experiments.run_point(scheme, load=args.load, duration=d, models=models, tables=tab)
            total = time.perf_counter() - t0
        except SchemeUnavailable as exc:
            print(f"{scheme:14s} unavailable: {exc}")
            continue
        st = res.stats
        tps = st["task_events"] / st["wall_s"]
        print(
            f"{scheme:14s} {st['events']:9d} {st['task_events']:9d} {st['wall_s']:8.2f} {st['events_per_s']:10.0f} "
            f"{tps:10.0f} {tps / DECIMA_SIM_TASK_EVENTS_PER_S:12.2f}   (setup+run {total:.2f} s)"
        )

    if args.no_sweep:
        return
    time_sweep(p3, args.workers)


def time_sweep(p3: dict, workers: list[int]) -> None:
    """Wall time of the Fig. 3 sweep of ``p3`` (params of nona/fig3) per executor size."""
    import tempfile

    from schedlab.nona import experiments
    from schedlab.parallel import Executor

    points = [{"load": x, "bandwidth_gbps": p3["bandwidth_gbps"]} for x in p3["loads"]]
    first = None
    for k in workers:
        with tempfile.TemporaryDirectory() as tmp, Executor(workers=k) as ex:
            setup = experiments.FigureSweep.from_params(p3, tables_dir=tmp)
            t0 = time.perf_counter()
            rows, _ = setup.run(points, executor=ex, progress=False)
            wall = time.perf_counter() - t0
        numbers = rows.drop(columns=["wall_s", "events_per_s", "tables"], errors="ignore")
        same = (
            "" if first is None else f", numbers identical to {workers[0]} worker(s): {numbers.equals(first)}"
        )
        first = numbers if first is None else first
        print(
            f"Fig. 3 sweep, profile {p3['profile']} ({len(points)} loads x {len(p3['schemes'])} schemes, window "
            f"{p3['duration']:g} s, Decima {p3['decima_duration']:g} s, Expert budget {p3['expert_budget']}), "
            f"{k} worker(s): {wall:.1f} s{same}"
        )


if __name__ == "__main__":
    main()
