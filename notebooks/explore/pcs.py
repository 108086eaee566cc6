# %% [markdown]
# # Explore PCS: tune the WFQ classes yourself
#
# *PCS* (Bin Faisal et al., `../shared/papers/pcs.txt`) gives every job a predicted completion
# time when it arrives and tries to keep that promise. The *prediction error* of a job is
# `Pred_err = |JCT_true − JCT_pred| / JCT_pred` (in %): how far its real completion time (JCT)
# ends up from the promise, because jobs that arrived later took GPUs away from it.
#
# PCS schedules with **weighted fair queueing (WFQ)**:
#
# * jobs are put into a few **classes** by size (GPU-seconds of work): class 0 holds the jobs up
#   to the first **threshold**, class 1 up to the second, and so on;
# * each class is guaranteed a share of the GPUs proportional to its **weight**; GPUs a class
#   does not need go to the others;
# * inside a class, jobs run **first come, first served** (FIFO).
#
# One class is plain FIFO: nobody overtakes anybody, so predictions are exact, but short jobs
# wait behind long ones. More classes with a big weight on the small-job classes approach
# "shortest job first": fast on average, but a newly arrived small job delays the big ones,
# which breaks their promises. The paper's **Pareto front** (Fig. 3) is the set of
# configurations for which no other is both faster and more predictable.
#
# Below, every change of a slider simulates the first 300 jobs of the Philly trace 0e4a51 on 64
# GPUs with predictions (`schedlab.pcs.explore`, on the compiled simulator) and puts your
# configuration (the star) on the plane **average JCT vs average Pred_err**, next to FIFO,
# Tiresias (shortest remaining service first), AFS, Max-Min, Themis, the paper's three PCS
# configurations and, if the pipeline's Fig. 3 stage has run, its Pareto front. Nothing is
# written to disk.

# %%
import time

import matplotlib.pyplot as plt
from IPython.display import Image, Markdown, display

from schedlab.pcs import explore

e = explore.Explorer.load()  # the trace, 8 reference simulations (a few seconds) and the stored front
print(e.front_note)
refs = e.references.assign(norm_avg_jct=e.references.avg_jct_s / e.best_avg_jct())
refs.round(2)

# %% [markdown]
# ## One configuration by hand
#
# `explore.start_config` decodes the paper's PCS-JCT parameters on these 300 jobs: the class
# thresholds come from the spread of job sizes, the weights fall off exponentially with the
# class. The table shows each class's size range, weight, and the share of jobs and of work it
# receives. `e.update(thresholds, weights, zeta_min, delta)` simulates a configuration and
# remembers it; `e.plot()` draws everything tried so far.

# %%
start = explore.start_config(e.workload)
display(explore.class_table(e.workload, start).round(4))
point = e.update(list(start.thresholds[:-1]), [float(r) for r in start.rates], start.zeta_min, start.delta)
fig = e.plot()
plt.show()
Markdown(f"{point.num_classes} classes: avg JCT **{point.avg_jct_s / e.best_avg_jct():.2f}×** the best reference, "
         f"avg Pred_err **{point.avg_pred_error:.2f} %**, p99 **{point.p99_pred_error:.1f} %** "
         f"(simulated in {point.seconds * 1000:.0f} ms).")

# %% [markdown]
# ## Sliders
#
# *classes* picks how many classes are used (only the first `classes − 1` thresholds and the
# first `classes` weights count). Thresholds are upper bounds in GPU-seconds and must increase;
# weights are relative (normalised to shares). *ζ_min* caps the GPUs a job gets by how well it
# uses them (0.01: no cap; higher: wasteful jobs get fewer GPUs), *δ* is how fast that cap is
# relaxed when GPUs are left over. The faded stars are your last tries. Needs `ipywidgets`
# (the `lab` extra: `pip install -e '.[lab]'`); without it, call `show(...)` yourself.

