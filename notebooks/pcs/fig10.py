# %% [markdown]
# # PCS Fig. 10a/b: job-size estimation error
#
# **What this reproduces.** The paper's Fig. 10a/b (§5.4, "Error in job size estimation"):
# PCS needs job sizes to put jobs in classes and to predict; what if the sizes it is told are
# wrong? Paper: the avg Pred_err of PCS grows with the size error like FIFO's, and PCS's avg JCT
# stays "within 1.05× of AFS" (AFS without error).
#
# **How it works.** PCS is weighted fair queueing: jobs go to a few *classes* by size, each class
# gets a guaranteed share of the GPUs (its weight) and runs its jobs FIFO. A size error of p %
# means the scheduler sees each job's size multiplied by a factor drawn from U(1 − p, 1 + p). The
# prediction (a replay of the cluster with the *estimated* sizes) is then wrong even without
# later arrivals; FIFO, which never preempts, shows this error alone. PCS also suffers when a job
# lands in the wrong class, which matters little for JCT "as long as the job is mapped to the
# correct class".
#
# **Technical notes.** # PCS (PCS-JCT config) and FIFO avg Pred_err, and PCS avg JCT against AFS without error, for a size error of p % (each job's size seen as `size*U(1-p,1+p)`, drawn once at arrival from a seeded generator; the authors' draw was unseeded). Default: trace 0e4a51, first 1001 jobs.
#
# **This is our own sensitivity run, not a reproduction:** the workload behind the paper's Fig. 10 is not identified (the authors' `fig10_error_analysis_*.txt` summaries name no trace, and no config or seed reproduces them), and their error draws were unseeded. Compare shapes, not values.

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run pcs/fig10 [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section pcs.fig10 (with the pcs.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/pcs/fig10/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("pcs/fig10", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import pandas as pd
from IPython.display import Markdown, display

from schedlab import io
from schedlab.pcs import metrics, experiments as X, plots
from schedlab.reference import paper_values, paper_vs_ours
from schedlab.pcs.artifacts import trace_0e4a51

out = Outputs(output_root, "pcs/fig10")

# %%
w = trace_0e4a51(num_jobs)
pols = X.policy_set(["PCS-JCT", "FIFO", "AFS"], "0e4a51")
rows = []
for e in errors:
    for lab in (["PCS-JCT", "FIFO"] + (["AFS"] if e == 0 else [])):
        df = X.run_many(w, {lab: pols[lab]}, gpus, p_error=e or None, seed=seed)[lab]
        s = metrics.summary(df)
        rows.append({"p_error": e, "policy": lab, **s,
                     "avg_signed_pred_error": float(metrics.pred_error_signed(df).mean())})
f10 = pd.DataFrame(rows)
afs = f10[(f10.policy == "AFS")].avg_jct.iloc[0]
f10["jct_vs_afs"] = f10.avg_jct / afs
# each policy against itself without size error: the ratio the authors' own Fig. 10 summaries
# keep within 1.05 (their PCS / AFS-without-error ratio is 1.62-1.64)
own0 = f10[f10.p_error == 0].set_index("policy").avg_jct
f10["jct_vs_no_error"] = f10.avg_jct / f10.policy.map(own0)
io.atomic_write_text(out.results("fig10.csv"), f10.to_csv(index=False))
f10

# %%
paper10 = paper_values("pcs", "fig10.")  # reference/pcs.yaml
paper10a = plots.fig10a_paper_curves(paper_values("pcs", "fig10a."))  # the authors' fig10_error_analysis_*.txt
fig = plots.fig10(f10, paper10["fig10.pcs_jct_vs_afs.p_error_40"], paper10a)
out.savefig(fig, "fig10")

# %% [markdown]
# ## Paper vs ours
#
# The paper prints one number for this figure: PCS "within 1.05× of AFS" at every size error,
# asserted as an upper bound on PCS-JCT / AFS-without-error (`fig10.pcs_jct_vs_afs.*`). The
# authors' own Fig. 10 summaries do not give that ratio either (their PCS / AFS is 1.62-1.64);
# they keep PCS within 1.05× of *PCS without error* (0.996-1.013), asserted too as our reading
# (`fig10.pcs_jct_vs_no_error.*`). The authors' Fig. 10a summaries (`fig10a.*`: avg Pred_err of
# AFS, FIFO and PCS at each size error) are shown next to ours; their workload is not
# identified, so that comparison is of shapes.

# %%
cmp10 = paper_vs_ours("pcs", ["fig10."], out.root)
display(cmp10.drop(columns="quantity").round(3))
cmp10a = paper_vs_ours("pcs", ["fig10a."], out.root)
display(cmp10a.drop(columns="quantity").round(3))
pcs, fifo = f10[f10.policy == "PCS-JCT"].set_index("p_error"), f10[f10.policy == "FIFO"].set_index("p_error")
lo, hi = min(errors), max(errors)
trend = lambda d: "grows" if d[hi] > d[lo] else "does not grow"  # noqa: E731
Markdown(f"""
* **Avg Pred_err vs size error** (paper: PCS follows FIFO's trend): PCS-JCT {trend(pcs.avg_pred_error)}, from {pcs.avg_pred_error[lo]:.1f} % to
  {pcs.avg_pred_error[hi]:.1f} % ({pcs.avg_pred_error[hi] - pcs.avg_pred_error[lo]:+.1f} points), FIFO from
  {fifo.avg_pred_error[lo]:.1f} % to {fifo.avg_pred_error[hi]:.1f} % ({fifo.avg_pred_error[hi] - fifo.avg_pred_error[lo]:+.1f}
  points; it {trend(fifo.avg_pred_error)}) as p goes from {lo} % to {hi} %. The authors' run (its own workload):
  PCS {paper10a['PCS-JCT'][lo]:.1f} % to {paper10a['PCS-JCT'][hi]:.1f} %, FIFO {paper10a['FIFO'][lo]:.1f} % to
  {paper10a['FIFO'][hi]:.1f} %.
* **Avg JCT:** PCS-JCT / AFS stays between {pcs.jct_vs_afs.min():.3f}× and {pcs.jct_vs_afs.max():.3f}× over all
  errors (spread {pcs.jct_vs_afs.max() - pcs.jct_vs_afs.min():.3f}: the paper's "limited impact on performance"
  is about this spread); our level is {pcs.jct_vs_afs[hi]:.2f}× against the paper's {paper10['fig10.pcs_jct_vs_afs.p_error_40']:g}×
  ({pcs.jct_vs_afs[hi] - paper10['fig10.pcs_jct_vs_afs.p_error_40']:+.2f}): a different trace and configuration (our PCS-JCT
  is the 0e4a51 Fig. 7 configuration on the first {num_jobs} jobs). Against itself without error PCS-JCT stays between
  {pcs.jct_vs_no_error.min():.3f}× and {pcs.jct_vs_no_error.max():.3f}× (the authors' summaries: 0.996× to 1.013×).
""")
