"""SHAP explanation of the metadata classifier (Table V) with the ``shap`` package.

The authors (``polaris-slo-cloud/polaris-ai`` ``ml_data-profiling/alibaba_data-evaluation.ipynb``,
cells near the end) run ``shap.TreeExplainer(model).shap_values(X_test_csr[:10000])`` on the
XGBoost model and its sparse one-hot test matrix, and draw
``shap.summary_plot(shap_values, X_test_csr[:10000], feature_names=..., plot_type='bar')`` over all
classes (``Figures/NSDI_paper/SHAP_summaryplot_allclasses.pdf``). Here:

* :func:`mean_abs_shap` computes the values with ``shap.TreeExplainer`` chunk by chunk (bounded
  memory: ``rows x one-hot columns x profiles`` does not fit at the paper's size) and keeps the mean
  |SHAP| per one-hot column and profile, all the bar summary shows;
* :func:`summary_figure` draws that summary with ``shap.summary_plot(..., plot_type="bar")``;
* :func:`cross_check` compares, row by row, three computations: ``shap.TreeExplainer`` (which for an
  XGBoost model calls XGBoost's own C++ TreeSHAP, ``pred_contribs``), XGBoost's ``pred_contribs``
  called directly, and shap's *own* TreeSHAP (its C extension on shap's parsed copy of the trees),
  the independent one. XGBoost reads the absent entries of the sparse one-hot matrix as *missing*
  (default branch), so shap's own algorithm gets a dense copy with absent entries as NaN; zeros
  would be a different input (values differ by O(1)).

Examples
--------
>>> vals = mean_abs_shap(clf, val)                      # doctest: +SKIP
>>> fig = summary_figure(vals, label="SYNTHETIC")        # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from schedlab.polaris.classifier import ProfileClassifier


def _as_3d(values: np.ndarray, n_rows: int, n_features: int) -> np.ndarray:
    """``(rows, features, classes)`` from shap's / XGBoost's per-output layouts (one output for
    two profiles: XGBoost's binary model explains the log-odds of the second)."""
    values = np.asarray(values)
    if values.ndim == 2:
        values = values[:, :, None]
    if values.shape[:2] != (n_rows, n_features):
        raise ValueError(f"SHAP values of shape {values.shape}, expected ({n_rows}, {n_features}, classes)")
    return values


def shap_values(clf: ProfileClassifier, meta: pd.DataFrame) -> np.ndarray:
    """``shap.TreeExplainer(model).shap_values`` on the sparse one-hot rows of ``meta``, as the
    authors: an array ``(rows, one-hot columns, outputs)``."""
    import shap

    Z = clf.transform_meta(meta)
    return _as_3d(shap.TreeExplainer(clf.model_).shap_values(Z), Z.shape[0], Z.shape[1])


def xgboost_contribs(clf: ProfileClassifier, meta: pd.DataFrame) -> np.ndarray:
    """XGBoost's ``pred_contribs=True`` on the same rows, bias column dropped, same layout as
    :func:`shap_values`."""
    import xgboost as xgb

    Z = clf.transform_meta(meta)
    c = clf.model_.get_booster().predict(xgb.DMatrix(Z), pred_contribs=True)
    c = np.moveaxis(c[:, :, :-1], 1, -1) if c.ndim == 3 else c[:, :-1]
    return _as_3d(c, Z.shape[0], Z.shape[1])


def shap_own_values(clf: ProfileClassifier, meta: pd.DataFrame) -> np.ndarray:
    """shap's own TreeSHAP (its C extension on its parsed copy of the XGBoost trees), not the
    XGBoost shortcut ``shap.TreeExplainer`` takes: dense input, absent one-hot entries as NaN.

    shap takes the shortcut whenever the model type is not ``"internal"``; setting that field of
    the explainer's parsed model is how shap's own algorithm is reached (the tests fail if a shap
    release changes this). Dense: use on a few thousand rows at most.
    """
    import shap

    Z = clf.transform_meta(meta).toarray().astype(float)
    Z[Z == 0] = np.nan
    explainer = shap.TreeExplainer(clf.model_)
    if not hasattr(explainer, "model") or not hasattr(explainer.model, "model_type"):
        raise RuntimeError(f"shap {shap.__version__}: TreeExplainer has no parsed model; cannot run its own TreeSHAP")
    explainer.model.model_type = "internal"
    return _as_3d(explainer.shap_values(Z, check_additivity=False), Z.shape[0], Z.shape[1])


def cross_check(clf: ProfileClassifier, meta: pd.DataFrame, rows: int = 500) -> dict[str, float]:
    """Largest |difference| over the first ``rows`` rows between ``shap.TreeExplainer`` and
    ``pred_contribs``, and between shap's own TreeSHAP and ``pred_contribs``."""
    head = meta.iloc[:rows]
    ref = xgboost_contribs(clf, head)
    return {"rows": int(len(head)),
            "max_abs_diff_treeexplainer_vs_pred_contribs": float(np.abs(shap_values(clf, head) - ref).max()),
            "max_abs_diff_shap_own_vs_pred_contribs": float(np.abs(shap_own_values(clf, head) - ref).max())}


def mean_abs_shap(clf: ProfileClassifier, meta: pd.DataFrame, chunk_size: int = 2_000) -> pd.DataFrame:
    """Mean |SHAP| (``shap.TreeExplainer``) per one-hot column (rows) and profile (columns),
    accumulated ``chunk_size`` rows at a time."""
    if len(meta) == 0:
        raise ValueError("mean_abs_shap needs at least one row")
    acc = None
    for start in range(0, len(meta), chunk_size):
        part = np.abs(shap_values(clf, meta.iloc[start:start + chunk_size])).sum(axis=0)
        acc = part if acc is None else acc + part
    classes = [str(c) for c in clf.classes_]
    columns = classes if acc.shape[1] == len(classes) else classes[-acc.shape[1]:]
    return pd.DataFrame(acc / len(meta), index=clf.feature_names_, columns=columns)


def summary_figure(mean_abs: pd.DataFrame, max_display: int = 20, *, label: str = ""):
    """shap's bar summary over all profiles (the authors' ``SHAP_summaryplot_allclasses``) from
    :func:`mean_abs_shap`. ``shap.summary_plot`` draws ``mean(|value|)`` per class; one row per
    class holding the means gives exactly those bars without keeping every row in memory."""
    import matplotlib.pyplot as plt
    import shap

    per_class = [mean_abs[[c]].to_numpy().T for c in mean_abs.columns]
    values = per_class if len(per_class) > 1 else per_class[0]
    fig = plt.figure()
    shap.summary_plot(values, feature_names=list(mean_abs.index), class_names=list(mean_abs.columns),
                      plot_type="bar", max_display=max_display, show=False, plot_size=(9, 0.3 * max_display + 2))
    fig = plt.gcf()
    ax = fig.axes[0]
    ax.set_xlabel("mean |SHAP value| (log-odds; stacked over profiles)")
    title = f"Classifier explanation (shap): top {min(max_display, len(mean_abs))} one-hot metadata features"
    ax.set_title(f"[{label}] {title}" if label else title, fontsize=9)
    if ax.get_legend() is not None:
        ax.legend(fontsize=6, title="profile", title_fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  frameon=False, ncol=1 + len(mean_abs.columns) // 16)
    fig.tight_layout()
    return fig
