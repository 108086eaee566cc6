"""Atomic output: a file either appears whole under its final name or not at all.

Every writer in the suite goes through :func:`atomic_path`, which hands out a temporary
sibling (same folder, so ``os.replace`` is atomic on POSIX) and renames it on success.

Examples
--------
>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "table.csv"
>>> atomic_write_text(out, "a,b\\n1,2\\n")
>>> out.read_text()
'a,b\\n1,2\\n'
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _umask() -> int:
    """The process's umask (read by setting it and putting it straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], mode: int = 0o666) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it onto ``path`` if the block succeeds.

    The temporary keeps ``path``'s suffix so that libraries choosing a format by extension
    (matplotlib, pandas) still do the right thing. On any exception the temporary is
    removed and ``path`` is left as it was. The file gets ``mode`` less the umask (0644 for
    the default under umask 022), as any newly created file would.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=f".part{target.suffix}", dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb") as fh:  # flush to disk before the rename makes it visible
            os.fsync(fh.fileno())
        # mkstemp creates 0600; an output must get the mode any new file gets (0644 under umask
        # 022), or nobody else in a shared teaching folder can read it
        os.chmod(tmp, mode & ~_umask())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


class NotWritableError(ValueError):
    """An output place that cannot be written (a read-only folder, a file in the way)."""


def _can_create_in(folder: Path) -> bool:
    """Whether this process can create a file in ``folder``: a real probe, not the mode bits, so
    root, ACLs and read-only mounts all get the answer the atomic writer would get. The probe is
    an unnamed temporary file (``O_TMPFILE`` on Linux), so nothing appears in the folder."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def require_writable(path: str | os.PathLike[str], option: str, *, folder: bool = False) -> Path:
    """``path`` if an output can be written there, else :class:`NotWritableError` naming ``option``.

    Every command that writes calls this before its work starts, so that a read-only output
    folder costs one line, not a finished simulation and a traceback. ``folder=True``: ``path``
    is a folder to write into (created later if missing); else a file. Nothing is created here.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> require_writable(d / "new" / "x.csv", "--out") == d / "new" / "x.csv"
    True
    >>> (d / "f").write_text("")
    0
    >>> require_writable(d / "f" / "x.csv", "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    schedlab.io.NotWritableError: --out ...: cannot write there: .../f is a file, not a folder
    """
    target = Path(path)
    if folder and target.exists() and not target.is_dir():
        raise NotWritableError(f"{option} {target}: is a file; expected a folder to write into")
    if not folder and target.is_dir():
        raise NotWritableError(f"{option} {target}: is a folder; expected a file name to write")
    where = target if folder else target.parent
    existing = next((p for p in (where, *where.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise NotWritableError(f"{option} {target}: cannot write there: {existing} is a file, not a folder")
    if not _can_create_in(existing):
        raise NotWritableError(
            f"{option} {target}: cannot write there: folder {existing} is not writable "
            "(read-only?); expected a writable folder"
        )
    return target


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n")


def _json_default(obj: Any) -> Any:
    # numpy scalars and arrays, without importing numpy at module load
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "ndim", 1) == 0:
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return obj.as_posix()
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


def savefig(fig: Any, path: str | os.PathLike[str], **kwargs: Any) -> None:
    """Save a matplotlib figure atomically (format from the suffix), byte-reproducibly.

    PDF and SVG writers stamp the creation date by default; it is dropped so that
    re-running a stage gives identical files (and DVC sees nothing new).
    """
    kwargs.setdefault("bbox_inches", "tight")
    suffix = Path(path).suffix.lower()
    if suffix == ".pdf":
        kwargs.setdefault("metadata", {"CreationDate": None, "ModDate": None})
    elif suffix == ".svg":
        kwargs.setdefault("metadata", {"Date": None})
    with atomic_path(path) as tmp:
        fig.savefig(tmp, **kwargs)
