"""Notebook conventions, and a smoke run of the Table II notebook through papermill."""

from __future__ import annotations

import ast
import json

import nbformat
import pandas as pd
import pytest
import yaml

from schedlab import imports, notebooks, paths

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
    assert text == nbformat.writes(nb) + "\n", (
        f"{path}: not in Jupyter's saved form; run `make notebooks-sync`"
    )


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
            assert saved == path.with_suffix(suffix).read_text(), (
                f"saving {rel} in JupyterLab rewrites its {suffix}"
            )


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
        "(open it in JupyterLab with jupytext, or run `make notebooks-sync`)"
    )


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
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, (
            f"not a plain assignment: {ast.unparse(node)}"
        )
        values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


@pytest.mark.parametrize("path", STAGE_NOTEBOOKS, **NB_IDS)
def test_parameters_cell_holds_only_what_papermill_injects(path):
    """params.yaml is the only source of a stage's values: the parameters cell holds only what the
    pipeline injects, and the next cell loads (and shows) the notebook's own section."""
    name = _name(path)
    cell = _literal_assignments(_parameters_cell(path))
    assert cell == {"output_root": "", "profile": "default", "overrides": {}}, (
        f"{path}: parameters cell {cell}"
    )
    nb = json.loads(path.read_text())
    tagged = next(
        i for i, c in enumerate(nb["cells"]) if "parameters" in c.get("metadata", {}).get("tags", [])
    )
    loader = "".join(nb["cells"][tagged + 1]["source"])
    assert f'stage_params("{name}", profile, overrides)' in loader, (
        f"{path}: the cell after the parameters loads another section"
    )
    assert "globals().update(params.values)" in loader and loader.rstrip().endswith("params")


def test_the_loader_cell_gives_the_pipeline_values():
    """What the loader cell puts in a notebook's namespace is the params.yaml section with its
    shared values merged, under each profile (the values the pipeline's stage computes with)."""
    for profile in notebooks.PROFILES:
        ns = {}
        ns.update(notebooks.stage_params("nona/fig5", profile, {}).values)
        expected = notebooks.load_params("nona/fig5", profile=profile)
        assert ns == expected and ns["servers"] == 80 and "shared" not in ns and "profiles" not in ns
    assert (
        notebooks.stage_params("nona/fig5", "teaching", {}).values["duration"] == 30.0
    )  # nona.common's teaching
    assert (
        notebooks.stage_params("nona/fig5", "paper", {}).values["nona_tables"] is None
    )  # the section's own paper


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
    """Each notebook stage lists exactly the params.yaml keys its values come from (its section, the
    shared values it takes, those of a notebook it loads): `python tools/stage_deps.py --write`."""
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())
    for name, stage in dvc["stages"].items():
        cmd = stage["cmd"]
        if cmd.startswith("schedlab notebook run "):
            nb = cmd.split()[-1]
            assert notebooks.notebook_path(nb).is_file()
            assert f"notebooks/{nb}.ipynb" in stage["deps"], name
            keys = [p if isinstance(p, str) else next(iter(p)) for p in stage.get("params", [])]
            assert keys == imports.stage_param_list(cmd), (
                f"{name}: params {keys}, expected {imports.stage_param_list(cmd)} (python tools/stage_deps.py --write)"
            )
            assert notebooks.load_params(nb), f"{name}: params.yaml lacks {notebooks.stage_key(nb)}"


def test_stage_param_list_follows_a_shared_value():
    """A stage that takes a shared value lists it, with any profile's change of it; one that does not, does not."""
    fig5 = imports.stage_param_list("schedlab notebook run nona/fig5")
    assert {
        "nona.fig5",
        "nona.common.workload",
        "nona.common.duration",
        "nona.common.profiles.teaching.duration",
    } <= set(fig5)
    table2 = imports.stage_param_list("schedlab notebook run nona/table2")
    assert table2 == ["profile", "nona.table2", "nona.common.models"]
    calibration = imports.stage_param_list("schedlab notebook run nona/calibration")
    assert (
        "nona.fig3" in calibration and "nona.common.workload" in calibration
    )  # it loads the figures' values


