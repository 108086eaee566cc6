"""Stop a notebook run cleanly when it is told to, or when whoever started it dies."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path


class Interrupted(KeyboardInterrupt):
    """A notebook run stopped by a signal (SIGTERM, SIGHUP) or by the death of its parent."""


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
def stop_with_parent(poll_s: float = 0.5) -> Iterator[None]:
    """Stop this process's notebook run when it is told to or when whoever started it dies.

    SIGTERM and SIGHUP raise :class:`Interrupted` in the main thread (papermill then shuts its
    kernel down and :func:`run` removes its partial output, as for Ctrl-C); a watchdog thread
    sends this process SIGTERM when its parent or grandparent exits (``dvc repro`` killed while
    its stage runs), so no notebook goes on writing after the pipeline has died.

    A run started with SIGHUP ignored (``nohup schedlab notebook run ...``) was asked to outlive
    its terminal and whoever started it: it keeps SIGHUP ignored and has no watchdog (SIGTERM and
    Ctrl-C still stop it cleanly).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, _frame):
        raise Interrupted(f"stopped by {signal.Signals(signum).name}")

    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:  # nohup: detached on purpose
        previous = signal.signal(signal.SIGTERM, interrupt)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)
        return
    watched = _ancestors()
    start_ppid = os.getppid()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(poll_s):
            if os.getppid() != start_ppid or not all(_alive(p) for p in watched):
                os.kill(os.getpid(), signal.SIGTERM)
                return

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    thread = threading.Thread(target=watch, name="schedlab-parent-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
