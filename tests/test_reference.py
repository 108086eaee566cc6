"""Paper-vs-ours comparison: the check logic, and that every reference file is well formed."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from schedlab import paths, reference


@pytest.mark.parametrize(
    "ours, paper, spec, expected",
    [
        (10, 10, {"tolerance": 0}, "yes"),
        (11, 10, {"tolerance": 0}, "no"),
        (10.4, 10, {"tolerance": 0.5}, "yes"),
        (10.6, 10, {"rel_tolerance": 0.05}, "no"),
        (10.4, 10, {"rel_tolerance": 0.05}, "yes"),
        (None, 10, {"tolerance": 0}, "missing input"),
        (float("nan"), 10, {"tolerance": 0}, "missing input"),
        (12, 10, {"tolerance": None}, "not asserted"),
    ],
)
def test_check(ours, paper, spec, expected):
    assert reference.check(ours, paper, spec) == expected


def test_every_reference_file_loads_and_points_at_pipeline_outputs():
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())
    outs = set()
    for stage in dvc["stages"].values():
        for key in ("outs", "metrics", "plots"):
            for o in stage.get(key, []):
                outs.add(next(iter(o)) if isinstance(o, dict) else o)
    files = sorted(paths.REFERENCE.glob("*.yaml"))
    assert files
    for f in files:
        doc = reference.load_reference(f.stem)
        compare = dvc["stages"].get(f"{f.stem}_compare")
        assert compare is not None, f"no {f.stem}_compare stage for {f.name}"
        assert compare["cmd"] == f"schedlab compare {f.stem}"
        for v in doc["values"]:
            assert v["source"].strip(), v["id"]
            if v["measured"] is None:  # a paper value shown for context, never compared
                assert "not compared" in v.get("note", ""), f"{f.name}:{v['id']}: say why it is not measured"
                continue
            assert v["measured"]["file"] in outs, f"{f.name}:{v['id']} reads a file no stage makes"
            # otherwise the comparison goes stale when that result changes
            assert v["measured"]["file"] in compare["deps"], f"{f.stem}_compare lacks dep {v['measured']['file']}"


def test_compare_reads_csv_and_flags_missing(tmp_path):
    ref = tmp_path / "ref"
    ref.mkdir()
    (ref / "demo.yaml").write_text(yaml.safe_dump({"values": [
        {"id": "a", "quantity": "A", "paper": 3, "tolerance": 0, "source": "Table 1",
         "measured": {"file": "results/demo/t.csv", "where": {"k": "x"}, "column": "v"}},
        {"id": "b", "quantity": "B", "paper": 3, "tolerance": 0, "source": "Table 1",
         "measured": {"file": "results/demo/t.csv", "where": {"k": "y"}, "column": "v"}},
        {"id": "c", "quantity": "C", "paper": 1.0, "rel_tolerance": 0.1, "source": "Fig. 2",
         "measured": {"file": "results/demo/m.json", "key": "deep.value"}},
    ]}))
    (tmp_path / "results/demo").mkdir(parents=True)
    pd.DataFrame({"k": ["x", "y"], "v": [3, None]}).to_csv(tmp_path / "results/demo/t.csv", index=False)
    (tmp_path / "results/demo/m.json").write_text(json.dumps({"deep": {"value": 1.2}}))
    table = reference.compare("demo", root=tmp_path, reference_root=ref)
    assert table.set_index("id")["match"].to_dict() == {"a": "yes", "b": "missing input", "c": "no"}


def test_paper_only_values_are_read_but_not_compared(tmp_path):
    doc = {"values": [
        {"id": "a.x", "quantity": "x", "paper": 3, "tolerance": 0, "source": "Table 1",
         "measured": {"file": "results/demo/m.json", "key": "x"}},
        {"id": "a.y", "quantity": "y", "paper": 7, "tolerance": None, "source": "Table 1", "measured": None,
         "note": "context only, not compared"}]}
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(doc))
    assert reference.paper_values("demo", "a.", root=tmp_path) == {"a.x": 3, "a.y": 7}
    table = reference.compare("demo", root=tmp_path, reference_root=tmp_path)
    assert table.id.tolist() == ["a.x"] and table.match.tolist() == ["missing input"]
