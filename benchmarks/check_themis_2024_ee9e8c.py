"""Themis against the authors' 2024 per-job output on the whole ee9e8c trace.

The authors' repository holds ``new_data/THEMIS_ee9e8c_result.csv`` (commit 2cafc33): their
2024 simulator's Themis run on VC ee9e8c, all 5452 jobs, 64 GPUs, 600 s lease, predictions
for a random subset of arrivals (``-1`` elsewhere). It is not in the mirror, so it is an
optional manifest entry (``pcs/authors_new_data/THEMIS_ee9e8c_result.csv``). This prints the
job-by-job agreement of ``Themis(valuation="linear")`` (the 2024 code's valuation) with the
default predictor replay, and the wall time.

Run: ``.venv/bin/python benchmarks/check_themis_2024_ee9e8c.py``
"""

from __future__ import annotations

import time

from schedlab import data
from schedlab.pcs import load_trace, simulate
from schedlab.pcs.artifacts import compare, load_run
from schedlab.pcs.policies import Themis

NAME = "pcs/authors_new_data/THEMIS_ee9e8c_result.csv"


def main() -> None:
    path = data.require(NAME)
    theirs = load_run(NAME)
    w = load_trace(data.require("pcs/workload2_philly_traces/trace_ee9e8c.csv.gz"))
    t0 = time.perf_counter()
    ours = simulate(w, Themis(600.0, valuation="linear"), 64, predict=True)
    wall = time.perf_counter() - t0
    print(f"{NAME} (sha256 {data.entry(NAME).sha256}, {path.stat().st_size} bytes)")
    print(
        f"Themis(600 s, valuation='linear', replay: estimated size + lease ticks), "
        f"{len(w)} jobs, 64 GPUs, predictions on: {wall:.1f} s wall"
    )
    print(f"{'column':<22}{'jobs compared':>14}{'jobs off':>10}{'max rel diff':>14}")
    for c, a in compare(ours, theirs, rtol=1e-6).items():
        print(f"{c:<22}{a.n:>14}{a.n_bad:>10}{a.max_rel:>14.3g}")


if __name__ == "__main__":
    main()
