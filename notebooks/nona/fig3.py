# %% [markdown]
# # Nona, Figure 3: average JCT vs system load
#
# Reproduces Fig. 3 of *Nona* (section IV-B, `../shared/papers/nona.txt`): average JCT of every
# scheme on an 80-server cluster with a 10 Gbps bottleneck link as the compute load
# `sum_j lambda_j S_j / N` varies; (a) all jobs, (b) inference jobs only. Also the **gains table**:
# Nona against each scheme (average and p99 JCT) next to the paper's numbers, and Nona/Nona*
# against the Expert.
#
# Schemes (`schedlab.nona.schedulers`): Nona solves the optimiser (`schedlab.nona.optimise`) at
# each point and loads its JSON; Nona* loads one JSON solved at 50% load and 10 Gbps; the Expert
# is a *coordinate search in this simulator* over split/together mixtures per subgraph
# (`schedlab.nona.expert`, budget `expert_budget`) instead of the paper's hand derivation; Spark
# fair is decima-sim's dynamic partition with tasks releasing servers; Decima is the Decima
# issue's scheduler in two variants, the public TPC-H-trained weights and the same network
# retrained in this simulator; both run on a shorter measured window (`decima_duration`, 4 s in
# the default profile) because the policy network is evaluated at every scheduling decision
# (see "Decima rows" below). The sweep itself is `schedlab.nona.experiments`: every (load,
# scheme) simulation is one task of `schedlab.parallel.Executor` (local processes by default,
# `SCHEDLAB_WORKERS` / `SCHEDLAB_DASK` to choose), with the same numbers as in one process.
#
# Workload (`schedlab.nona.workload.build_workload`): the PipeDream models (GPT-2 once its trace
# exists), one inference query = one profiled minibatch, background compute and communication
# jobs at 100:1, the link's background load equal to the compute load.

# %% tags=["parameters"]
# Parameters (papermill): the default profile of params.yaml's nona.fig3, what the pipeline runs.
# output_root empty = interactive run, writes to data/scratch/nona/fig3/.
output_root = ""
profile = "default"  # "teaching": 30 s windows (minutes); "paper": the paper's scale (hours); see params.yaml
loads = [0.1, 0.3, 0.5, 0.7, 0.9]
bandwidth_gbps = 10.0
models = ["gpt2", "densenet121", "vgg16", "alexnet", "resnet18"]
schemes = ["nona", "nona_star", "expert", "spark_fair", "opportunistic", "random", "decima", "decima_retrained"]
nona_tables = "results/nona/optimiser/load_{load:g}.json"  # the optimiser stage's JSON per point; None: solve here
star_tables = "results/nona/optimiser/load_0.5.json"  # Nona*'s JSON (solved at 50% load, 10 Gbps); None: solve here
optimiser_method = "global"  # used when tables are solved here
workload = {}  # extra build_workload arguments (query_scale, per_sample, comm_load, background_ratio)
sensitivity_workload = {"per_sample": True, "query_scale": 1.0}  # one-sample queries: 100x+ smaller transfers
servers = 80
duration = 120.0  # measured window (s) of every scheme but Decima, +10% warm-up
seed = 0
expert_budget = 40  # the Expert's search: simulations ...
expert_duration = 30.0  # ... of this window each
decima_duration = 4.0  # both Decima rows' measured window (s): their policy runs at every decision
decima_weights = "results/nona/decima_train/weights.npz"  # the retrained Decima (stage nona_decima_train)

# %%
from schedlab.notebooks import Outputs, apply_profile
if profile != "default":  # a profile chosen in JupyterLab: its values from params.yaml replace the above
    apply_profile(globals(), "nona/fig3", profile)

import json

import pandas as pd
import matplotlib.pyplot as plt

from schedlab import io, paths
from schedlab.nona import experiments
from schedlab.nona.plotting import SCHEME_STYLE

out = Outputs(output_root, "nona/fig3")
# the sweep's settings are this notebook's parameters (schemes, servers, windows, tables, ...)
setup = experiments.FigureSweep.from_params(globals(), tables_dir=out.results("tables/fig3"))
points = [{"load": x, "bandwidth_gbps": bandwidth_gbps} for x in loads]
paper = experiments.paper_numbers(experiments.PAPER_LAYOUT["fig3"])  # reference/nona.yaml
print(f"profile {profile}: {servers} servers, window {duration:g} s (+10% warm-up); "
      f"Decima's window {decima_duration:g} s")

# %% [markdown]
# ## The sweep

# %%
rows, _ = setup.run(points)
# wall-clock columns vary from run to run: written apart, under results/nona/timings/
kept, times = experiments.split_timings(rows)
io.atomic_write_text(out.results("fig3.csv"), kept.to_csv(index=False))
io.atomic_write_text(out.timings("fig3.csv"), times.to_csv(index=False))
print(experiments.status_note(rows) or "every scheme ran")
rows[["load", "scheme", "status", "mean_jct_s", "p99_jct_s", "inference_mean_jct_s", "link_offered_load", "jobs", "wall_s"]]

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=False)
for ax, col, title in [(axes[0], "mean_jct_s", "(a) all jobs"), (axes[1], "inference_mean_jct_s", "(b) inference jobs")]:
    for s in schemes:
        label, color, marker = SCHEME_STYLE[s]
        g = rows[(rows.scheme == s) & (rows.status == "ok")]
        if g.empty:
            ax.plot([], [], color=color, marker=marker, label=f"{label} (not run)")
            continue
        ax.plot(g.load, g[col], color=color, marker=marker, label=label)
    ax.set_yscale("log"); ax.set_xlabel("compute load"); ax.set_ylabel("average JCT (s)"); ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
