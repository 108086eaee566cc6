"""WFQ's class-level fair share in exact arithmetic: the authors' water-filling rounds.

Both engines use it: the reference engine's :class:`~schedlab.pcs.policies.WFQ` directly, the
compiled engine (:mod:`schedlab.pcs._kernels_wfq`) when its integer closed form does not
apply. It imports nothing from the rest of the package, so neither engine pulls in the other.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np


def water_fill(rates: list, demand: list) -> list:
    """The authors' class-level water-filling, in exact arithmetic.

    Each round gives every class ``min(rate, demand)``; classes whose demand is met drop out and
    the residual capacity is shared again in proportion to the remaining rates (at most 100
    rounds, as the authors). ``rates`` are GPU shares (``Fraction``), ``demand`` integer GPU
    demands; returns the allocation per class (exact values). Both engines use it.

    >>> from fractions import Fraction
    >>> water_fill([Fraction(3), Fraction(1)], [1, 5])
    [1, Fraction(3, 1)]
    """
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


def integer_weights(rates_num: Sequence[int],
                    rates_den: Sequence[int]) -> tuple[np.ndarray, int]:
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
