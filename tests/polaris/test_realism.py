"""Realism of the synthetic stand-in against real rows kept out of its calibration."""

import numpy as np
import pytest
from scipy import stats

from schedlab.polaris import realism
from schedlab.polaris.schema import FEATURES

#: Realism goal of the stand-in: AUC <= 0.7 for every workload with enough rows. Measured with this seed:
#: bert 0.53, ctr 0.61, inception 0.63, all 0.58 (fold-to-fold sd 0.06-0.11; inception has only
#: 17 real rows per fold); the bound is the goal itself, 0.07 above the worst measured workload
#: (the earlier copula generator, version v1, measures 0.76-0.81 here: see the benchmark).
AUC_BOUND = 0.70


@pytest.fixture(scope="module")
def table(calib_rows):
    return realism.realism_table(calib_rows, 5, np.random.default_rng(0))


def test_stand_in_is_hard_to_tell_from_held_out_rows(table):
    assert set(table.workload) == {"bert", "ctr", "inception", "all"}  # the workloads with >= 20 real rows
    assert (table.auc <= AUC_BOUND).all(), table[["workload", "auc"]]
    assert (table.ks_fail == 0).all(), table[["workload", "ks_max", "ks_fail"]]
    assert (table.n_synth == 10 * table.n_real).all()


def test_the_classifier_test_has_power(calib_rows):
    """The same test flags a copy of real rows with one feature scaled by 1.3."""
    rng = np.random.default_rng(1)
    X = calib_rows[list(FEATURES)].to_numpy(float)
    half = rng.permutation(len(X))
    a, b = X[half[:400]], X[half[400:]].copy()
    assert realism.classifier_auc(a, b, rng) < 0.65  # two halves of the real rows
    b[:, list(FEATURES).index("cpu_usage")] *= 1.3
    assert realism.classifier_auc(a, b, rng) > 0.75


def test_randomised_pit_is_uniform_on_ties():
    rng = np.random.default_rng(2)
    ref = rng.integers(0, 4, 5000).astype(float)
    u = realism.randomised_pit(rng.integers(0, 4, 2000).astype(float), ref, rng)
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    shifted = realism.randomised_pit(rng.integers(1, 5, 2000).astype(float), ref, rng)
    assert stats.kstest(shifted, "uniform").pvalue < 1e-6


def test_folds_are_stratified(calib_rows):
    folds = realism.fold_labels(calib_rows.workload, 5, np.random.default_rng(0))
    per = np.bincount(folds[(calib_rows.workload == "ctr").to_numpy()], minlength=5)
    assert per.max() - per.min() <= 1
    with pytest.raises(ValueError, match="k >= 2"):
        realism.fold_labels(calib_rows.workload, 1, np.random.default_rng(0))
