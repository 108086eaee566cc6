"""SHAP with the shap package: values equal XGBoost's pred_contribs and shap's own TreeSHAP."""

import numpy as np
import pytest

from schedlab.polaris import explain

from ._rows import fitted_profiles


@pytest.mark.parametrize("binary", [False, True])
def test_shap_equals_pred_contribs(binary):
    meta, clf = fitted_profiles(binary)
    check = explain.cross_check(clf, meta, rows=200)
    print(check)
    assert check["rows"] == 200
    assert check["max_abs_diff_treeexplainer_vs_pred_contribs"] <= 1e-4
    assert check["max_abs_diff_shap_own_vs_pred_contribs"] <= 1e-4
    vals = explain.shap_values(clf, meta.iloc[:50])
    assert vals.shape == (50, len(clf.feature_names_), 1 if binary else 3)
    assert np.abs(vals).max() > 0.1  # a non-trivial model: the check above compares real contributions


def test_mean_abs_shap_matches_chunked_pred_contribs_and_figure():
    meta, clf = fitted_profiles()
    ours = explain.mean_abs_shap(clf, meta, chunk_size=37)
    ref = clf.shap_mean_abs(meta, chunk_size=100)
    assert list(ours.index) == list(ref.index) and list(ours.columns) == ["0", "1", "2"]
    np.testing.assert_allclose(ours.to_numpy(), ref.to_numpy(), rtol=1e-4, atol=1e-5)
    # the user_* columns carry the profile (prof -> user), so they lead
    assert ours.sum(axis=1).idxmax().startswith("user_")
    fig = explain.summary_figure(ours, max_display=5, label="TEST")
    ax = fig.axes[0]
    assert "[TEST]" in ax.get_title() and "SHAP" in ax.get_xlabel()
    assert len(ax.get_yticklabels()) == 5
    with pytest.raises(ValueError, match="at least one row"):
        explain.mean_abs_shap(clf, meta.iloc[:0])
