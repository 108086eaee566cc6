"""Notebook conventions, and a smoke run of the Table II notebook through papermill."""

from __future__ import annotations

import ast
import json

import nbformat
import pandas as pd
import pytest
import yaml

from schedlab import notebooks, paths

ALL_NOTEBOOKS = notebooks.all_notebooks()
STAGE_NOTEBOOKS = notebooks.stage_notebooks()
NB_IDS = {"ids": lambda p: p.relative_to(paths.NOTEBOOKS).with_suffix("").as_posix()}


def _name(path):
    return path.relative_to(paths.NOTEBOOKS).with_suffix("").as_posix()


def test_there_are_notebooks():
    assert len(ALL_NOTEBOOKS) >= 20


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, **NB_IDS)
def test_notebook_names_its_kernel(path):
    """JupyterLab opens a notebook straight into a kernel only when it names one; without a
    kernelspec it asks "Select kernel" first (Start here is the page `make lab` opens)."""
    spec = json.loads(path.read_text())["metadata"].get("kernelspec")
    assert spec == notebooks.KERNELSPEC, f"{path}: kernelspec {spec!r}, expected {notebooks.KERNELSPEC}"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, **NB_IDS)
def test_notebook_is_in_the_form_jupyter_saves(path):
    """Opening and saving in JupyterLab changes nothing: nbformat 4.5, stable cell ids, and the
    bytes Jupyter's own writer produces (so a notebook opened in Lab is not marked modified)."""
    text = path.read_text()
    nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) >= (4, 5), f"{path}: upgrade to nbformat 4.5 (cell ids)"
    ids = [c.id for c in nb.cells]
    assert len(set(ids)) == len(ids), f"{path}: duplicate cell ids"
    assert text == nbformat.writes(nb) + "\n", f"{path}: not in Jupyter's saved form; run `make notebooks-sync`"


def test_saving_in_jupyterlab_changes_nothing(tmp_path):
    """Load and save every notebook through jupytext's contents manager on Jupyter's own file
    manager, as JupyterLab's server does when a user opens a notebook and saves it unchanged:
    both files of every pair must come back byte for byte."""
    import asyncio
    import shutil

    pytest.importorskip("jupyter_server")
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class

    root = tmp_path / "notebooks"
    shutil.copytree(paths.NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    manager = build_async_jupytext_contents_manager_class(AsyncLargeFileManager)(root_dir=str(root))

    async def open_and_save(rel: str) -> None:
        model = await manager.get(rel, content=True)
        await manager.save({"type": "notebook", "format": "json", "content": model["content"]}, rel)

    for path in ALL_NOTEBOOKS:
        rel = path.relative_to(paths.NOTEBOOKS).as_posix()
        asyncio.run(open_and_save(rel))
        for suffix in (".ipynb", ".py"):
            saved = (root / rel).with_suffix(suffix).read_text()
            assert saved == path.with_suffix(suffix).read_text(), f"saving {rel} in JupyterLab rewrites its {suffix}"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, **NB_IDS)
def test_paired_script_matches_the_notebook(path):
    """NAME.py is NAME.ipynb as a jupytext percent script: an edit to one side alone fails here."""
    jupytext = pytest.importorskip("jupytext")
    from jupytext.config import load_jupytext_configuration_file

    script = path.with_suffix(".py")
    assert script.is_file(), f"{path}: its paired script {script.name} is missing; run `make notebooks-sync`"
    config = load_jupytext_configuration_file(str(paths.NOTEBOOKS / "jupytext.toml"))
    nb = nbformat.read(path, as_version=4)
    expected = jupytext.writes(nb, fmt="py:percent", config=config)
    assert script.read_text() == expected, (
        f"{path.relative_to(paths.ROOT)} and {script.name} differ: one was edited without the other "
        "(open it in JupyterLab with jupytext, or run `make notebooks-sync`)")


def test_no_notebook_generators():
    """The notebooks are the source: every script in notebooks/ is a notebook's pair."""
    scripts = sorted(p for p in paths.NOTEBOOKS.rglob("*.py") if ".ipynb_checkpoints" not in p.parts)
    orphans = [p.relative_to(paths.ROOT).as_posix() for p in scripts if not p.with_suffix(".ipynb").is_file()]
    assert not orphans, f"scripts in notebooks/ that are not a notebook's pair: {orphans}"


def _parameters_cell(path):
    nb = json.loads(path.read_text())
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path}: needs exactly one cell tagged 'parameters'"
    return "".join(tagged[0]["source"])


def _literal_assignments(source):
    values = {}
    for node in ast.parse(source).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, f"not a plain assignment: {ast.unparse(node)}"
        values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


@pytest.mark.parametrize("path", STAGE_NOTEBOOKS, **NB_IDS)
def test_notebook_defaults_equal_the_pipeline(path):
    """Run All in JupyterLab computes what the DVC stage computes: the parameters cell holds
    exactly the default profile of the notebook's params.yaml section (no paper numbers)."""
    name = _name(path)
    cell = _literal_assignments(_parameters_cell(path))
    expected = {**notebooks.load_params(name, profile="default"), "output_root": "", "profile": "default"}
    assert cell == expected, (
        f"{path.relative_to(paths.ROOT)}: parameters differ from params.yaml section {notebooks.stage_key(name)}: "
        + "; ".join(f"{k}: notebook {cell.get(k, '<absent>')!r} vs params {expected.get(k, '<absent>')!r}"
                    for k in sorted(set(cell) | set(expected)) if cell.get(k) != expected.get(k)))


