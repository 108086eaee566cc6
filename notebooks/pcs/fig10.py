# %% [markdown]
# # PCS Fig. 10a/b: job-size estimation error
#
# PCS (PCS-JCT config) and FIFO avg Pred_err, and PCS avg JCT against AFS without error, for a size error of p % (each job's size seen as `size*U(1-p,1+p)`, drawn once at arrival from a seeded generator; the authors' draw was unseeded). Default: trace 0e4a51, first 1001 jobs.
#
# **This is our own sensitivity run, not a reproduction:** the workload behind the paper's Fig. 10 is not identified (the authors' `fig10_error_analysis_*.txt` summaries name no trace, and no config or seed reproduces them), and their error draws were unseeded. Compare shapes, not values.

# %% tags=["parameters"]
# Parameters (papermill); output_root empty = scratch run. Values = params.yaml, default profile.
output_root = ""
profile = "default"
errors = [0, 5, 10, 20, 30, 40]
num_jobs = 1001
gpus = 64
seed = 0

# %%
from schedlab.notebooks import Outputs, apply_profile
if profile != "default":  # a profile chosen in JupyterLab: its values from params.yaml replace the above
    apply_profile(globals(), "pcs/fig10", profile)

import pandas as pd
import matplotlib.pyplot as plt

from schedlab import io
from schedlab.pcs import metrics, experiments as X
from schedlab.pcs.artifacts import trace_0e4a51

out = Outputs(output_root, "pcs/fig10")

# %%
w = trace_0e4a51(num_jobs)
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
f10

# %%
fig, ax = plt.subplots(1, 2, figsize=(9, 3))
for lab in ["PCS-JCT", "FIFO"]:
    d = f10[f10.policy == lab]
    ax[0].plot(d.p_error, d.avg_pred_error, "o-", label=lab)
d = f10[f10.policy == "PCS-JCT"]
ax[1].plot(d.p_error, d.jct_vs_afs, "o-")
ax[0].set_xlabel("job-size error (%)"); ax[0].set_ylabel("avg Pred_err (%)"); ax[0].legend()
ax[1].set_xlabel("job-size error (%)"); ax[1].set_ylabel("PCS avg JCT / AFS (no error)")
fig.tight_layout()
io.savefig(fig, out.figures("fig10.png"))
