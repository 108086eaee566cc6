"""The rows SHAP explains (``explain.shap_rows``, the pipeline's ``shap_sample``) and
``mean_abs_shap(method="xgboost")`` (XGBoost's TreeSHAP on the split-feature booster)."""

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import explain

from ._rows import fitted_profiles, profile_meta


def _meta(n=300, seed=1):
    return profile_meta(n, seed, first_index=1000)


def test_sample_is_deterministic_sized_and_ordered():
    meta, _ = _meta()
    a = explain.shap_rows(meta, 100, np.random.default_rng([0, 6]))
    b = explain.shap_rows(meta, 100, np.random.default_rng([0, 6]))
    c = explain.shap_rows(meta, 100, np.random.default_rng([1, 6]))
    assert len(a) == 100 and a.index.is_unique
    pd.testing.assert_frame_equal(a, b)
    assert not a.index.equals(c.index)  # another seed, another sample
    assert a.index.isin(meta.index).all() and a.index.is_monotonic_increasing  # rows of meta, in its order
    pd.testing.assert_frame_equal(a, meta.loc[a.index])


@pytest.mark.parametrize("n", [0, 300, 301, 10_000])
def test_zero_or_at_least_all_rows_means_all_rows(n):
    meta, _ = _meta()
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    out = explain.shap_rows(meta, n, rng)
    assert out is meta
    assert rng.bit_generator.state == state  # the generator is not touched


def test_numpy_integer_is_accepted():
    meta, _ = _meta()
    assert len(explain.shap_rows(meta, np.int64(7), np.random.default_rng(0))) == 7


@pytest.mark.parametrize("n", [-1, -10_000])
def test_negative_raises_naming_the_parameter(n):
    meta, _ = _meta()
    with pytest.raises(ValueError, match=r"shap_sample must be >= 0"):
        explain.shap_rows(meta, n, np.random.default_rng(0))


@pytest.mark.parametrize("n", [2.5, "10", True, None])
def test_non_integer_raises(n):
    meta, _ = _meta()
    with pytest.raises(TypeError, match="shap_sample must be an integer"):
        explain.shap_rows(meta, n, np.random.default_rng(0))


def test_needs_an_explicit_generator():
    meta, _ = _meta()
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        explain.shap_rows(meta, 10, 0)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        explain.shap_rows(meta, 10, np.random.RandomState(0))


@pytest.fixture(scope="module")
def fitted():
    return fitted_profiles(first_index=1000)


def test_mean_abs_shap_of_all_row_sample_equals_full_set(fitted):
    meta, clf = fitted
    full = explain.mean_abs_shap(clf, meta, chunk_size=64)
    for n in (0, len(meta), 5 * len(meta)):
        pd.testing.assert_frame_equal(
            explain.mean_abs_shap(clf, explain.shap_rows(meta, n, np.random.default_rng(3)), chunk_size=64),
            full,
        )


def test_mean_abs_shap_of_a_sample_is_its_rows(fitted):
    meta, clf = fitted
    part = explain.shap_rows(meta, 120, np.random.default_rng([0, 6]))
    pd.testing.assert_frame_equal(
        explain.mean_abs_shap(clf, part, chunk_size=64),
        explain.mean_abs_shap(clf, meta.loc[part.index], chunk_size=64),
    )


# Tolerance of method="xgboost" against method="shap": the per-row values are the same floats
# (checked exactly below); the means differ only because the shap path sums float32 values row by
# row, the xgboost path in float64. 1e-5 absolute on values up to ~2 bounds that rounding.
ATOL = 1e-5


@pytest.mark.parametrize("binary", [False, True])
def test_xgboost_method_equals_shap(binary):
    meta, clf = fitted_profiles(binary, first_index=1000)
    ref = explain.mean_abs_shap(clf, meta, chunk_size=64)
    ours = explain.mean_abs_shap(clf, meta, chunk_size=64, method="xgboost")
    assert list(ours.index) == list(ref.index) and list(ours.columns) == list(ref.columns)
    np.testing.assert_allclose(ours.to_numpy(), ref.to_numpy(), rtol=0, atol=ATOL)
    assert ref.to_numpy().max() > 0.1  # a non-trivial model
    assert (ours.to_numpy() == 0).any()  # columns no tree splits on: exactly 0, as with shap


def test_split_feature_booster_gives_identical_values(fitted):
    import xgboost as xgb

    meta, clf = fitted
    small, used = explain._split_feature_booster(clf.model_.get_booster())
    assert 0 < len(used) < len(clf.feature_names_)
    Z = clf.transform_meta(meta).tocsr()
    full = explain.xgboost_contribs(clf, meta)
    c = np.moveaxis(small.predict(xgb.DMatrix(Z[:, used]), pred_contribs=True)[:, :, :-1], 1, -1)
    np.testing.assert_array_equal(c, full[:, used])  # same floats, not just close
    assert not np.delete(full, used, axis=1).any()  # the columns left out are 0 for every row
    np.testing.assert_array_equal(
        small.predict(xgb.DMatrix(Z[:, used]), output_margin=True),
        clf.model_.get_booster().predict(xgb.DMatrix(Z), output_margin=True),
    )


def test_bad_method_and_chunk(fitted):
    meta, clf = fitted
    with pytest.raises(ValueError, match="method must be"):
        explain.mean_abs_shap(clf, meta, method="kernel")
    with pytest.raises(ValueError, match="chunk_size"):
        explain.mean_abs_shap(clf, meta, chunk_size=0, method="xgboost")
    with pytest.raises(ValueError, match="at least one row"):
        explain.mean_abs_shap(clf, meta.iloc[:0], method="xgboost")


def test_cross_check_in_chunks_gives_the_same_maxima(fitted):
    meta, clf = fitted
    whole = explain.cross_check(clf, meta, rows=120, chunk_size=120)
    assert explain.cross_check(clf, meta, rows=120, chunk_size=17) == whole
    assert whole["rows"] == 120 and whole["max_abs_diff_shap_own_vs_pred_contribs"] <= 1e-4
    with pytest.raises(ValueError, match="at least one row"):
        explain.cross_check(clf, meta, rows=0)
