"""Shared fixtures. Raw inputs come through the data layer (mirror at ../shared/data in CI)."""

from __future__ import annotations

import functools
import os

import pytest

from schedlab import cpu, data
from schedlab.nona import profiles
from schedlab.nona.graphs import read_graph

PIPEDREAM_MODELS = ("alexnet", "densenet121", "vgg16", "resnet18")


def pytest_sessionstart(session):
    """The tests compute under the pipeline's CPU pins, or a comparison with a pipeline output
    would see other last bits: NumPy must load after schedlab (this file imports schedlab first)."""
    state = cpu.status()
    if not state["pinned"] and os.environ.get("SCHEDLAB_CPU_DISPATCH") != "auto":
        pytest.exit(
            f"NumPy runs unpinned in the test process ({state}): it was loaded before schedlab", returncode=3
        )


@pytest.fixture(scope="session")
def nona_graph_paths():
    """Every shipped PipeDream graph file, fetched and verified."""
    return [
        data.require(e.name) for e in data.select(["nona"]) if e.name.endswith(".txt") and "/graph" in e.name
    ]


@functools.cache
def pipedream_graph(model: str):
    """A shipped PipeDream profile, parsed once per session."""
    return read_graph(data.require(profiles.raw_input_name(model)))


@pytest.fixture(scope="session", params=PIPEDREAM_MODELS)
def pipedream_model(request):
    return request.param, pipedream_graph(request.param)


@pytest.fixture(scope="session")
def pipeline_outputs() -> set[str]:
    """Every output ``dvc.yaml`` declares (outs, metrics and plots of every stage), as paths
    relative to the repository root: what the pipeline writes, for tests that check links and
    references against it."""
    import yaml

    from schedlab import paths

    outs = set()
    for stage in yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())["stages"].values():
        for kind in ("outs", "metrics", "plots"):
            for out in stage.get(kind) or []:
                outs.add(out if isinstance(out, str) else next(iter(out)))
    return outs
