"""requirements/lock.txt fixes every package version the pipeline and the tests run with."""

from __future__ import annotations

import re
from importlib import metadata

from packaging.requirements import Requirement

from schedlab import paths

LOCK = paths.ROOT / "requirements" / "lock.txt"


def _pins() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line.strip())
        assert m, f"{LOCK.name}: {line!r} is not NAME==VERSION"
        pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    return pins


def test_every_declared_dependency_is_pinned():
    pins = _pins()
    declared = metadata.requires("schedlab") or []
    names = {Requirement(r).name.lower().replace("_", "-") for r in declared}
    missing = sorted(n for n in names if n not in pins)
    assert not missing, f"{LOCK.name} lacks {missing}: run `make lock`"


def test_the_installed_versions_are_the_pinned_ones():
    """The environment the tests run in is the one dvc.lock was made with (make installs with -c lock)."""
    pins = _pins()
    wrong = []
    for dist in metadata.distributions():
        name = dist.metadata["Name"].lower().replace("_", "-")
        if name == "schedlab" or name not in pins:
            continue
        if dist.version != pins[name]:
            wrong.append(f"{name} {dist.version} (lock: {pins[name]})")
    assert not wrong, f"installed versions differ from {LOCK.name}: {wrong}"
