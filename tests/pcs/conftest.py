"""Fixtures for the PCS tests: the workload-2 trace, loaded once."""

from __future__ import annotations

import pytest

from schedlab.pcs.artifacts import trace_0e4a51


@pytest.fixture(scope="session")
def w1001():
    return trace_0e4a51(1001)