axes[1].legend(fontsize=8)
fig.suptitle(f"Fig. 3: {servers} servers, {bandwidth_gbps:g} Gbps, profile {profile}")
for ext in ("png", "pdf"):
    io.savefig(fig, out.figures(f"fig3.{ext}"), dpi=150)
plt.show()

# %% [markdown]
# ## Gains table
#
# Paper (abstract and section IV-B): Nona's average JCT is up to 56x (Spark), 180x
# (Opportunistic), 202x (Random) and 350x (Decima) lower, its p99 up to 77x, 21x, 119x, 81x lower,
# and it is within 10% (Nona*: 15%) of the Expert. Ours: the largest ratio over the loads of the
# sweep (scheme / Nona), and the largest relative gap of Nona and Nona* above the Expert.

# %%
baselines = ["spark_fair", "opportunistic", "random", "decima", "decima_retrained"]
gains = {"profile": profile, "loads": list(loads),
         **experiments.max_gains(rows, "load", {"avg": "mean_jct_s", "p99": "p99_jct_s",
                                                "inference_avg": "inference_mean_jct_s"}, baselines),
         "expert_gap": experiments.expert_gap(rows, "load"), "paper": paper}
io.atomic_write_json(out.results("fig3_gains.json"), gains)

avg = experiments.ratio_table(rows, "load", "mean_jct_s")
table = []
for s in baselines:
    theirs = s.replace("_retrained", "")  # the paper has one Decima
    if s not in gains["avg"]:
        table.append({"scheme": s, "ours avg (max over loads)": None, "paper avg": paper["avg"][theirs],
                      "ours p99 (max)": None, "paper p99": paper["p99"][theirs],
                      "note": "; ".join(sorted(set(rows[rows.scheme == s].status))) or "not in schemes"})
        continue
    table.append({"scheme": s, "ours avg (max over loads)": gains["avg"][s],
                  "ours avg range": f"{avg[s].min():.3g}-{avg[s].max():.3g}", "paper avg": paper["avg"][theirs],
                  "ours / paper avg": gains["avg"][s] / paper["avg"][theirs],
                  "ours p99 (max)": gains["p99"][s], "paper p99": paper["p99"][theirs],
                  "ours / paper p99": gains["p99"][s] / paper["p99"][theirs]})
for s, gap in gains["expert_gap"].items():
    table.append({"scheme": f"{s} vs expert", "ours avg (max over loads)": gap,
                  "paper avg": paper["expert_gap"][s], "note": "relative gap above the Expert (max over loads)"})
gt = pd.DataFrame(table)
io.atomic_write_text(out.results("fig3_gains.csv"), gt.to_csv(index=False))
gt

# %% [markdown]
# ### Decima rows
#
# Two Decima rows: **Decima (public TPC-H-trained weights)** (spark-sched-sim's checkpoint, the
# stand-in for the authors' SQL-trained model, which is not public) and **Decima (retrained in our
# simulator)** (the same network trained by policy gradient on a small Nona cluster, stage
# `nona_decima_train`; see `notebooks/nona/decima_train.ipynb` for its budget, learning curve and
# held-out evaluation). Both run on a **shorter measured window** than the other schemes
# (`decima_duration`, printed at the top: default profile 4 s vs 120 s), because the policy network
# is evaluated at every scheduling decision. Their jobs pile up behind the link, so their JCT grows
# with the window: the ratios in the table above (Decima's short window / Nona's full window) are
# therefore *lower bounds* on the full-window gap, and the cell below gives the like-for-like
# ratio against Nona run on the same short window (`same_window` in the gains JSON).

# %%
# Decima against Nona on the SAME short window (same arrivals, both measured for decima_duration s)
same = setup.same_window(rows)
if same is not None:
    gains["same_window"] = same
    io.atomic_write_json(out.results("fig3_gains.json"), gains)
    print(json.dumps(same, indent=1))

# %%
# where the gaps come from: how loaded the link is under each scheme (offered load, 1 = saturated)
rows.pivot(index="load", columns="scheme", values="link_offered_load").round(2)

# %%
# What Nona's tables choose: probability of keeping each subgraph on one server ("together")
tog = []
for _, r in rows[rows.scheme.isin(["nona", "nona_star"])].iterrows():
    doc = json.loads((paths.ROOT / r.tables).read_text())
    for name, c in doc["classes"].items():
        for sg in c.get("subgraphs", []):
            p1 = sum(o["p"] for o in sg["options"] if len(o["partition"]) == 1)
            tog.append({"load": r.load, "scheme": r.scheme, "class": name, "subgraph": f"{sg['source']}->{sg['sink']}",
                        "p_together": p1})
