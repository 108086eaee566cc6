# %% [markdown]
# # Nona, Table I / Fig. 1: the motivating job f
#
# **What this reproduces, in plain words.** Section II of the Nona paper motivates the scheduler
# with one small job, f: a sum feeds two slow determinants, one of which needs ten times more
# data than the other, and a final sum. On two servers, f can run on one server (no transfer) or
# split its two determinants over both (they run in parallel, but data crosses the link).
# Schedulers that ignore the link split f half of the time along the expensive branch, whatever
# the load. Table I says Nona instead splits f often when the link is idle and rarely when it is
# busy, always along the cheap branch. Here we solve Nona's optimisation for f at every load and
# compare its choice with Table I's.
#
# Job f (section II, Fig. 1a): `sum` (1 ms) feeds `det` (10 ms, needs all of A+B: 200 MB) and
# `det_sparse` (10 ms, needs r(A+B): 20 MB), both feed `add` (1 ms); two servers, 80 Gbps
# (200 MB = 20 ms, 20 MB = 2 ms). Table I reports how often each scheduler distributes f at low,
# medium and high cluster load: congestion-oblivious schedulers 50/50 regardless of load; Nona
# less and less often as the load grows (its shares: `reference/nona.yaml`, `table1.*`).
#
# The paper does not say what "cluster load" is for this example. Here: f's arrival rate gives
# the compute load `load` on the two servers, and background transfers of `background_mb` MB load
# the link to the same `load` (section IV-A's background traffic; the 100:1 rate ratio of
# section IV is not used for this two-server example, because it would make each background
# transfer hundreds of MB). We solve Nona's problem with the certified `global` solver at each
# load and report the optimal probability of distributing f and of each allocation.

# %% tags=["parameters"]
# Injected by papermill (`schedlab notebook run nona/table1 [--profile P] [-p KEY VALUE ...]`). Every
# value of this notebook lives in params.yaml, section nona.table1 (with the nona.common values it
# shares); the next cell loads and shows them. output_root empty = an interactive run, writing under
# data/scratch/nona/table1/, never where the pipeline writes.
output_root = ""
profile = "default"  # "teaching" or "paper": params.yaml's other profiles
overrides = {}  # this run only, e.g. {"seed": 1}; params.yaml stays the source

# %%
from schedlab.notebooks import stage_params
params = stage_params("nona/table1", profile, overrides)
globals().update(params.values)  # every parameter becomes a variable of this notebook
params

# %%
from schedlab.notebooks import Outputs

import matplotlib.pyplot as plt
import pandas as pd
from schedlab import io
import numpy as np
from schedlab.nona.decision import Option
from schedlab.nona.optimise import compile_problem, distributed_share, evaluate, solve
from schedlab.nona.queueing import UnstableLinkError
from schedlab.nona.workload import Cluster, build_workload, job_f
from IPython.display import Markdown, display
from schedlab.nona.plotting import plot_job_f
from schedlab.reference import paper_vs_ours

out = Outputs(output_root, "nona/table1")
cluster = Cluster(servers=2, bandwidth_gbps=bandwidth_gbps)

def label(o):
    if len(o.partition) == 1:
        return "together"
    alone = o.partition[1 - o.source_part] if o.source_part == o.sink_part else None
    if alone == ("det",):
        return "allocation 1 (det alone, 200 MB)"
    if alone == ("det_sparse",):
        return "allocation 2 (det_sparse alone, 20 MB)"
    return "split, source and sink on different servers"

def point(load, mb=None):
    mb = background_mb if mb is None else mb
    wl = build_workload(classes=[job_f()], load=load, cluster=cluster, background_comm_bytes=mb * 1e6)
    res = solve(wl, cluster, method="global")
    (sub, opts), = res.distributions()["f"]
    row = {"background_mb": mb, "load": load, "objective": res.objective, "gap": res.gap, "tau_f_ms": res.tau["f"] * 1e3,
           "link_load": res.rho, "phi_ms": res.phi * 1e3}
    for o, p in opts:
        row[label(o)] = row.get(label(o), 0.0) + p
    row["p_distribute"] = distributed_share(res, "f")
    return row

grid = sorted(set(loads) | set(table_loads.values()))
sweep = pd.DataFrame([point(x) for x in grid])
other = pd.DataFrame([point(x, mb) for mb in sensitivity_mb for x in grid]).fillna(0.0)
io.atomic_write_text(out.results("table1_sweep.csv"), pd.concat([sweep, other]).fillna(0.0).to_csv(index=False))
sweep.round(4)

# %% [markdown]
# ## Table I next to ours

# %%
from schedlab.reference import paper_values

ref = paper_values("nona", "table1.nona_distribute.")  # Nona's share of distributing f (Table I)
paper = {name: ref[f"table1.nona_distribute.{name.lower()}"] for name in table_loads}
ALLOC1 = Option((("det",), ("det_sparse",)), 1, 1)  # Fig. 1b: det alone on the other server (200 MB crosses)
ALLOC2 = Option((("det",), ("det_sparse",)), 0, 0)  # Fig. 1c: det_sparse alone (20 MB crosses)

