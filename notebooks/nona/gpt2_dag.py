# %% [markdown]
# # GPT-2's DAG (Table II's missing row)
#
# **What this reproduces, in plain words.** Table II of the Nona paper lists GPT-2 among its five
# networks, with its number of operations before and after Nona's contraction. Unlike the other four, no
# public profile of GPT-2 exists, so the project traces the model itself and this notebook
# compares the traced graph (its size, its tasks before and after contraction, and the number of
# placement options it adds to Nona's optimisation) with the paper's numbers.
#
# No public PipeDream profile of GPT-2 exists, so the project traces one:
# `python -m schedlab.nona.gpt2_trace` (needs the `trace` extra: torch 2.13.0 CPU, transformers)
# wrote `data/generated/nona/gpt2/graph.txt` from Hugging Face `GPT2LMHeadModel` with the default
# config and random weights, at PipeDream's module granularity (one task per leaf-module call plus
# one per tensor function on activations between modules, captured with forward hooks and a
# `TorchFunctionMode`; module docstring). The same command also wrote two variants for comparison:
# the operator-level `torch.export` trace (`graph_operator.txt`, the previous default) and the
# module trace with `GPT2Attention` kept whole (`graph_whitelist_attention.txt`, what PipeDream's
# profiler gives when the attention is in its `module_whitelist`, which it needs because its tensor
# wrapper cannot pass through `split`/`matmul`/`softmax`). This notebook only reads those files (no
# torch), and compares them with Table II's GPT-2 row (tasks before and after contraction, size)
# and with section IV-F's search space for the five models (the paper's values:
# `reference/nona.yaml`, shown in "Paper vs ours" at the end).

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run nona/gpt2_dag [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section nona.gpt2_dag (with the nona.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/nona/gpt2_dag/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("nona/gpt2_dag", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

from collections import Counter
import pandas as pd
from schedlab import io
from schedlab.nona import profiles
from schedlab.nona.contraction import contract, bottleneck_subgraphs
from schedlab.nona.decision import omega_size
from schedlab.nona.graphs import read_graph
from schedlab import paths
from schedlab.nona.gpt2_trace import legacy_attention_buffer_bytes
from schedlab.reference import paper_values

out = Outputs(output_root, "nona/gpt2_dag")
paper = paper_values("nona")  # Table II and section IV-F (reference/nona.yaml)
g = profiles.load("gpt2")
h = contract(g, schedule)
subs = bottleneck_subgraphs(h)
row = {"model": "gpt2", "pre_tasks": g.number_of_nodes(), "paper_pre_tasks": paper["table2.gpt2.pre_tasks"],
       "post_tasks": h.number_of_nodes(), "paper_post_tasks": paper["table2.gpt2.post_tasks"],
       "size_mib": round(profiles.model_size_mib(g), 2), "paper_size_mb": paper["table2.gpt2.size_mb"],
       "size_mib_with_legacy_buffers": round(profiles.model_size_mib(g) + legacy_attention_buffer_bytes() / 2**20, 2),
       "layers": profiles.layer_count(g), "paper_layers": paper["table2.gpt2.layers"],
       "forward_ms_cpu": round(sum(d["forward_ms"] for _, d in g.nodes(data=True)), 3),
       "subgraphs": len(subs), "search_space": sum(omega_size(len(s.intermediate)) for s in subs)}
io.atomic_write_text(out.results("gpt2_dag.csv"), pd.DataFrame([row]).to_csv(index=False))
pd.DataFrame([row]).T

# %%
# the three granularities next to Table II and section IV-F (the other four models: PipeDream's own profiles)
others = [profiles.load(m) for m in profiles.MODELS if m != "gpt2"]
other_subs = [s for x in others for s in bottleneck_subgraphs(contract(x, schedule))]
other_space = sum(omega_size(len(s.intermediate)) for s in other_subs)
variants = {"module (default)": "graph.txt", "operator (torch.export)": "graph_operator.txt",
            "module, GPT2Attention whitelisted": "graph_whitelist_attention.txt"}
rows = []
for name, fname in variants.items():
    gv = read_graph(paths.GENERATED / "nona" / "gpt2" / fname)
    hv = contract(gv, schedule)
    sv = bottleneck_subgraphs(hv)
    space = sum(omega_size(len(s.intermediate)) for s in sv)
    rows.append({"granularity": name, "file": fname, "pre_tasks": gv.number_of_nodes(), "post_tasks": hv.number_of_nodes(),
                 "size_mib": round(profiles.model_size_mib(gv), 2), "gpt2_subgraphs": len(sv),
                 "intermediate_per_subgraph": str([len(s.intermediate) for s in sv]), "gpt2_search_space": space,
                 "five_model_search_space": space + other_space, "five_model_distributions": len(sv) + len(other_subs)})
rows.append({"granularity": "paper (Table II, section IV-F)", "file": "", "pre_tasks": paper["table2.gpt2.pre_tasks"],
             "post_tasks": paper["table2.gpt2.post_tasks"], "size_mib": paper["table2.gpt2.size_mb"],
             "gpt2_subgraphs": None, "intermediate_per_subgraph": "",
             "gpt2_search_space": paper["optimiser.search_space"] - other_space,
             "five_model_search_space": paper["optimiser.search_space"],
             "five_model_distributions": paper["optimiser.n_distributions"]})
variants_df = pd.DataFrame(rows)
io.atomic_write_text(out.results("gpt2_granularity.csv"), variants_df.to_csv(index=False))
variants_df

# %%
pd.Series(Counter(d["desc"].split("(")[0] for _, d in g.nodes(data=True))).sort_values(ascending=False)

# %%
# one transformer block after contraction: the intermediate tasks of its attention subgraph
s = max(subs, key=lambda s: len(s.intermediate))
pd.DataFrame([{"task": x, "ops": len(h.nodes[x]["members"]), "forward_ms": round(h.nodes[x]["forward_ms"], 3),
               "members": ", ".join(g.nodes[m]["desc"].split("(")[0] for m in h.nodes[x]["members"])}
              for x in s.intermediate])

# %% [markdown]
# ## Paper vs ours
#
# GPT-2's Table II row and section IV-F's search space from `reference/nona.yaml`, measured from
# `gpt2_dag.csv` and `gpt2_granularity.csv` (written above), then the same in sentences.
#
# How to read it:
#
# * **Tasks before contraction.** The module trace counts leaf-module calls plus the tensor
#   functions between them, including the `__getitem__(i)` selectors on the q/k/v `split` outputs
#   (kept so each edge carries the bytes its consumer reads, as PipeDream writes multi-output
#   nodes). The paper does not say how GPT-2 was made traceable by PipeDream's profiler, whose
#   tensor wrapper only handles view/transpose/add/mul/getitem/size/cat.
# * **Tasks after contraction.** Per block, the residual edge bypasses the attention half, whose
#   q, k, v branches stay parallel between the two residual adds; the MLP half contracts into the
#   add. With the attention kept whole, the residual blocks contract completely and only the
#   wte/wpe pair is left. No GPT-2 graph whose identical blocks each keep a parallel region can
#   give the paper's (small) number of distributions in total, so the paper's contracted GPT-2
#   tasks must be mostly sequential.
# * **Size.** Today's `transformers` GPT-2 has no attention buffers; the 4.x versions registered
#   per block a causal-mask `bias` (1x1x1024x1024 bool) and a scalar `masked_bias`, which
#   `size_mib_with_legacy_buffers` adds (the graph is not edited). A one-off check with
#   `transformers` 4.30.2 installed aside (not part of this pipeline; see the `gpt2_trace`
#   docstring) confirms the buffer bytes. Table II's "Layers" equals `len(list(model.modules()))`
#   of `GPT2LMHeadModel` (checked by the tracer's tests with torch), a sign that the paper
#   profiled that class.

# %%
from IPython.display import Markdown, display
from schedlab.reference import paper_vs_ours

comparison = paper_vs_ours("nona", ["table2.gpt2.", "gpt2.", "optimiser."], out.root)
comparison = comparison[comparison["id"].str.startswith(("table2.gpt2.", "gpt2.")) | comparison["id"].str.contains("whitelisted")]
# Table II's GPT-2 row is measured from table2.csv (the table2 notebook): here only what this notebook wrote
comparison = comparison[comparison.match != "missing input"]
display(comparison)
v = variants_df.set_index("granularity")
traced = v.drop(index="paper (Table II, section IV-F)")
selectors = sum(d["desc"].startswith("__getitem__") for _, d in g.nodes(data=True))
display(Markdown(
    "Tasks before -> after contraction: "
    + "; ".join(f"{k}: {int(r.pre_tasks)} -> {int(r.post_tasks)}" for k, r in traced.iterrows())
    + f"; paper: {paper['table2.gpt2.pre_tasks']} -> {paper['table2.gpt2.post_tasks']}. "
    f"The module trace has {selectors} `__getitem__` selector tasks. "
    f"Size: {row['size_mib']:.2f} MiB of parameters, {row['size_mib_with_legacy_buffers']:.2f} MiB with the legacy "
    f"attention buffers ({legacy_attention_buffer_bytes():,} bytes), paper {paper['table2.gpt2.size_mb']} MB. "
    f"Largest GPT-2 subgraph: {len(s.intermediate)} intermediate tasks, {omega_size(len(s.intermediate)):,} placement options. "
    "Five-model search space: "
    + "; ".join(f"{k}: {int(r.five_model_search_space):,} options over {int(r.five_model_distributions)} distributions"
                for k, r in traced.iterrows())
    + f"; paper: {paper['optimiser.search_space']} over {paper['optimiser.n_distributions']}, "
    "bracketed by the module trace and the trace with the attention kept whole, matched by neither."))
