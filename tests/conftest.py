"""Shared fixtures. Raw inputs come through the data layer (mirror at ../shared/data in CI)."""

from __future__ import annotations

import functools

import pytest

from schedlab import data
from schedlab.nona import profiles
from schedlab.nona.graphs import read_graph

PIPEDREAM_MODELS = ("alexnet", "densenet121", "vgg16", "resnet18")


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
