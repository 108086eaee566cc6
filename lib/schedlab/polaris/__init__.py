"""PolarisProfiler (Morichetta et al., SOSE 2023) on the Alibaba PAI GPU trace.

Modules
-------
schema       table layouts of the upstream trace, the 17 features, workloads, paper constants
scoring      ACQUIRES (``scores_v1``), ``scores_v3``, CCPM, silhouette with noise
hopkins      Hopkins statistic in pyclustertend's convention (~0 clusterable)
calibration  the 800 real joined rows shipped by the authors
job_model    the synthetic trace's model of jobs, fitted on the 800 real rows
metadata     the synthetic trace's model of task names, users and groups (real and invented ids)
planted      known structure planted in the synthetic trace (the paper's top job, the authors' profiles)
synthetic    a calibrated synthetic trace in the exact upstream format (labelled synthetic)
realism      how far the synthetic trace is from real rows it was not calibrated on
ingest       DuckDB ingest of the ``pai_<table>.tar.gz`` archives, faithful / corrected joins, join plans
sampling     Table I stratified sampling, from a joined table or a join plan
grid         Tables III/IV clustering grid (HDBSCAN, OPTICS), cached, on :class:`schedlab.parallel.Executor`
classifier   Table V metadata classifier (one-hot + XGBoost), SHAP in chunks
duration     Figure 5 duration prediction and its two error readings
pipeline     the end-to-end pipeline's steps (notebook ``polaris/pipeline``, CLI ``schedlab polaris``)
panel        checks on the authors' published real data (notebook ``polaris/real_panel``)
plots        the figures
"""

from schedlab.polaris.schema import FEATURES, METADATA, WORKLOADS

__all__ = ["FEATURES", "METADATA", "WORKLOADS"]
