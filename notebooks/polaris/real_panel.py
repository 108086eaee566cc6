# %% [markdown]
# # PolarisProfiler: what the authors' published files and the 800 real rows reproduce
#
# **What this notebook reproduces, and on which data.** Everything here runs on **real** data
# published by the authors (`../shared/data/alibaba-pai/`); nothing uses the synthetic stand-in.
#
# | paper item | data | reproduced? |
# |---|---|---|
# | **Table I** (stratified sample sizes) | the paper's stratum sizes, per-stratum rounding rule | exactly, row by row |
# | **Table IV** (grid summary, HDBSCAN and OPTICS) | the authors' two 56-run grid tables | to the printed rounding (a few OPTICS cells differ, see the end) |
# | ACQUIRES (`scores_v1`), `scores_v3`, CCPM of every grid run | the same tables, recomputed from the stored statistics | to 1e-12 |
# | the repository's score-vs-parameter plots (Table III's parameters) | the same tables | figures `authors_*_scorev1_by_parameter` |
# | Hopkins statistic, **Table II** (fixed-label silhouettes), a reduced grid | the **800 real joined rows** | shown next to the paper's values, *not* comparable: 800 rows, not the paper's 100,001-row sample |
# | the authors' clustering semantics vs our earlier reading (silhouette over non-noise points, `OPTICS(min_samples=m)`) | the **800 real joined rows** | measured: which configuration each picks, and by how much the silhouette differs |
#
# Why not more: the trace's instance and sensor tables (about 1.1 GB compressed, 36.7 M joined
# rows) are not in the mirror, so the full pipeline (Hopkins, Table II, Figure 4, Table V, Figure 5 at
# the paper's scale) runs on a **labelled synthetic stand-in** in `polaris/pipeline` (every output
# says SYNTHETIC there). The paper's own numbers are read from `reference/polaris.yaml`.
#
# **Text vs code (ACQUIRES).** The tables are reproduced exactly with the size term on the *number of
# clusters* against the optimum (`scoring.OPTIMAL_N_CLUSTERS`); the authors' later library code puts
# the *mean cluster size* into that term. We use the tables' reading
# (`scoring.acquires(..., against="n_clusters")`).

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run polaris/real_panel [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section polaris.real_panel (with the polaris.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/polaris/real_panel/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("polaris/real_panel", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import numpy as np
import pandas as pd
from IPython.display import Markdown

from schedlab import io, parallel, reference, stagetimes
from schedlab.polaris import calibration, grid, hopkins, panel, plots, scoring
from schedlab.polaris.schema import TABLE_I_SIZES, TABLE_I_TARGET
from schedlab.reference import paper_values

out = Outputs(output_root, "polaris/real_panel")
rng = np.random.default_rng(seed)

# %% [markdown]
# ## 1. The authors' grid tables: scores recomputed, Table IV

# %%
rescored = panel.rescore_authors_grids()
io.atomic_write_text(out.results("authors_grid_rescored.csv"), rescored.to_csv(index=False))
print("max |ours - stored|:", panel.max_absdiff(rescored))

# %%
t4 = grid.summary(rescored)
io.atomic_write_text(out.results("table4_from_authors.csv"), t4.to_csv(index=False))
t4

# %% [markdown]
# Compare with the paper's Table IV (below, the paper's values from `reference/polaris.yaml` next to
# ours, largest differences first): HDBSCAN matches to the printed rounding; for OPTICS the paper's
# maximum number of outliers and mean silhouette differ from what the authors' table gives (see
# `results/polaris/comparison.md`).

# %%
panel.table4_vs_paper(t4, paper_values("polaris", "table4.")).sort_values("abs_diff", ascending=False).head(10)

# %%
best, best_rows = panel.authors_best(rescored)
io.atomic_write_text(out.results("authors_best.csv"), best_rows.to_csv())
paper_grid = paper_values("polaris", "grid.")
for a in best:
    fig = plots.score_vs_parameters(
        rescored[rescored.algorithm == a], "scores_v1", label="REAL",
        title=f"ACQUIRES of the authors' 56 {a.upper()} runs by grid parameter (Table III)",
        reference={f"authors' best {a.upper()} run": paper_grid[f"grid.{a}.best.acquires"]})
    out.savefig(fig, f"authors_{a}_scorev1_by_parameter")
best_rows

# %% [markdown]
# ## 2. Table I: per-stratum rounding `round(N_w * TABLE_I_TARGET / N)`

# %%
paper_t1 = paper_values("polaris", "table1.")
t1 = panel.table1_rule(TABLE_I_SIZES, {w: paper_t1[f"table1.{w}.sampled"] for w in TABLE_I_SIZES}, TABLE_I_TARGET)
io.atomic_write_text(out.results("table1_rule.csv"), t1.to_csv(index=False))
t1

# %% [markdown]
# ## 3. Real panel on the 800 real rows (17 features, `fillna(0)`)

# %%
rows = calibration.load_calibration_rows()
X = calibration.feature_matrix(rows)
hp = hopkins.hopkins_panel(X, hopkins_sizes, rng=rng, repeats=hopkins_repeats)
hp_summary = panel.hopkins_summary(hp)
io.atomic_write_text(out.results("real_panel_hopkins.csv"), hp_summary.to_csv(index=False))
hp_summary

# %%
# Table II on the 800 real rows (standard-scaled features; the paper's values on its full sample are not reproducible
# here), with each cell's bootstrap standard deviation: the sampling spread of 800 rows behind the tolerance of the
# table2_real800.* entries in reference/polaris.yaml
Xs = grid.transform(X, "standard_scaler")
t2 = scoring.fixed_label_silhouettes(Xs, rows)
t2_spread = panel.table2_spread(Xs, rows, rng=np.random.default_rng([seed, 2]))
io.atomic_write_text(out.results("real_panel_table2.csv"), t2.rename_axis("labels").to_csv())
io.atomic_write_text(out.results("real_panel_table2_spread.csv"), t2_spread.rename_axis("labels").to_csv())
pd.concat({"silhouette (800 real rows)": t2, "bootstrap std": t2_spread}, axis=1).round(3)

# %% [markdown]
# **Which scaling?** The cells above use standard-scaled features, the suite's choice: neither the paper nor
# the authors' code states the scaling behind Table II, and the cells move with it. The same table under
# the raw features and each of Table III's transforms, each cell next to the paper's, counted within ±0.1
# (about 2.4 bootstrap standard deviations or more of every cell): the table2_real800.* entries are
# therefore shown, not asserted.

# %%
t2_scalings = panel.table2_by_scaling(X, rows, paper_values("polaris", "table2."))
io.atomic_write_text(out.results("real_panel_table2_scalings.csv"), t2_scalings.to_csv(index=False))
t2_scaling_counts = t2_scalings.groupby("scaling", sort=False).agg(
    within_0_1=("within", "sum"), cells=("within", "size"), diff_min=("diff", "min"), diff_max=("diff", "max"))
t2_scaling_counts.round(3)

# %%
cache = out.root / "data" / "cache" / "polaris" / "real_panel"
with parallel.executor(panel_n_jobs) as ex:
    panel_grid = grid.run_grid(X, grid.configs(min_cluster_sizes=panel_min_cluster_sizes), cache, seed=seed,
                               executor=ex, optics_subsample=None, progress=False)
# per-run wall/CPU seconds change from run to run: kept apart, under results/polaris/timings/
stagetimes.write_timed(out, panel_grid, "real_panel_grid.csv", timing_columns=grid.TIMING_COLUMNS,
                       key_columns=grid.RUN_COLUMNS)
panel_grid[["algorithm", "transform", "metric", "min_cluster_size", "n_clusters", "n_outliers", "avg_silhouette",
            "davies_bouldin_score", "scores_v1", "CCPM"]].sort_values("scores_v1", ascending=False).head(10)

# %% [markdown]
# ## 4. The authors' clustering semantics vs our earlier reading, on the 800 real rows
#
# The authors' grid code (`polaris-slo-cloud/polaris-ai`, `ml_data-profiling/alibaba_data-EDA-v0.3.ipynb`,
# cells 102/103) averages `silhouette_samples` over the **non-noise** points only and calls
# `OPTICS(min_samples=m)`; this project first averaged over all points (noise as one more group) and called
# `OPTICS(min_cluster_size=m)` with scikit-learn's `min_samples=5`. The authors' choices are now the
# default (`grid.Config.silhouette`, `grid.Config.optics_param`); the earlier ones stay as options. The
# published grid tables store the authors' silhouettes, so their rescoring above does not change. Below:
# the configuration ACQUIRES picks under each semantics (and under the two mixed ones, which isolate each
# choice), then the silhouette difference on the same labels.

# %%
sem_grids = panel.semantics_grids(X, cache, panel_min_cluster_sizes, seed=seed, n_jobs=panel_n_jobs)
sem_best = panel.semantics_best(sem_grids)
sil_gain = panel.silhouette_gain(sem_grids)
io.atomic_write_text(out.results("real_panel_semantics.csv"), sem_best.to_csv(index=False))
io.atomic_write_text(out.results("real_panel_silhouette_gain.csv"), sil_gain.to_csv(index=False))
io.atomic_write_json(out.results("real_panel.json"),
                     panel.panel_summary(rows, hp, panel_grid, best, rescored,
                                         semantics=panel.semantics_summary(sem_best, sil_gain)))
print("authors' silhouette minus the with-noise one, same labels (runs with >= 2 clusters):")
print(sil_gain.round(3).to_string(index=False))
sem_best.sort_values(["algorithm", "semantics"]).round(4)

# %%
pick = sem_best.set_index(["semantics", "algorithm"])
def cfg_text(r):
    return f"{r['transform']}/{r.metric}/{r.min_cluster_size} ({r.n_clusters} clusters, {r.n_outliers} outliers)"


h_gain = sil_gain.set_index(["algorithm", "optics_param"]).loc[("hdbscan", "min_samples")]
Markdown("\n".join(
    f"* **{a.upper()}**: the authors' semantics pick {cfg_text(pick.loc[('authors', a)])}, silhouette "
    f"{pick.loc[('authors', a)].avg_silhouette:.3f}, ACQUIRES {pick.loc[('authors', a)].scores_v1:.3f}; the earlier "
    f"reading picks {cfg_text(pick.loc[('earlier', a)])}, silhouette {pick.loc[('earlier', a)].avg_silhouette:.3f}, "
    f"ACQUIRES {pick.loc[('earlier', a)].scores_v1:.3f}." for a in ("hdbscan", "optics"))
    + f"\n* On the same HDBSCAN labels the non-noise silhouette is {h_gain['min']:.2f} to {h_gain['max']:.2f} higher "
      f"(mean {h_gain['mean']:.2f}, {int(h_gain.runs)} runs).")

# %% [markdown]
# ## Paper vs ours
#
# The rows of `schedlab.reference.paper_vs_ours("polaris", ...)` this notebook's files feed (the same table
# `results/polaris/comparison.md` holds after the `polaris_compare` stage), with the signed
# difference ours − paper; then the 800-row panel next to the paper's Table II and Hopkins value.

# %%
cmp = reference.paper_vs_ours("polaris", ["table1.", "table4.", "grid.", "hopkins.real800", "table2_real800."], out.root)
cmp[["id", "paper", "ours", "diff", "tolerance", "match", "note"]].style.format(
    "{:.6g}", subset=["paper", "ours", "diff"])

# %%
t1_rows, t4_rows = cmp[cmp.id.str.startswith("table1.")], cmp[cmp.id.str.startswith("table4.")]
t4_off = t4_rows[t4_rows.match != "yes"]
acq, absdiff, hop = (cmp.set_index("id").loc[k] for k in ("grid.hdbscan.best.acquires", "grid.recompute.max_absdiff",
                                                           "hopkins.real800"))
paper_t2 = paper_values("polaris", "table2.")
t2_real = cmp[cmp.id.str.startswith("table2_real800.")]
t2_diff = pd.Series({k: t2.loc[k.split(".")[1], k.split(".")[2]] - v for k, v in paper_t2.items()})
t2_same_sign = sum(np.sign(t2.loc[k.split(".")[1], k.split(".")[2]]) == np.sign(v) for k, v in paper_t2.items())
paper_t2_rows = pd.Series(paper_t2).groupby(lambda k: k.split(".")[1]).mean()
panel_best = grid.best(panel_grid, "hdbscan")
def num(v, sign=""):
    return f"{v:{sign},.4f}".rstrip("0").rstrip(".")  # 98,036 and 0.6365, not 98,036.0000


off_text = "; ".join(f"{r.id.removeprefix('table4.')}: paper {num(r.paper)}, ours {num(r.ours)} "
                     f"({num(r.diff, '+')}) — {r.note or 'no note in reference/polaris.yaml'}"
                     for r in t4_off.itertuples())
Markdown(f"""
**On the authors' real files (reproduced).**

* **Table I**: {int((t1_rows.match == "yes").sum())} of {len(t1_rows)} rows equal the paper's sampled sizes exactly
  (ours − paper from {t1_rows["diff"].min():+,.0f} to {t1_rows["diff"].max():+,.0f} rows); total
  {int(t1.sampled_rule.iloc[-1]):,} rows.
* **Table IV**: {int((t4_rows.match == "yes").sum())} of {len(t4_rows)} cells within half a unit of the printed last
  digit. The other {len(t4_off)}, with the reason recorded in `reference/polaris.yaml`: {off_text}.
* **ACQUIRES** of the authors' best HDBSCAN run: ours {acq.ours:.5f} vs {acq.paper:.5f} ({acq.ours - acq.paper:+.1e});
  the largest |recomputed − stored| score over both tables is {absdiff.ours:.1e}.

**On the 800 real rows (not the paper's sample, so not a reproduction).**

* **Hopkins**: {hop.ours:.4f} vs the paper's {hop.paper:.4f} on its 100,001 rows ({hop.ours - hop.paper:+.4f}); both
  far below 0.3, i.e. clusterable.
* **Table II**: ours − paper from {t2_diff.min():+.2f} to {t2_diff.max():+.2f} over the {len(t2_diff)} cells; the sign
  agrees in {t2_same_sign} of {len(t2_diff)}; {int(t2_scaling_counts.loc["standard_scaler", "within_0_1"])} of
  {len(t2_real)} cells lie within ±0.1 of the paper's (bootstrap standard deviation of a cell on 800 rows
  {t2_spread.to_numpy().min():.3f} to {t2_spread.to_numpy().max():.3f}). That count depends on the scaling, which the
  paper does not state: {"; ".join(f"{k} {int(r.within_0_1)}/{int(r.cells)}" for k, r in t2_scaling_counts.iterrows())}
  ("none" = raw features); shown, not asserted.
  Highest mean silhouette over the three metrics: *{t2.mean(axis=1).idxmax()}* labels here, *{paper_t2_rows.idxmax()}*
  labels in the paper.
* **Reduced grid** (min cluster sizes {panel_min_cluster_sizes}, the authors' semantics): the best HDBSCAN run has {panel_best.n_clusters:.0f}
  profiles and ACQUIRES {panel_best.scores_v1:.3f} ({panel_best.scores_v1 - acq.paper:+.3f} against the authors' best on
  100,001 rows; ACQUIRES rewards {scoring.OPTIMAL_N_CLUSTERS} clusters, hard to reach with 800 rows).
""")
