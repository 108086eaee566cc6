"""Every path the suite uses, resolved from the repository root, never the working directory.

The root is, in order: ``$SCHEDLAB_ROOT``; the folder holding ``dvc.yaml`` above this file
(an editable install, the normal case); the nearest folder holding ``dvc.yaml`` above the
current directory (a non-editable install run inside a checkout).

Examples
--------
>>> from schedlab import paths
>>> paths.RAW.relative_to(paths.ROOT).as_posix()
'data/raw'
"""

from __future__ import annotations

import os
from pathlib import Path

_MARKER = "dvc.yaml"


def _find_root() -> Path:
    env = os.environ.get("SCHEDLAB_ROOT")
    if env:
        return Path(env).resolve()
    for start in (Path(__file__).resolve().parent, Path.cwd().resolve()):
        for folder in (start, *start.parents):
            if (folder / _MARKER).is_file() and (folder / "lib").is_dir():
                return folder
    raise RuntimeError(
        "cannot locate the schedlab repository root (no dvc.yaml with a lib/ folder above "
        f"{Path(__file__).resolve()} or {Path.cwd()}); set SCHEDLAB_ROOT to the checkout"
    )


ROOT: Path = _find_root()
DATA: Path = ROOT / "data"
RAW: Path = DATA / "raw"  # fetched raw inputs (read-only copies)
GENERATED: Path = DATA / "generated"  # inputs the project makes itself (e.g. traced DAGs)
EXECUTED: Path = DATA / "executed"  # notebooks as executed by the pipeline
RESULTS: Path = ROOT / "results"
FIGURES: Path = ROOT / "figures"
NOTEBOOKS: Path = ROOT / "notebooks"
REFERENCE: Path = ROOT / "reference"
PARAMS: Path = ROOT / "params.yaml"
SCRATCH: Path = DATA / "scratch"  # where interactive notebook runs write by default
#: sub-folder of results/<paper>/ for wall-clock and CPU times: never a DVC output, never a dependency
TIMINGS = "timings"

DEFAULT_MIRROR: Path = ROOT.parent / "shared" / "data"


def mirror() -> Path | None:
    """The mirror directory raw inputs are copied from, or ``None`` to download.

    ``$SCHEDLAB_MIRROR`` overrides the default ``../shared/data``; set it to an empty string
    (or ``none``) to always download from the original URLs.
    """
    env = os.environ.get("SCHEDLAB_MIRROR")
    if env is None:
        return DEFAULT_MIRROR
    if env.strip().lower() in ("", "none"):
        return None
    return Path(env).expanduser().resolve()


def raw(relpath: str) -> Path:
    """Path of a fetched raw input, by its manifest path (``nona/alexnet/graph.txt``)."""
    return RAW / relpath


def results(*parts: str) -> Path:
    return RESULTS.joinpath(*parts)


def figures(*parts: str) -> Path:
    return FIGURES.joinpath(*parts)
