"""Speedup tables of the elastic job models (PCS ``simulation/models.py``, via ``model_scaling/``).

A job's throughput at ``n`` GPUs is ``speedup(n) = t_iter(1)/t_iter(n)`` single-GPU seconds of
work per second. The authors store each model as the list ``[0.0, s(1), ..., s(max_gpus)]``
and interpolate linearly between integer GPU counts; an allocation above the job's demand runs
at ``s(demand)``. :func:`throughput` reproduces that arithmetic bit for bit (same operation
order), which matters because completion times are derived from it.

Examples
--------
>>> tables = linear_tables(4)
>>> tables.row("LinearModel")[:3].tolist()
[0.0, 1.0, 2.0]
>>> float(throughput(tables.row("LinearModel"), 2.5, 4))
2.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

#: The file of the data manifest holding every non-trivial scaling table.
SPEEDUP_ENTRY = "pcs/model_scaling/model_speedups.csv"
#: ``LinearModel`` has speedup n up to this many GPUs in the authors' code.
LINEAR_MAX_GPUS = 1000


class UnknownModelError(ValueError):
    """A trace names a model that has no speedup table."""


@dataclass
class SpeedupTables:
    """Named throughput rows ``[0.0, s(1), ..., s(max)]`` (NaN-padded to a common width).

    Attributes
    ----------
    names : list of str
        Model names, row order of ``matrix``.
    matrix : numpy.ndarray
        ``(len(names), width)`` float array; ``matrix[k, n]`` is the speedup at ``n`` GPUs.
    max_gpus : numpy.ndarray
        Length of each table (largest GPU count defined).
    """

    names: list[str]
    matrix: np.ndarray
    max_gpus: np.ndarray
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._index = {n: i for i, n in enumerate(self.names)}

    def index(self, name: str) -> int:
        """Row of ``name``; :class:`UnknownModelError` listing the known names otherwise."""
        try:
            return self._index[name]
        except KeyError:
            raise UnknownModelError(
                f"unknown model name {name!r}; known models: {', '.join(self.names)}"
            ) from None

    def row(self, name: str) -> np.ndarray:
        """The throughput row of ``name`` (without NaN padding)."""
        k = self.index(name)
        return self.matrix[k, : int(self.max_gpus[k]) + 1]


def linear_tables(max_gpus: int = LINEAR_MAX_GPUS) -> SpeedupTables:
    """Only ``LinearModel`` (speedup = n), the authors' default for synthetic workloads."""
    row = np.arange(max_gpus + 1, dtype=float)
    return SpeedupTables(["LinearModel"], row[None, :], np.array([max_gpus]))


def load_speedups(path: str | Path | None = None, *, with_linear: bool = True) -> SpeedupTables:
    """Read ``model_speedups.csv`` (fetched through :mod:`schedlab.data` by default).

    Parameters
    ----------
    path : path, optional
        The derived CSV (columns ``model, gpus, speedup``). Default: the manifest entry.
    with_linear : bool
        Also add ``LinearModel`` (1000 GPUs), as the authors' model pool has it.

    Raises
    ------
    ValueError
        If a model's GPU counts are not ``1..max_gpus`` without gaps.
    """
    if path is None:
        from schedlab import data

        path = data.require(SPEEDUP_ENTRY)
    df = pd.read_csv(path)
    names, rows = [], []
    for name, grp in df.groupby("model", sort=True):
        gpus = grp["gpus"].to_numpy()
        if not np.array_equal(gpus, np.arange(1, len(gpus) + 1)):
            raise ValueError(f"{path}: model {name!r}: column 'gpus' must be 1..n without gaps")
        names.append(str(name))
        rows.append(np.concatenate([[0.0], grp["speedup"].to_numpy(dtype=float)]))
    if with_linear:
        names.append("LinearModel")
        rows.append(np.arange(LINEAR_MAX_GPUS + 1, dtype=float))
    width = max(len(r) for r in rows)
    mat = np.full((len(rows), width), np.nan)
    for k, r in enumerate(rows):
        mat[k, : len(r)] = r
    return SpeedupTables(names, mat, np.array([len(r) - 1 for r in rows]))


def throughput(row: np.ndarray, alloc: float, demand: int) -> float:
    """The authors' ``Job.thrpt``: piecewise-linear speedup, capped at ``demand``.

    The slope/intercept form (``m*a + c`` with ``c = s(ceil) - m*ceil``) is kept on purpose:
    it rounds differently from ``s(floor) + m*(a - floor)`` and the authors' completion
    times depend on it.
    """
    if alloc > demand:
        return float(row[demand])
    ic = int(math.ceil(alloc))
    i_f = int(math.floor(alloc))
    m = row[ic] - row[i_f]
    c = row[ic] - (m * ic)
    return float(m * alloc + c)


def throughput_vec(rows: np.ndarray, alloc: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """Vectorised :func:`throughput` over jobs; ``rows[j]`` is job ``j``'s table.

    Same operations in the same order as the scalar form, so results are identical.
    """
    idx = np.arange(len(alloc))
    over = alloc > demand
    a = np.where(over, demand, alloc).astype(float)
    ic = np.ceil(a).astype(np.int64)
    i_f = np.floor(a).astype(np.int64)
    tc = rows[idx, ic]
    m = tc - rows[idx, i_f]
    c = tc - (m * ic)
    out = m * a + c
    # above demand the authors return the table value itself (not the m*a+c form)
    return np.where(over, rows[idx, demand], out)
