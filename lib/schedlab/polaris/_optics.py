"""Compiled OPTICS of :func:`schedlab.polaris.optics.optics_graph` for manhattan distances (numba).

scikit-learn's ``compute_optics_graph`` first asks ``NearestNeighbors`` for every point's
``min_samples``-th smallest distance (its core distance, the point itself counted at 0), then
visits the points one at a time: the unvisited point of least reachability next, its distances
to every unvisited point lowering their reachability. For manhattan every distance is one sum
over the features in order from 0.0, as both scikit-learn's ``ManhattanDistance`` and SciPy's
``cdist(..., "cityblock")`` sum it, so a distance has the same bits wherever it is computed, and
a k-th smallest value does not depend on how ties among neighbours are broken.

:func:`manhattan_optics` therefore computes each point's row of distances once, when it visits
the point, and takes both the point's core distance and its neighbours' reachability from it:
one pass over the distances instead of scikit-learn's two, with no copy of the rows. Rounding is
NumPy's ``around(x, 15)``: multiply by ``10**15``, ``rint``, divide. Euclidean distances come from
a BLAS product whose last bits depend on the operands' layout, so
:func:`~schedlab.polaris.optics.optics_graph` keeps scikit-learn's steps for them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from schedlab.polaris._distances import manhattan_tile

#: ``10.0 ** 15`` as NumPy's ``around(x, 15)`` forms it (1e9 times ten, six times: exact)
ROUNDING_SCALE = 1e15
#: columns per tile of a row of distances (8 KiB: the tile's partial sums stay in L1 over the features)
TILE_COLUMNS = 1024


@njit(cache=True)
def row_distances(XT: np.ndarray, i: int, d: np.ndarray) -> None:
    """``d[j]``: the manhattan distance from point ``i`` to point ``j``, for every ``j`` (a tile of
    columns at a time)."""
    n = XT.shape[1]
    x = XT[:, i].copy()
    for j0 in range(0, n, TILE_COLUMNS):
        manhattan_tile(x, XT, j0, min(TILE_COLUMNS, n - j0), d[j0:])


@njit(cache=True)
def _rounded(x: float) -> float:
    return np.rint(x * ROUNDING_SCALE) / ROUNDING_SCALE


@njit(cache=True)
def manhattan_optics(XT: np.ndarray, min_samples: int):
    """``(ordering, core_distances, reachability, predecessor)`` of scikit-learn's
    ``compute_optics_graph(X, min_samples=min_samples, metric="manhattan", max_eps=inf)``, from
    ``XT = X.T`` (features by points, C-ordered)."""
    n = XT.shape[1]
    core = np.empty(n)
    reach = np.full(n, np.inf)
    pred = np.full(n, -1, dtype=np.int64)
    ordering = np.zeros(n, dtype=np.int64)
    unvisited = np.ones(n, dtype=np.bool_)
    d = np.empty(n)
    for step in range(n):
        point = -1
        least = np.inf
        for j in range(n):  # the first unvisited point of least reachability, as np.argmin
            if unvisited[j] and (point < 0 or reach[j] < least):
                point, least = j, reach[j]
        unvisited[point] = False
        ordering[step] = point
        row_distances(XT, point, d)
        c = _rounded(np.partition(d, min_samples - 1)[min_samples - 1])
        core[point] = c
        for j in range(n):
            if unvisited[j]:
                r = _rounded(max(d[j], c))
                if r < reach[j]:
                    reach[j] = r
                    pred[j] = point
    return ordering, core, reach, pred
