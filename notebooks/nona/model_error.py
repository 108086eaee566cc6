# %% [markdown]
# # Nona: the optimiser's predicted JCT vs the simulated JCT
#
# **What this checks, in plain words.** Nona's placement decisions rest on a queueing model that
# predicts each job's completion time: compute time on a server plus, for data crossing the
# network, the link's predicted wait (Pollaczek-Khinchine formula). The paper uses the model but
# never shows how accurate it is. Here we compare its predictions with what our simulator
# measures when Nona runs, per job class and load. (No table or figure of the paper; a check of
# its section III-C model.)
#
# The paper never shows how well its queueing model (section III-C: PK formula for the link,
# compute as `p/nu` with no server queueing) predicts the JCTs its simulator measures. For each
# load we solve the optimiser, run Nona with its tables in the simulator, and put the
# optimiser's `predicted_jct_s` per class next to the simulated mean JCT per class.

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run nona/model_error [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section nona.model_error (with the nona.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/nona/model_error/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("nona/model_error", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import json

import pandas as pd
import matplotlib.pyplot as plt

from schedlab import io, paths
from schedlab.nona import experiments
from IPython.display import Markdown, display
from schedlab.nona.plotting import plot_model_error

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
fig = plot_model_error(err, title=f"Nona's queueing model against the simulator ({servers} servers, "
                                  f"{bandwidth_gbps:g} Gbps, {profile} profile)")
out.savefig(fig, "model_error")
plt.show()

# %% [markdown]
# The model has no server queue (a task takes `p/nu` wherever it lands), while the simulator's
# servers are FIFO queues at the given compute load; so the model under-predicts more as the load
# grows, most for the longest jobs. Background communication jobs' predictions include the PK
# wait of the link, which the simulator reproduces (see the M/D/1 test).


# %% [markdown]
# ## Paper vs ours
#
# The paper prints no model error, so there is no paper value to put next to ours; the table
# gives our error range per class, and the sentences read it.

# %%
by_class = err.groupby("job_class", sort=False).relative_error.agg(["min", "max"])
by_class["sign"] = ["under-predicts" if hi < 0 else "over-predicts" if lo > 0 else "both"
                    for lo, hi in zip(by_class["min"], by_class["max"])]
display(by_class.round(3))
inference = err[~err.job_class.str.startswith("background")]
lo_load, hi_load = min(loads), max(loads)
# loads where a background transfer finished inside the window (a rare class: a short window or a
# light load may finish none, and a NaN error says nothing)
comm = err[(err.job_class == "background_comm") & err.relative_error.notna()]
at = inference.groupby("load").relative_error.agg(["min", "max"])
display(Markdown(
    f"For the inference classes the model is off by {at.loc[lo_load, 'min']:+.0%} to {at.loc[lo_load, 'max']:+.0%} "
    f"at load {lo_load:g} and by {at.loc[hi_load, 'min']:+.0%} to {at.loc[hi_load, 'max']:+.0%} at load {hi_load:g}: "
    "it has no server queue, so its error grows with the load. "
    + (f"Background transfers (their wait is the PK formula's): {comm.relative_error.min():+.0%} to "
       f"{comm.relative_error.max():+.0%} over the loads, the largest error at load "
       f"{comm.loc[comm.relative_error.abs().idxmax(), 'load']:g}." if len(comm) else "")))


# %% [markdown]
# ## Does the simulator confirm the gain the model predicts?
#
# Where Nona's tables split or mix a subgraph, the model predicts that this placement beats
# keeping every subgraph on one server. Here both placements run in the simulator on the same
# arrivals (seed `i` gives both the same arrival times), for both workloads of Figs. 3-5
# (`workload`, the default; `light_workload`, background link load 5%), over loads x bandwidths,
# and for every pricing (`critical_path`, the default; `paper`, the literal (X)-(XI); and
# `critical_path_queued`, which adds the servers' M/G/1 wait per task, beyond the paper).
# `verdict` is `confirmed` / `refuted` when the paired 95% interval of the per-seed gains lies
# entirely on the predicted / the other side of zero (`branches.paired_ci`), `unresolved`
# otherwise, `no split` where the tables split nothing.

# %%
from schedlab import parallel
from schedlab.nona import branches, optimise

check = []
with parallel.executor() as ex:
    for regime, wl in (("default", workload), ("light", {**workload, **light_workload})):
        part = branches.gain_map(sign_loads, sign_bandwidths_gbps, [1.0], models=models, servers=servers,
                                 workload=wl, seeds=sign_seeds, duration=sign_duration, executor=ex,
                                 pricings=optimise.PRICINGS)
        check.append(part.drop(columns="byte_scale").assign(workload=regime))
check = pd.concat(check, ignore_index=True)
io.atomic_write_text(out.results("model_error_sign.csv"), check.to_csv(index=False))
sign = branches.summary(check.assign(pricing=check.workload + " / " + check.pricing))
io.atomic_write_json(out.results("model_error_sign.json"), sign)
shown = check[check.split_subgraphs > 0][["workload", "pricing", "load", "bandwidth_gbps", "split_subgraphs",
                                          "mixed_subgraphs", "pred_gain", "sim_gain", "sim_gain_min", "sim_gain_max",
                                          "verdict"]]
shown.assign(**{c: (100 * shown[c]).round(2) for c in ("pred_gain", "sim_gain", "sim_gain_min", "sim_gain_max")})

# %%
def sentence(key: str, s: dict) -> str:
    if not s["split"]:
        return f"**{key}**: the tables split nothing at any of {s['points']} points (nothing to confirm)."
    lo, hi = s["sim_gain_pct"]
    plo, phi_ = s["pred_gain_pct"]
    return (f"**{key}**: splits at {s['split']} of {s['points']} points; predicted {plo:+.1f}% to {phi_:+.1f}%, "
            f"simulated {lo:+.1f}% to {hi:+.1f}% against keep-together; the paired 95% interval confirms the "
            f"predicted sign at {s['verdicts']['confirmed']}, refutes it at **{s['verdicts']['refuted']}**, and "
            f"leaves {s['verdicts']['unresolved']} unresolved.")

display(Markdown("\n\n".join(sentence(k, v) for k, v in sign.items())))

