# %% [markdown]
# # PCS Fig. 1: the toy example (1 GPU, four jobs)
#
# Arrivals and sizes from the authors' `fig1a.json`; every policy is simulated by our engine with predictions at each arrival. Themis uses a lease of 1 time unit in this toy (the authors use 600 s, 10 s for gavel).

# %% tags=["parameters"]
# Parameters (papermill); output_root empty = scratch run. Values = params.yaml, default profile.
output_root = ""
profile = "default"
policies = ["FIFO", "Tiresias", "Themis", "LAS", "Max-Min"]
gpus = 1

# %%
from schedlab.notebooks import Outputs, apply_profile
if profile != "default":  # a profile chosen in JupyterLab: its values from params.yaml replace the above
    apply_profile(globals(), "pcs/fig1", profile)

import json

import matplotlib.pyplot as plt

from schedlab import data, io
from schedlab.pcs import Workload, experiments as X

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
# Paper (Fig. 1b): Tiresias mean JCT 11.25, Pred_err 46 %; FIFO 15.75, 0 %; Themis 13.5, 24 %. Peak unfairness uses our (the authors') fair finish time `size / min(G / mean contention, demand)`, which is not the toy's FFT definition, so it is shown, not compared.

# %%
fig, ax = plt.subplots(1, 2, figsize=(8, 3))
table.plot.bar(x="policy", y="mean_jct", ax=ax[0], legend=False, title="mean JCT")
table.plot.bar(x="policy", y="mean_pred_error", ax=ax[1], legend=False, title="mean Pred_err (%)")
fig.tight_layout()
io.savefig(fig, out.figures("fig1b.png"))
