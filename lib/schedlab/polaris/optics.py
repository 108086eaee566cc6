"""OPTICS as scikit-learn computes it, without its per-point overhead.

The grid runs ``sklearn.cluster.OPTICS(min_samples=m, metric=metric)`` (the authors' call) on
every transform and metric. scikit-learn's ``compute_optics_graph`` visits the points one at a
time, and for each it asks ``NearestNeighbors.radius_neighbors`` for every point within
``max_eps = inf`` (all of them), validates its arguments and calls ``pairwise_distances``: at
20,000 rows about 80 % of a run is that bookkeeping, not distances
(``benchmarks/bench_polaris_optics.py``).

:func:`optics_graph` is the same loop with the bookkeeping taken out. It keeps every operation
that decides a number: the core distances come from the same ``NearestNeighbors`` query, each
step computes the distances from the visited point to the unvisited ones, in the order
scikit-learn lists them, with the same arithmetic as scikit-learn's ``pairwise_distances``
(``-2 x.y + |x|^2 + |y|^2``, clipped at 0, square root, for euclidean), rounds as scikit-learn
does and breaks ties the same way. Manhattan runs compiled (:mod:`schedlab.polaris._optics`):
each manhattan distance is a sum of its own, so one pass over the distances gives both the core
distances and the reachability, with the same bits. :func:`optics_labels` then extracts the
clusters with scikit-learn's own ``cluster_optics_xi``. The ordering, core distances,
reachability, predecessors and labels equal scikit-learn's bit for bit
(``tests/polaris/test_optics.py`` compares them on data with many tied distances, as the
trace's discrete features give).

Examples
--------
>>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2], [20.0]])
>>> optics_labels(X, min_samples=2, metric="euclidean").tolist()  # as OPTICS(min_samples=2).fit_predict(X)
[0, 0, 0, 1, 1, 1, 1]
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from schedlab.polaris._optics import manhattan_optics

#: the metrics :func:`optics_graph` computes as scikit-learn does (the grid's two)
METRICS = ("euclidean", "manhattan")
#: scikit-learn rounds core and reachability distances to this many decimals
_DECIMALS = np.finfo(np.float64).precision


def _distances_from(X: np.ndarray, point: int, rows: np.ndarray, metric: str) -> np.ndarray:
    """Distances from ``X[point]`` to ``X[rows]``, computed as ``sklearn.metrics.pairwise_distances``
    computes them for one row against ``X[rows]``."""
    P = X[point : point + 1]
    Y = X[rows]  # a copy, as scikit-learn's X[unproc]: every operation below sees the same operands
    if metric == "manhattan":
        return cdist(P, Y, "cityblock").ravel()
    # sklearn's _euclidean_distances for float64 rows (X is not Y), its squared norms summed on these
    # very arrays as it sums them (norms taken once on all of X were not shown to give the same bits)
    d = -2 * (P @ Y.T)
    d += np.einsum("ij,ij->i", P, P)[:, None]
    d += np.einsum("ij,ij->i", Y, Y)[None, :]
    np.maximum(d, 0.0, out=d)
    np.sqrt(d, out=d)
    return d.ravel()


def _neighbours(X: np.ndarray, min_samples: int, metric: str):
    """Core distances as scikit-learn's ``compute_optics_graph`` computes them (the same
    ``NearestNeighbors`` query, rounded the same way), and the order in which its
    ``radius_neighbors(P, radius=inf)`` lists the points. That order decides the row order of
    the distance product, and so its last bits; with an infinite radius it is the same for every
    query point: ascending for brute force, the tree's own order for a KD or ball tree."""
    from sklearn.cluster._optics import _compute_core_distances_
    from sklearn.neighbors import NearestNeighbors

    nbrs = NearestNeighbors(n_neighbors=min_samples, metric=metric, n_jobs=1).fit(X)
    core = _compute_core_distances_(X=X, neighbors=nbrs, min_samples=min_samples, working_memory=None)
    np.around(core, decimals=_DECIMALS, out=core)  # max_eps = inf: nothing is capped
    order = nbrs.radius_neighbors(X[:1], radius=np.inf, return_distance=False)[0]
    return core, np.asarray(order, dtype=np.intp)


