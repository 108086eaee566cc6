# %% [markdown]
# # PCS Fig. 1: the toy example (1 GPU, four jobs)
#
# **What this reproduces.** The paper's motivating example (§2.1, Fig. 1): four jobs on one GPU,
# scheduled by Tiresias, Themis and FIFO. Fig. 1b summarises performance (mean JCT),
# predictability (mean Pred_err) and fairness. The point of the example: the fastest policy is
# the least predictable, the predictable one (FIFO) is the slowest and least fair.
#
# **How it works.** Each job arrives at a given time with a known size (time units on the one
# GPU). When a job arrives, the scheduler tells its user a completion time: it *replays* the
# jobs present now, assuming no one else arrives (`JCT_pred`). If a later arrival takes the
# GPU away, the job finishes later than promised: `Pred_err = (JCT_true − JCT_pred) / JCT_pred`
# in %, averaged over jobs.
#
# * **FIFO** runs jobs in arrival order and never preempts: later arrivals cannot delay an
#   earlier job, so every prediction is exact (0 %), but the short jobs J2-J4 wait behind J1.
# * **Tiresias** (shortest remaining service first) lets every shorter newcomer preempt: the
#   best mean JCT, but J1's promised finish moves back twice (the paper: 46 % Pred_err).
# * **Themis** shares the GPU by finish-time fairness in leases of 1 time unit; **LAS** (least
#   attained service) and **Max-Min** (equal shares) are two more preemptive policies we add.
#
# PCS (the next notebooks) sits between these extremes: weighted fair queueing over a few job
# classes, FIFO inside each class, so preemption is bounded.
#
# **Technical notes.** Arrivals and sizes from the authors' `fig1a.json`; every policy is simulated by our engine with predictions at each arrival. Themis uses a lease of 1 time unit in this toy (the authors use 600 s, 10 s for gavel) and the authors' current code's predictor (`Themis.authors_code`: the replay starts with the pending lease tick, as the toy's predictions do).

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run pcs/fig1 [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section pcs.fig1 (with the pcs.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/pcs/fig1/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("pcs/fig1", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import json

from IPython.display import Markdown, display

from schedlab import data, io
from schedlab.pcs import Workload, experiments as X, plots
from schedlab.reference import paper_values, paper_vs_ours, verdict_counts

out = Outputs(output_root, "pcs/fig1")

# %%
fig1a = json.loads(open(data.require("pcs/paper_figure_data/fig1a.json")).read())
arr = fig1a["arrivals"]
w = Workload.from_arrays([a["time"] for a in arr], [float(a["size"]) for a in arr], [1] * len(arr), name="toy")
runs = X.run_many(w, X.policy_set(policies, "toy"), gpus)
table = X.toy_table(runs)
io.atomic_write_text(out.results("fig1.csv"), table.to_csv(index=False))
table

# %% [markdown]
# Peak unfairness uses our (the authors') fair finish time `size / min(G / mean contention,
# demand)`, which is not the toy's FFT definition, so it is shown, not compared.

# %%
fig = plots.fig1b(table, paper_values("pcs", "fig1."))  # paper values from reference/pcs.yaml
out.savefig(fig, "fig1b")

# %% [markdown]
# ## Paper vs ours

# %%
cmp1 = paper_vs_ours("pcs", ["fig1."], out.root)
display(cmp1.drop(columns="quantity").round(3))
counts = verdict_counts(cmp1)
by = table.set_index("policy")
ref = cmp1.set_index("id")
themis = ref.loc["fig1.themis.mean_pred_error"]
fairest = by.peak_unfairness_pct.idxmin()
Markdown(f"""
* **Compared:** {len(cmp1)} numbers: {counts['yes']} match within tolerance, {counts['no']} do not,
  {counts['not asserted']} are shown only.
* **Mean JCT** (time units): Tiresias {by.mean_jct['Tiresias']:g} (paper {ref.paper['fig1.tiresias.mean_jct']:g}),
  Themis {by.mean_jct['Themis']:g} ({ref.paper['fig1.themis.mean_jct']:g}), FIFO {by.mean_jct['FIFO']:g}
  ({ref.paper['fig1.fifo.mean_jct']:g}).
* **Mean Pred_err:** FIFO {by.mean_pred_error['FIFO']:g} %, Tiresias {by.mean_pred_error['Tiresias']:.2f} %
  (paper {ref.paper['fig1.tiresias.mean_pred_error']:g} %). Themis: ours {themis.ours:.2f} % vs the paper's {themis.paper:g} %
  (asserted, tolerance {themis.tolerance}: the paper prints whole percentages; {themis.match}), with the toy's JCTs. The toy predicts
  with the lease clock running on inside the prediction (J2 and J3 interleaved at once), as the authors'
  code does since 2024-05-31 (its replay starts with the pending lease tick): `Themis.authors_code()` here,
  J3 predicted to end at {runs['Themis'].estimated_end_time.iloc[2]:g} (toy: {fig1a['themis'][2]['predictions']['J3']:g}). Without the
  pending tick (the replay behind the paper's Figs. 7/8, our default `Themis`) J3 is predicted at 11 and the mean is 45.3 %.
* **Fairness:** FIFO's peak unfairness is {by.peak_unfairness_pct['FIFO']:.0f} % with our FFT (the paper's toy FFT
  gives {ref.paper['fig1.fifo.peak_unfairness']:g} %); the fairest policy here is {fairest}
  ({by.peak_unfairness_pct[fairest]:.1f} %).
""")
