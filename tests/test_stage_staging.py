"""A stage's outputs move into place together, after its last cell; an interrupted stage ends in
one line and leaves the previous outputs as they were.

Each test runs ``schedlab notebook run test/tiny`` in a subprocess, in a sandbox checkout of its
own (``SCHEDLAB_ROOT``: a ``dvc.yaml`` declaring the tiny stage's outputs, a ``params.yaml``
section and the notebook), so the run goes through the same path as a pipeline stage: its
output root is the (sandbox) project root. The notebook writes its first output, signals,
then waits for ``wait_s`` seconds before writing the rest (a file, a figure, a declared folder).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from schedlab.io import atomic_write_text
from schedlab.notebooks.outputs import STAGING, Staging

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and POSIX signals")

SCHEDLAB = Path(sys.executable).with_name("schedlab")
#: the tiny stage's declared outputs (dvc.yaml of the sandbox), relative to its root
OUTS = ["results/test/a.csv", "results/test/b.csv", "results/test/parts", "figures/test/c.txt"]

DVC_YAML = """\
stages:
  test_tiny:
    cmd: schedlab notebook run test/tiny
    outs:
      - results/test/a.csv
      - results/test/b.csv
      - results/test/parts
      - figures/test/c.txt
"""

PARAMS_YAML = """\
profile: default
test:
  tiny:
    tag: first
    wait_s: 0
    fail: false
"""

CELLS = [
    '# %% tags=["parameters"]\noutput_root = ""\nprofile = "default"\noverrides = {}\n',
    """\
# %%
from schedlab.notebooks import stage_params
globals().update(stage_params("test/tiny", profile, overrides).values)
""",
    """\
# %%
import os, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from schedlab import io
from schedlab.notebooks import Outputs

out = Outputs(output_root, "test/tiny")
io.atomic_write_text(out.results("a.csv"), f"x\\n{tag}-a\\n")
# a worker process busy in the background, as a stage's parallel sweep would have
pool = ProcessPoolExecutor(1)
pool.submit(time.sleep, 120)
worker = list(pool._processes)[0] if wait_s else None
signal_file = os.environ.get("TINY_SIGNAL")
if signal_file:
    Path(signal_file).write_text(f"{os.getpid()} {worker}")
time.sleep(wait_s)
""",
    """\
# %%
if fail:
    raise ValueError("tiny stage told to fail")
io.atomic_write_text(out.results("b.csv"), f"x\\n{tag}-b\\n")
for i in range(3):
    io.atomic_write_text(out.results(f"parts/{i}.txt"), f"{tag}-{i}\\n")
