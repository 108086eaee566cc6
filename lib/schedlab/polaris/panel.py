"""Checks on the authors' published real data (notebook ``polaris/real_panel``).

Their HDBSCAN and OPTICS grid tables (56 runs each, on their 100,001-row sample) are rescored
with our ACQUIRES / ``scores_v3`` / CCPM and summarised as Table IV; Table I's per-stratum
rounding is applied to the paper's stratum sizes; the 800 real rows get a small panel (Hopkins,
Table II, a reduced grid). The paper's own numbers come in from ``reference/polaris.yaml``
(:func:`schedlab.reference.paper_values`), never from literals here.

Examples
--------
>>> t1 = table1_rule({"bert": 30, "ctr": 10}, {"bert": 3, "ctr": 1}, 4)
>>> t1.to_dict("list")["sampled_rule"]
[3, 1, 4]
"""

from __future__ import annotations

import pandas as pd

from schedlab.polaris import calibration, grid, scoring
from schedlab.polaris.pipeline import run_record

SCORES = ("scores_v1", "scores_v3", "CCPM")
ALGORITHMS = ("hdbscan", "optics")
#: the fields of a best run the panel summary keeps
BEST_FIELDS = ("transform", "metric", "min_cluster_size", "n_clusters", "n_outliers", "avg_silhouette", "scores_v1")


def rescore_authors_grids() -> pd.DataFrame:
    """Both authors' grid tables with our recomputed scores next to theirs: columns
    ``<score>_ours`` and ``<score>_absdiff`` per score, and ``algorithm``."""
    frames = []
    for algo in ALGORITHMS:
        t = calibration.load_grid(algo)
        ours = scoring.score_table(t.drop(columns=list(SCORES)), calibration.GRID_N)
        for c in SCORES:
            t[f"{c}_ours"] = ours[c]
            t[f"{c}_absdiff"] = (ours[c] - t[c]).abs()
        frames.append(t.assign(algorithm=algo))
    return pd.concat(frames, ignore_index=True)


def authors_best(rescored: pd.DataFrame) -> tuple[dict[str, pd.Series], pd.DataFrame]:
    """The best stored ACQUIRES run per algorithm: the runs, and a table of their key fields."""
    best = {a: rescored[rescored.algorithm == a].loc[lambda d: d.scores_v1.idxmax()] for a in ALGORITHMS}
    rows = pd.DataFrame(best).T[["transform_function", "metric", "min_cluster_size", "n_clusters", "n_outliers",
                                 "avg_silhouette", "scores_v1", "scores_v1_ours"]]
    return best, rows.rename_axis("algorithm")


def table4_vs_paper(t4: pd.DataFrame, paper: dict[str, float]) -> pd.DataFrame:
    """Table IV from the authors' tables next to the paper's printed values (``paper``: the
    ``table4.<algorithm>.<stat>.<column>`` ids of ``reference/polaris.yaml``)."""
    ours = t4.set_index(["algorithm", "stat"])
    rows = []
    for key, value in paper.items():
        _, algo, stat, column = key.split(".", 3)
        rows.append({"algorithm": algo, "stat": stat, "column": column, "paper": value,
                     "ours": float(ours.loc[(algo, stat), column])})
    out = pd.DataFrame(rows)
    return out.assign(abs_diff=(out.ours - out.paper).abs())


def table1_rule(sizes: dict[str, int], paper_sampled: dict[str, int], total: int) -> pd.DataFrame:
    """Table I: the paper's stratum sizes, its sampled rows and the rule's
    ``round(N_w * total / N)``, with a Total row."""
    from schedlab.polaris import sampling

    rule = sampling.stratum_sizes(sizes, total)
    t1 = pd.DataFrame({"workload": list(sizes), "size": list(sizes.values()),
                       "sampled_paper": [paper_sampled[w] for w in sizes], "sampled_rule": [rule[w] for w in sizes]})
    total_row = {"workload": "Total", "size": t1["size"].sum(), "sampled_paper": t1.sampled_paper.sum(),
                 "sampled_rule": t1.sampled_rule.sum()}
    return pd.concat([t1, pd.DataFrame([total_row])], ignore_index=True)


def hopkins_summary(hp: pd.DataFrame) -> pd.DataFrame:
    """Mean and std of the Hopkins statistic per sampling size."""
    return hp.groupby("sampling_size").hopkins.agg(["mean", "std"]).reset_index()


def panel_summary(rows: pd.DataFrame, hp: pd.DataFrame, panel: pd.DataFrame, authors: dict[str, pd.Series],
                  rescored: pd.DataFrame) -> dict:
    """``real_panel.json``: the panel's best runs, its Hopkins mean and the rescoring check."""
    return {"n_rows": int(len(rows)),
            "hopkins_mean": float(hp.hopkins.mean()),
            "best": {a: run_record(grid.best(panel, a), BEST_FIELDS) for a in ALGORITHMS},
            "authors_best_hdbscan_scores_v1_ours": float(authors["hdbscan"].scores_v1_ours),
            "authors_max_absdiff": float(rescored.filter(like="_absdiff").to_numpy().max())}


def max_absdiff(rescored: pd.DataFrame) -> dict[str, float]:
    """The largest |ours - stored| per score column."""
    return {k: float(v) for k, v in rescored.filter(like="_absdiff").max().items()}
