"""Certified global solver for Nona's problem without an LP solver (``solve(..., lp="lagrange")``).

Structure (see :mod:`schedlab.nona.optimise` for the formulation). Write the objective as
F(theta) = G(theta, phi(theta)) with

    G(theta, psi) = K + W psi + sum_o beta_o theta_o M_o(psi),   M_o(psi) = max_i (A_oi + n_oi psi),

K the constant part, W the background communication rate. Every M_o is convex,
piecewise linear and non-decreasing in psi, so

    min_theta F = min_psi H(psi),  H(psi) = min { G(theta, psi) : theta in Delta, phi(theta) <= psi },

and "phi(theta) <= psi" is ONE linear row g(psi).theta <= b(psi) with g = a + 2 psi r and
b = 2 psi (1 - rho0) - N0 (a, r: d(PK numerator)/d theta, d rho / d theta). For a fixed psi, H is
a multiple-choice knapsack LP (a product of simplices and one coupling row). It is solved
exactly by :func:`mckp`: the Lagrangian dual is a concave piecewise-linear function of one
multiplier, maximised by cutting planes (Kelley/Newton on its breakpoints); a basic primal
optimum is recovered by switching distributions one at a time from the selection on the left
of the optimal multiplier to the one on its right: **at most one distribution mixes two
options**. This also holds for the global optimum (it solves H at its own wait).

Certificates. On an interval of waits [lo, hi], any theta with phi(theta) = psi in [lo, hi]
satisfies g(psi).theta = b(psi) with equality, so for ANY multiplier, even one that varies
with psi, lambda(psi) = lambda + kappa (psi - t), and any branch line T_o of each M_o (a line
under the convex M_o; we take the one active at a tangent point t):

    F(theta) >= K + W psi - lambda(psi) b(psi) + sum_d min_{o in d} [beta_o T_o(psi) + lambda(psi) g_o(psi)]

(weak duality: no exact LP optimum is needed for validity). With kappa <= 0 the second term
is a convex quadratic and each per-option term a concave one, so each distribution's minimum
is concave: it is replaced by the LP's choice at t where the other options provably stay above
it on [lo, hi] (checked against the chord of their minimum), else by its own chord; the
resulting quadratic in psi is minimised exactly on [lo, hi] (:meth:`_Search.bound_fn`). With
t, lambda and kappa = d lambda / d psi from the LP at the best wait found (the mixed
distribution's two options stay tied along the path), the bound equals the optimum on a
whole neighbourhood of a smooth optimum, so few intervals are needed; kappa = 0 (a fixed
multiplier) is also tried, and the larger bound kept (built and evaluated only when the path's
bound alone does not already settle the interval: the same decisions either way). The
open-ended interval [lo, inf) is
bounded by the unconstrained minimum U(lo) = min_theta G(theta, lo); once the unconstrained
choice at lo satisfies phi <= lo, U(lo) equals an achieved value and everything beyond lo is
certified (H >= U, and U is non-decreasing). Upper bounds are exact evaluations of the LP
solutions, improved by a 1-D minimisation of F along the single mixed distribution (bounded
Brent, compiled: :meth:`Support.line_min`); when
that minimum is an end of the segment, the LP one segment further on is solved next
(:meth:`_Search.polish`), a walk of one LP per basis.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

TIE_RTOL = 1e-12  # relative tolerance for ties between options' Lagrangian values
LINE_XATOL = 1e-7  # absolute tolerance in the mixing weight of the line search along a mixed distribution


class _Kernel:
    """A function compiled by numba at its first call (:func:`load_kernels` compiles them all).

    Importing numba costs ~0.1-0.3 s, and most solves never run the search that needs these
    loops (the root relaxation settles them), so numba is imported only when one is called.
    """

    def __init__(self, fn) -> None:
        self.py_func = fn
        self.__name__, self.__doc__ = fn.__name__, fn.__doc__

    def __call__(self, *args):
        _compile_kernels()
        return globals()[self.py_func.__name__](*args)  # now numba's dispatcher


#: the compiled kernels, callees first (a kernel calling another needs its dispatcher when typed)
_KERNEL_NAMES = (
    "_tie_limit",
    "_branches",
    "_select",
    "_select_both",
    "_knapsack_ends",
    "_dual_pieces",
    "_quadratics",
    "_minima",
    "_above",
    "_terms",
    "_segment_value",
    "_line_min",
)


def _compile_kernels() -> None:
    """Replace every :class:`_Kernel` of this module by numba's dispatcher (``cache=True``: read back
    from numba's on-disk cache after the first run)."""
    g = globals()
    if not isinstance(g["_branches"], _Kernel):
        return
    from numba import njit

    for name in _KERNEL_NAMES:
        if isinstance(g[name], _Kernel):
            g[name] = njit(cache=True, error_model="numpy")(g[name].py_func)


