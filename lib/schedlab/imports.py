"""Which library files a pipeline stage runs: the transitive ``schedlab`` imports of its code.

A DVC stage must depend on every library module its notebook (or command) imports, directly
or through other library modules, including imports made inside functions: they run too.
:func:`stage_library_files` derives that set from the sources with :mod:`ast` (nothing is
imported or executed); ``tests/test_stage_deps.py`` fails when ``dvc.yaml`` misses one.

Examples
--------
>>> files = module_files("schedlab.notebooks")  # paths, progress, stagetimes; io lazily; cpu (schedlab's own)
>>> sorted(f.relative_to(paths.ROOT).as_posix() for f in files)  # doctest: +NORMALIZE_WHITESPACE
['lib/schedlab/__init__.py', 'lib/schedlab/cpu.py', 'lib/schedlab/io.py', 'lib/schedlab/notebooks/__init__.py',
 'lib/schedlab/notebooks/outputs.py', 'lib/schedlab/notebooks/pairing.py', 'lib/schedlab/notebooks/params.py',
 'lib/schedlab/notebooks/runner.py', 'lib/schedlab/notebooks/watchdog.py', 'lib/schedlab/paths.py',
 'lib/schedlab/progress.py', 'lib/schedlab/provenance.py', 'lib/schedlab/stagetimes.py']
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from schedlab import paths
from schedlab.notebooks.params import dvc_param_paths, value_param_paths
from schedlab.reference import setup_keys

LIB = paths.ROOT / "lib"
PACKAGE = "schedlab"


def _module_path(module: str) -> Path | None:
    """The source file of a ``schedlab`` module or package (None if there is none)."""
    base = LIB.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Absolute names of the ``schedlab`` modules (or module attributes) ``tree`` imports."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                parts = module.split(".")
                parent = parts if is_package else parts[:-1]
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join(parent + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names if a.name != "*")
    return {n for n in out if n == PACKAGE or n.startswith(PACKAGE + ".")}


def _existing_modules(name: str) -> list[str]:
    """``name`` and its parent packages that exist as files (``a.b.C`` -> ``a``, ``a.b``)."""
    parts = name.split(".")
    return [m for i in range(1, len(parts) + 1) if _module_path(m := ".".join(parts[:i])) is not None]


@lru_cache(maxsize=None)
def _direct(module: str) -> frozenset[str]:
    path = _module_path(module)
    if path is None:
        return frozenset()
    tree = ast.parse(path.read_text(), filename=str(path))
    names = _imported_names(tree, module, path.name == "__init__.py")
    return frozenset(m for n in names for m in _existing_modules(n))


def module_closure(roots: Iterable[str]) -> set[str]:
    """Every ``schedlab`` module reachable from ``roots`` through imports (parents included:
    importing ``a.b`` runs ``a/__init__.py``)."""
    seen: set[str] = set()
    todo = [m for r in roots for m in _existing_modules(r)]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(_direct(m) - seen)
    return seen


def module_files(*modules: str) -> set[Path]:
    """The source files of ``modules`` and everything they import from the library."""
    return {p for m in module_closure(modules) if (p := _module_path(m)) is not None}


def notebook_modules(path: Path) -> set[str]:
    """The ``schedlab`` modules the code cells of notebook ``path`` import."""
    nb = json.loads(Path(path).read_text())
    names: set[str] = set()
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = "".join(cell.get("source", []))
        # IPython magics and shell escapes are not Python: blank them out line by line
        src = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in src.splitlines())
        names |= _imported_names(ast.parse(src, filename=str(path)), "__notebook__", False)
    return names


#: library modules the other ``schedlab`` stage commands run (command prefix -> modules)
COMMAND_MODULES = {
    "schedlab compare": ("schedlab.reference",),
    "schedlab fetch": ("schedlab.data.fetch",),
    "schedlab scorecard": ("schedlab.scorecard",),
}


def stage_library_files(cmd: str) -> set[Path]:
    """Library files a stage command runs: for ``schedlab notebook run NAME``, the notebook's
    imports (and ``reference/<paper>.yaml`` when they reach :mod:`schedlab.reference`, whose
    paper values the notebook shows); for ``python -m schedlab.x``, that module; for
    ``schedlab compare PAPER`` and ``schedlab fetch``, :data:`COMMAND_MODULES` (and the paper's
    reference file). The CLI module that dispatches is not counted (its code shapes no output).
    Any other command is an error, so a new kind of stage cannot pass the check unexamined."""
    files: set[Path] = set()
    for part in cmd.split("&&"):
        words = part.split()
        if words[:3] == ["schedlab", "notebook", "run"]:
            files |= module_files(*notebook_modules(paths.NOTEBOOKS / f"{words[3]}.ipynb"))
            files |= module_files("schedlab.notebooks")
            if _module_path("schedlab.reference") in files:  # paper values read from reference/
                files.add(paths.REFERENCE / f"{words[3].split('/')[0]}.yaml")
        elif words[:2] == ["python", "-m"]:
            files |= module_files(words[2])
        elif words[:2] == ["schedlab", "compare"]:
            files |= module_files(*COMMAND_MODULES["schedlab compare"]) | {
                paths.REFERENCE / f"{words[2]}.yaml"
            }
        elif words[:2] == ["schedlab", "fetch"]:
            files |= module_files(*COMMAND_MODULES["schedlab fetch"])
        elif words[:2] == ["schedlab", "scorecard"]:  # reads every paper's reference file
            files |= module_files(*COMMAND_MODULES["schedlab scorecard"]) | set(
                paths.REFERENCE.glob("*.yaml")
            )
        else:
            raise ValueError(
                f"stage command {part.strip()!r}: schedlab.imports does not know what library "
                "code it runs; teach stage_library_files"
            )
    return files


def uncovered(needed: Iterable[Path], deps: Iterable[str]) -> list[str]:
    """The ``needed`` files (repository-relative) that no dependency path covers (a dependency
    covers itself and, when it is a folder, everything below it)."""
    dep_paths = [(paths.ROOT / d).resolve() for d in deps]
    missing = []
    for f in sorted(needed):
        f = f.resolve()
        if not any(f == d or d in f.parents for d in dep_paths):
            missing.append(f.relative_to(paths.ROOT).as_posix())
    return missing


# ---------------------------------------------------------------- a stage's params.yaml keys


def loaded_sections(name: str) -> list[str]:
    """Other notebooks whose values notebook ``name`` loads (``load_params("nona/fig3", ...)`` with a
    literal name in its source): their parameters are its parameters too."""
    tree = ast.parse((paths.NOTEBOOKS / f"{name}.py").read_text())
    found: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
            continue
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        other = node.args[0].value
        if (
            func in {"load_params", "stage_params"}
            and isinstance(other, str)
            and other != name
            and other not in found
        ):
            found.append(other)
    return found


def stage_param_list(cmd: str) -> list[str] | None:
    """The ``params:`` a ``dvc.yaml`` stage running ``cmd`` must list (None: neither a notebook nor a
    comparison stage): ``profile``, then :func:`dvc_param_paths` of its notebook and of the notebooks
    it loads values of; for ``schedlab compare PAPER``, the values its reference file's setups name."""
    words = cmd.split()
    if words[:2] == ["schedlab", "compare"] and len(words) == 3:  # the setups its verdicts check
        keys = setup_keys(words[2])
        found = [p for k in keys for p in value_param_paths("/".join(k.split(".")[:2]), k.split(".")[2])]
        return ["profile", *dict.fromkeys(found)] if keys else []
    if words[:3] != ["schedlab", "notebook", "run"]:
        return None
    name = words[-1]
    out = ["profile"]
    for other in [name, *loaded_sections(name)]:
        out += [p for p in dvc_param_paths(other) if p not in out]
    return out
