"""Reconstruct the authors' stored workload-3 AFS runs (the Fig. 8 data) job by job.

Our library ``AFS`` is the deterministic ``alg_c_concept`` tournament of the authors'
simulator; it reproduces their workload-2 AFS outputs exactly, but not their workload-3 runs
(``artifact_runs/workload3_gavel_load1.2_5seeds/AFS_*``). Those runs came from a different,
randomised allocator: the GPU-by-GPU ``top_priority`` rule of the authors' testbed AFS
scheduler (``testbed/RayAFSScheduler.py`` in their repository), drawing from the same global
numpy stream that seeded the workload. This script re-implements that rule and the parts of
the old simulator it interacts with, and compares every job's start, end, predicted start and
predicted end with the authors' files.

What has to be replicated (each checked by leaving it out: the runs then differ):

* the stream: ``authors_rng(seed)`` continued after :func:`~schedlab.pcs.generators.generate`
  drew the workload; the predictor replays draw from it too, and every arrival draws one
  ``uniform()`` (the old code's "predict this arrival?" coin) before its replay;
* ``top_priority``: a pass over the active list from a random starting app (``choice``,
  redrawn while it has zero demand); two apps with no GPUs: the smaller remaining size wins;
  otherwise the current winner stays if its remaining time (remaining / GPU count) is the
  smaller, else the larger-remaining-time app wins only if its relative gain from one more GPU
  (GPU counts; zero at full demand) is larger; a GPU goes to the winner unless it is full,
  until ``min(total demand, G)`` GPUs are handed out;
* the replay re-divides once more at the target's own completion before it stops (this moves
  the stream), and equal completion times are resolved as the old event heap does (one end
  event per running job, pushed in active order, ``heapify``, ``heappop``).

It runs on the readable reference engine with that engine's documented hooks
(:class:`schedlab.pcs.sim.Hooks`: this predictor and this next-completion rule), about 3
minutes per seed. Moving this variant into the library (a policy option) is future work.

Run: ``.venv/bin/python benchmarks/check_afs_fig8_runs.py [SEED ...]`` (default: all five)
"""

from __future__ import annotations

import heapq
import sys
import time

import numpy as np

import schedlab.pcs.sim as S
from schedlab.pcs.artifacts import compare, load_run
from schedlab.pcs.generators import authors_rng, generate
from schedlab.pcs.policies import Policy

RUN = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/AFS_64_1.2_gavel-contsingle_{}.csv.gz"
SEEDS = (1954, 3266, 5897, 6359, 9005)


class RandomTopPriorityAFS(Policy):
    """The testbed AFS allocator, drawing its starting apps from ``rng`` (a RandomState)."""

    name = "AFS"

    def __init__(self, rng: np.random.RandomState):
        self.rng = rng

    def allocate(self, w) -> np.ndarray:
        idx = w.act()
        n = len(idx)
        rem = w.rem[idx].tolist()
        dem = [int(x) for x in w.demand[idx]]
        cur = [0] * n
        residual = min(sum(dem), w.gpus)
        while residual > 0:
            a = self._top_priority(rem, dem, cur)
            if cur[a] < dem[a]:
                cur[a] += 1
                residual -= 1
        return np.asarray(cur, dtype=float)

    def _top_priority(self, rem, dem, cur) -> int:
        n = len(dem)
        a = int(self.rng.choice(n))
        while dem[a] == 0:
            a = int(self.rng.choice(n))
        for b in range(n):
            if b == a or dem[b] == 0:
                continue
            if cur[a] == 0 and cur[b] == 0:
                a = a if rem[a] < rem[b] else b
                continue
            t_a = rem[a] / cur[a] if cur[a] else np.inf
            t_b = rem[b] / cur[b] if cur[b] else np.inf
            if t_a >= t_b:  # the challenger b finishes sooner: the longer job a must earn it
                short, long_ = b, a
                gain_long = _gain(cur[long_], dem[long_])
                a = long_ if gain_long > _gain(cur[short], dem[short]) else short
        return a


