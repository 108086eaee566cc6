"""Recurring groups: a Pitman–Yor process per (workload, user), fitted to the real rows' partition.

A PAI ``group`` tags instances with the same entry script, parameters and data: jobs of one group
are one recurring job. Every real group has one user and one workload, so the stand-in draws a
job's group from a random measure of its ``(workload, user)`` pair:

* **The model.** The groups of one pair's jobs are a Pitman–Yor partition with discount ``d`` and
  concentration ``theta`` (``d = 0``: a Dirichlet process). Its exchangeable partition probability
  function (EPPF) of group sizes ``n_1 .. n_k`` of ``n`` jobs is

  .. math:: \\frac{\\prod_{i=1}^{k-1} (\\theta + i d)}{(\\theta + 1)_{n-1}}
            \\prod_{j=1}^{k} (1 - d)_{n_j - 1},

  rising factorials ``(x)_m``.
* **Why the fit sees through the sampling.** The partition is consistent under restriction: the
  groups of any subset of a pair's jobs chosen without regard to the group follow the same EPPF with
  the same ``(d, theta)``. The 800 calibration rows hold about 1 % of the trace's workload jobs,
  so :func:`fit_pitman_yor` maximises the EPPF of their per-pair partitions directly; no trace size
  enters. (Good-Turing's "groups seen once over rows", the previous model's rate of a fresh group,
  estimates the chance that the *next calibration row* brings a group the 800 rows lack, not that a
  job's group recurs nowhere in the trace: it made 72 % of the stand-in's jobs singletons.)
* **Drawing without state.** :func:`stick_weights` draws the pair's random measure by stick
  breaking (``V_k ~ Beta(1 - d, theta + k d)``), from a generator keyed by the pair alone, so every
  chunk of the trace draws its jobs' groups from the same measure and the partition does not depend
  on the chunking. Sticks stop once the mass left is below :data:`TAIL_MASS` or the atoms still
  to come hold a negligible share of the recurrence (:data:`PAIR_TAIL`); a job that lands in that
  tail gets a group of its own (what atoms that light amount to over a trace).

Examples
--------
>>> d, theta = fit_pitman_yor([np.array([3, 1, 1]), np.array([2, 2])])
>>> 0 <= d < 1 and theta > -d
True
>>> round(expected_groups(0.0, 1.0, 3), 4)  # 1 + 1/2 + 1/3
1.8333
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import minimize
from scipy.special import gammaln

#: mass of a pair's random measure left to single-job groups (the sticks stop below it) ...
TAIL_MASS = 1e-4
#: ... or once a batch of sticks adds less than this share to the sum of squared weights so far:
#: ``n`` jobs of a pair share groups in about ``n^2 / 2 x sum(w^2)`` pairs, so atoms past that
#: point hold a negligible share of the recurrence and their jobs are single-job groups (a
#: heavy-tailed measure, ``d`` near 1, leaves much of its mass in such atoms: pooled fit, 20 %)
PAIR_TAIL = 1e-4
#: most sticks drawn for one pair's measure (a safeguard: the rules above stop far earlier)
MAX_STICKS = 200_000
#: bounds of the fit: the discount and the concentration (the latter large = no recurrence)
MAX_DISCOUNT = 0.95
MAX_THETA = 1e6


def eppf_log(d: float, theta: float, sizes: np.ndarray) -> float:
    """Log EPPF of one partition with group sizes ``sizes`` under Pitman–Yor ``(d, theta)``.

    >>> import math
    >>> math.isclose(math.exp(eppf_log(0.0, 1.0, np.array([2]))), 0.5)  # CRP: second joins first
    True
    """
    sizes = np.asarray(sizes, dtype=float)
    n, k = sizes.sum(), sizes.size
    new_tables = np.log(theta + d * np.arange(1, k)).sum() if k > 1 else 0.0
    joins = (gammaln(sizes - d) - gammaln(1.0 - d)).sum()
    return float(new_tables + joins - (gammaln(theta + n) - gammaln(theta + 1.0)))


def partition_log_likelihood(d: float, theta: float, partitions: Sequence[np.ndarray]) -> float:
    """Sum of :func:`eppf_log` over independent partitions (one per ``(workload, user)`` pair)."""
    return sum(eppf_log(d, theta, s) for s in partitions)


def fit_pitman_yor(partitions: Sequence[np.ndarray]) -> tuple[float, float]:
    """Maximum-likelihood ``(d, theta)`` of independent Pitman–Yor partitions
    (:func:`partition_log_likelihood` gives their log-likelihood).

    ``partitions``: group sizes per pair. Searched over ``0 <= d <= MAX_DISCOUNT`` and
    ``-d < theta <= MAX_THETA`` from several starts; partitions of singletons only push
    ``theta`` to its bound (no job recurs).
    """
    parts = [np.asarray(p, dtype=float) for p in partitions if np.sum(p) > 0]
    if not parts:
        raise ValueError("fit_pitman_yor needs at least one non-empty partition")

    def unpack(x: np.ndarray) -> tuple[float, float]:
        d = float(np.clip(x[0], 0.0, MAX_DISCOUNT))
        return d, float(np.exp(x[1])) - d  # theta + d > 0

    def loss(x: np.ndarray) -> float:
        return -partition_log_likelihood(*unpack(x), parts)

    bounds = [(0.0, MAX_DISCOUNT), (np.log(1e-3), np.log(MAX_THETA))]
    best = None
    for d0 in (0.05, 0.4, 0.8):
        for t0 in (1.0, 30.0, 1000.0):
            r = minimize(loss, np.array([d0, np.log(t0 + d0)]), method="L-BFGS-B", bounds=bounds)
            if best is None or r.fun < best.fun:
                best = r
    return unpack(best.x)


def expected_groups(d: float, theta: float, n: int) -> float:
    """Expected number of groups among ``n`` jobs of one pair (closed form).

    ``d = 0``: the sum of ``theta / (theta + i)``; ``d > 0``:
    ``theta / d * ((theta + d)_n / (theta)_n - 1)`` (rising factorials), ``theta = 0`` as its limit.

    >>> round(expected_groups(0.5, 0.0, 1), 6)
    1.0
    """
    if n <= 0:
        return 0.0
    if d == 0.0:
        return float(np.sum(theta / (theta + np.arange(n))))
    if theta == 0.0:  # (d)_n / (0)_n is singular; its limit is (d)_n / (d (n-1)!)
        return float(np.exp(gammaln(d + n) - gammaln(d + 1) - gammaln(n)))
    ratio = np.exp(gammaln(theta + d + n) - gammaln(theta + d) - gammaln(theta + n) + gammaln(theta))
    return float(theta / d * (ratio - 1.0))


def stick_weights(d: float, theta: float, rng: np.random.Generator) -> np.ndarray:
    """Atom weights of one pair's random measure by stick breaking, until the mass left is below
    :data:`TAIL_MASS` or a batch adds less than :data:`PAIR_TAIL` of the squared weights so far
    (or :data:`MAX_STICKS`); the weights sum to one minus that tail.

    >>> w = stick_weights(0.0, 5.0, np.random.default_rng(0))  # a light tail: stops on the mass
    >>> bool(1 - TAIL_MASS <= w.sum() <= 1)
    True
    """
    parts, left, k, squares, added = [], 1.0, 0, 0.0, 1.0
    while left >= TAIL_MASS and k < MAX_STICKS and added >= PAIR_TAIL * squares:
        m = min(max(64, k), MAX_STICKS - k)  # grow the batch: DP-like measures need thousands
        i = np.arange(k + 1, k + m + 1)
        v = rng.beta(1.0 - d, theta + i * d)
        keep = np.cumprod(1.0 - v)
        w = left * v * np.r_[1.0, keep[:-1]]
        stop = np.flatnonzero(left * keep < TAIL_MASS)
        if stop.size:
            w = w[: stop[0] + 1]
            left *= keep[stop[0]]
        else:
            left *= keep[-1]
        parts.append(w)
        k += w.size
        added = float(np.dot(w, w))
        squares += added
    return np.concatenate(parts)
