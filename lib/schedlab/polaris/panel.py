"""Checks on the authors' published real data (notebook ``polaris/real_panel``).

Their HDBSCAN and OPTICS grid tables (56 runs each, on their 100,001-row sample) are rescored
with our ACQUIRES / ``scores_v3`` / CCPM and summarised as Table IV; Table I's per-stratum
rounding is applied to the paper's stratum sizes; the 800 real rows get a small panel (Hopkins,
Table II with its bootstrap spread, a reduced grid, and that grid under the authors' and our earlier
clustering semantics, :data:`SEMANTICS`). The paper's own numbers come in from ``reference/polaris.yaml``
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
BEST_FIELDS = (
    "transform",
    "metric",
    "min_cluster_size",
    "n_clusters",
    "n_outliers",
    "avg_silhouette",
    "scores_v1",
)


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
    rows = pd.DataFrame(best).T[
        [
            "transform_function",
            "metric",
            "min_cluster_size",
            "n_clusters",
            "n_outliers",
            "avg_silhouette",
            "scores_v1",
            "scores_v1_ours",
        ]
    ]
    return best, rows.rename_axis("algorithm")


def table4_vs_paper(t4: pd.DataFrame, paper: dict[str, float]) -> pd.DataFrame:
    """Table IV from the authors' tables next to the paper's printed values (``paper``: the
    ``table4.<algorithm>.<stat>.<column>`` ids of ``reference/polaris.yaml``)."""
    ours = t4.set_index(["algorithm", "stat"])
    rows = []
    for key, value in paper.items():
        _, algo, stat, column = key.split(".", 3)
        rows.append(
            {
                "algorithm": algo,
                "stat": stat,
                "column": column,
                "paper": value,
                "ours": float(ours.loc[(algo, stat), column]),
            }
        )
    out = pd.DataFrame(rows)
    return out.assign(abs_diff=(out.ours - out.paper).abs())


def table1_rule(sizes: dict[str, int], paper_sampled: dict[str, int], total: int) -> pd.DataFrame:
    """Table I: the paper's stratum sizes, its sampled rows and the rule's
    ``round(N_w * total / N)``, with a Total row."""
    from schedlab.polaris import sampling

    rule = sampling.stratum_sizes(sizes, total)
    t1 = pd.DataFrame(
        {
            "workload": list(sizes),
            "size": list(sizes.values()),
            "sampled_paper": [paper_sampled[w] for w in sizes],
            "sampled_rule": [rule[w] for w in sizes],
        }
    )
    total_row = {
        "workload": "Total",
        "size": t1["size"].sum(),
        "sampled_paper": t1.sampled_paper.sum(),
        "sampled_rule": t1.sampled_rule.sum(),
    }
    return pd.concat([t1, pd.DataFrame([total_row])], ignore_index=True)


def hopkins_summary(hp: pd.DataFrame) -> pd.DataFrame:
    """Mean and std of the Hopkins statistic per sampling size."""
    return hp.groupby("sampling_size").hopkins.agg(["mean", "std"]).reset_index()


def panel_summary(
    rows: pd.DataFrame,
    hp: pd.DataFrame,
    panel: pd.DataFrame,
    authors: dict[str, pd.Series],
    rescored: pd.DataFrame,
    *,
    semantics: dict | None = None,
) -> dict:
    """``real_panel.json``: the panel's best runs, its Hopkins mean and the rescoring check, plus
    the ``semantics`` block (:func:`semantics_summary`) when given."""
    extra = {} if semantics is None else {"semantics": semantics}
    return {
        "n_rows": int(len(rows)),
        "hopkins_mean": float(hp.hopkins.mean()),
        "best": {a: run_record(grid.best(panel, a), BEST_FIELDS) for a in ALGORITHMS},
        "authors_best_hdbscan_scores_v1_ours": float(authors["hdbscan"].scores_v1_ours),
        "authors_max_absdiff": float(rescored.filter(like="_absdiff").to_numpy().max()),
        **extra,
    }


#: the clustering semantics the 800-row panel contrasts (``grid.Config`` fields): the authors'
#: (the default) and this project's earlier reading, plus the two mixed ones that isolate each choice
SEMANTICS = {
    "authors": {"silhouette": "non_noise", "optics_param": "min_samples"},
    "earlier": {"silhouette": "with_noise", "optics_param": "min_cluster_size"},
    "authors_silhouette_only": {"silhouette": "non_noise", "optics_param": "min_cluster_size"},
    "authors_optics_only": {"silhouette": "with_noise", "optics_param": "min_samples"},
}
SEMANTICS_FIELDS = (
    "semantics",
    "silhouette",
    "optics_param",
    "transform",
    "metric",
    "min_cluster_size",
    "n_clusters",
    "n_outliers",
    "avg_silhouette",
    "scores_v1",
)


def semantics_grids(
    X,
    cache_dir,
    min_cluster_sizes,
    *,
    seed: int = 0,
    n_jobs: int = 1,
    semantics: dict[str, dict[str, str]] | None = None,
) -> pd.DataFrame:
    """The panel grid once per semantics (:data:`SEMANTICS`), all rows (no OPTICS subsample, as
    the authors), one table with a ``semantics`` column. Runs share ``cache_dir`` (the semantics are
    part of each run's cache key, so the default-semantics panel grid is read back, not rerun)."""
    frames = []
    for name, kw in (semantics or SEMANTICS).items():
        t = grid.run_grid(
            X,
            grid.configs(min_cluster_sizes=min_cluster_sizes, **kw),
            cache_dir,
            seed=seed,
            n_jobs=n_jobs,
            optics_subsample=None,
            progress=False,
        )
        frames.append(t.assign(semantics=name))
    return pd.concat(frames, ignore_index=True)


def semantics_best(grids: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm and semantics, the configuration ACQUIRES picks, with its silhouette and score."""
    rows = []
    for (_, algo), g in grids.groupby(["semantics", "algorithm"], sort=False):
        if g.scores_v1.notna().any():
            rows.append({"algorithm": algo, **grid.best(g, algo)[list(SEMANTICS_FIELDS)].to_dict()})
    return pd.DataFrame(rows)


def silhouette_gain(grids: pd.DataFrame) -> pd.DataFrame:
    """On the same labels (same algorithm, parameters and ``optics_param``), the authors' silhouette
    minus the with-noise one: min / mean / max over the runs with at least two clusters."""
    keys = ["algorithm", "transform", "metric", "min_cluster_size", "optics_param"]
    runs = grids.drop_duplicates(subset=[*keys, "silhouette"])
    wide = runs.pivot_table(index=keys, columns="silhouette", values="avg_silhouette")
    wide = wide[wide.min(axis=1) > -1].dropna()  # -1: at most one cluster, both semantics give -1
    gain = (wide["non_noise"] - wide["with_noise"]).rename("gain")
    out = gain.groupby(level=["algorithm", "optics_param"]).agg(["min", "mean", "max", "count"])
    return out.rename(columns={"count": "runs"}).reset_index()


def semantics_summary(best: pd.DataFrame, gain: pd.DataFrame) -> dict:
    """The ``semantics`` block of ``real_panel.json``: best runs of the authors' and the earlier
    semantics per algorithm, and the HDBSCAN silhouette gain range."""
    pick = best[best.semantics.isin(["authors", "earlier"])]
    h = gain[gain.algorithm == "hdbscan"].iloc[0]
    return {
        "best": {
            f"{r.semantics}.{r.algorithm}": run_record(pd.Series(r._asdict()), BEST_FIELDS)
            for r in pick.itertuples(index=False)
        },
        "hdbscan_silhouette_gain_min": float(h["min"]),
        "hdbscan_silhouette_gain_max": float(h["max"]),
    }


def table2_spread(X, meta, *, repeats: int = 40, rng) -> pd.DataFrame:
    """Bootstrap standard deviation of each Table II cell on these rows (rows drawn with
    replacement, ``repeats`` times): the sampling spread behind the tolerance of the
    ``table2.real800.*`` entries of ``reference/polaris.yaml``. Same shape as
    :func:`schedlab.polaris.scoring.fixed_label_silhouettes`."""
    import numpy as np

    X = np.asarray(X, dtype=float)
    draws = []
    for _ in range(repeats):
        idx = rng.choice(len(X), size=len(X), replace=True)
        draws.append(scoring.fixed_label_silhouettes(X[idx], meta.iloc[idx].reset_index(drop=True)).stack())
    return pd.concat(draws, axis=1).std(axis=1).unstack()


def max_absdiff(rescored: pd.DataFrame) -> dict[str, float]:
    """The largest |ours - stored| per score column."""
    return {k: float(v) for k, v in rescored.filter(like="_absdiff").max().items()}


#: the feature scalings Table II is shown under: the raw features and Table III's four transforms.
#: Neither the paper nor the authors' code states which one their Table II used.
TABLE2_SCALINGS: tuple[str, ...] = (
    "none",
    "standard_scaler",
    "minmax_scaler",
    "robust_scaler",
    "yeo-johnson",
)


def table2_by_scaling(
    X, meta, paper: dict[str, float], *, within: float = 0.1, scalings: tuple[str, ...] = TABLE2_SCALINGS
) -> pd.DataFrame:
    """Table II on these rows under every scaling in ``scalings`` (``"none"``: raw features), next
    to the paper's cells (``paper``: ids ``table2.<labels>.<metric>`` as in ``reference/polaris.yaml``).

    Returns one row per scaling, labels and metric: ``silhouette``, ``paper``, ``diff`` (ours -
    paper) and ``within`` (``|diff| <= within``): how much the comparison depends on a choice the
    paper does not state.

    >>> import numpy as np
    >>> X = np.r_[np.zeros((5, 2)), np.ones((5, 2))] + np.arange(10)[:, None] * 1e-3
    >>> meta = pd.DataFrame({"workload": ["a"] * 5 + ["b"] * 5, "task_name": ["x", "y"] * 5})
    >>> t = table2_by_scaling(X, meta, {"table2.Workload.euclidean": 1.0}, scalings=("none",))
    >>> t.loc[t["labels"] == "Workload", ["metric", "within"]].to_dict("records")[0]
    {'metric': 'euclidean', 'within': True}
    """
    import numpy as np

    parts = []
    for s in scalings:
        Xs = np.asarray(X, dtype=float) if s == "none" else grid.transform(X, s)
        t = scoring.fixed_label_silhouettes(Xs, meta).rename_axis("labels").reset_index()
        parts.append(t.melt(id_vars="labels", var_name="metric", value_name="silhouette").assign(scaling=s))
    out = pd.concat(parts, ignore_index=True)[["scaling", "labels", "metric", "silhouette"]]
    out["paper"] = [paper.get(f"table2.{lab}.{m}", np.nan) for lab, m in zip(out["labels"], out["metric"])]
    out["diff"] = out["silhouette"] - out["paper"]
    out["within"] = out["diff"].abs() <= within
    return out
