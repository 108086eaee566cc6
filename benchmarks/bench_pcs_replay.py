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
the first ``--jobs`` jobs of Philly trace b436b2, ``predict_sample=5000``; and the Fig. 8
randomised-AFS loop (:mod:`schedlab.pcs._engine_rafs`, seed 1954: 3000 gavel jobs, every
arrival predicted), whose outputs and stream state are compared too.

Run: ``.venv/bin/python benchmarks/bench_pcs_replay.py [--baseline 9100db7] [--out FILE]``
(needs the git history: the baseline's ``lib/schedlab/pcs/_engine.py`` and
``_engine_rafs.py`` are read with ``git show``; a baseline whose ``run`` takes the fields of
:class:`schedlab.pcs._engine.EngineArgs` positionally, as every engine before the typed
bundle did).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
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
from schedlab.pcs.generators import authors_rng, generate
from schedlab.pcs.pareto import HeuristicSpace, RawSpace, wfq_policy

ROOT = Path(__file__).resolve().parents[1]
FIG9_CONFIG = [0.672378, 2.414758, 0.7758, 0.568191]


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _import_source(name: str, src: str, where: Path):
    """Module ``name`` from source text ``src`` (written under ``where``)."""
    path = where / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _git_show(commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def baseline_kernels(commit: str, where: Path):
    """The compiled engines of ``commit`` (general loop, randomised-AFS loop), imported under
    other names; the AFS loop is pointed at the baseline's general engine."""
    eng = _import_source(f"_engine_{commit}", _git_show(commit, "lib/schedlab/pcs/_engine.py"), where)
    rafs_src = _git_show(commit, "lib/schedlab/pcs/_engine_rafs.py")
    hook = "from schedlab.pcs import _engine as E\n"
    if hook not in rafs_src:
        raise RuntimeError(f"{commit}: _engine_rafs.py does not import the engine as expected")
    rafs_src = rafs_src.replace(hook, f"import {eng.__name__} as E\n")
    rafs = _import_source(f"_engine_rafs_{commit}", rafs_src, where)
    return eng, rafs


def runner_of(kernels):
    """What runs an :class:`~schedlab.pcs._engine.EngineArgs` bundle: today's
    :func:`schedlab.pcs._engine.run` (``None``) or the baseline's positional ``run``, given
    only the leading fields it takes (fields added since are trailing, and at their defaults
    they select what the baseline did)."""
    if kernels is None:
        return None
    n = len(inspect.signature(getattr(kernels.run, "py_func", kernels.run)).parameters)
    return lambda args: int(kernels.run(*args[:n]))


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
            pols = [wfq_policy(sp.decode(sp.xl + (sp.xu - sp.xl) * rng.random(len(sp.xl)))) for _ in range(8)]
            yield (
                f"Fig. 9 {space.__name__[:-5].lower()} x8 {n}x{gpus}",
                w,
                pols,
                gpus,
                np.ones(len(w), np.uint8),
            )
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
            out, ev = S._simulate_fast(w, policy, gpus, mask, None, runner=runner_of(kernels))
            outs.append(out)
            events += ev.replay
        except S.SimulationError as e:
            outs.append(str(e))
    return time.process_time() - c0, outs, events


def timed_rafs(seed: int, rafs) -> tuple[float, list, int]:
    """CPU seconds of the Fig. 8 randomised-AFS run of ``seed`` on the loop module ``rafs``,
    its outputs (per-job arrays and the stream's final state) and its replay events."""
    from schedlab.pcs import _engine_rafs as R
    from schedlab.pcs._engine import engine_arrays

    rng = authors_rng(seed)
    w = generate("gavel", 3000, rng, load=1.2, gpus=64)  # the stream continues below
    mt, _ = R.mt_from_randomstate(rng)
    F, I = engine_arrays(w, None)
    n = len(w)
    est_start, est_end = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    counters = np.zeros(2, dtype=np.int64)
    c0 = time.process_time()
    rc = rafs.run(F, I, w.rows(), 64, np.ones(n, np.uint8), False, mt, est_start, est_end, counters)
    return time.process_time() - c0, [rc, F, I, est_start, est_end, mt], int(counters[1])


def same_outputs(a: list, b: list) -> bool:
    def same(x, y) -> bool:
        if isinstance(x, np.ndarray):
            return np.array_equal(x, y)
        if isinstance(x, (str, int)) or isinstance(y, (str, int)):
            return x == y
        return x.equals(y)

    return all(same(x, y) for x, y in zip(a, b))


def rafs_side_by_side(old_rafs, repeats: int) -> None:
    """The Fig. 8 randomised-AFS loop, baseline against today's, alternating."""
    from schedlab.pcs import _engine_rafs as new_rafs
    from schedlab.pcs._engine import engine_arrays

    w = generate("gavel", 30, authors_rng(1), load=1.2, gpus=64)
    for mod in (old_rafs, new_rafs):  # compile outside the timings
        F, I = engine_arrays(w, None)
        mod.run(
            F,
            I,
            w.rows(),
            64,
            np.ones(30, np.uint8),
            False,
            new_rafs.mt_from_randomstate(np.random.RandomState(1))[0],
            np.full(30, -1),
            np.full(30, -1),
            np.zeros(2, np.int64),
        )
    best = {"old": np.inf, "new": np.inf}
    same = True
    for _ in range(repeats):
        t_old, a, ev_old = timed_rafs(1954, old_rafs)
        t_new, b, ev_new = timed_rafs(1954, new_rafs)
        best["old"], best["new"] = min(best["old"], t_old), min(best["new"], t_new)
        same = same and same_outputs(a, b) and ev_old == ev_new
    say(
        f"{'Fig. 8 AFS randomised 3000 (1954)':34s} {best['old']:10.2f} {best['new']:8.2f} "
        f"{best['old'] / best['new']:6.2f}x {ev_new:14d} {same}  ({load()})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="9100db7", help="commit whose engine is the baseline")
    ap.add_argument("--jobs", type=int, default=3000, help="jobs of b436b2 in the Fig. 7 cases")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    ap.add_argument("--out", help="also append the printed lines to this file")
    args = ap.parse_args()
    _report.OUT = Path(args.out) if args.out else None
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    say(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.machine()}, "
        f"{os.cpu_count()} cores; {load()} at start; engine of {head} (working tree) vs "
        f"{args.baseline}; CPU seconds, best of {args.repeats} alternating runs"
    )
    say(f"{'case':34s} {'baseline s':>10s} {'new s':>8s} {'ratio':>7s} {'replay events':>14s} identical")
    with tempfile.TemporaryDirectory() as tmp:
        old, old_rafs = baseline_kernels(args.baseline, Path(tmp))
        if args.only in "Fig. 8 AFS randomised":
            rafs_side_by_side(old_rafs, args.repeats)
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
            say(
                f"{name:34s} {best['old']:10.2f} {best['new']:8.2f} "
                f"{best['old'] / best['new']:6.2f}x {ev_new:14d} {same}  ({load()})"
            )
    say(f"{load()} at end")


if __name__ == "__main__":
    main()
