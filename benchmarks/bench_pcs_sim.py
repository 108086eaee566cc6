"""PCS simulator speed: trace 0e4a51, first 1001 jobs, 64 GPUs, predictions on.

Prints, per policy, our wall time, events per second (main-loop + predictor-replay events)
and whether the per-job output equals the authors' stored file (for the policies that have
one), Themis against the authors' workload-3 file, the randomised-AFS loop on the Fig. 8
AFS run (workload-3, seed 1954) against the authors' file, then how time grows with the
number of jobs. Wall time is best of N; CPU time is that run's process time (the machine
may be shared).
The authors' times are not quoted here: ``benchmarks/bench_pcs_authors.py`` runs their
simulator and ours side by side on the same inputs and prints the ratio.

Run: ``.venv/bin/python benchmarks/bench_pcs_sim.py [--quick]``
"""

from __future__ import annotations

import argparse
import time

from schedlab.pcs import make_policy, simulate
from schedlab.pcs.sim import simulate_counted
from schedlab.pcs.artifacts import RUNS, compare, load_run, run_config, trace_0e4a51


def _policy(name):
    return make_policy("PCS", run_config(name)) if name.startswith("PCS") else make_policy(name)


def timed(w, name, reps=3, policy=None):
    """Best-of-``reps`` wall time and the process CPU time of that run (shared machine)."""
    best, cpu = float("inf"), float("inf")
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        out, ev = simulate_counted(w, policy if policy is not None else _policy(name), 64, predict=True)
        wall = time.perf_counter() - t
        if wall < best:
            best, cpu = wall, time.process_time() - c
    timed.cpu = cpu
    return best, out, ev.total, list(ev)


def rafs_workload3(reps: int, seed: int = 1954) -> None:
    """Print the randomised-AFS loop's time on the Fig. 8 run of ``seed`` (workload-3)."""
    from schedlab.pcs.experiments import W3_RUN
    from schedlab.pcs.generators import authors_rng, generate
    from schedlab.pcs.policies import RandomisedAFS

    # compile (or load numba's cache) outside the timings
    simulate_counted(
        generate("gavel", 50, authors_rng(seed)), RandomisedAFS(authors_rng(seed)), 64, predict=True
    )
    best, cpu = float("inf"), float("inf")
    for _ in range(reps):
        # the policy continues the generator's stream, as in the authors' runs: draw afresh
        rng = authors_rng(seed)
        w = generate("gavel", 3000, rng, load=1.2, gpus=64)
        t, c = time.perf_counter(), time.process_time()
        out, ev = simulate_counted(w, RandomisedAFS(rng), 64, predict=True)
        wall = time.perf_counter() - t
        if wall < best:
            best, cpu = wall, time.process_time() - c
    ok = all(a.ok() for a in compare(out, load_run(W3_RUN.format("AFS", seed))).values())
    print(
        f"\nRandomised AFS on workload-3 (the Fig. 8 AFS run, seed {seed}, 3000 apps, "
        f"predictions on; best of {reps}): {best:.3f} s wall, {cpu:.3f} s cpu, {ev.total} "
        f"events ({ev.total / best:.0f}/s), per-job "
        f"{'identical (<=1e-6 rel)' if ok else 'DIFFERENT'} vs the authors' file"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one repetition, fewer sizes")
    args = ap.parse_args()
    reps = 1 if args.quick else 3
    w = trace_0e4a51(1001)
    simulate(trace_0e4a51(50), make_policy("FIFO"), 64, predict=True)  # JIT compile/load
    for n in ("AFS", "FS", "PCS_jct", "THEMIS"):
        simulate(trace_0e4a51(50), _policy(n), 64, predict=True)
    print("trace 0e4a51, 1001 jobs, 64 GPUs, predictions on (best of %d runs)" % reps)
    print(
        f"{'policy':<9}{'ours s':>9}{'cpu s':>8}{'events':>10}{'events/s':>12}"
        "  per-job vs authors' stored file"
    )
    # THEMIS: the default (Fig. 7) replay with lease ticks; THEMIS-f8: the Fig. 8 runs' replay
    from schedlab.pcs.policies import Themis

    for name in ["SRSF", "FIFO", "PCS_jct", "PCS_bal", "PCS_pred", "AFS", "LAS", "FS", "THEMIS", "THEMIS-f8"]:
        pol = Themis.fig8_runs(600.0) if name == "THEMIS-f8" else None
        t, out, ev, split = timed(w, name, reps, policy=pol)
        same = "-"
        if name in RUNS:
            ok = all(a.ok() for a in compare(out, load_run(name)).values())
            same = "identical (<=1e-6 rel)" if ok else "DIFFERENT"
        print(
            f"{name:<9}{t:>9.3f}{timed.cpu:>8.3f}{ev:>10}{ev / t:>12.0f}  {same}"
            f"  (main {split[0]}, replay {split[1]})"
        )
    # Themis: the authors' deterministic Themis runs are on workload-3 (Fig. 8 data)
    from schedlab.pcs.generators import authors_rng, generate

    w3 = generate("gavel", 3000, authors_rng(1954), load=1.2)
    t, out, ev, split = timed(w3, "THEMIS", reps, policy=Themis.fig8_runs(600.0))
    path = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/THEMIS_64_1.2_gavel-contsingle_1954.csv.gz"
    ok = all(a.ok() for a in compare(out, load_run(path)).values())
    print(
        f"\nTHEMIS on workload-3 (gavel seed 1954, 3000 apps, 600 s lease, predictions on, "
        f"replay as the Fig. 8 runs: no lease ticks):"
        f" {t:.3f} s wall, {timed.cpu:.3f} s cpu, {ev} events ({ev / t:.0f}/s), per-job "
        f"{'identical (<=1e-6 rel)' if ok else 'DIFFERENT'} vs the authors' file"
    )
    rafs_workload3(reps)
    print("\nscaling with the number of jobs (wall s / events)")
    sizes = [250, 500, 1001] if args.quick else [250, 500, 1001, 2000, 2465]
    names = ["SRSF", "FIFO", "PCS_jct", "AFS", "THEMIS"]
    print("jobs  " + "".join(f"{n:>22}" for n in names))
    for k in sizes:
        wk = trace_0e4a51(k)
        cells = []
        for name in names:
            t, _, ev, _ = timed(wk, name, 1)
            cells.append(f"{t:>10.3f} s /{ev:>9}")
        print(f"{k:<6}" + "".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
