"""What produced a run's results: the commit, the profile, the date and the machine.

None of this may enter a pipeline output: two clones at the same commit, on two machines, must
write the same bytes. So these facts go where the times go, under ``timings/`` (no stage
declares or reads those files): each stage run's record (:mod:`schedlab.stagetimes`) carries its
commit (:func:`schedlab.stagetimes.runs_summary` counts them), and the scorecard's companion page ``results/timings/scorecard_times.{md,html}`` opens
with :func:`describe`, which the scorecard itself names in its header.

Examples
--------
>>> import tempfile
>>> state = git_state(Path(tempfile.mkdtemp()))  # not a git checkout
>>> state == {"commit": None, "uncommitted": None}
True
>>> label(state)
'unknown (not a git checkout)'
>>> label({"commit": "36a8560f" + "0" * 32, "uncommitted": 2})
'36a8560f00 (with uncommitted changes to 2 tracked files)'
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from schedlab import paths


def git_state(root: Path) -> dict[str, Any]:
    """``commit`` (HEAD's full hash) and ``uncommitted`` (how many tracked files differ from
    it) of the checkout at ``root``; both ``None`` where ``root`` is no git checkout or git is
    missing (a profile run's copy, an unpacked archive)."""

    def git(*args: str) -> str | None:
        try:
            res = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return res.stdout if res.returncode == 0 else None

    commit = git("rev-parse", "--verify", "HEAD")
    if not commit or not (Path(root) / ".git").exists():  # a folder inside another repository is not one
        return {"commit": None, "uncommitted": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "uncommitted": None if status is None else len(status.splitlines())}


def label(state: dict[str, Any]) -> str:
    """A commit as a person reads it: the short hash and whether the tree differed from it."""
    if not state.get("commit"):
        return "unknown (not a git checkout)"
    text = state["commit"][:10]
    if state.get("uncommitted"):
        n = state["uncommitted"]
        text += f" (with uncommitted changes to {n} tracked file{'' if n == 1 else 's'})"
    return text


def machine() -> dict[str, Any]:
    """The host's name, CPU model, core count, operating system and Python version."""
    cpu = platform.processor() or platform.machine()
    try:  # Linux names the model here; platform.processor() is often empty there
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "host": platform.node(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "os": platform.platform(terse=True),
        "python": platform.python_version(),
    }


def pipeline_profile(root: Path) -> str:
    """The top-level ``profile`` of ``root/params.yaml`` (``default`` when it names none); a
    report, so a folder without the file is said, not refused.

    >>> import tempfile
    >>> pipeline_profile(Path(tempfile.mkdtemp()))
    'unknown (no params.yaml)'
    """
    from schedlab.notebooks.params import selected_profile  # the pipeline's own reading of the switch

    path = Path(root) / "params.yaml"
    if not path.is_file():
        return "unknown (no params.yaml)"
    return selected_profile(path)


#: :func:`describe`'s ``stage_runs`` when no stage run was recorded
NO_RUNS = {"count": 0, "profiles": {}, "commits": {}, "first_utc": None, "last_utc": None}


def describe(
    root: Path | None = None, stage_runs: dict[str, Any] | None = None, now: _dt.datetime | None = None
) -> dict[str, Any]:
    """Everything above for the checkout at ``root`` (default: the repository), dated ``now``,
    with ``stage_runs`` (:func:`schedlab.stagetimes.runs_summary`: the stage runs behind the
    results, which ``dvc repro`` may have left from earlier commits)."""
    root = Path(root) if root is not None else paths.ROOT
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return {
        "generated_utc": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        **git_state(root),
        "profile": pipeline_profile(root),
        "machine": machine(),
        "stage_runs": stage_runs or dict(NO_RUNS),
    }


def rows(prov: dict[str, Any]) -> list[tuple[str, str]]:
    """:func:`describe` as (what, value) pairs for a table.

    >>> prov = {"generated_utc": "2026-11-27T12:00:00Z", "commit": None, "uncommitted": None,
    ...         "profile": "default", "machine": {"host": "h", "cpu": "c", "cores": 2, "os": "Linux",
    ...         "python": "3.11.9"}, "stage_runs": {"count": 0, "profiles": {}, "commits": {},
    ...         "first_utc": None, "last_utc": None}}
    >>> rows(prov)[:3]
    [('generated', '2026-11-27T12:00:00Z'), ('commit', 'unknown (not a git checkout)'), ('profile (params.yaml)', 'default')]
    """
    m, runs = prov["machine"], prov["stage_runs"]

    def counts(d: dict[str, int]) -> str:
        return "; ".join(f"{k}: {n}" for k, n in sorted(d.items())) or "none recorded"

    when = f"{runs['first_utc']} to {runs['last_utc']}" if runs["count"] else "none recorded"
    return [
        ("generated", prov["generated_utc"]),
        ("commit", label(prov)),
        ("profile (params.yaml)", prov["profile"]),
        ("machine", f"{m['host']}: {m['cpu']}, {m['cores']} cores, {m['os']}, Python {m['python']}"),
        ("stage runs behind the numbers", str(runs["count"])),
        ("their profiles", counts(runs["profiles"])),
        ("their commits", counts(runs["commits"])),
        ("their start times (UTC)", when),
    ]
