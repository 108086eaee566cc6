"""Start here reads before anything runs: its catalogue is generated Markdown kept equal to the
stages, and its links resolve inside the repository (JupyterLab's root)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from schedlab import paths
from schedlab.notebooks import pairing

SCRIPT = pairing.start_here_path().with_suffix(".py")


def _markdown_cells() -> list[str]:
    nb = json.loads(pairing.start_here_path().read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


def _pipeline_outputs() -> set[str]:
    outs = set()
    for stage in yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())["stages"].values():
        for out in stage.get("outs", []) + stage.get("metrics", []) + stage.get("plots", []):
            outs.add(out if isinstance(out, str) else next(iter(out)))
    return outs


def test_the_committed_catalogue_is_the_generated_one():
    """A stage added, renamed or retitled without `schedlab notebook sync` fails here."""
    assert pairing.catalogue_block(SCRIPT.read_text()) == pairing.catalogue_markdown()
    cell = next(c for c in _markdown_cells() if pairing.CATALOGUE_START in c)  # the notebook side too
    assert pairing.catalogue_markdown() in cell


def test_the_catalogue_lists_every_stage_notebook_once():
    text = pairing.catalogue_markdown()
    stages = [p.relative_to(paths.NOTEBOOKS).as_posix() for p in pairing.stage_notebooks()]
    for rel in stages:
        assert text.count(f"]({rel})") == 1, rel
    assert len(re.findall(r"\]\(([^)]+\.ipynb)\)", text)) == len(stages)


def test_links_resolve_inside_the_repository():
    """Every relative link of Start here points, from notebooks/, at a file of the repository or an
    output the pipeline writes; none leaves the repository (JupyterLab cannot open it)."""
    outs, root = _pipeline_outputs(), paths.ROOT.resolve()
    links = [
        t
        for cell in _markdown_cells()
        for t in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", cell)
        if not t.startswith(("http://", "https://"))
    ]
    assert len(links) > 25  # the catalogue's and the page's own
    for target in links:
        path = (paths.NOTEBOOKS / target).resolve()
        assert path.is_relative_to(root), f"start_here links outside the repository: {target}"
        rel = path.relative_to(root).as_posix()
        assert path.exists() or rel in outs, f"start_here links to {target}, which nothing provides"
    assert not any("shared/papers" in t for t in links)


def test_update_catalogue_rewrites_only_the_block(tmp_path):
    script = tmp_path / "page.py"
    script.write_text(
        "# %% [markdown]\n# intro\n# <!-- catalogue:start -->\n# stale\n# <!-- catalogue:end -->\n# outro\n"
    )
    rows = [{"stage": "pcs_fig1", "paper": "pcs", "notebook": "pcs/fig1.ipynb", "title": "PCS Fig. 1"}]
    assert pairing.update_catalogue(script, rows) is True
    text = script.read_text()
    assert text.startswith("# %% [markdown]\n# intro\n# <!-- catalogue:start -->\n# <!-- generated")
    assert text.endswith(
        "# | [pcs/fig1.ipynb](pcs/fig1.ipynb) | PCS Fig. 1 | `dvc repro pcs_fig1` |\n"
        "# <!-- catalogue:end -->\n# outro\n"
    )
    assert pairing.catalogue_block(text) == pairing.catalogue_markdown(rows)
    assert pairing.update_catalogue(script, rows) is False  # nothing to change the second time


def test_a_page_without_markers_is_refused(tmp_path):
    script = tmp_path / "page.py"
    script.write_text("# %% [markdown]\n# no markers\n")
    with pytest.raises(ValueError, match=r"page.py: expected one line '# <!-- catalogue:start -->'"):
        pairing.update_catalogue(script)
    with pytest.raises(ValueError, match="no label in PAPER_LABELS"):
        pairing.catalogue_markdown([{"stage": "x_y", "paper": "x", "notebook": "x/y.ipynb", "title": "t"}])


def test_the_page_is_committed_without_outputs():
    assert pairing.code_cells_with_outputs(pairing.start_here_path()) == []
    assert Path(SCRIPT).is_file()
