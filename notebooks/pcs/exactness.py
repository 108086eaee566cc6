# %% [markdown]
# # PCS: our simulator against the authors' own per-job outputs
#
# **What this checks.** Before comparing figures, we check that our simulator *is* the authors'
# simulator: same jobs in, same per-job start, end and predicted start/end times out. The
# authors published per-job outputs of their runs (`artifact_runs/`); we re-run the same
# workloads, policies and configurations and count the jobs whose times differ by more than one
# part in a million. Zero everywhere means every figure built on our simulator rests on the
# authors' semantics, not on our reading of the paper.
#
# **What is compared (for a student).** The simulator is event-driven: jobs arrive, a policy
# divides the GPUs among the active jobs (FIFO: arrival order; SRSF/Tiresias: least remaining
# work first; AFS: GPUs to the jobs that gain most; PCS/WFQ: a guaranteed share per size class,
# FIFO inside a class; Themis: finish-time fairness with leases). At each arrival the predictor
# replays the current jobs without future arrivals; the replayed end is `JCT_pred`, and
# `Pred_err = |JCT_true − JCT_pred| / JCT_pred`. Matching *predicted* times job by job checks the
# predictor, not only the schedule.
#
# **Details.** # Trace 0e4a51, first 1001 jobs, 64 GPUs, predictions on (`artifact_runs/workload2_1001apps_and_gavel`). For each run and column: jobs whose start / end / predicted start / predicted end differ by more than 1e-6 relative. The authors' times are shifted by their wall-clock offset (first submit time, e.g. 0.000179 s). PCS-bal and PCS-pred use the configs of commit b313687 (found by re-simulation, see `artifacts.RUN_CONFIGS`).
#
# The second table applies the README's Fig. 8b recipe to the authors' workload-3 per-job files.
#
# **Themis.** The authors stored no deterministic workload-2 Themis run, but their workload-3 runs behind Fig. 8 are deterministic: `generate("gavel", 3000, authors_rng(seed), load=1.2)` regenerates that workload exactly (sizes, demands *and* submit times: their generator drew each app's demand and then its gap from the seeded numpy stream), with a 600 s lease (their runs were named `gavel-contsingle`, so the 10 s lease of `gavel` did not apply). Our Themis is checked job by job there (third table), including its predictions: in those runs the replay keeps each job's true size in `t_ideal` and has no lease ticks (`Themis.fig8_runs`). The paper's Fig. 7 and the authors' code of early 2024 predict differently (estimated remaining size, lease ticks in the replay: our default), and their current code (62a6ca3, `Themis.authors_code`) differently again (its replay starts with the pending lease tick and keeps attained + estimated size; equal to their simulator job by job, `tests/pcs/test_authors_every_policy.py`), see the Fig. 7 section below.

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run pcs/exactness [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section pcs.exactness (with the pcs.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/pcs/exactness/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("pcs/exactness", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

from IPython.display import Markdown, display

from schedlab import data, io
from schedlab.pcs import experiments as X, load_trace, make_policy, metrics, plots, simulate
from schedlab.pcs.artifacts import load_run, run_config, trace_0e4a51
from schedlab.reference import paper_values, paper_vs_ours, verdict_counts

out = Outputs(output_root, "pcs/exactness")

# %%
ex = X.exactness_table(gpus)  # one simulation per authors' run, on all cores (schedlab.parallel)
io.atomic_write_text(out.results("exactness.csv"), ex.to_csv(index=False))
ex.pivot(index="run", columns="column", values="jobs_off")

# %%
f8 = metrics.fig8_aggregate(X.authors_w3_runs(themis_seeds))
io.atomic_write_text(out.results("fig8_authors_recipe.csv"), f8.to_csv(index=False))
f8

# %%
th = X.themis_exactness_table(themis_seeds, gpus)
io.atomic_write_text(out.results("themis_exactness.csv"), th.to_csv(index=False))
th.pivot(index="run", columns="column", values="jobs_off")

# %% [markdown]
# **Themis on workload-2 (Fig. 7, whole traces).** The main schedule reproduces the paper's normalised avg JCT only when `rho` values time through the job's speedup table (`valuation="speedup"`, our default): 0e4a51 1.324 as printed (also b436b2 1.552, 6214e9 1.341, 6c71a0 1.498, 2869ce 1.652; ee9e8c gives 1.897 vs 1.898). The authors' public code (2024, up to 62a6ca3) divides by the GPU count (`valuation="linear"`): 1.312 on 0e4a51.
#
# Predictions: the paper's Themis Pred_err on **2869ce** (every arrival predicted, 956 jobs) is reproduced by our default replay (estimated remaining size in `t_ideal`, lease ticks inside the replay): avg 33.820 %, p99 122.788 % (paper 33.82, 122.788). The same replay with the linear valuation (`Themis.output_2024_05_07`) equals the authors' per-job Themis output of 2024-05-07 on ee9e8c (`new_data/THEMIS_ee9e8c_result.csv` of their repository, all 5452 jobs: start, end, predicted start and end; an optional input, see `benchmarks/results/pcs_themis_2024_ee9e8c.txt`). On **0e4a51** no variant reproduces the paper's avg Pred_err (default 48.363 % vs 47.967 %; p99 212.352 % vs 212.425 %) although the JCTs match; we could not find why (not a random subset of predicted arrivals: with 2,465 jobs the authors' rule `min(5000/N, 1)` predicts every one; the current code's pending-tick replay gives 30.837 % / 212.106 %).

# %%
tv = X.themis_variants_fig7({t: load_trace(data.require(f"pcs/workload2_philly_traces/trace_{t}.csv.gz"))
                             for t in ["0e4a51", "2869ce"]}, gpus)
paper = paper_values("pcs", "fig7.")  # reference/pcs.yaml
for col, metric in [("paper_norm_avg_jct", "norm_avg_jct"), ("paper_avg_pred_error", "avg_pred_error_pct"),
                    ("paper_p99_pred_error", "p99_pred_error_pct")]:
    tv[col] = tv.trace.map(lambda t: paper[f"fig7.{t}.Themis.{metric}"])
io.atomic_write_text(out.results("themis_variants_fig7.csv"), tv.to_csv(index=False))
tv

# %%
w = trace_0e4a51(1001)
ours = simulate(w, make_policy("PCS", run_config("PCS_jct")), gpus, predict=True)
theirs = load_run("PCS_jct")
fig = plots.prediction_agreement(theirs, ours, "PCS-JCT, trace 0e4a51, first 1001 jobs")
out.savefig(fig, "pcs_jct_agreement")

# %% [markdown]
# ## Paper vs ours
#
# The README's Fig. 8b recipe on the authors' own per-job files against the paper's plotted
# points (`fig8b.authors_files.*`), then the summary of the job-by-job checks.

# %%
cmp_ex = paper_vs_ours("pcs", ["fig8b.authors_files."], out.root)
display(cmp_ex.drop(columns="quantity").round(3))
counts = verdict_counts(cmp_ex)
th0 = tv[tv.variant.str.startswith("default")].set_index("trace")
Markdown(f"""
* **Our simulator vs the authors' per-job outputs:** {int(ex.jobs_off.sum())} job-times off by more than 1e-6 relative
  over {ex.run.nunique()} runs × {ex.column.nunique()} columns × {int(ex.jobs.iloc[0])} jobs (largest relative difference
  {ex.max_rel_diff.max():.1e}); Themis on workload-3: {int(th.jobs_off.sum())} off over {th.run.nunique()} runs.
* **Fig. 8b recipe on the authors' files:** {counts['yes']} of {len(cmp_ex)} numbers match the paper's plotted points within tolerance
  (ours − paper {plots.span(cmp_ex['diff'], '+.2g')}); {counts['no']} differ.
* **Themis, Fig. 7 (default variant):** normalised avg JCT ours − paper
  {plots.span(th0.norm_avg_jct - th0.paper_norm_avg_jct, '+.4f')}; avg Pred_err ours − paper
  {', '.join(f'{t} {th0.avg_pred_error[t] - th0.paper_avg_pred_error[t]:+.3f}' for t in th0.index)} points.
""")
