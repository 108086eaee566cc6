"""SHAP explanation of the metadata classifier (Table V) with the ``shap`` package.

The authors (``polaris-slo-cloud/polaris-ai`` ``ml_data-profiling/alibaba_data-evaluation.ipynb``,
cells near the end) run ``shap.TreeExplainer(model).shap_values(X_test_csr[:10000])`` on the
XGBoost model and its sparse one-hot test matrix, and draw
``shap.summary_plot(shap_values, X_test_csr[:10000], feature_names=..., plot_type='bar')`` over all
classes (``Figures/NSDI_paper/SHAP_summaryplot_allclasses.pdf``). Here:

* :func:`shap_rows` picks the validation rows to explain: all of them (``n = 0``, the default
  profile) or a seeded uniform random sample of ``n`` (the ``paper`` profile: 10,000, the authors'
  count; their first 10,000 rows of a shuffled test split are a uniform sample too);
* :func:`mean_abs_shap` computes the values with ``shap.TreeExplainer`` chunk by chunk (bounded
  memory: ``rows x one-hot columns x profiles`` does not fit at the paper's size) and keeps the mean
  |SHAP| per one-hot column and profile, all the bar summary shows; ``method="xgboost"`` gets the
  same values from XGBoost's TreeSHAP on a copy of the booster reduced to the features its trees
  split on (about 20 times faster at the paper's size, where both take ~0.2 s a row otherwise);
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
from schedlab.progress import quiet_import


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
    shap = quiet_import("shap")  # its import pulls tqdm.auto, which warns in notebooks

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
    shap = quiet_import("shap")  # its import pulls tqdm.auto, which warns in notebooks

    Z = clf.transform_meta(meta).toarray().astype(float)
    Z[Z == 0] = np.nan
    explainer = shap.TreeExplainer(clf.model_)
    if not hasattr(explainer, "model") or not hasattr(explainer.model, "model_type"):
        raise RuntimeError(
            f"shap {shap.__version__}: TreeExplainer has no parsed model; cannot run its own TreeSHAP"
        )
    explainer.model.model_type = "internal"
    return _as_3d(explainer.shap_values(Z, check_additivity=False), Z.shape[0], Z.shape[1])


def cross_check(
    clf: ProfileClassifier, meta: pd.DataFrame, rows: int = 500, chunk_size: int = 50
) -> dict[str, float]:
    """Largest |difference| over the first ``rows`` rows between ``shap.TreeExplainer`` and
    ``pred_contribs``, and between shap's own TreeSHAP and ``pred_contribs``.

    Compared ``chunk_size`` rows at a time (each row's values do not depend on the others, so the
    maxima are the same): the three ``rows x one-hot columns x profiles`` arrays, dense and partly
    float64, would take about 17 GB at the paper's scale for 500 rows.
    """
    head = meta.iloc[:rows]
    if len(head) == 0:
        raise ValueError("cross_check needs at least one row")
    d_te = d_own = 0.0
    for start in range(0, len(head), chunk_size):
        part = head.iloc[start : start + chunk_size]
        ref = xgboost_contribs(clf, part)
        d_te = max(d_te, float(np.abs(shap_values(clf, part) - ref).max()))
        d_own = max(d_own, float(np.abs(shap_own_values(clf, part) - ref).max()))
    return {
        "rows": int(len(head)),
        "max_abs_diff_treeexplainer_vs_pred_contribs": d_te,
        "max_abs_diff_shap_own_vs_pred_contribs": d_own,
    }


def shap_rows(meta: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """The rows of ``meta`` to explain with SHAP: all of them, or a plain uniform random sample.

    The authors explain ``X_test_csr[:10000]``, the first 10,000 of the 15,080 rows of a test split
    that ``train_test_split`` had shuffled, i.e. a uniform random sample without replacement. Here
    the sample is drawn the same way (plain, **not** stratified by profile) from an explicit
    generator, so it depends on the notebook's ``seed`` only. The sampled rows keep their order in
    ``meta`` (the mean |SHAP| depends on the order only through rounding).

    Parameters
    ----------
    meta : pandas.DataFrame
        The validation rows (metadata columns), as returned by
        :func:`schedlab.polaris.pipeline.train_and_report`.
    n : int
        How many rows to explain (the pipeline notebook's ``shap_sample``). ``0`` or any
        ``n >= len(meta)`` means all rows; then ``meta`` is returned as is and ``rng`` is not used.
    rng : numpy.random.Generator
        The generator the sample is drawn from (e.g. ``np.random.default_rng([seed, 6])``); a
        generator is required so that no global random state is involved.

    Returns
    -------
    pandas.DataFrame
        ``min(n, len(meta))`` rows of ``meta`` (all rows if ``n == 0``), in ``meta``'s order.

    Raises
    ------
    ValueError
        If ``n`` is negative.
    TypeError
        If ``n`` is not an integer or ``rng`` is not a ``numpy.random.Generator``.

    Examples
    --------
    >>> meta = pd.DataFrame({"user": [f"u{i}" for i in range(10)]})
    >>> a = shap_rows(meta, 4, np.random.default_rng([0, 6]))
    >>> b = shap_rows(meta, 4, np.random.default_rng([0, 6]))
    >>> len(a), a.index.equals(b.index), a.index.is_monotonic_increasing
    (4, True, True)
    >>> shap_rows(meta, 0, np.random.default_rng(0)) is meta
    True
    >>> len(shap_rows(meta, 50, np.random.default_rng(0)))
    10
    >>> shap_rows(meta, -1, np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    ValueError: shap_sample must be >= 0 (0 = all validation rows), got -1
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"shap_sample must be an integer (0 = all validation rows), got {n!r}")
    if n < 0:
        raise ValueError(f"shap_sample must be >= 0 (0 = all validation rows), got {n}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"shap_rows needs a numpy.random.Generator, got {type(rng).__name__}")
    if n == 0 or n >= len(meta):
        return meta
    return meta.iloc[np.sort(rng.choice(len(meta), size=int(n), replace=False))]


def _split_feature_booster(booster):
    """A copy of ``booster`` that knows only the features its trees split on, and their indices.

    The trees, thresholds, default directions, node statistics and base scores are unchanged;
    only each split's feature index is renumbered (in the booster's JSON dump) to its position
    among the split features, and the feature count is set to theirs. On the columns ``used`` of
    the original input the copy gives the same predictions and the same TreeSHAP values, because
    a feature no tree splits on is on no path (its SHAP value is exactly 0 and it enters no other
    feature's value).
    """
    import json

    import xgboost as xgb

    model = json.loads(booster.save_raw("json"))
    learner = model["learner"]
    gbm = learner["gradient_booster"]
    if gbm.get("name") != "gbtree":
        raise ValueError(f"method='xgboost' supports gbtree boosters, not {gbm.get('name')!r}")
    trees = gbm["model"]["trees"]
    if any(any(t.get("split_type", [])) for t in trees):
        raise ValueError(
            "method='xgboost' supports numerical splits only (the one-hot model has no categorical ones)"
        )
    inner = [[f for f, left in zip(t["split_indices"], t["left_children"]) if left != -1] for t in trees]
    used = np.array(sorted({f for fs in inner for f in fs}), dtype=np.int64)
    pos = {int(f): i for i, f in enumerate(used)}
    n_used = str(max(len(used), 1))
    for t in trees:
        t["split_indices"] = [
            pos[f] if left != -1 else 0 for f, left in zip(t["split_indices"], t["left_children"])
        ]
        t["tree_param"]["num_feature"] = n_used
    learner["learner_model_param"]["num_feature"] = n_used
    learner["feature_names"], learner["feature_types"] = [], []
    small = xgb.Booster()
    small.load_model(bytearray(json.dumps(model).encode()))
    nthread = json.loads(booster.save_config()).get("learner", {}).get("generic_param", {}).get("nthread")
    if nthread not in (None, "", "0"):
        small.set_param({"nthread": int(nthread)})
    return small, used


def mean_abs_shap(
    clf: ProfileClassifier, meta: pd.DataFrame, chunk_size: int = 2_000, method: str = "shap"
) -> pd.DataFrame:
    """Mean |SHAP| per one-hot column (rows) and profile (columns), accumulated ``chunk_size``
    rows at a time.

    Parameters
    ----------
    clf : ProfileClassifier
        The fitted classifier.
    meta : pandas.DataFrame
        The rows to explain (e.g. :func:`shap_rows` of the validation rows).
    chunk_size : int
        Rows per call (bounds memory: a call returns ``rows x profiles x one-hot columns`` values
        with ``method="shap"``).
    method : {"shap", "xgboost"}
        ``"shap"`` (default): ``shap.TreeExplainer``, as the authors. ``"xgboost"``: XGBoost's own
        TreeSHAP (``pred_contribs``, the routine ``shap.TreeExplainer`` calls for an XGBoost model)
        on a copy of the booster reduced to the features its trees split on
        (:func:`_split_feature_booster`). XGBoost's CPU ``pred_contribs`` spends
        ``trees x (one-hot columns + 1)`` per row clearing and adding a full-width buffer for every
        tree; at the paper's scale (3,100 trees, 47,882 one-hot columns) that is about 0.2 s a row
        on this machine, for either method. On the split features only, the values are the same
        (the per-row values are the same floats; the unused columns are exactly 0), about 20 times
        faster there (1,578 split features); measured in ``benchmarks/results/polaris_paper_profile.txt``.
        The means can differ in the last float32 digits: this path sums in float64, the shap path in
        float32.

    Returns
    -------
    pandas.DataFrame
        One-hot columns x profiles (one column, the second profile, for a binary model).
    """
    if len(meta) == 0:
        raise ValueError("mean_abs_shap needs at least one row")
    if method not in ("shap", "xgboost"):
        raise ValueError(f"method must be 'shap' or 'xgboost', got {method!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if method == "shap":
        acc = None
        for start in range(0, len(meta), chunk_size):
            part = np.abs(shap_values(clf, meta.iloc[start : start + chunk_size])).sum(axis=0)
            acc = part if acc is None else acc + part
    else:
        import xgboost as xgb

        small, used = _split_feature_booster(clf.model_.get_booster())
        acc = np.zeros((len(clf.feature_names_), len(clf.classes_) if len(clf.classes_) > 2 else 1))
        if len(used):  # else no tree splits at all: every SHAP value is 0
            Z = clf.transform_meta(meta).tocsr()[:, used]
            for start in range(0, Z.shape[0], chunk_size):
                c = small.predict(xgb.DMatrix(Z[start : start + chunk_size]), pred_contribs=True)
                c = np.moveaxis(c[:, :, :-1], 1, -1) if c.ndim == 3 else c[:, :-1, None]
                acc[used] += np.abs(c.astype(np.float64)).sum(axis=0)
    classes = [str(c) for c in clf.classes_]
    columns = classes if acc.shape[1] == len(classes) else classes[-acc.shape[1] :]
    return pd.DataFrame(acc / len(meta), index=clf.feature_names_, columns=columns)


def summary_figure(mean_abs: pd.DataFrame, max_display: int = 20, *, label: str = ""):
    """shap's bar summary over all profiles (the authors' ``SHAP_summaryplot_allclasses``) from
    :func:`mean_abs_shap`. ``shap.summary_plot`` draws ``mean(|value|)`` per class; one row per
    class holding the means gives exactly those bars without keeping every row in memory."""
    import matplotlib.pyplot as plt

    shap = quiet_import("shap")  # its import pulls tqdm.auto, which warns in notebooks

    per_class = [mean_abs[[c]].to_numpy().T for c in mean_abs.columns]
    values = per_class if len(per_class) > 1 else per_class[0]
    fig = plt.figure()
    shap.summary_plot(
        values,
        feature_names=list(mean_abs.index),
        class_names=list(mean_abs.columns),
        plot_type="bar",
        max_display=max_display,
        show=False,
        plot_size=(9, 0.3 * max_display + 2),
    )
    fig = plt.gcf()
    ax = fig.axes[0]
    ax.set_xlabel("mean |SHAP value| (log-odds; stacked over profiles)")
    title = f"Classifier explanation (shap): top {min(max_display, len(mean_abs))} one-hot metadata features"
    ax.set_title(f"[{label}] {title}" if label else title, fontsize=9)
    if ax.get_legend() is not None:
        ax.legend(
            fontsize=6,
            title="profile",
            title_fontsize=6,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            frameon=False,
            ncol=1 + len(mean_abs.columns) // 16,
        )
    fig.tight_layout()
    return fig
