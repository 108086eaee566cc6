"""Metadata of the full-size PAI stand-in against the authors' numbers (not fitted to them).

Per seed, on the Table I sample of 100,000 rows the pipeline would draw from the full-size stand-in
(:func:`schedlab.polaris.synthetic_sample.metadata_sample`'s units, no trace written):

* the one-hot width under the authors' encoding (paper 21,547) and its parts;
* 999 test rows drawn both ways (rows of jobs the sample misses, the default; rows drawn from all
  rows outside the sample): values the authors' encoder would know per row (authors 3.595),
  their workload mix, and same-job pairs among the first 800 (calibration rows: 37);
* groups in three draws of 800 rows of missed jobs, against the calibration rows: distinct groups
  and pairs of distinct jobs sharing a group, per workload;
* the ten largest jobs of the sample (rows);

and, first, the calibration rows' groups with the fitted process's distribution of bert's
same-group pairs and group count (1,000 simulations of the sequential process).

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

import _report
from _report import say


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


def pair_quantile(reps: int = 1000) -> None:
    """Same-group pairs of the calibration rows' bert jobs against the fitted process: each user's
    jobs seated by the sequential Pitman-Yor process (independent of the stick-breaking sampler)."""
    from schedlab.polaris import metadata
    from schedlab.polaris.calibration import load_calibration_rows
    from schedlab.polaris.job_model import calibrate

    rows = load_calibration_rows()
    d, theta = metadata.fit_metadata(calibrate(rows)).group_py["bert"]
    jobs = rows[rows["workload"] == "bert"].drop_duplicates("job_name")
    per_user = jobs["user"].value_counts().to_numpy()
    observed = int(sum((c * (c - 1) // 2) for c in jobs.groupby(["user", "group"]).size()))
    rng = np.random.default_rng(0)
    pairs, groups = np.zeros(reps, dtype=np.int64), np.zeros(reps, dtype=np.int64)
    for r in range(reps):
        for n in per_user:
            sizes: list[int] = []
            for i in range(n):
                p = np.array([s - d for s in sizes] + [theta + d * len(sizes)]) / (theta + i)
                j = int(rng.choice(p.size, p=p))
                if j == len(sizes):
                    sizes.append(1)
                else:
                    sizes[j] += 1
            s = np.array(sizes)
            pairs[r] += int((s * (s - 1) // 2).sum())
            groups[r] += s.size
    say(
        f"bert, fitted d={d:.3f} theta={theta:.1f}, calibration users' job counts {per_user[:6].tolist()}...:"
    )
    say(
        f"  same-group job pairs observed {observed}; model mean {pairs.mean():.1f}, 5-95 % "
        f"{np.percentile(pairs, 5):.0f}-{np.percentile(pairs, 95):.0f}, P(X <= observed) {(pairs <= observed).mean():.3f}"
    )
    say(
        f"  groups observed {jobs['group'].nunique()}; model 5-50-95 % "
        + "-".join(f"{np.percentile(groups, q):.0f}" for q in (5, 50, 95))
    )


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
    tasks = sample["task_name"].value_counts()
    say(
        "sample rows per task name (authors' sample): "
        + ", ".join(f"{t} {tasks.get(t, 0):,} ({n:,})" for t, n in metadata.AUTHORS_SAMPLE_TASKS.items())
    )
    share = pd.crosstab(sample["task_name"], sample["workload"], normalize="columns")
    say("sample task-name shares per workload:\n" + share[[*ss.MIX_FITTED]].round(3).to_string())
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
        sub = test[test["workload"].isin(ss.MIX_FITTED)].head(800)
        say("  task names per workload of the first 800 (calibration rows: first table):")
        say(pd.crosstab(sub["task_name"], sub["workload"]).to_string())
    for k in range(3):
        say(f"groups, draw {k + 1} of 800 rows of missed jobs:")
        say(group_stats(draw_rows(units, missed, 800, rng)).to_string())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="*", default=[0, 1], help="none: the calibration checks only")
    ap.add_argument("--out", default=None, help="also append the printed lines to this file")
    args = ap.parse_args()
    _report.OUT = Path(args.out) if args.out else None
    from schedlab.polaris import synthetic_size as ss
    from schedlab.polaris.calibration import load_calibration_rows

    say("calibration rows (800 real rows) per workload:")
    calibration = load_calibration_rows()
    say(group_stats(calibration).to_string())
    sub = calibration[calibration["workload"].isin(ss.MIX_FITTED)]
    say(
        "calibration rows' task names per workload:\n"
        + pd.crosstab(sub["task_name"], sub["workload"]).to_string()
    )
    pair_quantile()
    for seed in args.seeds:
        measure(seed)


if __name__ == "__main__":
    main()
