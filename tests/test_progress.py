"""Progress reaches the terminal of `dvc repro` as plain lines prefixed with the stage, and the
stage's log; none lands in an executed notebook's cells, where only real warnings show."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
import types
from pathlib import Path

import pytest

from schedlab import notebooks, parallel, paths, progress
from schedlab.notebooks import runner


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


# ---------------------------------------------------------------- executed notebooks read cleanly


def stderr_outputs(executed) -> list[str]:
    """The text of every stderr stream output of an executed notebook (the red boxes)."""
    nb = json.loads(Path(executed).read_text())
    return [
        "".join(o["text"])
        for c in nb["cells"]
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stderr"
    ]


def progress_in_cells(executed, stage: str) -> list[str]:
    """stderr outputs of ``executed`` that are progress or tqdm's warning, not a real warning."""
    return [t for t in stderr_outputs(executed) if "TqdmWarning" in t or f"[{stage}] " in t]


def _all_output_text(executed) -> str:
    nb = json.loads(Path(executed).read_text())
    return "\n".join(
        "".join(o.get("text", "")) + json.dumps(o.get("data", {}))
        for c in nb["cells"]
        for o in c.get("outputs", [])
    )


#: a stage-shaped notebook that reports progress the three ways the library does (a bar, the
#: executor's bar, and the data layer, whose import used to pull in tqdm.auto)
_PROGRESS_NB = [
    ("output_root = None\nprofile = None\noverrides = None", ["parameters"]),
    ("import schedlab.data  # noqa: F401\nfrom schedlab import parallel, progress", []),
    (
        "with progress.bar(total=3, desc='three steps', unit='step') as b:\n"
        "    for _ in range(3):\n        b.update(1)\n"
        "print(parallel.pmap(abs, [-1, -2, 3], workers=1, desc='points'))",
        [],
    ),
]


def _write_notebook(path: Path, cells: list[tuple[str, list[str]]]) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src, metadata={"tags": tags}) for src, tags in cells]
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(nb, path)
    return path


def test_a_pipeline_run_keeps_progress_out_of_the_cells(tmp_path, capfd):
    """Under the runner, progress goes to the stage's log and the runner's stderr; the executed
    notebook has no stderr box and no warning text. A real warning still shows in its cell."""
    cells = _PROGRESS_NB + [("import warnings\nwarnings.warn('a real one')", [])]
    source = _write_notebook(tmp_path / "probe.ipynb", cells)
    executed = notebooks.run(
        "nona/table2",
        source=source,
        output_root=tmp_path / "root",
        executed=tmp_path / "executed" / "probe.ipynb",
        profile="smoke",
    )
    boxes = stderr_outputs(executed)
    assert len(boxes) == 1 and "UserWarning: a real one" in boxes[0]  # the real warning, nothing else
    assert "TqdmWarning" not in _all_output_text(executed)
    assert "[1, 2, 3]" in _all_output_text(executed)
    log = runner.log_path(executed).read_text()
    # 5 cells: papermill adds its injected-parameters cell
    for expected in (
        "[nona/table2] three steps: 3/3 step (100%)",
        "[nona/table2] points: 3/3 task (100%)",
        "[nona/table2] cells: 5/5 cell (100%)",
    ):
        assert expected in log
    assert "\r" not in log and len(log.splitlines()) == len(set(log.splitlines()))  # no repeated final line
    err = capfd.readouterr().err
    assert "[nona/table2] three steps: 3/3 step (100%)" in err  # the person at the terminal sees it too


