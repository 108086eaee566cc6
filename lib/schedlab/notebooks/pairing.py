"""The committed notebooks: which are stages, their jupytext pairing, the form Jupyter saves, the catalogue."""

from __future__ import annotations

import json
from pathlib import Path

from schedlab import paths
from schedlab.notebooks.outputs import notebook_stages
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
    rewritten from it. Start here's catalogue (:func:`catalogue_markdown`) is regenerated when
    any notebook of ``notebooks/`` is among them. Returns the files that changed.
    """
    targets = [Path(p) for p in (paths_ or all_notebooks())]
    start = start_here_path()
    # any notebook of this checkout: a new, renamed or retitled stage changes Start here's catalogue
    ours = start.is_file() and any(t.resolve().is_relative_to(paths.NOTEBOOKS.resolve()) for t in targets)
    if ours and not any(t.resolve() == start.resolve() for t in targets):
        targets.append(start)  # paired first, so that an edit made to either side is kept
    pair = (start, start.with_suffix(".py"))
    before = {p: p.read_text() for p in pair if p.is_file()}
    changed = _sync_pairs(targets)
    if ours and update_catalogue(pair[1]):
        # both sides are equal after the first pass: the script, now newer, carries the new block over
        _sync_pairs([start], from_script=True)
    # a side rewritten on the way but back to its bytes (a stale block edited in) did not change
    changed = [p for p in changed if p not in pair]
    return changed + [p for p in pair if p.is_file() and before.get(p) != p.read_text()]


def _sync_pairs(targets: list[Path], from_script: bool = False) -> list[Path]:
    """:func:`sync` without the catalogue: pair each of ``targets`` (the script's side wins with
    ``from_script``, whatever the files' times); return the files that changed."""
    import nbformat
    import jupytext
    from jupytext.cli import jupytext as jupytext_cli
    from jupytext.config import load_jupytext_configuration_file

    from schedlab.io import atomic_write_text

    config = load_jupytext_configuration_file(str(paths.NOTEBOOKS / "jupytext.toml"))
    changed = []
    for nb_path in targets:
        script = nb_path.with_suffix(".py")
        before = {p: p.read_text() if p.is_file() else None for p in (nb_path, script)}
        if not nb_path.is_file():  # a new notebook, written as its percent script
            jupytext_cli(["--to", "ipynb", "--quiet", str(script)])
        elif script.is_file() and from_script:
            jupytext_cli(["--to", "ipynb", "--update", "--quiet", str(script)])
        elif script.is_file():
            jupytext_cli(["--sync", "--quiet", str(nb_path)])
        nb = nbformat.reads(nb_path.read_text(), as_version=4)
        if (nb.nbformat, nb.nbformat_minor) < (4, 5):
            nb.nbformat_minor = 5
        _clean(nb)
        # jupytext's contents manager records the pairing filters when JupyterLab saves; written
        # here too, a notebook saved unchanged in Lab stays byte for byte the same
        nb.metadata["jupytext"] = {
            "cell_metadata_filter": config.cell_metadata_filter,
            "notebook_metadata_filter": config.notebook_metadata_filter,
        }
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
        i
        for i, c in enumerate(nb.get("cells", []))
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

    rows = []
    for name, (stage, _) in notebook_stages(dvc_file).items():
        nb = nbformat.read(notebook_path(name), as_version=4)
        heading = next(
            (
                line.lstrip("# ").strip()
                for c in nb.cells
                if c.cell_type == "markdown"
                for line in c.source.splitlines()
                if line.startswith("#")
            ),
            name,
        )
        rows.append(
            {"stage": stage, "paper": name.split("/")[0], "notebook": f"{name}.ipynb", "title": heading}
        )
    return rows


# ---------------------------------------------------------------- Start here's catalogue

#: the paper folders' names as Start here shows them, in its order
PAPER_LABELS = {"nona": "Nona", "pcs": "PCS", "polaris": "PolarisProfiler"}
CATALOGUE_START, CATALOGUE_END = "<!-- catalogue:start -->", "<!-- catalogue:end -->"


def start_here_path() -> Path:
    """``notebooks/start_here.ipynb``, the page ``make lab`` opens."""
    return paths.NOTEBOOKS / "start_here.ipynb"


def catalogue_markdown(rows: list[dict[str, str]] | None = None) -> str:
    """Start here's catalogue as Markdown: per paper, a table of its stage notebooks (links
    relative to ``notebooks/``, where Start here sits), what each reproduces and its DVC stage.

    Generated rather than computed in a code cell, so the page reads the same before anything
    has run; :func:`sync` writes it between the catalogue markers of ``start_here.py``.

    >>> print(catalogue_markdown([{"stage": "nona_table2", "paper": "nona",
    ...                            "notebook": "nona/table2.ipynb", "title": "Table II | contraction"}]))
    ... # doctest: +NORMALIZE_WHITESPACE
    <!-- generated by `schedlab notebook sync` from dvc.yaml and each notebook's first heading: edits here are overwritten -->
    <BLANKLINE>
    ### Nona
    <BLANKLINE>
    | notebook | reproduces | DVC stage |
    |---|---|---|
    | [nona/table2.ipynb](nona/table2.ipynb) | Table II \\| contraction | `dvc repro nona_table2` |
    """
    rows = catalogue() if rows is None else rows
    unknown = sorted({r["paper"] for r in rows} - set(PAPER_LABELS))
    if unknown:
        raise ValueError(
            f"catalogue: paper folder(s) {', '.join(unknown)} have no label in PAPER_LABELS "
            f"(expected one of {', '.join(PAPER_LABELS)})"
        )
    lines = [
        "<!-- generated by `schedlab notebook sync` from dvc.yaml and each notebook's first heading: "
        "edits here are overwritten -->"
    ]
    for paper, label in PAPER_LABELS.items():
        mine = [r for r in rows if r["paper"] == paper]
        if not mine:
            continue
        lines += ["", f"### {label}", "", "| notebook | reproduces | DVC stage |", "|---|---|---|"]
        for r in mine:
            title = r["title"].replace("|", r"\|")  # a bare "|" would end its table cell
            lines.append(f"| [{r['notebook']}]({r['notebook']}) | {title} | `dvc repro {r['stage']}` |")
    return "\n".join(lines)


def catalogue_block(script_text: str) -> str:
    """The Markdown between the catalogue markers of a percent script (its ``# `` prefixes removed)."""
    _, body, _ = _split_at_markers(script_text)
    return "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())


def update_catalogue(script: Path | None = None, rows: list[dict[str, str]] | None = None) -> bool:
    """Write :func:`catalogue_markdown` between the markers of ``script`` (default
    ``notebooks/start_here.py``, a percent script whose Markdown lines start with ``# ``);
    ``True`` if the file changed."""
    from schedlab.io import atomic_write_text

    script = Path(script or start_here_path().with_suffix(".py"))
    text = script.read_text(encoding="utf-8")
    head, _, tail = _split_at_markers(text, str(script))
    body = "\n".join(f"# {line}".rstrip() for line in catalogue_markdown(rows).splitlines())
    new = f"{head}# {CATALOGUE_START}\n{body}\n# {CATALOGUE_END}{tail}"
    if new != text:
        atomic_write_text(script, new)
    return new != text


def _split_at_markers(text: str, name: str = "start_here.py") -> tuple[str, str, str]:
    """``(before the start marker's line, between the markers, from the end marker on)``."""
    start, end = f"# {CATALOGUE_START}\n", f"# {CATALOGUE_END}"
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ValueError(f"{name}: expected one line '{start.strip()}' and, after it, one line '{end}'")
    head, rest = text.split(start)
    body, tail = rest.split(end)
    return head, body, tail
