"""Decima's node encoder for one job as a numba kernel (compiled on first use, cached on disk).

Same arithmetic as :meth:`schedlab.nona.decima.engine.Engine.node_embeddings` row by row;
only the order of the floating-point sums inside a dot product differs (agreement ~1e-15,
tested in tests/nona/test_decima_speed.py). Inputs: the job's (n, 5) features, whether the
observation has an edge, its :class:`~schedlab.nona.decima.engine.JobPlan` leaves and flat
steps (deepest first), and the prep/msg/update weights as ``(W.T, b)`` triples.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def mlp(inp, w0, b0, w1, b1, w2, b2, slope, out):  # pragma: no cover - compiled
    """``Linear, LeakyReLU, Linear, LeakyReLU, Linear`` on every row of ``inp`` into ``out``."""
    n = inp.shape[0]
    d0, d1, d2, d3 = w0.shape[0], w0.shape[1], w1.shape[1], w2.shape[1]
    a = np.empty(d1)
    b = np.empty(d2)
    for r in range(n):
        for j in range(d1):
            acc = 0.0
            for i in range(d0):
                acc += inp[r, i] * w0[i, j]
            acc += b0[j]
            a[j] = acc if acc > slope * acc else slope * acc
        for j in range(d2):
            acc = 0.0
            for i in range(d1):
                acc += a[i] * w1[i, j]
            acc += b1[j]
            b[j] = acc if acc > slope * acc else slope * acc
        for j in range(d3):
            acc = 0.0
            for i in range(d2):
                acc += b[i] * w2[i, j]
            out[r, j] = acc + b2[j]


@njit(cache=True)
def encode(
    x,
    any_edge,
    leaves,
    snd,
    snd_ptr,
    rcv,
    rcv_ptr,
    es,
    es_ptr,
    rs,
    p0,
    pb0,
    p1,
    pb1,
    p2,
    pb2,
    m0,
    mb0,
    m1,
    mb1,
    m2,
    mb2,
    u0,
    ub0,
    u1,
    ub1,
    u2,
    ub2,
    slope,
):  # pragma: no cover
    """Node embeddings of one job (see the module docstring)."""
    n = x.shape[0]
    e = p2.shape[1]
    h0 = np.empty((n, e))
    mlp(x, p0, pb0, p1, pb1, p2, pb2, slope, h0)
    if not any_edge:
        return h0
    h = np.empty((n, e))
    if leaves.size:
        inp = np.empty((leaves.size, e))
        for i in range(leaves.size):
            inp[i] = h0[leaves[i]]
        tmp = np.empty((leaves.size, e))
        mlp(inp, u0, ub0, u1, ub1, u2, ub2, slope, tmp)
        for i in range(leaves.size):
            h[leaves[i]] = tmp[i]
    for t in range(snd_ptr.size - 1):
        s0, s1 = snd_ptr[t], snd_ptr[t + 1]
        r0, r1 = rcv_ptr[t], rcv_ptr[t + 1]
        e0, e1 = es_ptr[t], es_ptr[t + 1]
        ns, nr = s1 - s0, r1 - r0
        inp = np.empty((ns, e))
        for i in range(ns):
            inp[i] = h[snd[s0 + i]]
        msg = np.empty((ns, e))
        mlp(inp, m0, mb0, m1, mb1, m2, mb2, slope, msg)  # every message from the values before the step
        agg = np.zeros((nr, e))
        for i in range(nr):
            a = e0 + rs[r0 + i]
            b = e0 + rs[r0 + i + 1] if i + 1 < nr else e1
            for k in range(a, b):
                agg[i] += msg[es[k]]
        upd = np.empty((nr, e))
        mlp(agg, u0, ub0, u1, ub1, u2, ub2, slope, upd)
        for i in range(nr):
            h[rcv[r0 + i]] = h0[rcv[r0 + i]] + upd[i]
    return h
