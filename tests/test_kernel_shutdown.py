"""The stage runner's kernel manager: a finished run's kernel is shut down without the SIGINT that
jupyter_client sends first (it landed in stage logs as "KeyboardInterrupt caught in kernel"), while
an interrupt asked for at any other time still reaches the kernel."""

from __future__ import annotations

import asyncio

import pytest

from schedlab.notebooks import runner


class _Recorder:
    def __init__(self):
        self.signals: list[int] = []

    async def __call__(self, signum: int) -> None:
        self.signals.append(signum)


def _manager(monkeypatch, shutting_down: bool):
    km = runner._local_kernel_manager()(kernel_name="python3")
    rec = _Recorder()
    monkeypatch.setattr(km, "_async_signal_kernel", rec)
    monkeypatch.setattr(type(km), "has_kernel", property(lambda self: True))
    km.shutting_down = shutting_down
    return km, rec


def test_shutdown_sends_no_interrupt(monkeypatch):
    km, rec = _manager(monkeypatch, shutting_down=True)
    asyncio.run(km._async_interrupt_kernel())
    assert rec.signals == []


def test_an_interrupt_outside_shutdown_still_signals_the_kernel(monkeypatch):
    import signal

    km, rec = _manager(monkeypatch, shutting_down=False)
    if km.kernel_spec.interrupt_mode != "signal":
        pytest.fail(
            f"python3's kernel spec interrupts by {km.kernel_spec.interrupt_mode!r}, expected 'signal'"
        )
    asyncio.run(km._async_interrupt_kernel())
    assert rec.signals == [signal.SIGINT]
