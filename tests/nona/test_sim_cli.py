"""`schedlab nona simulate`: clear errors before anything runs, records and summary."""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner

from schedlab.cli import main


def run(*args):
    return CliRunner().invoke(main, ["nona", "simulate", *args])


def test_bad_input_errors(tmp_path):
    out = str(tmp_path / "j.parquet")
    cases = [
        (["--scheme", "fifo", "--load", "0.5"], "unknown scheme 'fifo'"),
        (["--scheme", "random", "--load", "1.0"], "load must be in (0, 1)"),
        (["--scheme", "random", "--load", "0.5", "--bandwidth-gbps", "-1"], "bandwidth must be a positive"),
        (["--scheme", "nona", "--load", "0.5"], "needs probability tables"),
        (["--scheme", "nona", "--load", "0.5", "--tables", str(tmp_path / "none.json")], "does not exist"),
        (["--scheme", "random", "--load", "0.5", "--models", "nosuch"], "unknown Nona model 'nosuch'"),
    ]
    for args, msg in cases:
        r = run(*args, "--out", out)
        assert r.exit_code != 0 and msg in r.output, (args, r.output)
    assert not (tmp_path / "j.parquet").exists()  # nothing written


def test_simulate_writes_records_and_json(tmp_path):
    out = tmp_path / "j.parquet"
    r = run(
        "--scheme",
        "spark_fair",
        "--load",
        "0.4",
        "--servers",
        "8",
        "--duration",
        "20",
        "--seed",
        "3",
        "--models",
        "alexnet,resnet18",
        "--workload",
        "per-server",
        "--out",
        str(out),
        "--json",
    )
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    jobs = pd.read_parquet(out)
    assert summary["jobs"] == len(jobs) > 0
    assert abs(summary["mean_jct_s"] - jobs.jct.mean()) < 1e-12
    assert set(jobs.job_class) <= {"alexnet", "resnet18", "background_compute", "background_comm"}
    assert abs(summary["compute_load"] - 0.4) < 1e-9
    assert summary["workload"]["name"] == "per-server" and summary["workload"]["load_basis"] == "server"


def test_nona_loads_the_optimiser_json_and_refuses_another_workload(tmp_path):
    from schedlab.nona import optimise
    from schedlab.nona.workload import Cluster, build_workload

    c = Cluster(servers=8, bandwidth_gbps=10.0)
    w = build_workload(["alexnet", "resnet18"], load=0.4, cluster=c)
    tables = tmp_path / "load_0.4.json"
    tables.write_text(json.dumps(optimise.to_json(optimise.solve(w, c), 0.4)))
    common = [
        "--scheme",
        "nona",
        "--servers",
        "8",
        "--duration",
        "10",
        "--models",
        "alexnet,resnet18",
        "--workload",
        "per-server",
        "--tables",
        str(tables),
        "--out",
        str(tmp_path / "j.parquet"),
        "--json",
    ]
    bad = run("--load", "0.5", *common)
    assert bad.exit_code != 0 and "solved at arrival rate" in bad.output
    ok = run("--load", "0.4", *common)
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["scheme"] == "nona"


def test_default_workload_is_the_pipelines_and_matches_solve(tmp_path):
    """`solve` and `simulate` at their default (`--workload pipeline`) build the same workload: the
    tables solved by one are accepted by the other, and both report the same arrival rates; the
    per-server workload is a different one (its tables are refused)."""
    from schedlab.notebooks import stage_params

    basis = (stage_params("nona/fig3", None).values["workload"] or {}).get("load_basis", "server")
    tables = tmp_path / "t.json"
    common = ["--load", "0.4", "--servers", "8", "--models", "alexnet,resnet18"]
    solved = CliRunner().invoke(main, ["nona", "solve", *common, "--json", "--out", str(tables)])
    assert solved.exit_code == 0, solved.output
    r = run(
        "--scheme",
        "nona",
        *common,
        "--duration",
        "10",
        "--tables",
        str(tables),
        "--out",
        str(tmp_path / "j.parquet"),
        "--json",
    )
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    w = summary["workload"]
    assert w["name"] == "pipeline" and w["load_basis"] == basis
    assert w["arrival_rates"] == json.loads(solved.output)["workload"]["arrival_rates"]
    assert abs(summary["compute_load"] - (0.4 if basis == "server" else 0.4 / 8)) < 1e-9
    if basis != "server":
        other = run(
            "--scheme",
            "nona",
            *common,
            "--workload",
            "per-server",
            "--duration",
            "10",
            "--tables",
            str(tables),
            "--out",
            str(tmp_path / "k.parquet"),
        )
        assert other.exit_code != 0 and "solved at arrival rate" in other.output
