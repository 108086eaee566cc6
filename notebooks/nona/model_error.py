# %% [markdown]
# # Nona: the optimiser's predicted JCT vs the simulated JCT
#
# The paper never shows how well its queueing model (section III-C: PK formula for the link,
# compute as `p/nu` with no server queueing) predicts the JCTs its simulator measures. For each
# load we solve the optimiser, run Nona with its tables in the simulator, and put the
# optimiser's `predicted_jct_s` per class next to the simulated mean JCT per class.

# %% tags=["parameters"]
# Parameters (papermill): the default profile of params.yaml's nona.model_error, what the pipeline runs.
# output_root empty = interactive run, writes to data/scratch/nona/model_error/.
output_root = ""
profile = "default"  # "teaching": 30 s windows; "paper": the paper's scale (hours); see params.yaml
loads = [0.1, 0.3, 0.5, 0.7, 0.9]
bandwidth_gbps = 10.0
models = ["gpt2", "densenet121", "vgg16", "alexnet", "resnet18"]
nona_tables = "results/nona/optimiser/load_{load:g}.json"  # the optimiser stage's JSON per point; None: solve here
optimiser_method = "global"  # used when tables are solved here
workload = {}  # extra build_workload arguments (query_scale, per_sample, comm_load, background_ratio)
servers = 80
duration = 120.0  # measured window (s), +10% warm-up
seed = 0

# %%
from schedlab.notebooks import Outputs, apply_profile
if profile != "default":  # a profile chosen in JupyterLab: its values from params.yaml replace the above
    apply_profile(globals(), "nona/model_error", profile)

import json

import pandas as pd
import matplotlib.pyplot as plt

from schedlab import io, paths
from schedlab.nona import experiments

out = Outputs(output_root, "nona/model_error")
setup = experiments.FigureSweep.from_params(globals(), tables_dir=out.results("tables/model_error"), schemes=["nona"])
print(f"profile {profile}: {servers} servers, window {duration:g} s (+10% warm-up)")

# %%
rows, _ = setup.run([{"load": x, "bandwidth_gbps": bandwidth_gbps} for x in loads])
recs = []
for _, r in rows.iterrows():
    doc = json.loads((paths.ROOT / r.tables).read_text())  # the tables Nona loaded at this point
    for name, c in doc["classes"].items():
        recs.append({"load": r.load, "job_class": name, "predicted_jct_s": c["predicted_jct_s"],
                     "simulated_jct_s": r.get(f"mean_jct_s.{name}", float("nan")),
                     "predicted_link_load": doc["link_load"], "simulated_link_load": r.link_offered_load})
err = pd.DataFrame(recs)
err["relative_error"] = err.predicted_jct_s / err.simulated_jct_s - 1
io.atomic_write_text(out.results("model_error.csv"), err.to_csv(index=False))
err.pivot(index="job_class", columns="load", values="relative_error").round(3)

# %%
classes = list(dict.fromkeys(err.job_class))
fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
for i, c in enumerate(classes):
    g = err[err.job_class == c]
    axes[0].plot(g.load, g.simulated_jct_s, color=f"C{i}", marker="o", label=f"{c} simulated")
    axes[0].plot(g.load, g.predicted_jct_s, color=f"C{i}", ls="--", marker="x", label=f"{c} predicted")
    axes[1].plot(g.load, g.relative_error, color=f"C{i}", marker="o", label=c)
axes[0].set_yscale("log"); axes[0].set_xlabel("compute load"); axes[0].set_ylabel("mean JCT (s)")
axes[0].legend(fontsize=7, ncol=2); axes[0].grid(True, which="both", alpha=0.3)
axes[1].axhline(0, color="k", lw=0.8); axes[1].set_xlabel("compute load"); axes[1].set_ylabel("predicted / simulated - 1")
axes[1].grid(True, alpha=0.3); axes[1].legend(fontsize=7)
fig.suptitle(f"Nona's model vs the simulator ({bandwidth_gbps:g} Gbps, profile {profile})")
for ext in ("png", "pdf"):
    io.savefig(fig, out.figures(f"model_error.{ext}"), dpi=150)
plt.show()

# %% [markdown]
# The model has no server queue (a task takes `p/nu` wherever it lands), while the simulator's
# servers are FIFO queues at the given compute load; so the model under-predicts more as the load
# grows, most for the longest jobs. Background communication jobs' predictions include the PK
# wait of the link, which the simulator reproduces (see the M/D/1 test).
