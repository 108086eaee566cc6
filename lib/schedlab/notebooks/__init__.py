"""Notebooks as pipeline stages: parameters from ``params.yaml``, execution by papermill.

Conventions (also in the README):

* A stage notebook's first code cell is tagged ``parameters`` and holds only what papermill
  injects: ``output_root``, ``profile`` and ``overrides``. Left empty (an interactive run),
  ``output_root`` makes the notebook write under ``data/scratch/<notebook>/``, never where the
  pipeline writes; the pipeline passes the repo root.
* The next cell loads the stage's values with :func:`stage_params`: ``params.yaml``'s section
  ``<paper>.<name>`` (``nona/table2`` -> ``nona.table2``), the ``<paper>.common`` values it
  shares, the profile and the overrides, and shows them as a table. ``params.yaml`` is the only
  place a value is written.
* Executed copies land in ``data/executed/``: outputs, not sources. Committed notebooks
  carry no outputs (a test enforces it). Beside each executed copy, ``<name>.log`` holds the
  run's progress lines (:mod:`schedlab.progress`), which stay out of the executed cells.

Modules: :mod:`.params` (values), :mod:`.outputs` (where a notebook writes), :mod:`.runner`
(papermill), :mod:`.watchdog` (stopping cleanly), :mod:`.pairing` (jupytext pairs, Start here's
generated catalogue).

Examples
--------
>>> stage_key("nona/table2")
'nona.table2'
>>> out = Outputs("", "nona/table2")
>>> out.results("t.csv").relative_to(paths.ROOT).as_posix()
'data/scratch/nona/table2/results/nona/t.csv'
"""

from __future__ import annotations

from schedlab import paths
from schedlab.notebooks.outputs import Outputs
from schedlab.notebooks.pairing import (
    KERNELSPEC,
    STAGE_FOLDERS,
    all_notebooks,
    catalogue,
    code_cells_with_outputs,
    pair_path,
    stage_notebooks,
    sync,
)
from schedlab.notebooks import params
from schedlab.notebooks.params import (
    PROFILES,
    ParamsError,
    StageParams,
    apply_overrides,
    dvc_param_paths,
    load_params,
    parse_overrides,
    selected_profile,
    shared_keys,
    stage_key,
    stage_params,
)
from schedlab.notebooks.runner import StageFailed, failed_path, notebook_path, run
from schedlab.notebooks.watchdog import Interrupted, stop_with_parent

__all__ = [
    "params",
    "KERNELSPEC",
    "PROFILES",
    "STAGE_FOLDERS",
    "Interrupted",
    "Outputs",
    "ParamsError",
    "StageParams",
    "all_notebooks",
    "apply_overrides",
    "catalogue",
    "dvc_param_paths",
    "code_cells_with_outputs",
    "load_params",
    "notebook_path",
    "pair_path",
    "parse_overrides",
    "paths",
    "run",
    "StageFailed",
    "failed_path",
    "selected_profile",
    "shared_keys",
    "stage_key",
    "stage_notebooks",
    "stage_params",
    "stop_with_parent",
    "sync",
]
