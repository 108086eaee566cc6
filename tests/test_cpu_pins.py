"""Same bytes on every x86-64 CPU: schedlab pins the CPU-dependent kernels (schedlab.cpu).

OpenBLAS, NumPy and PyTorch pick their kernels by CPU, and the kernels round or sum in other
orders: without the pins the Nona optimiser's tables, Table I's penalty runs, PolarisProfiler's
grid, Decima's retrained weights and whatever goes through ``np.exp``/``np.log`` differ in their
last bits between, e.g., an AVX-512 and an AVX2 machine. Each library's own switch
(``OPENBLAS_CORETYPE``, ``NPY_DISABLE_CPU_FEATURES``, ``ATEN_CPU_CAPABILITY``) makes this machine
stand in for another: these tests run the same work under several settings and require identical
bytes once schedlab is imported first, and (the control) different bytes without the pins.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab import cpu, paths
from schedlab.cpu import BLAS_CORETYPE

pytestmark = pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="the pins are for x86-64's kernel families",
)

#: the settings that make this machine stand in for an AVX2 machine without AVX-512 (NumPy, PyTorch)
AVX2_MACHINE = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR", "ATEN_CPU_CAPABILITY": "avx2"}
#: ... and for a machine with no SIMD above NumPy's baseline
BASELINE_MACHINE = {
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
    "ATEN_CPU_CAPABILITY": "default",
}
#: every variable a probe's caller may set, cleared first so that the test's own environment does not leak in
CALLER_VARIABLES = ("OPENBLAS_CORETYPE", "SCHEDLAB_BLAS_CORETYPE", "SCHEDLAB_CPU_DISPATCH", *cpu.PINS)

#: the NumPy functions whose loops NumPy dispatches by CPU (and two it does not, which must agree anyway)
NUMPY_PROBE = """
import hashlib, sys
{first}
import numpy as np
x = np.random.default_rng(0).normal(size=200_000) * 5
a = np.abs(x)
parts = [np.exp(x), np.log(a + 1e-3), a ** 1.7, np.log1p(a), np.expm1(x), np.tanh(x), np.exp(x.astype(np.float32)),
         np.sin(x), np.sqrt(a), np.cumsum(x)]
print(hashlib.sha256(b"".join(np.ascontiguousarray(p).tobytes() for p in parts)).hexdigest())
"""

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


def _has(flag: str) -> bool:
    try:
        return f" {flag}" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def _env(settings: dict[str, str], *, pinned: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CALLER_VARIABLES}
    env.update(settings)
    if not pinned:
        env["SCHEDLAB_CPU_DISPATCH"] = "auto"
    return env


def _run_probe(code: str, settings: dict[str, str], *, pinned: bool) -> str:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            code.format(first="import schedlab"),
        ],  # schedlab first: the pins act before NumPy loads
        env=_env(settings, pinned=pinned),
        capture_output=True,
        text=True,
        check=True,
        cwd=paths.ROOT,
    )
    return out.stdout.strip()


def _probe(coretype: str | None, *, pinned: bool) -> tuple[str, str]:
    """The BLAS probe's digest and OpenBLAS's kernel family, the caller asking for ``coretype``."""
    digest, arch = _run_probe(
        PROBE, {"OPENBLAS_CORETYPE": coretype} if coretype else {}, pinned=pinned
    ).split(maxsplit=1)
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
    outers = [None, "Sandybridge"] + (["Haswell"] if _has("avx2") else [])
    digests = {outer: _probe(outer, pinned=True)[0] for outer in outers}
    assert len(set(digests.values())) == 1, digests


@pytest.mark.skipif(not _has("avx2"), reason="the control needs two kernel families this CPU runs")
def test_control_without_the_pin_the_bytes_depend_on_the_kernels():
    # what the pin prevents: the same work under two kernel families gives other bits
    assert _probe("Prescott", pinned=False)[0] != _probe("Haswell", pinned=False)[0]


def test_numpy_computes_the_same_bits_on_every_simd_level_with_the_pins():
    digests = {
        name: _run_probe(NUMPY_PROBE, s, pinned=True)
        for name, s in {"this CPU": {}, "AVX2": AVX2_MACHINE, "baseline": BASELINE_MACHINE}.items()
    }
    assert len(set(digests.values())) == 1, digests


@pytest.mark.skipif(not _has("avx512f"), reason="the control needs an AVX-512 CPU (NumPy's own exp/log)")
def test_control_without_the_pins_numpy_depends_on_the_simd_level():
    # what the pin prevents: np.exp/np.log run NumPy's AVX-512 code here and the C library's on an AVX2 machine
    assert _run_probe(NUMPY_PROBE, {}, pinned=False) != _run_probe(NUMPY_PROBE, AVX2_MACHINE, pinned=False)


def test_numpy_loaded_before_schedlab_is_reported_unpinned():
    code = (
        "import numpy, schedlab.cpu as c; s = c.status(); print(s['pinned'], bool(s['numpy_dispatch_left']))"
    )
    first_numpy = subprocess.run(
        [sys.executable, "-c", code], env=_env({}, pinned=True), capture_output=True, text=True, check=True
    ).stdout.split()
    has_dispatch = _has("avx2")  # NumPy >= 2.4's baseline is x86-64-v2: AVX2 is its first dispatch target
    assert first_numpy == ["False", "True"] if has_dispatch else first_numpy == ["True", "False"]
    code = "import schedlab.cpu as c, numpy; print(c.status()['pinned'])"
    assert (
        subprocess.run(
            [sys.executable, "-c", code],
            env=_env({}, pinned=True),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        == "True"
    )


#: a few Adam steps of a small tanh network (Decima's policy is one): its weights' hash
TORCH_PROBE = """
import hashlib
{first}
import torch
g = torch.Generator().manual_seed(0)
x, y = torch.randn(512, 64, generator=g), torch.randint(0, 8, (512,), generator=g)
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.Tanh(), torch.nn.Linear(128, 8))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for _ in range(20):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(net(x), y).backward()
    opt.step()