@dataclass
class Arrays:
    """Column-major copies of the problem's arrays (one row per branch column): fast max over branches."""

    AT: np.ndarray
    nT: np.ndarray
    beta: np.ndarray
    a: np.ndarray
    r: np.ndarray
    starts: np.ndarray
    dist: np.ndarray
    K: float
    W: float
    u0: float
    N0: float
    size: np.ndarray  # options per distribution

    @classmethod
    def of(cls, prob) -> Arrays:
        return cls(
            np.ascontiguousarray(prob.A.T),
            np.ascontiguousarray(prob.n.T),
            prob.beta,
            prob.a,
            prob.r,
            prob.starts,
            prob.dist,
            prob.const_total,
            prob.phi_weight,
            1.0 - prob.rho0,
            prob.N0,
            prob.size,
        )

    def branches(self, psi: float) -> tuple[np.ndarray, np.ndarray]:
        """(M(psi), slope of the branch line attaining M at psi) for every option."""
        return _branches(self.AT, self.nT, float(psi))

    def g(self, psi: float) -> np.ndarray:
        return self.a + 2.0 * psi * self.r

    def terms(self, psi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(M, slopes, beta M, g(psi)): :meth:`branches`, the LP's costs and row in one compiled pass."""
        return _terms(self.AT, self.nT, self.beta, self.a, self.r, float(psi))

    def b(self, psi: float) -> float:
        return 2.0 * psi * self.u0 - self.N0


# The hot loops over options (tens of thousands with our GPT-2 trace) are compiled: one pass
# per distribution instead of several numpy reductions and temporaries. Same comparisons and the
# same float operations in the same order as the array versions (tests compare them), and every
# sum over distributions stays a numpy sum, so results are bit for bit the same.


@_Kernel
def _branches(AT: np.ndarray, nT: np.ndarray, psi: float) -> tuple[np.ndarray, np.ndarray]:
    """Per option: the max over its branch lines A + n psi, and the slope n of the line attaining it
    (the first such line among equal values)."""
    k, n = AT.shape
    M = np.empty(n)
    s = np.empty(n)
    # one branch line at a time over all options (contiguous rows: the inner loop vectorises);
    # per option the same operations and comparisons, in the same order, as option by option
    for o in range(n):
        M[o] = AT[0, o] + nT[0, o] * psi
        s[o] = nT[0, o]
    for i in range(1, k):
        for o in range(n):
            v = nT[i, o] * psi
            v += AT[i, o]
            if v > M[o]:
                M[o] = v
                s[o] = nT[i, o]
    return M, s


@_Kernel
def _terms(AT, nT, beta, a, r, psi: float):
    """:func:`_branches`, then beta M and g = a + 2 psi r (the same float operations as the array versions)."""
    M, s = _branches(AT, nT, psi)
    n = len(M)
    c, g = np.empty(n), np.empty(n)
    two_psi = 2.0 * psi
    for o in range(n):
        c[o] = beta[o] * M[o]
        g[o] = a[o] + two_psi * r[o]
    return M, s, c, g


@_Kernel
def _tie_limit(vmin: float) -> float:
    return vmin + TIE_RTOL * abs(vmin)


@_Kernel
def _select(v: np.ndarray, key: np.ndarray, starts: np.ndarray, largest: bool) -> np.ndarray:
    nd = len(starts)
    out = np.empty(nd, dtype=np.int64)
    for d in range(nd):
        a, b = starts[d], (starts[d + 1] if d + 1 < nd else len(v))
        vmin = v[a]
        for o in range(a + 1, b):
            if v[o] < vmin:
                vmin = v[o]
        lim = _tie_limit(vmin)
        best, bk = -1, 0.0
        for o in range(a, b):
            if v[o] <= lim:
                k = -key[o] if largest else key[o]
                if best < 0 or k < bk:
                    best, bk = o, k
        out[d] = best
    return out


@_Kernel
def _select_both(v: np.ndarray, key: np.ndarray, starts: np.ndarray):
    """``(_select(v, key, starts, True), _select(v, key, starts, False))`` in one pass."""
    nd = len(starts)
    hi_out = np.empty(nd, dtype=np.int64)
    lo_out = np.empty(nd, dtype=np.int64)
    for d in range(nd):
        a, b = starts[d], (starts[d + 1] if d + 1 < nd else len(v))
        vmin = v[a]
        for o in range(a + 1, b):
            if v[o] < vmin:
                vmin = v[o]
        lim = _tie_limit(vmin)
        bhi, khi, blo, klo = -1, 0.0, -1, 0.0
        for o in range(a, b):
            if v[o] <= lim:
                if bhi < 0 or -key[o] < khi:
                    bhi, khi = o, -key[o]
                if blo < 0 or key[o] < klo:
                    blo, klo = o, key[o]
        hi_out[d], lo_out[d] = bhi, blo
    return hi_out, lo_out


@_Kernel
def _knapsack_ends(c: np.ndarray, g: np.ndarray, starts: np.ndarray):
    """Per distribution, in one pass: ``_select(c, g, starts, False)``, min g, and min c over the options
    attaining min g (what ``np.minimum.reduceat`` gives on the masked arrays: minima are exact)."""
    nd, n = len(starts), len(c)
    S0 = _select(c, g, starts, False)
    gmin, cinf = np.empty(nd), np.empty(nd)
    for d in range(nd):
        a, b = starts[d], (starts[d + 1] if d + 1 < nd else n)
        m = g[a]
        for o in range(a + 1, b):
            if g[o] < m:
                m = g[o]
        cm = np.inf
        for o in range(a, b):
            if g[o] <= m and c[o] < cm:
                cm = c[o]
        gmin[d], cinf[d] = m, cm
    return S0, gmin, cinf


def select(v: np.ndarray, key: np.ndarray, starts: np.ndarray, dist: np.ndarray, largest: bool) -> np.ndarray:
    """Per distribution, the index of the minimum of ``v``; among ties, the smallest (or largest)
    ``key``, then the first. ``dist`` (each option's distribution) is implied by ``starts``.

    >>> import numpy as np
    >>> v, key = np.array([1.0, 1.0, 2.0, 0.5, 0.5]), np.array([3.0, 1.0, 0.0, 2.0, 2.0])
    >>> starts, dist = np.array([0, 3]), np.array([0, 0, 0, 1, 1])
    >>> select(v, key, starts, dist, largest=False).tolist(), select(v, key, starts, dist, largest=True).tolist()
    ([1, 3], [0, 3])
    """
    return _select(v, key, starts, largest)


@_Kernel
def _dual_pieces(c: np.ndarray, g: np.ndarray, lam: float, starts: np.ndarray):
    """v = c + lam g and, per distribution, min v and the largest / smallest g among its ties."""
    nd, n = len(starts), len(c)
    v = np.empty(n)
    vmin, gm, gp = np.empty(nd), np.empty(nd), np.empty(nd)
    for d in range(nd):
        a, b = starts[d], (starts[d + 1] if d + 1 < nd else n)
        m = np.inf
        for o in range(a, b):  # v and its minimum in one pass
            x = c[o] + lam * g[o]
            v[o] = x
            if x < m or o == a:
                m = x
        lim = _tie_limit(m)
        hi, lo = -np.inf, np.inf
        for o in range(a, b):
            if v[o] <= lim:
                if g[o] > hi:
                    hi = g[o]
                if g[o] < lo:
                    lo = g[o]
        vmin[d], gm[d], gp[d] = m, hi, lo
    return v, vmin, gm, gp


@dataclass
class KnapsackLP:
    """Solution of min c.theta s.t. theta in the product of simplices, g.theta <= b."""

    value: float  # primal value (inf if infeasible)
    dual: float  # a dual (lower) bound, = value up to rounding when exact
    lam: float  # the multiplier
    pure: np.ndarray  # one option per distribution (the mixed one's first option)
    mixed: (
        tuple[int, int, float] | None
    )  # (option left, option right, weight on right) of the mixed distribution
    iterations: int


def mckp(
    c: np.ndarray,
    g: np.ndarray,
    b: float,
    starts: np.ndarray,
    dist: np.ndarray,
    lam_hint: float | None = None,
    max_iter: int = 100,
) -> KnapsackLP:
    """Exact multiple-choice knapsack LP by its one-multiplier Lagrangian dual (no LP solver).

    min c.theta s.t. theta in the product of simplices (``starts``/``dist``), g.theta <= b, with
    c, g >= 0. D(lambda) = sum_d min_o (c_o + lambda g_o) - lambda b is concave and piecewise
    linear; each selection S (one option per distribution) is a line c_S + lambda (g_S - b)
    above it. Kelley's cutting planes in 1-D: intersect the best known line of positive slope
    with the best of negative slope, evaluate D there; stop when the selections optimal at that
    lambda straddle b (then lambda is optimal, and :func:`_recover` builds a basic primal with at
    most one mixed distribution). ``lam_hint`` (e.g. the multiplier at a nearby wait) is
    evaluated first.

    Examples
    --------
    >>> import numpy as np
    >>> c, g = np.array([3.0, 1.0, 2.0, 0.0]), np.array([0.0, 2.0, 0.0, 2.0])
    >>> starts, dist = np.array([0, 2]), np.array([0, 0, 1, 1])
    >>> sol = mckp(c, g, 2.0, starts, dist)
    >>> round(sol.value, 12), sol.mixed is None
    (3.0, True)
    >>> sol = mckp(c, g, 1.0, starts, dist)
    >>> round(sol.value, 12), round(sol.mixed[2], 12)
    (4.0, 0.5)
    >>> sol = mckp(c, g, 3.0, starts, dist)  # one distribution mixes
    >>> round(sol.value, 12), sol.mixed
    (2.0, (1, 0, 0.5))
    """
    S0, gmin, cinf = _knapsack_ends(c, g, starts)  # one compiled pass (select and two reduceat's)
    C0, G0 = float(c[S0].sum()), float(g[S0].sum())
    if G0 <= b:
        return KnapsackLP(C0, C0, 0.0, S0, None, 0)
    Ginf = float(gmin.sum())
    if Ginf > b:  # infeasible: D(lambda) -> +inf along the line of the min-g selection
        return KnapsackLP(math.inf, math.inf, math.inf, S0, None, 0)
    if Ginf == b:  # only the min-g selections are feasible
        Sinf = select(g, c, starts, dist, largest=False)
        Cinf = float(c[Sinf].sum())
        return KnapsackLP(Cinf, Cinf, 0.0, Sinf, None, 0)
    left = (C0, G0 - b)  # lines: value at lambda = 0, slope
    right = (float(cinf.sum()), Ginf - b)
    best_dual, best_lam = -math.inf, 0.0
    lam = lam_hint if lam_hint is not None and math.isfinite(lam_hint) and lam_hint > 0 else None
    for it in range(1, max_iter + 1):
        if lam is None:
            lam = (right[0] - left[0]) / (left[1] - right[1])
        v, vmin, gm, gp = _dual_pieces(c, g, float(lam), starts)
        Gm = float(gm.sum())  # left derivative side
        Gp = float(gp.sum())  # right derivative side
        V = float(vmin.sum())
        dual = V - lam * b
        if dual > best_dual:
            best_dual, best_lam = dual, lam
        if Gp <= b <= Gm:
            Sm, Sp = _select_both(v, g, starts)
            return _recover(c, g, b, Sm, Sp, lam, best_dual, it)
        if Gp > b:
            new = (V - lam * Gp, Gp - b)
            if new[1] >= left[1] and new[0] >= left[0]:  # no progress (rounding): stop
                break
            left = new
        else:
            new = (V - lam * Gm, Gm - b)
            if new[1] <= right[1] and new[0] >= right[0]:
                break
            right = new
        lam = None
    # not converged (rounding at a breakpoint): the min-g side at the best multiplier is feasible
    v = c + best_lam * g
    Sp = select(v, g, starts, dist, largest=False)
    if float(g[Sp].sum()) > b:
        Sp = select(g, c, starts, dist, largest=False)
    return KnapsackLP(float(c[Sp].sum()), best_dual, best_lam, Sp, None, max_iter)


def _recover(c, g, b, Sm, Sp, lam, dual, it) -> KnapsackLP:
    """Basic primal optimum: switch distributions from Sm to Sp until the row is tight."""
    diff = np.flatnonzero(Sm != Sp)
    delta = g[Sm[diff]] - g[Sp[diff]]  # >= 0
    G = float(g[Sm].sum())
    over = G - np.cumsum(delta)  # row value after switching the first k+1 distributions
    k = int(np.searchsorted(-over, -b, side="left"))  # first k with over[k] <= b
    if k < len(diff) and over[k] == b:  # switching k fully makes the row tight: no mix
        k += 1
    pure = Sm.copy()
    pure[diff[:k]] = Sp[diff[:k]]
    before = G - (float(delta[:k].sum()) if k else 0.0)
    mixed = None
    if k < len(diff) and before > b and delta[k] > 0:
        t = min(1.0, max(0.0, float((before - b) / delta[k])))
        d = diff[k]
        mixed = (int(Sm[d]), int(Sp[d]), t)
    value = float(c[pure].sum())
    if mixed is not None:
        value += mixed[2] * float(c[mixed[1]] - c[mixed[0]])
    return KnapsackLP(value, dual, lam, pure, mixed, it)


class Support:
    """Exact objective (I) on a sparse theta (a few options), for upper bounds and line searches."""

    def __init__(self, prob):
        self.prob = prob

    def objective(self, idx: np.ndarray, w: np.ndarray) -> tuple[float, float]:
        """(F, phi) at theta = sum w e_idx (inf if rho >= 1)."""
        return self.on(idx)(w)

    def on(self, idx: np.ndarray):
        """w -> (F, phi) at theta = sum w e_idx, with the support's rows gathered once.

        A line search evaluates one support at many weights (tens of calls): gathering its rows
        of the (options x branches) arrays once instead of per call is most of that cost. Same
        values and operations as per call, so the same floats.
        """
        p = self.prob
        r, a, A, n, beta = p.r[idx], p.a[idx], p.A[idx], p.n[idx], p.beta[idx]

        def f(w: np.ndarray) -> tuple[float, float]:
            rho = p.rho0 + float(r @ w)
            if not rho < 1:
                return math.inf, math.inf
            phi = (p.N0 + float(a @ w)) / (2 * (1 - rho))
            M = (A + n * phi).max(axis=1)
            return p.const_total + p.phi_weight * phi + float((beta * M) @ w), phi

        return f

    def line_min(self, idx: np.ndarray, w: np.ndarray, xatol: float = LINE_XATOL) -> float:
        """argmin over x in [0, 1] of F along the support's last two options, weights (1 - x, x).

        The other entries of ``w`` are the support's fixed weights (``w`` is modified in place).
        Bounded Brent (:func:`_line_min`, compiled: scipy's ``minimize_scalar(method="bounded")``
        step for step, without ~30 Python calls of the objective per search; the scipy version
        is :func:`line_min_reference`, the tests' oracle). F = inf where the mix makes the link
        unstable, as in :meth:`on`.
        """
        p = self.prob
        w = np.ascontiguousarray(w, dtype=float)
        return float(
            _line_min(
                float(p.const_total),
                float(p.phi_weight),
                float(p.rho0),
                float(p.N0),
                p.r[idx],
                p.a[idx],
                np.ascontiguousarray(p.A[idx]),
                np.ascontiguousarray(p.n[idx]),
                p.beta[idx],
                w,
                float(xatol),
            )
        )


def line_min_reference(sup: Support, idx: np.ndarray, w: np.ndarray, xatol: float = LINE_XATOL) -> float:
    """:meth:`Support.line_min` with scipy's bounded Brent and the NumPy objective (the tests' oracle)."""
    from scipy.optimize import minimize_scalar

    at = sup.on(idx)
    w = np.array(w, dtype=float)

    def along(x: float) -> float:
        w[-2], w[-1] = 1.0 - x, x
        return at(w)[0]

    with np.errstate(invalid="ignore"):
        res = minimize_scalar(along, bounds=(0.0, 1.0), method="bounded", options={"xatol": xatol})
    return float(res.x)


@_Kernel
def _segment_value(K, W, rho0, N0, r, a, A, n, beta, w, x):
    """F at weights ``w`` with its last two entries set to (1 - x, x); inf if the link is unstable.

    The operations of :meth:`Support.on`'s objective (the max over branch lines as a loop)."""
    m = len(w)
    w[m - 2] = 1.0 - x
    w[m - 1] = x
    rho = rho0 + np.dot(r, w)  # np.dot: BLAS, as NumPy's ``@`` (the same sums, so the same floats)
    if not rho < 1.0:
        return np.inf
    phi = (N0 + np.dot(a, w)) / (2.0 * (1.0 - rho))
    bM = np.empty(m)
    for o in range(m):
        best = A[o, 0] + n[o, 0] * phi
        for i in range(1, A.shape[1]):
            v = A[o, i] + n[o, i] * phi
            if v > best:
                best = v
        bM[o] = beta[o] * best
    return K + W * phi + np.dot(bM, w)


@_Kernel
def _line_min(K, W, rho0, N0, r, a, A, n, beta, w, xatol):
    """Bounded Brent on [0, 1]: scipy's ``_minimize_scalar_bounded`` (maxiter 500), statement for
    statement, on :func:`_segment_value`. Returns the x of the smallest value found."""
    sqrt_eps = math.sqrt(2.2e-16)
    golden_mean = 0.5 * (3.0 - math.sqrt(5.0))
    a_, b_ = 0.0, 1.0
    fulc = a_ + golden_mean * (b_ - a_)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    x = xf
    fx = _segment_value(K, W, rho0, N0, r, a, A, n, beta, w, x)
    num = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a_ + b_)
    tol1 = sqrt_eps * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b_ - a_)):
        golden = True
        if abs(e) > tol1:  # parabolic fit
            golden = False
            rr = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * rr
            q = 2.0 * (q - rr)
            if q > 0.0:
                p = -p
            q = abs(q)
            rr = e
            e = rat
            if (abs(p) < abs(0.5 * q * rr)) and (p > q * (a_ - xf)) and (p < q * (b_ - xf)):
                rat = (p + 0.0) / q
                x = xf + rat
                if ((x - a_) < tol2) or ((b_ - x) < tol2):
                    d = xm - xf
                    si = (1.0 if d > 0 else -1.0 if d < 0 else 0.0) + (1.0 if d == 0 else 0.0)
                    rat = tol1 * si
            else:
                golden = True
        if golden:
            e = (a_ - xf) if xf >= xm else (b_ - xf)
            rat = golden_mean * e
        si = (1.0 if rat > 0 else -1.0 if rat < 0 else 0.0) + (1.0 if rat == 0 else 0.0)
        x = xf + si * max(abs(rat), tol1)
        fu = _segment_value(K, W, rho0, N0, r, a, A, n, beta, w, x)
        num += 1
        if fu <= fx:
            if x >= xf:
                a_ = xf
            else:
                b_ = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a_ = x
            else:
                b_ = x
            if (fu <= fnfc) or (nfc == xf):
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif (fu <= ffulc) or (fulc == xf) or (fulc == nfc):
                fulc, ffulc = x, fu
        xm = 0.5 * (a_ + b_)
        tol1 = sqrt_eps * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= 500:
            break
    return xf


