# %% [markdown]
# # Nona baseline: Decima retrained in our simulator
#
# **What this does, in plain words.** Decima is a scheduler that learns its policy by trial and
# error (reinforcement learning). The Nona paper uses a Decima trained by its authors and reports
# in Table III that training it took hundreds of GPU hours, growing with the cluster. Those
# weights are not public, so besides the public TPC-H weights (`decima.ipynb`) we train the same
# network ourselves, in our own simulator and on Nona's workload, for a few minutes, and check on
# unseen arrivals what that training bought. The figure notebooks use the result as their second
# Decima row.
#
# Details: the paper compares against Decima "trained on SQL queries provided by the authors" and
# puts its training time in Table III (section IV-F; values in `reference/nona.yaml`). This
# notebook trains the **same architecture** (the public state-dict layout; its parameter count is
# printed below) inside
# our Nona simulator, on the Nona workload, from scratch (default; `init: public` starts from the
# public weights), and evaluates it on arrival sequences never used in training.
#
# Algorithm (`schedlab.nona.decima.train`, Decima's paper section 5.3): REINFORCE; each iteration
# draws one arrival sequence and runs `rollouts` episodes on it with the current policy; reward of a
# decision = minus the job-seconds spent in the system until the next decision (all jobs, background
# included), undiscounted, so an episode's return is minus its total JCT; the baseline is the
# input-dependent one (mean return-to-go at the same time over the episodes sharing the arrival
# sequence); advantages are divided by their batch standard deviation; Adam; optional entropy bonus.
#
# Two training choices of ours make the default budget learn (measured, see `train.py`'s docstring):
# **(1) continuous-time discount** of the return, `discount_s` = tau (seconds; spark-sched-sim's
# trainers discount in time the same way): a decision is credited with the job-seconds of the next
# few tau instead of the whole rest of the episode, which cuts the variance of the advantage;
# undiscounted returns (Decima's paper, `discount_s: 0`) did not move the held-out JCT in our budget.
# **(2) the executor head is left out of the gradient** (`exec_head: false`): a Nona stage is one task,
# so the executor count never changes what happens (`scheduler.py`, "Executor count"); its
# score-function term has mean zero and only adds noise. The network and the forward pass are
# unchanged (the head is still evaluated and sampled, at its initial weights).
# PyTorch (float64, single thread) is used for the gradient only: rollouts and every evaluation run
# the NumPy policy, with the trained weights exported to the public layout
# (`results/nona/decima_train/weights.npz`).
#
# **Budget.** The default profile is CI-sized: a few minutes of CPU on a 16-server cluster (Table
# III's smallest size), short episodes. That is orders of magnitude less compute than the
# paper's (the ratio is printed in "Table III: training time" below), so the policy is far from converged: the numbers below say what a few minutes buy,
# not what Decima can reach. `profile: paper` in `params.yaml` raises the budget.

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run nona/decima_train [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section nona.decima_train (with the nona.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/nona/decima_train/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("nona/decima_train", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import hashlib
import json
import time

import pandas as pd
import matplotlib.pyplot as plt

from schedlab import io, paths, stagetimes
from schedlab.cachekey import compute_fingerprint
from schedlab.nona import experiments
from schedlab.nona.decima import train as T

out = Outputs(output_root, "nona/decima_train")
cfg = T.TrainConfig(**train)
paper_hours = experiments.paper_decima_training_hours()  # Table III, from reference/nona.yaml
# checkpoints live outside the DVC outs (git-ignored data/cache of the output root: a run into a scratch
# root leaves the repository alone), under a hash of the config, of the code that defines a run and of how
# it computes (package versions, CPU pins: schedlab.cachekey), so an interrupted run resumes and a changed
# one starts afresh
how = compute_fingerprint(*(paths.ROOT / "lib/schedlab/nona/decima" / f
                            for f in ("train.py", "scheduler.py", "engine.py", "_kernels.py", "policy.py", "features.py")))
tag = hashlib.sha256(json.dumps(cfg.__dict__, sort_keys=True).encode() + how.encode()).hexdigest()[:16]
ckpt_dir = out.root / "data" / "cache" / "nona" / "decima_train" / tag
print(cfg)
print("checkpoints:", ckpt_dir)
print("network parameters:", T.initial_weights(cfg).num_parameters)

# %% [markdown]
# ## Training
#
# Resumable: a checkpoint (model, Adam state, iteration, learning curve) every `checkpoint_every`
# iterations; a resumed run gives the same weights as an uninterrupted one (tested in
# `tests/nona/test_decima_train.py`). `train_seconds` is the measured wall time of the iterations
# (rollouts + gradient step), summed over sessions if the run was resumed; it and the other times
# go to `results/nona/timings/` (they vary from run to run), the rest to `training_time.json`.

# %%
c0 = time.process_time()
res = T.train(cfg, ckpt_dir, progress=True)
cpu_this_session = time.process_time() - c0
T.save_weights_npz(res.module, out.results("decima_train/weights.npz"))
curve = pd.DataFrame(res.curve)
# wall-clock and CPU times vary from run to run: the pipeline's outputs keep the rest, the times go
# to results/nona/timings/ (Table III's training time is compared there, in timings/comparison.md)
stagetimes.write_timed(out, curve, "decima_train/curve.csv", timings_filename="decima_train_curve.csv",
                       timing_columns=["sim_s", "wall_s"], key_columns=["iteration"])
times = {"train_seconds": res.train_seconds, "budget_s": float(budget_s), "within_budget": bool(res.train_seconds <= budget_s),
         "simulation_seconds": float(curve.sim_s.sum()), "cpu_seconds_this_session": cpu_this_session,
         "servers": cfg.servers, "profile": profile,
         # this session's history, not the result: a re-run finds the finished checkpoint and resumes there
         "resumed_from_iteration": res.resumed_from}
io.atomic_write_json(out.timings("decima_train.json"), times)
run_info = {"budget_s": float(budget_s),
          "iterations": cfg.iterations, "rollouts": cfg.rollouts, "episode_s": cfg.episode_s, "servers": cfg.servers,
          "load": cfg.load, "init": cfg.init, "decisions": int(curve.decisions.sum()),
          "profile": profile,
          "hardware": "2 CPU cores shared with other jobs, PyTorch CPU float64 single thread",
          # trend of the learning curve (each iteration has its own arrival sequence: noisy)
          "curve_first5_mean_jct_s": float(curve.mean_jct_s.head(5).mean()),
          "curve_last5_mean_jct_s": float(curve.mean_jct_s.tail(5).mean()),
          "curve_first5_mean_return": float(curve.mean_return.head(5).mean()),
          "curve_last5_mean_return": float(curve.mean_return.tail(5).mean()),
          "paper_hours": paper_hours, "paper_hardware": "Nvidia A100 (Table III)"}
io.atomic_write_json(out.results("decima_train/training_time.json"), run_info)
{**run_info, **times}

# %%
# learning curve: each iteration draws its own arrival sequence, so the raw curve is noisy
fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
ax = axes[0]
ax.plot(curve.iteration, curve.mean_jct_s, ".", alpha=0.5, label="iteration (mean over its episodes)")
k = max(1, len(curve) // 6)
ax.plot(curve.iteration, curve.mean_jct_s.rolling(k, min_periods=1).mean(), "-", label=f"rolling mean ({k})")
ax.set_xlabel("training iteration")
ax.set_ylabel("mean JCT in training episodes (s)")
ax.set_title(f"(a) Decima training: {cfg.servers} servers, load {cfg.load:g}")
ax.grid(True, alpha=0.3)
ax = axes[1]
if "entropy" in curve:
    ax.plot(curve.iteration, curve.entropy, color="C2",
            label="policy entropy (" + ("stage + executor heads" if cfg.exec_head else "stage head") + ")")
ax.set_xlabel("training iteration")
ax.set_ylabel("entropy per decision (nats)")
ax.set_title("(b) how random the policy still is")
ax.grid(True, alpha=0.3)
from schedlab.nona.plotting import legend_below

legend_below(fig, *[sum(x, []) for x in zip(*(a.get_legend_handles_labels() for a in axes))], ncol=3)
out.savefig(fig, "decima_train/learning_curve")
plt.show()

# %% [markdown]
# ## Held-out evaluation
#
# Same cluster and load as training, `eval_seeds` arrival sequences with seeds `EVAL_SEED_BASE + i`
# (checked disjoint from every training arrival seed), `eval_duration` s measured windows. Schemes:
# the retrained Decima, the public-weights Decima, the untrained initial network (`decima_init`,
# to show what training changed), Spark fair, Nona (optimiser tables solved for this very workload)
# and Random. Decima variants sample their actions (seeded), as in the figures. The `*_greedy` rows take the
# most likely action instead (`DecimaScheduler(greedy=True)`): not what the figures run, shown
# because sampling itself scatters a job's tasks over servers (each scattered edge is a transfer
# on the link Decima cannot see), so the sampled and greedy policies differ a lot here.

# %%
ev = T.evaluate(cfg, eval_schemes, T.evaluation_seeds(eval_seeds), duration=eval_duration, weights=res.weights,
                init_weights=T.initial_weights(cfg), nona_tables=out.results("decima_train/tables/nona.json"))
stagetimes.write_timed(out, ev, "decima_train/eval.csv", timings_filename="decima_train_eval.csv",
                       timing_columns=["wall_s"], key_columns=["scheme", "seed"])
ok = ev[ev.status == "ok"]
table = ok.groupby("scheme", sort=False)[["mean_jct_s", "p99_jct_s", "inference_mean_jct_s", "link_offered_load"]].mean()
for base in ("nona", "spark_fair"):
    if base in table.index:
        table[f"mean JCT / {base}"] = table.mean_jct_s / table.loc[base, "mean_jct_s"]
print(sorted(set(ev.status)))
table

# %%
# per seed: did training help on every held-out arrival sequence?
piv = ok.pivot(index="seed", columns="scheme", values="mean_jct_s")
piv.assign(**({"retrained / init": piv.decima_retrained / piv.decima_init} if {"decima_retrained", "decima_init"} <= set(piv) else {}))

# %% [markdown]
# ## Table III: training time
#
# The paper trains Decima on an Nvidia A100 with a training set scaled with the cluster (its hours
# per size: `reference/nona.yaml`, `table3.decima_train_s.*`). Ours: the measured wall time of the default profile on 2 shared CPU cores
# (`results/nona/timings/decima_train.json`, key `train_seconds`), at 16 servers, next to the paper's 16-server figure.
# The two are not the same experiment: ours is a tiny budget chosen to fit CI (and the policy is
# not converged, see the learning curve and the held-out table), the paper's trains to
# convergence; the comparison only says how far below the paper's budget ours is.

# %%
t3 = pd.DataFrame([{"servers": cfg.servers, "paper Decima training (h)": paper_hours.get(cfg.servers),
                    "ours (s)": res.train_seconds, "ours (h)": res.train_seconds / 3600,
                    "paper / ours": (paper_hours.get(cfg.servers, float("nan")) * 3600) / res.train_seconds,
                    "iterations x episodes": f"{cfg.iterations} x {cfg.rollouts}", "budget (s)": budget_s}])
t3

# %% [markdown]
# ## Reading the results
#
# * The retrained network sees Nona's jobs during training (millisecond tasks, one task per stage,
#   16 servers), unlike the public TPC-H weights (50 executors, seconds-long multi-task stages), so
#   it is the fairer Decima; with a few minutes of training it improves on its random
#   initialisation (compare `decima_retrained` with `decima_init`, sampled and greedy) but is far
#   from converged, and like every Decima it is **network-blind**: it never sees the link, so it
#   cannot see the transfers that dominate JCTs here (see `link_offered_load`). In this plug-in
#   the executor head has no effect (one task per stage, no reservations) and servers are handed
#   out most-recently-freed first, so the only lever is the stage head: *which* runnable task
#   goes next (e.g. the job that just freed a server, whose task then stays on that server and
#   sends nothing over the link; older jobs first). Being work-conserving, it cannot hold servers
#   back as Spark fair's per-job cap does, so Spark fair stays far ahead in our budget.
# * In Figs. 3-5 the retrained weights run on the 80-server cluster ("Decima (retrained in our
#   simulator)"): trained at 16 servers, so out of distribution in cluster size, as the public
#   weights are (trained at 50).
# * The paper's Decima gaps (Figs. 3-5) come from its authors' model and simulator; ours are in
#   the figure notebooks next to the paper's numbers.
# * **Seed sensitivity** (measured outside this notebook, on the same held-out sequences, so not
#   recomputed here): with another training seed the same budget gave a similar greedy JCT but a
#   much worse sampled one, i.e. the ranking is learned but the stage head's logits are not yet
#   sharp enough for sampling to follow it. The sampled number of one seed is therefore not a
#   stable summary of this budget; the greedy rows are.
#
# ## Paper vs ours
#
# What this run measured, in sentences (from `res`, the held-out `table` and `t3` above).

# %%
from IPython.display import Markdown, display

text = [f"Training took {res.train_seconds:.0f} s ({cfg.iterations} iterations x {cfg.rollouts} episodes, "
        f"{cfg.servers} servers); the paper's Decima trained {paper_hours.get(cfg.servers)} h at that size, "
        f"{float(t3['paper / ours'].iloc[0]):.3g} times longer."]
if {"decima_retrained", "decima_init"} <= set(table.index):
    gain = table.loc["decima_init", "mean_jct_s"] / table.loc["decima_retrained", "mean_jct_s"]
    text.append(f"On held-out arrivals the retrained policy's mean JCT is {table.loc['decima_retrained', 'mean_jct_s']:.3g} s "
                f"against {table.loc['decima_init', 'mean_jct_s']:.3g} s untrained ({gain:.3g}x "
                + ("better" if gain > 1 else "worse") + ").")
for base in ("nona", "spark_fair"):
    if base in table.index and "decima_retrained" in table.index:
        who = {"nona": "Nona's", "spark_fair": "Spark fair's"}[base]
        text.append(f"Its mean JCT is {table.loc['decima_retrained', f'mean JCT / {base}']:.3g} times {who}.")
display(Markdown(" ".join(text)))
