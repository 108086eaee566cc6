"""What a cached result depends on besides its inputs: the code that computed it and how it computed.

A cache (PolarisProfiler's grid runs, its stand-in's work folder, Decima's training checkpoints)
is keyed by its inputs and settings. Reusing an entry computed by other code, other package
versions or other CPU kernels (:mod:`schedlab.cpu`) would put that run's bits into today's
outputs: a pipeline output would then depend on what a checkout's git-ignored ``data/cache`` held,
and a fresh clone would write other bytes. :func:`compute_fingerprint` is the part of every cache
key that says how the numbers were computed.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
from importlib import metadata
from pathlib import Path

from schedlab import cpu

#: the packages whose versions can change a cached number's bits
NUMERIC_PACKAGES = (
    "numpy",
    "scipy",
    "scikit-learn",
    "hdbscan",
    "numba",
    "torch",
    "xgboost",
    "pymoo",
    "pandas",
)


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


@functools.cache
def _versions() -> tuple[tuple[str, str], ...]:
    # read once per process (installed versions do not change under it): most of a fingerprint's cost,
    # and a grid names its cache files with one for every entry it reads or writes
    return tuple((p, _version(p)) for p in NUMERIC_PACKAGES)


def compute_fingerprint(*sources: str | Path) -> str:
    """SHA-256 (hex) of how this process computes: the CPU pins in effect (the variables of
    :data:`schedlab.cpu.PINS` and NumPy's dispatch left), the architecture, the versions of
    :data:`NUMERIC_PACKAGES`, and the bytes of ``sources`` (the code that computes the cached
    result: files, or folders whose ``*.py`` are read in name order).

    >>> a = compute_fingerprint()
    >>> len(a), a == compute_fingerprint()
    (64, True)
    """
    h = hashlib.sha256()
    # each variable as a set of words: the same pins set in another order are the same pins
    pins = {k: sorted(set(os.environ.get(k, "").split())) for k in sorted(cpu.PINS)}
    h.update(repr((pins, cpu.numpy_dispatch_left(), platform.machine())).encode())
    h.update(repr(list(_versions())).encode())
    for source in sources:
        path = Path(source)
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for f in files:
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()
