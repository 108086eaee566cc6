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


class RootError(RuntimeError):
    """The project root cannot be found, or ``$SCHEDLAB_ROOT`` names no checkout."""


def _is_checkout(folder: Path) -> bool:
    return (folder / _MARKER).is_file() and (folder / "lib").is_dir()


def checkout_above(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``dvc.yaml`` and ``lib/``, if any."""
    start = start.resolve()
    return next((f for f in (start, *start.parents) if _is_checkout(f)), None)


def _find_root() -> Path:
    env = os.environ.get("SCHEDLAB_ROOT")
    if env:
        root = Path(env).expanduser().resolve()
        # a mistyped root would otherwise be accepted and every output written under it
        if not _is_checkout(root):
            raise RootError(
                f"SCHEDLAB_ROOT={env!r} is not a schedlab checkout (expected a folder holding "
                f"{_MARKER} and lib/; {root} {'does not exist' if not root.exists() else 'holds no such pair'}); "
                "unset it to use the checkout this package was installed from"
            )
        return root
    for start in (Path(__file__).resolve().parent, Path.cwd()):
        found = checkout_above(start)
        if found is not None:
            return found
    raise RootError(
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
