"""Stop a notebook run cleanly when it is told to, or when whoever started it dies."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path


class Interrupted(KeyboardInterrupt):
    """A notebook run stopped by a signal (SIGTERM, SIGHUP) or by the death of its parent
    (:attr:`signum`: the signal, SIGTERM for a parent gone)."""

    def __init__(self, message: str, signum: int = signal.SIGTERM):
        super().__init__(message)
        self.signum = int(signum)


#: the signals that stop a run (Ctrl-C, ``kill``, the terminal closed)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def hold_signals() -> Iterator[list[int]]:
    """Let a short step finish (moving a stage's outputs into place) whatever signal comes: a
    stop signal received meanwhile is only recorded in the list yielded, for the caller to act
    on after the step. In another thread than the main one, signals cannot be caught: nothing
    changes.

    >>> with hold_signals() as held:
    ...     os.kill(os.getpid(), signal.SIGINT)
    >>> [signal.Signals(s).name for s in held]
    ['SIGINT']
    """
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def record(signum, _frame):
        held.append(signum)

    previous = {sig: signal.signal(sig, record) for sig in STOP_SIGNALS}
    try:
        yield held
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` for a child process: Linux kills the child with SIGKILL when the process
    that started it dies, even by ``kill -9``; ``None`` where ``prctl`` is missing (not Linux).

    The C function is found here, in the parent: between fork and exec the child runs no
    import (another thread may hold the import lock at the fork).
    """
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def hook() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return hook


def _ancestors() -> list[int]:
    """This process's parent and grandparent (dvc runs a stage through a shell), init excluded."""
    pids = [os.getppid()]
    try:  # /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after ')'
        stat = Path(f"/proc/{pids[0]}/stat").read_text()
        pids.append(int(stat.rsplit(")", 1)[1].split()[1]))
    except (OSError, IndexError, ValueError):
        pass
    return [p for p in pids if p > 1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def stop_with_parent(poll_s: float = 0.5, on_stop: Callable[[], None] | None = None) -> Iterator[list[int]]:
    """Stop this process's notebook run when it is told to or when whoever started it dies.

    Ctrl-C (SIGINT, unless ignored), SIGTERM and SIGHUP call ``on_stop`` (the runner kills its
    kernel there, before anything else runs: papermill would otherwise shut it down politely,
    and the dying kernel print its socket errors) and raise :class:`Interrupted` in the main
    thread; :func:`run` then removes what the run wrote. The signals received are appended to
    the list yielded: papermill may replace the exception on its way out, the list still says
    the run was stopped. A watchdog thread sends this process SIGTERM when its parent or
    grandparent exits (``dvc repro`` killed while its stage runs), so no notebook goes on
    writing after the pipeline has died.

    A run started with SIGHUP ignored (``nohup schedlab notebook run ...``) was asked to outlive
    its terminal and whoever started it: it keeps SIGHUP ignored and has no watchdog (SIGTERM and
    Ctrl-C still stop it cleanly).
    """
    stopped: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield stopped
        return

    def interrupt(signum, _frame):
        stopped.append(signum)
        if on_stop is not None:
            on_stop()
        raise Interrupted(f"stopped by {signal.Signals(signum).name}", signum)

    # Ctrl-C only where Python's own handler is in place: a shell starting a job in the
    # background ignores SIGINT for it, and so must the run
    sigint = [signal.SIGINT] if signal.getsignal(signal.SIGINT) is signal.default_int_handler else []
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:  # nohup: detached on purpose
        previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, *sigint)}
        try:
            yield stopped
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return
    watched = _ancestors()
    start_ppid = os.getppid()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(poll_s):
            if os.getppid() != start_ppid or not all(_alive(p) for p in watched):
                os.kill(os.getpid(), signal.SIGTERM)
                return

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP, *sigint)}
    thread = threading.Thread(target=watch, name="schedlab-parent-watch", daemon=True)
    thread.start()
    try:
        yield stopped
    finally:
        done.set()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