tog = pd.DataFrame(tog)
tog.groupby(["scheme", "load", "class"]).p_together.mean().unstack("class").round(3) if len(tog) else tog

# %%
# Random's mean JCT grows with the run length when its link is overloaded (offered load >> 1)
grow = []
for d in (duration / 4, duration / 2, duration):
    r = experiments.run_point("random", load=0.5, bandwidth_gbps=bandwidth_gbps, servers=servers, duration=d,
                              seed=seed, models=models, workload_kwargs=workload)
    grow.append({"window_s": d, "random_mean_jct_s": r.summary()["mean_jct_s"], "link_offered_load": r.stats["link_offered_load"]})
pd.DataFrame(grow)

# %% [markdown]
# ## Sensitivity: one-sample queries
#
# The paper does not say how big one inference query is. The sweep above uses one profiled
# *training minibatch* per query (64-256 images), so each cut ResNet18 edge moves ~100-200 MB and
# splitting never pays. Here the same sweep with `sensitivity_workload` (default: one sample per
# query, `per_sample=True`): transfers shrink with the compute, the link is no longer hopeless for
# the oblivious baselines, and the optimiser/Expert trade-off becomes non-trivial.

# %%
sens_schemes = [s for s in schemes if s not in experiments.DECIMA_SCHEMES]  # Decima: main sweep only (its window)
sens, _ = setup.with_changes(schemes=sens_schemes, workload={**workload, **sensitivity_workload},
                             tables_dir=out.results("tables/fig3_sensitivity"), nona_tables=None,
                             star_tables=None).run(points)
kept, times = experiments.split_timings(sens)
io.atomic_write_text(out.results("fig3_sensitivity.csv"), kept.to_csv(index=False))
io.atomic_write_text(out.timings("fig3_sensitivity.csv"), times.to_csv(index=False))
fig, ax = plt.subplots(figsize=(6, 4))
for s in sens_schemes:
    label, color, marker = SCHEME_STYLE[s]
    g = sens[sens.scheme == s]
    ax.plot(g.load, g.mean_jct_s, color=color, marker=marker, label=label)
ax.set_yscale("log"); ax.set_xlabel("compute load"); ax.set_ylabel("average JCT (s)"); ax.grid(True, which="both", alpha=0.3)
ax.set_title(f"Fig. 3a with {sensitivity_workload}", fontsize=9); ax.legend(fontsize=7)
for ext in ("png", "pdf"):
    io.savefig(fig, out.figures(f"fig3_sensitivity.{ext}"), dpi=150)
plt.show()
experiments.ratio_table(sens, "load", "mean_jct_s").round(3)

# %% [markdown]
# ## Why our gains differ from the paper's
#
# Printed above: ours / paper for each ratio. Our reading of the differences (see the numbers):
#
# * **Random and Opportunistic** send profiled-minibatch activations (hundreds of MB per ResNet18
#   edge) across the link; their offered link load is far above 1 at every load, so their
#   queues grow for the whole run and their average JCT grows with the simulated duration. The
#   ratio to Nona is therefore not a property of the schemes alone but of the run length; the
#   paper does not state its run length, so its 180x/202x and our numbers need not agree.
# * **Nona** (and the Expert) keep every subgraph together at these transfer sizes (the
#   optimiser's tables put probability 1 on "all together"), so they never load the link
#   beyond the background jobs.
# * **Spark fair** parallelises whenever servers are free and pays the transfers; it loads the
#   link just above 1 (offered load ~1.1 in the table above), so its JCT is seconds rather than
#   the oblivious baselines' hundreds of seconds, and our Spark gap (default profile: 1.5x-10x) is
#   well below the paper's 32x-56x. We cannot say which of the paper's unstated details (run
#   length, Spark's executor/launch semantics, how transfers hold executors, query sizes)
#   makes its Spark that much slower; ours holds a server while the task's inputs cross the
#   link (a documented choice in `schedlab.nona.sim`).
# * **Decima** here is the public TPC-H-trained policy (not the authors' SQL-trained one) and a
#   copy retrained in this simulator on a small cluster with a few minutes of CPU (the paper's
#   Table III: 108-889 GPU hours). Both run on a 4 s window (default profile; the others 120 s)
#   and pile jobs up behind the link exactly as Random does (they never see the link), so their
#   ratio to Nona grows with the window; `same_window` gives the like-for-like ratio.
# * **Expert**: our Expert is a search in this simulator, so Nona can be compared with it
#   honestly; a negative gap would mean Nona beat the search (the search space is smaller than
#   the optimiser's). With minibatch-sized queries every scheme that keeps subgraphs together
#   ties, so the "within 10%" claim is met trivially; the sensitivity sweep above is the
#   non-trivial comparison (ratios `expert` vs `nona` in its table).
# * **Query size** is the biggest unknown: with one-sample queries (sensitivity sweep) the
#   baselines' ratios to Nona drop by orders of magnitude, and Spark can even beat Nona's
#   tail. Neither setting reproduces all of the paper's ratios at once.