def theta_of(n: int, sol: KnapsackLP, t: float | None = None) -> np.ndarray:
    th = np.zeros(n)
    th[sol.pure] = 1.0
    if sol.mixed is not None:
        o1, o2, tt = sol.mixed
        tt = tt if t is None else t
        th[o1] = 1.0 - tt
        th[o2] += tt
    return th


def _min_quadratic(a0: float, a1: float, a2: float, lo: float, hi: float) -> float:
    """min over [lo, hi] of a0 + a1 x + a2 x^2."""
    xs = [lo, hi]
    if a2 > 0:
        xs.append(min(max(-a1 / (2.0 * a2), lo), hi))
    return min(a0 + (a1 + a2 * x) * x for x in xs)


@_Kernel
def _above(r_lo, r_hi, e0, e1, e2, lo: float, hi: float) -> np.ndarray:
    """Per distribution: the chord through (lo, r_lo), (hi, r_hi) is >= e0 + e1 x + e2 x^2 on [lo, hi] (e2 <= 0).

    A distribution with one option has no other option (r = inf): inf - inf is NaN there and the
    test answers False, so its chord bound is used (valid, if loose). Compiled: the operations of
    :func:`above_reference` per entry (a NaN anywhere answers False, as its ``np.minimum`` does).
    """
    n = len(r_lo)
    out = np.empty(n, dtype=np.bool_)
    w = hi - lo
    for d in range(n):
        sl = (r_hi[d] - r_lo[d]) / w
        d0 = r_lo[d] - sl * lo - e0[d]
        d1 = sl - e1[d]
        d2 = -e2[d]
        x = -d1 / (2.0 * d2) if d2 > 0 else lo
        if x < lo:  # np.clip; NaN stays NaN
            x = lo
        if x > hi:
            x = hi
        m_lo = d0 + (d1 + d2 * lo) * lo
        m_hi = d0 + (d1 + d2 * hi) * hi
        m_x = d0 + (d1 + d2 * x) * x
        out[d] = m_lo >= 0 and m_hi >= 0 and m_x >= 0
    return out


