"""Interrupting a notebook stage stops the notebook and its kernel, and leaves nothing half-written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schedlab import paths

FIXTURE = paths.ROOT / "tests/fixtures/slow_notebook.ipynb"
RUNNER = (
    "from pathlib import Path; from schedlab import notebooks; "
    "notebooks.run('test/slow', output_root=Path({root!r}), executed=Path({root!r}) / 'executed.ipynb', "
    "source=Path({src!r}))"
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and POSIX signals")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie has exited but is not reaped yet: dead for our purpose
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.2)
    return pred()


def _sighup_default() -> None:
    """In the child: SIGHUP back to its default. A test suite started under `nohup` hands every child
    an ignored SIGHUP, which the runner reads as "detached on purpose" (no watchdog): the tests of the
    watchdog must start their stage as a terminal or dvc would."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _stage_command(root: Path) -> str:
    code = RUNNER.format(root=str(root), src=str(FIXTURE))
    return f'{sys.executable} -c "{code}"'


def _assert_stopped_cleanly(root: Path, kernel: int) -> None:
    assert _wait_for(lambda: not _alive(kernel), 30), "the notebook's kernel is still running"
    assert not (root / "finished").exists()
    assert not (root / "executed.ipynb").exists()
    assert not list(root.glob(".*.part*")), "a partial output was left behind"


def test_sigterm_to_the_process_group_stops_notebook_and_kernel(tmp_path):
    # dvc runs a stage through a shell; SIGTERM to the whole group (as `kill -- -PGID` does)
    proc = subprocess.Popen(
        ["sh", "-c", _stage_command(tmp_path)],
        start_new_session=True,
        preexec_fn=_sighup_default,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert _wait_for(lambda: (tmp_path / "kernel.pid").exists(), 90), "the notebook never started"
        kernel = int((tmp_path / "kernel.pid").read_text())
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=60) != 0
        _assert_stopped_cleanly(tmp_path, kernel)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_killing_the_parent_alone_stops_notebook_and_kernel(tmp_path):
    # `kill -9 <dvc pid>`: only dvc dies; its stage (shell -> schedlab -> kernel) must follow
    parent_code = f"import subprocess; subprocess.run({_stage_command(tmp_path)!r}, shell=True)"
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_code],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_sighup_default,
    )
    try:
        assert _wait_for(lambda: (tmp_path / "kernel.pid").exists(), 90), "the notebook never started"
        kernel = int((tmp_path / "kernel.pid").read_text())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        _assert_stopped_cleanly(tmp_path, kernel)
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_nohup_run_outlives_its_parent(tmp_path):
    # `nohup schedlab notebook run ... &` then the shell exits: the run was detached on purpose
    parent_code = f"import subprocess; subprocess.run('nohup ' + {_stage_command(tmp_path)!r}, shell=True)"
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_code],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    try:
        assert _wait_for(lambda: (tmp_path / "kernel.pid").exists(), 90), "the notebook never started"
        kernel = int((tmp_path / "kernel.pid").read_text())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        time.sleep(3)  # the watchdog polls every 0.5 s: without nohup the run is gone by now
        assert _alive(kernel), "a nohup run was stopped when its parent died"
        assert not (tmp_path / "finished").exists()
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
