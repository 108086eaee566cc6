"""Every stage notebook runs end to end under the ``smoke`` profile, in a scratch root.

The stages are read from ``dvc.yaml`` (every ``schedlab notebook run`` stage), so a new stage is
covered without editing this file; its ``params.yaml`` section needs a ``profiles: smoke:`` entry
small enough for seconds (``test_every_stage_has_a_smoke_profile``). Each run writes into
``tmp_path`` only (outputs, executed copy, caches, timings) and must write every output its stage
declares, and nothing it does not declare.

A stage that reads another stage's file through a parameter (a path relative to the repository)
gets that upstream stage run first at smoke size in the same scratch root, and the parameter set
to the file written there (:data:`UPSTREAM`), so no smoke run reads the repository's results.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from schedlab import data, notebooks, paths, stagetimes
from schedlab.notebooks.params import SMOKE
from test_stage_files import STAGES, _paths, _strings, covered, undeclared_writes
from test_progress import progress_in_cells

#: stage notebook -> {parameter: (upstream notebook, the file it writes that the parameter names)}
UPSTREAM: dict[str, dict[str, tuple[str, str]]] = {
    "nona/table3": {
        "decima_training_json": ("nona/decima_train", "results/nona/decima_train/training_time.json")
    },
}
#: notebooks that train with PyTorch (the 'trace' extra); a stage that needs one's output needs torch too
TORCH = {"nona/decima_train"}
RAW = "data/raw/"
#: stages whose smoke run still takes over ~30 s on 2 shared cores, with what no smoke value makes smaller
SLOW = {
    # 38 s of cells at load 3 (2026-11-27): Table II's bootstrap spread (40 draws, fixed) on the 800 real rows and
    # the grid once per clustering semantics, both on the fixed real panel: no parameter sizes them
    "polaris_real_panel",
}

NOTEBOOK = {stage: st["cmd"].split()[-1] for stage, st in STAGES.items()}
STAGE_OF = {name: stage for stage, name in NOTEBOOK.items()}


def declared_outs(stage: str) -> list[str]:
    st = STAGES[stage]
    return _paths(st.get("outs")) + _paths(st.get("metrics")) + _paths(st.get("plots"))


def needs_torch(name: str) -> bool:
    return name in TORCH or any(needs_torch(up) for up, _ in UPSTREAM.get(name, {}).values())


def missing_outputs(stage: str, root: Path) -> list[str]:
    """Declared outs of ``stage`` absent under ``root``: a file that is not there, a folder that is empty."""
    missing = []
    for out in declared_outs(stage):
        path = root / out
        if not (path.is_file() or (path.is_dir() and any(p.is_file() for p in path.rglob("*")))):
            missing.append(out)
    return missing


def fetch_named_raw_inputs(name: str) -> None:
    """Fetch the raw inputs ``name``'s smoke values name by path (``data/raw/...``): a notebook reads
    those as files (the public Decima weights standing in for the retrained ones), not through the
    data layer, which fetches everything else it reads on first use."""
    for value in _strings(notebooks.load_params(name, profile=SMOKE)):
        if value.startswith(RAW):
            data.require(value[len(RAW) :])


def unavailable_rows(root: Path) -> list[str]:
    """Rows of the CSVs under ``root/results`` whose ``status`` says a scheme could not run: the smoke
    sizes must run every scheme the default profile runs, not skip one."""
    bad = []
    for path in sorted((root / "results").rglob("*.csv")):
        table = pd.read_csv(path)
        if "status" in table:
            for _, row in table[table.status.astype(str).str.startswith("unavailable")].iterrows():
                bad.append(f"{path.relative_to(root)}: {row.get('scheme', '')} {row.status}")
    return bad


def run_smoke(name: str, root: Path, overrides: dict | None = None) -> Path:
    """Execute notebook ``name`` under the smoke profile with everything it writes under ``root``."""
    fetch_named_raw_inputs(name)
    return notebooks.run(
        name,
        output_root=root,
        executed=root / "data" / "executed" / f"{name}.ipynb",
        profile=SMOKE,
        overrides=overrides,
    )


def test_the_stage_list_comes_from_dvc_yaml():
    """The parametrised list below is dvc.yaml's notebook stages, each with an existing notebook."""
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())["stages"]
    expected = {s for s, st in dvc.items() if str(st.get("cmd", "")).startswith("schedlab notebook run ")}
    assert set(NOTEBOOK) == expected and len(expected) >= 20
    for name in NOTEBOOK.values():
        assert notebooks.notebook_path(name).is_file()
    assert SLOW <= set(NOTEBOOK)
    for name, ups in UPSTREAM.items():  # the chain names real stages and files they declare
        assert name in STAGE_OF
        for up, rel in ups.values():
            assert covered(rel, declared_outs(STAGE_OF[up])), f"{up} does not declare {rel}"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_stage_has_a_smoke_profile(stage):
    """Each stage section states its smoke sizes (``{}`` where the default already takes seconds)."""
    section = notebooks.stage_key(NOTEBOOK[stage])
    paper, key = section.split(".")
    node = yaml.safe_load(paths.PARAMS.read_text())[paper][key]
    assert isinstance((node.get("profiles") or {}).get(SMOKE), dict), (
        f"params.yaml {section}: no profiles.{SMOKE}"
    )


