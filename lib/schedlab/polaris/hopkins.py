"""Hopkins statistic in the convention of ``pyclustertend`` (used by the paper): ~0 clusterable.

``H = sum(w) / (sum(w) + sum(u))`` where ``w`` are distances from ``m`` sampled data points to
their nearest *other* data point and ``u`` distances from ``m`` points drawn uniformly in the
data's bounding box to their nearest data point; Euclidean distance (pyclustertend's default
Minkowski p=2). Uniform data gives ~0.5, clustered data tends to 0 (the paper reads >= 0.3 as
random). No ``d``-th powers, as in pyclustertend.

Why not pyclustertend itself (the obvious package for it): pyclustertend 1.10 pins ``pandas<3``,
which conflicts with this project's pandas, and it draws from numpy's global RNG (this project
passes explicit ``Generator`` objects). So it is not a dependency: this is an independent
implementation, tested against a brute-force one (``tests/polaris/test_hopkins.py``). A one-off
cross-check with pyclustertend installed ``--no-deps`` outside the environment, fed the same
draws, agreed to ~1e-17 on the 800 real rows and on uniform data
(``benchmarks/results/polaris_hopkins_pyclustertend.txt``).

Examples
--------
>>> rng = np.random.default_rng(0)
>>> X = np.vstack([rng.normal(0, .01, (200, 2)), rng.normal(5, .01, (200, 2))])
>>> hopkins(X, 50, rng=np.random.default_rng(1)) < 0.05
True
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree


def hopkins_draws(
    X: np.ndarray, sampling_size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The random parts of one Hopkins evaluation: sampled row indices and uniform points."""
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    if not 0 < sampling_size <= n:
        raise ValueError(f"sampling_size must be in 1..{n} (rows of the data), got {sampling_size}")
    idx = rng.choice(n, size=sampling_size, replace=False)
    lo, hi = X.min(axis=0), X.max(axis=0)
    uniform = lo + (hi - lo) * rng.random((sampling_size, d))
    return idx, uniform


def hopkins_from_draws(X: np.ndarray, idx: np.ndarray, uniform: np.ndarray) -> float:
    X = np.asarray(X, dtype=float)
    tree = cKDTree(X)
    w = tree.query(X[idx], k=2)[0][:, 1]  # nearest neighbour other than the point itself
    u = tree.query(uniform, k=1)[0]
    denom = w.sum() + u.sum()
    if denom == 0:
        raise ValueError("Hopkins statistic undefined: all distances are zero")
    return float(w.sum() / denom)


def hopkins(X: np.ndarray, sampling_size: int, *, rng: np.random.Generator) -> float:
    """Hopkins statistic of ``X`` (rows = points) with ``sampling_size`` probes."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or not np.isfinite(X).all():
        raise ValueError("hopkins needs a finite 2-d array")
    idx, uniform = hopkins_draws(X, sampling_size, rng)
    return hopkins_from_draws(X, idx, uniform)


def hopkins_panel(X: np.ndarray, sampling_sizes, *, rng: np.random.Generator, repeats: int = 5):
    """Hopkins at several sampling sizes, ``repeats`` seeded draws each: a DataFrame
    ``sampling_size, repeat, hopkins``."""
    import pandas as pd

    rows = [
        {"sampling_size": int(m), "repeat": r, "hopkins": hopkins(X, int(m), rng=rng)}
        for m in sampling_sizes
        for r in range(repeats)
    ]
    return pd.DataFrame(rows)
