"""README's profile table: generated from the measured `make reproduce` runs, never by hand."""

from __future__ import annotations

import datetime as dt
import doctest
import importlib.util
import json

import pytest

from schedlab import paths, stagetimes

_spec = importlib.util.spec_from_file_location("profile_table", paths.ROOT / "tools" / "profile_table.py")
pt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pt)

T0 = dt.datetime(2026, 12, 1, 10, 0, 0, tzinfo=dt.timezone.utc)
DVC_YAML = """stages:
  fetch:
    cmd: schedlab fetch pcs
  pcs_fig1:
    cmd: schedlab notebook run pcs/fig1
  pcs_fig3:
    cmd: schedlab notebook run pcs/fig3
  trace:
    cmd: schedlab notebook run nona/gpt2_dag
    frozen: true
"""


def test_readme_table_is_the_one_generated_from_the_known_times():
    readme = (paths.ROOT / "README.md").read_text()
    rows = pt.load_known()
    assert pt.current_block(readme) == pt.readme_block(rows).strip(), (
        "README's profile table differs from benchmarks/results/reproduce_profiles.yaml: "
        "python tools/profile_table.py readme"
    )
    assert [r["profile"] for r in rows] == ["teaching", "default", "paper", "smoke"]


def test_every_known_time_says_its_load_date_and_commit_or_not_measured():
    for row in pt.load_known():
        cell = pt.measured_cell(row["measured"], row.get("parts"))
        if row["measured"] is None:
            # never measured as a whole: no time of the whole profile is shown
            assert cell.startswith("not measured") and "**" not in cell, row["profile"]
        else:
            m = row["measured"]
            assert m["wall_min"] > 0 and m["date"] and m["commit"], row["profile"]
            assert ("at load" in cell) == (m["load"] is not None), row["profile"]


@pytest.fixture()
def root(tmp_path, monkeypatch):
    """A checkout with two notebook stages (and a frozen one that dvc repro never runs), a known
    file where only `smoke` was measured, and a README holding the markers."""
    (tmp_path / "dvc.yaml").write_text(DVC_YAML)
    rows = [
        {"profile": p, "size": f"{p} size", "command": f"`make reproduce PROFILE={p}`", "measured": None}
        for p in ("teaching", "default", "paper")
    ]
    rows.append(
        {
            "profile": "smoke",
            "size": "tiny",
            "command": "`make test`",
            "measured": {"wall_min": 4.5, "load": None, "cores": 2, "date": "2026-11-27", "commit": "abc"},
        }
    )
    (tmp_path / "known.yaml").write_text(pt.dump_known(rows))
    (tmp_path / "README.md").write_text(f"# x\n\nbefore\n\n{pt.START_MARKER}\n{pt.END_MARKER}\n\nafter\n")
    loads = iter([0.5, 3.25])  # the machine's load at start, then at end
    monkeypatch.setattr(pt.stagetimes, "load_average", lambda: next(loads))
    return tmp_path


def _stage(root, name, minutes_after_t0, load):
    started = T0 + dt.timedelta(minutes=minutes_after_t0)
    stagetimes.record(root, name, profile="default", wall_s=60.0, cpu_s=100.0, load=load, started=started)


def _update(root, **kw):
    return pt.update(root / "README.md", root / "known.yaml", root, **kw)


def test_a_complete_run_becomes_the_profiles_time(root):
    pt.start("default", root, now=T0)
    assert json.loads(pt.record_file("default", root).read_text())["status"] == "running"
    _stage(root, "pcs/fig1", 1, (1.0, 4.75))
    _stage(root, "pcs/fig3", 3, (2.0, 2.5))
    entry = pt.end("default", root, now=T0 + dt.timedelta(minutes=42, seconds=30))
    assert entry["status"] == "complete" and entry["wall_s"] == 42.5 * 60
    assert (entry["stages_run"], entry["stages_total"]) == (2, 2)  # the frozen stage is not counted
    assert entry["load_range"] == [0.5, 4.75]  # over the run's two ends and every stage's ends
    assert _update(root, check=True) is True and "42.5" not in (root / "README.md").read_text()
    assert _update(root) is True
    readme = (root / "README.md").read_text()
    (line,) = [x for x in readme.splitlines() if x.startswith("| `default`")]
    assert "**42.5 min** at load 0.5-4.8, " in line and "(2026-12-01, " in line
    assert "all 2 notebook stages" in line
    assert readme.startswith("# x\n\nbefore\n\n") and readme.endswith("\n\nafter\n")
    # the rows not measured stay so, the smoke time stays as known, and the known file keeps the run
    assert "| `teaching` | teaching size | not measured as a whole |" in readme
    assert "**4.5 min**, load not recorded" in readme
    assert pt.load_known(root / "known.yaml")[1]["measured"]["wall_min"] == 42.5
    assert _update(root) is False  # idempotent: the same record changes nothing twice


def test_a_partial_or_unfinished_run_is_no_profile_time(root):
    before = (root / "known.yaml").read_text()
    _stage(root, "pcs/fig1", -60, (1.0, 1.0))  # an earlier run's stage: dvc repro skipped it this time
    pt.start("default", root, now=T0)
    assert _update(root) is True  # the unfinished run is ignored; only the table was written
    _stage(root, "pcs/fig3", 1, (1.0, 1.0))
    entry = pt.end("default", root, now=T0 + dt.timedelta(minutes=2))
    assert entry["status"] == "partial" and (entry["stages_run"], entry["stages_total"]) == (1, 2)
    assert _update(root) is False
    assert (root / "known.yaml").read_text() == before
    (line,) = [x for x in (root / "README.md").read_text().splitlines() if x.startswith("| `default`")]
    assert "not measured" in line and "min**" not in line


def test_bad_profile_missing_start_and_bad_markers_are_named(root):
    with pytest.raises(pt.ProfileTableError, match="--profile 'smoke': expected one of default, teaching"):
        pt.start("smoke", root)
    with pytest.raises(pt.ProfileTableError, match="reproduce_paper.json: no start record"):
        pt.end("paper", root)
    (root / "README.md").write_text(f"{pt.END_MARKER}\n{pt.START_MARKER}\n")
    with pytest.raises(pt.ProfileTableError, match="README.md: expected one <!-- profiles:start -->"):
        _update(root)
    (root / "known.yaml").write_text("profiles:\n- profile: default\n")
    with pytest.raises(pt.ProfileTableError, match=r"profiles\[0\] lacks field\(s\) size, command, measured"):
        pt.load_known(root / "known.yaml")


def test_the_tools_examples_run():
    result = doctest.testmod(pt)
    assert result.attempted >= 3 and result.failed == 0
