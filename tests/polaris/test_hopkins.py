import numpy as np
import pytest

from schedlab.polaris import hopkins


def slow_hopkins(X, idx, uniform):
    """Brute force with explicit loops (independent of the k-d tree)."""
    w = []
    for i in idx:
        w.append(min(np.sqrt(((X[i] - X[j]) ** 2).sum()) for j in range(len(X)) if j != i))
    u = [min(np.sqrt(((p - x) ** 2).sum()) for x in X) for p in uniform]
    return sum(w) / (sum(w) + sum(u))


def test_matches_brute_force():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0, 1, (60, 3)), rng.normal(6, 0.5, (40, 3))])
    idx, uni = hopkins.hopkins_draws(X, 25, np.random.default_rng(5))
    assert hopkins.hopkins_from_draws(X, idx, uni) == pytest.approx(slow_hopkins(X, idx, uni), rel=1e-12)
    # the public function uses the same draws for the same seed
    assert hopkins.hopkins(X, 25, rng=np.random.default_rng(5)) == pytest.approx(slow_hopkins(X, idx, uni))


def test_convention_uniform_half_clustered_zero():
    rng = np.random.default_rng(0)
    U = rng.random((3000, 2))
    vals = [hopkins.hopkins(U, 200, rng=rng) for _ in range(5)]
    assert 0.4 < np.mean(vals) < 0.6
    C = np.vstack([rng.normal(c, 0.001, (500, 2)) for c in (0, 1, 2)])
    assert hopkins.hopkins(C, 200, rng=rng) < 0.05


def test_bad_input():
    with pytest.raises(ValueError, match="sampling_size"):
        hopkins.hopkins(np.zeros((5, 2)) + np.arange(5)[:, None], 10, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="finite"):
        hopkins.hopkins(np.array([[np.nan, 1.0], [1.0, 2.0]]), 1, rng=np.random.default_rng(0))
