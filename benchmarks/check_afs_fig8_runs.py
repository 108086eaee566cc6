"""Check the authors' stored workload-3 AFS runs (the Fig. 8 data) job by job.

Their workload-3 AFS runs (``artifact_runs/workload3_gavel_load1.2_5seeds/AFS_*``) came from
a randomised allocator, not the deterministic ``alg_c_concept`` tournament of our default
:class:`~schedlab.pcs.policies.AFS`. The library has it as
:class:`~schedlab.pcs.policies.RandomisedAFS` (``AFS.fig8_runs(rng)``; its docstring lists
what is replicated: the allocator, the continued stream, the old predictor's coin and last
re-division, the old event heap's order). This script runs it on every seed and prints the
number of jobs off per column (0 everywhere = exact). It runs the compiled loop
(:func:`~schedlab.pcs.sim.simulate_randomised_afs`, the default of ``fig8_afs_run``), about
4 s per seed; the reference engine gives identical outputs in about 3 minutes per seed
(``benchmarks/bench_pcs_afs.py``). ``tests/pcs/test_afs_compiled.py`` checks every seed,
``tests/pcs/test_afs_variant.py`` one seed and a prefix on the reference engine; CLI
(reference engine): ``schedlab pcs simulate --workload gavel --num-apps 3000 --seed 1954
--load 1.2 --policy AFS --afs-variant randomised --predict --out afs.csv``.

Run: ``.venv/bin/python benchmarks/check_afs_fig8_runs.py [SEED ...]`` (default: all five)
"""

from __future__ import annotations

import sys
import time

from schedlab.pcs.artifacts import compare, load_run
from schedlab.pcs.sim import fig8_afs_run

RUN = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/AFS_64_1.2_gavel-contsingle_{}.csv.gz"
SEEDS = (1954, 3266, 5897, 6359, 9005)


def main(seeds) -> None:
    print(
        "authors' workload-3 AFS runs (3000 apps, 64 GPUs, load 1.2, predictions on) vs "
        "RandomisedAFS; jobs off per column (of 3000)"
    )
    print(f"{'seed':<6}{'start':>7}{'end':>7}{'est start':>11}{'est end':>9}{'wall s':>8}")
    for seed in seeds:
        t0 = time.perf_counter()
        ours = fig8_afs_run(seed)
        wall = time.perf_counter() - t0
        agree = compare(ours, load_run(RUN.format(seed)), rtol=1e-6)
        off = [
            agree[c].n_bad for c in ("start_time", "end_time", "estimated_start_time", "estimated_end_time")
        ]
        print(
            f"{seed:<6}" + "".join(f"{o:>{wd}}" for o, wd in zip(off, (7, 7, 11, 9))) + f"{wall:>8.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or SEEDS)