def optics_graph(X: np.ndarray, min_samples: int, metric: str = "euclidean", *, compiled: bool = True):
    """``sklearn.cluster.compute_optics_graph(X, min_samples=min_samples, metric=metric,
    max_eps=inf)``: returns ``(ordering, core_distances, reachability, predecessor)``, equal to
    scikit-learn's.

    ``compiled``: manhattan runs compiled (:func:`schedlab.polaris._optics.manhattan_optics`: the
    same bits, one pass over the distances); ``False`` takes scikit-learn's steps for it too (its
    core-distance query, then NumPy's loop: the reference its tests and
    ``benchmarks/bench_polaris_optics.py`` compare it with). Euclidean always takes them.

    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 0.0], [3.0, 1.0]])
    >>> ordering, core, reach, pred = optics_graph(X, 2, "manhattan")
    >>> ordering.tolist(), reach.tolist(), pred.tolist()
    ([0, 1, 2, 3], [inf, 1.0, 3.0, 1.0], [-1, 0, 0, 2])
    """
    if metric not in METRICS:
        raise ValueError(f"optics_graph computes metric in {METRICS} as scikit-learn does; got {metric!r}")
    # as scikit-learn's check_array: float64, the memory layout kept (a Fortran-ordered X gives other
    # operand layouts to the products below, and so other last bits)
    X = np.asarray(X, dtype=np.float64)
    n = len(X)
    if not 2 <= min_samples <= n:
        raise ValueError(f"min_samples must be an integer in [2, n_samples = {n}]; got {min_samples}")
    if not np.isfinite(X).all():  # as scikit-learn's check_array (the compiled pass does not check)
        bad = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(
            f"X holds NaN or infinity (first at row {bad[0]}, column {bad[1]}); OPTICS needs finite values"
        )
    if metric == "manhattan" and compiled:
        # each distance is a sum of its own, so neither the rows' order nor their layout changes a bit
        ordering, core, reach, pred = manhattan_optics(np.ascontiguousarray(X.T), int(min_samples))
        return ordering.astype(int), core, reach, pred.astype(int)
    core, order = _neighbours(X, int(min_samples), metric)
    reach = np.full(n, np.inf)
    pred = np.full(n, -1, dtype=int)
    ordering = np.zeros(n, dtype=int)
    _visit(X, core, order, reach, pred, ordering, metric)
    return ordering, core, reach, pred


def _visit(X, core, order, reach, pred, ordering, metric: str) -> None:
    """scikit-learn's loop over the points, with NumPy: fills ``ordering``, lowers ``reach`` and
    ``pred`` in place."""
    n = len(X)
    unvisited = np.ones(n, dtype=bool)
    for step in range(n):
        left = np.flatnonzero(unvisited)
        point = left[np.argmin(reach[left])]  # the first of equal minima, as scikit-learn
        unvisited[point] = False
        ordering[step] = point
        if core[point] == np.inf:
            continue
        rows = order[unvisited[order]]  # scikit-learn's unprocessed neighbours, in its order
        if not rows.size:
            continue
        rdists = np.maximum(_distances_from(X, point, rows, metric), core[point])
        np.around(rdists, decimals=_DECIMALS, out=rdists)
        better = rdists < reach[rows]
        reach[rows[better]] = rdists[better]
        pred[rows[better]] = point


def optics_labels(
    X: np.ndarray,
    min_samples: int,
    metric: str = "euclidean",
    *,
    min_cluster_size: int | None = None,
    compiled: bool = True,
) -> np.ndarray:
    """``sklearn.cluster.OPTICS(min_samples=min_samples, metric=metric,
    min_cluster_size=min_cluster_size).fit_predict(X)`` (xi extraction, ``xi=0.05``, every other
    argument at its default), computed by :func:`optics_graph` (``compiled`` as there)."""
    from sklearn.cluster import cluster_optics_xi

    ordering, _, reach, pred = optics_graph(X, min_samples, metric, compiled=compiled)
    labels, _ = cluster_optics_xi(
        reachability=reach,
        predecessor=pred,
        ordering=ordering,
        min_samples=min_samples,
        min_cluster_size=min_cluster_size,
        xi=0.05,
        predecessor_correction=True,
    )
    return labels
