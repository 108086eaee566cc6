"""PCS predictor replays: today's compiled engine against an earlier commit's, side by side.

Each case runs the same simulation (same workload, policy, predicted jobs) on both engines,
alternating them ``--repeats`` times in one process so that both see the same machine load;
it prints the CPU seconds of each (best of the repeats), their ratio, the replay events and
whether every output column is identical (the speed-ups are meant to keep every float).

Cases: the Fig. 9 evaluation (the authors' heuristic member #5, WFQ, every arrival
predicted) at (jobs, GPUs) = (1024, 1024), (1024, 256), (2001, 64); what a Fig. 9 search
evaluates (8 uniformly random configurations of the heuristic space, and of the raw space, at
each 9b size from 1024 x 128 to 1024 x 1024 and at 2001 x 64: summed); and the Fig. 7 policies
whose replays are the paper profile's longest (Themis with 600 s leases, PCS-bal, AFS) on
the first ``--jobs`` jobs of Philly trace b436b2, ``predict_sample=5000``.

Run: ``.venv/bin/python benchmarks/bench_pcs_replay.py [--baseline d572d53] [--out FILE]``
(needs the git history: the baseline's ``lib/schedlab/pcs/_engine.py`` is read with
``git show``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _report
from _report import say
from schedlab import data
from schedlab.pcs import experiments as X, load_trace
from schedlab.pcs import sim as S
from schedlab.pcs.pareto import HeuristicSpace, RawSpace, wfq_policy

ROOT = Path(__file__).resolve().parents[1]
FIG9_CONFIG = [0.672378, 2.414758, 0.7758, 0.568191]


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def baseline_kernels(commit: str, where: Path):
    """The compiled engine of ``commit``, imported under another name."""
    src = subprocess.run(["git", "show", f"{commit}:lib/schedlab/pcs/_engine.py"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    path = where / f"_engine_{commit}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(f"_engine_{commit}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def trace(name: str, n: int | None = None):
    return load_trace(data.require(f"pcs/workload2_philly_traces/trace_{name}.csv.gz"), n)


def cases(jobs: int):
    full = trace("0e4a51")
    for n, gpus in [(1024, 1024), (1024, 256), (2001, 64)]:
        w = X.fig9_workload(full, n, gpus)
        policy = wfq_policy(HeuristicSpace.for_workload(w).decode(FIG9_CONFIG))
        yield f"Fig. 9 eval {n} jobs x {gpus} GPUs", w, [policy], gpus, np.ones(len(w), np.uint8)
    for n, gpus in [(1024, 1024), (1024, 512), (1024, 256), (1024, 128), (2001, 64)]:
        w = X.fig9_workload(full, n, gpus)
        for space in (HeuristicSpace, RawSpace):
            sp = space.for_workload(w)
            rng = np.random.default_rng(5)
            pols = [wfq_policy(sp.decode(sp.xl + (sp.xu - sp.xl) * rng.random(len(sp.xl))))
                    for _ in range(8)]
            yield (f"Fig. 9 {space.__name__[:-5].lower()} x8 {n}x{gpus}", w, pols, gpus,
                   np.ones(len(w), np.uint8))
    w = trace("b436b2", jobs)
    mask = S.prediction_mask(len(w), True, 5000, np.random.default_rng(0))
    for lab in ["Themis", "PCS-bal", "AFS", "Tiresias", "FIFO"]:
        yield f"Fig. 7 b436b2[:{jobs}] {lab}", w, [X.policy_set([lab], "b436b2")[lab]], 64, mask


def timed(w, policies, gpus, mask, kernels):
    """CPU seconds of simulating ``w`` under each policy, the outputs (a configuration that
    cannot finish gives its error message) and the replay events."""
    c0 = time.process_time()
    outs, events = [], 0
    for policy in policies:
        try:
            outs.append(S._simulate_fast(w, policy, gpus, mask, None, kernels=kernels))
            events += S.LAST_EVENT_COUNTS[1]
        except S.SimulationError as e:
            outs.append(str(e))
    return time.process_time() - c0, outs, events


def same_outputs(a: list, b: list) -> bool:
    return all(x == y if isinstance(x, str) or isinstance(y, str) else x.equals(y)
               for x, y in zip(a, b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="d572d53", help="commit whose engine is the baseline")
    ap.add_argument("--jobs", type=int, default=3000, help="jobs of b436b2 in the Fig. 7 cases")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    ap.add_argument("--out", help="also append the printed lines to this file")
    args = ap.parse_args()
    _report.OUT = Path(args.out) if args.out else None
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    say(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.machine()}, "
        f"{os.cpu_count()} cores; {load()} at start; engine of {head} (working tree) vs "
        f"{args.baseline}; CPU seconds, best of {args.repeats} alternating runs")
    say(f"{'case':34s} {'baseline s':>10s} {'new s':>8s} {'ratio':>7s} {'replay events':>14s} identical")
    with tempfile.TemporaryDirectory() as tmp:
        old = baseline_kernels(args.baseline, Path(tmp))
        for name, w, policies, gpus, mask in cases(args.jobs):
            if args.only not in name:
                continue
            for k in (old, None):  # compile outside the timings
                timed(w.head(30), policies[:1], gpus, mask[:30], k)
            best = {"old": np.inf, "new": np.inf}
            same = True
            for _ in range(args.repeats):
                t_old, a, ev_old = timed(w, policies, gpus, mask, old)
                t_new, b, ev_new = timed(w, policies, gpus, mask, None)
                best["old"], best["new"] = min(best["old"], t_old), min(best["new"], t_new)
                same = same and same_outputs(a, b) and ev_old == ev_new
            say(f"{name:34s} {best['old']:10.2f} {best['new']:8.2f} "
                f"{best['old'] / best['new']:6.1f}x {ev_new:14d} {same}  ({load()})")
    say(f"{load()} at end")


if __name__ == "__main__":
    main()
