# %% [markdown]
# # PolarisProfiler end to end: trace → Table I → Hopkins/Table II → grid (Tables III/IV) → Figure 4 → Table V + SHAP → Figure 5
#
# **What this notebook reproduces, and on which data.** The whole case study of Section III, in
# the paper's order: Table I (stratified sample), the Hopkins statistic, Table II (fixed metadata
# labels), the clustering grid of Table III summarised as Table IV, Figure 4 (per-profile boxplots
# and the metadata heatmaps of the authors' repository), Table V (metadata classifier) with the SHAP
# summary, and Figure 5 (duration of unseen jobs from the profile mean).
#
# **On a labelled synthetic stand-in by default.** With `trace_dir` empty (the default) it runs on
# a **SYNTHETIC** trace written by `schedlab.polaris.synthetic` (the upstream format, per-workload
# feature distributions fitted on the 800 real joined rows). Why: the real trace's instance and
# sensor tables (about 1.1 GB compressed, 36.7 M joined rows) are not in the data mirror, and the
# paper's scale takes hours. Every table, figure title and file says SYNTHETIC; these numbers
# **cannot** reproduce the paper's and are shown next to them, never asserted. With `trace_dir`
# pointing at the six real `pai_*.tar.gz` archives the same cells run on the real trace (label REAL).
# What *is* reproduced on real data (Table I, Table IV from the authors' grid tables, ACQUIRES, and a
# panel on the 800 real rows) is in `polaris/real_panel`.
#
# The parameters below are the pipeline's (`polaris.pipeline` in `params.yaml`): a few minutes on
# 2 cores. `profile = "paper"` runs at the paper's scale instead (a synthetic trace of the real
# trace's size, the authors' sample size and grid; hours).
#
# Choices (see the module docstrings): faithful join (many-to-many on `inst_id`, task-level times and
# duration) unless `join = "corrected"`; 17 features with `fillna(0)`; Table I per-stratum rounding;
# Hopkins as pyclustertend (≈0 clusterable); the authors' clustering semantics (their public grid code):
# silhouette averaged over the non-noise points and `OPTICS(min_samples=m)` (`grid.Config`; our earlier
# reading, noise averaged in and `OPTICS(min_cluster_size=m)`, stays an option); ACQUIRES with the
# tables' cluster-count term; the grid runs on the suite's executor (`schedlab.parallel`:
# `grid_n_jobs` local processes, or a Dask cluster at `grid_scheduler`, same results) and resumes
# from its per-configuration cache; OPTICS on a random subsample of `optics_subsample` rows;
# classifier on clustered rows, 80/20 split `random_state=5`; duration = mean of the predicted profile.

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run polaris/pipeline [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section polaris.pipeline (with the polaris.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/polaris/pipeline/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("polaris/pipeline", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from schedlab import io, parallel, reference, stagetimes
from schedlab.polaris import duration, explain, grid, hopkins, metadata, pipeline, plots, scoring
from schedlab.polaris.schema import FEATURES
from schedlab.reference import paper_values

out = Outputs(output_root, "polaris/pipeline")
LABEL = pipeline.data_label(trace_dir)
work = pipeline.work_dir(out.root, trace_dir, n_jobs, seed)
timings = {}
print(LABEL, work)

# %% [markdown]
# ## Trace and ingest (DuckDB, bounded memory)
#
# The planted check further down needs a second stand-in, which nothing before it depends on:
# a second process writes it now, beside this one (each synthesis uses one core). The realism
# check below depends only on the real rows: a third process starts it now too.

# %%
realism_running = None
if not trace_dir and realism_folds:
    realism_running = pipeline.realism_in_background(realism_folds, seed)
planted_ready = None
if not trace_dir and planted:
    planted_ready = pipeline.prepare_planted_in_background(
        out.root, n_jobs, seed, planted=planted, join=join, memory_limit=memory_limit)
with pipeline.timed(timings, "synthesize_s"):
    tdir = pipeline.trace_folder(trace_dir, work, n_jobs, seed)
with pipeline.timed(timings, "ingest_join_s"):
    info = pipeline.ingest_and_join(tdir, work, join, memory_limit)
print(f"{LABEL} {join} join: {info.rows:,} rows")

# %% [markdown]
# ## How realistic is the stand-in?
#
# The synthetic generator is calibrated on the 800 real joined rows. To check it against rows it
# never saw, the real rows are split into `realism_folds` folds; for each fold the generator is
# calibrated on the others and its rows are compared with the held-out fold: a two-sample KS test
# per feature and a classifier that tries to tell synthetic from real rows (cross-validated AUC;
# 0.5 = indistinguishable), per workload with at least 20 real rows (bert, ctr, inception; the
# others have too few to test) and pooled (`all`). Three numbers per workload: the **numeric AUC**
# (the 17 features; goal <= 0.7), the **categorical AUC** (the same classifier with the discrete
# columns added: task name, GPU type, how common the row's user and group are among the calibration
# rows; goal <= 0.65) and the **coverage** (share of held-out real rows whose metadata combination
# of workload, task name, user and group the generator can produce at all; goal >= 0.95).
# (`pipeline.realism`, started in the trace cell in a second process.)

# %%
if realism_running is None:
    realism_table = None
    print("skipped: " + ("a real trace" if trace_dir else "realism_folds = 0"))
else:
    with pipeline.timed(timings, "realism_wait_s"):
        realism_table = realism_running.result()
    io.atomic_write_text(out.results("pipeline_realism.csv"), realism_table.to_csv(index=False))
    show = realism_table[["version", "workload", "n_real", "n_synth", "auc", "auc_sd", "auc_cat", "coverage",
                          "ks_max", "ks_fail"]]
    display(show.round(3))
    tested = show[show.workload != "all"]
    display(Markdown(f"Numeric AUC per workload {tested.auc.min():.2f}-{tested.auc.max():.2f} "
                     f"(goal <= 0.7: {'met' if (tested.auc <= 0.7).all() else 'NOT met'}); categorical AUC "
                     f"{tested.auc_cat.min():.2f}-{tested.auc_cat.max():.2f} (goal <= 0.65: "
                     f"{'met' if (tested.auc_cat <= 0.65).all() else 'NOT met'}); coverage "
                     f"{tested.coverage.min():.2f}-{tested.coverage.max():.2f} (goal >= 0.95: "
                     f"{'met' if (tested.coverage >= 0.95).all() else 'NOT met'}); features failing KS "
                     f"at p < 0.01: {int(tested.ks_fail.sum())} over {len(tested)} workloads x 17 features."))

# %% [markdown]
# ## Table I: stratified sampling by workload

# %%
with pipeline.timed(timings, "sample_s"):
    sample = pipeline.draw_sample(info.path, sample_total, seed, keep_zero_strata=keep_zero_strata)
t1 = pipeline.table1(info.per_workload, sample, LABEL)
io.atomic_write_text(out.results("pipeline_table1.csv"), t1.to_csv(index=False))
t1

# %% [markdown]
# ## Hopkins and Table II (fixed metadata labels)

# %%
X = sample[list(FEATURES)].to_numpy(float)
hp = hopkins.hopkins_panel(X, [m for m in hopkins_sizes if m <= len(X)], rng=np.random.default_rng([seed, 3]),
                           repeats=hopkins_repeats)
t2 = scoring.fixed_label_silhouettes(grid.transform(X, "standard_scaler"), sample, sample_size=min(table2_sample, len(X)),
                                     rng=np.random.default_rng([seed, 4]))
io.atomic_write_text(out.results("pipeline_hopkins.csv"), hp.assign(data=LABEL).to_csv(index=False))
io.atomic_write_text(out.results("pipeline_table2.csv"), t2.rename_axis("labels").assign(data=LABEL).to_csv())
print(LABEL, "Hopkins by sampling size:", hp.groupby("sampling_size").hopkins.mean().round(4).to_dict())
t2

# %% [markdown]
# ## Tables III/IV: the clustering grid (cached per configuration; resumes if interrupted)

# %%
cfgs = grid.configs(algorithms=algorithms, transforms=transforms, metrics=metrics, min_cluster_sizes=min_cluster_sizes)
with pipeline.timed(timings, "grid_s"), parallel.executor(grid_scheduler or grid_n_jobs) as ex:
    table = grid.run_grid(X, cfgs, work / "grid_cache", executor=ex, seed=seed,
                          silhouette_sample=silhouette_sample or None,
                          optics_subsample=optics_subsample or None, progress=False)
# per-run wall/CPU seconds change from run to run: kept apart, under results/polaris/timings/
stagetimes.write_timed(out, table.assign(data=LABEL), "pipeline_grid.csv", timing_columns=grid.TIMING_COLUMNS,
                       key_columns=[*grid.RUN_COLUMNS, "data"])
t4 = grid.summary(table)
io.atomic_write_text(out.results("pipeline_table4.csv"), t4.assign(data=LABEL).to_csv(index=False))
paper_grid = paper_values("polaris", "grid.")
for a in table.algorithm.unique():
    fig = plots.score_vs_parameters(
        table[table.algorithm == a], "scores_v1", label=LABEL, transform_col="transform",
        title=f"ACQUIRES of our {a.upper()} runs by grid parameter (Table III; {len(X):,}-row sample)",
        reference={f"authors' best {a.upper()} run (REAL, 100,001 rows)": paper_grid[f"grid.{a}.best.acquires"]})
    out.savefig(fig, f"pipeline_{a}_scorev1_by_parameter")
t4

# %% [markdown]
# ## Figure 4: profiles of the best HDBSCAN run
#
# Boxplots of **all 17 features** per profile; in each panel the profiles are sorted by that
# feature's standard deviation, ascending (the authors' ordering; `-1` is the outliers group), with
# the minimum / maximum / mean std in green / red / turquoise as in the paper. Fliers are hidden and
# heavy-tailed features use a symlog axis (marked in the y label). The paper shows only CPU usage and
# GPU utilisation; those two are also written as single figures. The per-profile std behind the
# ordering is `pipeline_fig4_profile_std.csv`. Then heatmaps of the metadata (workload, user, task
# name, group and job name, as the authors' repository has them) against the profiles: colour =
# share of a value's rows in each profile, most frequent values only (`heatmap_top`).

# %%
df, run = pipeline.attach_profiles(sample, table, work / "grid_cache", algorithm="hdbscan")
df["profile"] = df["profile"].astype(int)
planted_running = None  # the planted check (further down) needs only the chosen run: it starts now, beside this
if not trace_dir and planted:
    planted_ready.result()  # the second stand-in, written in the background since the trace cell
    planted_running = pipeline.planted_recovery_in_background(
        out.root, n_jobs, seed, grid.Config("hdbscan", run["transform"], run.metric, int(run.min_cluster_size)),
        planted=planted, join=join, memory_limit=memory_limit, sample_total=sample_total,
        keep_zero_strata=keep_zero_strata, silhouette_sample=silhouette_sample or None)
print(f"{LABEL} best HDBSCAN: {run['transform']}, {run.metric}, {run.min_cluster_size}: {run.n_clusters} profiles, "
      f"{run.n_outliers} outliers, ACQUIRES {run.scores_v1:.4f}")
stds = plots.profile_std_table(df, list(FEATURES))
io.atomic_write_text(out.results("pipeline_fig4_profile_std.csv"), stds.assign(data=LABEL).to_csv(index=False))
out.savefig(plots.feature_boxplots_grid(df, list(FEATURES), label=LABEL), "pipeline_fig4_all_features")
for f in ["cpu_usage", "gpu_wrk_util"]:
    out.savefig(plots.feature_boxplots(df, f, label=LABEL), f"pipeline_fig4_{f}")
for c in pipeline.HEATMAP_COLUMNS:
    out.savefig(plots.metadata_heatmap(df, c, top=heatmap_top, label=LABEL), f"pipeline_heatmap_{c}")
heat = pipeline.heatmap_table(df, top=heatmap_top)
io.atomic_write_text(out.results("pipeline_fig4_heatmaps.csv"), heat.assign(data=LABEL).to_csv(index=False))
# each profile's kind (its most common workload and task name) against the authors' 26 profiles' 10 kinds
kinds = pipeline.profile_kinds(df)
print(f"{LABEL} profile kinds: {kinds['matched']} of the authors' {len(kinds['authors'])}; ours {kinds['kinds']}; "
      f"missing {kinds['missing']}; not among the authors' {kinds['extra']}")
stds.pivot(index="profile", columns="feature", values="std")[list(FEATURES)].round(3)

# %% [markdown]
# ## Per-profile silhouettes of the chosen run
#
# The paper discusses the silhouette profile by profile (its "HDBSCAN_silh_results_box" figure): large
# profiles 8 and 9 fit well, 5, 6 and 11 best, profile 10 has many badly fitted points. Here the same
# per-profile means for our chosen HDBSCAN run (`scoring.per_profile_silhouettes`: `silhouette_samples`
# with the outliers as one more group, as the authors); the size-weighted mean over the profiles is the
# run's `avg_silhouette`. Profile numbers are arbitrary cluster ids, not the paper's.

# %%
prof_sil = scoring.per_profile_silhouettes(grid.transform(X, run["transform"]), df.profile.to_numpy(), run.metric)
io.atomic_write_text(out.results("pipeline_profile_silhouettes.csv"), prof_sil.assign(data=LABEL).to_csv(index=False))
clustered_sil = prof_sil[prof_sil.profile >= 0]
weighted = float((clustered_sil.silhouette * clustered_sil.rows).sum() / clustered_sil.rows.sum())
print(f"{LABEL}: size-weighted mean over profiles {weighted:.4f}; the run's avg_silhouette {run.avg_silhouette:.4f}")
out.savefig(plots.profile_silhouettes(prof_sil, label=LABEL, overall=weighted), "pipeline_profile_silhouettes")
prof_sil.round(3)

# %% [markdown]
# ## Table V: metadata classifier (sparse one-hot → XGBoost, 80/20, `random_state=5`) and SHAP
#
# SHAP as the authors: `shap.TreeExplainer` on the XGBoost model and the sparse one-hot validation rows,
# drawn with `shap.summary_plot(..., plot_type="bar")` over all profiles (`explain`). The values are
# cross-checked on the first rows against XGBoost's `pred_contribs` and against shap's own TreeSHAP
# implementation (largest absolute differences printed).
#
# Which rows: all validation rows (`shap_sample = 0`), or a uniform random sample of `shap_sample`
# rows drawn from `default_rng([seed, 6])` (`explain.shap_rows`; plain, not stratified). The authors
# explained `X_test_csr[:10000]`, the first 10,000 of their 15,080 shuffled test rows, i.e. such a
# sample; the `paper` profile does the same. `shap_method = "xgboost"` computes the same values with
# XGBoost's TreeSHAP on a copy of the booster reduced to the features its trees split on (at the
# paper's scale `shap.TreeExplainer` takes about 0.2 s a row on 2 cores).

# %%
with pipeline.timed(timings, "train_s"):
    clf, rep, val = pipeline.train_and_report(df, n_jobs=grid_n_jobs)
io.atomic_write_text(out.results("pipeline_table5.csv"), rep.assign(data=LABEL).to_csv(index=False))
acc = pipeline.report_accuracy(rep)
print(f"{LABEL}: {int((df.profile >= 0).sum())} clustered rows, {metadata.authors_one_hot_width(sample)['total']} one-hot "
      f"columns as the authors' encoder (fitted on the whole sample; ours on the training split: "
      f"{len(clf.feature_names_)}), accuracy {acc:.4f}")
print("paper:", paper_values("polaris", "table5."))
with pipeline.timed(timings, "shap_s"):
    shap_val = explain.shap_rows(val, shap_sample, np.random.default_rng([seed, 6]))
    shap_abs = explain.mean_abs_shap(clf, shap_val, chunk_size=1000, method=shap_method)
why = ("`shap_sample = 0`: all of them" if shap_sample == 0 else
       f"`shap_sample = {shap_sample}` is at least the validation set: all of them" if len(shap_val) == len(val) else
       f"`shap_sample = {shap_sample}`: a uniform random sample from `default_rng([seed, 6])`, as the authors "
       "explained 10,000 of their 15,080 shuffled test rows")
how = "`shap.TreeExplainer`" if shap_method == "shap" else "XGBoost's TreeSHAP on the split features"
print(f"SHAP rows: {len(shap_val)} of {len(val)} validation rows, method {shap_method}, {timings['shap_s']:.1f} s")
display(Markdown(f"SHAP ({how}) explains **{len(shap_val):,} of the {len(val):,} validation rows** ({why})."))
with pipeline.timed(timings, "shap_check_s"):
    shap_check = explain.cross_check(clf, val, rows=shap_check_rows)
print("SHAP cross-check (max |difference|):", shap_check)
io.atomic_write_text(out.results("pipeline_shap_top20.csv"), pipeline.shap_top(shap_abs, 20).to_csv())
out.savefig(explain.summary_figure(shap_abs, label=LABEL), "pipeline_shap_summary")
rep

# %% [markdown]
# ## Figure 5: duration of unseen jobs from the profile mean
#
# The paper says the error "is below the 5 %" for 80 % of the samples and below 20 % for 90 % (the
# stars on Figure 5a, read from `reference/polaris.yaml`); the authors' code computes `|ŷ−y|/y`
# **without** ×100 and marks the threshold **5.0**, i.e. 500 %. Both readings are shown.
#
# **Which rows are test rows.** The paper draws them "making sure they are not part of our train and
# validation set". The authors' encoder, fitted on their whole sample, stored 3,591 values for their
# 999 test rows' five metadata columns, 3.6 of 5 per row. A row drawn from all rows outside the
# sample nearly always belongs to a job the sample holds (a job with many rows is almost surely in
# it), so its job name and group are known: about 4.9 values per row on the paper-size stand-in
# against 3.6-3.7 for rows of jobs the sample does not hold (docs/polaris.md). So the default
# (`duration_test_exclude: jobs`) draws rows of jobs with no row in the sample; `rows` is the other
# reading.

# %%
test = pipeline.unseen_jobs(info.path, sample, duration_test_jobs, seed, exclude=duration_test_exclude)
# how many of the test rows' metadata values the authors' encoder (fitted on the whole sample) knows
test_known = metadata.authors_known_values(sample, test)
print(f"test rows ({duration_test_exclude} outside the sample): metadata values known per row "
      f"{test_known['per_row']:.3f} (the authors' 999 test rows: "
      f"{paper_values('polaris', 'standin.test_known_per_row')['standin.test_known_per_row']:.3f});",
      {c: round(v, 3) for c, v in test_known.items() if c != "per_row"})
res = pipeline.duration_test(clf, test)
shares = duration.share_below(res.rel_error.to_numpy(), pipeline.FIG5_THRESHOLDS)
io.atomic_write_text(out.results("pipeline_fig5.csv"), res.assign(data=LABEL).to_csv(index=False))
fig5_paper = plots.fig5_paper_points(paper_values("polaris", "fig5."))
out.savefig(plots.figure5(res.rel_error.to_numpy(), res.predicted_profile.to_numpy(), label=LABEL, paper=fig5_paper),
            "pipeline_fig5")
print(LABEL, {f"share rel. error <= {k:g}": round(v, 4) for k, v in shares.items()},
      "dropped (duration <= 0):", res.attrs["dropped_nonpositive"])
print("paper:", paper_values("polaris", "fig5."))

# %% [markdown]
# ## Does the chosen run find planted profiles? (adjusted Rand index)
#
# On the stand-in nobody knows the true profiles, and on the real trace neither did the paper. So
# the same steps run once more on a stand-in with **known** structure: `synthetic.plant_profiles`
# plants the authors' 26 profiles as their evaluation notebook printed them (per profile: workload,
# task name and rows of the 100,001-row sample; `ps` and `worker` profiles of a workload paired
# into jobs by size rank; no feature medians were printed, so each profile's values come from one
# real row with the stand-in's usual noise); the rest of each stratum, like the authors' outliers,
# is ordinary background (label -1). At this size the paper's top job is planted too, as one more
# profile. A planted profile's jobs spread around their template row in every nonzero column, the
# plan values copied exactly elsewhere included (`planted.PLANTED_SPREAD`, 10 % in log). The
# configuration chosen above (not the grid) then runs on that stand-in's Table I sample and
# `scoring.planted_recovery` compares its clusters with the planted labels: the adjusted Rand index
# over all rows (noise as one more group) and over the rows both planted and clustered.
#
# **The check clustering must earn** (`planted.baselines`): the same scores for a *lookup* that
# does no clustering (rows grouped by the five columns the generator copies from a template row,
# groups smaller than the run's minimum cluster size called noise) and for k-means told the true
# number of planted profiles. The run passes only when its ARI over all rows beats the lookup's.
# Without the spread the lookup wins (tests/polaris/test_planted.py). Nothing in the generator is
# tuned to this result.
#
# The check needs only the chosen configuration, so it has been running in a second process since
# the Figure 4 cell, beside the classifier and Figure 5 (`pipeline.planted_recovery_in_background`;
# the same result as running it here): this cell waits for it.

# %%
if trace_dir or not planted:
    skip = "a real trace has no planted profiles" if trace_dir else "planted is empty"
    planted_rec = {"data": LABEL, "planted": planted, "skipped": skip}
    print("skipped:", skip)
else:
    with pipeline.timed(timings, "planted_wait_s"):  # started in the Figure 4 cell, in a second process
        planted_rec, planted_df = planted_running.result()
io.atomic_write_text(out.results("pipeline_planted.csv"), pd.DataFrame([planted_rec]).to_csv(index=False))
if "skipped" not in planted_rec:
    r = planted_rec
    display(Markdown(f"""
On a {r["data"]} stand-in of {r["n_jobs"]:,} jobs with **{r["planted_profiles"]} planted profiles** in its
{r["rows"]:,}-row sample ({r["planted_noise_share"]:.1%} of the rows planted background), the chosen run
({r["transform"]}, {r["metric"]}, min cluster size {r["min_cluster_size"]}) finds **{r["found_profiles"]} profiles**
and calls {r["found_noise_share"]:.1%} of the rows noise ({r["planted_rows_found_noise_share"]:.1%} of the
planted-profile rows). Adjusted Rand index against the planted labels: **{r["ari"]:.3f}** over all rows (noise
as one more group) and **{r["ari_non_noise"]:.3f}** over the {r["rows_non_noise"]:,} rows both planted and
clustered (1 = the planted partition exactly, 0 = chance).

| method | ARI, all rows | ARI, planted and kept rows |
|---|---|---|
| chosen run (HDBSCAN) | {r["ari"]:.3f} | {r["ari_non_noise"]:.3f} |
| lookup on the 5 exactly copied columns ({r["lookup_groups"]} groups, {r["lookup_planted_rows_kept"]:.1%} of planted rows kept) | {r["lookup_ari"]:.3f} | {r["lookup_ari_non_noise"]:.3f} |
| k-means, k = {r["kmeans_k"]} (true) | {r["kmeans_ari"]:.3f} | {r["kmeans_ari_non_noise"]:.3f} |

The chosen run {"**beats**" if r["passes"] else "does **not** beat"} the lookup (ARI over all rows
{r["margin_ari"]:+.3f}); against k-means with the true k: {r["ari"] - r["kmeans_ari"]:+.3f}.
"""))
pd.DataFrame([planted_rec]).T

# %%
realism_tested = realism_table[realism_table.workload != "all"] if realism_table is not None else None
summary = {"data": LABEL, "join": join, "joined_rows": info.rows, "sample_rows": int(len(sample)),
           "hopkins_mean": float(hp.hopkins.mean()),
           "table2": {k: {m: float(v) for m, v in r.items()} for k, r in t2.iterrows()},
           "best_hdbscan": pipeline.run_record(run),
           "table5_accuracy": acc,
           # the authors fit their encoder on the whole sample (noise included), then encode the clustered rows
           "one_hot_columns": metadata.authors_one_hot_width(sample)["total"],
           "one_hot_columns_train": int(len(clf.feature_names_)),  # our classifier's, fitted on its training split
           "clustered_rows": int((df.profile >= 0).sum()), "n_profiles": int(df.loc[df.profile >= 0, "profile"].nunique()),
           "profile_kinds": kinds,
           "noise_share": float((df.profile < 0).mean()),
           "shap_paper_features": pipeline.paper_shap_features(pipeline.shap_top(shap_abs, 20)),
           "planted": {k: planted_rec[k] for k in pipeline.PLANTED_SUMMARY_KEYS if k in planted_rec},
           "realism_auc_max": None if realism_tested is None else float(realism_tested.auc.max()),
           "realism_auc_min": None if realism_tested is None else float(realism_tested.auc.min()),
           "realism_auc_cat_max": None if realism_tested is None else float(realism_tested.auc_cat.max()),
           "realism_coverage_min": None if realism_tested is None else float(realism_tested.coverage.min()),
           "shap_check": shap_check,
           "fig5_share_le_0_05": shares[0.05], "fig5_share_le_5": shares[5.0],
           "test_exclude": duration_test_exclude, "test_known_values": test_known}
io.atomic_write_json(out.results("pipeline_summary.json"), summary)
# the steps' wall seconds change from run to run: kept apart, under results/polaris/timings/
io.atomic_write_json(out.timings("pipeline_summary.json"), {"data": LABEL, "timings_s": timings})
summary

# %% [markdown]
# ## Paper vs ours
#
# The rows of `schedlab.reference.paper_vs_ours("polaris", ...)` this notebook's files feed, with the signed
# difference ours − paper, then a summary with Table IV's silhouettes. With the default
# (synthetic) trace every number below is a **SYNTHETIC stand-in's**: it shows the method running
# end to end, not the paper's values (those on real data are in `polaris/real_panel`).

# %%
cmp = reference.paper_vs_ours("polaris", ["hopkins.synthetic", "table2.", "table5.", "fig5.", "standin."], out.root)
cmp[["id", "paper", "ours", "diff", "match"]].assign(data=LABEL).style.format(
    "{:.4g}", subset=["paper", "ours", "diff"])

# %%
by_id = cmp.set_index("id")
t2_rows = cmp[cmp.id.str.startswith("table2.")]
t2_same_sign = int((np.sign(t2_rows.ours) == np.sign(t2_rows.paper)).sum())
fig5_rows = [(thr, share, shares[thr]) for thr, share, _ in fig5_paper]
sc_ours = t4.set_index(["algorithm", "stat"]).loc["hdbscan", "avg_silhouette"]  # Table IV's SC column, our grid
sc_paper = {stat: paper_values("polaris", "table4.hdbscan.")[f"table4.hdbscan.{stat}.avg_silhouette"]
            for stat in ("mean", "min", "max")}
stand_in = ("a **SYNTHETIC stand-in** (not the paper's trace: these numbers show the method at work and are not "
            "expected to match)" if LABEL == "SYNTHETIC" else "the **REAL** trace")
realism_text = ("not measured" if summary["realism_auc_max"] is None else
                f"numeric AUC {summary['realism_auc_max']:.2f} (goal <= 0.7), categorical AUC "
                f"{summary['realism_auc_cat_max']:.2f} (goal <= 0.65), coverage {summary['realism_coverage_min']:.2f} "
                "(goal >= 0.95)")
Markdown(f"""
All numbers here come from {stand_in}, {info.rows:,} joined rows, a {len(sample):,}-row sample (paper: 100,001).

* **Hopkins**: {by_id.loc["hopkins.synthetic", "ours"]:.4f} vs the paper's {by_id.loc["hopkins.synthetic", "paper"]:.4f}
  ({by_id.loc["hopkins.synthetic", "diff"]:+.4f}); below 0.3 means clusterable.
* **Table II**: ours − paper from {t2_rows["diff"].min():+.2f} to {t2_rows["diff"].max():+.2f}
  over the {len(t2_rows)} cells; the sign agrees in {t2_same_sign} of {len(t2_rows)}.
* **Tables III/IV**: the best HDBSCAN run ({run['transform']}, {run.metric}, min cluster size {run.min_cluster_size})
  finds {int(run.n_clusters)} profiles and {int(run.n_outliers):,} outliers ({summary["noise_share"]:.1%} noise vs the
  paper's {by_id.loc["standin.noise_share", "paper"]:.1%}), ACQUIRES {run.scores_v1:.3f} (authors' best on real data
  {paper_grid["grid.hdbscan.best.acquires"]:.3f}, {run.scores_v1 - paper_grid["grid.hdbscan.best.acquires"]:+.3f}).
  The run is *chosen* by ACQUIRES, whose cluster-count term peaks at {scoring.OPTIMAL_N_CLUSTERS} clusters (the
  authors' own count): a profile count near {scoring.OPTIMAL_N_CLUSTERS} is where the score pulls the choice,
  not a count the data show.
  Table IV's mean silhouette over our HDBSCAN runs {sc_ours["mean"]:.2f} vs the paper's {sc_paper["mean"]:.2f}
  ({sc_ours["mean"] - sc_paper["mean"]:+.2f}; range ours {sc_ours["min"]:.2f} to {sc_ours["max"]:.2f}, paper
  {sc_paper["min"]:.2f} to {sc_paper["max"]:.2f}).
* **Table V**: accuracy {acc:.4f} vs the paper's {by_id.loc["table5.accuracy", "paper"]:.4f}
  ({acc - by_id.loc["table5.accuracy", "paper"]:+.4f}) on {int((df.profile >= 0).sum()):,} clustered rows (paper
  {by_id.loc["table5.clustered_rows", "paper"]:,.0f}) and {summary["one_hot_columns"]:,} one-hot columns as the authors
  count them, an encoder fitted on the whole sample (paper {by_id.loc["table5.one_hot_columns", "paper"]:,.0f};
  {summary["one_hot_columns"] - by_id.loc["table5.one_hot_columns", "paper"]:+,.0f}; our classifier's encoder, fitted on
  its training split, has {summary["one_hot_columns_train"]:,}).
* **Stand-in realism** (held-out real rows, worst workload): {realism_text}.
* **Figure 5**: {"; ".join(f"within {thr:.0%}: ours {ours:.1%} of jobs vs the paper's {share:.0%} ({100 * (ours - share):+.1f} points)"
                             for thr, share, ours in fig5_rows)}.
""")
