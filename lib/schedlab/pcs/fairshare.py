"""WFQ's class-level fair share in exact arithmetic: the authors' water-filling rounds.

Both engines use it: the reference engine's :class:`~schedlab.pcs.policies.WFQ` directly, the
compiled engine (:mod:`schedlab.pcs._kernels_wfq`) when its integer closed form does not
apply. It imports nothing from the rest of the package, so neither engine pulls in the other.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Sequence

import numpy as np


def water_fill(rates: list, demand: list, zero_tolerance: float = 0.0) -> list:
    """The authors' class-level water-filling, in exact arithmetic.

    Each round gives every class ``min(rate, demand)``; classes whose demand is met drop out and
    the residual capacity is shared again in proportion to the remaining rates (at most 100
    rounds, as the authors). ``rates`` are GPU shares (``Fraction``), ``demand`` integer GPU
    demands; returns the allocation per class (exact values). Both engines use it.

    Parameters
    ----------
    rates : list of Fraction
        GPU share of each class (weight times the cluster size).
    demand : list of int
        GPU demand of each class.
    zero_tolerance : float
        ``0`` (default): exact, as the paper describes the procedure. ``> 0``: the rule of the
        authors' ``MCSScheduler.compute_allocation`` (62a6ca3), which treats every amount
        within ``zero_tolerance`` of 0 as 0 (``math.isclose(float(x), 0, abs_tol=1e-3)``): a
        round's share that small is not handed out, a class whose unmet demand is that small
        drops out with that remainder unmet, and the rounds stop once the residual capacity
        or the total unmet demand is that small (the residual then stays unallocated).

    Examples
    --------
    >>> from fractions import Fraction
    >>> water_fill([Fraction(3), Fraction(1)], [1, 5])
    [1, Fraction(3, 1)]

    A share within the tolerance of 0 is not handed out under the authors' rule (here 1/2000
    GPU stays unallocated):

    >>> water_fill([Fraction(1, 2000), Fraction(3999, 2000)], [1, 2])
    [Fraction(1, 2000), Fraction(3999, 2000)]
    >>> water_fill([Fraction(1, 2000), Fraction(3999, 2000)], [1, 2], zero_tolerance=1e-3)
    [0, Fraction(3999, 2000)]
    """
    if isinstance(zero_tolerance, bool) or not (
        isinstance(zero_tolerance, numbers.Real) and 0 <= zero_tolerance < 1
    ):
        raise ValueError(
            f"water_fill: zero_tolerance = {zero_tolerance!r}: expected a number "
            ">= 0 and < 1 (GPUs; 0: exact, the authors' code: 1e-3)"
        )
    if zero_tolerance > 0:
        return _water_fill_tolerant(list(rates), list(demand), float(zero_tolerance))
    nc = len(rates)
    rates, demand = list(rates), list(demand)
    alloc = [0] * nc
    total = sum(demand)
    residual = sum(rates)
    tries = 0
    while residual > 0 and total > 0:
        for i in range(nc):
            a = min(rates[i], demand[i])
            if a == 0:
                a = 0  # a Fraction(0) share would turn an integer allocation into a Fraction
            alloc[i] += a
            demand[i] -= a
            residual -= a
            total -= a
            if demand[i] == 0:
                rates[i] = 0
                demand[i] = 0
        if residual == 0 or total == 0:
            break
        r = sum(rates)
        if r > 0:
            rates = [Fraction(residual * rates[i], r) for i in range(nc)]
        tries += 1
        if tries > 100:
            break
    return alloc


def _water_fill_tolerant(rates: list, demand: list, tol: float) -> list:
    """:func:`water_fill` with the authors' zero rule: ``|float(x)| <= tol`` counts as 0.

    A separate loop so that the exact default keeps its own (faster, simpler) comparisons;
    ``math.isclose(float(x), 0, abs_tol=tol)`` is ``abs(float(x)) <= tol`` for ``tol > 0``.

    >>> from fractions import Fraction
    >>> [float(a) for a in _water_fill_tolerant([Fraction(1), Fraction(1)], [1, 3], 1e-3)]
    [1.0, 1.0]
    """
    nc = len(rates)
    alloc = [0] * nc
    total = sum(demand)
    residual = sum(rates)
    tries = 0
    while residual > 0 and total > 0:
        for i in range(nc):
            a = min(rates[i], demand[i])
            if abs(float(a)) <= tol:
                a = 0
            alloc[i] += a
            demand[i] -= a
            residual -= a
            total -= a
            if abs(float(demand[i])) <= tol:
                # the class drops out even if up to ``tol`` of its demand is still unmet
                rates[i] = 0
                demand[i] = 0
        if abs(float(residual)) <= tol or abs(float(total)) <= tol:
            break
        r = sum(rates)
        if r > 0:
            rates = [Fraction(residual * rates[i], r) for i in range(nc)]
        tries += 1
        if tries > 100:
            break
    return alloc


def integer_weights(rates_num: Sequence[int], rates_den: Sequence[int]) -> tuple[np.ndarray, int]:
    """Class weights as integers ``P`` over a common denominator ``L`` (``w_i = P_i/L``).

    >>> P, L = integer_weights([1, 1], [2, 3])
    >>> P.tolist(), L
    ([3, 2], 6)
    """
    L = 1
    for d in rates_den:
        L = L * int(d) // math.gcd(L, int(d))
    P = np.array([int(n) * (L // int(d)) for n, d in zip(rates_num, rates_den)], dtype=np.int64)
    return P, L
