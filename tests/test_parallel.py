"""The one executor: same numbers serial, in loky processes and on a multi-process Dask cluster."""

from __future__ import annotations

import os

import numpy as np
import pytest

from schedlab import parallel


def draw(seed: np.random.SeedSequence, n: int) -> np.ndarray:
    """A seeded task: its numbers depend on its seed only, never on the worker that runs it."""
    return np.random.default_rng(seed).standard_normal(n)


def weighted_sum(seed: np.random.SeedSequence, big: np.ndarray) -> float:
    return float(np.random.default_rng(seed).standard_normal(len(big)) @ big)


def worker_pid(_: int) -> int:
    return os.getpid()


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    return x


def _serial_reference():
    return parallel.pmap(draw, parallel.spawn_seeds(42, 9), 5, workers=1)


def test_spawned_seeds_are_independent_and_reproducible():
    a, b = _serial_reference(), _serial_reference()
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert len({float(x[0]) for x in a}) == 9


def test_loky_equals_serial_and_uses_other_processes():
    ref = _serial_reference()
    with parallel.Executor(workers=2) as ex:
        assert ex.kind == "loky"
        got = ex.map(draw, parallel.spawn_seeds(42, 9), 5)
        pids = set(ex.map(worker_pid, range(8)))
    assert all(np.array_equal(x, y) for x, y in zip(ref, got))
    assert os.getpid() not in pids


@pytest.mark.slow
def test_dask_localcluster_with_two_processes_equals_serial():
    distributed = pytest.importorskip("distributed")
    ref = _serial_reference()
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        with parallel.Executor(scheduler=cluster.scheduler_address) as ex:
            assert ex.kind == "dask" and ex.workers == 2
            got = ex.map(draw, parallel.spawn_seeds(42, 9), 5)
            pids = set(ex.map(worker_pid, range(8)))
            # a shared argument over SCATTER_BYTES is scattered once, and still reaches every task
            big = np.arange(parallel.SCATTER_BYTES // 4, dtype=float)
            sums = ex.map(weighted_sum, parallel.spawn_seeds(1, 4), big)
    assert all(np.array_equal(x, y) for x, y in zip(ref, got))
    assert os.getpid() not in pids
    assert sums == parallel.pmap(weighted_sum, parallel.spawn_seeds(1, 4), big, workers=1)


def test_environment_selects_the_backend(monkeypatch):
    monkeypatch.delenv(parallel.DASK_ENV, raising=False)
    monkeypatch.setenv(parallel.WORKERS_ENV, "1")
    assert parallel.Executor().kind == "serial"
    monkeypatch.setenv(parallel.WORKERS_ENV, "3")
    assert parallel.Executor().workers == 3
    monkeypatch.setenv(parallel.WORKERS_ENV, "zero")
    with pytest.raises(ValueError, match="SCHEDLAB_WORKERS"):
        parallel.Executor()


def test_imap_yields_every_index_once():
    with parallel.Executor(workers=2) as ex:
        got = dict(ex.imap(abs, [-3, 1, -2, 5]))
    assert got == {0: 3, 1: 1, 2: 2, 3: 5}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_task_raises_its_own_error(workers):
    with pytest.raises(ValueError, match="three"):
        parallel.pmap(fail_on_three, range(5), workers=workers)


def test_bad_arguments():
    with pytest.raises(ValueError, match="either workers"):
        parallel.Executor(workers=2, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match="positive"):
        parallel.Executor(workers=0)


def test_executor_context_builds_keeps_or_closes(monkeypatch):
    """`parallel.executor` is how every notebook picks one: a count, an address, None, or one already open."""
    monkeypatch.delenv(parallel.DASK_ENV, raising=False)
    monkeypatch.setenv(parallel.WORKERS_ENV, "2")
    with parallel.executor() as ex:
        assert (ex.kind, ex.workers) == ("loky", 2)  # None: the environment's default
    with parallel.executor(1) as ex:
        assert ex.kind == "serial" and ex.map(abs, [-1, -2], progress=False) == [1, 2]
    closed = []
    with parallel.Executor(workers=1) as owned:
        monkeypatch.setattr(owned, "close", lambda: closed.append(True))
        with parallel.executor(owned) as ex:
            assert ex is owned
        assert closed == []  # an executor passed in stays open: its owner closes it
    built = []
    real_close = parallel.Executor.close
    monkeypatch.setattr(parallel.Executor, "close", lambda self: (built.append(self), real_close(self)))
    with parallel.executor(1):
        pass
    assert len(built) == 1  # one it built is closed on leaving the block


@pytest.mark.parametrize(
    "spec, error", [(2.5, TypeError), (True, TypeError), ("  ", ValueError), (0, ValueError)]
)
def test_executor_context_refuses_what_names_no_executor(spec, error):
    with pytest.raises(error):
        with parallel.executor(spec):
            pass