def oblivious(load):
    """The congestion-oblivious 50/50 between allocations 1 and 2 (Table I), evaluated in Nona's model."""
    wl = build_workload(classes=[job_f()], load=load, cluster=cluster, background_comm_bytes=background_mb * 1e6)
    prob = compile_problem(wl, cluster)
    (opts,) = prob.spaces[0].options
    th = np.zeros(prob.n_options)
    th[list(opts).index(ALLOC1)] = th[list(opts).index(ALLOC2)] = 0.5
    try:
        ev = evaluate(prob, th)
        return ev.objective, ev.rho
    except UnstableLinkError:
        return float("inf"), float(prob.rho0 + prob.r @ th)

def penalty(load):
    """The paper's own solver (Lagrangian penalty, first order) on the same instance."""
    wl = build_workload(classes=[job_f()], load=load, cluster=cluster, background_comm_bytes=background_mb * 1e6)
    res = solve(wl, cluster, method="penalty", max_iter=penalty_max_iter)
    return distributed_share(res, "f"), res.objective, res.info["iterations"]

rows = []
for name, x in table_loads.items():
    r = sweep.loc[sweep.load == x].iloc[0]
    pen_p, pen_obj, pen_it = penalty(x)
    obl_obj, obl_rho = oblivious(x)
    rows.append({"cluster_load": name, "load": x, "oblivious_distribute": 1.0, "oblivious_alloc1": 0.5,
                 "oblivious_alloc2": 0.5, "paper_nona_distribute": paper[name],
                 "ours_distribute": r.p_distribute, "ours_together": r.together, "tau_f_ms": r.tau_f_ms,
                 "global_objective": r.objective, "penalty_distribute": pen_p,
                 "penalty_excess": pen_obj / r.objective - 1, "penalty_iterations": pen_it,
                 "oblivious_excess": obl_obj / r.objective - 1, "oblivious_link_load": obl_rho})
table1 = pd.DataFrame(rows)
io.atomic_write_text(out.results("table1.csv"), table1.to_csv(index=False))
table1.round(4).T

# %%
# the paper's solver stopped after fewer steps: how its answer depends on the iteration budget
budget_rows = []
for budget in penalty_budgets:
    for name, x in table_loads.items():
        wl = build_workload(classes=[job_f()], load=x, cluster=cluster, background_comm_bytes=background_mb * 1e6)
        res = solve(wl, cluster, method="penalty", max_iter=budget)
        (sub, opts), = res.distributions()["f"]
        budget_rows.append({"max_iter": budget, "cluster_load": name, "load": x,
                            "penalty_distribute": 1 - sum(p for o, p in opts if len(o.partition) == 1),
                            "excess_vs_optimum": res.objective / table1.set_index("cluster_load").global_objective[name] - 1})
budgets = pd.DataFrame(budget_rows)
budgets.pivot(index="max_iter", columns="cluster_load", values="penalty_distribute")[list(table_loads)].round(3)


# %%
# which background-traffic assumption makes the optimum interior? P(distribute f), global optimum
def p_dist(**kw):
    wl = build_workload(classes=[job_f()], cluster=cluster, **kw)
    (sub, opts), = solve(wl, cluster, method="global").distributions()["f"]
    return 1 - sum(p for o, p in opts if len(o.partition) == 1)

assumptions = {f"{mb:g} MB transfers, link load = load": {"background_comm_bytes": mb * 1e6} for mb in scan_mb}
assumptions["section IV-A rule (100:1 rates), link load = load"] = {}
assumptions["20 MB transfers, link load fixed at 0.3"] = {"background_comm_bytes": 20e6, "comm_load": 0.3}
assumptions["no background jobs"] = {"background_ratio": float("inf")}
scan = pd.DataFrame([{"assumption": name, **{f"load {x:g}": p_dist(load=x, **kw) for x in scan_loads}}
                     for name, kw in assumptions.items()]).set_index("assumption")
scan["interior points"] = ((scan > 1e-3) & (scan < 1 - 1e-3)).sum(axis=1)
io.atomic_write_text(out.results("table1_assumptions.csv"), scan.to_csv())
scan.round(2)

