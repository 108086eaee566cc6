"""Progress that reaches the person waiting: a bar in a terminal or JupyterLab, plain lines in a pipeline.

``dvc repro`` runs each notebook through papermill, so a tqdm bar drawn inside the notebook's
kernel would end up in the executed notebook instead of the terminal. :func:`schedlab.notebooks.run`
therefore sets ``SCHEDLAB_PROGRESS=lines`` for the kernel it starts; :func:`bar` then writes one
self-contained line at most every ``line_interval`` seconds (and one when the work ends) to the
kernel process's own stderr, which the pipeline's terminal inherits::

    [nona/fig3] simulations: 12/40 task (30%) 0:35 elapsed, ~1:22 left

Elsewhere :func:`bar` is ``tqdm.auto.tqdm`` (a widget in JupyterLab, a bar in a terminal).

Examples
--------
>>> import io
>>> out = io.StringIO()
>>> with bar(total=3, desc="demo", unit="run", mode="lines", file=out) as b:
...     for _ in range(3):
...         b.update(1)
>>> out.getvalue().splitlines()[-1].split(" elapsed")[0]
'demo: 3/3 run (100%) 00:00'
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

#: the environment variable that selects plain progress lines (set by notebooks.run for kernels)
ENV = "SCHEDLAB_PROGRESS"
#: the notebook a pipeline kernel runs (prefixes every line), set by notebooks.run
ENV_STAGE = "SCHEDLAB_STAGE"


class _LineWriter:
    """A file for tqdm that turns its carriage-return redraws into newline-terminated lines."""

    def __init__(self, stream: IO[str], prefix: str = ""):
        self.stream, self.prefix = stream, prefix

    def write(self, text: str) -> None:
        for line in text.replace("\r", "\n").split("\n"):
            if line.strip():
                self.stream.write(f"{self.prefix}{line.strip()}\n")

    def flush(self) -> None:
        self.stream.flush()


def mode() -> str:
    """``lines`` (pipeline) or ``bar`` (interactive), from ``$SCHEDLAB_PROGRESS``."""
    value = os.environ.get(ENV, "bar")
    if value not in ("bar", "lines"):
        raise ValueError(f"${ENV} must be 'bar' or 'lines', got {value!r}")
    return value


def line_options(stream: IO[str] | None = None, prefix: str | None = None,
                 line_interval: float = 15.0) -> dict[str, Any]:
    """tqdm keyword arguments that print plain lines to ``stream`` (default: the process's stderr)
    at most every ``line_interval`` seconds, each prefixed with ``[stage]`` in a pipeline kernel."""
    stage = os.environ.get(ENV_STAGE) if prefix is None else prefix
    # sys.__stderr__: in a pipeline kernel, the process's own stderr (inherited from `dvc repro`),
    # not the notebook's captured stream
    writer = _LineWriter(stream or sys.__stderr__ or sys.stderr, f"[{stage}] " if stage else "")
    fmt = "{desc}: {n_fmt}/{total_fmt} {unit} ({percentage:.0f}%) {elapsed} elapsed, ~{remaining} left"
    return {"file": writer, "mininterval": line_interval, "maxinterval": line_interval, "bar_format": fmt,
            "dynamic_ncols": False}


def bar(total: int | None = None, desc: str | None = None, unit: str = "it", *, iterable: Any = None,
        mode: str | None = None, file: IO[str] | None = None, line_interval: float = 15.0, **kwargs: Any):
    """A tqdm progress bar over ``total`` steps, drawn where someone can see it (see the module)."""
    chosen = mode or globals()["mode"]()
    if chosen == "lines":
        from tqdm.std import tqdm

        return tqdm(iterable, total=total, desc=desc or "progress", unit=unit,
                    **line_options(file, line_interval=line_interval), **kwargs)
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, file=file, **kwargs)
