"""The authors' own simulator, run through the synchronous Ray stand-in, equals ours job by job."""

from __future__ import annotations

import importlib
import importlib.util
import math

import pytest

from schedlab import data
from schedlab.pcs import authors as A
from schedlab.pcs import load_config, make_policy, simulate
from schedlab.pcs.artifacts import TRACE_0E4A51, trace_0e4a51


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return A.prepare_workdir(tmp_path_factory.mktemp("authors"), data.require(TRACE_0E4A51))


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ray_stand_in_is_synchronous(tmp_path):
    ray = _load(A.write_shims(tmp_path) / "ray.py", "ray_stand_in")
    calls = []

    @ray.remote
    def f(x):
        calls.append(x)
        return 2 * x

    ref = f.remote(3)
    assert calls == [3]  # ran at .remote(), not at get()
    assert ray.get(ref) == 6 and ray.get([f.remote(1), ref]) == [2, 6]
    done, rest = ray.wait([ref, f.remote(5)])
    assert len(done) == 1 and len(rest) == 1
    assert not ray.is_initialized()
    ray.init(address="auto")
    assert ray.is_initialized() and ray.__version__ == "2.10.0"


def test_dill_stand_in_pickles_lambdas(tmp_path, monkeypatch):
    import io
    import sys

    # as in the authors' subprocess: the stand-in is importable as ``dill`` (not installed here)
    monkeypatch.syspath_prepend(str(A.write_shims(tmp_path)))
    monkeypatch.delitem(sys.modules, "dill", raising=False)
    try:
        dill = importlib.import_module("dill")
        assert dill.__file__ == str(tmp_path / "dill.py")
        buf = io.BytesIO()
        dill.dump({"prio": lambda a: a, "n": 3}, buf)
        buf.seek(0)
        back = dill.load(buf)
    finally:
        sys.modules.pop("dill", None)  # leave no stand-in behind for other tests
    assert back["n"] == 3 and "not pickled" in back["prio"]


def test_sources_are_copies_not_the_raw_inputs(workdir):
    raw = A.fetch_sources()
    for name in A.SIM_FILES:
        assert (workdir / "sim" / name).read_bytes() == (raw / name).read_bytes()
        assert (workdir / "sim" / name).resolve() != (raw / name).resolve()


@pytest.mark.parametrize("policy,predict", [("FIFO", True), ("PCS", True), ("AFS", False)])
def test_authors_equal_ours_per_job(workdir, policy, predict):
    n = 30
    cfg = load_config("PCS_config_0e4a51_jct") if policy == "PCS" else None
    theirs = A.run_authors(workdir, "trace_0e4a51", policy, n, predict=predict, config=cfg, timeout_s=120)
    assert len(theirs.jobs) == n and theirs.sim_s > 0 and theirs.wall_s >= theirs.sim_s
    if predict:  # every arrival predicted (p_of_estimate = 1 below 5000 jobs)
        assert (theirs.jobs.estimated_end_time != -1).all()
    ours = simulate(trace_0e4a51(n), make_policy(policy, cfg), 64, predict=predict)
    diffs = A.job_differences(ours, theirs.jobs)
    assert all(v <= 1e-9 for v in diffs.values() if not math.isnan(v)), diffs
    # the comparison can fail: shifting one of our end times shows up
    ours.loc[5, "end_time"] += 1e-3
    assert A.job_differences(ours, theirs.jobs)["end_time"] > 1e-9
