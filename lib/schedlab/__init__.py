"""schedlab: reproducible research suite for Nona, PolarisProfiler and PCS.

Subpackages: :mod:`schedlab.data` (raw inputs), :mod:`schedlab.nona` (DNN inference DAGs
and their scheduling); :mod:`schedlab.paths` resolves every location from the repo root.

Importing schedlab pins OpenBLAS's kernels (:func:`pin_blas`) for this process and every
process it starts (notebook kernels, workers), so that the pipeline's outputs are the same
bytes on every x86-64 CPU.
"""

from __future__ import annotations

import os
import platform

__version__ = "0.1.0"

#: the OpenBLAS kernel family every schedlab process uses on x86-64. OpenBLAS otherwise picks its
#: kernels by CPU (SkylakeX with AVX-512, Haswell with AVX2, ...), and they sum in different orders:
#: the optimiser's tables, Table I's penalty runs and PolarisProfiler's grid then differ in their
#: last bits from one CPU to another. Prescott (SSE3) runs on every x86-64 CPU.
BLAS_CORETYPE = "Prescott"


def pin_blas(environ: dict | None = None) -> str | None:
    """Set ``OPENBLAS_CORETYPE`` to :data:`BLAS_CORETYPE` in ``environ`` (default: this process's),
    unless ``SCHEDLAB_BLAS_CORETYPE`` names another family or ``auto`` (OpenBLAS chooses by CPU:
    faster on some machines, outputs may differ in the last bits). Only on x86-64. It acts on
    NumPy/SciPy loaded *after* it; a process that imported NumPy before schedlab keeps its kernels.
    Returns the family set, or None.

    >>> env = {"OPENBLAS_CORETYPE": "Haswell"}
    >>> pin_blas(env) if platform.machine().lower() in ("x86_64", "amd64") else "Prescott"
    'Prescott'
    >>> pin_blas({"SCHEDLAB_BLAS_CORETYPE": "auto"}) is None
    True
    """
    environ = os.environ if environ is None else environ
    choice = environ.get("SCHEDLAB_BLAS_CORETYPE", BLAS_CORETYPE)
    if choice == "auto" or platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    environ["OPENBLAS_CORETYPE"] = choice
    return choice


pin_blas()
