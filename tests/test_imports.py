"""No import circles anywhere in ``lib/schedlab``, imports inside functions included.

Every ``import`` / ``from ... import`` node of every module's syntax tree counts, wherever it sits
(module level, inside a function or a class), with relative imports resolved against the
module's package. A function-level import still runs, so a circle through one is a circle: it only
moves the failure from import time to call time. Two kinds of node are left out, each because it
never makes one module run the other:

* imports under ``if TYPE_CHECKING:`` (they never run);
* the parent packages of an imported module: ``import a.b.c`` runs ``a/__init__.py`` first, but a
  package importing its own submodules (a front door such as ``schedlab.pcs``) is the normal
  pattern, and counting the parent would report every such package as a circle. An import of a
  *name* from a package (``from schedlab.pcs import simulate``) is an edge to the package itself.

Dynamic imports (``importlib.import_module(name)``) cannot be resolved from the source and are not
seen.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab import paths

LIB = paths.ROOT / "lib"


def _module_name(path: Path, root: Path) -> str:
    """``root/a/b/c.py`` -> ``a.b.c``; ``root/a/b/__init__.py`` -> ``a.b``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST):
    """Every import node of ``tree``, at any depth, except those under ``if TYPE_CHECKING:``."""
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                todo.extend(child.orelse)  # only the else branch runs
            else:
                todo.append(child)


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from`` import reads from (relative levels resolved).

    >>> _resolve(ast.parse("from ..b import c").body[0], "pkg.sub.mod", False)
    'pkg.b'
    >>> _resolve(ast.parse("from . import c").body[0], "pkg.sub", True)
    'pkg.sub'
    """
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if node.level - 1 > len(package) - 1:
        raise ValueError(f"{module}: relative import beyond the top-level package (level {node.level})")
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``node`` makes ``module`` run (see the module docstring)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in known}
    base = _resolve(node, module, is_package)
    out = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in known:  # ``from a.b import c`` with ``a.b.c`` a module
            out.add(sub)
        elif base in known:  # a name defined in ``a.b`` (or ``*``)
            out.add(base)
    return out


def module_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules it imports, for every ``*.py`` under ``root`` (a folder holding
    top-level packages, such as ``lib``); self-imports are dropped."""
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    known = set(files)
    graph = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        edges = set()
        for node in _import_nodes(tree):
            edges |= _targets(node, module, is_package, known)
        graph[module] = edges - {module}
    return graph


def _strong_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                out.append(sorted(comp))
    return out


def _cycle_in(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One circle through the component's first module, as a path ``[a, b, ..., a]`` (breadth
    first: the shortest one)."""
    members, first = set(component), component[0]
    prev = {first: None}
    queue = [first]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & members):
            if child == first:
                path = [node]  # node, its predecessor, ..., first
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return [*reversed(path), first]
            if child not in prev:
                prev[child] = node
                queue.append(child)
    raise AssertionError(f"no circle through {first} in component {component}")


def import_cycles(root: Path) -> list[list[str]]:
    """One circle per group of modules that import each other (directly or through others), each
    as a path ``[a, b, ..., a]``; empty when the import graph under ``root`` has none."""
    graph = module_graph(root)
    return [_cycle_in(c, graph) for c in _strong_components(graph) if len(c) > 1]


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return root


def test_checker_finds_a_circle_through_a_function_level_import(tmp_path):
    root = _write(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg import c",  # a package importing its submodule: no circle
            "pkg/a.py": "from . import b",
            # b imports a only inside a function: still a circle
            "pkg/b.py": "def f():\n    from pkg.a import X\n    return X",
            "pkg/c.py": "import pkg.b",
            "pkg/sub/__init__.py": "",
            "pkg/sub/d.py": "from ..c import thing",
            "pkg/sub/e.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import f",
            "pkg/sub/f.py": "from pkg.sub.e import Y",
        },
    )
    graph = module_graph(root)
    assert graph["pkg.sub.d"] == {"pkg.c"}  # relative import two levels up resolved
    assert graph["pkg.b"] == {"pkg.a"} and graph["pkg"] == {"pkg.c"}
    assert graph["pkg.sub.e"] == set()  # annotations-only import: never runs
    assert import_cycles(root) == [["pkg.a", "pkg.b", "pkg.a"]]


def test_checker_names_every_circle_and_its_path(tmp_path):
    root = _write(
        tmp_path,
        {
            "q/__init__.py": "from q.x import run",  # a name from the package: an edge to it
            "q/x.py": "import q.y",
            "q/y.py": "def g():\n    from q import run",
            "r/__init__.py": "",
            "r/s.py": "from r import t",
            "r/t.py": "from . import u",
            "r/u.py": "import r.s",
        },
    )
    assert sorted(import_cycles(root)) == [["q", "q.x", "q.y", "q"], ["r.s", "r.t", "r.u", "r.s"]]


def test_no_import_circle_in_schedlab():
    cycles = import_cycles(LIB)
    assert not cycles, "import circles in lib/schedlab (function-level imports included):\n" + "\n".join(
        " -> ".join(c) for c in cycles
    )


# --- schedlab.nona's front door -------------------------------------------------------------------


def test_every_public_nona_name_resolves():
    nona = importlib.import_module("schedlab.nona")
    assert len(nona.__all__) == len(set(nona.__all__)) and nona.__all__ == sorted(nona.__all__)
    for name in nona.__all__:
        assert getattr(nona, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        nona.no_such_name  # noqa: B018


def test_importing_schedlab_loads_no_paper_package():
    code = (
        "import sys, schedlab; bad = [m for m in sys.modules if m.startswith(('schedlab.nona', "
        "'schedlab.pcs', 'schedlab.polaris', 'numpy', 'pandas'))]; print(bad); sys.exit(bool(bad))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
