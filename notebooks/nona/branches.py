# %% [markdown]
# # Nona: where splitting a job's parallel branches pays
#
# **What this checks, in plain words.** Nona's central claim (section IV-B) is that placing parts
# of a job's graph on other servers, with some probability, lowers the job completion time (JCT)
# "when low amounts of data are transmitted on the parallel branches". The paper's five models
# barely have parallel branches once contracted, so its figures cannot show where this holds.
# Here we take a network with real parallel branches, PipeDream's `inception_v3` (eight Inception
# modules of 3-4 branches, 0.7-11 ms of compute each), and map, over the compute load, the link
# bandwidth and the amount of data the branches exchange, how much faster Nona's split placement
# is than keeping every job on one server, in our simulator, on the same arrivals.
#
# Details (not a figure of the paper: it shows where the paper's central claim holds): at every point we solve Nona with its
# certified global solver under the dependency-aware `critical_path` pricing, price "keep every
# subgraph together" with the same model, and simulate both placements with the same seeds. The
# paper's literal pricing (`paper`) is solved at the same points to show where the simulator
# refutes what it predicts. At a few points the figures' baselines run on the same workload.

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run nona/branches [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section nona.branches (with the nona.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/nona/branches/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seeds": [0]}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("nona/branches", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import time

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from schedlab import io
from schedlab.nona import branches, experiments

out = Outputs(output_root, "nona/branches")
tables_dir = out.results("branches/tables")
t0 = time.perf_counter()
print(f"profile {profile}: {', '.join(models)} on {servers} servers; {len(loads)} loads x {len(bandwidths_gbps)} "
      f"bandwidths x {len(byte_scales)} byte scales, {len(seeds)} seeds of {duration:g} s")

# %% [markdown]
# ## The map
#
# One row per point and pricing. `pred_gain` and `sim_gain` are Nona's mean inference JCT over
# keep-together's, minus 1 (negative: Nona is faster); `sim_gain` is the mean over the seeds of
# the per-seed (paired) gain, `sim_gain_min`/`sim_gain_max` its range. `verdict` judges the
# predicted sign seed by seed: `confirmed` (every seed agrees with the model), `refuted` (every
# seed disagrees), `unresolved` (the seeds disagree with each other: the difference is within the
# windows' noise), `no split` (both placements are the same). `confirmed` is the same test on the
# mean over seeds.

# %%
rows = branches.gain_map(loads, bandwidths_gbps, byte_scales, models=models, servers=servers, workload=workload,
                         seeds=seeds, duration=duration, tables_dir=tables_dir, executor=workers)
io.atomic_write_text(out.results("branches/map.csv"), rows.to_csv(index=False))
facts = branches.summary(rows)
map_s = time.perf_counter() - t0
rows.round(4)

# %%
fig = branches.plot_gain_map(rows, title=f"Where Nona's split pays: {', '.join(models)}, {servers} servers "
                                         f"({profile} profile; x: refuted by every seed, ?: seeds disagree, P: paper pricing refuted)")
out.savefig(fig, "branches")
plt.show()

# %% [markdown]
# ## Baselines where Nona splits, and where it does not
#
# The figures' schemes on the same workload (same arrivals, seed `seed`), at the points where
# critical-path Nona's simulated gain is largest and at one point where it splits nothing.
# `ratio` is a scheme's mean inference JCT over Nona's on the same window; Decima runs a short
# window of its own (its policy network runs at every decision), so its ratio is against Nona
# run again on that window (`ratio_same_window`).

# %%
points = branches.baseline_points(rows, n_split=baseline_points)
setup = experiments.FigureSweep.from_params(globals(), tables_dir=tables_dir)
base = branches.baseline_rows(points, setup, tables_dir=tables_dir, executor=workers)
cols = ["byte_scale", "bandwidth_gbps", "load", "why", "scheme", "status", "inference_mean_jct_s", "mean_jct_s",
        "ratio", "ratio_same_window", "duration_s"]
base = base[cols]
io.atomic_write_text(out.results("branches/baselines.csv"), base.to_csv(index=False))
ran = base[(base.status == "ok") & ~base.scheme.isin(["nona", "nona_decima_window"])]
ratio = ran.ratio_same_window.where(ran.scheme.isin(experiments.DECIMA_SCHEMES), ran.ratio)
facts["baselines"] = {s: [round(float(ratio[ran.scheme == s].min()), 3), round(float(ratio[ran.scheme == s].max()), 3)]
                      for s in ran.scheme.unique()}
facts["profile"] = profile  # wall-clock times: results/nona/timings/branches.json (not a pipeline output)
io.atomic_write_json(out.results("branches/summary.json"), facts)
io.atomic_write_json(out.timings("branches.json"), {"profile": profile, "map_s": round(map_s, 1),
                                                     "total_s": round(time.perf_counter() - t0, 1)})
base.round(4)

# %% [markdown]
# ## What the map says
#
# Read it as a budget: a split branch runs in parallel on another server and saves at most the
# compute it overlaps (a few ms per Inception branch), but its input and output cross the link,
# which costs the transfer time (bytes / bandwidth) plus the link's queueing wait. Splitting pays
# only where the saved parallel compute exceeds that link time, so the gain grows as the branches'
# data shrinks or the bandwidth grows; the optimiser keeps the job together elsewhere (hatched
# cells), and keep-together is then exactly what runs. The model has no server queue (a task takes
# `p/nu` wherever it lands, see `nona/model_error`): at a high compute load a split branch waits in
# another busy server's queue, a cost the model does not see, so that is where it predicts gains
# the simulator refutes. With the background transfers sized by the
# 100:1 ratio, every link time is bytes / bandwidth, so a byte scale of x at bandwidth b behaves
# like x/10 at 10 b: the panels are shifted copies of one another along the bandwidth axis.

# %%
cp, pp = facts["critical_path"], facts["paper"]
split = rows[(rows.pricing == "critical_path") & (rows.split_subgraphs > 0)]
best = split.loc[split.sim_gain.idxmin()] if len(split) else None
text = [f"Critical-path Nona splits at {cp['split']} of {cp['points']} points."]
if best is not None:
    text.append(f"There its simulated gain against keep-together is {cp['sim_gain_pct'][0]:+.1f}% to "
                f"{cp['sim_gain_pct'][1]:+.1f}% (mean over {len(seeds)} seeds; predicted "
                f"{cp['pred_gain_pct'][0]:+.1f}% to {cp['pred_gain_pct'][1]:+.1f}%); the best point is load "
                f"{best.load:g}, {best.bandwidth_gbps:g} Gbit/s, "
                f"branch data x{best.byte_scale:g} ({100 * best.sim_gain:+.1f}%, seeds {100 * best.sim_gain_min:+.1f}% "
                f"to {100 * best.sim_gain_max:+.1f}%).")
bad = split[split.verdict == "refuted"]
by_load = ", ".join(f"{n} at load {x:g}" for x, n in bad.groupby("load").size().items())
v = cp["verdicts"]
text.append(f"Seed by seed, the simulator confirms the predicted sign at **{v['confirmed']}** of those points and "
            f"refutes it at **{v['refuted']}**" + (f" ({by_load})" if len(bad) else "") + f"; at {v['unresolved']} "
            "the seeds disagree (within the windows' noise). "
            f"On the mean over seeds it refutes {cp['refuted']}; {int((bad.pred_gain > -0.01).sum())} of the points "
            "every seed refutes were predicted to gain less than 1% (a split drawn with a small probability).")
text.append(f"The paper's pricing splits at {pp['split']} points; every seed refutes it at {pp['verdicts']['refuted']} "
            f"(on the mean: {pp['refuted']}), confirms it at {pp['verdicts']['confirmed']}: it prices each part as if "
            "it ran alone, without waiting for its predecessors in other parts.")
display(Markdown(" ".join(text)))

# %% [markdown]
# The baselines' ratios (above 1: slower than Nona) at those points:

# %%
display(ran.pivot_table(index=["byte_scale", "bandwidth_gbps", "load", "why"], columns="scheme",
                        values="ratio", aggfunc="first").round(2))
live = [s for s, (lo, hi) in facts["baselines"].items() if lo < 1 and s in ("spark_fair", *experiments.DECIMA_SCHEMES)]
blind = [s for s, (lo, hi) in facts["baselines"].items() if lo < 1 and s not in live]
display(Markdown(", ".join(f"{s}: x{lo:g} to x{hi:g}" for s, (lo, hi) in facts["baselines"].items())
                 + " (Decima: against Nona on Decima's window). "
                 + (f"Faster than Nona at some point: {', '.join(live)}. They see the live cluster and start a task on "
                    "any idle server, while Nona's placement is drawn without looking, so its jobs queue behind busy "
                    "servers; where little data crosses the link, that queueing costs more than the transfers the "
                    "live schemes add. " if live else "")
                 + (f"Also below 1 somewhere: {', '.join(blind)}, which split more branches than Nona chose to, "
                    "at a point where the link is nearly free (the model's prices are means; see the map's "
                    "refuted cells)." if blind else "")))
