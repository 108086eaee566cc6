# %% [markdown]
# # Nona: calibrating what the paper leaves open
#
# **What this does, in plain words.** The Nona paper fixes the cluster (80 servers, a 10 Gbps
# link), the five networks, the loads and bandwidths of its figures and the 100:1 ratio of
# inference to background arrivals (background compute and background communication jobs alike).
# Those values are constraints here: no reading changes them, so a background transfer's size
# follows from the 100:1 rate and the link load. The paper does not say several other things that
# change its numbers by orders of magnitude: whether "load" means each server's utilisation or the
# formula of section IV-B taken literally, how long a simulation runs, whether a query is a
# training minibatch or one sample, and on what hardware GPT-2's task times were measured. This
# notebook tries every combination of those readings on a small version of Figs. 3-5.
#
# **Fitted and held out.** The paper's numbers are split *before* the fit (`fit_on` in
# params.yaml: Fig. 3's numbers). Readings are ranked on the fitting set only; every other number
# (Fig. 4, Fig. 5, Table I) is held out and is what counts as reproduced. The scorecard marks the
# fitting numbers `fitted`. Sign checks count once per figure (Nona ahead of every baseline at
# every point), not once per baseline. The figures' default workload should be the best fit; the
# last cell says whether it is, and which paper numbers no reading reproduces together.
#
# Details: each reading is simulated for `duration` seconds, or for as long as the busiest point
# takes to generate `max_jobs` jobs if that is shorter (`calibration.window`: one-sample queries
# with GPT-2 on the GPU class arrive ~100x faster than the default's, and a 30 s window would be
# millions of jobs); the fit table gives each reading's window. Each reading (`schedlab.nona.calibration.Reading`) is simulated at Fig. 3's loads
# (`design.fig3_loads`, 10 Gbps), Fig. 4's bandwidths (`design.fig4_bandwidths` at load 0.5) and
# Fig. 5's point (load 0.7), for Nona (tables solved per point by the certified `global` solver)
# and the three baselines the paper quotes factors for (Spark fair, Opportunistic, Random), plus
# job f of section II for Table I's shape. Numbers and tolerances: `reference/nona.yaml` where it
# asserts one, else a gain factor within +-50% of the paper's and a Table I share within +-0.15
# (`calibration.GAIN_REL_TOLERANCE`, `TABLE1_TOLERANCE`). Decima has its own stage (its policy
# network is too slow for a grid). Phase 1 sweeps the workload readings jointly at one short
# window; phase 2 varies the window and the warm-up for the best `top` readings.

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run nona/calibration [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section nona.calibration (with the nona.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/nona/calibration/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("nona/calibration", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs, load_params

import json
import tempfile
from dataclasses import replace

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from schedlab import io, paths
from schedlab.nona import calibration as cal
from schedlab import parallel
from schedlab.progress import bar

out = Outputs(output_root, "nona/calibration")
table1 = load_params("nona/table1", profile=profile)  # Table I's own setup (section II's two-server example)
plan = cal.Design(**{k: tuple(v) if isinstance(v, list) else v for k, v in design.items()},
                  table1_loads=tuple(table1["table_loads"][k] for k in ("Low", "Medium", "High")),
                  table1_bandwidth_gbps=table1["bandwidth_gbps"], table1_background_mb=table1["background_mb"])
readings = cal.grid(factors, cal.Reading(duration=duration, warmup_share=warmup_share))
print(f"phase 1: {len(readings)} readings x {len(plan.points())} points x {len(plan.schemes)} schemes")
# GPT-2's hardware scaling: measured by `python -m schedlab.nona.hardware --models alexnet --gpt2` (a timing,
# so it is a parameter above, not read at run time); shown here next to the value the grid uses
gpu = json.loads((paths.ROOT / gpu_scale_json).read_text())
measured_scale = gpu["gpt2_time_scale"]["alexnet"]
print(f"GPT-2 time scale measured {measured_scale:.5f} (AlexNet GPU/CPU thread-time ratio "
      f"{gpu['models']['alexnet']['ratio_thread']:.5f} x GPT-2's forward {gpu['gpt2_same_session']['thread_ms']:.0f} ms "
      f"now / {gpu['gpt2_cpu_ms']:.0f} ms in the committed trace); the grid uses {factors['gpt2_time_scale']}")

# %% [markdown]
# ## Phase 1: the workload readings, jointly

# %%
def run(batch, desc, design):
    done = []
    with tempfile.TemporaryDirectory() as tmp, parallel.executor() as ex:
        for i, r in enumerate(bar(len(batch), desc, unit="reading", iterable=batch)):
            done.append(cal.measure(r, design, f"{tmp}/{i}", executor=ex))
    return done

phase1 = run(readings, "calibration phase 1", plan)
summary1, long1 = cal.fit_table(phase1, fit_on)
print(f"fitting set: {int(long1[long1.fitting].id.nunique())} numbers (ids starting with {fit_on}); "
      f"held out: {int(long1[~long1.fitting].id.nunique())}")
summary1[["reading", "within", "asserted", "held_within", "held_asserted", "log_error", "mixed_points", "window_s",
          "min_inference_jobs"]]

# %% [markdown]
# ## Phase 2: window and warm-up for the best readings
#
# The link-blind baselines overload the link, so their queues (and their gap to Nona) grow with
# the simulated time: the window is a choice that moves the Random and Opportunistic factors.

# %%
best1 = [r for r in readings if r.name in set(summary1.reading[:top])]
extra = [replace(r, duration=w, warmup_share=s) for r in best1 for w in windows for s in warmup_shares
         if (w, s) != (r.duration, r.warmup_share)]
# the job cap grows with the window, so that a longer window is really longer (cal.window)
plan2 = replace(plan, max_jobs=int(plan.max_jobs * max(windows) / duration))
phase2 = run(extra, "calibration phase 2", plan2)
summary, long = cal.fit_table([*phase1, *phase2], fit_on)
best = summary.iloc[0]
io.atomic_write_text(out.results("calibration.csv"), summary.to_csv(index=False))
io.atomic_write_text(out.results("calibration_fit.csv"), long.to_csv(index=False))
summary[["reading", "within", "asserted", "held_within", "held_asserted", "log_error", "mixed_points", "window_s",
         "min_inference_jobs"]].head(12)

# %% [markdown]
# ## The fit table
#
# One row per reading (best first by the fitting set), one column per paper number: green where
# the reading reproduces it within tolerance, red where it does not; the fitting set left of the
# line, the held-out numbers right of it.

# %%
fig = cal.plot_fit(summary, long, max_rows=24)
out.savefig(fig, "calibration")
plt.show()

# %% [markdown]
# ## Phase 3: how much of the fit is the seed?
#
# The cluster-wide load leaves the servers nearly idle, so a low-load point measures a few dozen
# inference jobs and its tail factors move with the simulation's seed. The best `seed_top` readings
# run again with the `seeds` above (same design, same window): the range of numbers each reproduces
# over seeds 0 and those, and per paper number the share of seeds that reproduce it.

# %%
ranked = [m for name in summary.reading[:seed_top] for m in [*phase1, *phase2] if m.reading.name == name]
again = [(r, s) for r in [m.reading for m in ranked] for s in seeds]
design_of = {m.reading.name: (plan if any(m is p for p in phase1) else plan2) for m in ranked}
with tempfile.TemporaryDirectory() as tmp, parallel.executor() as ex:
    reruns = [(s, cal.measure(r, replace(design_of[r.name], seed=s), f"{tmp}/{i}", executor=ex))
              for i, (r, s) in enumerate(bar(len(again), "calibration phase 3", unit="run", iterable=again))]
by_seed, per_number = cal.seed_spread([(plan.seed, m) for m in ranked] + reruns, fit_on)
io.atomic_write_text(out.results("calibration_seeds.csv"), by_seed.to_csv(index=False))
best_stability = per_number[per_number.reading == summary.reading.iloc[0]]
flaky = best_stability[(best_stability.yes_share > 0) & (best_stability.yes_share < 1)]
by_seed

# %% [markdown]
# ## Best joint fit, conflicts, and the figures' default

# %%
best_reading = next(m.reading for m in [*phase1, *phase2] if m.reading.name == best.reading)
figures = load_params("nona/fig3", profile=profile)  # the figures' values (nona.common.workload, duration)
figures_workload = figures.get("workload") or {}
figures_duration = float(figures["duration"])
default_is_best = (cal.normalise_kwargs(figures_workload) == cal.normalise_kwargs(best_reading.workload_kwargs()))
conflict = cal.conflicts(long, best.reading)
default_row = summary[summary.reading == cal.reading_of(figures_workload, duration).name]
result = {
    "profile": profile, "readings": int(len(summary)), "best": best.reading,
    "best_workload": best_reading.workload_kwargs(), "best_within": int(best.within),
    "asserted": int(best.asserted), "fit_on": list(fit_on),
    "best_held_within": int(best.held_within), "held_asserted": int(best.held_asserted),
    "best_mixed_points": int(best.mixed_points),
    "best_min_inference_jobs": int(best.min_inference_jobs),
    "figures_workload": figures_workload, "figures_duration_s": figures_duration,
    "default_is_best": int(default_is_best),
    "default_within": int(default_row.within.iloc[0]) if len(default_row) else None,
    "conflicts": conflict.to_dict(orient="records"),
    "gpt2_time_scale_measured": measured_scale,
    "seeds": [plan.seed, *seeds],
    "best_within_seeds": [int(by_seed.within_min.iloc[0]), int(by_seed.within_max.iloc[0])],
    "best_held_within_seeds": [int(by_seed.held_min.iloc[0]), int(by_seed.held_max.iloc[0])],
    "runner_up_within_seeds": ([int(by_seed.within_min.iloc[1]), int(by_seed.within_max.iloc[1])]
                               if len(by_seed) > 1 else None),
    "best_seed_dependent": flaky.id.tolist(),
}
io.atomic_write_json(out.results("calibration.json"), result)
conflict

# %%
lines = [f"**Best joint fit**: `{best.reading}`: {best.within} of {best.asserted} fitting numbers within tolerance; "
         f"**held out: {best.held_within} of {best.held_asserted}** (the reproduction) "
         f"(Nona's placement mixed at {best.mixed_points} of {len(plan.points())} points; the fewest inference jobs "
         f"in one simulation: {best.min_inference_jobs}, so its low-load numbers rest on few jobs)."]
if len(default_row):
    lines.append(f"The figures' workload `{figures_workload}` (phase-1 window) reproduces "
                 f"{int(default_row.within.iloc[0])} of {int(default_row.asserted.iloc[0])} fitting and "
                 f"{int(default_row.held_within.iloc[0])} of {int(default_row.held_asserted.iloc[0])} held-out numbers.")
lines.append("The figures use the best fit." if default_is_best else
             "**The figures do not use the best fit**: set `nona.common.workload` in params.yaml to "
             f"`{best_reading.workload_kwargs()}`.")
if len(conflict):
    never = [c["id"] for c in result["conflicts"] if not c["reproduced_by"]]
    lines.append(f"The best reading misses {len(conflict)} numbers; {len(never)} of them no reading reproduces: "
                 + ", ".join(never) + ".")
lo, hi = result["best_within_seeds"]
hlo, hhi = result["best_held_within_seeds"]
seed_line = (f"Over seeds {', '.join(map(str, result['seeds']))} the best reading reproduces {lo} to {hi} of "
             f"{best.asserted} fitting and {hlo} to {hhi} of {best.held_asserted} held-out numbers")
if result["runner_up_within_seeds"]:
    rlo, rhi = result["runner_up_within_seeds"]
    lead = "beyond" if lo > rhi else "within"
    seed_line += f"; the runner-up `{by_seed.reading.iloc[1]}` {rlo} to {rhi}: the lead is {lead} the seeds' spread"
seed_line += (f". Numbers whose verdict depends on the seed ({len(flaky)}): " + ", ".join(flaky.id) + "."
              if len(flaky) else ". No number's verdict depends on the seed.")
lines.append(seed_line)
display(Markdown("\n\n".join(lines)))
