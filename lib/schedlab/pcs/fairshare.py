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
    >>> [float(a) for a in water_fill([Fraction(1), Fraction(1)], [1, 3], zero_tolerance=1e-3)]
    [1.0, 1.0]
    """
    check_zero_tolerance("water_fill", zero_tolerance)
    if zero_tolerance > 0:
        tol = float(zero_tolerance)

        def is_zero(x) -> bool:
            # the authors' math.isclose(float(x), 0, abs_tol=tol), which is |float(x)| <= tol
            return abs(float(x)) <= tol
    else:

        def is_zero(x) -> bool:
            return x == 0

    nc = len(rates)
    rates, demand = list(rates), list(demand)
    alloc = [0] * nc
    total = sum(demand)
    residual = sum(rates)
    tries = 0
    while residual > 0 and total > 0:
        for i in range(nc):
            a = min(rates[i], demand[i])
            if is_zero(a):
                a = 0  # a Fraction(0) share would turn an integer allocation into a Fraction
            alloc[i] += a
            demand[i] -= a
            residual -= a
            total -= a
            if is_zero(demand[i]):
                # the class drops out (under the authors' rule, even with up to tol still unmet)
                rates[i] = 0
                demand[i] = 0
        if is_zero(residual) or is_zero(total):
            break
        r = sum(rates)
        if r > 0:
            rates = [Fraction(residual * rates[i], r) for i in range(nc)]
        tries += 1
        if tries > 100:
            break
    return alloc


def check_zero_tolerance(where: str, tol) -> None:
    """``tol`` must be a real number in [0, 1) (GPUs): a clear error naming ``where`` and the field.

    >>> check_zero_tolerance("WFQ", 1e-3)
    >>> check_zero_tolerance("WFQ", True)
    Traceback (most recent call last):
    ...
    ValueError: WFQ: zero_tolerance = True: expected a number >= 0 and < 1 (GPUs; 0: exact, the authors' code: 1e-3)
    """
    if isinstance(tol, bool) or not (isinstance(tol, numbers.Real) and 0 <= tol < 1):
        raise ValueError(
            f"{where}: zero_tolerance = {tol!r}: expected a number >= 0 and < 1 "
            "(GPUs; 0: exact, the authors' code: 1e-3)"
        )


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
