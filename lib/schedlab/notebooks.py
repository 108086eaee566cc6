"""Notebooks as pipeline stages: parameters from ``params.yaml``, execution by papermill.

Conventions (also in the README):

* A notebook's first code cell is tagged ``parameters``. It always has ``output_root``;
  left empty (an interactive run) the notebook writes under ``data/scratch/<notebook>/``,
  never where the pipeline writes. The pipeline passes ``output_root`` = the repo root.
* The stage's parameters live in ``params.yaml`` under the notebook's name with ``/``
  turned into ``.`` (``nona/table2`` -> ``nona.table2``); :func:`run` injects them.
* Executed copies land in ``data/executed/``: outputs, not sources. Committed notebooks
  carry no outputs (a test enforces it).

Examples
--------
>>> stage_key("nona/table2")
'nona.table2'
>>> out = Outputs("", "nona/table2")
>>> out.results("t.csv").relative_to(paths.ROOT).as_posix()
'data/scratch/nona/table2/results/nona/t.csv'
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from schedlab import paths, progress, stagetimes


def stage_key(name: str) -> str:
    return name.strip("/").replace("/", ".")


def notebook_path(name: str) -> Path:
    path = paths.NOTEBOOKS / f"{name}.ipynb"
    if not path.is_file():
        known = sorted(p.relative_to(paths.NOTEBOOKS).with_suffix("").as_posix() for p in paths.NOTEBOOKS.rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts)
        raise FileNotFoundError(f"no notebook {path}; known notebooks: {', '.join(known)}")
    return path


def pair_path(name: str) -> Path:
    """``notebooks/NAME.ipynb`` for :func:`sync`: it may not exist yet when ``NAME.py`` does (a new
    notebook written as a percent script; sync creates the ``.ipynb``)."""
    path = paths.NOTEBOOKS / f"{name}.ipynb"
    if path.is_file() or path.with_suffix(".py").is_file():
        return path
    return notebook_path(name)  # raises, listing the known notebooks


#: the named profiles ``params.yaml``'s top-level ``profile`` switch can select
PROFILES = ("default", "teaching", "paper")


class ParamsError(ValueError):
    """A malformed ``params.yaml``: names the file, the section and what was expected."""


def _read_params(params_file: Path | None) -> tuple[Path, dict]:
    path = params_file or paths.PARAMS
    doc = yaml.safe_load(path.read_text()) or {}
    if not isinstance(doc, dict):
        raise ParamsError(f"{path}: expected a mapping of papers to sections")
    return path, doc


def selected_profile(params_file: Path | None = None) -> str:
    """The top-level ``profile`` of ``params.yaml`` (``default`` if absent)."""
    path, doc = _read_params(params_file)
    return _check_profile(doc.get("profile", "default"), f"{path}: profile")


def _check_profile(profile: Any, where: str) -> str:
    if profile not in PROFILES:
        raise ParamsError(f"{where}: unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    return profile


def _merge(base: dict, over: dict) -> dict:
    """``base`` with ``over`` laid on top; mappings merge key by key (a profile may change one
    field of a nested mapping, e.g. ``train.iterations``)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_params(name: str, params_file: Path | None = None, profile: str | None = None) -> dict[str, Any]:
    """The parameters of notebook ``name`` under a profile (empty if it has no section).

    The section ``<paper>.<name>`` of ``params.yaml`` holds the ``default`` profile's values;
    its optional ``profiles`` mapping holds, per other profile, only the values that differ.
    ``profile`` (default: the file's top-level ``profile``) picks one; the result is flat,
    without ``profiles``, with ``profile`` set to the name used.

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "params.yaml"
    >>> _ = f.write_text(yaml.safe_dump({"profile": "default", "x": {"a": {"n": 1, "m": 2},
    ...                                  "profiles": {"paper": {"a": {"n": 9}}}}}))
    >>> load_params("x", f)
    {'a': {'m': 2, 'n': 1}, 'profile': 'default'}
    >>> load_params("x", f, profile="paper")
    {'a': {'m': 2, 'n': 9}, 'profile': 'paper'}
    """
    path, doc = _read_params(params_file)
    profile = _check_profile(profile or doc.get("profile", "default"), f"{path}: profile")
    node: Any = doc
    for part in stage_key(name).split("."):
        if not isinstance(node, dict) or part not in node:
            return {}
        node = node[part]
    where = f"{path}: section {stage_key(name)!r}"
    if not isinstance(node, dict):
        raise ParamsError(f"{where} must be a mapping")
    section = dict(node)
    overrides = section.pop("profiles", None) or {}
    if not isinstance(overrides, dict):
        raise ParamsError(f"{where}: 'profiles' must map profile names to the values that differ")
    for key, over in overrides.items():
        _check_profile(key, f"{where}: profiles")
        if not isinstance(over, dict):
            raise ParamsError(f"{where}: profiles.{key} must be a mapping of parameter names to values")
        unknown = sorted(set(over) - set(section))
        if unknown:
            raise ParamsError(f"{where}: profiles.{key} sets {', '.join(unknown)}, which the section "
                              "does not define (give its default profile value in the section)")
    if "profile" in section:
        raise ParamsError(f"{where}: 'profile' is chosen once, at the top of params.yaml")
    return {**_merge(section, overrides.get(profile, {})), "profile": profile}


