"""Notebook conventions, and a smoke run of the Table II notebook through papermill."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from schedlab import notebooks, paths

ALL_NOTEBOOKS = sorted(p for p in paths.NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def test_there_are_notebooks():
    assert ALL_NOTEBOOKS


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.relative_to(paths.NOTEBOOKS).as_posix())
def test_committed_notebooks_have_no_outputs(path):
    assert notebooks.code_cells_with_outputs(path) == [], f"{path}: clear outputs before committing"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.relative_to(paths.NOTEBOOKS).as_posix())
def test_parameters_cell_with_output_root(path):
    nb = json.loads(path.read_text())
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path}: needs exactly one cell tagged 'parameters'"
    assert 'output_root = ""' in "".join(tagged[0]["source"])


def test_every_stage_notebook_exists_and_has_params():
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())
    for name, stage in dvc["stages"].items():
        cmd = stage["cmd"]
        if cmd.startswith("schedlab notebook run "):
            nb = cmd.split()[-1]
            assert notebooks.notebook_path(nb).is_file()
            assert f"notebooks/{nb}.ipynb" in stage["deps"], name
            for p in stage.get("params", []):
                key = p if isinstance(p, str) else next(iter(p))
                assert notebooks.load_params(key.replace(".", "/")), f"{name}: params.yaml lacks {key}"


def test_table2_notebook_smoke(tmp_path):
    executed = notebooks.run("nona/table2", output_root=tmp_path, executed=tmp_path / "table2.ipynb")
    assert executed.is_file()
    table = pd.read_csv(tmp_path / "results/nona/table2.csv").set_index("model")
    assert table.loc["resnet18", "post_tasks"] == 10
    assert table.loc["gpt2", "status"] in ("missing input", "ok")
    for ext in ("png", "pdf"):
        assert (tmp_path / f"figures/nona/resnet18_contracted.{ext}").stat().st_size > 1000


def test_interactive_outputs_go_to_scratch():
    out = notebooks.Outputs("", "nona/table2")
    assert paths.SCRATCH in out.results("x.csv").parents