# %% [markdown]
# ### Why the exact optimum is a corner at low and high load (and what the paper's solver gives)
#
# * **Reported truth: `ours_distribute`**, the certified global optimum of (I)-(XII) (`global`,
#   gap <= 1e-6). `penalty_distribute` is the paper's own method (section IV-F: Lagrangian
#   penalty, first-order descent from the uniform point, `penalty_max_iter` steps);
#   `penalty_excess` is how much worse its objective is than the optimum. The
#   congestion-oblivious scheduler distributes f always, 50/50 between allocations 1 and 2
#   (`oblivious_excess`: its objective in Nona's model relative to the optimum; `inf` when its
#   200 MB transfers alone overload the link, `oblivious_link_load` >= 1).
# * **Why corners.** In Nona's formulation the load acts only through the link's PK wait;
#   servers are not queues in (I)-(XII). Distributing f saves ~10 ms of compute and costs one
#   2 ms transfer plus the wait phi. f's own 20 MB transfers add at most beta_f x 2 ms to the link
#   load (<= 0.18 even at compute load 1), so the marginal cost of distributing hardly changes
#   with the share distributed: it is negative (distribute always) until phi approaches ~8 ms
#   and positive beyond, with a mixed optimum only in a narrow band of loads where it crosses
#   zero (see `sweep` above and the thin curves of the figure for other sizes). None of the background assumptions in the scan above (transfer sizes over four orders
#   of magnitude, the section IV 100:1 rate rule, a fixed background link load, no background)
#   gives interior optima at three loads far apart, as Table I's shares would need.
# * **What gives Table-I-like answers.** The uniform start of a first-order solver puts 0.8 on
#   distributing (4 of f's 5 options split it); stopped early, the penalty method returns mixes
#   that drift down from 0.8 with the load and stay interior at medium load even after
#   `penalty_max_iter` steps (the budget table above; `penalty_excess` in Table I). That is one way the paper's interior shares could arise; the
#   paper gives neither its loads nor its background traffic nor its iteration budget, so we do
#   not claim it. The background transfer size (`background_mb`, 20 MB) is **our choice**, not
#   the paper's; we did not tune it to match Table I.

# %%
fig = plot_job_f(sweep, other, paper, table_loads,
                 title=f"Job f on two servers, {bandwidth_gbps:g} Gbps link: how often Nona splits it "
                       f"({background_mb:g} MB background transfers unless noted)")
out.savefig(fig, "table1_job_f")
plt.show()

# %% [markdown]
# Reading: the optimum switches from distributing f (along the cheap 20 MB branch, as Nona
# does in section II) to keeping it on one server as the link fills up, with a mixed strategy in
# between: the qualitative content of Table I. The exact shares of Table I depend on what the paper
# calls low/medium/high load and on the background traffic, which it does not specify, so they are
# shown next to ours, not asserted. Around the switch the optimal mix is interior because f's own
# transfers raise the PK wait of every other transfer (the objective is not linear in theta).
# The thinner lines repeat the sweep with smaller and larger background transfers: the load at
# which Nona stops distributing f moves with the link's wait (PK: proportional to the mean square
# transfer size), which is exactly the information a congestion-oblivious 50/50 ignores.
# (That the 2 MB and 200 MB curves coincide is a property of the objective, not a bug: with the
# background link load fixed, the background jobs' term is (c/x)(c x + N_f)/(2(1-rho)) for transfer
# time x = b/mu, and f's own waiting adds n beta_f theta (c x + N_f)/(2(1-rho)) with
# N_f = beta_f theta S^2; the x-dependent part is symmetric under x -> S^2/(n x). Here S = 2 ms
# (the 20 MB transfer) and n = 1, and 0.2 ms x 20 ms (2 MB and 200 MB at 80 Gbps) = (2 ms)^2.)

# %% [markdown]
# ## Paper vs ours
#
# Table I's shares from `reference/nona.yaml`, measured from `table1.csv` (written above): the
# certified optimum (`table1.nona_distribute.*`) and the paper's own penalty solver
# (`table1.penalty_distribute.*`) at our low/medium/high loads.

# %%
comparison = paper_vs_ours("nona", ["table1."], out.root)
display(comparison.round(3))
t1 = table1.set_index("cluster_load")
falls = bool((sweep.sort_values("load").p_distribute.diff().dropna() <= 1e-9).all())
switch = sweep[(sweep.p_distribute > 1e-3) & (sweep.p_distribute < 1 - 1e-3)].load
band = f"{switch.min():g}-{switch.max():g}" if len(switch) else "none of the loads swept"
display(Markdown(
    "Direction: the optimal share of split placements "
    + ("never grows with the load, as in Table I" if falls else "does not fall monotonically with the load, unlike Table I")
    + "; the oblivious 50/50 ignores the load. Shares at our low/medium/high loads: "
    + "; ".join(f"{k} (load {t1.load[k]:g}) ours {t1.ours_distribute[k]:.2f}, penalty solver {t1.penalty_distribute[k]:.2f}, "
                f"paper {t1.paper_nona_distribute[k]:.2f}" for k in table_loads)
    + f". The optimum is mixed (strictly between 0 and 1) only at loads {band} with {background_mb:g} MB background "
    "transfers. The oblivious 50/50 mix is worse than the optimum in Nona's model at every load: "
    + "; ".join(f"{k} {x:.0%}" if np.isfinite(x) else f"{k} unstable (its transfers alone overload the link)"
                for k, x in t1.oblivious_excess.items()) + "."))