def test_smoke_never_writes_into_the_repository():
    with pytest.raises(notebooks.ParamsError, match="smoke.*writes into the repository"):
        notebooks.run("nona/table2", profile=SMOKE)
    with pytest.raises(notebooks.ParamsError, match="smoke.*writes into the repository"):
        notebooks.run("nona/table2", profile=SMOKE, output_root=paths.ROOT)


def test_the_checks_see_a_missing_output_and_a_scheme_that_did_not_run(tmp_path):
    folder = tmp_path / "results/nona/optimiser"  # nona_optimiser's one out: a folder
    folder.mkdir(parents=True)
    assert missing_outputs("nona_optimiser", tmp_path) == ["results/nona/optimiser"]  # empty
    (folder / "load_0.1.json").write_text("{}")
    assert missing_outputs("nona_optimiser", tmp_path) == []
    assert missing_outputs("nona_table2", tmp_path) == declared_outs("nona_table2")  # no file written
    pd.DataFrame(
        {"scheme": ["decima_retrained", "random"], "status": ["unavailable: no weights", "ok"]}
    ).to_csv(folder / "rows.csv", index=False)
    assert unavailable_rows(tmp_path) == [
        "results/nona/optimiser/rows.csv: decima_retrained unavailable: no weights"
    ]


@pytest.mark.parametrize(
    "stage", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW else s for s in sorted(STAGES)]
)
def test_stage_notebook_smoke(stage, tmp_path):
    name = NOTEBOOK[stage]
    if needs_torch(name):
        pytest.importorskip("torch")
    overrides, upstream_outs = {}, []
    for param, (up, rel) in UPSTREAM.get(name, {}).items():
        run_smoke(up, tmp_path)
        upstream_outs += declared_outs(STAGE_OF[up])
        overrides[param] = str(tmp_path / rel)  # absolute: read from the scratch root, not the repository
    t0 = time.perf_counter()
    executed = run_smoke(name, tmp_path, overrides)
    seconds = time.perf_counter() - t0
    assert executed.is_file() and tmp_path in executed.parents
    assert missing_outputs(stage, tmp_path) == [], f"{stage} did not write these declared outs"
    undeclared = [f for f in undeclared_writes(stage, tmp_path) if not covered(f, upstream_outs)]
    assert undeclared == [], f"{stage} wrote files dvc.yaml does not declare"
    assert unavailable_rows(tmp_path) == [], f"{stage}: a scheme did not run at smoke size"
    assert progress_in_cells(executed, name) == [], (
        f"{stage}: progress or tqdm's warning in the executed cells"
    )
    times = stagetimes.table(tmp_path)  # the run is recorded under the profile it ran
    assert times[times.stage == name].profile.tolist() == [SMOKE]
    print(f"{stage}: {seconds:.1f} s")
