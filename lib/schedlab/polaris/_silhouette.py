"""Compiled inner loop of :func:`schedlab.polaris.scoring.point_silhouettes_many` (numba).

scikit-learn's ``silhouette_samples`` spends most of its time in a Python loop that calls
``np.bincount(labels, weights=D[i])`` once per row of every distance chunk. This loop does the
same sums, in the same order (column ``j = 0 .. n-1``, starting from 0.0), so the per-cluster
sums and hence the silhouettes are bit-identical to scikit-learn's for the same distance chunk.
It also takes several labellings at once, so a grid of clusterings on the same data computes each
distance chunk once.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def cluster_distance_sums(D: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """``out[i, c] = sum(D[i, j] for j with codes[j] == c)``, summed in column order.

    ``D`` is a ``(rows, n)`` chunk of distances, ``codes`` the ``n`` group codes in
    ``0 .. n_groups - 1``.
    """
    rows, n = D.shape
    out = np.zeros((rows, n_groups))
    for i in range(rows):
        acc = out[i]
        for j in range(n):
            acc[codes[j]] += D[i, j]
    return out
