# %% [markdown]
# # PCS Fig. 11: size and contention are poor predictors (workload-3)
#
# **What this reproduces.** The paper's Fig. 11 (§6, "Sophisticated prediction techniques"):
# could a smarter *predictor* fix an unpredictable *scheduler*? Two natural features are tested
# on workload-3 (Gavel jobs, load 1.2, 64 GPUs): (a) under **Tiresias** (shortest remaining
# service first), small jobs are served first, so one might predict that only big jobs are
# late; (b) under **Max-Min** (equal GPU shares), one might predict a job's time from the
# contention (number of jobs sharing the cluster) it sees at arrival. Paper: small jobs under
# Tiresias still reach a Pred_err of 200 %, long ones above 600 %; under Max-Min the average
# contention is 4× below the tail contention, so contention at arrival says little.
#
# **Reminder.** The scheduler predicts a job's completion time at its arrival by replaying the
# cluster without future arrivals; `Pred_err = |JCT_true − JCT_pred| / JCT_pred` in %. Future
# arrivals are what a predictor cannot see: they preempt (Tiresias) or dilute the share
# (Max-Min) of the jobs already there. PCS instead bounds their effect in the scheduler.
#
# **Profiles.** Default: 1000 generated apps, one seed; `num_apps: 3000` (the authors' exact
# workload-3 for that seed) is **paper profile only**: `make reproduce PROFILE=paper`.
#
# **Technical notes.** # (a) Tiresias: job size vs Pred_err. (b) Max-Min: mean contention each job saw (`num_apps_seen_diff`). Default: one seed, 1000 generated apps. With `num_apps = 3000` the workload is exactly the authors' workload-3 for that seed (see `pcs/fig8`); with 1000 apps it is a different, statistically similar one. (Workload-1, `themis1`, is not used here: seed 4567 reproduces the sizes of the authors' `themis1_5seeds` baseline files but not their submit times.)

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run pcs/fig11 [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section pcs.fig11 (with the pcs.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/pcs/fig11/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("pcs/fig11", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import pandas as pd
from IPython.display import Markdown, display

from schedlab import io
from schedlab.pcs import metrics, experiments as X, plots
from schedlab.reference import paper_values, paper_vs_ours
from schedlab.pcs.generators import authors_rng, generate

out = Outputs(output_root, "pcs/fig11")

# %%
w = generate("gavel", num_apps, authors_rng(seed), load=load, gpus=gpus)
r = X.run_many(w, X.policy_set(["Tiresias", "Max-Min"]), gpus)
t = r["Tiresias"].assign(pred_error=metrics.pred_error(r["Tiresias"]))
c = r["Max-Min"].num_apps_seen_diff
summary = pd.DataFrame([{
    "tiresias_spearman_size_vs_error": float(t[["service", "pred_error"]].corr("spearman").iloc[0, 1]),
    "tiresias_max_error_small_jobs": float(t[t.service <= t.service.median()].pred_error.max()),
    "tiresias_max_error_large_jobs": float(t[t.service > t.service.median()].pred_error.max()),
    "maxmin_mean_contention": float(c.mean()),
    "maxmin_p99_contention": metrics.percentile(c, 99),
}])
summary["maxmin_tail_over_mean"] = summary.maxmin_p99_contention / summary.maxmin_mean_contention
io.atomic_write_text(out.results("fig11.csv"), summary.to_csv(index=False))
summary.T

# %%
fig = plots.fig11(t, c, gpus=gpus)
out.savefig(fig, "fig11")

# %% [markdown]
# ## Paper vs ours
#
# The paper prints three numbers in its text, asserted as what they claim (`reference/pcs.yaml`,
# `fig11.*`): the small jobs' largest Pred_err of the order of 200 % (100-300 %), the long jobs'
# above 600 %, the tail contention 4× the mean (3.5-4.5×). "Small" = at most the median size,
# "long" = above it, "tail" = p99 (our readings: the paper defines none). The paper does not say
# how many apps Fig. 11 ran; a largest error grows with the number of jobs (docs/pcs.md has all
# three at 1000 and 3000 apps).

# %%
display(paper_vs_ours("pcs", ["fig11."], out.root).drop(columns="quantity").round(3))
p11 = paper_values("pcs", "fig11.")
s11 = summary.iloc[0]
cmp_word = lambda ours, paper: "smaller" if ours < paper else "larger"  # noqa: E731
Markdown(f"""
| quantity | paper | ours | ours − paper |
|---|---|---|---|
| Tiresias, largest Pred_err of small jobs (%) | up to {p11['fig11.tiresias.max_error_small_jobs']:g} | {s11.tiresias_max_error_small_jobs:.1f} | {s11.tiresias_max_error_small_jobs - p11['fig11.tiresias.max_error_small_jobs']:+.1f} |
| Tiresias, largest Pred_err of long jobs (%) | above {p11['fig11.tiresias.max_error_large_jobs']:g} | {s11.tiresias_max_error_large_jobs:.1f} | {s11.tiresias_max_error_large_jobs - p11['fig11.tiresias.max_error_large_jobs']:+.1f} |
| Max-Min, tail (p99) / mean contention (×) | {p11['fig11.maxmin.tail_over_mean_contention']:g} | {s11.maxmin_tail_over_mean:.2f} | {s11.maxmin_tail_over_mean - p11['fig11.maxmin.tail_over_mean_contention']:+.2f} |

* Ours ({num_apps} apps, seed {seed}): the Spearman correlation of size and Tiresias Pred_err is
  {s11.tiresias_spearman_size_vs_error:.2f}; the small half of the jobs has a largest Pred_err of
  {s11.tiresias_max_error_small_jobs:.1f} %, the long half {s11.tiresias_max_error_large_jobs:.1f} %
  ({cmp_word(s11.tiresias_max_error_small_jobs, p11['fig11.tiresias.max_error_small_jobs'])} and
  {cmp_word(s11.tiresias_max_error_large_jobs, p11['fig11.tiresias.max_error_large_jobs'])} than the paper's). So in our run
  size {'does' if abs(s11.tiresias_spearman_size_vs_error) > 0.3 else 'does not'} say something about the error
  (|Spearman| > 0.3 taken as "some"); the paper's run is not identified and ours is {num_apps} apps of one seed.
* Max-Min: mean contention {s11.maxmin_mean_contention:.1f} jobs, p99 {s11.maxmin_p99_contention:.1f}
  ({s11.maxmin_tail_over_mean:.2f}× the mean; paper {p11['fig11.maxmin.tail_over_mean_contention']:g}×).
""")
