"""Paper-vs-ours comparison: the check logic, and that every reference file is well formed."""

from __future__ import annotations

import json

import numpy as np
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
        (None, 10, {"tolerance": 0, "profile": "paper"}, "paper profile only"),
        (10, 10, {"tolerance": 0, "profile": "paper"}, "yes"),
        (12, 10, {"tolerance": None}, "not asserted"),
        (0.05, 0.1, {"tolerance": None, "bound": "upper"}, "yes"),  # "within 10%": at most the paper's
        (0.38, 0.1, {"tolerance": None, "bound": "upper"}, "no"),
        (0.12, 0.1, {"tolerance": 0.05, "bound": "upper"}, "yes"),
        (3.0, 2.0, {"tolerance": None, "bound": "lower"}, "yes"),
        (1.0, 2.0, {"tolerance": None, "bound": "lower"}, "no"),
    ],
)
def test_check(ours, paper, spec, expected):
    assert reference.check(ours, paper, spec) == expected


def test_every_reference_file_loads_and_points_at_pipeline_outputs(pipeline_outputs):
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())
    outs = pipeline_outputs
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
            if reference.is_timing(v):  # a time: kept outside DVC, so no stage may declare or need it
                assert v["measured"]["file"].startswith(f"results/{f.stem}/timings/"), v["id"]
                assert v["measured"]["file"] not in outs and v["measured"]["file"] not in compare["deps"], v[
                    "id"
                ]
                continue
            made = v["measured"]["file"] in outs or any(
                v["measured"]["file"].startswith(o.rstrip("/") + "/") for o in outs
            )
            assert made, f"{f.name}:{v['id']} reads a file no stage makes (as a file or inside a folder out)"
            # otherwise the comparison goes stale when that result changes
            assert v["measured"]["file"] in compare["deps"], (
                f"{f.stem}_compare lacks dep {v['measured']['file']}"
            )


def test_compare_reads_csv_and_flags_missing(tmp_path):
    ref = tmp_path / "ref"
    ref.mkdir()
    (ref / "demo.yaml").write_text(
        yaml.safe_dump(
            {
                "values": [
                    {
                        "id": "a",
                        "quantity": "A",
                        "paper": 3,
                        "tolerance": 0,
                        "source": "Table 1",
                        "measured": {"file": "results/demo/t.csv", "where": {"k": "x"}, "column": "v"},
                    },
                    {
                        "id": "b",
                        "quantity": "B",
                        "paper": 3,
                        "tolerance": 0,
                        "source": "Table 1",
                        "measured": {"file": "results/demo/t.csv", "where": {"k": "y"}, "column": "v"},
                    },
                    {
                        "id": "c",
                        "quantity": "C",
                        "paper": 1.0,
                        "rel_tolerance": 0.1,
                        "source": "Fig. 2",
                        "measured": {"file": "results/demo/m.json", "key": "deep.value"},
                    },
                ]
            }
        )
    )
    (tmp_path / "results/demo").mkdir(parents=True)
    pd.DataFrame({"k": ["x", "y"], "v": [3, None]}).to_csv(tmp_path / "results/demo/t.csv", index=False)
    (tmp_path / "results/demo/m.json").write_text(json.dumps({"deep": {"value": 1.2}}))
    table = reference.compare("demo", root=tmp_path, reference_root=ref)
    assert table.set_index("id")["match"].to_dict() == {"a": "yes", "b": "missing input", "c": "no"}


def test_paper_only_values_are_read_but_not_compared(tmp_path):
    doc = {
        "values": [
            {
                "id": "a.x",
                "quantity": "x",
                "paper": 3,
                "tolerance": 0,
                "source": "Table 1",
                "measured": {"file": "results/demo/m.json", "key": "x"},
            },
            {
                "id": "a.y",
                "quantity": "y",
                "paper": 7,
                "tolerance": None,
                "source": "Table 1",
                "measured": None,
                "note": "context only, not compared",
            },
        ]
    }
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(doc))
    assert reference.paper_values("demo", "a.", root=tmp_path) == {"a.x": 3, "a.y": 7}
    table = reference.compare("demo", root=tmp_path, reference_root=tmp_path)
    assert table.id.tolist() == ["a.x"] and table.match.tolist() == ["missing input"]


