"""Progress reaches the terminal of `dvc repro`: plain lines, prefixed with the stage."""

from __future__ import annotations

import io

import pytest

from schedlab import notebooks, parallel, progress


def test_lines_mode_prints_prefixed_lines(monkeypatch):
    monkeypatch.setenv(progress.ENV_STAGE, "pcs/fig7")
    out = io.StringIO()
    with progress.bar(total=4, desc="traces", unit="task", mode="lines", file=out) as b:
        for _ in range(4):
            b.update(1)
    lines = out.getvalue().splitlines()
    assert lines and all(line.startswith("[pcs/fig7] traces: ") for line in lines)
    assert "4/4 task (100%)" in lines[-1]
    assert "\r" not in out.getvalue()


def test_unknown_mode_is_refused(monkeypatch):
    monkeypatch.setenv(progress.ENV, "fancy")
    with pytest.raises(ValueError, match="SCHEDLAB_PROGRESS"):
        progress.mode()


def test_executor_bar_follows_the_mode(monkeypatch, capfd):
    monkeypatch.setenv(progress.ENV, "lines")
    monkeypatch.setenv(progress.ENV_STAGE, "demo")
    parallel.pmap(abs, [-1, -2, 3], workers=1, desc="points")
    err = capfd.readouterr().err
    assert "[demo] points: 3/3 task (100%)" in err


def test_a_stage_prints_its_progress(tmp_path, capfd):
    """The kernel's and the runner's lines reach the stage's stderr, not only the executed notebook."""
    notebooks.run("nona/table2", output_root=tmp_path, executed=tmp_path / "t2.ipynb")
    err = capfd.readouterr().err
    assert "[nona/table2] cells: " in err and "(100%)" in err
    assert "without encryption" not in err  # the kernel talks over local sockets, quietly