def above_reference(r_lo, r_hi, e0, e1, e2, lo: float, hi: float) -> np.ndarray:
    """NumPy version of :func:`_above` (the tests' oracle).

    >>> import numpy as np
    >>> one = np.ones(2)
    >>> above_reference(np.array([1.0, 0.0]), np.array([1.0, 0.0]), 0.5 * one, 0 * one, -one, 0.0, 1.0).tolist()
    [True, False]
    """
    with np.errstate(invalid="ignore"):
        sl = (r_hi - r_lo) / (hi - lo)
        d0, d1, d2 = r_lo - sl * lo - e0, sl - e1, -e2  # chord minus the quadratic: convex (d2 >= 0)
        x = np.clip(np.where(d2 > 0, -d1 / np.where(d2 > 0, 2.0 * d2, 1.0), lo), lo, hi)
        m = np.minimum(np.minimum(d0 + (d1 + d2 * lo) * lo, d0 + (d1 + d2 * hi) * hi), d0 + (d1 + d2 * x) * x)
    return m >= 0


def multiplier_path(X: Arrays, sol: KnapsackLP, s: np.ndarray, t: float) -> tuple[float, float]:
    """(lambda, kappa): the LP's multiplier at t and its rate of change along psi (kappa <= 0).

    With one distribution mixing options o1 and o2, the LP's basis keeps them tied while psi
    moves, which fixes d lambda / d psi = kappa. Using lambda(psi) = lambda + kappa (psi - t) in
    the bound removes its first-order loss at t (the tie would otherwise make the bound's
    slope jump there); kappa <= 0 keeps the bound concave in psi (see the module docstring).
    """
    lam = sol.lam if math.isfinite(sol.lam) else 0.0
    if sol.mixed is None:
        return lam, 0.0
    o1, o2, _ = sol.mixed
    # the two entries of g(t) = a + 2 t r, not the whole vector (same floats: same operations per entry)
    dg = (X.a[o1] + 2.0 * t * X.r[o1]) - (X.a[o2] + 2.0 * t * X.r[o2])
    if dg == 0:
        return lam, 0.0
    kappa = -(X.beta[o1] * (s[o1] - s[o2]) + 2.0 * lam * (X.r[o1] - X.r[o2])) / dg
    return lam, min(float(kappa), 0.0)