def test_overrides_replace_one_value_and_name_a_typo(tmp_path):
    params = notebooks.stage_params("nona/decima_train", "default", {"train.iterations": 3, "eval_seeds": 1})
    assert params.values["train"]["iterations"] == 3 and params.values["train"]["lr"] == 0.003
    assert params.sources["train"] == "override" and params.values["eval_seeds"] == 1
    assert notebooks.load_params("nona/decima_train")["train"]["iterations"] == 120  # params.yaml untouched
    with pytest.raises(notebooks.ParamsError, match=r"no parameter 'schedul' \(did you mean 'schedule'\?\)"):
        notebooks.stage_params("nona/table2", "default", {"schedul": "rounds"})
    with pytest.raises(notebooks.ParamsError, match="train has no parameter 'iteration'.*'iterations'"):
        notebooks.stage_params("nona/decima_train", "default", {"train.iteration": 3})


def test_a_shared_value_set_twice_or_missing_is_an_error(tmp_path):
    f = tmp_path / "params.yaml"
    f.write_text(
        yaml.safe_dump({"x": {"common": {"n": 1}, "a": {"shared": ["n"], "n": 2}, "b": {"shared": ["m"]}}})
    )
    with pytest.raises(notebooks.ParamsError, match="sets 'n' and also takes it from x.common"):
        notebooks.load_params("x/a", f)
    with pytest.raises(notebooks.ParamsError, match="takes 'm' from x.common, which does not define it"):
        notebooks.load_params("x/b", f)


def test_cli_p_overrides_and_refuses_an_unknown_key(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from schedlab.cli import main

    seen = {}
    monkeypatch.setattr(notebooks, "run", lambda name, **kw: seen.update(kw) or tmp_path / "x.ipynb")
    res = CliRunner().invoke(
        main, ["notebook", "run", "nona/fig5", "-p", "duration", "30", "-p", "loads", "[0.1]"]
    )
    assert res.exit_code == 0, res.output
    assert seen["overrides"] == {"duration": 30, "loads": [0.1]}
    monkeypatch.undo()
    res = CliRunner().invoke(main, ["notebook", "run", "nona/table2", "-p", "schedul", "rounds"])
    assert res.exit_code != 0 and "did you mean 'schedule'" in res.output and "Traceback" not in res.output


def test_table2_notebook_smoke(tmp_path):
    executed = notebooks.run("nona/table2", output_root=tmp_path, executed=tmp_path / "table2.ipynb")
    assert executed.is_file()
    from test_stage_files import undeclared_writes  # what it wrote is what dvc.yaml declares

    # the executed copy and its progress log (beside it) are where the test asked for them
    copy = executed.relative_to(tmp_path)
    assert undeclared_writes("nona_table2", tmp_path) == [str(copy), str(copy.with_suffix(".log"))]
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
    script.write_text(script.read_text().replace('profile = "default"', 'profile = "teaching"'))
    later = time.time() + 5
    os.utime(script, (later, later))
    assert notebooks.sync([nb_path]) == [nb_path]
    assert 'profile = \\"teaching\\"' in nb_path.read_text()
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
    assert set(params) == {"output_root", "profile", "overrides"}


@pytest.mark.parametrize("path", STAGE_NOTEBOOKS, **NB_IDS)
def test_every_parameter_is_read_by_its_notebook(path):
    for profile in notebooks.PROFILES:
        notebooks.params.check_used(_name(path), notebooks.load_params(_name(path), profile=profile))


def test_a_params_key_no_notebook_reads_is_refused(tmp_path):
    values = {**notebooks.load_params("nona/table2"), "schedul": "rounds"}
    with pytest.raises(notebooks.ParamsError, match=r"reads no 'schedul' \(did you mean 'schedule'\?\)"):
        notebooks.params.check_used("nona/table2", values)
