"""The link as an M/G/1 queue: load (VI), stability (VII) and the Pollaczek-Khinchine wait (VIII).

Transfers of class e arrive as Poisson streams of rate ``lambda_e`` and need
``S_e = b_e / mu`` seconds of the bottleneck link (V). The superposition is Poisson with a
discrete service-time distribution, so the mean wait in queue is the PK formula

    rho = sum_e lambda_e S_e,             phi = sum_e lambda_e S_e^2 / (2 (1 - rho)),

finite only for rho < 1. For one deterministic class this is the M/D/1 wait
``rho S / (2 (1 - rho))``.

Examples
--------
>>> import numpy as np
>>> round(pk_wait(np.array([5.0]), np.array([0.1])), 6)   # M/D/1, rho = 0.5
0.05
>>> md1_wait(5.0, 0.1)
0.05
"""

from __future__ import annotations

import numpy as np


class UnstableLinkError(ValueError):
    """The link load rho is >= 1: queues grow without bound and the PK wait is infinite."""


def link_load(rates: np.ndarray, service_s: np.ndarray) -> float:
    """(VI) rho = sum_e lambda_e S_e."""
    rates, service_s = _check(rates, service_s)
    return float(rates @ service_s)


def pk_wait(rates: np.ndarray, service_s: np.ndarray) -> float:
    """(VIII) mean wait phi in queue; raises :class:`UnstableLinkError` if rho >= 1."""
    rates, service_s = _check(rates, service_s)
    rho = float(rates @ service_s)
    if not rho < 1:
        raise UnstableLinkError(f"link load rho = {rho:.6g} >= 1: the link is unstable (constraint VII)")
    return float(rates @ service_s**2) / (2 * (1 - rho))


def md1_wait(rate: float, service_s: float) -> float:
    """Closed-form M/D/1 mean wait in queue, rho S / (2 (1 - rho)) with rho = rate * S."""
    rho = rate * service_s
    if not rho < 1:
        raise UnstableLinkError(f"M/D/1 load {rho:.6g} >= 1")
    return rho * service_s / (2 * (1 - rho))


def lindley_wait(rates: np.ndarray, service_s: np.ndarray, n: int, rng: np.random.Generator) -> float:
    """Mean FIFO wait of ``n`` simulated customers (Lindley's recursion): an independent check of PK.

    Arrivals are the superposition of the Poisson streams; each customer's class is drawn
    with probability ``lambda_e / sum lambda``. The first 10% of customers are discarded.
    """
    rates, service_s = _check(rates, service_s)
    total = rates.sum()
    gaps = rng.exponential(1 / total, size=n)
    cls = rng.choice(len(rates), size=n, p=rates / total)
    s = service_s[cls]
    w = np.empty(n)
    cur = 0.0
    for i in range(n):  # W_{i+1} = max(0, W_i + S_i - A_{i+1})
        w[i] = cur
        cur = max(0.0, cur + s[i] - gaps[i])
    return float(w[n // 10 :].mean())


def server_wait(
    rates: np.ndarray, task_sums: np.ndarray, task_sq_sums: np.ndarray, servers: int
) -> tuple[float, float]:
    """Per-server load and the PK wait of a task that joins a server's FIFO buffer at a random time.

    Every task of every job class is one customer of its server (the simulator enqueues a
    task when it becomes ready; a scheme that spreads each task uniformly over the
    ``servers``, as Nona's tables, Random and Opportunistic do, gives every server the same
    share). Class ``j`` arrives at ``rates[j]``; ``task_sums[j]`` and ``task_sq_sums[j]`` are
    the sums of its task times and of their squares (seconds, at the cluster's compute rate).
    Per server, tasks arrive at ``sum_j rates[j] n_j / servers`` and

        rho_s = sum_j rates[j] task_sums[j] / servers,
        W_s   = sum_j rates[j] task_sq_sums[j] / (2 servers (1 - rho_s)),

    the M/G/1 (Pollaczek-Khinchine) mean wait at task level. Tasks do not arrive as a Poisson
    stream (a job's tasks follow each other), so this is an approximation; the tests compare
    it with the simulator. Neither number depends on where a job's parts go, as long as each
    task's server is uniform over the cluster: moving a task moves its work, not the total.

    Returns ``(rho_s, W_s)``; raises ``ValueError`` if ``rho_s >= 1``.

    Examples
    --------
    >>> rho, w = server_wait(np.array([5.0]), np.array([0.1]), np.array([0.01]), servers=1)
    >>> round(rho, 6), round(w, 6) == round(md1_wait(5.0, 0.1), 6)   # one task: M/D/1
    (0.5, True)
    """
    rates, task_sums = _check(rates, task_sums)
    _, task_sq_sums = _check(rates, task_sq_sums)
    if not (isinstance(servers, (int, np.integer)) and servers >= 1):
        raise ValueError(f"servers must be a positive integer, got {servers!r}")
    rho = float(rates @ task_sums) / servers
    if not rho < 1:
        raise ValueError(f"per-server compute load {rho:.6g} >= 1: the servers' queues are unstable")
    return rho, float(rates @ task_sq_sums) / (2 * servers * (1 - rho))


def _check(rates, service_s) -> tuple[np.ndarray, np.ndarray]:
    rates = np.asarray(rates, dtype=float)
    service_s = np.asarray(service_s, dtype=float)
    if rates.shape != service_s.shape:
        raise ValueError(f"rates {rates.shape} and service times {service_s.shape} differ in shape")
    if (rates < 0).any() or not np.isfinite(rates).all():
        raise ValueError("arrival rates must be finite and >= 0")
    if (service_s < 0).any() or not np.isfinite(service_s).all():
        raise ValueError("service times must be finite and >= 0")
    return rates, service_s
