"""Run the pipeline under another profile without touching the checkout: ``runs/<profile>/``.

``make reproduce PROFILE=teaching|paper`` (``schedlab reproduce --profile NAME``) must leave
``params.yaml``, ``dvc.lock`` and git as they were, so that the next plain ``make reproduce`` runs
the default profile again. The profile's run therefore happens in a copy of the working tree:

1. ``runs/<profile>/`` is a ``git clone --shared`` of the checkout (made once), onto which every
   tracked or untracked-but-not-ignored file of the working tree is laid, so uncommitted edits
   (a notebook changed in JupyterLab) run too; files the checkout no longer has are removed;
2. its ``params.yaml`` gets ``profile: <profile>`` at the top;
3. ``schedlab fetch`` and ``dvc repro`` run there with ``SCHEDLAB_ROOT`` pointing at it and the
   checkout's mirror and DVC cache (outputs both runs share are stored once).

A second run of the same profile re-syncs the copy and ``dvc repro`` re-runs only what changed
(an interrupted paper run resumes at its first unfinished stage). Its results:
``runs/<profile>/results/scorecard.html`` and ``runs/<profile>/figures/``.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from schedlab import paths
from schedlab.notebooks.params import PIPELINE_PROFILES, ParamsError

#: where profile runs live, below the checkout (git- and DVC-ignored)
RUNS = "runs"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def working_files(root: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files of ``root``'s working tree that exist."""
    names = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    return sorted({n for n in names if n and (root / n).is_file()})


def _sync(root: Path, dest: Path) -> int:
    """Lay ``root``'s working files onto ``dest``; remove tracked files of ``dest`` that ``root``
    lacks. Returns how many files were written or removed."""
    wanted = working_files(root)
    changed = 0
    for name in wanted:
        src, dst = root / name, dest / name
        if dst.is_file() and filecmp.cmp(src, dst, shallow=False):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.exists():
            dst.chmod(0o644)
            dst.unlink()
        shutil.copy2(src, dst)
        changed += 1
    for name in set(working_files(dest)) - set(wanted):
        (dest / name).unlink()
        changed += 1
    return changed


def set_profile(params_file: Path, profile: str) -> None:
    """Set the top-level ``profile:`` line of ``params_file`` (comments and layout kept)."""
    if profile not in PIPELINE_PROFILES:  # smoke: tests' sizes, whose numbers no pipeline should carry
        raise ParamsError(f"unknown profile {profile!r}; expected one of {', '.join(PIPELINE_PROFILES)}")
    text = params_file.read_text()
    new, n = re.subn(r"(?m)^(profile:[ \t]*)[^\s#]+", rf"\g<1>{profile}", text, count=1)
    if n != 1:
        raise ParamsError(f"{params_file}: no top-level 'profile:' line to set")
    params_file.write_text(new)


def prepare(profile: str, root: Path | None = None, dest: Path | None = None) -> Path:
    """Make or refresh the copy of ``root``'s working tree that runs ``profile``; return it."""
    root = (root or paths.ROOT).resolve()
    if profile == "default":
        raise ParamsError("the default profile runs in the checkout itself (`make reproduce`)")
    dest = (dest or root / RUNS / profile).resolve()
    if not (dest / ".git").exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        _git(root, "clone", "--quiet", "--shared", "--no-checkout", str(root), str(dest))
        _git(dest, "checkout", "--quiet", "--detach", _git(root, "rev-parse", "HEAD").strip())
    _sync(root, dest)
    set_profile(dest / "params.yaml", profile)
    cache = root / ".dvc" / "cache"
    (dest / ".dvc").mkdir(exist_ok=True)
    (dest / ".dvc" / "config.local").write_text(f"[cache]\n    dir = {cache}\n")
    return dest


def environment(dest: Path) -> dict[str, str]:
    """The environment a profile run's commands get: its root, and the checkout's mirror."""
    env = dict(os.environ, SCHEDLAB_ROOT=str(dest))
    mirror = paths.mirror()
    env["SCHEDLAB_MIRROR"] = str(mirror) if mirror is not None else ""
    return env


def run(profile: str, *, dry: bool = False, root: Path | None = None, dest: Path | None = None) -> Path:
    """Prepare ``runs/<profile>/`` and run the pipeline there (``dry``: ``dvc status`` there, which
    lists the stages that would run, and nothing runs)."""
    dest = prepare(profile, root, dest)
    bin_dir = Path(sys.executable).parent
    env = environment(dest)
    if dry:
        subprocess.run([str(bin_dir / "dvc"), "status"], cwd=dest, env=env, check=True)
        return dest
    subprocess.run([str(bin_dir / "schedlab"), "fetch"], cwd=dest, env=env, check=True)
    subprocess.run([str(bin_dir / "dvc"), "repro"], cwd=dest, env=env, check=True)
    return dest
