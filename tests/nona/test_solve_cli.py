"""`schedlab nona solve`: the pipeline's workload by default, the per-server one on request, timings apart."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from schedlab import paths
from schedlab.cli import main
from schedlab.notebooks import stage_params


def solve(*args):
    return CliRunner().invoke(main, ["nona", "solve", *args])


def pipeline_values():
    return stage_params("nona/optimiser", None).values


@pytest.mark.skipif(
    not (paths.GENERATED / "nona/gpt2/graph.txt").is_file(), reason="needs the traced GPT-2 graph"
)
def test_solve_json_is_the_optimiser_stage_table_at_the_same_load():
    """The CLI's default (`--workload pipeline`) solves what the optimiser notebook solves: the same
    library call with params.yaml's values gives the same tables, bit for bit."""
    from schedlab.nona.optimise import solve_point

    p = pipeline_values()
    load = p["loads"][1]
    r = solve("--load", str(load), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    _, stage = solve_point(
        load,
        bandwidth_gbps=p["bandwidth_gbps"],
        servers=p["servers"],
        method="global",
        models=p["models"],
        workload_kwargs=p["workload"],
    )
    assert doc["classes"] == stage["classes"]
    for key in (
        "objective",
        "lower_bound",
        "link_load",
        "phi_s",
        "servers",
        "bandwidth_gbps",
        "search_space",
    ):
        assert doc[key] == stage[key], key
    w = doc["workload"]
    assert w["name"] == "pipeline" and w["build_workload"] == p["workload"]
    assert w["load_basis"] == p["workload"].get("load_basis", "server")
    assert w["arrival_rates"] == {k: c["arrival_rate"] for k, c in stage["classes"].items()}
    # the load basis in numbers: per server = load, or load spread over the cluster
    per_server = load if w["load_basis"] == "server" else load / p["servers"]
    assert w["compute_load_per_server"] == pytest.approx(per_server, rel=1e-12)
    assert doc["kernel_load_s"] >= 0 and doc["solve_s"] > 0


def test_per_server_workload_reads_load_per_server_and_differs_from_a_cluster_basis():
    common = ["--load", "0.4", "--models", "alexnet,resnet18", "--servers", "8", "--json"]
    per = json.loads(solve("--workload", "per-server", *common).output)
    w = per["workload"]
    assert w["name"] == "per-server" and w["load_basis"] == "server" and w["build_workload"] == {}
    assert w["compute_load_per_server"] == pytest.approx(0.4, rel=1e-12)
    # 100:1: each background class at 1/100 of the total inference rate
    rates = w["arrival_rates"]
    assert rates["background_compute"] == pytest.approx(
        (rates["alexnet"] + rates["resnet18"]) / 100, rel=1e-12
    )
    assert w["background_link_load"] == pytest.approx(0.4, rel=1e-12)  # comm_load defaults to the load
    pipe = json.loads(solve(*common).output)["workload"]
    if pipe["load_basis"] == "cluster":
        assert pipe["compute_load_per_server"] == pytest.approx(0.4 / 8, rel=1e-12)
        assert pipe["arrival_rates"]["alexnet"] == pytest.approx(rates["alexnet"] / 8, rel=1e-9)


def test_pipeline_workload_follows_params_yaml(tmp_path, monkeypatch):
    """Change nona.common.workload and the CLI solves the new workload (no value is copied into the CLI)."""
    doc = yaml.safe_load(paths.PARAMS.read_text())
    doc["nona"]["common"]["workload"] = {"load_basis": "server", "comm_load": 0.05}
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(doc))
    monkeypatch.setattr(paths, "PARAMS", f)
    out = json.loads(
        solve("--load", "0.3", "--models", "alexnet,resnet18", "--servers", "8", "--json").output
    )
    w = out["workload"]
    assert w["build_workload"] == {"load_basis": "server", "comm_load": 0.05}
    assert w["compute_load_per_server"] == pytest.approx(0.3, rel=1e-12)
    assert w["background_link_load"] == pytest.approx(0.05, rel=1e-12)
    # --comm-load overrides the params value for this run only
    out = json.loads(
        solve(
            "--load", "0.3", "--models", "alexnet,resnet18", "--servers", "8", "--comm-load", "0.1", "--json"
        ).output
    )
    assert out["workload"]["background_link_load"] == pytest.approx(0.1, rel=1e-12)


def test_out_file_is_the_json_without_timings(tmp_path):
    f = tmp_path / "t.json"
    r = solve("--load", "0.3", "--models", "alexnet,resnet18", "--servers", "8", "--json", "--out", str(f))
    assert r.exit_code == 0, r.output
    printed, written = json.loads(r.output), json.loads(f.read_text())
    assert {k: v for k, v in printed.items() if k not in ("kernel_load_s", "solve_s")} == written
    assert "kernel_load_s" not in written and "workload" in written


def test_bad_workload_and_profile_are_refused():
    r = solve("--workload", "cluster")
    assert r.exit_code != 0 and "'cluster' is not one of 'pipeline', 'per-server'" in r.output
    r = solve("--profile", "huge", "--models", "alexnet")
    assert r.exit_code != 0 and "unknown profile 'huge'" in r.output


def test_text_output_names_the_workload_and_the_kernel_load():
    r = solve("--load", "0.3", "--models", "alexnet,resnet18", "--servers", "8", "--workload", "per-server")
    assert r.exit_code == 0, r.output
    assert "per-server workload (load basis server" in r.output and "compiled kernels loaded" in r.output


def test_a_model_subset_keeps_only_its_own_hardware_scaling(tmp_path, monkeypatch):
    """A pipeline workload that rescales GPT-2's task times still solves a subset without GPT-2
    (the scaling is dropped, and says so); with GPT-2 chosen it is applied."""
    doc = yaml.safe_load(paths.PARAMS.read_text())
    doc["nona"]["common"]["workload"] = {"load_basis": "server", "time_scale": {"gpt2": 0.5, "alexnet": 2.0}}
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(doc))
    monkeypatch.setattr(paths, "PARAMS", f)
    r = solve("--load", "0.3", "--models", "alexnet,resnet18", "--servers", "8", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["workload"]["build_workload"]["time_scale"] == {"alexnet": 2.0}
    plain = json.loads(
        solve(
            "--load",
            "0.3",
            "--models",
            "alexnet,resnet18",
            "--servers",
            "8",
            "--workload",
            "per-server",
            "--json",
        ).output
    )
    # alexnet's tasks twice as long: its predicted JCT (one contracted task, no split) doubles
    assert out["classes"]["alexnet"]["predicted_jct_s"] == pytest.approx(
        2 * plain["classes"]["alexnet"]["predicted_jct_s"], rel=1e-9
    )
