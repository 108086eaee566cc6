"""Write the PCS notebooks (without outputs) from the cells below: `python notebooks/pcs/build_notebooks.py`."""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf

HERE = Path(__file__).resolve().parent

SETUP = """import json
import numpy as np
import pandas as pd
import matplotlib
import matplotlib.pyplot as plt

from schedlab import data, io
from schedlab.notebooks import Outputs
from schedlab.pcs import metrics, experiments as X
from schedlab.pcs.artifacts import trace_0e4a51
"""

NOTEBOOKS = {
    "fig1": [
        ("md", "# PCS Fig. 1: the toy example (1 GPU, four jobs)\n\nArrivals and sizes from the "
               "authors' `fig1a.json`; every policy is simulated by our engine with predictions "
               "at each arrival. Themis uses a lease of 1 time unit in this toy (the "
               "authors use 600 s, 10 s for gavel)."),
        ("params", 'output_root = ""\npolicies = ["FIFO", "Tiresias", "Themis", "LAS", "Max-Min"]\ngpus = 1'),
        ("code", SETUP + 'out = Outputs(output_root, "pcs/fig1")'),
        ("code", """from schedlab.pcs import Workload
fig1a = json.loads(open(data.require("pcs/paper_figure_data/fig1a.json")).read())
arr = fig1a["arrivals"]
w = Workload.from_arrays([a["time"] for a in arr], [float(a["size"]) for a in arr], [1] * len(arr), name="toy")
runs = X.run_many(w, X.policy_set(policies, "toy"), gpus)
table = X.toy_table(runs)
io.atomic_write_text(out.results("fig1.csv"), table.to_csv(index=False))
table"""),
        ("md", "Paper (Fig. 1b): Tiresias mean JCT 11.25, Pred_err 46 %; FIFO 15.75, 0 %; "
               "Themis 13.5, 24 %. Peak unfairness uses our (the authors') fair finish time "
               "`size / min(G / mean contention, demand)`, which is not the toy's FFT "
               "definition, so it is shown, not compared."),
        ("code", """fig, ax = plt.subplots(1, 2, figsize=(8, 3))
table.plot.bar(x="policy", y="mean_jct", ax=ax[0], legend=False, title="mean JCT")
table.plot.bar(x="policy", y="mean_pred_error", ax=ax[1], legend=False, title="mean Pred_err (%)")
fig.tight_layout()
io.savefig(fig, out.figures("fig1b.png"))"""),
    ],
    "exactness": [
        ("md", "# PCS: our simulator against the authors' own per-job outputs\n\nTrace 0e4a51, "
               "first 1001 jobs, 64 GPUs, predictions on (`artifact_runs/workload2_1001apps_and_gavel`). "
               "For each run and column: jobs whose start / end / predicted start / predicted end "
               "differ by more than 1e-6 relative. The authors' times are shifted by their "
               "wall-clock offset (first submit time, e.g. 0.000179 s). PCS-bal and PCS-pred use "
               "the configs of commit b313687 (found by re-simulation, see `artifacts.RUN_CONFIGS`).\n\n"
               "The second table applies the README's Fig. 8b recipe to the authors' workload-3 "
               "per-job files.\n\n"
               "**Themis.** The authors stored no deterministic workload-2 Themis run, but their "
               "workload-3 runs behind Fig. 8 are deterministic: `generate(\"gavel\", 3000, "
               "authors_rng(seed), load=1.2)` regenerates that workload exactly (sizes, demands "
               "*and* submit times: their generator drew each app's demand and then its gap from "
               "the seeded numpy stream), with a 600 s lease (their runs were named "
               "`gavel-contsingle`, so the 10 s lease of `gavel` did not apply). Our Themis is "
               "checked job by job there (third table), including its predictions: in those "
               "runs the replay keeps each job's true size in `t_ideal` and has no lease ticks "
               "(`Themis.fig8_runs`). The paper's Fig. 7 and the 2024 public code predict "
               "differently (estimated remaining size, lease ticks in the replay: our default), "
               "see the Fig. 7 section below."),
        ("params", "output_root = \"\"\ngpus = 64  # as the authors' runs\nthemis_seeds = [1954, 3266, 5897, 6359, 9005]  # the authors' Fig. 8 seeds"),
        ("code", SETUP + 'out = Outputs(output_root, "pcs/exactness")'),
        ("code", """ex = X.exactness_table(gpus)
io.atomic_write_text(out.results("exactness.csv"), ex.to_csv(index=False))
ex.pivot(index="run", columns="column", values="jobs_off")"""),
        ("code", """from schedlab.pcs.artifacts import load_run
seeds = [1954, 3266, 5897, 6359, 9005]
d = "pcs/artifact_runs/workload3_gavel_load1.2_5seeds/"
runs = {p: {s: load_run(d + f"{p}_64_1.2_gavel-contsingle_{s}.csv.gz") for s in seeds}
        for p in ["AFS", "SRSF", "THEMIS", "FIFO", "FS"]}
for k, lab in [(0, "PCS-pred"), (1, "PCS-bal"), (2, "PCS-JCT")]:
    runs[lab] = {s: load_run(d + f"MCS_64_1.2_gavel-contsingle_{s}_{k}.csv.gz") for s in seeds}
f8 = metrics.fig8_aggregate(runs)
io.atomic_write_text(out.results("fig8_authors_recipe.csv"), f8.to_csv(index=False))
f8"""),
        ("code", """th = X.themis_exactness_table(themis_seeds, gpus)
io.atomic_write_text(out.results("themis_exactness.csv"), th.to_csv(index=False))
th.pivot(index="run", columns="column", values="jobs_off")"""),
        ("md", "**Themis on workload-2 (Fig. 7, whole traces).** The main schedule "
               "reproduces the paper's normalised avg JCT only when `rho` values time through "
               "the job's speedup table (`valuation=\"speedup\"`, our default): 0e4a51 1.324 "
               "as printed (also b436b2 1.552, 6214e9 1.341, 6c71a0 1.498, 2869ce 1.652; "
               "ee9e8c gives 1.897 vs 1.898). The 2024 public code divides by the GPU count "
               "(`valuation=\"linear\"`): 1.312 on 0e4a51.\n\n"
               "Predictions: the paper's Themis Pred_err on **2869ce** (every arrival "
               "predicted, 956 jobs) is reproduced by our default replay (estimated remaining "
               "size in `t_ideal`, lease ticks inside the replay): avg 33.820 %, p99 "
               "122.788 % (paper 33.82, 122.788). The same replay with the linear valuation "
               "equals the authors' 2024 per-job Themis output on ee9e8c "
               "(`new_data/THEMIS_ee9e8c_result.csv` of their repository, all 5452 jobs: start, "
               "end, predicted start and end; an optional input, see "
               "`benchmarks/results/pcs_themis_2024_ee9e8c.txt`). On **0e4a51** no variant "
               "reproduces the paper's avg Pred_err (default 48.363 % vs 47.967 %; p99 "
               "212.352 % vs 212.425 %) although the JCTs match; we could not find why (one "
               "possibility: that run predicted only a random subset of arrivals, as the "
               "authors' code does for traces over 5000 jobs)."),
        ("code", """from schedlab.pcs import load_trace
tv = X.themis_variants_fig7({t: load_trace(data.require(f"pcs/workload2_philly_traces/trace_{t}.csv.gz")) for t in ["0e4a51", "2869ce"]}, gpus)
paper = {"0e4a51": (1.324, 47.967, 212.425), "2869ce": (1.652, 33.82, 122.788)}
for k, col in enumerate(["paper_norm_avg_jct", "paper_avg_pred_error", "paper_p99_pred_error"]):
    tv[col] = tv.trace.map(lambda t: paper[t][k])
io.atomic_write_text(out.results("themis_variants_fig7.csv"), tv.to_csv(index=False))
tv"""),
        ("code", """from schedlab.pcs import make_policy, simulate
from schedlab.pcs.artifacts import run_config
w = trace_0e4a51(1001)
ours = simulate(w, make_policy("PCS", run_config("PCS_jct")), gpus, predict=True)
theirs = load_run("PCS_jct")
fig, ax = plt.subplots(figsize=(4, 4))
ax.loglog(theirs.estimated_end_time - theirs.submit_time, ours.estimated_end_time - ours.submit_time, ".", ms=3)
ax.set_xlabel("authors: predicted JCT (s)"); ax.set_ylabel("ours: predicted JCT (s)"); ax.set_title("PCS-JCT, 0e4a51")
io.savefig(fig, out.figures("pcs_jct_agreement.png"))"""),
    ],
    "fig7": [
        ("md", "# PCS Fig. 7: workload-2 (Philly VCs), 64 GPUs\n\nNormalised average JCT, "
               "average and p99 Pred_err per trace and policy. Default profile: traces 0e4a51, "
               "2869ce and ee9e8c, whole traces; 0e4a51 (2465 jobs) with the configurations the README identifies behind "
               "the paper's Fig. 7 for that trace (`fig7_0e4a51`); Themis with the authors' 600 s lease. Other traces use today's `pcs_configs.json`, which differ from "
               "the paper's (README): their PCS rows are shown, not compared (2869ce has no "
               "stored config, so no PCS rows).\n\n"
               "**Themis:** default variant (`valuation=\"speedup\"`): its normalised avg JCT "
               "equals the paper's on 0e4a51, b436b2, 6214e9, 6c71a0 and 2869ce to the printed "
               "digits (ee9e8c: 1.897 vs 1.898); the 2024 public code's linear valuation gives "
               "1.312 on 0e4a51. Its default predictor replay (estimated remaining sizes, lease "
               "ticks inside the replay) reproduces the paper's Themis Pred_err on 2869ce "
               "(avg 33.820 %, p99 122.788 %; every arrival predicted), but not on 0e4a51 "
               "(48.363 % / 212.352 % vs 47.967 % / 212.425 %; see `pcs/exactness`).\n\n"
               "**Traces with more than 5000 jobs** (b436b2, 6214e9, 6c71a0, ee9e8c): the authors "
               "predicted a random (unseeded) subset of about 5000 arrivals "
               "(`p = 5000/N`); we predict every arrival, so avg/p99 Pred_err there are "
               "statistically, not exactly, comparable. p99 uses numpy's default (linear) "
               "percentile, as the published Fig. 7 values."),
        ("params", 'output_root = ""\ntraces = ["0e4a51"]\nnum_jobs = 0  # 0 = whole trace\n'
                   'policies = ["AFS", "Tiresias", "Themis", "FIFO", "PCS-JCT", "PCS-bal", "PCS-pred"]\ngpus = 64'),
        ("code", SETUP + 'out = Outputs(output_root, "pcs/fig7")'),
        ("code", """rows = []
for tr in traces:
    from schedlab.pcs import load_trace
    w = load_trace(data.require(f"pcs/workload2_philly_traces/trace_{tr}.csv.gz"), num_jobs or None)
    cfg_key = "fig7_0e4a51" if tr == "0e4a51" else tr
    labs = []
    for p in policies:
        try:
            if p.startswith("PCS"):
                X.pcs_config(p, cfg_key)
            labs.append(p)
        except ValueError:  # no stored PCS config for this trace (2869ce)
            pass
    runs = X.run_many(w, X.policy_set(labs, cfg_key), gpus)
    agg = metrics.fig7_aggregate(runs).assign(trace=tr, jobs=len(w))
    rows.append(agg)
fig7 = pd.concat(rows, ignore_index=True)
io.atomic_write_text(out.results("fig7.csv"), fig7.to_csv(index=False))
paper = pd.read_csv(data.require("pcs/paper_figure_data/fig7_workload2_long.csv"))
paper = paper.pivot_table(index=["trace", "policy"], columns="metric", values="value").reset_index()
paper["policy"] = paper["policy"]
fig7.merge(paper, on=["trace", "policy"], how="left")"""),
        ("code", """fig, ax = plt.subplots(1, 3, figsize=(12, 3))
for a, col in zip(ax, ["norm_avg_jct", "avg_pred_error", "p99_pred_error"]):
    fig7.pivot(index="trace", columns="policy", values=col).plot.bar(ax=a, legend=a is ax[0], title=col)
fig.tight_layout()
io.savefig(fig, out.figures("fig7.png"))"""),
    ],
    "fig8": [
        ("md", "# PCS Fig. 8: workload-3 (Gavel CDFs), 64 GPUs, load 1.2\n\nOur simulation of "
               "the authors' workload-3: `generate(\"gavel\", 3000, authors_rng(seed), load=1.2)` "
               "is exactly the workload of their Fig. 8 runs (sizes, demands and submit times; "
               "tested job by job against their FIFO/SRSF/THEMIS files); their Max-Min runs had "
               "5000 apps. Themis uses the 600 s lease and the predictor replay of those runs "
               "(`Themis.fig8_runs`). Tiresias, Themis, FIFO and Max-Min reproduce Fig. 8b to "
               "the digit. Our AFS is the deterministic `alg_c_concept` of the authors' "
               "simulator (exact on workload-2); their workload-3 runs used the randomised "
               "allocator of their testbed scheduler (reconstructed job by job in "
               "`benchmarks/check_afs_fig8_runs.py`), so its aggregates here carry a stated 3 % "
               "tolerance. The PCS rows use "
               "today's `PCS_config_gavel_*`, not the configurations behind the authors' MCS "
               "runs (not identified): shown, not compared. The authors' own per-job files and "
               "the Fig. 8b recipe are in `pcs/exactness`."),
        ("params", 'output_root = ""\nseeds = [1954, 3266, 5897, 6359, 9005]\nnum_apps = 3000\nnum_apps_fs = 5000\nload = 1.2\ngpus = 64\n'
                   'policies = ["AFS", "Tiresias", "Themis", "FIFO", "Max-Min", "PCS-pred", "PCS-bal", "PCS-JCT"]\n'
                   'themis_lease_s = 600.0  # the authors\' Fig. 8 runs (workload named gavel-contsingle)'),
        ("code", SETUP + 'out = Outputs(output_root, "pcs/fig8")\nfrom schedlab.pcs.generators import generate, authors_rng'),
        ("code", """runs = {p: {} for p in policies}
per_job = []
for s in seeds:
    for n, pols in [(num_apps, [p for p in policies if p != "Max-Min"]),
                    (num_apps_fs, [p for p in policies if p == "Max-Min"])]:
        if not pols:
            continue
        w = generate("gavel", n, authors_rng(s), load=load, gpus=gpus)
        r = X.run_many(w, X.policy_set(pols, "gavel", themis_lease_s), gpus)
        for p in pols:
            runs[p][s] = r[p]
            per_job.append(r[p].assign(policy=p, seed=s))
f8 = metrics.fig8_aggregate(runs)
io.atomic_write_text(out.results("fig8.csv"), f8.to_csv(index=False))
pj = pd.concat(per_job, ignore_index=True)
io.atomic_write_text(out.results("fig8_per_job.csv"), pj.to_csv(index=False))
f8"""),
        ("code", """fig, ax = plt.subplots(figsize=(5, 4))
ax.scatter(f8.norm_avg_jct, f8.p99_pred_error)
for _, r in f8.iterrows():
    ax.annotate(r.policy, (r.norm_avg_jct, r.p99_pred_error))
ax.set_xlabel("normalised avg JCT"); ax.set_ylabel("p99 Pred_err (%)")
io.savefig(fig, out.figures("fig8b.png"))"""),
    ],
    "fig10": [
        ("md", "# PCS Fig. 10a/b: job-size estimation error\n\nPCS (PCS-JCT config) and FIFO "
               "avg Pred_err, and PCS avg JCT against AFS without error, for a size error of "
               "p % (each job's size seen as `size*U(1-p,1+p)`, drawn once at arrival from a "
               "seeded generator; the authors' draw was unseeded). Default: trace 0e4a51, "
               "first 1001 jobs.\n\n**This is our own sensitivity run, not a reproduction:** "
               "the workload behind the paper's Fig. 10 is not identified (the authors' "
               "`fig10_error_analysis_*.txt` summaries name no trace, and no config or seed "
               "reproduces them), and their error draws were unseeded. Compare shapes, not "
               "values."),
        ("params", 'output_root = ""\nerrors = [0, 5, 10, 20, 30, 40]\nnum_jobs = 1001\ngpus = 64\nseed = 0'),
        ("code", SETUP + 'out = Outputs(output_root, "pcs/fig10")'),
        ("code", """w = trace_0e4a51(num_jobs)
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
io.atomic_write_text(out.results("fig10.csv"), f10.to_csv(index=False))
f10"""),
        ("code", """fig, ax = plt.subplots(1, 2, figsize=(9, 3))
for lab in ["PCS-JCT", "FIFO"]:
    d = f10[f10.policy == lab]
    ax[0].plot(d.p_error, d.avg_pred_error, "o-", label=lab)
d = f10[f10.policy == "PCS-JCT"]
ax[1].plot(d.p_error, d.jct_vs_afs, "o-")
ax[0].set_xlabel("job-size error (%)"); ax[0].set_ylabel("avg Pred_err (%)"); ax[0].legend()
ax[1].set_xlabel("job-size error (%)"); ax[1].set_ylabel("PCS avg JCT / AFS (no error)")
fig.tight_layout()
io.savefig(fig, out.figures("fig10.png"))"""),
    ],
    "fig11": [
        ("md", "# PCS Fig. 11: size and contention are poor predictors (workload-3)\n\n"
               "(a) Tiresias: job size vs Pred_err. (b) Max-Min: mean contention each job saw "
               "(`num_apps_seen_diff`). Default: one seed, 1000 generated apps. With "
               "`num_apps = 3000` the workload is exactly the authors' workload-3 for that seed "
               "(see `pcs/fig8`); with 1000 apps it is a different, statistically similar one. "
               "(Workload-1, `themis1`, is not used here: seed 4567 reproduces the sizes of the "
               "authors' `themis1_5seeds` baseline files but not their submit times.)"),
        ("params", 'output_root = ""\nseed = 1954\nnum_apps = 1000\nload = 1.2\ngpus = 64'),
        ("code", SETUP + 'out = Outputs(output_root, "pcs/fig11")\nfrom schedlab.pcs.generators import generate, authors_rng'),
        ("code", """w = generate("gavel", num_apps, authors_rng(seed), load=load, gpus=gpus)
r = X.run_many(w, X.policy_set(["Tiresias", "Max-Min"]), gpus)
t = r["Tiresias"].assign(pred_error=metrics.pred_error(r["Tiresias"]))
c = r["Max-Min"].num_apps_seen_diff
summary = pd.DataFrame([{
    "tiresias_spearman_size_vs_error": float(t[["service", "pred_error"]].corr("spearman").iloc[0, 1]),
    "tiresias_max_error_small_jobs": float(t[t.service <= t.service.median()].pred_error.max()),
    "tiresias_max_error_large_jobs": float(t[t.service > t.service.median()].pred_error.max()),
    "maxmin_mean_contention": float(c.mean()),
    "maxmin_p99_contention": metrics.percentile(c, 99),
}])
summary["maxmin_tail_over_mean"] = summary.maxmin_p99_contention / summary.maxmin_mean_contention
io.atomic_write_text(out.results("fig11.csv"), summary.to_csv(index=False))
summary.T"""),
        ("code", """fig, ax = plt.subplots(1, 2, figsize=(9, 3))
ax[0].scatter(t.service, t.pred_error, s=3); ax[0].set_xscale("log")
ax[0].set_xlabel("job size (GPU-s)"); ax[0].set_ylabel("Pred_err (%)"); ax[0].set_title("Tiresias")
ax[1].hist(c, bins=50); ax[1].set_xlabel("mean contention seen"); ax[1].set_title("Max-Min")
fig.tight_layout()
io.savefig(fig, out.figures("fig11.png"))"""),
    ],
    "testbed": [
        ("md", "# PCS Figs. 4-6 **in simulation** on the testbed trace\n\nThe 101-app "
               "`trace_themis1_scaled.csv` on 16 simulated GPUs (linear scaling). These are "
               "*simulated* numbers, not the paper's GPU-testbed measurements: the paper's "
               "values are shown next to ours, not asserted."),
        ("params", 'output_root = ""\ngpus = 16\npolicies = ["AFS", "Tiresias", "FIFO", "Max-Min", "PCS-JCT", "PCS-bal", "PCS-pred"]'),
        ("code", SETUP + 'out = Outputs(output_root, "pcs/testbed")\nfrom schedlab.pcs.generators import testbed_trace'),
        ("code", """w = testbed_trace()
runs = X.run_many(w, X.policy_set(policies, "themis1_scaled"), gpus)
rows = []
for lab, df in runs.items():
    s = metrics.summary(df)
    rows.append({"policy": lab, **s, "p90_jct": metrics.percentile(metrics.jct(df), 90)})
tb = pd.DataFrame(rows)
tb["norm_avg_jct"] = tb.avg_jct / tb.avg_jct.min()
io.atomic_write_text(out.results("testbed.csv"), tb.to_csv(index=False))
tb"""),
        ("code", """fig, ax = plt.subplots(1, 2, figsize=(9, 3))
for lab, df in runs.items():
    e = np.sort(metrics.pred_error(df)); ax[0].plot(e, np.linspace(0, 1, len(e)), label=lab)
    u = np.sort(metrics.unfairness(df)); ax[1].plot(u, np.linspace(0, 1, len(u)), label=lab)
ax[0].set_xlabel("Pred_err (%)"); ax[0].set_title("Fig. 4 (simulated)"); ax[0].set_xscale("symlog")
ax[1].set_xlabel("unfairness"); ax[1].set_title("Fig. 6a (simulated)"); ax[1].legend(fontsize=7)
fig.tight_layout()
io.savefig(fig, out.figures("testbed.png"))"""),
    ],
}


def write_notebooks(notebooks: dict) -> None:
    """Write each ``name: [(kind, source), ...]`` as ``<name>.ipynb`` beside this script (no outputs,
    stable cell ids). ``kind`` is ``md``, ``params`` (tagged for papermill) or ``code``."""
    for name, cells in notebooks.items():
        nb = nbf.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        for kind, src in cells:
            if kind == "md":
                nb.cells.append(nbf.v4.new_markdown_cell(src))
            elif kind == "params":
                c = nbf.v4.new_code_cell("# Parameters (papermill); output_root empty = scratch run.\n" + src)
                c.metadata["tags"] = ["parameters"]
                nb.cells.append(c)
            else:
                nb.cells.append(nbf.v4.new_code_cell(src))
        for k, cell in enumerate(nb.cells):
            cell.id = f"{name}-{k}"  # stable ids: rebuilding does not change the files
        nbf.write(nb, HERE / f"{name}.ipynb")


def build() -> None:
    write_notebooks(NOTEBOOKS)


if __name__ == "__main__":
    build()
