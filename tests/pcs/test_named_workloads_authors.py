"""Every named workload equals the authors' generator, job by job.

The authors' ``gen_workload`` (their ``sim.py``, commit 62a6ca3, from the mirror) runs in a
subprocess on the mirror's CDF files; ours is :func:`schedlab.pcs.generators.generate` with
``authors_rng(seed)`` and ``draw_order="vector"`` (their ``sim.py`` draws all inter-arrival
gaps before the per-app GPU demands). Sizes, GPU demands and submit times must be equal.

The size draw is the authors' row scan (first row with ``cdf >= u`` in file order); nine of
the mirror's size CDFs are not monotone, where a binary search on the raw column picks
another row. :func:`test_raw_binary_search_would_differ` is the control: with that search
the non-monotone sets do give other jobs, so the job-by-job test can fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from schedlab.pcs import authors
from schedlab.pcs.generators import (
    FAMILIES,
    authors_rng,
    cdf_path,
    first_at_least,
    generate,
    load_cdf,
    sample_cdf,
    service_cdf_names,
)

#: the authors' WORKLOADS list (their sim.py's ``-workload`` choices)
NAMED = (
    "gavel",
    "afs",
    "themis1",
    "themis2",
    "themis-scaled-2",
    "workload_0e4a51",
    "workload_b436b2",
    "workload_e13805",
    "workload_7f04ca",
    "workload_103959",
    "workload_ee9e8c",
    "workload_2869ce",
    "workload_ed69ec",
    "workload_11cb48",
    "workload_51b7ef",
    "workload_6214e9",
    "workload_6c71a0",
)
N_APPS = 300
SEED = 4567  # their sim.py's default -seed
LOAD, GPUS = 0.8, 64

_DRIVER = """\
import json, os, runpy, sys
shim, simdir, spec_file, out_file = sys.argv[1:5]
sys.path[:0] = [shim, simdir]
os.chdir(simdir)
g = runpy.run_path(simdir + '/sim.py', run_name='authors_sim')
out = {}
for name, n, seed, load, gpus in json.load(open(spec_file)):
    apps, events = {}, []
    g['gen_workload'](name, name, name, name, load, gpus, n, seed, apps, events,
                      g['Models']('linear'))
    t = {e.app_id: e.event_time for e in events}
    t0 = t[0]
    out[f'{name}/{seed}'] = {
        'service': [float(apps[a].service) for a in range(n)],
        'demand': [int(apps[a].demand) for a in range(n)],
        'submit': [(t[a] - t0).total_seconds() for a in range(n)]}