def test_times_are_compared_apart(tmp_path, monkeypatch):
    doc = {
        "values": [
            {
                "id": "t.count",
                "quantity": "n",
                "paper": 3,
                "tolerance": 0,
                "source": "Table 1",
                "measured": {"file": "results/demo/m.json", "key": "n"},
            },
            {
                "id": "t.seconds",
                "quantity": "s",
                "paper": 13,
                "tolerance": None,
                "source": "Table 3",
                "measured": {"file": "results/demo/timings/t.json", "key": "s"},
            },
        ]
    }
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(doc))
    (tmp_path / "results/demo/timings").mkdir(parents=True)
    (tmp_path / "results/demo/m.json").write_text('{"n": 3}')
    (tmp_path / "results/demo/timings/t.json").write_text('{"s": 0.02}')
    monkeypatch.setattr(paths, "REFERENCE", tmp_path)
    reference.write_comparison("demo", tmp_path / "results/demo", root=tmp_path)
    main = json.loads((tmp_path / "results/demo/comparison.json").read_text())
    times = json.loads((tmp_path / "results/demo/timings/comparison.json").read_text())
    assert list(main["values"]) == ["t.count"] and main["summary"]["yes"] == 1
    # the DVC metric: numbers only, one per verdict (`dvc metrics show` prints a short table)
    metrics = json.loads((tmp_path / "results/demo/metrics.json").read_text())
    assert metrics == {
        "yes": 1,
        "no": 0,
        "not_asserted": 0,
        "paper_profile_only": 0,
        "missing_input": 0,
        "compared": 1,
    }
    assert not (tmp_path / "results/demo/timings/metrics.json").exists()
    assert list(times["values"]) == ["t.seconds"] and times["values"]["t.seconds"]["ours"] == 0.02


def test_metrics_of_the_compare_stages_are_the_numeric_counts():
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())
    for f in sorted(paths.REFERENCE.glob("*.yaml")):
        stage = dvc["stages"][f"{f.stem}_compare"]
        assert [next(iter(m)) if isinstance(m, dict) else m for m in stage["metrics"]] == [
            f"results/{f.stem}/metrics.json"
        ]
        assert (
            f"results/{f.stem}/comparison.json" in stage["outs"]
        )  # full rows: an out, read by the scorecard


def test_paper_profile_entries_are_counted_apart(tmp_path):
    doc = {
        "values": [
            {
                "id": "a",
                "quantity": "A",
                "paper": 3,
                "tolerance": 0,
                "source": "Fig. 7",
                "profile": "paper",
                "measured": {"file": "results/demo/t.csv", "where": {"k": "big"}, "column": "v"},
            },
            {
                "id": "b",
                "quantity": "B",
                "paper": 3,
                "tolerance": 0,
                "source": "Fig. 7",
                "measured": {"file": "results/demo/t.csv", "where": {"k": "big"}, "column": "v"},
            },
        ]
    }
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(doc))
    table = reference.compare("demo", root=tmp_path, reference_root=tmp_path)
    assert table.match.tolist() == ["paper profile only", "missing input"]
    assert reference.numeric_metrics(table) == {
        "yes": 0,
        "no": 0,
        "not_asserted": 0,
        "paper_profile_only": 1,
        "missing_input": 1,
        "compared": 2,
    }


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"profile": "teaching"}, "profile must be 'paper'"),
        ({"figure": "figures/demo/a.pdf"}, "figure must be a .png path"),
        ({"figure": ["figures/demo/a.png", 3]}, "figure must be a .png path"),
    ],
)
def test_optional_fields_are_checked(tmp_path, extra, message):
    entry = {
        "id": "a",
        "quantity": "A",
        "paper": 3,
        "tolerance": 0,
        "source": "Fig. 7",
        "measured": None,
        **extra,
    }
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump({"values": [entry]}))
    with pytest.raises(reference.ReferenceError, match=f"demo.yaml: entry 'a': {message}"):
        reference.load_reference("demo", tmp_path)


def test_unknown_bound_is_refused():
    with pytest.raises(reference.ReferenceError, match="bound"):
        reference.check(1.0, 2.0, {"id": "x", "bound": "sideways"})


def test_a_run_under_another_setup_is_different_setup_not_a_miss(tmp_path):
    """PCS Fig. 7 at 128 GPUs answers another question than the paper's 64-GPU numbers: its verdict
    says so and names the value, and an entry with no stated setup is judged as before."""
    import json

    import yaml

    refs = tmp_path / "reference"
    refs.mkdir()
    (refs / "x.yaml").write_text(
        yaml.safe_dump(
            {
                "setups": [{"ids": "a.", "setup": {"pcs.fig7.gpus": 64}, "source": "Table 2"}],
                "values": [
                    {
                        "id": "a.n",
                        "quantity": "q",
                        "paper": 1,
                        "tolerance": 0,
                        "source": "s",
                        "measured": {"file": "r.json", "key": "n"},
                    },
                    {
                        "id": "b.n",
                        "quantity": "q",
                        "paper": 1,
                        "tolerance": 0,
                        "source": "s",
                        "measured": {"file": "r.json", "key": "n"},
                    },
                ],
            }
        )
    )
    (tmp_path / "r.json").write_text(json.dumps({"n": 2}))
    params = yaml.safe_load(paths.PARAMS.read_text())
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    same = reference.compare("x", tmp_path, refs).set_index("id")
    assert same.loc["a.n", "match"] == "no" and same.loc["b.n", "match"] == "no"
    assert "different setup" not in reference.verdict_counts(
        same.reset_index()
    )  # listed only where it occurs
    params["pcs"]["common"]["gpus"] = 128
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    other = reference.compare("x", tmp_path, refs).set_index("id")
    assert other.loc["a.n", "match"] == "different setup" and other.loc["b.n", "match"] == "no"
    assert "pcs.fig7.gpus=128 (the paper's: 64)" in other.loc["a.n", "note"]
    assert reference.verdict_counts(other.reset_index())["different setup"] == 1