def apply_profile(namespace: dict, name: str, profile: str) -> dict:
    """Lay profile ``profile``'s values of notebook ``name`` over ``namespace`` (a notebook's
    ``globals()``): how a JupyterLab user picks ``teaching`` or ``paper`` in the parameters
    cell. A no-op for the values the profile does not change; returns what it set."""
    changed = {k: v for k, v in load_params(name, profile=profile).items()
               if k != "profile" and namespace.get(k) != v}
    namespace.update(changed)
    namespace["profile"] = profile
    return changed


class Outputs:
    """Where a notebook writes: the pipeline's folders, or a scratch folder when interactive."""

    def __init__(self, output_root: str | Path | None, name: str):
        if output_root:
            self.root = Path(output_root)
        else:
            self.root = paths.SCRATCH / name
        self.paper = name.split("/")[0]

    def results(self, filename: str) -> Path:
        return self.root / "results" / self.paper / filename

    def figures(self, filename: str) -> Path:
        return self.root / "figures" / self.paper / filename

    def savefig(self, fig: Any, stem: str, *, dpi: int = 150, formats: tuple[str, ...] = ("png", "pdf"),
                timing: bool = False) -> list[Path]:
        """Write ``fig`` as ``figures/<paper>/<stem>.png`` (``dpi``, at least 150) and ``.pdf``,
        atomically and byte-reproducibly; ``timing=True`` puts it under ``results/<paper>/timings/``
        (a figure of wall-clock times, not a pipeline output). Returns the paths written."""
        from schedlab.io import savefig

        if dpi < 150:
            raise ValueError(f"figures are written at 150 dpi or more, got dpi={dpi} for {stem!r}")
        written = []
        for ext in formats:
            path = self.timings(f"{stem}.{ext}") if timing else self.figures(f"{stem}.{ext}")
            path.parent.mkdir(parents=True, exist_ok=True)
            savefig(fig, path, dpi=dpi)
            written.append(path)
        return written

    def timings(self, filename: str) -> Path:
        """Where wall-clock and CPU times go: ``results/<paper>/timings/``, which no stage
        declares as an output and none depends on, so the pipeline's outputs stay byte for byte
        the same from run to run while the times are still kept (and compared with the papers'
        in ``timings/comparison.md``)."""
        return self.root / "results" / self.paper / paths.TIMINGS / filename


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

    ``source`` runs another notebook file under ``name``'s parameters (tests). Interrupted
    (Ctrl-C, SIGTERM, SIGHUP, or its parent process gone: :func:`stop_with_parent`), the kernel
    is shut down and nothing is left half-written: outputs are written atomically and the
    partial executed copy is removed.
    """
    import papermill as pm  # heavy import, only when a notebook actually runs

    source = source or notebook_path(name)
    params = {**load_params(name, profile=profile), **(overrides or {})}
    params["output_root"] = str(output_root if output_root is not None else paths.ROOT)
    out = executed or paths.EXECUTED / f"{name}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.part.ipynb")
    root = Path(params["output_root"])
    load_start, cpu0, t0 = stagetimes.load_average(), _children_cpu_s(), time.perf_counter()
    try:
        with stop_with_parent(), _kernel_env({progress.ENV: "lines", progress.ENV_STAGE: name}):
            pm.execute_notebook(
                str(source), str(tmp), parameters=params, cwd=str(paths.ROOT), kernel_name="python3",
                # one line per finished cell at most every 15 s (and at the end) on stderr; bars
                # inside the notebook print lines too (schedlab.progress), so a long stage is never silent
                progress_bar={"desc": "cells", **progress.line_options(sys.stderr, prefix=name)},
                request_save_on_cell_execute=False, kernel_manager_class=_local_kernel_manager(),
            )
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    # only a finished run is recorded: its times are what `schedlab timings` adds up
    stagetimes.record(root, name, profile=params.get("profile", profile or "default"),
                      wall_s=time.perf_counter() - t0, cpu_s=_children_cpu_s() - cpu0,
                      load=(load_start, stagetimes.load_average()))
    return out


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


#: the kernel every committed notebook names: the environment's own ``python3``
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}

#: folders of ``notebooks/`` whose notebooks are pipeline stages (one per table or figure group)
STAGE_FOLDERS = ("nona", "pcs", "polaris")


def all_notebooks() -> list[Path]:
    """Every committed notebook: the stages under ``notebooks/<paper>/``, the interactive
    explorers under ``notebooks/explore/`` and ``notebooks/start_here.ipynb``."""
    return sorted(p for p in paths.NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def stage_notebooks() -> list[Path]:
    """The notebooks that are pipeline stages (``notebooks/<paper>/<name>.ipynb``): they have a
    ``parameters`` cell equal to their ``params.yaml`` section. The others (Start here, the
    explorers) are for reading and playing in JupyterLab and write nothing."""
    return [p for p in all_notebooks() if p.relative_to(paths.NOTEBOOKS).parts[0] in STAGE_FOLDERS]


def _clean(nb) -> bool:
    """Strip outputs and execution counts, give cells without one a stable id; True if changed."""
    import hashlib

    changed = False
    for i, cell in enumerate(nb.cells):
        if "id" not in cell:  # derived from position and source: the same on every machine
            digest = hashlib.sha1(f"{i}:{cell.source}".encode()).hexdigest()[:8]
            cell["id"], changed = digest, True
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count") is not None):
            cell["outputs"], cell["execution_count"], changed = [], None, True
    return changed


def sync(paths_: list[Path] | None = None) -> list[Path]:
    """Pair every notebook with its percent script and write both in Jupyter's saved form.

    The newer side of each pair wins (jupytext's ``--sync`` rule: an edit made in an editor to
    ``NAME.py`` reaches ``NAME.ipynb`` and vice versa); then the notebook is upgraded to nbformat
    4.5 with stable cell ids, stripped of outputs and written as Jupyter saves it, and the script
    rewritten from it. Returns the files that changed.
    """
    import nbformat
    import jupytext
    from jupytext.cli import jupytext as jupytext_cli
    from jupytext.config import load_jupytext_configuration_file

    from schedlab.io import atomic_write_text

    config = load_jupytext_configuration_file(str(paths.NOTEBOOKS / "jupytext.toml"))
    changed = []
    for nb_path in paths_ or all_notebooks():
        script = nb_path.with_suffix(".py")
        before = {p: p.read_text() if p.is_file() else None for p in (nb_path, script)}
        if not nb_path.is_file():  # a new notebook, written as its percent script
            jupytext_cli(["--to", "ipynb", "--quiet", str(script)])
        elif script.is_file():
            jupytext_cli(["--sync", "--quiet", str(nb_path)])
        nb = nbformat.reads(nb_path.read_text(), as_version=4)
        if (nb.nbformat, nb.nbformat_minor) < (4, 5):
            nb.nbformat_minor = 5
        _clean(nb)
        # jupytext's contents manager records the pairing filters when JupyterLab saves; written
        # here too, a notebook saved unchanged in Lab stays byte for byte the same
        nb.metadata["jupytext"] = {"cell_metadata_filter": config.cell_metadata_filter,
                                   "notebook_metadata_filter": config.notebook_metadata_filter}
        # the percent script keeps no notebook metadata; without a kernelspec JupyterLab asks
        # "Select kernel" on opening (papermill runs every notebook on this one too)
        nb.metadata.setdefault("kernelspec", dict(KERNELSPEC))
        nbformat.validate(nb)
        text_nb = nbformat.writes(nb) + "\n"
        text_py = jupytext.writes(nb, fmt="py:percent", config=config)
        for path, new in ((nb_path, text_nb), (script, text_py)):
            if path.read_text() != new if path.is_file() else True:
                atomic_write_text(path, new)
            if before[path] != new:
                changed.append(path)
    return changed


def code_cells_with_outputs(path: Path) -> list[int]:
    """Indices of code cells that carry outputs or execution counts."""
    nb = json.loads(Path(path).read_text())
    return [
        i for i, c in enumerate(nb.get("cells", []))
        if c.get("cell_type") == "code" and (c.get("outputs") or c.get("execution_count") is not None)
    ]


def catalogue(dvc_file: Path | None = None) -> list[dict[str, str]]:
    """One row per notebook stage of ``dvc.yaml``: ``stage``, ``paper``, ``notebook`` (path
    relative to ``notebooks/``) and ``title`` (the notebook's first Markdown heading), in the
    pipeline's order. The Start-here notebook shows it as a table of links.

    >>> rows = catalogue()
    >>> rows[0]["notebook"], rows[0]["stage"]
    ('nona/table2.ipynb', 'nona_table2')
    """
    import nbformat

    dvc_file = dvc_file or paths.ROOT / "dvc.yaml"
    stages = yaml.safe_load(dvc_file.read_text())["stages"]
    rows = []
    for stage, spec in stages.items():
        words = str(spec.get("cmd", "")).split()
        if words[:3] != ["schedlab", "notebook", "run"]:
            continue
        name = words[-1]
        nb = nbformat.read(notebook_path(name), as_version=4)
        heading = next((line.lstrip("# ").strip() for c in nb.cells if c.cell_type == "markdown"
                        for line in c.source.splitlines() if line.startswith("#")), name)
        rows.append({"stage": stage, "paper": name.split("/")[0], "notebook": f"{name}.ipynb", "title": heading})
    return rows
