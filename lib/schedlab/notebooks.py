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

import json
from pathlib import Path
from typing import Any

import yaml

from schedlab import paths


def stage_key(name: str) -> str:
    return name.strip("/").replace("/", ".")


def notebook_path(name: str) -> Path:
    path = paths.NOTEBOOKS / f"{name}.ipynb"
    if not path.is_file():
        known = sorted(p.relative_to(paths.NOTEBOOKS).with_suffix("").as_posix() for p in paths.NOTEBOOKS.rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts)
        raise FileNotFoundError(f"no notebook {path}; known notebooks: {', '.join(known)}")
    return path


def load_params(name: str, params_file: Path | None = None) -> dict[str, Any]:
    """The ``params.yaml`` section of notebook ``name`` (empty if it has none)."""
    doc = yaml.safe_load((params_file or paths.PARAMS).read_text()) or {}
    node: Any = doc
    for part in stage_key(name).split("."):
        if not isinstance(node, dict) or part not in node:
            return {}
        node = node[part]
    if not isinstance(node, dict):
        raise ValueError(f"{params_file or paths.PARAMS}: section {stage_key(name)!r} must be a mapping")
    return dict(node)


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


def run(
    name: str,
    *,
    output_root: Path | None = None,
    executed: Path | None = None,
    overrides: dict[str, Any] | None = None,
) -> Path:
    """Execute notebook ``name`` with its ``params.yaml`` section; return the executed copy."""
    import papermill as pm  # heavy import, only when a notebook actually runs

    source = notebook_path(name)
    params = {**load_params(name), **(overrides or {})}
    params["output_root"] = str(output_root if output_root is not None else paths.ROOT)
    out = executed or paths.EXECUTED / f"{name}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.part.ipynb")
    try:
        pm.execute_notebook(
            str(source), str(tmp), parameters=params, cwd=str(paths.ROOT),
            kernel_name="python3", progress_bar=False, request_save_on_cell_execute=False,
        )
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def code_cells_with_outputs(path: Path) -> list[int]:
    """Indices of code cells that carry outputs or execution counts."""
    nb = json.loads(Path(path).read_text())
    return [
        i for i, c in enumerate(nb.get("cells", []))
        if c.get("cell_type") == "code" and (c.get("outputs") or c.get("execution_count") is not None)
    ]