# %%
def show(classes=3, t1=529.0, t2=51490.0, t3=2772143.0, w1=0.91, w2=0.08, w3=0.01, w4=0.001,
         zeta_min=0.01, delta=0.1):
    thresholds, weights = [t1, t2, t3][:classes - 1], [w1, w2, w3, w4][:classes]
    t0 = time.perf_counter()
    try:
        p = e.update(thresholds, weights, zeta_min, delta)
    except ValueError as err:  # ConfigError is a ValueError: say what is wrong, draw nothing new
        display(Markdown(f"**Not a valid configuration:** {err}"))
        return
    png = e.png()
    display(Image(png))
    display(Markdown(
        f"avg JCT **{p.avg_jct_s / e.best_avg_jct():.2f}×** the best reference "
        f"({p.avg_jct_s / 3600:.1f} h), avg Pred_err **{p.avg_pred_error:.2f} %**, p99 **{p.p99_pred_error:.1f} %**; "
        f"refreshed in {(time.perf_counter() - t0) * 1000:.0f} ms (simulation {p.seconds * 1000:.0f} ms)"))
    display(explore.class_table(e.workload, explore.wfq_config(thresholds, weights, zeta_min, delta)).round(4))


try:
    import ipywidgets as widgets
except ImportError:  # the `lab` extra is not installed: the cells above still work
    widgets = None
    print("ipywidgets is not installed (pip install -e '.[lab]'); call show(classes, t1, ...) instead")
if widgets is not None:
    size = dict(base=10, min=1.0, max=7.0, step=0.05, continuous_update=False, readout_format=".3g")
    share = dict(min=0.001, max=1.0, step=0.001, continuous_update=False, readout_format=".3f")
    widgets.interact(
        show,
        classes=widgets.IntSlider(value=3, min=1, max=4, description="classes", continuous_update=False),
        t1=widgets.FloatLogSlider(value=529.0, description="t1 (GPU-s)", **size),
        t2=widgets.FloatLogSlider(value=51490.0, description="t2 (GPU-s)", **size),
        t3=widgets.FloatLogSlider(value=2772143.0, description="t3 (GPU-s)", **size),
        w1=widgets.FloatSlider(value=0.91, description="weight 1", **share),
        w2=widgets.FloatSlider(value=0.08, description="weight 2", **share),
        w3=widgets.FloatSlider(value=0.01, description="weight 3", **share),
        w4=widgets.FloatSlider(value=0.001, description="weight 4", **share),
        zeta_min=widgets.FloatSlider(value=0.01, min=0.0, max=0.95, step=0.01, description="ζ_min",
                                     continuous_update=False),
        delta=widgets.FloatSlider(value=0.1, min=0.01, max=1.0, step=0.01, description="δ",
                                  continuous_update=False),
    )

# %% [markdown]
# ## Exercises
#
# 1. **FIFO is one class.** Set `classes = 1`. Where does the star land, and why is the
#    prediction error exactly 0 % with ζ_min = 0.01? Now raise ζ_min to 0.5: the error is no
#    longer 0. What changed in how GPUs are handed out (hint: a job in front of the queue no
#    longer gets all the GPUs it asks for)?
# 2. **Approach the fast end.** With 4 classes, put almost all the weight on class 1 and move the
#    thresholds. How close to Tiresias's avg JCT can you get, and what happens to the avg and p99
#    Pred_err on the way? Explain with "a later small job overtakes an earlier big one".
# 3. **Beat the paper.** Find a configuration that is both faster *and* more predictable than
#    the paper's PCS-bal point on these jobs (or argue from the Pareto front why you cannot).
#    Use `explore.class_table` to describe your configuration in words.
# 4. **Too many classes.** The paper (§3.1) warns that many classes make classes empty more
#    often, so a job may first get more than its guaranteed share and lose it later. With the
#    weights fixed, compare 2, 3 and 4 classes: does Pred_err grow with the number of classes?
#    Which job sizes does each class hold?
