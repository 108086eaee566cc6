"""Reading and validating the manifest of raw inputs."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

MANIFEST_PATH = Path(__file__).with_name("manifest.yaml")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class ManifestError(ValueError):
    """The manifest itself is malformed."""


@dataclass(frozen=True)
class Entry:
    """One raw input.

    ``sha256`` and ``size`` describe the file as stored (the mirror's form). When
    ``url_content == "uncompressed"`` the URLs serve the bytes before gzip, whose sha256 is
    ``content_sha256``; a download is verified against it and gzipped on arrival.
    """

    name: str
    path: str
    size: int
    sha256: str
    license: str
    urls: tuple[str, ...] = ()
    url_content: str = "identical"
    content_sha256: str | None = None
    derived: str | None = None
    optional: bool = False
    extra: dict = field(default_factory=dict, compare=False, repr=False)


def _parse_entry(raw: dict, where: str) -> Entry:
    for key in ("name", "path", "size", "sha256", "license"):
        if key not in raw:
            raise ManifestError(f"{where}: missing field {key!r}")
    if not _SHA256.match(str(raw["sha256"])):
        raise ManifestError(f"{where}: field 'sha256' must be 64 lowercase hex digits, got {raw['sha256']!r}")
    if not isinstance(raw["size"], int) or raw["size"] < 0:
        raise ManifestError(f"{where}: field 'size' must be a non-negative integer, got {raw['size']!r}")
    path = str(raw["path"])
    if path.startswith("/") or ".." in Path(path).parts:
        raise ManifestError(f"{where}: field 'path' must be relative inside the mirror, got {path!r}")
    url_content = raw.get("url_content", "identical")
    if url_content not in ("identical", "uncompressed"):
        raise ManifestError(f"{where}: field 'url_content' must be 'identical' or 'uncompressed', got {url_content!r}")
    if url_content == "uncompressed" and not _SHA256.match(str(raw.get("content_sha256", ""))):
        raise ManifestError(f"{where}: url_content 'uncompressed' needs a 64-hex 'content_sha256'")
    known = set(Entry.__dataclass_fields__) - {"extra"}
    return Entry(
        name=str(raw["name"]),
        path=path,
        size=raw["size"],
        sha256=raw["sha256"],
        license=str(raw["license"]),
        urls=tuple(raw.get("urls") or ()),
        url_content=url_content,
        content_sha256=raw.get("content_sha256"),
        derived=raw.get("derived"),
        optional=bool(raw.get("optional", False)),
        extra={k: v for k, v in raw.items() if k not in known},
    )


def load_manifest(path: str | Path = MANIFEST_PATH) -> dict[str, Entry]:
    """Parse a manifest file into ``{name: Entry}``, with errors naming the entry."""
    path = Path(path)
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list):
        raise ManifestError(f"{path}: expected a mapping with a list under 'entries'")
    out: dict[str, Entry] = {}
    for i, raw in enumerate(doc["entries"]):
        where = f"{path} entry {i} ({raw.get('name', '?') if isinstance(raw, dict) else '?'})"
        if not isinstance(raw, dict):
            raise ManifestError(f"{where}: expected a mapping")
        e = _parse_entry(raw, where)
        if e.name in out:
            raise ManifestError(f"{where}: duplicate name {e.name!r}")
        out[e.name] = e
    return out


@functools.cache
def _default() -> dict[str, Entry]:
    return load_manifest()


def entries() -> list[Entry]:
    """All entries of the packaged manifest."""
    return list(_default().values())


def entry(name: str) -> Entry:
    """The entry called ``name`` (its mirror path)."""
    try:
        return _default()[name]
    except KeyError:
        raise KeyError(f"no raw input named {name!r} in {MANIFEST_PATH}") from None


def select(names: list[str] | tuple[str, ...] = (), include_optional: bool = False) -> list[Entry]:
    """Entries matching each name exactly or as a folder prefix (``pcs``, ``nona/resnet18``).

    With no names: every entry that is not optional. A name matching nothing is an error.
    Optional entries (upstream archives absent from the mirror) are included only when named
    exactly or when ``include_optional`` is set.
    """
    manifest = _default()
    if not names:
        return [e for e in manifest.values() if include_optional or not e.optional]
    chosen: dict[str, Entry] = {}
    for name in names:
        name = name.strip("/")
        if name in manifest:
            chosen[name] = manifest[name]
            continue
        hits = [e for e in manifest.values() if e.name.startswith(name + "/") and (include_optional or not e.optional)]
        if not hits:
            raise KeyError(f"no raw input named {name!r} (or below it) in {MANIFEST_PATH}")
        chosen.update((e.name, e) for e in hits)
    return list(chosen.values())
