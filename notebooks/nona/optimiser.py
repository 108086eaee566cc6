# %% [markdown]
# # Nona's optimiser: probability tables for the simulator
#
# **What this does, in plain words.** Nona's scheduler is a lookup: for every job class and every
# group of parallel tasks it draws a placement (all on one server, or split in a given way) from
# probabilities computed offline. Those probabilities come from an optimisation problem
# (section III-C of the paper) that predicts every job's completion time, including the queueing
# wait on the shared link, and minimises the average. This notebook solves that problem for the
# paper's five-network workload at each load the simulator sweeps, and writes the tables the
# simulator loads. It also counts the decision space the paper reports in section IV-F.
#
# Solves Nona's formulation (section III-C, equations (I)-(XII), `../shared/papers/nona.txt`)
# for the five-model workload of section IV at each load the simulator sweeps, and writes one JSON
# per load (`results/nona/optimiser/load_<x>.json`, format in `lib/schedlab/nona/optimise.py::to_json`).
# The workload is `params.yaml`'s `nona.common`: its models, servers and bandwidth, and its
# `workload` mapping (the arguments of `build_workload`: how the load is read, per server or over
# the whole cluster, and the background jobs), all shown in the parameters table below. The same
# values drive the figures' simulations and `schedlab nona solve --workload pipeline` (the CLI's
# default), so the CLI reproduces these tables. The tables come from the certified `global`
# solver; `local` is solved next to it for the gap.
#
# Modelling choices (all documented in `schedlab.nona.workload` / `schedlab.nona.optimise`):
# task times are PipeDream forward times (the Input's data-loading time dropped), one query =
# one profiled minibatch (`query_scale` 1), the background link load is `comm_load` (= the load
# unless the workload sets it), a split subgraph is priced by the optimiser's default pricing
# (the dependency-aware longest path through its parts), and the formulation's typeset
# ambiguities are read as described in the module docstring.

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run nona/optimiser [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section nona.optimiser (with the nona.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/nona/optimiser/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("nona/optimiser", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import pandas as pd
from schedlab import io, stagetimes
from schedlab.nona.decision import class_space, space_size
from schedlab.nona.optimise import solve_point
from schedlab.nona.workload import inference_classes

out = Outputs(output_root, "nona/optimiser")
print("writing under", out.root)

# %% [markdown]
# ## Decision space (section IV-F)
#
# `search_space` = sum over subgraphs of |Omega_t| (all partitions of the intermediate tasks, times
# the part hosting the source, times the part hosting the sink); `distributions` = number of
# subgraphs. Our GPT-2 DAG is traced at PipeDream's module granularity (see the gpt2_dag notebook,
# which also shows the operator-level trace and the trace with the attention kept whole): in each
# transformer block the residual edge bypasses the attention half, whose q, k, v branches keep
# several intermediate tasks after contraction (ln_1 + c_attn + split, the q, k and v chains, the
# score/softmax chain, the value matmul chain), so our total is far above the paper's (the table
# below and "Paper vs ours" at the end give the numbers). The `local` solver
# does not enumerate this space densely: it works on a small active set of options and checks the
# first-order conditions over all of them (`schedlab.nona.optimise._solve_local`).

# %%
rows = []
for j in inference_classes(models):
    sp = class_space(j.name, j.dag)
    ss, nd = space_size([sp])
    rows.append({"model": j.name, "tasks": j.dag.number_of_nodes(), "subgraphs": nd, "search_space": ss,
                 "intermediate_per_subgraph": " ".join(str(len(s.intermediate)) for s in sp.subgraphs)})
space = pd.DataFrame(rows)
total = {"model": "total", "tasks": space.tasks.sum(), "subgraphs": space.subgraphs.sum(),
         "search_space": space.search_space.sum(), "intermediate_per_subgraph": ""}
space = pd.concat([space, pd.DataFrame([total])], ignore_index=True)
io.atomic_write_text(out.results("optimiser/search_space.csv"), space.to_csv(index=False))
space

# %% [markdown]
# ## Solve at every load

# %%
summary = []
for load in loads:
    res, doc = solve_point(load, bandwidth_gbps=bandwidth_gbps, servers=servers, method="global", models=models,
                           workload_kwargs=workload)
    io.atomic_write_json(out.results(f"optimiser/load_{load:g}.json"), doc)
    row = {"load": load, "objective": res.objective, "mean_jct_s": res.mean_jct_s, "link_load": res.rho,
           "phi_ms": res.phi * 1e3, "global_gap": res.gap, "lps": res.info["lps"], "global_s": res.solve_seconds}
    for m in compare_methods:
        other, _ = solve_point(load, bandwidth_gbps=bandwidth_gbps, servers=servers, method=m, models=models,
                                   workload_kwargs=workload)
        row[f"{m}_objective"] = other.objective
        row[f"{m}_s"] = other.solve_seconds
        row[f"{m}_gap_vs_global"] = other.objective - res.lower_bound
    dists = res.distributions()
    row["distributed_subgraphs"] = sum(1 - opts[0][1] for rows_ in dists.values() for _, opts in rows_)
    summary.append(row)
summary = pd.DataFrame(summary)
# wall-clock solve times vary from run to run: kept apart from the pipeline's outputs, under results/nona/timings/
stagetimes.write_timed(out, summary, "optimiser/summary.csv", timings_filename="optimiser_solve_seconds.csv",
                       timing_columns=["global_s", *(f"{m}_s" for m in compare_methods)], key_columns=["load"])
summary

# %% [markdown]
# `distributed_subgraphs` is the expected number of subgraphs (over all classes) not run on a
# single server; the sentence at the end of this notebook states, from this table, whether and
# where the optimum splits. PipeDream's training-minibatch activations are tens to hundreds of MB
# per cross edge (tens of ms at 10 Gbps), so a split pays only where a branch's compute outweighs
# its transfers and the link wait; the motivating job f (table1 notebook) shows the load-dependent
# mix of Table I, the branches notebook maps where splitting pays, and
# `notebooks/explore/nona.ipynb` lets you move the load and bandwidth yourself.
#
# ## Paper vs ours
#
# Section IV-F's decision-space size from `reference/nona.yaml`, measured from
# `optimiser/search_space.csv` (written above), and what the optimum does at each load.

# %%
from IPython.display import Markdown, display
from schedlab.reference import paper_vs_ours

comparison = paper_vs_ours("nona", ["optimiser.search_space", "optimiser.n_distributions"], out.root)
comparison = comparison[~comparison["id"].str.contains("whitelisted")]  # the gpt2_dag notebook's rows
display(comparison)
paper_space, paper_dists = (float(comparison.set_index("id").paper[k])
                            for k in ("optimiser.search_space", "optimiser.n_distributions"))
pipedream = space[~space.model.isin(["gpt2", "total"])]
gpt2 = space[space.model == "gpt2"]
text = [f"Our five models give {int(total['search_space'])} options over {int(total['subgraphs'])} distributions "
        f"(the paper: {paper_space:g} over {paper_dists:g}); the four PipeDream models alone give "
        f"{int(pipedream.search_space.sum())} over {int(pipedream.subgraphs.sum())}"
        + (f", GPT-2 the other {int(gpt2.search_space.sum())} over {int(gpt2.subgraphs.sum())}." if len(gpt2) else ".")]
split = (f"splits {summary.distributed_subgraphs.min():.3g}-{summary.distributed_subgraphs.max():.3g} subgraphs in "
         "expectation" if summary.distributed_subgraphs.max() > 0 else "keeps every subgraph on one server")
text.append(f"At loads {min(loads):g}-{max(loads):g} the optimum {split}, with link loads "
            f"{summary.link_load.min():.2f}-{summary.link_load.max():.2f}; the global solver's gap is at most "
            f"{summary.global_gap.max():.2g}.")
display(Markdown(" ".join(text)))
