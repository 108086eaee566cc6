"""`make reproduce PROFILE=teaching|paper` leaves the checkout as it was: the run happens in a copy."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from schedlab import notebooks, paths, profileruns


def _git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def test_a_profile_run_leaves_params_and_git_alone(tmp_path):
    status, params = _git(paths.ROOT, "status", "--porcelain"), paths.PARAMS.read_bytes()
    dest = profileruns.prepare("teaching", dest=tmp_path / "teaching")
    assert paths.PARAMS.read_bytes() == params and _git(paths.ROOT, "status", "--porcelain") == status
    assert notebooks.selected_profile() == "default"  # a plain `make reproduce` still runs the default
    assert notebooks.selected_profile(dest / "params.yaml") == "teaching"
    # the copy's pipeline sees the profile: its notebooks load teaching's values
    env = {**os.environ, "SCHEDLAB_ROOT": str(dest)}
    code = "from schedlab import notebooks; print(notebooks.load_params('nona/fig5')['duration'])"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "30.0"


def test_the_copy_carries_uncommitted_edits_and_deletions(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "--quiet")
    (root / "params.yaml").write_text("# top\nprofile: default  # the switch\nx: {a: 1}\n")
    (root / "kept.txt").write_text("v1")
    (root / "gone.txt").write_text("bye")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "init")
    (root / "kept.txt").write_text("v2, not committed")
    (root / "new.txt").write_text("untracked")
    dest = profileruns.prepare("paper", root=root, dest=tmp_path / "paper")
    assert (dest / "kept.txt").read_text() == "v2, not committed" and (
        dest / "new.txt"
    ).read_text() == "untracked"
    assert (dest / "params.yaml").read_text() == "# top\nprofile: paper  # the switch\nx: {a: 1}\n"
    assert (root / "params.yaml").read_text().startswith("# top\nprofile: default")
    (root / "gone.txt").unlink()
    profileruns.prepare("paper", root=root, dest=dest)  # a second run re-syncs (and resumes in DVC)
    assert not (dest / "gone.txt").exists()


def test_makefile_runs_other_profiles_in_a_copy():
    plain = subprocess.run(["make", "-n", "reproduce"], cwd=paths.ROOT, capture_output=True, text=True).stdout
    paper = subprocess.run(
        ["make", "-n", "reproduce", "PROFILE=paper"], cwd=paths.ROOT, capture_output=True, text=True
    ).stdout
    # the runs themselves (not the timing records around them, which name the profile they time)
    runs = [line for line in plain.splitlines() if "dvc " in line or "schedlab reproduce" in line]
    assert any("dvc repro" in line for line in runs), plain
    assert not any("--profile" in line or "exp run" in line for line in runs), plain
    assert "schedlab reproduce --profile paper" in paper and "exp run" not in paper


def test_default_profile_is_not_a_copy(tmp_path):
    with pytest.raises(notebooks.ParamsError, match="default profile runs in the checkout"):
        profileruns.prepare("default", dest=tmp_path / "d")
