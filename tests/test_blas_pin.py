"""Same bytes on every x86-64 CPU: schedlab pins OpenBLAS's kernel family (schedlab.pin_blas).

OpenBLAS picks its kernels by CPU, and they sum in different orders: without the pin the Nona
optimiser's tables, Table I's penalty runs and PolarisProfiler's grid differ in their last bits
between, e.g., an AVX-512 and an AVX2 machine. ``OPENBLAS_CORETYPE`` makes one machine stand in
for another: these tests run the same work under several core types and require identical bytes
once schedlab is imported first, and (the control) different bytes without the pin.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab import BLAS_CORETYPE, paths

pytestmark = pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="the pin is for OpenBLAS's x86-64 kernel families",
)

#: solves whose floats go through BLAS (a few loads of the pipeline's and Table III's workloads,
#: and the paper's penalty method on job f): prints one hash of every table and vector
PROBE = """
import hashlib, json, sys
{first}
import numpy as np
from schedlab.nona.optimise import solve, solve_point
from schedlab.nona.workload import Cluster, build_workload, job_f
h = hashlib.sha256()
for load in (0.1, 0.5, 0.9):
    for kw in ({{"load_basis": "cluster", "time_scale": {{"gpt2": 0.00453}}}}, {{"comm_load": 0.02}}):
        h.update(json.dumps(solve_point(load, workload_kwargs=kw)[1], sort_keys=True).encode())
c = Cluster(servers=2, bandwidth_gbps=80.0)
for load in (0.2, 0.5, 0.8):
    wl = build_workload(classes=[job_f()], load=load, cluster=c, background_comm_bytes=2e7)
    h.update(np.asarray(solve(wl, c, method="penalty", max_iter=300).theta).tobytes())
import threadpoolctl
print(h.hexdigest(), [i.get("architecture") for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"][0])
"""


def _has_avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def _probe(coretype: str | None, *, pinned: bool) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "SCHEDLAB_BLAS_CORETYPE")}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    if not pinned:
        env["SCHEDLAB_BLAS_CORETYPE"] = "auto"
    code = PROBE.format(first="import schedlab")  # schedlab first: the pin acts before NumPy loads
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=paths.ROOT
    )
    digest, arch = out.stdout.split(maxsplit=1)
    return digest, arch.strip()


def test_the_pin_sets_the_kernel_family_whatever_the_caller_chose():
    reference = subprocess.run(
        [
            sys.executable,
            "-c",
            "import numpy, threadpoolctl; print([i.get('architecture') "
            "for i in threadpoolctl.threadpool_info() if i['internal_api'] == 'openblas'][0])",
        ],
        env={**os.environ, "OPENBLAS_CORETYPE": BLAS_CORETYPE},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    for outer in (None, "Prescott", "Sandybridge"):
        assert _probe(outer, pinned=True)[1] == reference, outer


def test_same_bytes_under_every_kernel_family_with_the_pin():
    outers = [None, "Sandybridge"] + (["Haswell"] if _has_avx2() else [])
    digests = {outer: _probe(outer, pinned=True)[0] for outer in outers}
    assert len(set(digests.values())) == 1, digests


@pytest.mark.skipif(not _has_avx2(), reason="the control needs two kernel families this CPU runs")
def test_control_without_the_pin_the_bytes_depend_on_the_kernels():
    # what the pin prevents: the same work under two kernel families gives other bits
    assert _probe("Prescott", pinned=False)[0] != _probe("Haswell", pinned=False)[0]


def _run_stage(name: str, root: Path, coretype: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    subprocess.run(
        [
            str(Path(sys.executable).parent / "schedlab"),
            "notebook",
            "run",
            name,
            "--profile",
            "smoke",
            "--output-root",
            str(root),
        ],
        env=env,
        check=True,
        capture_output=True,
        cwd=paths.ROOT,
    )
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / "results").rglob("*"))
        if p.is_file() and "timings" not in p.parts
    }


@pytest.mark.skipif(not _has_avx2(), reason="needs a second kernel family this CPU runs")
def test_a_stage_writes_the_same_bytes_when_the_caller_asks_for_other_kernels(tmp_path):
    """``schedlab notebook run`` (as dvc calls it) under the caller's Haswell kernels and under
    OpenBLAS's own choice: the stage's outputs are the same bytes (the kernel inherits the pin)."""
    a = _run_stage("nona/optimiser", tmp_path / "a", "Haswell")
    b = _run_stage("nona/optimiser", tmp_path / "b", None)
    assert a and a == b
