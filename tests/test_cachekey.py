"""A cached result is reused only while the code, the package versions and the CPU pins that
computed it are unchanged (schedlab.cachekey): otherwise a checkout's git-ignored cache would put an
older computation's bits into today's outputs, and a fresh clone would write other bytes."""

from __future__ import annotations

import numpy as np

from schedlab import cachekey, cpu
from schedlab.polaris import grid


def test_the_fingerprint_follows_the_pins_and_the_code(tmp_path, monkeypatch):
    src = tmp_path / "kernel.py"
    src.write_text("x = 1\n")
    base = cachekey.compute_fingerprint(src)
    assert base == cachekey.compute_fingerprint(src)
    src.write_text("x = 2\n")
    assert cachekey.compute_fingerprint(src) != base  # other code
    src.write_text("x = 1\n")
    for name in cpu.PINS:
        monkeypatch.setenv(name, "something else")
        assert cachekey.compute_fingerprint(src) != base, name  # other kernels
        monkeypatch.undo()
    assert cachekey.compute_fingerprint(src) == base
    monkeypatch.setattr(cachekey, "_versions", lambda: (("numpy", "0.0"),))
    assert cachekey.compute_fingerprint(src) != base  # other package versions


def test_a_grid_entry_computed_otherwise_is_not_reused(tmp_path, monkeypatch):
    X = np.random.default_rng(0).normal(size=(120, 3))
    cfgs = grid.configs(
        algorithms=("hdbscan",),
        transforms=("standard_scaler",),
        metrics=("euclidean",),
        min_cluster_sizes=(10,),
    )
    first = grid.run_grid(X, cfgs, tmp_path)
    assert len(list(tmp_path.glob("*.json"))) == 1
    grid.run_grid(X, cfgs, tmp_path)  # same computation: read back, no new entry
    assert len(list(tmp_path.glob("*.json"))) == 1
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "X86_V4")  # as if another CPU pin were in effect
    again = grid.run_grid(X, cfgs, tmp_path)
    assert len(list(tmp_path.glob("*.json"))) == 2  # computed afresh, in its own cache entry
    # the run's key names it in the outputs and seeds its randomness: how it was computed stays out of it
    assert first["key"].tolist() == again["key"].tolist()
    timed = ["fit_seconds", "seconds", "cpu_seconds"]  # wall-clock: differs between any two runs
    assert first.drop(columns=timed).equals(again.drop(columns=timed))