@dataclass
class GlobalResult:
    theta: np.ndarray
    objective: float
    lower_bound: float
    info: dict


class _Search:
    """State of one branch and bound over the wait (see :func:`solve_global`)."""

    def __init__(self, prob, rtol: float, atol: float, line_search: bool):
        self.prob, self.rtol, self.atol, self.line_search = prob, rtol, atol, line_search
        self.X = Arrays.of(prob)
        self.sup = Support(prob)
        self.best, self.best_support, self.best_phi = math.inf, None, math.nan
        self.stats = {"nodes": 0, "lps": 0, "lp_iterations": 0, "line_searches": 0}
        self.cache: dict[float, tuple[np.ndarray, np.ndarray, KnapsackLP]] = {}
        self.bound_fns: dict[float, list] = {}  # the bound functions of each cached LP (see bound_fn)
        self.edge: tuple[float, float] | None = None  # (wait of the best point, step) when it ends a segment
        self.lo0 = prob.phi_min()

    def tol(self) -> float:
        return max(self.atol, self.rtol * abs(self.best))

    # ---- upper bounds: exact objective at sparse points
    def offer(self, idx: np.ndarray, w: np.ndarray) -> tuple[float, float]:
        f, phi = self.sup.objective(idx, w)
        if f < self.best:
            self.best, self.best_support, self.best_phi = f, (idx.copy(), w.copy()), phi
        return f, phi

    def offer_solution(self, sol: KnapsackLP) -> None:
        if sol.mixed is None:
            self.offer(sol.pure, np.ones(len(sol.pure)))
            return
        o1, o2, t = sol.mixed
        rest = np.delete(sol.pure, self.prob.dist[o1])
        idx = np.concatenate([rest, [o1, o2]])
        w = np.concatenate([np.ones(len(rest)), [1.0 - t, t]])
        f, _ = self.offer(idx, w)
        # F along the mixed distribution's segment: the global optimum lies on such a segment.
        # Only for promising points (the search converges on them; elsewhere it is wasted).
        if self.line_search and f < self.best + 1e-3 * abs(self.best):
            self.stats["line_searches"] += 1
            x_min = self.sup.line_min(idx, w)
            vals = {}
            for x in (x_min, 0.0, 1.0):
                w[-2], w[-1] = 1.0 - x, x
                vals[x] = self.offer(idx, w)
            (f0, p0), (f1, p1) = vals[0.0], vals[1.0]
            end, other = ((f0, p0), p1) if f0 <= f1 else ((f1, p1), p0)
            if end[0] <= vals[x_min][0] and end[0] == self.best and math.isfinite(other):
                # the segment's best is an end: F probably keeps decreasing in the next basis,
                # beyond this end (see :meth:`polish`)
                self.edge = (end[1], end[1] - other)

    # ---- the LP H(t) and the bounds
    def lp_at(self, t: float) -> tuple[np.ndarray, np.ndarray, KnapsackLP]:
        """Branches, slopes and the LP H(t), once per wait t (children share their parent's best wait)."""
        if t not in self.cache:
            X = self.X
            M, s, c, g = X.terms(t)
            sol = mckp(c, g, X.b(t), X.starts, X.dist)
            self.stats["lps"] += 1
            self.stats["lp_iterations"] += sol.iterations
            if math.isfinite(sol.value):
                self.offer_solution(sol)
            if len(self.cache) > 8:
                self.cache.clear()
                self.bound_fns.clear()  # same lifetime as the LPs they are built from
            self.cache[t] = (M, s, sol)
        return self.cache[t]

    def polish(self, max_steps: int = 30) -> None:
        """Walk to the local optimum when the best point ends its basis segment.

        If the best point is an end of its mixed segment, the LP a segment length further in
        the same direction (in wait) starts the next basis; repeat while it improves. One LP
        per step, where branch-and-bound nodes would discover the same points at three LPs each.
        """
        for _ in range(max_steps):
            edge, self.edge = self.edge, None
            if edge is None:
                return
            phi, step = edge
            probe = phi + (step if step != 0 else 1e-3 * phi)
            if not probe > self.lo0:
                return
            before = self.best
            self.lp_at(probe)
            if not self.best < before - self.tol():
                return

    def unconstrained(self, psi: float) -> tuple[float, float]:
        """U(psi) = min_theta G(theta, psi) (a bound for every wait >= psi) and the wait of its argmin."""
        X = self.X
        _, _, c, g = X.terms(psi)
        S = select(c, g, X.starts, X.dist, largest=False)
        _, phi = self.offer(S, np.ones(len(S)))
        return X.K + X.W * psi + float(c[S].sum()), phi

    def bound_fn(self, t: float):
        """(lo, hi[, done]) -> the better of the bounds with the multiplier path and with a fixed multiplier.

        The path (kappa != 0) makes the bound second-order accurate around t; far from t it
        can be poor, where the fixed multiplier (kappa = 0) is better. Both are valid. ``done``
        (optional): a test that the caller's decision passes whenever it passes for the path's
        bound alone (it is monotone: the larger bound passes it too); then the fixed-multiplier
        bound is neither built nor evaluated, and the caller decides exactly as with the larger.
        """
        M, s, sol = self.lp_at(t)
        fns = self.bound_fns.get(t)
        if fns is None:  # built once per cached LP (children of a node often share the wait t)
            lam, kappa = multiplier_path(self.X, sol, s, t)
            # [path bound, fixed-multiplier bound (built on first need) or its multiplier, or None]
            fns = [self._bound_fn(t, lam, kappa), lam if kappa != 0 else None]
            self.bound_fns[t] = fns

        def bound(lo: float, hi: float, done=None) -> float:
            b = fns[0](lo, hi)
            if fns[1] is None or (done is not None and done(b)):
                return b
            if not callable(fns[1]):
                fns[1] = self._bound_fn(t, fns[1], 0.0)
            return max(b, fns[1](lo, hi))

        return bound

    def _bound_fn(self, t: float, lam: float, kappa: float):
        """(lo, hi) -> a lower bound of F on {theta : lo <= phi(theta) <= hi}, built at the tangent point t.

        With the multiplier path lambda(psi) = l0 + kappa psi (kappa <= 0), F(theta) >=
        K + W psi + q(psi) + sum_d C_d(psi) for theta with phi(theta) = psi, where
        q(psi) = -lambda(psi) b(psi) (a convex quadratic) and C_d(psi) = min_{o in d} v_o(psi),
        v_o(psi) = beta_o T_o(psi) + lambda(psi) g_o(psi) (concave quadratics: T_o is the branch line
        of M_o active at t). Per distribution: if the chord over [lo, hi] of the minimum of the
        options other than the LP's choice at t stays above the choice, C_d is the choice's own
        quadratic ("clean"); otherwise C_d is bounded by its chord (C_d is concave). The mixed
        distribution keeps its two options as two cases. Each case is an explicit quadratic,
        minimised exactly on [lo, hi]; the bound is the smallest case.
        """
        X = self.X
        M, s, sol = self.lp_at(t)
        l0 = lam - kappa * t
        sel = sol.pure.copy()
        alt = None
        if sol.mixed is not None:
            o1, o2, _ = sol.mixed
            sel[X.dist[o1]] = o1
            alt = o2
        # v_o(psi) = c0 + c1 psi + c2 psi^2, and the choice and its exact duplicates (same quadratic:
        # interchangeable here), which leave the rest; one compiled pass (quadratics_reference: numpy)
        c0, c1, c2, same = _quadratics(
            X.beta, M, s, X.a, X.r, float(t), float(l0), float(kappa), sel, X.starts
        )
        # q(psi) + K + W psi = Q0 + Q1 psi + Q2 psi^2
        Q0 = X.K + l0 * X.N0
        Q1 = X.W - 2.0 * X.u0 * l0 + kappa * X.N0
        Q2 = -2.0 * X.u0 * kappa

        # the mask depends on the tangent point only: built once, not per interval
        if alt is not None:
            blk = slice(X.starts[X.dist[alt]], X.starts[X.dist[alt]] + X.size[X.dist[alt]])
            same[blk] |= (c0[blk] == c0[alt]) & (c1[blk] == c1[alt]) & (c2[blk] == c2[alt])

        def bound(lo: float, hi: float) -> float:
            # per distribution: min of v at lo and hi over all options and over the rest (one compiled pass)
            all_lo, all_hi, rest_lo, rest_hi = _minima(c0, c1, c2, same, X.starts, float(lo), float(hi))
            w = hi - lo
            # chord of the others minus the choice: a convex quadratic in psi (the choice is concave)
            e0, e1, e2 = c0[sel], c1[sel], c2[sel]
            clean = _above(rest_lo, rest_hi, e0, e1, e2, lo, hi)
            if alt is not None:
                dm = X.dist[alt]
                clean[dm] = (
                    clean[dm]
                    and _above(
                        rest_lo[dm : dm + 1],
                        rest_hi[dm : dm + 1],
                        c0[alt : alt + 1],
                        c1[alt : alt + 1],
                        c2[alt : alt + 1],
                        lo,
                        hi,
                    )[0]
                )
            # chords of the unclean distributions: a line through (lo, all_lo), (hi, all_hi)
            un = ~clean
            sl = (all_hi[un] - all_lo[un]) / w
            base0 = Q0 + float(e0[clean].sum()) + float((all_lo[un] - sl * lo).sum())
            base1 = Q1 + float(e1[clean].sum()) + float(sl.sum())
            base2 = Q2 + float(e2[clean].sum())
            cases = [(base0, base1, base2)]
            if alt is not None and clean[X.dist[alt]]:
                i = X.dist[alt]
                cases.append((base0 - e0[i] + c0[alt], base1 - e1[i] + c1[alt], base2 - e2[i] + c2[alt]))
            return min(_min_quadratic(a0, a1, a2, lo, hi) for a0, a1, a2 in cases)

        return bound

    def interval_bound(self, lo: float, hi: float) -> float:
        """The bound of :meth:`bound_fn` built at the point of [lo, hi] nearest the best wait."""
        t = min(max(self.best_phi, lo), hi) if math.isfinite(self.best_phi) else 0.5 * (lo + hi)
        bound = self.bound_fn(t)
        # the caller keeps [lo, hi] only if its bound is < best - tol: decided by the first bound when it is not
        return bound(lo, hi, lambda b: not b < self.best - self.tol())

    def central_width(self, lo: float, hi: float) -> float:
        """Half-width d of the interval around the best wait whose bound closes (loss ~ d^2)."""
        t = self.best_phi
        bound = self.bound_fn(t)
        d = 0.5 * min(t - lo, hi - t)
        for _ in range(3):
            loss = self.best - bound(t - d, t + d, lambda b: self.best - b <= 0.5 * self.tol())
            if loss <= 0.5 * self.tol():
                break
            d *= min(0.5, math.sqrt(0.25 * self.tol() / loss))
        return d


