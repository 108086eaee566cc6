"""The link's M/G/1 pieces (VI)-(VIII) against closed forms and an independent simulation."""

from __future__ import annotations

import numpy as np
import pytest

from schedlab.nona.queueing import UnstableLinkError, link_load, lindley_wait, md1_wait, pk_wait


@pytest.mark.parametrize("rate, s", [(1.0, 0.5), (5.0, 0.1), (90.0, 0.01), (0.3, 3.0)])
def test_pk_single_class_is_md1(rate, s):
    rho = rate * s
    # M/D/1 mean wait in queue: rho / (2 mu (1 - rho)) with mu = 1/S
    assert pk_wait(np.array([rate]), np.array([s])) == pytest.approx(rho * s / (2 * (1 - rho)))
    assert md1_wait(rate, s) == pytest.approx(rho / (2 * (1 / s) * (1 - rho)))


def test_pk_matches_lindley_simulation_for_mixed_sizes():
    rates = np.array([3.0, 1.0, 0.5])
    s = np.array([0.05, 0.2, 0.4])  # rho = 0.15 + 0.2 + 0.2 = 0.55
    assert link_load(rates, s) == pytest.approx(0.55)
    sim = lindley_wait(rates, s, 400_000, np.random.default_rng(7))
    assert sim == pytest.approx(pk_wait(rates, s), rel=0.05)


def test_pk_diverges_as_rho_goes_to_one_and_errors_beyond():
    s = np.array([0.01])
    waits = [pk_wait(np.array([r / 0.01]), s) for r in (0.9, 0.99, 0.999, 0.9999)]
    assert all(b > 9 * a for a, b in zip(waits, waits[1:]))  # ~ 1/(1 - rho)
    assert waits[-1] > 0.4  # 0.9999 * 0.01 / (2 * 1e-4)
    with pytest.raises(UnstableLinkError, match="rho = 1 >= 1"):
        pk_wait(np.array([100.0]), s)
    with pytest.raises(UnstableLinkError, match=">= 1"):
        pk_wait(np.array([150.0]), s)


def test_bad_queue_inputs():
    with pytest.raises(ValueError, match="rates"):
        pk_wait(np.array([-1.0]), np.array([0.1]))
    with pytest.raises(ValueError, match="shape"):
        link_load(np.array([1.0, 2.0]), np.array([0.1]))