io.atomic_write_text(out.figures("c.txt"), f"{tag}-c\\n")
pool.shutdown(wait=False, cancel_futures=True)
""",
]


def _notebook(folder: Path) -> None:
    (folder / "tiny.py").write_text("".join(CELLS))
    nb = nbformat.v4.new_notebook()
    for i, cell in enumerate(CELLS):
        lines = cell.splitlines(keepends=True)
        c = nbformat.v4.new_code_cell("".join(lines[1:]), id=f"tiny-{i}")
        if i == 0:
            c.metadata["tags"] = ["parameters"]
        nb.cells.append(c)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "tiny.ipynb")


@pytest.fixture
def sandbox(tmp_path) -> Path:
    root = tmp_path / "checkout"
    (root / "lib").mkdir(parents=True)
    (root / "notebooks" / "test").mkdir(parents=True)
    (root / "dvc.yaml").write_text(DVC_YAML)
    (root / "params.yaml").write_text(PARAMS_YAML)
    _notebook(root / "notebooks" / "test")
    return root


def _run(root: Path, *params: str, **popen) -> subprocess.Popen:
    args = [str(SCHEDLAB), "notebook", "run", "test/tiny"]
    for pair in params:
        args += ["-p", *pair.split("=", 1)]
    signal_file = root.parent / "started"
    signal_file.unlink(missing_ok=True)
    env = {**os.environ, "SCHEDLAB_ROOT": str(root), "TINY_SIGNAL": str(signal_file)}
    return subprocess.Popen(
        args,
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as at a terminal: a background launch (CI's `... &`) ignores SIGINT for every descendant,
        # and a run started that way rightly keeps ignoring it (see watchdog.stop_with_parent)
        preexec_fn=_sigint_as_at_a_terminal,
        **popen,
    )


def _sigint_as_at_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the stage's set (results/, figures/) with its bytes; timings excluded."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for top in ("results", "figures")
        for p in sorted((root / top).rglob("*"))
        if p.is_file() and "timings" not in p.relative_to(root).parts
    }


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def _good_run(root: Path, tag: str) -> dict[str, bytes]:
    code, _, err = _finish(_run(root, f"tag={tag}"))
    assert code == 0, err
    return _snapshot(root)


def _previous_set(root: Path) -> dict[str, bytes]:
    """A complete earlier set in place, as a finished run leaves it (made directly: quicker)."""
    for rel in ("results/test/a.csv", "results/test/b.csv", "results/test/parts/0.txt", "figures/test/c.txt"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"earlier run: {rel}\n".encode())
    return _snapshot(root)


def test_a_run_moves_every_declared_output_into_place(sandbox):
    files = _good_run(sandbox, "first")
    assert set(files) == {
        "results/test/a.csv",
        "results/test/b.csv",
        "figures/test/c.txt",
        *(f"results/test/parts/{i}.txt" for i in range(3)),
    }
    assert files["results/test/b.csv"] == b"x\nfirst-b\n"
    assert not (sandbox / STAGING).exists(), "the staging folder was left behind"
    assert (sandbox / "data/executed/test/tiny.ipynb").is_file()
    # the files get the mode any new file gets under the umask (tests run under 022 or 002)
    umask = os.umask(0o022)
    os.umask(umask)
    assert (sandbox / "results/test/b.csv").stat().st_mode & 0o777 == 0o666 & ~umask
    # a second run replaces the whole set; the declared folder's old files do not linger
    (sandbox / "results/test/parts/stale.txt").write_text("from an older run")
    second = _good_run(sandbox, "second")
    assert set(second) == set(files)
    assert second["results/test/parts/0.txt"] == b"second-0\n"


def test_ctrl_c_after_the_first_output_keeps_the_previous_set(sandbox):
    before = _previous_set(sandbox)
    started = sandbox.parent / "started"
    proc = _run(sandbox, "tag=second", "wait_s=60", start_new_session=True)
    try:
        assert _wait_for(started.exists, 90), "the notebook never started"
        kernel, worker = (int(x) for x in started.read_text().split())
        staged = sandbox / STAGING / "test/tiny/results/test/a.csv"
        assert staged.read_text() == "x\nsecond-a\n", "the first output was not written aside"
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C at a terminal sends: the whole group
        code, _, err = _finish(proc, 60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert code == 130, err
    lines = err.strip().splitlines()
    assert lines[-1] == "schedlab: interrupted (SIGINT): stage test/tiny; previous outputs kept"
    assert len(lines) <= 3, err  # progress lines of papermill's cell count at most, then the one line
    for flood in ("Traceback", "ZMQError", "never retrieved", "Aborted"):
        assert flood not in err
    assert _snapshot(sandbox) == before, "the previous outputs changed"
    assert not (sandbox / STAGING).exists(), "the staging folder was left behind"
    assert _wait_for(lambda: not _alive(kernel) and not _alive(worker), 10), "kernel or worker still running"


def test_sigterm_ends_in_one_line_with_143(sandbox):
    before = _previous_set(sandbox)
    started = sandbox.parent / "started"
    proc = _run(sandbox, "tag=second", "wait_s=60")
    try:
        assert _wait_for(started.exists, 90), "the notebook never started"
        proc.send_signal(signal.SIGTERM)
        code, _, err = _finish(proc, 60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 143, err
    assert err.strip().splitlines()[-1].startswith("schedlab: interrupted (SIGTERM): stage test/tiny")
    assert "Traceback" not in err
    assert _snapshot(sandbox) == before
    assert not (sandbox / STAGING).exists()


def test_kill_9_leaves_nothing_partial_and_the_kernel_dies_with_it(sandbox):
    before = _previous_set(sandbox)
    started = sandbox.parent / "started"
    proc = _run(sandbox, "tag=second", "wait_s=60")
    try:
        assert _wait_for(started.exists, 90), "the notebook never started"
        kernel, worker = (int(x) for x in started.read_text().split())
        proc.kill()
        proc.wait(timeout=10)
        assert _wait_for(lambda: not _alive(kernel), 10), "the kernel outlived its runner"
    finally:
        if proc.poll() is None:
            proc.kill()
        # nothing is left to kill a plain ProcessPoolExecutor worker of the dead kernel (it blocks on
        # its task queue for ever; the pipeline's loky workers watch their parent and exit): the test does
        with contextlib.suppress(ProcessLookupError, NameError):
            os.kill(worker, signal.SIGKILL)
    assert _snapshot(sandbox) == before, "a partial set is in place"
    # the staging folder is left (nothing could remove it); the next run clears it first
    assert (sandbox / STAGING / "test/tiny").is_dir()
    after = _good_run(sandbox, "third")
    assert after["results/test/a.csv"] == b"x\nthird-a\n"
    assert not (sandbox / STAGING).exists()


def test_a_failing_cell_keeps_the_previous_set_and_the_failed_notebook(sandbox):
    before = _previous_set(sandbox)
    code, _, err = _finish(_run(sandbox, "tag=second", "fail=true"))
    assert code == 1
    assert "raised ValueError: tiny stage told to fail" in err
    assert _snapshot(sandbox) == before
    assert not (sandbox / STAGING).exists()
    failed = sandbox / "data/executed/test/tiny.failed.ipynb"
    assert "tiny stage told to fail" in failed.read_text()
    assert not (sandbox / "data/executed/test/tiny.ipynb").exists()  # only a finished run's copy is kept


def test_a_move_cut_short_is_finished_by_the_next_run(tmp_path):
    """``kill -9`` inside the move: the list written first lets the next run complete the set."""
    root = tmp_path
    (root / "results/test/parts").mkdir(parents=True)
    (root / "results/test/a.csv").write_text("old a")
    (root / "results/test/b.csv").write_text("old b")
    (root / "results/test/parts/0.txt").write_text("old part")
    st = Staging(root, "test/tiny", declared=OUTS)
    view = st.open()
    assert not (view / "results/test/a.csv").exists(), "a declared output was copied into the view"
    (view / "results/test/a.csv").write_text("new a")
    (view / "results/test/b.csv").write_text("new b")
    (view / "results/test/parts").mkdir()
    (view / "results/test/parts/1.txt").write_text("new part")
    folders, files = st.written()
    assert (folders, files) == (["results/test/parts"], ["results/test/a.csv", "results/test/b.csv"])
    (view / ".commit.json").write_text(json.dumps({"folders": folders, "files": files}))
    os.replace(view / "results/test/a.csv", root / "results/test/a.csv")  # killed after one file
    st.release()
    assert (root / "results/test/b.csv").read_text() == "old b"  # the mix a reader could see
    after = Staging(root, "test/tiny", declared=OUTS)
    after.open()  # the next run: it finishes the move before making its own view
    after.discard()
    after.release()
    assert (root / "results/test/a.csv").read_text() == "new a"
    assert (root / "results/test/b.csv").read_text() == "new b"
    assert sorted(p.name for p in (root / "results/test/parts").iterdir()) == ["1.txt"]
    assert not (root / STAGING).exists()


def test_two_runs_of_one_stage_into_one_root_are_refused(tmp_path):
    from schedlab.notebooks.outputs import StageBusy

    first = Staging(tmp_path, "test/tiny")
    first.open()
    with pytest.raises(StageBusy, match="another run of this stage"):
        Staging(tmp_path, "test/tiny").open()
    first.discard()
    first.release()
    assert not (tmp_path / STAGING).exists()


def test_the_view_reads_other_stages_files_and_writes_caches_and_times_through(tmp_path):
    root = tmp_path
    (root / "results/other").mkdir(parents=True)
    (root / "results/other/x.csv").write_text("other stage")
    (root / "params.yaml").write_text("profile: default\n")
    st = Staging(root, "test/tiny", declared=OUTS)
    view = st.open()
    assert (view / "results/other/x.csv").read_text() == "other stage"
    assert (view / "params.yaml").is_symlink()
    (view / "data/cache").mkdir(parents=True)
    (view / "data/cache/kept.bin").write_bytes(b"1")
    (view / "results/test/timings/t.json").write_text("{}")
    assert st.written() == ([], [])  # caches and times went through the links, the copy is unchanged
    # another stage's file rewritten (replaced, as every writer of schedlab.io does): the run's now
    atomic_write_text(view / "results/other/x.csv", "rewritten")
    assert st.written() == ([], ["results/other/x.csv"])
    st.discard()
    st.release()
    assert (root / "results/other/x.csv").read_text() == "other stage"
    assert (root / "data/cache/kept.bin").is_file() and (root / "results/test/timings/t.json").is_file()
    assert not (root / STAGING).exists()


def test_dvc_killed_with_kill_9_its_stage_stops_in_one_line(sandbox, tmp_path):
    """``kill -9`` of dvc: its stage (shell -> schedlab -> kernel) notices, stops, says so once."""
    before = _previous_set(sandbox)
    started, log = sandbox.parent / "started", tmp_path / "stage.err"
    started.unlink(missing_ok=True)
    stage = f"{SCHEDLAB} notebook run test/tiny -p tag second -p wait_s 60 2> {log}"
    env = {**os.environ, "SCHEDLAB_ROOT": str(sandbox), "TINY_SIGNAL": str(started)}
    dvc = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess; subprocess.run({stage!r}, shell=True)"],
        cwd=sandbox,
        env=env,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),  # not a nohup run
    )
    try:
        assert _wait_for(started.exists, 90), "the notebook never started"
        kernel, worker = (int(x) for x in started.read_text().split())
        dvc.kill()
        dvc.wait(timeout=10)
        assert _wait_for(lambda: not _alive(kernel) and not _alive(worker), 30), (
            "kernel or worker still running"
        )
        assert _wait_for(lambda: "interrupted" in log.read_text(), 30), "the stage did not stop"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(dvc.pid, signal.SIGKILL)
    assert not (sandbox / STAGING).exists(), "the staging folder was left behind"
    err = log.read_text()
    assert (
        err.strip().splitlines()[-1]
        == "schedlab: interrupted (SIGTERM): stage test/tiny; previous outputs kept"
    )
    for flood in ("Traceback", "ZMQError", "never retrieved"):
        assert flood not in err
    assert _snapshot(sandbox) == before