def solve_global(
    prob, rtol: float = 1e-6, atol: float = 1e-12, max_nodes: int = 5000, line_search: bool = True
) -> GlobalResult:
    """Branch and bound over the link wait with the Lagrangian bounds of the module docstring.

    Nodes are intervals of the wait phi(theta); the open-ended one [lo, inf) is bounded by
    U(lo) and cut at the wait of its unconstrained argmin; a finite interval that contains the
    best wait found is cut in three around it (a central piece sized so that its second-order
    bound closes), others are bisected. Stops when every open node's bound is within
    ``max(atol, rtol * best)`` of the best value (``converged``) or after ``max_nodes``.
    ``info["kernel_load_s"]``: seconds this call spent loading the compiled kernels
    (:func:`load_kernels`; 0 once a solve in this process has loaded them).
    """
    kernel_load_s = load_kernels()  # once per process; reported apart, not search time
    S = _Search(prob, rtol, atol, line_search)
    S.stats["kernel_load_s"] = kernel_load_s
    S.offer(prob.starts.copy(), np.ones(len(prob.starts)))  # all together: always stable (rho0 < 1)
    lo0 = prob.phi_min()
    S_pos = prob.S1[prob.S1 > 0]
    scale = float(np.median(S_pos)) if S_pos.size else 1.0
    lb_root, _ = S.unconstrained(lo0)
    heap: list[tuple[float, float, float]] = [(lb_root, lo0, math.inf)]
    while heap and S.stats["nodes"] < max_nodes:
        lb, lo, hi = heap[0]
        if lb >= S.best - S.tol():
            break
        heapq.heappop(heap)
        S.stats["nodes"] += 1
        if math.isinf(hi):
            _, f_phi = S.unconstrained(lo)
            m = f_phi if math.isfinite(f_phi) and f_phi > lo else lo + max(2 * (lo - lo0), scale)
            lb_m, _ = S.unconstrained(m)
            heapq.heappush(heap, (max(lb, lb_m), m, math.inf))
            cuts = [lo, m]
        elif lo < S.best_phi < hi:
            d = S.central_width(lo, hi)
            cuts = [lo, S.best_phi - d, S.best_phi + d, hi]
        else:
            cuts = [lo, 0.5 * (lo + hi), hi]
        S.polish()
        for a_, b_ in zip(cuts[:-1], cuts[1:]):
            if not a_ < b_:
                continue
            lb_child = max(lb, S.interval_bound(a_, b_))
            if lb_child < S.best - S.tol():
                heapq.heappush(heap, (lb_child, a_, b_))
        S.polish()
    lower = min(S.best, heap[0][0]) if heap else S.best
    idx, w = S.best_support
    theta = np.zeros(prob.n_options)
    np.add.at(theta, idx, w)
    S.stats.update(converged=bool(S.best - lower <= S.tol()), rtol=rtol, lp="lagrange")
    return GlobalResult(theta, S.best, lower, S.stats)


