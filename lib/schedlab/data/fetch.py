"""Fetch raw inputs from a mirror or their original URL, verified and written atomically."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import stat
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from schedlab import paths
from schedlab.data.manifest import Entry, entry as _entry, select
from schedlab.io import atomic_path
from schedlab.progress import bar as progress_bar  # not tqdm.auto: it warns in kernels without ipywidgets

_CHUNK = 1 << 20
MIRROR_HELP = (
    "set SCHEDLAB_MIRROR to a folder laid out like ../shared/data (e.g. "
    "`export SCHEDLAB_MIRROR=/path/to/shared/data`), or go online so the original URL can be read"
)

Opener = Callable[[str], BinaryIO]


class FetchError(RuntimeError):
    """A raw input could not be obtained."""


class ChecksumMismatch(FetchError):
    """Bytes arrived but are not the ones the manifest names; nothing was kept."""


def raw_path(item: Entry | str, root: Path | None = None) -> Path:
    """Where a raw input lives once fetched (``data/raw/<path>``)."""
    e = _entry(item) if isinstance(item, str) else item
    return (root or paths.RAW) / e.path


def _copy_hashing(src: BinaryIO, dst: BinaryIO, total: int | None, label: str) -> str:
    h = hashlib.sha256()
    show = total is not None and total > 16 * _CHUNK
    with progress_bar(total=total, unit="B", desc=label, unit_scale=True, disable=not show, leave=False) as bar:
        for block in iter(lambda: src.read(_CHUNK), b""):
            h.update(block)
            dst.write(block)
            bar.update(len(block))
    return h.hexdigest()


def sha256_file(path: Path, gunzip: bool = False) -> str:
    """sha256 of a file's bytes (of its gunzipped content with ``gunzip``), streamed."""
    h = hashlib.sha256()
    opener = gzip.open if gunzip else open
    with opener(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def is_verified(e: Entry, path: Path) -> bool:
    """True if ``path`` holds exactly the entry's bytes (or, for a gzipped download, its content)."""
    if not path.is_file():
        return False
    if sha256_file(path) == e.sha256:
        return True
    if e.url_content == "uncompressed":
        try:
            return sha256_file(path, gunzip=True) == e.content_sha256
        except (OSError, EOFError):
            return False
    return False


def _mismatch(e: Entry, origin: str, expected: str, actual: str) -> ChecksumMismatch:
    return ChecksumMismatch(
        f"{e.name}: checksum mismatch for the copy from {origin}: expected sha256 {expected}, "
        f"got {actual}; nothing was written"
    )


def _from_mirror(e: Entry, mirror: Path, dest: Path) -> None:
    src = mirror / e.path
    with open(src, "rb") as fin, atomic_path(dest, mode=READ_ONLY) as tmp:
        with open(tmp, "wb") as fout:
            digest = _copy_hashing(fin, fout, e.size, e.name)
        if digest != e.sha256:
            raise _mismatch(e, str(src), e.sha256, digest)


def _default_opener(url: str) -> BinaryIO:
    return urllib.request.urlopen(url, timeout=60)  # noqa: S310 (https URLs from our manifest)


def _from_url(e: Entry, url: str, dest: Path, opener: Opener) -> None:
    with opener(url) as resp, atomic_path(dest, mode=READ_ONLY) as tmp:
        if e.url_content == "uncompressed":
            # the mirror keeps a gzip of what the URL serves: verify the served bytes, then
            # gzip them deterministically (mtime 0, no file name)
            raw_tmp = tmp.with_name(tmp.name + ".download")
            try:
                with open(raw_tmp, "wb") as fout:
                    digest = _copy_hashing(resp, fout, None, e.name)
                if digest != e.content_sha256:
                    raise _mismatch(e, url, str(e.content_sha256), digest)
                with open(raw_tmp, "rb") as fin, open(tmp, "wb") as fout:
                    with gzip.GzipFile(filename="", mode="wb", fileobj=fout, mtime=0) as gz:
                        shutil.copyfileobj(fin, gz, _CHUNK)
            finally:
                raw_tmp.unlink(missing_ok=True)
        else:
            with open(tmp, "wb") as fout:
                digest = _copy_hashing(resp, fout, e.size, e.name)
            if digest != e.sha256:
                raise _mismatch(e, url, e.sha256, digest)


#: raw copies are read-only (r--r--r-- less the umask): raw data is never modified
READ_ONLY = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH


def _offline() -> bool:
    return os.environ.get("SCHEDLAB_OFFLINE", "").strip().lower() in ("1", "true", "yes")


def fetch_entry(
    e: Entry,
    *,
    mirror: Path | None | str = "default",
    root: Path | None = None,
    force: bool = False,
    opener: Opener | None = None,
) -> Path:
    """Make one raw input present and verified under ``root`` (default ``data/raw``).

    Order: an already verified local copy; the mirror; each URL in turn. A checksum
    mismatch from the mirror is final (the mirror is supposed to be exact); from a URL it is
    reported after the other URLs were tried. ``$SCHEDLAB_OFFLINE=1`` forbids downloads.
    """
    dest = raw_path(e, root)
    if not force and is_verified(e, dest):
        return dest
    mirror_dir = paths.mirror() if mirror == "default" else (Path(mirror) if mirror else None)
    if mirror_dir is not None and (mirror_dir / e.path).is_file():
        _from_mirror(e, mirror_dir, dest)
        return dest

    where = f"not in the mirror {mirror_dir}" if mirror_dir is not None else "no mirror configured"
    if not e.urls:
        raise FetchError(
            f"{e.name}: {where}, and it has no public URL ({e.derived or 'mirror-only file'}); "
            f"{MIRROR_HELP.split(', or go online')[0]}"
        )
    if _offline():
        raise FetchError(
            f"{e.name}: {where}, and downloads are disabled (SCHEDLAB_OFFLINE); it would come from "
            f"{e.urls[0]}; {MIRROR_HELP}"
        )
    failures: list[str] = []
    mismatches = 0
    for url in e.urls:
        try:
            _from_url(e, url, dest, opener or _default_opener)
            return dest
        except ChecksumMismatch as exc:
            failures.append(str(exc))
            mismatches += 1
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            failures.append(f"{url}: {exc}")
    error = ChecksumMismatch if mismatches == len(e.urls) else FetchError
    raise error(
        f"{e.name}: {where}, and every download failed:\n  " + "\n  ".join(failures) + f"\n{MIRROR_HELP}"
    )


def fetch(
    names: Iterable[str] = (),
    *,
    mirror: Path | None | str = "default",
    root: Path | None = None,
    force: bool = False,
    include_optional: bool = False,
    opener: Opener | None = None,
) -> list[Path]:
    """Fetch the named raw inputs (names or folder prefixes; all non-optional ones if empty)."""
    chosen = select(list(names), include_optional=include_optional)
    out = []
    for e in progress_bar(iterable=chosen, desc="fetch", unit="file", disable=len(chosen) < 20):
        out.append(fetch_entry(e, mirror=mirror, root=root, force=force, opener=opener))
    return out


def require(name: str) -> Path:
    """Local path of a raw input, fetching it first if it is missing.

    A present file is trusted when its size matches (it was verified when fetched); use
    :func:`fetch_entry` with ``force=True`` to re-verify from the source.
    """
    e = _entry(name)
    dest = raw_path(e)
    if dest.is_file() and (dest.stat().st_size == e.size or e.url_content == "uncompressed"):
        return dest
    return fetch_entry(e)
