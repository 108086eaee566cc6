"""The data layer: a manifest of every raw input, and a verified, atomic fetch.

Each raw input is a manifest entry (``manifest.yaml`` beside this file) with its original
public URL(s), sha256, size, licence and its path inside a mirror directory. :func:`fetch`
copies it from the mirror (``$SCHEDLAB_MIRROR``, default ``../shared/data``) or downloads
it, checks the sha256, and only then moves it under ``data/raw/`` read-only.

Examples
--------
>>> from schedlab import data
>>> entry = data.entry("nona/alexnet/graph.txt")
>>> entry.size
4093
>>> [e.name for e in data.select(["nona/resnet18"])]
['nona/resnet18/graph.txt', 'nona/resnet18/graph_copy.txt']
"""

from schedlab.data.manifest import Entry, entries, entry, load_manifest, select
from schedlab.data.fetch import (
    ChecksumMismatch,
    FetchError,
    fetch,
    fetch_entry,
    raw_path,
    require,
)

__all__ = [
    "ChecksumMismatch",
    "Entry",
    "FetchError",
    "entries",
    "entry",
    "fetch",
    "fetch_entry",
    "load_manifest",
    "raw_path",
    "require",
    "select",
]