_kernels_loaded = False


def load_kernels() -> float:
    """Load (or compile, on a first run) the compiled kernels of this module; the seconds this call took.

    Importing numba and reading the kernels back from its on-disk cache (compiling them, the first
    time after this file changed) happens once per process: 0.4-0.6 s for the kernels here on
    2 shared cores, even from the cache (several seconds when the machine is loaded). That cost belongs to the process, not to any solve: :func:`solve_global` calls this first and reports it apart
    (``info["kernel_load_s"]``, not part of ``solve_seconds``). The calls use the argument types
    the solver passes (C-contiguous float64 arrays, int64 ``starts``), so no later call loads
    another signature. After the first call this returns 0.0 at once.

    Examples
    --------
    >>> seconds = load_kernels()
    >>> seconds >= 0.0 and load_kernels() == 0.0  # the second call finds everything loaded
    True
    """
    global _kernels_loaded
    if _kernels_loaded:
        return 0.0
    import time

    t0 = time.perf_counter()
    v = np.array([1.0, 0.5])
    starts = np.array([0], dtype=np.int64)
    _branches(np.ascontiguousarray(v.reshape(1, 2)), np.zeros((1, 2)), 0.0)
    for largest in (False, True):
        _select(v, v, starts, largest)
    _select_both(v, v, starts)
    _knapsack_ends(v, v, starts)
    _dual_pieces(v, v, 0.5, starts)
    c0, c1, c2, same = _quadratics(v, v, v, v, v, 0.5, 0.5, -0.5, np.zeros(1, dtype=np.int64), starts)
    _minima(c0, c1, c2, same, starts, 0.0, 1.0)
    _above(v, v, v, v, v, 0.0, 1.0)
    _terms(np.ascontiguousarray(v.reshape(1, 2)), np.zeros((1, 2)), v, v, v, 0.0)
    _line_min(0.0, 0.0, 0.0, 0.0, v, v, np.ones((2, 1)), np.ones((2, 1)), v, v.copy(), 1e-7)
    _kernels_loaded = True
    return time.perf_counter() - t0


