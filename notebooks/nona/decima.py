# %% [markdown]
# # Nona baseline: Decima (public TPC-H-trained weights)
#
# **What this sets up, in plain words.** The Nona paper's strongest-sounding baseline is Decima,
# a scheduler that learned its policy by reinforcement learning; the paper finds Nona's jobs
# finish two orders of magnitude sooner than Decima's (Figs. 3-5). Decima never sees the
# network, so it spreads tasks over servers without counting the data that then crosses the
# link. This notebook checks our re-implementation of Decima's network against the published
# weights and runs it in our simulator next to simpler schedulers; the figure notebooks then
# put it next to Nona.
#
# Nona (section IV-A, `../shared/papers/nona.txt`) compares against Decima, "a DNN model trained on
# SQL queries provided by the authors". That checkpoint is not public. We use the closest public
# artefact: spark-sched-sim's Decima policy trained (PPO) on TPC-H SQL DAGs
# (`../shared/data/decima/`, MIT, © 2023 Arkadiy Gertsman), evaluated by our own NumPy
# implementation (`schedlab.nona.decima`). Every Decima number here is labelled
# **Decima (public TPC-H-trained weights)**.
#
# This notebook (1) re-checks the NumPy forward pass against the PyTorch reference activations
# stored by `tools/make_decima_fixture.py`, (2) shows what Decima sees of a Nona job, and
# (3) runs Decima in the Nona simulator next to Spark's fair scheduler and Random on the Nona
# workload (CI-size by default). The retrained variant (the same network trained in our simulator)
# is `decima_train.ipynb`. Decima runs through the fast plug-in (`DecimaScheduler`: per-job cached
# embeddings, compiled node encoder; the same decisions as the full forward pass at every decision,
# `ReferenceDecimaScheduler`, tested in `tests/nona/test_decima_speed.py`; speed in
# `benchmarks/bench_decima.py`).

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run nona/decima [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section nona.decima (with the nona.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/nona/decima/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("nona/decima", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs


import numpy as np
import pandas as pd
import matplotlib.pyplot as plt

from schedlab import io, paths, stagetimes
from schedlab.nona import experiments, profiles, workload as W
from schedlab.nona.decima import LABEL, load_weights, policy as P, features as F

out = Outputs(output_root, "nona/decima")
print("writing under", out.root)

# %% [markdown]
# ## 1. Forward pass against the PyTorch reference
#
# `tests/fixtures/decima/reference.npz` holds five seeded random observations and every activation
# (node embeddings, DAG and global summaries, stage and executor scores) computed in float64 by a
# separate PyTorch implementation loaded strictly from `model.pt`. Both message-passing variants
# are stored: `spark-sched-sim` (what the weights were trained with; default) and `exact` (the
# paper's recursion; differs when a node has children both inside and outside a generation's
# children set).

# %%
w = load_weights()
ref = dict(np.load(paths.ROOT / "tests/fixtures/decima/reference.npz"))
rows = []
for i in range(int(ref["num_observations"])):
    obs = P.DecimaObservation(x=ref[f"obs{i}/x"], edges=ref[f"obs{i}/edges"], job_ptr=ref[f"obs{i}/job_ptr"],
                              stage_mask=ref[f"obs{i}/stage_mask"], exec_caps=ref[f"obs{i}/exec_caps"],
                              num_executors=int(ref[f"obs{i}/num_executors"]))
    for variant, tag in (("spark-sched-sim", ""), ("exact", "exact/")):
        o = P.forward(w, obs, variant)
        ex = np.concatenate([P.exec_scores(w, obs, o, j) for j in range(obs.num_jobs)])
        diff = max(np.abs(o.h_node - ref[f"out{i}/{tag}h_node"]).max(), np.abs(o.h_dag - ref[f"out{i}/{tag}h_dag"]).max(),
                   np.abs(o.h_glob - ref[f"out{i}/{tag}h_glob"]).max(),
                   np.abs(o.stage_scores - ref[f"out{i}/{tag}stage_scores"]).max(), np.abs(ex - ref[f"out{i}/{tag}exec_scores"]).max())
        rows.append({"observation": i, "variant": variant, "nodes": obs.x.shape[0], "edges": obs.edges.shape[0],
                     "jobs": obs.num_jobs, "max_abs_diff": float(diff)})
check = pd.DataFrame(rows)
summary = {"parameters": w.num_parameters, "max_abs_diff": float(check.max_abs_diff.max()),
           "torch_version": str(ref["torch_version"]), "model_pt_sha256": str(ref["model_pt_sha256"])}
io.atomic_write_json(out.results("decima/forward_check.json"), summary)
print(summary)
check

# %% [markdown]
# ## 2. What Decima sees of a Nona job
#
# Tasks of the contracted DAG are Decima *stages* (one task each), servers are *executors*. The 5
# node features are spark-sched-sim's, in order: commit cap / E, source job (±1), executor supply / E,
# remaining tasks / 200, remaining tasks × task duration (ms) / 1e5. No link state, no bytes
# (network-blind, as in the paper). Below: a fresh ResNet-18 query on an idle cluster.

# %%
present = [m for m in models if profiles.graph_path(m) is not None]
missing = sorted(set(models) - set(present))
print("models:", present, "| missing inputs (skipped):", missing)
(res18,) = W.inference_classes(("resnet18",))
state = F.ClusterState((F.job_state(res18.dag, finished=(), running=()),), num_executors=servers, num_committable=servers)
obs = F.to_observation(state)
pd.DataFrame(obs.x, index=list(state.jobs[0].tasks),
             columns=["cap/E", "source", "supply/E", "remaining/200", "work_ms/1e5"]).assign(schedulable=obs.stage_mask)

# %% [markdown]
# Nona's task times are milliseconds (feature 4 ≈ 1e-4..1e-2) while TPC-H stages carry up to
# hundreds of tasks of seconds each, and Nona uses 80 servers where the policy was trained with
# 50: the policy runs out of distribution. That is inherent to using these public weights.
#
# ## 3. Decima in the Nona simulator
#
# Same arrivals for every scheme (the simulator spawns the arrival stream from `seed`). Decima
# samples its actions (as spark-sched-sim evaluates) from a Generator seeded with `seed`.

# %%
table = experiments.decima_jct(present, loads, schemes, servers=servers, bandwidth_gbps=bandwidth_gbps,
                               duration=duration, warmup=warmup, seed=seed, message_passing=message_passing)
# wall-clock times vary from run to run: kept apart from the pipeline's outputs, under results/nona/timings/
jct = stagetimes.write_timed(out, table, "decima/jct.csv", timings_filename="decima_jct.csv",
                             timing_columns=experiments.DECIMA_TIMING_COLUMNS,
                             key_columns=experiments.DECIMA_KEY_COLUMNS)
table

# %%
from schedlab.nona.plotting import SCHEME_STYLE, legend_below, readable_log_axis, scheme_label

fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for ax, col, title in ((axes[0], "mean_jct_s", "(a) all jobs"), (axes[1], "inference_mean_jct_s", "(b) inference jobs")):
    for key, g in zip(schemes, (jct[jct.scheme == (LABEL if k == "decima" else k)] for k in schemes)):
        _, color, marker = SCHEME_STYLE.get(key, (key, None, "o"))
        ax.plot(g.load, g[col], marker=marker, color=color, label=scheme_label(key))
    readable_log_axis(ax, "y")
    ax.set_xlabel("compute load (share of server time busy)")
    ax.set_ylabel("mean JCT (s, log scale)")
    ax.set_xticks(loads)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
legend_below(fig, *axes[0].get_legend_handles_labels(), ncol=3)
fig.suptitle(f"Decima (public weights) in the Nona simulator: {servers} servers, {bandwidth_gbps:g} Gbps, "
             f"{duration:g} s window")
out.savefig(fig, "decima_jct")
plt.show()
ratio = jct.pivot(index="load", columns="scheme", values="mean_jct_s")
(ratio[LABEL] / ratio["spark_fair"]).rename("Decima / Spark fair, mean JCT")

# %% [markdown]
# ## Paper vs ours
#
# The paper reports gains of **Nona over Decima** (Fig. 3a/b, Fig. 4, Fig. 5; values in
# `reference/nona.yaml`) and attributes Decima's loss to network congestion (it spreads tasks
# eagerly, blind to the link) and to starving the short background jobs. Those ratios need Nona's
# own runs (the figure notebooks); this notebook gives Decima's absolute numbers and its ratio to
# Spark fair and Random on the same arrivals. The paper's largest gains over Decima and over
# Spark, divided, give a rough idea of how much slower than Spark its Decima was (their loads
# may differ, so it is only an indication).
#
# Reasons our Decima can differ from the paper's: (i) different weights (public TPC-H-trained
# policy from spark-sched-sim, not the authors' SQL-trained TensorFlow model); (ii) the policy
# runs out of distribution (80 servers vs 50 in training; millisecond tasks with one task per
# stage); (iii) our mapping choices (one task per stage, executor head evaluated but any
# parallelism gives a one-task stage one server, most recently freed server, source job
# inferred per round) are documented in `schedlab.nona.decima.scheduler`; (iv) the default
# profile here is CI-size (short windows), not the paper's. Table III's Decima training time:
# `decima_train.ipynb`.

# %%
from IPython.display import Markdown, display
from schedlab.reference import paper_values

pv = paper_values("nona", "fig3.gain_avg.")
piv = jct.pivot(index="load", columns="scheme", values="mean_jct_s")
ours = pd.DataFrame({scheme_label(b): piv[LABEL] / piv[b] for b in ("spark_fair", "random") if b in piv})
ours.columns.name = "Decima's mean JCT / this scheme's"
display(ours.round(3))
implied = pv["fig3.gain_avg.decima"] / pv["fig3.gain_avg.spark_fair"]
display(Markdown(
    f"Forward pass: largest difference from the PyTorch reference {summary['max_abs_diff']:.2g} over "
    f"{len(check)} checks. In our simulator Decima's mean JCT is "
    + " and ".join(f"{ours[c].min():.3g}-{ours[c].max():.3g} times {c}'s" for c in ours)
    + f" over loads {min(loads):g}-{max(loads):g}. In the paper, Nona's largest gain over Decima "
    f"({pv['fig3.gain_avg.decima']:g}x) divided by its largest over Spark ({pv['fig3.gain_avg.spark_fair']:g}x) is "
    f"{implied:.3g}: Decima also slower than Spark there" + (", as here." if "Spark fair" in ours and
                                                             (ours["Spark fair"] > 1).all() else ".")))
