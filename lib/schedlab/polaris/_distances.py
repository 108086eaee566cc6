"""The manhattan distance tile the compiled silhouette and OPTICS loops share (numba).

Each distance is summed over the features in order from 0.0, as SciPy's ``cdist(...,
"cityblock")`` and scikit-learn's ``ManhattanDistance`` sum it, so it has their bits; the columns
of a tile are independent sums, so the loop over them vectorises.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def manhattan_tile(x: np.ndarray, XT: np.ndarray, j0: int, width: int, out: np.ndarray) -> None:
    """``out[jj] = sum_k |x[k] - XT[k, j0 + jj]|`` for ``jj < width``: the distances from the row
    ``x`` to the columns ``j0 .. j0 + width - 1`` of ``XT`` (all rows, transposed)."""
    out[:width] = 0.0
    for k in range(XT.shape[0]):
        xk, col = x[k], XT[k, j0 : j0 + width]
        for jj in range(width):
            out[jj] += abs(xk - col[jj])