@_Kernel
def _quadratics(beta, M, s, a, r, t: float, l0: float, kappa: float, sel, starts):
    """The bound's per-option quadratics v_o(psi) = c0 + c1 psi + c2 psi^2 at tangent point ``t``
    (multiplier path ``l0 + kappa psi``) and the mask of options equal to their distribution's
    choice ``sel[d]`` in all three coefficients. One pass instead of some twenty array
    operations; the same float operations in the same order as :func:`quadratics_reference`."""
    n, nd = len(beta), len(starts)
    c0, c1, c2 = np.empty(n), np.empty(n), np.empty(n)
    for o in range(n):
        c0[o] = beta[o] * (M[o] - s[o] * t) + l0 * a[o]
        c1[o] = beta[o] * s[o] + kappa * a[o] + 2.0 * l0 * r[o]
        c2[o] = 2.0 * kappa * r[o]
    same = np.empty(n, dtype=np.bool_)
    for d in range(nd):
        lo, hi = starts[d], (starts[d + 1] if d + 1 < nd else n)
        k = sel[d]
        for o in range(lo, hi):
            same[o] = c0[o] == c0[k] and c1[o] == c1[k] and c2[o] == c2[k]
    return c0, c1, c2, same


def quadratics_reference(beta, M, s, a, r, t: float, l0: float, kappa: float, sel, dist):
    """NumPy version of :func:`_quadratics` (the tests' oracle).

    >>> import numpy as np
    >>> one = np.ones(3)
    >>> c0, c1, c2, same = quadratics_reference(one, one, one, one, one, 0.0, 1.0, 0.0, np.array([0]), np.zeros(3, int))
    >>> c0.tolist(), c1.tolist(), c2.tolist(), same.tolist()
    ([2.0, 2.0, 2.0], [3.0, 3.0, 3.0], [0.0, 0.0, 0.0], [True, True, True])
    """
    c0 = beta * (M - s * t) + l0 * a
    c1 = beta * s + kappa * a + 2.0 * l0 * r
    c2 = 2.0 * kappa * r
    same = (c0 == c0[sel][dist]) & (c1 == c1[sel][dist]) & (c2 == c2[sel][dist])
    return c0, c1, c2, same


@_Kernel
def _minima(c0, c1, c2, same, starts, lo: float, hi: float):
    """Per distribution, the minima of v_o(psi) = c0 + (c1 + c2 psi) psi at ``lo`` and ``hi`` over
    all its options and over those not marked ``same`` (inf if none): what :func:`minima_reference`
    computes with eight array passes, in one (minima are exact, so the same floats)."""
    n, nd = len(c0), len(starts)
    all_lo, all_hi, rest_lo, rest_hi = np.empty(nd), np.empty(nd), np.empty(nd), np.empty(nd)
    for d in range(nd):
        a, b = starts[d], (starts[d + 1] if d + 1 < nd else n)
        m_lo, m_hi, r_lo, r_hi = np.inf, np.inf, np.inf, np.inf
        for o in range(a, b):
            x = c0[o] + (c1[o] + c2[o] * lo) * lo
            y = c0[o] + (c1[o] + c2[o] * hi) * hi
            m_lo = min(m_lo, x)
            m_hi = min(m_hi, y)
            if not same[o]:
                r_lo = min(r_lo, x)
                r_hi = min(r_hi, y)
        all_lo[d], all_hi[d], rest_lo[d], rest_hi[d] = m_lo, m_hi, r_lo, r_hi
    return all_lo, all_hi, rest_lo, rest_hi


def minima_reference(c0, c1, c2, same, starts, lo: float, hi: float):
    """NumPy version of :func:`_minima` (the tests' oracle).

    >>> import numpy as np
    >>> c = np.array([1.0, 0.0, 2.0])
    >>> [m.tolist() for m in minima_reference(c, c, c * 0, np.array([False, True, False]), np.array([0, 2]), 0.0, 1.0)]
    [[0.0, 2.0], [0.0, 4.0], [1.0, 2.0], [2.0, 4.0]]
    """
    v_lo, v_hi = c0 + (c1 + c2 * lo) * lo, c0 + (c1 + c2 * hi) * hi
    all_lo, all_hi = np.minimum.reduceat(v_lo, starts), np.minimum.reduceat(v_hi, starts)
    v_lo[same] = np.inf
    v_hi[same] = np.inf
    return all_lo, all_hi, np.minimum.reduceat(v_lo, starts), np.minimum.reduceat(v_hi, starts)
