"""Execute a stage notebook with papermill: its parameters, a local kernel, progress lines, timings."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from schedlab import paths, progress
from schedlab.notebooks.params import SMOKE, ParamsError, check_used, selected_profile, stage_params
from schedlab.notebooks.watchdog import stop_with_parent


def notebook_path(name: str) -> Path:
    path = paths.NOTEBOOKS / f"{name}.ipynb"
    if not path.is_file():
        known = sorted(
            p.relative_to(paths.NOTEBOOKS).with_suffix("").as_posix()
            for p in paths.NOTEBOOKS.rglob("*.ipynb")
            if ".ipynb_checkpoints" not in p.parts
        )
        raise FileNotFoundError(f"no notebook {path}; known notebooks: {', '.join(known)}")
    return path


def run(
    name: str,
    *,
    output_root: Path | None = None,
    executed: Path | None = None,
    overrides: dict[str, Any] | None = None,
    profile: str | None = None,
    source: Path | None = None,
) -> Path:
    """Execute notebook ``name`` with its ``params.yaml`` section under ``profile`` (default:
    the file's top-level ``profile``); return the executed copy.

    Progress lines (the cells, and every :func:`schedlab.progress.bar` inside the notebook) go
    to the stage's log, :func:`log_path` of the executed copy, and to this process's stderr;
    none lands in the executed notebook.

    ``source`` runs another notebook file under ``name``'s parameters (tests). Interrupted
    (Ctrl-C, SIGTERM, SIGHUP, or its parent process gone: :func:`stop_with_parent`), the kernel
    is shut down and nothing is left half-written: outputs are written atomically and the
    partial executed copy is removed. A cell that raises ends in :class:`StageFailed` (one line:
    the cell and the error), the run up to that cell kept at :func:`failed_path`.
    """
    import papermill as pm  # heavy import, only when a notebook actually runs

    from schedlab import (
        stagetimes,
    )  # pandas: not imported by every `schedlab` command (the CLI imports this module)

    # one absolute root: the kernel runs in the repository, this process in the caller's folder
    output_root = None if output_root is None else Path(output_root).resolve()
    own_notebook = source is None
    source = source or notebook_path(name)  # an unknown name fails first, listing the known notebooks
    profile = profile or selected_profile()
    _check_smoke_root(profile, output_root)
    values = stage_params(
        name, profile, overrides
    ).values  # a bad override fails here, before a kernel starts
    if own_notebook:  # so does a params.yaml key the notebook never reads (a typo)
        check_used(name, values)
    # only these three are injected: the notebook loads every value from params.yaml itself
    params = {
        "output_root": str(output_root if output_root is not None else paths.ROOT),
        "profile": profile,
        "overrides": dict(overrides or {}),
    }
    out = executed or paths.EXECUTED / f"{name}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.part.ipynb")
    root = Path(params["output_root"])
    log = log_path(out)
    load_start, cpu0, t0 = stagetimes.load_average(), _children_cpu_s(), time.perf_counter()
    try:
        # progress goes to the stage's log, echoed here to stderr as it comes: the kernel's own
        # stderr is captured into the executed notebook (ipykernel watches its file descriptors)
        with (
            stop_with_parent(),
            progress.follow(log, sys.stderr),
            _kernel_env({progress.ENV: "lines", progress.ENV_STAGE: name, progress.ENV_LOG: str(log)}),
        ):
            pm.execute_notebook(
                str(source),
                str(tmp),
                parameters=params,
                cwd=str(paths.ROOT),
                kernel_name="python3",
                # one line per finished cell at most every 15 s (and at the end); bars inside the
                # notebook write lines to the same log (schedlab.progress), so a long stage is never silent
                progress_bar={"desc": "cells", **progress.line_options(log, prefix=name)},
                request_save_on_cell_execute=False,
                kernel_manager_class=_local_kernel_manager(),
            )
        tmp.replace(out)
        failed_path(out).unlink(missing_ok=True)  # a failure of an earlier run no longer stands
    except pm.PapermillExecutionError as exc:
        # keep the run up to the failing cell (its output shows the full traceback) and say in one
        # line what failed: the executed copy itself stays the last complete run's
        tmp.replace(failed_path(out))
        raise StageFailed(name, exc, failed_path(out)) from None
    finally:
        tmp.unlink(missing_ok=True)
    # only a finished run is recorded: its times are what `schedlab timings` adds up
    stagetimes.record(
        root,
        name,
        profile=profile,
        wall_s=time.perf_counter() - t0,
        cpu_s=_children_cpu_s() - cpu0,
        load=(load_start, stagetimes.load_average()),
    )
    return out


class StageFailed(RuntimeError):
    """A cell of a stage notebook raised; the run up to that cell is kept beside the executed copy."""

    def __init__(self, name: str, exc: Any, kept: Path):
        self.name, self.kept = name, kept
        error = f"{exc.ename}: {exc.evalue}".strip().rstrip(":")
        super().__init__(
            f"{name}: cell {exc.exec_count} raised {error} (the run up to that cell, with its "
            f"traceback: {kept})"
        )


def failed_path(executed: Path) -> Path:
    """Where a failed run's notebook is kept (``data/executed/nona/fig3.failed.ipynb``).

    >>> failed_path(Path("data/executed/nona/fig3.ipynb")).as_posix()
    'data/executed/nona/fig3.failed.ipynb'
    """
    return Path(executed).with_name(f"{Path(executed).stem}.failed.ipynb")


def log_path(executed: Path) -> Path:
    """The stage's log beside its executed copy (``data/executed/nona/fig3.log``): the progress
    lines of the last run, also echoed to the runner's stderr while it ran.

    >>> log_path(Path("data/executed/nona/fig3.ipynb")).as_posix()
    'data/executed/nona/fig3.log'
    """
    return Path(executed).with_suffix(".log")


def _check_smoke_root(profile: str, output_root: Path | None) -> None:
    """Refuse the ``smoke`` profile into the repository: its tiny runs would replace the pipeline's
    outputs with numbers that mean nothing (it is for tests, which write into a scratch root).

    >>> _check_smoke_root("smoke", None)
    Traceback (most recent call last):
    ...
    schedlab.notebooks.params.ParamsError: profile 'smoke' writes into the repository (output_root None): its tiny runs would replace the pipeline's outputs; pass output_root= a scratch folder
    >>> _check_smoke_root("smoke", Path("/tmp/smoke-run"))
    """
    root = Path(output_root).resolve() if output_root is not None else paths.ROOT
    if profile == SMOKE and root == paths.ROOT.resolve():
        raise ParamsError(
            f"profile {SMOKE!r} writes into the repository (output_root {output_root}): its tiny runs "
            "would replace the pipeline's outputs; pass output_root= a scratch folder"
        )


def _children_cpu_s() -> float:
    """User + system CPU seconds of the child processes waited for so far: the kernel, with
    the worker processes it waited for."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _local_kernel_manager() -> type:
    """A kernel manager that talks to its kernel over Unix sockets in the temp folder instead of
    TCP: nothing listens on a port, and the kernel has no reason to print its "running over TCP
    without encryption" warning into every stage's output."""
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    class LocalKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any):
            super().__init__(**kwargs)
            self.transport = "ipc"
            self.ip = os.path.join(tempfile.gettempdir(), f"schedlab-kernel-{os.getpid()}")

    return LocalKernelManager


@contextlib.contextmanager
def _kernel_env(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the kernel papermill starts (it inherits ours), then restore."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
