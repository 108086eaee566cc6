# %% [markdown]
# # Start here: schedlab
#
# schedlab reproduces three papers on scheduling and profiling machine-learning work in shared
# clusters, from the raw traces to every table and figure:
#
# | paper | what it is about | its notebooks |
# |---|---|---|
# | **Nona** (`../shared/papers/nona.txt`) | DNN inference jobs as DAGs; a queueing model of the network link (Pollaczek–Khinchine) gives *probabilities* of splitting each part of a DAG across servers; a stochastic scheduler and a simulator with its baselines (Spark, Random, Opportunistic, an Expert, Decima) | `nona/` |
# | **PCS** (`../shared/papers/pcs.txt`) | GPU cluster scheduling with weighted fair queueing over job classes, predictions of each job's completion time, and a search for the Pareto-optimal trade-off between average JCT and prediction error | `pcs/` |
# | **PolarisProfiler** (`../shared/papers/polaris-profiler.txt`) | workload *profiles* from the Alibaba PAI GPU trace: sampling, Hopkins statistic, HDBSCAN/OPTICS grid, an XGBoost classifier on job metadata, SHAP, durations | `polaris/` |
#
# **How to use this page.** Each notebook below is one pipeline stage: `Run All` in JupyterLab
# computes what `make reproduce` computes (its values come from `params.yaml`, shown as a table under
# its parameters cell) and writes under `data/scratch/<paper>/<name>/`, never over the pipeline's
# `results/` and `figures/`. Set `profile = "teaching"` in a notebook's parameters cell for a faster
# run in class, or `"paper"` for the paper's scale; `overrides = {"seed": 1}` changes one value for
# that run. The explorers (last section) are for playing with each paper's mechanism; they write nothing.
#
# **How the reproduction went**: [`results/scorecard.html`](../results/scorecard.html) (after
# `make reproduce`; every published number with ours, the tolerance and the verdict), also as
# [`results/scorecard.md`](../results/scorecard.md). The [README](../README.md) has the commands.

# %%
import json

from IPython.display import Markdown, display

from schedlab import notebooks, paths

# %% [markdown]
# ## The notebooks, in pipeline order

# %%
PAPERS = {"nona": "Nona", "pcs": "PCS", "polaris": "PolarisProfiler"}
rows = notebooks.catalogue()
for paper, label in PAPERS.items():
    lines = [f"### {label}", "", "| notebook | reproduces | DVC stage |", "|---|---|---|"]
    for r in rows:
        if r["paper"] == paper:
            lines.append(f"| [{r['notebook']}]({r['notebook']}) | {r['title']} | `dvc repro {r['stage']}` |")
    display(Markdown("\n".join(lines)))

# %% [markdown]
# ## Has the pipeline run here?
#
# The table says, per paper, how many of the papers' numbers the last pipeline run reproduced
# (from `results/<paper>/metrics.json`; the [scorecard](../results/scorecard.html) has every number). Nothing there yet: run `make reproduce` in a terminal
# (about 35 minutes on 2 cores; `make reproduce PROFILE=teaching` is faster).

# %%
VERDICTS = {"yes": "reproduced", "no": "not reproduced", "not_asserted": "shown, not asserted",
            "paper_profile_only": "paper profile only", "missing_input": "missing input"}
lines = ["| paper | " + " | ".join(VERDICTS.values()) + " | report |", "|---|" + "---|" * (len(VERDICTS) + 1)]
for paper, label in PAPERS.items():
    path = paths.ROOT / "results" / paper / "metrics.json"
    if not path.is_file():
        lines.append(f"| {label} | " + " | ".join("–" for _ in VERDICTS) + " | not run yet |")
        continue
    counts = json.loads(path.read_text())
    lines.append(f"| {label} | " + " | ".join(str(counts.get(v, 0)) for v in VERDICTS)
                 + f" | [comparison.md](../results/{paper}/comparison.md) |")
display(Markdown("\n".join(lines)))

# %% [markdown]
# ## Explorers: each paper's mechanism, with sliders
#
# - [explore/nona.ipynb](explore/nona.ipynb): load and link bandwidth → Nona's optimal placement
#   probabilities, the link's waiting time and each class's predicted JCT.
# - [explore/pcs.ipynb](explore/pcs.ipynb): WFQ class weights and thresholds → average JCT against
#   prediction error on a small trace, next to FIFO and the other baselines.
# - [explore/polaris.ipynb](explore/polaris.ipynb): a clustering configuration → the profiles it
#   finds and their silhouettes.
#
# Each ends with exercises a teacher can set.
#
# ## Where things are
#
# | folder | what |
# |---|---|
# | `notebooks/<paper>/` | the stage notebooks (`NAME.ipynb` + `NAME.py`, paired by jupytext) |
# | `lib/schedlab/` | the library the notebooks call (`import schedlab`) |
# | `results/<paper>/`, `figures/<paper>/` | what `make reproduce` writes; times in `results/<paper>/timings/` |
# | `reference/<paper>.yaml` | every published number we compare with, and its source |
# | `data/scratch/` | what interactive runs write |
# | `params.yaml`, `dvc.yaml` | the pipeline's parameters (with the `profile` switch) and stages |
