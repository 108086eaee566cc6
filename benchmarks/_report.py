"""What the benchmark scripts share: lines printed and, when ``OUT`` is set, appended to a results file.

Run as scripts, the benchmarks find this module next to them (``sys.path[0]`` is ``benchmarks/``).
"""

from __future__ import annotations

import resource
from pathlib import Path

#: the results file every :func:`say` line is also appended to (set by a script's ``--out``)
OUT: Path | None = None


def say(msg: str) -> None:
    print(msg, flush=True)
    if OUT is not None:
        with open(OUT, "a") as fh:
            fh.write(msg + "\n")


def peak_rss_gb() -> float:
    """Peak resident memory of this process so far, GB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
