"""One entry to every compiled policy kernel: :func:`_apply` allocates and commits.

The policy is chosen by its code (:data:`schedlab.pcs._engine_core.CODES`); the kernels live
per family in :mod:`~schedlab.pcs._kernels_simple`, :mod:`~schedlab.pcs._kernels_wfq` and
:mod:`~schedlab.pcs._kernels_themis`. The main loop and the generic replay call this.
"""

from __future__ import annotations

from numba import njit

from schedlab.pcs._engine_core import refresh_stale_cache
from schedlab.pcs._engine_core import AFS, FS, LAS, SRSF, THEMIS, FIFO, _commit
from schedlab.pcs._kernels_simple import _afs, _fair, _priority
from schedlab.pcs._kernels_themis import _themis
from schedlab.pcs._kernels_wfq import _wfq


@njit(cache=True)
def _allocate(
    t,
    pcode,
    speedup,
    act,
    n,
    F,
    I,
    rows,
    gpus,
    rates_num,
    rates_den,
    zeta,
    delta,
    cache,
    out,
    hint,
    od,
    zero_tol,
):
    """GPUs of the active jobs ``act[:n]`` into ``out`` under policy ``pcode`` (WFQ's and
    Themis's parameters and scratch as :func:`schedlab.pcs._engine._run`)."""
    if pcode == FIFO or pcode == SRSF or pcode == LAS:
        _priority(pcode, act, n, F, I, rows, gpus, out)
    elif pcode == FS:
        _fair(act, n, I, gpus, out)
    elif pcode == AFS:
        _afs(act, n, F, I, rows, gpus, out)
    elif pcode == THEMIS:
        _themis(t, act, n, F, I, rows, gpus, speedup, out, hint)
    else:
        _wfq(act, n, F, I, rows, gpus, rates_num, rates_den, zeta, delta, cache, out, od, zero_tol)


@njit(cache=True)
def _apply(
    t,
    pcode,
    speedup,
    act,
    n,
    F,
    I,
    rows,
    gpus,
    rates_num,
    rates_den,
    zeta,
    delta,
    cache,
    out,
    hint,
    od,
    zero_tol,
):
    """Allocate (:func:`_allocate`) and commit (the reference ``apply_allocation``); no-op
    without active jobs."""
    if n == 0:
        return
    _allocate(
        t,
        pcode,
        speedup,
        act,
        n,
        F,
        I,
        rows,
        gpus,
        rates_num,
        rates_den,
        zeta,
        delta,
        cache,
        out,
        hint,
        od,
        zero_tol,
    )
    _commit(t, act, n, F, I, out)


refresh_stale_cache(globals())  # after every njit function of the module