json.dump(out, open(out_file, 'w'))
"""


def _authors_workloads(tmp: Path, spec: list) -> dict:
    """Run their ``gen_workload`` once per ``(name, n, seed, load, gpus)`` row of ``spec``."""
    simdir, cdfs = tmp / "sim", tmp / "sim" / "workloads"
    cdfs.mkdir(parents=True)
    src = authors.fetch_sources()
    for f in authors.SIM_FILES:
        shutil.copyfile(src / f, simdir / f)
    for name in {row[0] for row in spec}:
        for fam in FAMILIES + ("app-interarrival-times",):
            p = cdf_path(fam, name)
            if p is not None:
                shutil.copyfile(p, cdfs / p.name)
    shim = authors.write_shims(tmp / "shim")
    (tmp / "spec.json").write_text(json.dumps(spec))
    out = tmp / "out.json"
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(shim), str(simdir), str(tmp / "spec.json"), str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"},
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def theirs(tmp_path_factory):
    spec = [[name, N_APPS, SEED, LOAD, GPUS] for name in NAMED]
    # a second seed and load on a monotone and a non-monotone set
    spec += [[name, N_APPS, 1954, 1.2, GPUS] for name in ("gavel", "workload_11cb48")]
    return _authors_workloads(tmp_path_factory.mktemp("authors-gen"), spec)


def _ours(name: str, seed: int, load: float):
    return generate(name, N_APPS, authors_rng(seed), load=load, gpus=GPUS, draw_order="vector")


def _differing(w, t: dict) -> dict[str, int]:
    return {
        "service": int(np.sum(w.service != np.asarray(t["service"]))),
        "demand": int(np.sum(w.demand != np.asarray(t["demand"]))),
        "submit": int(np.sum(w.submit_s != np.asarray(t["submit"]))),
    }


@pytest.mark.parametrize("name", NAMED)
def test_named_workload_equals_the_authors_job_by_job(theirs, name):
    w = _ours(name, SEED, LOAD)
    assert _differing(w, theirs[f"{name}/{SEED}"]) == {"service": 0, "demand": 0, "submit": 0}
    assert len(set(w.service.tolist())) > N_APPS // 3  # a real draw, not a constant


@pytest.mark.parametrize("name", ["gavel", "workload_11cb48"])
def test_other_seed_and_load(theirs, name):
    w = _ours(name, 1954, 1.2)
    assert _differing(w, theirs[f"{name}/1954"]) == {"service": 0, "demand": 0, "submit": 0}


def _raw_search_sizes(name: str, seed: int) -> np.ndarray:
    """Sizes as a binary search on the raw CDF column would draw them (the old sampler)."""
    cdf = load_cdf(cdf_path("app-service-times", name))
    rng = authors_rng(seed)
    out = []
    for _ in range(N_APPS):
        u = rng.uniform(0.0, 1.0)
        i = int(np.searchsorted(cdf[:, 1], u, side="left"))
        out.append(int(rng.uniform(0.0 if i == 0 else cdf[i - 1, 0], cdf[i, 0])))
    return np.asarray(out)


def test_raw_binary_search_would_differ(theirs):
    # control: the non-monotone size CDFs make the raw search draw other sizes
    nonmono = [n for n in NAMED if (np.diff(load_cdf(cdf_path("app-service-times", n))[:, 1]) < 0).any()]
    assert len(nonmono) >= 8
    differ = [
        n
        for n in nonmono
        if (_raw_search_sizes(n, SEED) != np.asarray(theirs[f"{n}/{SEED}"]["service"])).any()
    ]
    assert len(differ) >= 6, differ


def _scan_first(cums, u: float) -> int:
    """The authors' literal scan: first row with ``u <= cdf``."""
    for i, c in enumerate(cums):
        if u <= c:
            return i
    raise AssertionError("no row reached u; the CDF must end with 1.0")


def test_running_maximum_search_equals_the_row_scan():
    rng = np.random.default_rng(7)
    cdfs = [load_cdf(cdf_path("app-service-times", n))[:, 1] for n in service_cdf_names()]
    # random non-monotone columns with ties, plus the exact values as points
    for _ in range(200):
        k = int(rng.integers(1, 12))
        c = np.round(rng.random(k), 1)
        cdfs.append(np.concatenate([c, [1.0]]))
    for cums in cdfs:
        u = np.concatenate([rng.random(300), cums, [0.0, 1.0]])
        got = first_at_least(cums, u)
        assert got.tolist() == [_scan_first(cums, x) for x in u]


def _authors_sampler(cdf: np.ndarray, n: int, rng, interpolation: bool) -> list[int]:
    """A literal port of their ``helpers.gen_data_from_cdf`` loop."""
    data = []
    for _ in range(n):
        point = rng.uniform(0.0, 1.0)
        for i in range(len(cdf)):
            if point <= cdf[i][1]:
                lo = 0 if i == 0 else cdf[i - 1][0]
                data.append(int(rng.uniform(lo, cdf[i][0])) if interpolation else int(cdf[i][0]))
                break
    return data


@pytest.mark.parametrize("interpolation", [True, False])
@pytest.mark.parametrize("make_rng", [authors_rng, np.random.default_rng])
def test_vector_sampler_equals_the_loop_and_leaves_the_stream_where_it_does(interpolation, make_rng):
    for name in ("workload_11cb48", "workload_0e4a51", "gavel", "themis1"):
        cdf = load_cdf(cdf_path("app-service-times", name))
        a, b = make_rng(11), make_rng(11)
        assert sample_cdf(cdf, 500, a, interpolation).tolist() == _authors_sampler(cdf, 500, b, interpolation)
        assert a.uniform(0.0, 1.0) == b.uniform(0.0, 1.0)  # same stream position after


def test_sample_cdf_zero_points():
    rng = authors_rng(1)
    assert sample_cdf(np.array([[1.0, 1.0]]), 0, rng).tolist() == []
    assert rng.uniform() == authors_rng(1).uniform()
