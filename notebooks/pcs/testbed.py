# %% [markdown]
# # PCS Figs. 4-6 **in simulation** on the testbed trace
#
# The 101-app `trace_themis1_scaled.csv` on 16 simulated GPUs (linear scaling). These are *simulated* numbers, not the paper's GPU-testbed measurements: the paper's values are shown next to ours, not asserted.

# %% tags=["parameters"]
# Parameters (papermill); output_root empty = scratch run. Values = params.yaml, default profile.
output_root = ""
profile = "default"
gpus = 16
policies = ["AFS", "Tiresias", "FIFO", "Max-Min", "PCS-JCT", "PCS-bal", "PCS-pred"]

# %%
from schedlab.notebooks import Outputs, apply_profile
if profile != "default":  # a profile chosen in JupyterLab: its values from params.yaml replace the above
    apply_profile(globals(), "pcs/testbed", profile)

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt

from schedlab import io
from schedlab.pcs import metrics, experiments as X
from schedlab.pcs.generators import testbed_trace

out = Outputs(output_root, "pcs/testbed")

# %%
w = testbed_trace()
runs = X.run_many(w, X.policy_set(policies, "themis1_scaled"), gpus)
rows = []
for lab, df in runs.items():
    s = metrics.summary(df)
    rows.append({"policy": lab, **s, "p90_jct": metrics.percentile(metrics.jct(df), 90)})
tb = pd.DataFrame(rows)
tb["norm_avg_jct"] = tb.avg_jct / tb.avg_jct.min()
io.atomic_write_text(out.results("testbed.csv"), tb.to_csv(index=False))
tb

# %%
fig, ax = plt.subplots(1, 2, figsize=(9, 3))
for lab, df in runs.items():
    e = np.sort(metrics.pred_error(df)); ax[0].plot(e, np.linspace(0, 1, len(e)), label=lab)
    u = np.sort(metrics.unfairness(df)); ax[1].plot(u, np.linspace(0, 1, len(u)), label=lab)
ax[0].set_xlabel("Pred_err (%)"); ax[0].set_title("Fig. 4 (simulated)"); ax[0].set_xscale("symlog")
ax[1].set_xlabel("unfairness"); ax[1].set_title("Fig. 6a (simulated)"); ax[1].legend(fontsize=7)
fig.tight_layout()
io.savefig(fig, out.figures("testbed.png"))
