# %% [markdown]
# # PCS Fig. 11: size and contention are poor predictors (workload-3)
#
# (a) Tiresias: job size vs Pred_err. (b) Max-Min: mean contention each job saw (`num_apps_seen_diff`). Default: one seed, 1000 generated apps. With `num_apps = 3000` the workload is exactly the authors' workload-3 for that seed (see `pcs/fig8`); with 1000 apps it is a different, statistically similar one. (Workload-1, `themis1`, is not used here: seed 4567 reproduces the sizes of the authors' `themis1_5seeds` baseline files but not their submit times.)

# %% tags=["parameters"]
# Parameters (papermill); output_root empty = scratch run. Values = params.yaml, default profile.
output_root = ""
profile = "default"
seed = 1954
num_apps = 1000
load = 1.2
gpus = 64

# %%
from schedlab.notebooks import Outputs, apply_profile
if profile != "default":  # a profile chosen in JupyterLab: its values from params.yaml replace the above
    apply_profile(globals(), "pcs/fig11", profile)

import pandas as pd
import matplotlib.pyplot as plt

from schedlab import io
from schedlab.pcs import metrics, experiments as X
from schedlab.pcs.generators import authors_rng, generate

out = Outputs(output_root, "pcs/fig11")

# %%
w = generate("gavel", num_apps, authors_rng(seed), load=load, gpus=gpus)
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
summary.T

# %%
fig, ax = plt.subplots(1, 2, figsize=(9, 3))
ax[0].scatter(t.service, t.pred_error, s=3); ax[0].set_xscale("log")
ax[0].set_xlabel("job size (GPU-s)"); ax[0].set_ylabel("Pred_err (%)"); ax[0].set_title("Tiresias")
ax[1].hist(c, bins=50); ax[1].set_xlabel("mean contention seen"); ax[1].set_title("Max-Min")
fig.tight_layout()
io.savefig(fig, out.figures("fig11.png"))
