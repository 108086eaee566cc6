"""One executor for every embarrassingly parallel loop in the suite.

Pareto evaluations, the clustering grid, Nona's per-point simulations, PCS traces x
policies, Fig. 9/10c grids and Decima's evaluation episodes all go through :class:`Executor`:

* ``workers=1``: in this process (no pickling; the reference for the others);
* ``workers=k > 1`` (default: ``$SCHEDLAB_WORKERS``, else every core this process may use):
  local processes through joblib's loky backend;
* a Dask cluster: ``scheduler="tcp://host:8786"``, a ``distributed.Client``, or the
  environment variable ``SCHEDLAB_DASK=tcp://host:8786``.

Results come back in the order of the items whatever the backend, a task never sees which
worker runs it, and every task runs with one BLAS/OpenMP thread (so a reduction rounds the same
way everywhere): the numbers are the same on every backend as long as each task carries its
own seed. :func:`spawn_seeds` derives independent per-task seeds from one seed
(``numpy.random.SeedSequence.spawn``); tasks build their ``numpy.random.Generator`` from it.

Every notebook and library loop takes its executor from :func:`executor` (one context manager):
``with executor(workers) as ex:`` where ``workers`` is what the notebook's parameters say (a
worker count, ``-1`` for every core, a Dask address, ``None`` for the defaults above, or an
executor already open, which is kept open).

Examples
--------
>>> with executor(1) as ex:
...     ex.map(abs, [-2, 3], progress=False)
[2, 3]
>>> with Executor(workers=1) as ex:
...     ex.map(pow, [1, 2, 3], 2, progress=False)
[1, 4, 9]
>>> [int(s.generate_state(1)[0]) == int(t.generate_state(1)[0])
...  for s, t in zip(spawn_seeds(7, 2), spawn_seeds(7, 2))]
[True, True]
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

#: environment variable naming a Dask scheduler address: every executor built without an
#: explicit ``scheduler`` or ``workers`` then runs on that cluster
DASK_ENV = "SCHEDLAB_DASK"
#: environment variable giving the default number of local worker processes
WORKERS_ENV = "SCHEDLAB_WORKERS"
#: environment variable: seconds to wait for a Dask scheduler to answer (default
#: :data:`DEFAULT_DASK_TIMEOUT_S`); short, so a wrong address costs seconds, not half a minute
DASK_TIMEOUT_ENV = "SCHEDLAB_DASK_TIMEOUT"
DEFAULT_DASK_TIMEOUT_S = 10.0


class SchedulerUnreachable(ValueError):
    """No Dask scheduler answered at the address given (a ``ValueError``: the address is the bad
    input, and the commands already turn a ``ValueError`` into one line)."""


def dask_timeout() -> float:
    """``$SCHEDLAB_DASK_TIMEOUT`` (seconds, > 0) or :data:`DEFAULT_DASK_TIMEOUT_S`.

    >>> dask_timeout() > 0
    True
    """
    raw = os.environ.get(DASK_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_DASK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise ValueError(f"${DASK_TIMEOUT_ENV} must be a number of seconds > 0, got {raw!r}")
    return value


def _connect(address: str, from_env: bool):
    """A ``distributed.Client`` on ``address``, or :class:`SchedulerUnreachable` after
    :func:`dask_timeout` seconds naming where the address came from."""
    from distributed import Client

    timeout = dask_timeout()
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        where = f"${DASK_ENV}={address}" if from_env else f"Dask scheduler {address}"
        hint = f"; unset ${DASK_ENV} to run on local processes" if from_env else ""
        raise SchedulerUnreachable(
            f"{where}: no scheduler answered within {timeout:g} s "
            f"({type(exc).__name__}); expected the address of a running Dask "
            f"scheduler (tcp://host:8786){hint}"
        ) from None


def available_cores() -> int:
    """Cores this process may run on (the affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def default_workers() -> int:
    """``$SCHEDLAB_WORKERS`` if set (a positive integer), else :func:`available_cores`."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return available_cores()
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"${WORKERS_ENV} must be a positive integer, got {raw!r}") from None
    if n < 1:
        raise ValueError(f"${WORKERS_ENV} must be a positive integer, got {raw!r}")
    return n


def spawn_seeds(seed: int | np.random.SeedSequence, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent child seeds of ``seed`` (the same children on every call and backend).

    >>> rngs = [np.random.default_rng(s) for s in spawn_seeds(0, 3)]
    >>> len({float(r.random()) for r in rngs})
    3
    """
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return root.spawn(n)


class Executor:
    """Map a function over items in this process, in local processes or on a Dask cluster.

    Parameters
    ----------
    workers
        Local processes; 1 runs in this process. ``None``: ``$SCHEDLAB_WORKERS`` or all cores
        (or the Dask cluster named by ``$SCHEDLAB_DASK``, when set).
    scheduler
        A Dask scheduler address or a ``distributed.Client``. Give either this or ``workers``.

    The function and its arguments must be picklable (module-level functions) for the loky
    and Dask backends.
    """

    def __init__(self, workers: int | None = None, scheduler: Any = None):
        if scheduler is not None and workers is not None:
            raise ValueError("give either workers (local processes) or scheduler (Dask), not both")
        from_env = False
        if scheduler is None and workers is None:
            scheduler = os.environ.get(DASK_ENV, "").strip() or None
            from_env = scheduler is not None
        self.client = None
        self._own_client = False
        if scheduler is not None:
            from distributed import Client

            self._own_client = not isinstance(scheduler, Client)
            self.client = _connect(scheduler, from_env) if self._own_client else scheduler
            self.workers = len(self.client.scheduler_info().get("workers", {})) or 1
            self.kind = "dask"
            return
        n = default_workers() if workers is None else int(workers)
        if n == -1:
            n = available_cores()
        if n < 1:
            raise ValueError(f"workers must be a positive integer (or -1: all cores), got {workers}")
        self.workers = n
        self.kind = "serial" if n == 1 else "loky"

    def __repr__(self) -> str:
        return f"Executor(kind={self.kind!r}, workers={self.workers})"

    # -- mapping -------------------------------------------------------------------------

    def imap(
        self,
        fn: Callable,
        items: Iterable,
        *args,
        desc: str | None = None,
        progress: bool | None = None,
        **kwargs,
    ) -> Iterator[tuple[int, Any]]:
        """Yield ``(index, fn(item, *args, **kwargs))`` as each task finishes (any order).

        For callers that store each result as it arrives (a resumable cache): the caller
        writes, workers only compute.
        """
        items = list(items)
        bar = _bar(len(items), desc, progress)
        try:
            for i, res in self._run(fn, items, args, kwargs):
                bar.update(1)
                yield i, res
        finally:
            bar.close()

    def map(
        self,
        fn: Callable,
        items: Iterable,
        *args,
        desc: str | None = None,
        progress: bool | None = None,
        **kwargs,
    ) -> list:
        """``[fn(item, *args, **kwargs) for item in items]``, in the order of ``items``."""
        items = list(items)
        out: list = [None] * len(items)
        for i, res in self.imap(fn, items, *args, desc=desc, progress=progress, **kwargs):
            out[i] = res
        return out

    def starmap(
        self,
        fn: Callable,
        arg_tuples: Iterable[Sequence],
        *,
        desc: str | None = None,
        progress: bool | None = None,
    ) -> list:
        """``[fn(*t) for t in arg_tuples]`` in order (tasks with several varying arguments)."""
        return self.map(_star, [(fn, tuple(t)) for t in arg_tuples], desc=desc, progress=progress)

    def _run(self, fn, items, args, kwargs) -> Iterator[tuple[int, Any]]:
        if self.kind == "serial" or len(items) <= 1 and self.kind != "dask":
            for i, it in enumerate(items):
                yield _indexed(i, fn, it, args, kwargs)
        elif self.kind == "loky":
            from joblib import Parallel, delayed

            par = Parallel(
                n_jobs=min(self.workers, len(items)), backend="loky", return_as="generator_unordered"
            )
            yield from par(delayed(_indexed)(i, fn, it, args, kwargs) for i, it in enumerate(items))
        else:
            from distributed import as_completed

            # a large shared argument (a 100k-row clustering sample) goes to every worker once;
            # small ones travel with each task, which is cheaper than a round trip per argument
            shared = [
                self.client.scatter(a, broadcast=True, hash=False) if _pickled_size(a) > SCATTER_BYTES else a
                for a in args
            ]
            futs = [
                self.client.submit(_indexed_star, i, fn, it, kwargs, *shared, pure=False)
                for i, it in enumerate(items)
            ]
            for fut in as_completed(futs):
                yield fut.result()

    # -- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        if self._own_client and self.client is not None:
            self.client.close()
            self.client = None

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _call(fn: Callable, item, args: tuple, kwargs: dict):
    """``fn(item, *args, **kwargs)`` with one BLAS/OpenMP thread, on every backend.

    A multithreaded BLAS splits a long dot product by thread count, and the rounding follows:
    with each task single-threaded (as loky workers on a 2-core machine already were), a task
    gives the same bits in this process, in a loky worker and on a Dask worker.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return fn(item, *args, **kwargs)


def _indexed(i: int, fn: Callable, item, args: tuple, kwargs: dict) -> tuple[int, Any]:
    return i, _call(fn, item, args, kwargs)


def _indexed_star(i: int, fn: Callable, item, kwargs: dict, *args) -> tuple[int, Any]:
    # Dask resolves futures given as top-level arguments, so scattered data arrive as values
    return i, _call(fn, item, args, kwargs)


#: shared arguments larger than this (pickled) are scattered to the Dask workers once
SCATTER_BYTES = 1 << 20


def _pickled_size(obj: Any) -> int:
    import pickle

    try:
        return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # not picklable here: let Dask's own serialisation report it
        return 0


def _star(pair: tuple[Callable, tuple]):
    fn, args = pair
    return fn(*args)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, desc: str | None, progress: bool | None):
    """A tqdm bar when ``progress`` (default: when ``desc`` is given and there is work)."""
    show = (desc is not None) if progress is None else progress
    if not show or total == 0:
        return _NoBar()
    from schedlab.progress import bar

    return bar(total=total, desc=desc or "tasks", unit="task")


def pmap(
    fn: Callable,
    items: Iterable,
    *args,
    workers: int | None = None,
    scheduler: Any = None,
    desc: str | None = None,
    progress: bool | None = None,
    **kwargs,
) -> list:
    """One-shot :meth:`Executor.map` (builds and closes the executor).

    >>> pmap(abs, [-1, 2, -3], workers=1)
    [1, 2, 3]
    """
    with Executor(workers=workers, scheduler=scheduler) as ex:
        return ex.map(fn, items, *args, desc=desc, progress=progress, **kwargs)


def _is_dask_client(obj: Any) -> bool:
    """A ``distributed.Client``, recognised without importing Dask (it is slow to import)."""
    return type(obj).__name__ == "Client" and type(obj).__module__.startswith("distributed")


def resolve(executor: "Executor | int | str | None") -> tuple["Executor", bool]:
    """An executor from what a caller passed (see :func:`executor`). Returns
    ``(executor, caller_must_close)``; :func:`executor` closes it for you."""
    if isinstance(executor, Executor):
        return executor, False
    if executor is None:
        return Executor(), True
    if _is_dask_client(executor):  # a distributed.Client the caller opened: used, left open by Executor
        return Executor(scheduler=executor), True
    if isinstance(executor, bool) or not isinstance(executor, (int, str)):
        raise TypeError(
            f"executor must be an Executor, a worker count, a Dask address, a distributed.Client or None, "
            f"got {executor!r} ({type(executor).__name__})"
        )
    if isinstance(executor, int):
        return Executor(workers=executor), True
    if not executor.strip():
        raise ValueError("executor: an empty Dask address; give None for the default executor")
    return Executor(scheduler=executor), True


@contextmanager
def executor(spec: "Executor | int | str | None" = None) -> Iterator[Executor]:
    """The executor ``spec`` names, open for the ``with`` block: the one way the suite picks one.

    Parameters
    ----------
    spec
        An open :class:`Executor` (used and left open: its owner closes it), a number of
        local worker processes (1: this process; -1: every core), a Dask scheduler address
        (``"tcp://host:8786"``), or ``None``: ``$SCHEDLAB_DASK`` if set, else
        ``$SCHEDLAB_WORKERS`` local processes, else one per core.

    Yields
    ------
    Executor
        Closed on leaving the block if this call built it.

    Examples
    --------
    >>> with executor(1) as ex:
    ...     ex.kind, ex.workers
    ('serial', 1)
    >>> with executor(ex) as same:
    ...     same is ex
    True
    >>> with executor(2.5) as ex:
    ...     pass
    Traceback (most recent call last):
    ...
    TypeError: executor must be an Executor, a worker count, a Dask address, a distributed.Client or None, got 2.5 (float)
    """
    ex, own = resolve(spec)
    try:
        yield ex
    finally:
        if own:
            ex.close()
