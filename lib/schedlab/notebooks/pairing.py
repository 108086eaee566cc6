"""The committed notebooks: which are stages, their jupytext pairing, the form Jupyter saves, the catalogue."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from schedlab import paths
from schedlab.notebooks.runner import notebook_path


def pair_path(name: str) -> Path:
    """``notebooks/NAME.ipynb`` for :func:`sync`: it may not exist yet when ``NAME.py`` does (a new
    notebook written as a percent script; sync creates the ``.ipynb``)."""
    path = paths.NOTEBOOKS / f"{name}.ipynb"
    if path.is_file() or path.with_suffix(".py").is_file():
        return path
    return notebook_path(name)  # raises, listing the known notebooks


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
