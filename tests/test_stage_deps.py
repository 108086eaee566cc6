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
    assert not missing, (f"dvc.yaml stage {name!r} runs library code it does not depend on: "
                         f"{', '.join(missing)} (add the file or its subpackage to its deps)")


def test_closure_follows_lazy_imports(tmp_path):
    # nona.schedulers imports nona.decima inside a function; the closure must still reach it
    files = {f.relative_to(paths.ROOT).as_posix() for f in imports.module_files("schedlab.nona.schedulers")}
    assert "lib/schedlab/nona/decima/__init__.py" in files
    assert "lib/schedlab/nona/sim.py" in files


def test_uncovered_sees_a_missing_file():
    f = paths.ROOT / "lib/schedlab/nona/graphs.py"
    assert imports.uncovered([f], ["lib/schedlab/nona/sim.py"]) == ["lib/schedlab/nona/graphs.py"]
    assert imports.uncovered([f], ["lib/schedlab/nona"]) == []