def _gain(p: int, d: int) -> float:
    """Relative throughput gain of one more GPU, by GPU count (zero at full demand)."""
    p1 = p + 1 if p < d else p
    return (p1 - p) / p1


def _replay(policy: RandomTopPriorityAFS):
    """The old in-process predictor: one coin per arrival, same stream, a last division."""

    def replay(w, t_us, target, pol):
        policy.rng.uniform()
        sub, idx = S.snapshot(w, t_us)
        tgt = int(np.flatnonzero(idx == target)[0])
        t_end, j = _next_end_heap(sub, t_us)
        while True:
            if j < 0 or t_end == S.INF:
                raise S.SimulationError(f"prediction for job {w.app_id[target]} never completes")
            S.advance(sub, t_end, None)
            S.finish(sub, j, t_end)
            pol.now_us = t_end
            S.apply_allocation(sub, t_end, pol)  # also at the target's own end (old code)
            if j == tgt:
                return int(sub.start_us[tgt]), t_end
            t_end, j = _next_end_heap(sub, t_end)

    return replay


class _End:
    """An end event that, like the old ``Event``, compares by time only."""

    __slots__ = ("t", "j")

    def __init__(self, t: int, j: int):
        self.t, self.j = t, j

    def __lt__(self, other: "_End") -> bool:
        return self.t < other.t


def _next_end_heap(w, t_us):
    """Next completion, equal times resolved by the old event heap's structure."""
    if not w.active:
        return S.INF, -1
    idx = w.act()
    rem, al = w.rem[idx], w.alloc[idx]
    ends = {}
    run = (rem != 0) & (al != 0)
    if run.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            x = rem[run] / w.thrpt(idx[run])
        ok = np.isfinite(x) & (x < S.NEVER_S) & (x > -S.NEVER_S)
        e = np.full(int(run.sum()), S.INF, dtype=np.int64)
        e[ok] = t_us + S.seconds_to_us(x[ok])
        ends = dict(zip(idx[run].tolist(), e.tolist()))
    heap = [_End(t_us if rem[k] == 0 else ends[j], j)
            for k, j in enumerate(idx.tolist()) if rem[k] == 0 or al[k] != 0]
    if not heap:
        return S.INF, -1
    heapq.heapify(heap)
    return int(heap[0].t), int(heap[0].j)


def old_simulator(policy: RandomTopPriorityAFS) -> S.Hooks:
    """The old simulator's predictor and completion order, as reference-engine hooks."""
    return S.Hooks(next_end=_next_end_heap, replay=_replay(policy))


def run_seed(seed: int):
    rng = authors_rng(seed)
    w = generate("gavel", 3000, rng, load=1.2)  # leaves rng where the authors' stream was
    policy = RandomTopPriorityAFS(rng)
    return S.simulate(w, policy, 64, predict=True, engine="reference",
                      hooks=old_simulator(policy))


def main(seeds) -> None:
    print("authors' workload-3 AFS runs (3000 apps, 64 GPUs, load 1.2, predictions on) vs the "
          "randomised top_priority allocator; jobs off per column (of 3000)")
    print(f"{'seed':<6}{'start':>7}{'end':>7}{'est start':>11}{'est end':>9}{'wall s':>8}")
    for seed in seeds:
        t0 = time.perf_counter()
        ours = run_seed(seed)
        wall = time.perf_counter() - t0
        agree = compare(ours, load_run(RUN.format(seed)), rtol=1e-6)
        off = [agree[c].n_bad for c in ("start_time", "end_time", "estimated_start_time",
                                        "estimated_end_time")]
        print(f"{seed:<6}" + "".join(f"{o:>{wd}}" for o, wd in zip(off, (7, 7, 11, 9)))
              + f"{wall:>8.0f}", flush=True)


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or SEEDS)
