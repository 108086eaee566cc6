"""PCS modules with one job each: no import circles (function-level imports included), the
compiled engine does not load the policies, event counts are returned, one set of codes."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import schedlab.pcs
from schedlab.pcs import Workload, make_policy
from schedlab.pcs.policies import NoKernelError, Policy, RandomisedAFS
from schedlab.pcs.sim import EventCounts, simulate, simulate_counted

PCS = Path(schedlab.pcs.__file__).parent


def _pcs_imports(path: Path, runtime_only: bool = False) -> set[str]:
    """``schedlab.pcs`` modules ``path`` imports anywhere (module level, in functions, and,
    unless ``runtime_only``, under ``if TYPE_CHECKING:``)."""
    found = set()
    todo = [ast.parse(path.read_text())]
    while todo:
        node = todo.pop()
        if (
            runtime_only
            and isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "schedlab.pcs":  # from schedlab.pcs import _engine as E
                found.update(f"schedlab.pcs.{a.name}" for a in node.names if (PCS / f"{a.name}.py").exists())
            elif node.module.startswith("schedlab.pcs."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("schedlab.pcs."))
    return found


def _graph(runtime_only: bool = False) -> dict[str, set[str]]:
    return {
        f"schedlab.pcs.{p.stem}": _pcs_imports(p, runtime_only)
        for p in PCS.glob("*.py")
        if p.stem != "__init__"
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (a list of modules, first = last), or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return path[path.index(d) :] + [d]
            if d not in state and (found := visit(d)):
                return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_cycle_finder_sees_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_pcs_modules_import_no_circle():
    graph = _graph()
    # the circles this layout cut: policies -> sim -> policies, _engine -> policies
    assert "schedlab.pcs.sim" not in graph["schedlab.pcs.policies"]
    assert "schedlab.pcs.policies" in graph["schedlab.pcs.sim"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_compiled_engines_do_not_load_the_policies():
    graph = _graph(runtime_only=True)
    seen, todo = set(), ["schedlab.pcs._engine", "schedlab.pcs._engine_rafs"]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph.get(m, ()))
    assert "schedlab.pcs._kernels_wfq" in seen and "schedlab.pcs.fairshare" in seen
    assert not seen & {"schedlab.pcs.policies", "schedlab.pcs.sim", "schedlab.pcs.configs"}


def test_importing_the_package_does_not_load_numba():
    code = "import sys; import schedlab.pcs; print('numba' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "False"


def test_event_counts_are_returned_per_run():
    w = Workload.from_arrays(submit_s=[0, 0, 1], service=[10.0, 20.0, 6.0], demand=[2, 1, 2])
    out, ev = simulate_counted(w, make_policy("FIFO"), 2, predict=True)
    # 3 arrivals + 3 completions; replays (each stops at its target's end): job 0 -> 1
    # event (its end), job 1 -> 2 (job 0, then job 1), job 2 -> 2 (job 0 at 5, then job 2 at 11)
    assert ev == EventCounts(main=6, replay=5) and ev.total == 11
    assert out.equals(simulate(w, make_policy("FIFO"), 2, predict=True))
    _, no_pred = simulate_counted(w, make_policy("FIFO"), 2)
    assert no_pred == EventCounts(main=6, replay=0)
    # each call returns its own counts (no state left behind by the previous run)
    _, again = simulate_counted(w, make_policy("FIFO"), 2, predict=True)
    assert again == ev


def test_event_counts_of_the_randomised_afs_loop():
    w = Workload.from_arrays(submit_s=[0, 0, 1], service=[8.0, 2.0, 3.0], demand=[2, 2, 1])
    out, ev = simulate_counted(w, RandomisedAFS(np.random.RandomState(0)), 2, predict=True)
    ref = simulate(w, RandomisedAFS(np.random.RandomState(0)), 2, predict=True, engine="reference")
    assert out.equals(ref)
    assert ev.main == 6 and ev.replay > 0


def test_event_counts_need_a_compiled_engine():
    class Custom(Policy):
        name = "MyRule"

        def allocate(self, w):
            return np.ones(len(w.active))

    w = Workload.from_arrays(submit_s=[0], service=[4.0], demand=[1])
    with pytest.raises(NoKernelError, match="MyRule"):
        simulate_counted(w, Custom(), 1)


def test_one_set_of_return_codes_for_both_loops():
    from schedlab.pcs import _engine_core as C
    from schedlab.pcs import _engine_rafs as R

    # the randomised-AFS loop returns the core loop's codes, not copies of its own
    assert (R.OK, R.NEVER_FINISHES, R.WORK_LEFT, R.PREDICTION_NEVER_ENDS) == (
        C.OK,
        C.NEVER_FINISHES,
        C.WORK_LEFT,
        C.PREDICTION_NEVER_ENDS,
    )
    codes = (C.NEVER_FINISHES, C.WORK_LEFT, C.PREDICTION_NEVER_ENDS)
    assert len(set(codes)) == 3 and C.OK not in codes and set(C.ERRORS) == set(codes)


def test_policy_codes_and_event_kinds_are_one_set():
    from schedlab.pcs import _engine_core as C
    from schedlab.pcs import world
    from schedlab.pcs.policies import KERNELS

    assert set(KERNELS) == set(C.CODES)  # policies cannot import the numba core: kept equal
    # the compiled loops use the reference engine's event kinds and job states
    assert (C.COMPLETION, C.TICK, C.ARRIVAL) == (world.COMPLETION, world.TICK, world.ARRIVAL)
    assert C.COMPLETION < C.TICK < C.ARRIVAL  # their order at equal times
    assert (C.SUBMITTED, C.END, C.INF) == (world.SUBMITTED, world.END, world.INF)


def test_engine_args_rejects_an_unknown_code():
    from types import SimpleNamespace

    from schedlab.pcs._engine import engine_args

    w = Workload.from_arrays(submit_s=[0], service=[4.0], demand=[1])
    with pytest.raises(ValueError, match="unknown policy code 'NOPE'"):
        engine_args(w, SimpleNamespace(code="NOPE"), 1, np.ones(1, np.uint8), None)


def test_engine_cache_is_flushed_when_the_engine_sources_change(tmp_path):
    # numba keys a cached function on its own file only; the engine's modules flush their
    # cache when any engine source changed (a stamp beside the cache), once
    import importlib.util

    from schedlab.pcs._engine_core import _sources_digest, refresh_stale_cache

    src = tmp_path / "fake_engine_module.py"
    src.write_text("from numba import njit\n\n\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    spec = importlib.util.spec_from_file_location("fake_engine_module", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.f(1) == 2  # compiled and saved in the cache
    index = mod.f._cache._cache_file
    assert index._load_index() != {}
    stamp = Path(mod.f._cache.cache_path) / "fake_engine_module.sources-sha256"
    assert not stamp.exists()
    refresh_stale_cache(vars(mod))  # no stamp: compiled from unknown sources, flushed
    assert index._load_index() == {}
    assert stamp.read_text() == _sources_digest()
    before = Path(index._index_path).stat().st_mtime_ns
    refresh_stale_cache(vars(mod))  # same sources: left alone
    assert Path(index._index_path).stat().st_mtime_ns == before
    stamp.write_text("sources of an older engine")
    mod.f._cache.save_overload(*next(iter(_saved(mod.f))))
    assert index._load_index() != {}
    refresh_stale_cache(vars(mod))  # another engine's sources: flushed again
    assert index._load_index() == {} and stamp.read_text() == _sources_digest()


def _saved(dispatcher):
    """``(signature, compile result)`` pairs of ``dispatcher``'s compiled overloads."""
    return ((sig, dispatcher.overloads[sig]) for sig in dispatcher.signatures)
