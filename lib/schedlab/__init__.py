"""schedlab: reproducible research suite for Nona, PolarisProfiler and PCS.

Subpackages: :mod:`schedlab.data` (raw inputs), :mod:`schedlab.nona` (DNN inference DAGs
and their scheduling); :mod:`schedlab.paths` resolves every location from the repo root.
"""

__version__ = "0.1.0"