@pytest.mark.parametrize("path", STAGE_NOTEBOOKS, **NB_IDS)
def test_every_profile_resolves(path):
    for profile in notebooks.PROFILES:
        params = notebooks.load_params(_name(path), profile=profile)
        assert params["profile"] == profile


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, **NB_IDS)
def test_committed_notebooks_have_no_outputs(path):
    assert notebooks.code_cells_with_outputs(path) == [], f"{path}: clear outputs before committing"


@pytest.mark.parametrize("path", STAGE_NOTEBOOKS, **NB_IDS)
def test_parameters_cell_with_output_root(path):
    assert 'output_root = ""' in _parameters_cell(path)


def test_every_stage_notebook_exists_and_has_params():
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())
    for name, stage in dvc["stages"].items():
        cmd = stage["cmd"]
        if cmd.startswith("schedlab notebook run "):
            nb = cmd.split()[-1]
            assert notebooks.notebook_path(nb).is_file()
            assert f"notebooks/{nb}.ipynb" in stage["deps"], name
            keys = [p if isinstance(p, str) else next(iter(p)) for p in stage.get("params", [])]
            # the stage reruns when the profile switch or its own section changes; a stage that
            # reads another section (the calibration reads the figures' workload) lists it after
            assert keys[:2] == ["profile", notebooks.stage_key(nb)], f"{name}: params {keys}"
            params = yaml.safe_load((paths.ROOT / "params.yaml").read_text())
            for extra in keys[2:]:
                paper, section = extra.split(".")
                assert section in params.get(paper, {}), f"{name}: params.yaml lacks {extra}"
            assert notebooks.load_params(nb), f"{name}: params.yaml lacks {notebooks.stage_key(nb)}"


def test_table2_notebook_smoke(tmp_path):
    executed = notebooks.run("nona/table2", output_root=tmp_path, executed=tmp_path / "table2.ipynb")
    assert executed.is_file()
    table = pd.read_csv(tmp_path / "results/nona/table2.csv").set_index("model")
    assert table.loc["resnet18", "post_tasks"] == 10
    assert table.loc["gpt2", "status"] in ("missing input", "ok")
    for ext in ("png", "pdf"):
        assert (tmp_path / f"figures/nona/resnet18_contracted.{ext}").stat().st_size > 1000
    # its times are recorded apart from the outputs, and `schedlab timings` reads them
    from click.testing import CliRunner

    from schedlab import stagetimes
    from schedlab.cli import main

    times = stagetimes.table(tmp_path)
    assert times.stage.tolist() == ["nona/table2"] and times.profile.tolist() == ["default"]
    assert times.wall_s.iloc[0] > 0 and times.cpu_s.iloc[0] > 0
    shown = CliRunner().invoke(main, ["timings", "--root", str(tmp_path)])
    assert shown.exit_code == 0 and "nona/table2" in shown.output and "totals" in shown.output


def test_interactive_outputs_go_to_scratch():
    out = notebooks.Outputs("", "nona/table2")
    assert paths.SCRATCH in out.results("x.csv").parents


def test_sync_carries_an_edit_from_either_side(tmp_path):
    """`make notebooks-sync`: the side edited last wins, and both come out in canonical form."""
    import os
    import shutil
    import time

    shutil.copy(paths.NOTEBOOKS / "jupytext.toml", tmp_path)
    nb_path = tmp_path / "table2.ipynb"
    shutil.copy(paths.NOTEBOOKS / "nona/table2.ipynb", nb_path)
    shutil.copy(paths.NOTEBOOKS / "nona/table2.py", tmp_path / "table2.py")
    assert notebooks.sync([nb_path]) == []
    script = tmp_path / "table2.py"
    script.write_text(script.read_text().replace('figure_model = "resnet18"', 'figure_model = "vgg16"'))
    later = time.time() + 5
    os.utime(script, (later, later))
    assert notebooks.sync([nb_path]) == [nb_path]
    assert 'figure_model = \\"vgg16\\"' in nb_path.read_text()
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells[0].source += "\nOne more line."
    nbformat.write(nb, nb_path)
    later += 5
    os.utime(nb_path, (later, later))
    assert notebooks.sync([nb_path]) == [script]
    assert "# One more line." in script.read_text()


@pytest.mark.parametrize("path", STAGE_NOTEBOOKS, **NB_IDS)
def test_papermill_parses_every_parameter(path, caplog):
    """papermill reads each `name = value  # comment` line of the parameters cell; a line it cannot
    parse (an "=" inside the comment, say) is dropped with a warning and the parameter is "unknown"."""
    import logging

    import papermill

    with caplog.at_level(logging.WARNING, logger="papermill"):
        params = papermill.inspect_notebook(str(path))
    bad = [r.getMessage() for r in caplog.records if "Unable to parse" in r.getMessage()]
    assert not bad, bad
    assert "output_root" in params