def test_a_notebook_outside_the_pipeline_shows_its_bar_on_stdout(tmp_path):
    """In a kernel without ipywidgets (JupyterLab without the lab extra), a bar is redrawn on
    stdout: no TqdmWarning, no red box."""
    import papermill as pm

    source = _write_notebook(tmp_path / "probe.ipynb", _PROGRESS_NB)
    env = {
        k: v for k, v in os.environ.items() if k not in (progress.ENV, progress.ENV_STAGE, progress.ENV_LOG)
    }
    out = tmp_path / "out.ipynb"
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env)
        pm.execute_notebook(
            str(source),
            str(out),
            kernel_name="python3",
            progress_bar=False,
            kernel_manager_class=runner._local_kernel_manager(),
        )
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if importlib.util.find_spec("ipywidgets") is not None:
        pytest.skip("ipywidgets installed: the bar is a widget")
    assert stderr_outputs(out) == []
    text = _all_output_text(out)
    assert "TqdmWarning" not in text and "three steps" in text and "3/3" in text


def test_interactive_kind_follows_the_kernel_and_ipywidgets(monkeypatch):
    class ZMQInteractiveShell:  # the class name ipykernel's shell has
        pass

    fake_ipython = types.SimpleNamespace(get_ipython=lambda: ZMQInteractiveShell())
    assert progress.interactive_kind() == "terminal"  # pytest is no kernel
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", types.ModuleType("ipykernel.zmqshell"))
    monkeypatch.setitem(sys.modules, "IPython", fake_ipython)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "ipywidgets" else real_find_spec(n, *a)
    )
    assert progress.interactive_kind() == "stdout"
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: object() if n == "ipywidgets" else real_find_spec(n, *a)
    )
    assert progress.interactive_kind() == "widget"
    fake_ipython.get_ipython = lambda: None  # ipykernel imported, but no kernel running
    assert progress.interactive_kind() == "terminal"


def test_lines_go_to_the_named_log(tmp_path, monkeypatch):
    log = tmp_path / "stage.log"
    monkeypatch.setenv(progress.ENV_LOG, str(log))
    monkeypatch.setenv(progress.ENV_STAGE, "pcs/fig7")
    with progress.bar(total=2, desc="traces", unit="task", mode="lines") as b:
        b.update(2)
    assert log.read_text().splitlines() == [
        "[pcs/fig7] traces: 0/2 task (0%) 00:00 elapsed, ~? left",
        "[pcs/fig7] traces: 2/2 task (100%) 00:00 elapsed, ~00:00 left",
    ]


def test_the_library_never_imports_tqdm_auto():
    """tqdm.auto warns in every kernel without ipywidgets; the library and the notebooks use
    schedlab.progress instead."""
    import re

    imports = re.compile(
        r"^\s*(from tqdm(\.auto|\.autonotebook)? import (tqdm|auto|autonotebook|trange)"
        r"|import tqdm\.auto)",
        re.M,
    )
    offenders = []
    for path in [*(paths.ROOT / "lib").rglob("*.py"), *paths.NOTEBOOKS.rglob("*.py")]:
        for match in imports.finditer(path.read_text()):
            if ".auto" in match.group(0) or match.group(3) in ("auto", "autonotebook"):
                offenders.append(f"{path.relative_to(paths.ROOT).as_posix()}: {match.group(0).strip()}")
    assert offenders == []


def _fake_kernel(monkeypatch) -> None:
    """Make tqdm.autonotebook believe it runs in a Jupyter kernel without ipywidgets."""

    class ZMQInteractiveShell:
        pass

    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", types.ModuleType("ipykernel.zmqshell"))
    monkeypatch.setitem(
        sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: ZMQInteractiveShell())
    )
    for name in ("tqdm.auto", "tqdm.autonotebook", "tqdm.notebook", "ipywidgets"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(
        sys.modules, "ipywidgets", None
    )  # `import ipywidgets` fails, as without the lab extra


def test_quiet_import_silences_only_tqdms_import_warning(monkeypatch):
    import warnings

    from tqdm import TqdmWarning

    _fake_kernel(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:  # control: the plain import warns here
        warnings.simplefilter("always")
        importlib.import_module("tqdm.auto")
    assert [w for w in caught if issubclass(w.category, TqdmWarning)]
    _fake_kernel(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        progress.quiet_import("tqdm.auto")
        warnings.warn("a real one", UserWarning)  # after the import, warnings show again
    assert [str(w.message) for w in caught] == ["a real one"]
