"""Progress that reaches the person waiting, and never lands in an executed notebook's cells.

Three places, three forms:

* **A pipeline stage** (``dvc repro`` runs each notebook through papermill):
  :func:`schedlab.notebooks.run` sets ``SCHEDLAB_PROGRESS=lines`` and names the stage's log,
  ``data/executed/<paper>/<name>.log`` beside the executed copy, in ``SCHEDLAB_PROGRESS_LOG``
  for the kernel it starts. :func:`bar` then appends one self-contained line at most every
  ``line_interval`` seconds (and one when the work ends) to that log, and the runner echoes the
  log to its own stderr (:func:`follow`), the terminal of ``dvc repro``::

      [nona/fig3] nona sweep: 12/40 task (30%) 0:35 elapsed, ~1:22 left

  The kernel's own stderr would not do: ipykernel captures the process's file descriptors too,
  so a line written there becomes a red stderr box in the executed notebook.
* **A notebook in JupyterLab**: a widget bar when ``ipywidgets`` is installed (the ``lab``
  extra), else a plain bar redrawn in place on the cell's stdout (not stderr: a normal
  progress report is not an error).
* **A terminal**: tqdm's usual bar on stderr.

``tqdm.auto`` is never imported: without ``ipywidgets`` it opens every notebook with a
``TqdmWarning: IProgress not found``; a library that imports it as it loads is imported through
:func:`quiet_import`. Real warnings are untouched and still show in the cells.

Examples
--------
>>> import io
>>> out = io.StringIO()
>>> with bar(total=3, desc="demo", unit="run", mode="lines", file=out) as b:
...     for _ in range(3):
...         b.update(1)
>>> out.getvalue().splitlines()[-1].split(" elapsed")[0]
'demo: 3/3 run (100%) 00:00'
>>> interactive_kind()  # this doctest runs outside a notebook kernel
'terminal'
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

#: the environment variable that selects plain progress lines (set by notebooks.run for kernels)
ENV = "SCHEDLAB_PROGRESS"
#: the notebook a pipeline kernel runs (prefixes every line), set by notebooks.run
ENV_STAGE = "SCHEDLAB_STAGE"
#: the stage's log file that progress lines are appended to, set by notebooks.run
ENV_LOG = "SCHEDLAB_PROGRESS_LOG"


class _LineWriter:
    """A file for tqdm that turns its carriage-return redraws into newline-terminated lines.

    ``sink`` is a stream or a path; a path is opened for each line in append mode, so the
    kernel, its worker processes and the runner can all add whole lines to one log.
    """

    def __init__(self, sink: IO[str] | Path, prefix: str = ""):
        self.sink, self.prefix = sink, prefix
        self._last: str | None = None

    def write(self, text: str) -> None:
        for line in text.replace("\r", "\n").split("\n"):
            line = line.strip()
            # tqdm's close() redraws the final state once more: one line says it
            if line and line != self._last:
                self._last = line
                self._emit(f"{self.prefix}{line}\n")

    def _emit(self, text: str) -> None:
        if isinstance(self.sink, Path):
            with open(self.sink, "a", encoding="utf-8") as fh:
                fh.write(text)
        else:
            self.sink.write(text)

    def flush(self) -> None:
        if not isinstance(self.sink, Path):
            self.sink.flush()


def mode() -> str:
    """``lines`` (pipeline) or ``bar`` (interactive), from ``$SCHEDLAB_PROGRESS`` (default ``bar``).

    >>> import os
    >>> os.environ.get(ENV, "bar") == mode()
    True
    """
    value = os.environ.get(ENV, "bar")
    if value not in ("bar", "lines"):
        raise ValueError(f"${ENV} must be 'bar' or 'lines', got {value!r}")
    return value


def interactive_kind() -> str:
    """Where an interactive bar goes: ``widget`` (a Jupyter kernel with ``ipywidgets``),
    ``stdout`` (a Jupyter kernel without it) or ``terminal`` (anything else)."""
    if "ipykernel.zmqshell" not in sys.modules:  # imported by every Jupyter kernel, by nothing else here
        return "terminal"
    shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
    if shell is None or "zmq" not in type(shell).__name__.lower():
        return "terminal"
    return "widget" if importlib.util.find_spec("ipywidgets") is not None else "stdout"


def line_options(
    stream: IO[str] | Path | None = None, prefix: str | None = None, line_interval: float = 15.0
) -> dict[str, Any]:
    """tqdm keyword arguments that print plain lines at most every ``line_interval`` seconds,
    each prefixed with ``[stage]`` in a pipeline kernel.

    The lines go to ``stream`` (a stream or a file to append to); by default to the stage's log
    (``$SCHEDLAB_PROGRESS_LOG``) when one is named, else to the process's stderr.
    """
    stage = os.environ.get(ENV_STAGE) if prefix is None else prefix
    if stream is None:
        log = os.environ.get(ENV_LOG)
        stream = Path(log) if log else (sys.__stderr__ or sys.stderr)
    writer = _LineWriter(stream, f"[{stage}] " if stage else "")
    fmt = "{desc}: {n_fmt}/{total_fmt} {unit} ({percentage:.0f}%) {elapsed} elapsed, ~{remaining} left"
    return {
        "file": writer,
        "mininterval": line_interval,
        "maxinterval": line_interval,
        "bar_format": fmt,
        "dynamic_ncols": False,
    }


def bar(
    total: int | None = None,
    desc: str | None = None,
    unit: str = "it",
    *,
    iterable: Any = None,
    mode: str | None = None,
    file: IO[str] | None = None,
    line_interval: float = 15.0,
    **kwargs: Any,
):
    """A tqdm progress bar over ``total`` steps, drawn where someone can see it (see the module).

    ``mode`` overrides ``$SCHEDLAB_PROGRESS``; other keyword arguments go to tqdm.
    """
    chosen = mode or globals()["mode"]()
    if chosen == "lines":
        from tqdm.std import tqdm

        return tqdm(
            iterable,
            total=total,
            desc=desc or "progress",
            unit=unit,
            **line_options(file, line_interval=line_interval),
            **kwargs,
        )
    kind = interactive_kind()
    if kind == "widget":
        from tqdm.notebook import tqdm as notebook_tqdm

        return notebook_tqdm(iterable, total=total, desc=desc, unit=unit, **kwargs)
    from tqdm.std import tqdm

    # a kernel without widgets: stdout, where the frontend redraws the "\r" line in place
    target = file or (sys.stdout if kind == "stdout" else None)
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=target, **kwargs)


def quiet_import(name: str) -> Any:
    """``importlib.import_module(name)`` for a library that imports ``tqdm.auto`` as it loads
    (shap does): in a Jupyter kernel without ipywidgets that import alone puts a red
    ``TqdmWarning: IProgress not found`` into the notebook, though no bar of the library is
    drawn here. Only that warning is silenced, and only while the module loads.

    >>> quiet_import("json").__name__
    'json'
    """
    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found", category=TqdmWarning)
        return importlib.import_module(name)


@contextlib.contextmanager
def follow(log: Path, stream: IO[str], poll_s: float = 0.5) -> Iterator[Path]:
    """Empty ``log``, then copy what is appended to it to ``stream`` until the block ends.

    The runner wraps a stage's run in this: the kernel writes its progress to the log (a file
    ipykernel does not capture) and the person at the terminal still sees it as it comes.

    >>> import io, tempfile
    >>> log = Path(tempfile.mkdtemp()) / "stage.log"
    >>> seen = io.StringIO()
    >>> with follow(log, seen, poll_s=0.01):
    ...     _ = log.open("a").write("[demo] half way\\n")
    >>> seen.getvalue()
    '[demo] half way\\n'
    """
    log = Path(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    done = threading.Event()

    def copy(fh: IO[str]) -> None:
        text = fh.read()
        if text:
            stream.write(text)
            stream.flush()

    def loop() -> None:
        with open(log, encoding="utf-8", errors="replace") as fh:
            while not done.wait(poll_s):
                copy(fh)
            copy(fh)  # what came after the last poll

    thread = threading.Thread(target=loop, name="schedlab-progress-log", daemon=True)
    thread.start()
    try:
        yield log
    finally:
        done.set()
        thread.join(timeout=10)
