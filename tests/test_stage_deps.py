"""Every pipeline stage depends on the library code it runs (derived from imports, not by hand)."""

from __future__ import annotations

import pytest
import yaml

from schedlab import imports, paths

STAGES = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())["stages"]


@pytest.mark.parametrize("name", sorted(STAGES))
def test_stage_deps_cover_its_imports(name):
    stage = STAGES[name]
    needed = imports.stage_library_files(stage["cmd"])
    deps = [d if isinstance(d, str) else next(iter(d)) for d in stage.get("deps", [])]
    missing = imports.uncovered(needed, deps)
    assert not missing, (
        f"dvc.yaml stage {name!r} runs library code it does not depend on: "
        f"{', '.join(missing)} (add the file or its subpackage to its deps)"
    )


def test_closure_follows_lazy_imports(tmp_path):
    # nona.schedulers imports nona.decima inside a function; the closure must still reach it
    files = {f.relative_to(paths.ROOT).as_posix() for f in imports.module_files("schedlab.nona.schedulers")}
    assert "lib/schedlab/nona/decima/__init__.py" in files
    assert "lib/schedlab/nona/sim.py" in files


def test_uncovered_sees_a_missing_file():
    f = paths.ROOT / "lib/schedlab/nona/graphs.py"
    assert imports.uncovered([f], ["lib/schedlab/nona/sim.py"]) == ["lib/schedlab/nona/graphs.py"]
    assert imports.uncovered([f], ["lib/schedlab/nona"]) == []


def test_frozen_stage_lock_matches_its_files():
    """`dvc repro` never reruns a frozen stage, so nothing refreshes its dvc.lock entry: after a
    change to the code it runs, re-trace (`dvc repro -f nona_gpt2_trace`, needs torch) or, when the
    change cannot alter the graph, record the new hashes (`dvc commit nona_gpt2_trace`)."""
    import hashlib

    lock = yaml.safe_load((paths.ROOT / "dvc.lock").read_text())["stages"]
    for name, stage in STAGES.items():
        if not stage.get("frozen"):
            continue
        recorded = {e["path"]: e.get("md5") for e in lock[name].get("deps", []) + lock[name].get("outs", [])}
        declared = [d if isinstance(d, str) else next(iter(d)) for d in stage.get("deps", [])] + [
            o if isinstance(o, str) else next(iter(o)) for o in stage.get("outs", [])
        ]
        for path in declared:
            assert path in recorded, f"dvc.lock's {name} lacks {path}: run `dvc commit {name}`"
            actual = hashlib.md5((paths.ROOT / path).read_bytes()).hexdigest()
            assert recorded[path] == actual, f"dvc.lock's {name} records a stale hash for {path}"


def test_write_gives_a_new_stage_its_library_deps():
    # a stage added by hand lists only its notebook: --write must add the library files it runs
    # (it used to replace existing lib/ lines only, so a new stage needed a placeholder line)
    import importlib.util

    spec = importlib.util.spec_from_file_location("stage_deps", paths.ROOT / "tools" / "stage_deps.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    text = (
        "stages:\n"
        "  nona_try:\n"
        "    cmd: schedlab notebook run nona/table2\n"
        "    deps:\n"
        "      - notebooks/nona/table2.ipynb\n"
        "\n"
        "    outs:\n"
        "      - results/nona/try.csv\n"
    )
    stages = yaml.safe_load(text)["stages"]
    new = tool.rewrite(text, stages)
    deps = yaml.safe_load(new)["stages"]["nona_try"]["deps"]
    assert deps[0] == "notebooks/nona/table2.ipynb"
    needed = imports.stage_library_files(stages["nona_try"]["cmd"])
    assert needed and not imports.uncovered(needed, deps)
    assert tool.rewrite(new, yaml.safe_load(new)["stages"]) == new  # a second write changes nothing
