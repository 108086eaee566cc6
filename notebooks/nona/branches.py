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
# A second map varies the background link load (the traffic of other jobs on the link) and the
# branch data at one compute load and bandwidth, and runs every baseline wherever Nona splits: it
# looks for the region the paper's claim needs, where Nona splits AND is faster than every baseline.
#
# **How a point is judged.** Each seed runs both placements on the same arrivals, so each seed
# gives one paired gain. A point is `confirmed` when the 95% confidence interval (Student t) of the
# mean paired gain lies on the predicted side of 0, `refuted` when it lies on the other side, and
# `unresolved` when it contains 0. Where the first `seeds` leave a point unresolved, both
# placements run again with `extra_seeds` and the verdict is taken over all of them.

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
      f"bandwidths x {len(byte_scales)} byte scales, {len(seeds)} seeds (+{len(extra_seeds)} where unresolved) "
      f"of {duration:g} s")

# %% [markdown]
# ## The map
#
# One row per point and pricing. `pred_gain` and `sim_gain` are Nona's mean inference JCT over
# keep-together's, minus 1 (negative: Nona is faster); `sim_gain` is the mean over the seeds of
# the per-seed (paired) gain, `sim_gain_lo`/`sim_gain_hi` its 95% confidence interval,
# `sim_gain_min`/`sim_gain_max` its range over the `seeds` seeds used. `verdict` is the interval's
# verdict above (`no split`: both placements are the same); `confirmed` is the sign of the mean alone.

# %%
rows = branches.gain_map(loads, bandwidths_gbps, byte_scales, models=models, servers=servers, workload=workload,
                         seeds=seeds, extra_seeds=extra_seeds, duration=duration, pricings=pricings,
                         tables_dir=tables_dir, executor=workers)
io.atomic_write_text(out.results("branches/map.csv"), rows.to_csv(index=False))
facts = branches.summary(rows)
map_s = time.perf_counter() - t0
rows.round(4)

# %%
fig = branches.plot_gain_map(rows, title=f"Where Nona's split pays: {', '.join(models)}, {servers} servers "
                                         f"({profile} profile; x: refuted, ?: unresolved at 95%, P: paper pricing refuted)")
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
cols = ["comm_load", "byte_scale", "bandwidth_gbps", "load", "why", "scheme", "status", "inference_mean_jct_s", "mean_jct_s",
        "ratio", "ratio_same_window", "duration_s"]
base = base[cols]
io.atomic_write_text(out.results("branches/baselines.csv"), base.to_csv(index=False))
ran = base[(base.status == "ok") & ~base.scheme.isin(["nona", "nona_decima_window"])]
ratio = branches.scheme_ratio(ran)
facts["baselines"] = {s: [round(float(ratio[ran.scheme == s].min()), 3), round(float(ratio[ran.scheme == s].max()), 3)]
                      for s in ran.scheme.unique()}
main_wins = branches.wins(base, rows)
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
                f"{cp['sim_gain_pct'][1]:+.1f}% (mean over {cp['seeds_used'][0]}-{cp['seeds_used'][1]} seeds; predicted "
                f"{cp['pred_gain_pct'][0]:+.1f}% to {cp['pred_gain_pct'][1]:+.1f}%); the best point is load "
                f"{best.load:g}, {best.bandwidth_gbps:g} Gbit/s, "
                f"branch data x{best.byte_scale:g} ({100 * best.sim_gain:+.1f}%, 95% interval "
                f"{100 * best.sim_gain_lo:+.1f}% to {100 * best.sim_gain_hi:+.1f}%).")


def where(df):
    return "; ".join(f"load {r.load:g}, {r.bandwidth_gbps:g} Gbit/s, x{r.byte_scale:g}: {100 * r.sim_gain:+.1f}% "
                     f"[{100 * r.sim_gain_lo:+.1f}, {100 * r.sim_gain_hi:+.1f}], predicted {100 * r.pred_gain:+.2f}%"
                     for r in df.itertuples())


v = cp["verdicts"]
bad, open_ = split[split.verdict == "refuted"], split[split.verdict == "unresolved"]
text.append(f"By the 95% interval of the paired gain ({cp['seeds_used'][0]}-{cp['seeds_used'][1]} seeds per point), "
            f"the simulator confirms the predicted gain at **{v['confirmed']}** of those points, refutes it at "
            f"**{v['refuted']}**" + (f" ({where(bad)})" if len(bad) else "") + f" and leaves **{v['unresolved']}** "
            "unresolved" + (f" ({where(open_)})" if len(open_) else "") + ". "
            f"At **{cp['mean_against_prediction']}** of the {cp['split']} points the simulated mean gain has the "
            "opposite sign of the predicted one (counted as refuted above only where its interval excludes 0).")
text.append(f"The paper's pricing splits at {pp['split']} points; the simulator refutes it at {pp['verdicts']['refuted']}, "
            f"confirms it at {pp['verdicts']['confirmed']}, leaves {pp['verdicts']['unresolved']} unresolved: it prices "
            "each part as if it ran alone, without waiting for its predecessors in other parts.")
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
                    "unresolved and refuted cells)." if blind else "")))

