"""Compiled inner loops of :func:`schedlab.polaris.scoring.point_silhouettes_many` (numba).

scikit-learn's ``silhouette_samples`` spends most of its time in a Python loop that calls
``np.bincount(labels, weights=D[i])`` once per row of every distance chunk. These loops do the
same sums, in the same order (column ``j = 0 .. n-1``, starting from 0.0), so the per-cluster
sums and hence the silhouettes are bit-identical to scikit-learn's. They also take several
labellings at once, so a grid of clusterings on the same data computes each distance once.

:func:`cluster_distance_sums` sums a distance chunk scikit-learn computed (any metric). For the
grid's two metrics, :func:`euclidean_cluster_sums` and :func:`manhattan_cluster_sums` compute
each distance with scikit-learn's (SciPy's) arithmetic inside the loop, eight rows by a tile of
columns at a time, so the distance matrix is never written: at 100,000 rows it is 80 GB per
pass, which scikit-learn writes and then reads again in each of its elementwise steps (euclidean
keeps one of them, the matrix product, as BLAS computes it; ``benchmarks/bench_polaris_silhouette_sums.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from schedlab.polaris._distances import manhattan_tile


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


#: rows whose per-group sums :func:`euclidean_cluster_sums` / :func:`manhattan_cluster_sums`
#: accumulate together (eight independent additions per column and group)
BLOCK_ROWS = 8
#: columns per tile of distances: 8 x 2048 doubles (128 KiB) stay in a core's L2 cache
TILE_COLUMNS = 2048


@njit(cache=True)
def _add_tile(acc: np.ndarray, D: np.ndarray, codes: np.ndarray, j0: int, width: int) -> None:
    """``acc[codes[l, j], r] += D[r, j - j0]`` for every labelling ``l`` and column ``j`` of the
    tile, columns in order (each sum keeps scikit-learn's order)."""
    for jj in range(width):
        j = j0 + jj
        d0, d1, d2, d3 = D[0, jj], D[1, jj], D[2, jj], D[3, jj]
        d4, d5, d6, d7 = D[4, jj], D[5, jj], D[6, jj], D[7, jj]
        for lab in range(codes.shape[0]):
            a = acc[codes[lab, j]]
            a[0] += d0
            a[1] += d1
            a[2] += d2
            a[3] += d3
            a[4] += d4
            a[5] += d5
            a[6] += d6
            a[7] += d7


@njit(cache=True)
def _store_block(out: np.ndarray, acc: np.ndarray, first: int, rows: int) -> None:
    for r in range(rows):
        for c in range(acc.shape[0]):
            out[first + r, c] = acc[c, r]


@njit(cache=True)
def _euclidean_tile(
    g: np.ndarray, xi: float, yy: np.ndarray, diagonal: int, j0: int, width: int, d: np.ndarray
):
    """``d[jj]``: scikit-learn's euclidean distance from a row (its product ``g`` with every row,
    its squared norm ``xi``) to row ``j0 + jj``; 0 at the row itself (column ``diagonal``)."""
    g, y = g[j0 : j0 + width], yy[j0 : j0 + width]
    for jj in range(width):
        t = -2.0 * g[jj] + xi
        t = t + y[jj]
        d[jj] = np.sqrt(max(t, 0.0))
    if 0 <= diagonal - j0 < width:
        d[diagonal - j0] = 0.0


@njit(cache=True)
def _block_sums(
    euclidean: bool,
    A: np.ndarray,
    xx: np.ndarray,
    yy: np.ndarray,
    first: int,
    XT: np.ndarray,
    codes: np.ndarray,
    n_groups: int,
) -> np.ndarray:
    """The loops both public kernels share: :data:`BLOCK_ROWS` rows of ``A`` by a tile of
    :data:`TILE_COLUMNS` columns at a time, each row's tile of distances filled by the metric's
    own arithmetic (``euclidean``: ``A`` is the product ``G``; else ``A`` holds the rows and
    ``XT`` all rows transposed), then added to the per-group sums in column order."""
    rows, n = A.shape[0], codes.shape[1]
    out = np.zeros((rows, n_groups))
    acc = np.zeros((n_groups, BLOCK_ROWS))
    D = np.zeros((BLOCK_ROWS, TILE_COLUMNS))
    for b in range(0, rows, BLOCK_ROWS):
        m = min(BLOCK_ROWS, rows - b)
        acc[:, :] = 0.0
        for j0 in range(0, n, TILE_COLUMNS):
            width = min(TILE_COLUMNS, n - j0)
            for r in range(BLOCK_ROWS):
                i = b + min(r, m - 1)  # a short last block repeats its last row (results unused)
                if euclidean:
                    _euclidean_tile(A[i], xx[i], yy, first + i, j0, width, D[r])
                else:
                    manhattan_tile(A[i], XT, j0, width, D[r])
            _add_tile(acc, D, codes, j0, width)
        _store_block(out, acc, b, m)
    return out


@njit(cache=True)
def euclidean_cluster_sums(
    G: np.ndarray, xx: np.ndarray, yy: np.ndarray, first: int, codes: np.ndarray, n_groups: int
) -> np.ndarray:
    """Per-group sums of euclidean distances from a chunk of rows to every row, for several
    labellings at once, without the distance matrix.

    ``G = X[first:first + rows] @ X.T`` (the product scikit-learn takes), ``xx`` / ``yy`` the
    squared norms of the chunk's rows and of all rows (``row_norms``). Each distance is
    scikit-learn's ``_euclidean_distances``: ``(-2 g + xx) + yy``, clipped at 0, 0 on the
    diagonal, square root. ``codes`` is ``(labellings, n)``, each labelling's groups numbered
    from its own offset, ``n_groups`` in all; returns ``(rows, n_groups)``, every sum over the
    columns in order as :func:`cluster_distance_sums` takes it, so the same bits.
    """
    return _block_sums(True, G, xx, yy, first, np.empty((0, 0)), codes, n_groups)


@njit(cache=True)
def manhattan_cluster_sums(Xc: np.ndarray, XT: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """:func:`euclidean_cluster_sums` for manhattan distances from the rows of ``Xc`` to the
    columns of ``XT`` (all rows, transposed), each summed over the features in order from 0.0
    as SciPy's ``cdist(..., "cityblock")`` sums them."""
    none = np.empty(0)
    return _block_sums(False, Xc, none, none, 0, XT, codes, n_groups)
