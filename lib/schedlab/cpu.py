"""One code path per library on every x86-64 CPU, so the pipeline writes the same bytes everywhere.

Several libraries the pipeline uses pick their kernels by the CPU they run on, and the kernels
round or sum in different orders:

* OpenBLAS (NumPy's and SciPy's BLAS) picks a kernel family (SkylakeX with AVX-512, Haswell with
  AVX2, ...): matrix products sum in other orders.
* NumPy dispatches its ufunc loops to the widest SIMD level the CPU has: on an AVX-512 CPU
  ``np.exp``, ``np.log``, ``np.power``, ``np.log1p`` and ``np.expm1`` run NumPy's own AVX-512
  implementations, elsewhere the C library's; with AVX2, ``np.tanh`` and float32 ``np.exp`` run
  other code again. They differ in the last bit for a few values in a million.
* PyTorch dispatches its ATen kernels (AVX-512 / AVX2 / default) and its MKL and oneDNN kernels
  by CPU.

:func:`pin_cpu_dispatch` sets each library's own switch in the environment, before the library
loads, to the code every x86-64 CPU runs: :data:`PINS`. Importing schedlab calls it, so the
pins hold for the importing process (if NumPy was not loaded before) and for every process it
starts (notebook kernels, workers): the pipeline's stages run under them. :func:`status` tells
whether this process runs pinned.

What the pins cannot fix: the C library's ``exp``/``log``/``pow``/``sin`` themselves choose an FMA
variant on CPUs with AVX2 and FMA (every x86-64 CPU since 2013-2015) and a plain one on older
ones; the two differ in the last bit. The pipeline's bytes are therefore the same on x86-64
CPUs with AVX2 and FMA (x86-64-v3) running glibc >= 2.28, whose maths functions have not
changed since. ARM is not pinned (its NumPy and BLAS kernels are others).

``SCHEDLAB_CPU_DISPATCH=auto`` leaves every library to choose by CPU (faster on some machines;
outputs may differ in the last bits); ``SCHEDLAB_BLAS_CORETYPE`` names another OpenBLAS family
(or ``auto``) for BLAS alone.
"""

from __future__ import annotations

import os
import platform

#: the OpenBLAS kernel family every schedlab process uses on x86-64. Prescott (SSE3) runs on
#: every x86-64 CPU.
BLAS_CORETYPE = "Prescott"

#: NumPy's dispatch targets above its baseline on x86-64, all disabled: ``X86_V3`` ... are
#: NumPy >= 2.4's names; the others the names of NumPy 2.0-2.3 (each version ignores names it does
#: not know, and refuses only its baseline's, none of which is listed)
NUMPY_DISPATCH_X86 = (
    "X86_V3 X86_V4 AVX512_ICL AVX512_SPR "
    "SSSE3 SSE41 POPCNT SSE42 AVX F16C FMA3 AVX2 AVX512F AVX512CD AVX512_KNL AVX512_KNM "
    "AVX512_SKX AVX512_CLX AVX512_CNL AVX512FP16"
).split()

#: environment variable -> the value every schedlab process runs with on x86-64
PINS: dict[str, str] = {
    "OPENBLAS_CORETYPE": BLAS_CORETYPE,
    "NPY_DISABLE_CPU_FEATURES": " ".join(NUMPY_DISPATCH_X86),
    "ATEN_CPU_CAPABILITY": "default",  # PyTorch's own kernels: no AVX2/AVX-512 variants
    "MKL_CBWR": "COMPATIBLE",  # MKL (PyTorch's BLAS): the SSE2 path, same results on every CPU
    "ONEDNN_MAX_CPU_ISA": "SSE41",  # oneDNN (PyTorch's fused kernels)
}


def is_x86_64() -> bool:
    """True on x86-64, the only architecture the pins are for."""
    return platform.machine().lower() in ("x86_64", "amd64")


def pin_cpu_dispatch(environ: dict | None = None) -> dict[str, str]:
    """Set :data:`PINS` in ``environ`` (default: this process's environment) and return what it set.

    A caller's own ``NPY_DISABLE_CPU_FEATURES`` is kept and extended, the other variables are
    overwritten. Nothing is set off x86-64 or under ``SCHEDLAB_CPU_DISPATCH=auto``;
    ``SCHEDLAB_BLAS_CORETYPE`` names another OpenBLAS family, or ``auto`` to leave BLAS alone.

    >>> env = {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4"}
    >>> pinned = pin_cpu_dispatch(env)
    >>> (env["OPENBLAS_CORETYPE"], env["NPY_DISABLE_CPU_FEATURES"].split()[:3]) if is_x86_64() else (
    ...     "Prescott", ["X86_V4", "X86_V3", "AVX512_ICL"])
    ('Prescott', ['X86_V4', 'X86_V3', 'AVX512_ICL'])
    >>> pin_cpu_dispatch({"SCHEDLAB_CPU_DISPATCH": "auto"})
    {}
    """
    environ = os.environ if environ is None else environ
    if environ.get("SCHEDLAB_CPU_DISPATCH", "pinned") == "auto" or not is_x86_64():
        return {}
    pins = dict(PINS)
    family = environ.get("SCHEDLAB_BLAS_CORETYPE", BLAS_CORETYPE)
    if family == "auto":
        del pins["OPENBLAS_CORETYPE"]
    else:
        pins["OPENBLAS_CORETYPE"] = family
    theirs = environ.get("NPY_DISABLE_CPU_FEATURES", "").split()
    pins["NPY_DISABLE_CPU_FEATURES"] = " ".join(dict.fromkeys(theirs + NUMPY_DISPATCH_X86))
    environ.update(pins)
    return pins


def numpy_dispatch_left() -> list[str]:
    """NumPy's SIMD dispatch targets this process still uses (loads NumPy): ``[]`` when pinned, or
    on a CPU with none above NumPy's baseline."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]


def status() -> dict[str, object]:
    """What this process runs with: the pins in its environment, and whether NumPy honoured them
    (it reads its switch once, when it loads: NumPy imported before schedlab keeps its dispatch).

    >>> sorted(status())
    ['numpy_dispatch_left', 'pinned', 'unpinned_variables']
    """
    wanted = pin_cpu_dispatch(dict(os.environ))
    missing = sorted(k for k, v in wanted.items() if os.environ.get(k) != v)
    left = numpy_dispatch_left() if is_x86_64() else []
    return {"pinned": not missing and not left, "unpinned_variables": missing, "numpy_dispatch_left": left}


def exec_pinned(argv: list[str]) -> None:
    """Replace this process by ``argv`` run under the pins (``schedlab pinned -- CMD ...``: e.g.
    JupyterLab, whose kernels then compute the same bits as the pipeline's)."""
    pin_cpu_dispatch()
    os.execvp(argv[0], argv)
