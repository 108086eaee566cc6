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
    ``0 .. n_groups - 1``. Rows go four at a time through the columns: each row's sums still add
    ``j = 0 .. n-1`` in order, but four independent additions per column hide the latency of one
    (a row alone waits on its previous addition whenever neighbouring columns share a group, as
    the noise group often does): 3-4x faster, same values.
    """
    rows, n = D.shape
    out = np.zeros((rows, n_groups))
    i = 0
    while i + 4 <= rows:
        a0, a1, a2, a3 = out[i], out[i + 1], out[i + 2], out[i + 3]
        for j in range(n):
            c = codes[j]
            a0[c] += D[i, j]
            a1[c] += D[i + 1, j]
            a2[c] += D[i + 2, j]
            a3[c] += D[i + 3, j]
        i += 4
    for r in range(i, rows):
        acc = out[r]
        for j in range(n):
            acc[codes[j]] += D[r, j]
    return out


@njit(cache=True)
def cluster_distance_sums_rowwise(D: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """:func:`cluster_distance_sums` one row at a time (what it did before rows went four at a
    time): the reference its tests and ``benchmarks/bench_polaris_silhouette_sums.py`` compare
    it with."""
    rows, n = D.shape
    out = np.zeros((rows, n_groups))
    for i in range(rows):
        acc = out[i]
        for j in range(n):
            acc[codes[j]] += D[i, j]
    return out