print(hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in net.parameters())).hexdigest())
"""


def test_pytorch_trains_to_the_same_bits_on_every_kernel_level_with_the_pins():
    pytest.importorskip("torch")
    settings = [{}, AVX2_MACHINE, BASELINE_MACHINE] + (
        [{"ATEN_CPU_CAPABILITY": "avx512"}] if _has("avx512f") else []
    )
    digests = [_run_probe(TORCH_PROBE, s, pinned=True) for s in settings]
    assert len(set(digests)) == 1, digests


@pytest.mark.skipif(not _has("avx2"), reason="the control needs two ATen kernel levels this CPU runs")
def test_control_without_the_pins_pytorch_depends_on_the_kernel_level():
    pytest.importorskip("torch")
    assert _run_probe(TORCH_PROBE, {"ATEN_CPU_CAPABILITY": "avx2"}, pinned=False) != _run_probe(
        TORCH_PROBE, {"ATEN_CPU_CAPABILITY": "default"}, pinned=False
    )


def test_the_pins_reach_a_command_run_through_schedlab_pinned():
    code = "import numpy, os; from schedlab import cpu; print(cpu.numpy_dispatch_left(), os.environ['ATEN_CPU_CAPABILITY'])"
    out = subprocess.run(
        [str(Path(sys.executable).parent / "schedlab"), "pinned", "--", sys.executable, "-c", code],
        env=_env(AVX2_MACHINE, pinned=True),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert (
        out == "[] default"
    )  # NumPy loaded first, yet pinned: the variables were set before the process started


def _run_stage(name: str, root: Path, settings: dict[str, str], *, pinned: bool = True) -> dict[str, str]:
    env = _env(settings, pinned=pinned)
    if not pinned:
        env["OPENBLAS_CORETYPE"] = BLAS_CORETYPE  # BLAS as before NumPy's and PyTorch's pins existed
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
    return {  # a table may name its own files by absolute path: the scratch root is left out
        str(p.relative_to(root)): hashlib.sha256(
            p.read_bytes().replace(str(root).encode(), b"ROOT")
        ).hexdigest()
        for p in sorted((root / "results").rglob("*"))
        if p.is_file() and "timings" not in p.parts
    }


@pytest.mark.skipif(not _has("avx2"), reason="needs a second kernel family this CPU runs")
def test_a_stage_writes_the_same_bytes_when_the_caller_asks_for_other_kernels(tmp_path):
    """``schedlab notebook run`` (as dvc calls it) under the caller's Haswell kernels and under
    OpenBLAS's own choice: the stage's outputs are the same bytes (the kernel inherits the pin)."""
    a = _run_stage("nona/optimiser", tmp_path / "a", {"OPENBLAS_CORETYPE": "Haswell"})
    b = _run_stage("nona/optimiser", tmp_path / "b", {})
    assert a and a == b


@pytest.mark.slow
@pytest.mark.skipif(
    not _has("avx512f"), reason="the control needs an AVX-512 CPU to stand in for an AVX2 one"
)
def test_a_stage_writes_the_same_bytes_as_on_an_avx2_machine(tmp_path):
    """PCS Fig. 3's SPEA2 front (one of the outputs a second machine changed) at smoke size,
    natively and as an AVX2 machine: the same bytes with the pins; other bytes without them (the
    control: the stand-in does change what this stage computes)."""
    native = _run_stage("pcs/fig3", tmp_path / "native", {})
    assert native and native == _run_stage("pcs/fig3", tmp_path / "avx2", AVX2_MACHINE)
    unpinned = _run_stage("pcs/fig3", tmp_path / "u_native", {}, pinned=False)
    assert unpinned != _run_stage("pcs/fig3", tmp_path / "u_avx2", AVX2_MACHINE, pinned=False)
