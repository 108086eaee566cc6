"""schedlab: reproducible research suite for Nona, PolarisProfiler and PCS.

Subpackages: :mod:`schedlab.data` (raw inputs), :mod:`schedlab.nona` (DNN inference DAGs
and their scheduling); :mod:`schedlab.paths` resolves every location from the repo root.

Importing schedlab pins the CPU-dependent kernels of OpenBLAS, NumPy and PyTorch
(:mod:`schedlab.cpu`) for this process and every process it starts (notebook kernels, workers),
so that the pipeline's outputs are the same bytes on every x86-64 CPU with AVX2 and FMA.
"""

from __future__ import annotations

__version__ = "0.1.0"

from schedlab.cpu import pin_cpu_dispatch

pin_cpu_dispatch()
