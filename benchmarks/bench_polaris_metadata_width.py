"""Metadata of the full-size PAI stand-in against the authors' numbers (not fitted to them).

Per seed, on the Table I sample of 100,000 rows the pipeline would draw from the full-size stand-in
(:func:`schedlab.polaris.synthetic_sample.metadata_sample`'s units, no trace written):

* the one-hot width under the authors' encoding (paper 21,547) and its parts;
* 999 test rows drawn both ways (rows of jobs the sample misses, the default; rows drawn from all
  rows outside the sample): values the authors' encoder would know per row (authors 3.595),
  their workload mix, and same-job pairs among the first 800 (calibration rows: 37);
* groups in three draws of 800 rows of missed jobs, against the calibration rows: distinct groups
  and pairs of distinct jobs sharing a group, per workload;
* the ten largest jobs of the sample (rows).

    .venv/bin/python benchmarks/bench_polaris_metadata_width.py --seeds 0 1 \\
        --out benchmarks/results/polaris_metadata_width.txt
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

_OUT: Path | None = None


def say(line: str = "") -> None:
    print(line, flush=True)
    if _OUT is not None:
        with open(_OUT, "a") as fh:
            fh.write(line + "\n")


def group_stats(rows: pd.DataFrame) -> pd.DataFrame:
    """Per workload: rows, jobs, distinct groups, and pairs of distinct jobs sharing a group."""
    out = {}
    for w, g in rows.groupby("workload", observed=True):
        jobs = g.drop_duplicates("job_name")
        c = jobs["group"].value_counts()
        out[w] = {
            "rows": len(g),
            "jobs": len(jobs),
            "groups": g["group"].nunique(),
            "group_pairs": int((c * (c - 1) // 2).sum()),
        }
    return pd.DataFrame(out).T


def draw_rows(units: pd.DataFrame, free: np.ndarray, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` join rows without replacement from the units ``free`` marks (each unit weighs its rows)."""
    w = np.where(free, units["weight"].to_numpy(np.int64), 0)
    end = np.cumsum(w)
    idx = np.sort(rng.choice(int(end[-1]), size=n, replace=False))
    return units.iloc[np.searchsorted(end, idx, side="right")].reset_index(drop=True)


def measure(seed: int) -> None:
    from schedlab.polaris import metadata
    from schedlab.polaris import synthetic_size as ss
    from schedlab.polaris.synthetic_sample import sample_units, stand_in_units

    t0 = time.perf_counter()
    units = stand_in_units("real", seed)
    sample = sample_units(units, 100_000, seed, on_zero="keep")
    say(
        f"-- seed {seed}: {len(sample):,} sample rows, {time.perf_counter() - t0:.0f} s, load "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    say(f"one-hot width (paper 21,547): {metadata.authors_one_hot_width(sample)}")
    say(f"largest jobs in the sample (rows): {sample['job_name'].value_counts().head(10).tolist()}")
    rng = np.random.default_rng([seed, 5])
    wl = units["workload"].astype(str).to_numpy()
    in_table = np.isin(wl, list(ss.WORKLOADS))
    missed = ~units["job_name"].isin(set(sample["job_name"])).to_numpy() & in_table
    for reading, free in (("rows of missed jobs", missed), ("rows outside the sample", in_table)):
        test = draw_rows(units, free, 999, rng)
        known = metadata.authors_known_values(sample, test)
        pairs = ss.pair_count(test["job_name"].head(800), test["workload"].head(800))
        say(
            f"{reading}: known per row {known['per_row']:.3f} (authors 3.595), "
            + ", ".join(f"{c} {v:.3f}" for c, v in known.items() if c != "per_row")
        )
        say(
            f"  mix {test['workload'].value_counts().to_dict()}; same-job pairs in 800: "
            f"{sum(pairs.values())} (calibration rows 37)"
        )
    for k in range(3):
        say(f"groups, draw {k + 1} of 800 rows of missed jobs:")
        say(group_stats(draw_rows(units, missed, 800, rng)).to_string())


def main() -> None:
    global _OUT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--out", default=None, help="also append the printed lines to this file")
    args = ap.parse_args()
    _OUT = Path(args.out) if args.out else None
    from schedlab.polaris.calibration import load_calibration_rows

    say("calibration rows (800 real rows) per workload:")
    say(group_stats(load_calibration_rows()).to_string())
    for seed in args.seeds:
        measure(seed)


if __name__ == "__main__":
    main()