def test_fitted_numbers_are_reported_apart_from_held_out_ones(tmp_path):
    """A number the calibration fitted on is `fitted` (with its within/outside note), never a
    yes/no: the yes/no counts are the held-out numbers; the prefixes come from params.yaml."""
    import json

    import yaml

    refs = tmp_path / "reference"
    refs.mkdir()
    entry = {
        "quantity": "q",
        "paper": 2,
        "tolerance": 0,
        "source": "s",
        "measured": {"file": "r.json", "key": "n"},
    }
    (refs / "x.yaml").write_text(
        yaml.safe_dump(
            {
                "fitted": {"param": "nona.calibration.fit_on", "source": "calibration"},
                "values": [
                    {"id": "fig3.gain_avg.a", **entry},
                    {"id": "fig4.gain_avg.a", **entry},
                    {"id": "fig3.light.gain_avg.a", **entry},
                ],
            }
        )
    )
    (tmp_path / "r.json").write_text(json.dumps({"n": 2}))
    params = yaml.safe_load(paths.PARAMS.read_text())
    params["nona"]["calibration"]["fit_on"] = ["fig3.gain_avg."]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    t = reference.compare("x", tmp_path, refs).set_index("id")
    assert (
        t.loc["fig3.gain_avg.a", "match"] == "fitted"
        and "within tolerance" in t.loc["fig3.gain_avg.a", "note"]
    )
    assert t.loc["fig4.gain_avg.a", "match"] == "yes" and t.loc["fig3.light.gain_avg.a", "match"] == "yes"
    assert reference.verdict_counts(t.reset_index())["fitted"] == 1
    assert "nona.calibration.fit_on" in reference.setup_keys("x", refs)  # a params dependency of compare
    params["nona"]["calibration"]["fit_on"] = "fig3."  # not a list: named
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    with pytest.raises(reference.ReferenceError, match="nona.calibration.fit_on must be a list"):
        reference.compare("x", tmp_path, refs)


def test_the_papers_setups_hold_in_the_default_profile():
    """The default run is the paper's setup wherever a setup is stated (else its verdicts would not count)."""
    for paper in ("nona", "pcs", "polaris"):
        doc = reference.load_reference(paper)
        for entry in doc["values"]:
            assert reference.setup_differences(entry, doc, paths.PARAMS) == [], entry["id"]


def test_paper_vs_ours_reads_a_stage_output(tmp_path):
    (tmp_path / "results/pcs").mkdir(parents=True)
    pd.DataFrame(
        {
            "policy": ["Tiresias", "FIFO"],
            "mean_jct": [11.25, 16.0],
            "mean_pred_error": [45.6, 0.0],
            "peak_unfairness_pct": [66.0, 592.0],
        }
    ).to_csv(tmp_path / "results/pcs/fig1.csv", index=False)
    t = reference.paper_vs_ours("pcs", ["fig1.fifo."], tmp_path).set_index("id")
    assert t.index.str.startswith("fig1.fifo.").all() and len(t) >= 2
    assert t.loc["fig1.fifo.mean_jct", "diff"] == pytest.approx(16.0 - 15.75)
    assert t.loc["fig1.fifo.mean_jct", "ours / paper"] == pytest.approx(16.0 / 15.75)
    assert t.loc["fig1.fifo.mean_jct", "rel_diff_pct"] == pytest.approx(100 * (16.0 / 15.75 - 1))
    assert t.loc["fig1.fifo.mean_jct", "match"] == "no"
    assert np.isnan(t.loc["fig1.fifo.mean_pred_error", "rel_diff_pct"])  # the paper's value is 0
    assert reference.verdict_counts(t.reset_index())["yes"] == 1
    assert "same side of 1" not in t


def test_paper_vs_ours_says_whether_a_gain_is_on_the_papers_side(tmp_path):
    (tmp_path / "results/nona").mkdir(parents=True)
    gains = {"inference_p99": {"spark_fair": 0.5, "random": 3.0}}
    (tmp_path / "results/nona/fig5_gains.json").write_text(json.dumps(gains))
    t = reference.paper_vs_ours("nona", ["fig5.gain_inference_p99."], tmp_path, gains=True).set_index("id")
    side = t["same side of 1"]
    assert side["fig5.gain_inference_p99.spark_fair"] == "no"  # the paper: Nona 57x faster; here slower
    assert side["fig5.gain_inference_p99.random"] == "yes"
    assert side["fig5.gain_inference_p99.opportunistic"] == "missing"


@pytest.mark.parametrize(
    "prefixes, message",
    [([], "non-empty list"), ("fig1.", "non-empty list"), (["fig1.", "fig99."], r"starts with \['fig99.'\]")],
)
def test_paper_vs_ours_refuses_prefixes_that_select_nothing(tmp_path, prefixes, message):
    with pytest.raises(ValueError, match=message):
        reference.paper_vs_ours("pcs", prefixes, tmp_path)
