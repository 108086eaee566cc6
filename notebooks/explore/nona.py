# %% [markdown]
# # Explore Nona: where should a job's tasks run?
#
# *Nona* (Pit-Claudel et al., `../shared/papers/nona.txt`) decides, for every job class, how
# often to **split** a job's parallel branches over several servers and how often to keep them
# **together** on one. Splitting runs the branches in parallel but sends their data over the
# shared link; when the link is busy, the data waits in its queue. Nona predicts that wait with
# the Pollaczek-Khinchine (PK) formula, `phi = sum lambda S^2 / (2 (1 - rho))`, where `rho` is
# the link's load, and solves for the placement probabilities that minimise the average job
# completion time (JCT).
#
# This notebook solves Nona's optimisation (`schedlab.nona.explore.placement_summary`, built on
# `schedlab.nona.optimise.solve`) for the paper's motivating **job f** (section II, Fig. 1a,
# Table I): `sum` (1 ms) feeds two 10 ms determinants, one needs 200 MB of input, the other 20 MB,
# and `add` (1 ms) sums them; two servers, an 80 Gbps link shared with background transfers of
# 20 MB. Move the sliders and watch the optimal share of split placements, the link's load and
# wait, and the predicted JCT. Nothing is written to disk.

# %%
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from schedlab.nona import explore

# %% [markdown]
# ## One operating point
#
# `placement_summary(load, bandwidth_gbps, comm_load=...)`: `load` is the compute load (the
# fraction of time the servers are busy), `comm_load` the background load of the link (default:
# equal to `load`). The tables: every placement option with its optimal probability, the
# split/together share per subgraph, and the predicted JCT per class next to the JCT of f on one
# server with no transfer (22 ms).

# %%
point = explore.placement_summary(0.3, 80.0)
display(point.options.round(3), point.subgraphs.round(3), point.classes.round(3))
f = point.classes.set_index("job_class").loc["f"]
display(Markdown(
    f"At load {point.load:g} the link carries {point.rho:.0%} of its capacity and a transfer waits "
    f"{point.phi_ms:.3g} ms on average; Nona splits f with probability "
    f"{point.subgraphs.p_split.iloc[0]:.2f} and predicts a JCT of {f.predicted_jct_ms:.1f} ms "
    f"(one server: {f.one_server_jct_ms:.0f} ms)."))

# %% [markdown]
# ## The optimum against the load
#
# The curve below solves the problem at 19 loads (a fraction of a second each). Table I of the
# paper says Nona distributes f 80% of the time at low load, 50% at medium and 20% at high; the
# exact optimum here is all-or-nothing except in a narrow band of loads (the table1 notebook
# explains why).

# %%
loads = np.round(np.arange(0.05, 0.96, 0.05), 2)
curve = explore.split_curve(loads, 80.0)
fig = explore.plot_summary(point, curve)
plt.show()
curve[["load", "p_split", "rho", "phi_ms"]].round(3).T

# %% [markdown]
# ## Sliders
#
# Compute load, link bandwidth and the link's background load (tick "same as the compute
# load" to tie them, as in the paper's figures). The plot shows P(split) for every subgraph at
# the chosen point and along the load axis for the chosen bandwidth and background load.
# Needs `ipywidgets` (the `lab` extra: `pip install -e '.[lab]'`).

# %%
def show(load=0.5, bandwidth_gbps=80.0, background_link_load=0.5, same_as_load=True):
    comm = None if same_as_load else background_link_load
    s = explore.placement_summary(load, bandwidth_gbps, comm_load=comm)
    c = explore.split_curve(loads, bandwidth_gbps, comm_load=comm)
    explore.plot_summary(s, c)
    plt.show()
    cls = s.classes.set_index("job_class")
    display(Markdown(
        f"link load rho = **{s.rho:.3f}**, mean link wait phi = **{s.phi_ms:.3g} ms**; predicted JCT of f "
        f"**{cls.predicted_jct_ms['f']:.2f} ms** (one server: {cls.one_server_jct_ms['f']:.0f} ms)"))
    display(s.options.round(3))


try:
    import ipywidgets as widgets
except ImportError:  # the `lab` extra is not installed: the cells above still work
    widgets = None
    print("ipywidgets is not installed (pip install -e '.[lab]'); call show(load, bandwidth_gbps, ...) instead")
if widgets is not None:
    widgets.interact(
        show,
        load=widgets.FloatSlider(value=0.5, min=0.05, max=0.95, step=0.05, description="compute load",
                                 continuous_update=False),
        bandwidth_gbps=widgets.FloatLogSlider(value=80.0, base=10, min=0.7, max=3.0, step=0.05,
                                              description="link Gbps", continuous_update=False),
        background_link_load=widgets.FloatSlider(value=0.5, min=0.0, max=0.95, step=0.05,
                                                 description="background", continuous_update=False),
        same_as_load=widgets.Checkbox(value=True, description="background link load = compute load"),
    )

# %% [markdown]
# ## Other workloads
#
# `workload=("resnet18",)` solves the section IV workload of the named PipeDream models on 80
# servers (one profiled minibatch per query, 10 Gbps). Their cut edges carry tens to hundreds of
# MB, so the optimum keeps every subgraph together at every load: compare its table with job f's.

# %%
resnet = explore.placement_summary(0.5, 10.0, workload=("resnet18",))
display(resnet.subgraphs.round(3), resnet.classes.round(4))

# %% [markdown]
# ## Exercises
#
# 1. **The switch point.** With the bandwidth at 80 Gbps and the background load tied to the
#    compute load, find the load at which Nona stops splitting f every time, and the load at
#    which it never splits it. What is the mean link wait `phi` at each? Compare it with the
#    compute that splitting saves (10 ms run in parallel) and the 2 ms the 20 MB transfer takes.
# 2. **Why keep it together at high load?** Untick the box, set the compute load to 0.5 and
#    raise only the background link load. Explain with the PK formula why "all together" wins
#    when the link is busy, although the servers are not busier.
# 3. **Buy bandwidth.** At compute load 0.8, how much bandwidth is needed before splitting pays
#    again? Why does the answer scale the way it does (transfer time `S = b / mu` and the PK
#    wait's `S^2`)?
# 4. **Congestion-oblivious schedulers** split f half the time along the 200 MB branch
#    (allocation 1 of Fig. 1b). Using `explore.placement_summary(...).options`, say which
#    allocation Nona picks when it splits, and estimate the link load a 50/50 mix of
#    allocations 1 and 2 would add at load 0.5 (hint: 200 MB at 80 Gbps is 20 ms).
