"""Speed of the Nona simulator (issue 4): events/s per scheme and the default Fig. 3 sweep.

Prints, per scheme, at one load of the default Fig. 3 setup (80 servers, 10 Gbps, the five
models, background jobs): heap events processed (job arrivals + task completions + transfer
arrivals), task completions, wall time, events/s and task events/s, and the ratio of task
events/s to decima-sim's own loop (~67k task events/s for its fair heuristic on a 2-core
machine, the figure quoted in the issue; decima-sim is not installed here, so that side is the
quoted number, not re-measured). Then the wall time of the default Fig. 3 sweep (params.yaml
``nona.fig3``, default profile), with and without its slowest part.

Run: ``python benchmarks/bench_nona_sim.py [--load 0.7] [--duration 60] [--decima-duration 0.2]
[--no-sweep]``.
"""

from __future__ import annotations

import argparse
import time

DECIMA_SIM_TASK_EVENTS_PER_S = 67_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", type=float, default=0.7)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--decima-duration", type=float, default=0.2)
    parser.add_argument("--no-sweep", action="store_true", help="skip the Fig. 3 sweep timing")
    args = parser.parse_args()

    from schedlab import paths
    from schedlab.notebooks import load_params
    from schedlab.nona import schedulers

    p3 = load_params("nona/fig3")
    models = p3.get("models", list(schedulers.DEFAULT_MODELS))
    tables = paths.ROOT / p3["nona_tables"].format(load=args.load, bandwidth_gbps=10.0) if p3.get("nona_tables") else None
    print(f"load {args.load}, 80 servers, 10 Gbps, models {models}, window {args.duration:g} s "
          f"(Decima {args.decima_duration:g} s)")
    print(f"{'scheme':14s} {'events':>9s} {'tasks':>9s} {'wall s':>8s} {'events/s':>10s} {'tasks/s':>10s} "
          f"{'x decima-sim':>12s}")
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
            res = schedulers.run_point(scheme, load=args.load, duration=d, models=models, tables=tab)
            total = time.perf_counter() - t0
        except schedulers.SchemeUnavailable as exc:
            print(f"{scheme:14s} unavailable: {exc}")
            continue
        st = res.stats
        tps = st["task_events"] / st["wall_s"]
        print(f"{scheme:14s} {st['events']:9d} {st['task_events']:9d} {st['wall_s']:8.2f} {st['events_per_s']:10.0f} "
              f"{tps:10.0f} {tps / DECIMA_SIM_TASK_EVENTS_PER_S:12.2f}   (setup+run {total:.2f} s)")

    if args.no_sweep:
        return
    import tempfile

    from pathlib import Path

    prof = p3["profiles"][p3.get("profile", "default")]
    for with_decima in (True,):  # the default profile itself skips Decima (decima_duration 0)
        schemes = list(p3["schemes"])
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            schedulers.sweep(
                [{"load": x, "bandwidth_gbps": p3["bandwidth_gbps"]} for x in prof.get("loads", p3["loads"])],
                schemes, servers=int(prof["servers"]), duration=float(prof["duration"]), seed=int(prof["seed"]),
                models=prof.get("models", models), workload_kwargs=p3.get("workload") or {}, tables_dir=Path(tmp),
                expert_budget=int(prof["expert_budget"]), expert_duration=float(prof["expert_duration"]),
                scheme_durations={"decima": float(prof["decima_duration"])},
                nona_tables=prof.get("nona_tables", p3.get("nona_tables")),
                star_tables=prof.get("star_tables", p3.get("star_tables")), progress=False)
            wall = time.perf_counter() - t0
        print(f"default Fig. 3 sweep ({len(prof.get('loads', p3['loads']))} loads x {len(schemes)} schemes, "
              f"window {prof['duration']:g} s, Decima window {prof['decima_duration']:g} s, "
              f"Expert budget {prof['expert_budget']}): {wall:.1f} s")


if __name__ == "__main__":
    main()