# %% [markdown]
# ## Where Nona could beat every baseline: background link load x branch data
#
# Where Nona splits in the map above, Spark's fair scheduler and Decima are faster than Nona: they
# see the live cluster and start a task on any idle server, while Nona's placement is drawn without
# looking at the queues; where nothing crosses the link but small tensors, that costs them little.
# The hypothesis for the region the paper's claim needs: with a moderate background link load
# and small branch data, the link-blind live schedulers ship large tensors over a loaded link,
# while Nona ships only small branch outputs. This map varies the background link load
# (`link_comm_loads`) and the branch data (`link_byte_scales`) at compute load(s) `link_loads`
# and `link_bandwidth_gbps`, judges Nona against keep-together as above, and runs every baseline
# wherever critical-path Nona splits (and at one point where it does not).

# %%
link = branches.gain_map(link_loads, [link_bandwidth_gbps], link_byte_scales, comm_loads=link_comm_loads,
                         models=models, servers=servers, workload=workload, seeds=seeds, extra_seeds=extra_seeds,
                         duration=link_duration, pricings=pricings, tables_dir=tables_dir, executor=workers)
io.atomic_write_text(out.results("branches/link_map.csv"), link.to_csv(index=False))
fig = branches.plot_gain_map(link, x="byte_scale", y="comm_load", panel="load",
                             title=f"Nona vs keep-together over background link load x branch data, "
                                   f"{link_bandwidth_gbps:g} Gbit/s ({profile} profile; x: refuted, ?: unresolved)")
out.savefig(fig, "branches_link")
plt.show()

# %%
link_points = branches.baseline_points(link, n_split=None)
link_setup = setup.with_changes(duration=link_duration)
link_base = branches.baseline_rows(link_points, link_setup, tables_dir=tables_dir, executor=workers)[cols]
io.atomic_write_text(out.results("branches/link_baselines.csv"), link_base.to_csv(index=False))
link_wins = branches.wins(link_base, link)
facts["link"] = {**branches.summary(link)["critical_path"],
                 "points_with_baselines": int(len(link_wins)),
                 "wins": link_wins[link_wins.wins][["load", "comm_load", "byte_scale", "min_ratio"]]
                 .round(4).to_dict("records")}
facts["main_wins"] = int(main_wins.wins.sum())
facts["profile"] = profile  # wall-clock times: results/nona/timings/branches.json (not a pipeline output)
io.atomic_write_json(out.results("branches/summary.json"), facts)
io.atomic_write_json(out.timings("branches.json"), {"profile": profile, "map_s": round(map_s, 1),
                                                     "total_s": round(time.perf_counter() - t0, 1)})
link_lr = link_base[(link_base.status == "ok") & ~link_base.scheme.isin(["nona", "nona_decima_window"])]
display(link_lr.assign(r=branches.scheme_ratio(link_lr))
        .pivot_table(index=["load", "comm_load", "byte_scale", "why"], columns="scheme", values="r", aggfunc="first")
        .round(3))
link_wins.round(4)

# %% [markdown]
# `min_ratio` is the lowest JCT ratio of any baseline to Nona at the point (above 1: every baseline
# is slower; Decima against Nona on Decima's own window), `closest` that baseline; `wins` needs
# all three: Nona splits, the simulator confirms its gain over keep-together, and `min_ratio > 1`.
# The ratios come from one seed (`seed`) per scheme; a `min_ratio` within a few percent of 1 is
# within the noise of one window.

# %%
w = link_wins
won = w[w.wins]
split_w = w[w.split_subgraphs > 0]
lines = []
if len(won):
    lines.append(f"Nona splits and beats every baseline at **{len(won)}** of the {len(split_w)} link-map points "
                 "where it splits: " + "; ".join(
                     f"load {r.load:g}, background link load {r.comm_load:g}, branch data x{r.byte_scale:g} "
                     f"(gain vs keep-together {100 * r.sim_gain:+.1f}%, closest baseline {r.closest} at "
                     f"x{r.min_ratio:.3f})" for r in won.itertuples()) + ".")
else:
    lines.append(f"At none of the {len(split_w)} link-map points where Nona splits does it split with a confirmed gain "
                 "and beat every baseline.")
near = split_w[~split_w.wins].sort_values("min_ratio", ascending=False).head(3)
if len(near):
    lines.append("Closest of the others: " + "; ".join(
        f"load {r.load:g}, link load {r.comm_load:g}, x{r.byte_scale:g}: {r.verdict} gain {100 * r.sim_gain:+.1f}%, "
        f"{r.closest} at x{r.min_ratio:.3f}" for r in near.itertuples()) + ".")
lo_hi = (f"x{split_w.min_ratio.min():.3f} to x{split_w.min_ratio.max():.3f}" if len(split_w) else "none")
lines.append(f"Over the points where Nona splits, the fastest baseline's ratio to Nona runs {lo_hi}. ")
nosplit_cl = sorted(link[(link.pricing == "critical_path")].groupby("comm_load").split_subgraphs.max()
                    .loc[lambda x: x == 0].index)
if nosplit_cl:
    lines.append(f"From a background link load of {min(nosplit_cl):g} Nona splits nothing at any branch data size: "
                 "with the background transfers sized by the 100:1 ratio, each one is large, so the link's mean "
                 "queueing wait (Pollaczek-Khinchine) grows like rho^2 / ((1 - rho) lambda_bg) whatever the "
                 "bandwidth, and exceeds the few ms a split branch can save.")
display(Markdown(" ".join(lines)))
