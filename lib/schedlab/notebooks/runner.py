"""Execute a stage notebook with papermill: its parameters, a local kernel, progress lines, timings."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from schedlab import paths, progress
from schedlab.notebooks.params import SMOKE, ParamsError, check_used, selected_profile, stage_params
from schedlab.notebooks.outputs import Staging, declared_outputs
from schedlab.notebooks.watchdog import die_with_parent, hold_signals, stop_with_parent


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

    A run into a checkout (the repository, as ``dvc repro`` runs a stage, or a profile run's
    copy) writes into a staging folder (:class:`~schedlab.notebooks.outputs.Staging`,
    ``<root>/.staging/<name>/``), which the kernel gets as its ``output_root`` and as the
    project root (``SCHEDLAB_ROOT``), so the paths a notebook records relative to the root read
    as they always did. Only after its last cell has run does everything it wrote move into
    place, together, then the executed copy; the log is the only file written in place as the
    run goes. A run into another folder (``output_root``: a scratch folder, the tests) writes
    there directly: a staging folder there would leave its own path in what the notebook
    records as an absolute path (the Nona sweeps' ``tables`` column).

    ``source`` runs another notebook file under ``name``'s parameters (tests). Interrupted
    (Ctrl-C, SIGTERM, SIGHUP, or its parent process gone: :func:`stop_with_parent`), the kernel
    and its worker processes are killed, the staging folder removed and :class:`StageInterrupted`
    raised: the stage's outputs in place are the previous run's, untouched (outside a checkout:
    what the run wrote so far stays). A cell that raises
    ends in :class:`StageFailed` (one line: the cell and the error), the outputs in place again
    untouched and the run up to that cell kept at :func:`failed_path`.
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
    root = output_root if output_root is not None else paths.ROOT.resolve()
    into_checkout = root == paths.ROOT.resolve()
    staging = Staging(root, name, declared_outputs(name) if own_notebook else ()) if into_checkout else None
    out = executed or paths.EXECUTED / f"{name}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.part.ipynb")
    log = log_path(out)
    load_start, cpu0, t0 = stagetimes.load_average(), _children_cpu_s(), time.perf_counter()
    stopped: list[int] = []
    try:
        # progress goes to the stage's log, echoed here to stderr as it comes: the kernel's own
        # stderr is captured into the executed notebook (ipykernel watches its file descriptors)
        with stop_with_parent(on_stop=kill_kernels) as stopped, progress.follow(log, sys.stderr):
            view = staging.open() if staging else root
            env = {progress.ENV: "lines", progress.ENV_STAGE: name, progress.ENV_LOG: str(log)}
            if into_checkout:  # paths.ROOT in the kernel: what it records stays relative to the root
                env["SCHEDLAB_ROOT"] = str(view)
            # only these three are injected: the notebook loads every value from params.yaml itself
            params = {"output_root": str(view), "profile": profile, "overrides": dict(overrides or {})}
            with _kernel_env(env):
                pm.execute_notebook(
                    str(source),
                    str(tmp),
                    parameters=params,
                    cwd=str(view if into_checkout else paths.ROOT),
                    kernel_name="python3",
                    # one line per finished cell at most every 15 s (and at the end); bars inside the
                    # notebook write lines to the same log (schedlab.progress), so a long stage is never silent
                    progress_bar={"desc": "cells", **progress.line_options(log, prefix=name)},
                    request_save_on_cell_execute=False,
                    kernel_manager_class=_local_kernel_manager(),
                )
            # the set, then the executed copy that made it: a signal now waits until both are in place
            with hold_signals() as held:
                if staging:
                    staging.commit()
                tmp.replace(out)
                failed_path(out).unlink(missing_ok=True)  # a failure of an earlier run no longer stands
            if held:
                raise StageInterrupted(name, held[0], after_commit=True)
    except BaseException as exc:
        with hold_signals():  # a second Ctrl-C must not cut the clean-up short
            stop_kernels()
            if staging:
                staging.discard()  # the outputs in place stay the last complete run's
        if stopped or isinstance(exc, KeyboardInterrupt):
            # Ctrl-C, or Interrupted (SIGTERM, SIGHUP, parent gone), even where papermill's
            # clean-up of the killed kernel raised something else on the way out
            signum = stopped[0] if stopped else getattr(exc, "signum", signal.SIGINT)
            kept = staging.previous_in_place() if staging else None
            raise StageInterrupted(name, signum, kept=kept, root=root) from None
        if isinstance(exc, pm.PapermillExecutionError):
            # keep the run up to the failing cell (its output shows the full traceback) and say
            # in one line what failed: the executed copy stays the last complete run's
            tmp.replace(failed_path(out))
            raise StageFailed(name, exc, failed_path(out)) from None
        raise
    finally:
        tmp.unlink(missing_ok=True)
        if staging:
            staging.release()
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


class StageInterrupted(Exception):
    """A stage run stopped by a signal; its outputs in place are as they were before the run.

    Not a ``KeyboardInterrupt``: the command line ends it in one line (:attr:`exit_code`,
    128 + the signal's number, as a shell reports a process the signal killed).

    >>> str(StageInterrupted("nona/fig3", signal.SIGINT, kept=True))
    'interrupted (SIGINT): stage nona/fig3; previous outputs kept'
    >>> StageInterrupted("nona/fig3", signal.SIGTERM, kept=False).exit_code
    143
    >>> str(StageInterrupted("nona/fig3", signal.SIGHUP, kept=None, root=Path("/tmp/x")))
    'interrupted (SIGHUP): stage nona/fig3; what it wrote under /tmp/x so far is kept, not staged'
    """

    def __init__(
        self,
        name: str,
        signum: int,
        *,
        kept: bool | None = True,
        after_commit: bool = False,
        root: Path | None = None,
    ):
        self.name, self.signum = name, int(signum)
        self.exit_code = 128 + self.signum
        if after_commit:
            state = "it had finished: its new outputs are in place"
        elif kept is None:  # written in place, outside a checkout
            state = f"what it wrote under {root} so far is kept, not staged"
        elif kept:
            state = "previous outputs kept"
        else:
            state = "none of its outputs written"
        super().__init__(f"interrupted ({signal.Signals(self.signum).name}): stage {name}; {state}")


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


#: kernel managers this process started (:func:`stop_kernels` kills what is left of them)
_KERNELS: list[Any] = []


def _local_kernel_manager() -> type:
    """A kernel manager that talks to its kernel over Unix sockets in the temp folder instead of
    TCP: nothing listens on a port, and the kernel has no reason to print its "running over TCP
    without encryption" warning into every stage's output.

    Its kernel runs in a session of its own (jupyter_client's default: Ctrl-C at the terminal
    reaches this process only, which then stops the kernel itself) and is killed by the system
    if this process dies first (``kill -9``), as ipykernel's own check of its parent would do a
    second later, with a warning."""
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    class LocalKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any):
            super().__init__(**kwargs)
            self.transport = "ipc"
            self.ip = os.path.join(tempfile.gettempdir(), f"schedlab-kernel-{os.getpid()}")

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            _KERNELS.append(self)
            await super()._async_launch_kernel(kernel_cmd, preexec_fn=die_with_parent(), **kw)

        async def _async_interrupt_kernel(self) -> None:
            # jupyter_client's shutdown first sends SIGINT, then the shutdown request. At the end
            # of a run the kernel is idle, and a SIGINT that lands while it is still finishing
            # its last reply is logged as "[IPKernelApp] ERROR | KeyboardInterrupt caught in
            # kernel." in the stage's output. An interrupted run is killed (kill_kernels), never
            # shut down this way, so the shutdown's interrupt has nothing to stop.
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return LocalKernelManager


def kill_kernels() -> None:
    """Kill every kernel this process started, with its process group (the worker processes it
    started), and wait for each: at once, nothing asked of the kernel, nothing it can print."""
    for km in _KERNELS:
        proc = getattr(km.provisioner, "process", None) if km.provisioner is not None else None
        if proc is None or proc.poll() is not None:
            continue
        with contextlib.suppress(OSError):
            group = os.getpgid(proc.pid)
            # the kernel leads a group of its own; never signal ours (it holds this process)
            os.killpg(group, signal.SIGKILL) if group != os.getpgrp() else proc.kill()
        with contextlib.suppress(Exception):
            proc.wait(timeout=10)


def stop_kernels() -> None:
    """Kill every kernel this process started, with its process group (the worker processes it
    started), and remove their connection files; quiet the event loop papermill ran on, whose
    pending tasks would otherwise report the closed sockets at exit ("Task exception was never
    retrieved"). For an interrupted run: no graceful shutdown, nothing printed."""
    from jupyter_core.utils import ensure_event_loop

    ensure_event_loop().set_exception_handler(lambda _loop, _context: None)
    kill_kernels()
    while _KERNELS:
        km = _KERNELS.pop()
        with contextlib.suppress(Exception):
            km.cleanup_connection_file()
            km.cleanup_ipc_files()


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
