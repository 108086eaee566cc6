"""Nona's experiment driver: module layout without import loops, sweeps equal on every executor,
the figures' ratio helpers."""

from __future__ import annotations

import ast
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import schedlab.nona
from schedlab.nona import experiments
from schedlab.parallel import Executor

NONA = Path(schedlab.nona.__file__).parent


def module_level_imports(path: Path, package: str = "schedlab.nona") -> set[str]:
    """Modules of ``package`` that ``path`` imports at module level (not inside functions)."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        out |= {n for n in names if n.startswith(package + ".") and _is_module(n)}
    return out


def all_imports(path: Path) -> set[str]:
    """Every ``schedlab.nona`` module ``path`` imports, at any level (lazy imports included)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return {n for n in out if n.startswith("schedlab.nona.") and _is_module(n)}


def _is_module(name: str) -> bool:
    rel = Path(*name.split(".")[2:])
    return (NONA / rel).with_suffix(".py").is_file() or (NONA / rel / "__init__.py").is_file()


def _module_name(path: Path) -> str:
    rel = path.relative_to(NONA).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["schedlab", "nona", *parts])


def test_no_module_level_import_cycle_in_nona():
    graph = {_module_name(p): module_level_imports(p) for p in NONA.rglob("*.py")}
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        if state.get(m) == 2:
            return
        if state.get(m) == 1:
            raise AssertionError("import loop: " + " -> ".join(trail[trail.index(m) :] + [m]))
        state[m] = 1
        for n in sorted(graph.get(m, ())):
            visit(n, trail + [m])
        state[m] = 2

    for m in sorted(graph):
        visit(m, [])


def test_expert_is_imported_only_by_the_driver():
    """The table format and the schemes never import the Expert or the driver, even lazily;
    the Expert never imports the driver (the loop schedulers <-> expert is gone)."""
    for name in ("tables.py", "schedulers.py", "sim.py"):
        bad = all_imports(NONA / name) & {"schedlab.nona.expert", "schedlab.nona.experiments"}
        assert not bad, f"{name} imports {bad}"
    assert "schedlab.nona.experiments" not in all_imports(NONA / "expert.py")


def test_each_nona_module_imports_first_in_a_fresh_interpreter():
    code = "; ".join(f"import schedlab.nona.{m}" for m in ("expert", "schedulers", "tables", "experiments"))
    for first in ("expert", "schedulers", "tables", "experiments"):
        r = subprocess.run(
            [sys.executable, "-c", f"import schedlab.nona.{first}; {code}"], capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr


# the columns the figure notebooks move to results/nona/timings/: if the simulator ever reports
# another wall-clock figure, the serial/parallel equality below fails until it is listed there
WALL_CLOCK = list(experiments.TIMING_COLUMNS)


def small_sweep(tmp_path: Path, executor) -> tuple[pd.DataFrame, dict]:
    setup = experiments.FigureSweep(
        schemes=["nona", "nona_star", "expert", "random", "spark_fair", "decima_retrained"],
        servers=8,
        duration=2.0,
        seed=4,
        models=["alexnet", "resnet18"],
        expert_budget=3,
        expert_duration=1.0,
        workload={"per_sample": True},
        star_point=(0.3, 10.0),
        tables_dir=tmp_path,
    )
    rows, jobs = experiments.sweep(
        [{"load": 0.3, "bandwidth_gbps": 10.0}, {"load": 0.6, "bandwidth_gbps": 5.0}],
        setup,
        keep_jobs=True,
        executor=executor,
        progress=False,
    )
    return rows.drop(columns=WALL_CLOCK), jobs


def test_sweep_gives_the_same_numbers_in_one_process_and_in_two(tmp_path):
    serial, serial_jobs = small_sweep(tmp_path / "serial", 1)
    with Executor(workers=2) as ex:
        two, two_jobs = small_sweep(tmp_path / "two", ex)
    # rows in the order of points x schemes, whatever the order tasks finish in
    assert (
        list(serial.scheme) == ["nona", "nona_star", "expert", "random", "spark_fair", "decima_retrained"] * 2
    )
    assert list(serial.load) == [0.3] * 6 + [0.6] * 6
    tables = ["tables"]  # each run wrote its tables into its own folder
    pd.testing.assert_frame_equal(serial.drop(columns=tables), two.drop(columns=tables), check_exact=True)
    assert list(serial_jobs) == list(two_jobs) and len(serial_jobs) == 10  # decima_retrained did not run
    for k in serial_jobs:
        pd.testing.assert_frame_equal(serial_jobs[k], two_jobs[k], check_exact=True)
    unavailable = serial[serial.scheme == "decima_retrained"].status
    assert unavailable.str.contains("pass decima_weights").all()
    # the tables solved and searched here (simulation inputs, DVC outputs) hold no wall-clock time
    written = sorted(p.name for p in (tmp_path / "serial").glob("*.json"))
    assert any(n.startswith("nona_") for n in written) and any(n.startswith("expert_") for n in written)
    for name in written:
        assert (tmp_path / "serial" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    assert serial[serial.scheme != "decima_retrained"].mean_jct_s.notna().all()


def test_missing_decima_weights_is_a_status_row(tmp_path):
    setup = experiments.FigureSweep(
        schemes=["random", "decima_retrained"],
        servers=4,
        duration=0.5,
        seed=0,
        models=["alexnet"],
        tables_dir=tmp_path,
        decima_duration=None,
        decima_weights=tmp_path / "no" / "weights.npz",
    )
    rows, _ = experiments.sweep([{"load": 0.3, "bandwidth_gbps": 10.0}], setup, progress=False, executor=1)
    assert rows.status.tolist()[0] == "ok"
    assert "do not exist" in rows.status.tolist()[1] and math.isnan(rows.mean_jct_s.tolist()[1])


def rows_for(points, values, key="load"):
    recs = []
    for x, per_scheme in zip(points, values):
        for s, v in per_scheme.items():
            recs.append(
                {
                    key: x,
                    "bandwidth_gbps": 10.0,
                    "scheme": s,
                    "status": "ok",
                    "mean_jct_s": v,
                    "p99_jct_s": 2 * v,
                    "inference_mean_jct_s": v,
                    "inference_p99_jct_s": 3 * v,
                }
            )
    return pd.DataFrame(recs)


def test_ratio_helpers():
    rows = rows_for(
        [0.1, 0.5],
        [
            {"nona": 1.0, "expert": 0.8, "random": 4.0, "decima": float("nan")},
            {"nona": 2.0, "expert": 2.0, "random": 3.0, "decima": float("nan")},
        ],
    )
    rows.loc[rows.scheme == "decima", "status"] = "unavailable: no weights"
    gains = experiments.max_gains(
        rows, "load", {"avg": "mean_jct_s", "p99": "p99_jct_s"}, ["random", "decima"]
    )
    assert gains == {"avg": {"random": 4.0}, "p99": {"random": 4.0}}
    assert experiments.expert_gap(rows, "load") == {"nona": pytest.approx(0.25)}
    assert experiments.status_note(rows) == "decima: unavailable: no weights"
    assert experiments.status_note(rows[rows.scheme != "decima"]) == ""
    assert experiments.decima_ran(rows) == []


def test_same_window_gains_divide_by_nona_on_the_short_window():
    rows = rows_for([0.1, 0.5], [{"nona": 1.0, "decima": 6.0}, {"nona": 2.0, "decima": 8.0}])
    short = rows_for([0.1, 0.5], [{"nona": 2.0}, {"nona": 4.0}])
    same = experiments.same_window_gains(rows, short, ["decima"], window_s=4.0, other_window_s=120.0)
    assert same["window_s"] == 4.0 and same["other_schemes_window_s"] == 120.0
    assert same["avg"] == {"decima": 3.0} and same["p99"] == {"decima": 3.0}


def test_paper_numbers_come_from_the_reference_file():
    fig3 = experiments.paper_numbers(experiments.PAPER_LAYOUT["fig3"])
    assert list(fig3) == ["avg", "p99", "expert_gap"]
    assert list(fig3["avg"]) == ["spark_fair", "opportunistic", "random", "decima"]
    with pytest.raises(KeyError, match="no entry with id 'fig9.nothing'"):
        experiments.paper_numbers({"x": "fig9.nothing"})


def test_figure_sweep_is_the_one_settings_object():
    s = experiments.FigureSweep(
        schemes=["nona", "decima"],
        servers=8,
        duration=4,
        seed=1,
        tables_dir="t",
        models=["alexnet"],
        decima_duration=1,
        warmup=0.3,
    )
    # canonical types whoever built it (params.yaml lists, ints): the same settings travel to every task
    assert (s.schemes, s.models, s.duration, s.decima_duration) == (
        ("nona", "decima"),
        ("alexnet",),
        4.0,
        1.0,
    )
    assert (s.window("nona"), s.warmup_of("nona")) == (4.0, 0.3)
    assert (s.window("decima"), s.warmup_of("decima")) == (1.0, pytest.approx(0.1))
    same = s.with_changes(decima_duration=None)
    assert (same.window("decima"), same.warmup_of("decima")) == (4.0, 0.3)  # like every other scheme
    assert experiments.FigureSweep(schemes=["nona"], servers=8, duration=4, seed=1, tables_dir="t").warmup_of(
        "nona"
    ) == pytest.approx(0.4)
    with pytest.raises(ValueError, match="unknown scheme 'fast'"):
        s.with_changes(schemes=["nona", "fast"])
    with pytest.raises(ValueError, match="servers must be a positive integer"):
        s.with_changes(servers=0)
    with pytest.raises(ValueError, match="duration must be > 0"):
        s.with_changes(duration=0)


def test_write_rows_keeps_wall_clock_columns_out_of_the_results(tmp_path):
    from schedlab.notebooks import Outputs

    out = Outputs(tmp_path, "nona/demo")
    rows = pd.DataFrame(
        {
            "load": [0.5, 0.5],
            "bandwidth_gbps": [10.0, 10.0],
            "scheme": ["nona", "random"],
            "mean_jct_s": [0.2, 0.5],
            "wall_s": [1.5, 2.5],
            "events_per_s": [1e5, 2e5],
        }
    )
    kept = experiments.write_rows(out, rows, "demo.csv")
    assert list(kept.columns) == ["load", "bandwidth_gbps", "scheme", "mean_jct_s"]
    pd.testing.assert_frame_equal(pd.read_csv(out.results("demo.csv")), kept)
    times = pd.read_csv(out.timings("demo.csv"))
    assert list(times.columns) == [*experiments.ROW_KEYS, *experiments.TIMING_COLUMNS]
    assert times.wall_s.tolist() == [1.5, 2.5]


def jobs_of(jct: list[float], kind: str = "inference", job_class: str = "resnet18") -> pd.DataFrame:
    return pd.DataFrame({"jct": jct, "kind": kind, "job_class": job_class})


def test_fig5_gains_divide_each_p99_by_nonas_and_leave_out_what_did_not_run():
    background = jobs_of([1.0, 1.0, 1.0, 5.0], kind="background", job_class="background_compute")
    jobs = {
        "nona": pd.concat([jobs_of([1.0] * 100), background]),
        "random": pd.concat([jobs_of([4.0] * 100), background]),
        "decima": pd.concat([jobs_of([2.0] * 100), jobs_of([3.0] * 4, "background", "background_compute")]),
    }
    paper = {"inference_p99": {"random": 89}}
    g = experiments.fig5_gains(
        jobs, ["nona", "spark_fair", "random", "decima"], profile="default", paper=paper
    )
    assert list(g) == ["profile", "inference_p99", "paper", "background_p99_decima", "background_no_wait"]
    assert g["inference_p99"] == {"random": 4.0, "decima": 2.0}  # spark_fair did not run: no NaN entry
    assert g["background_p99_decima"] == pytest.approx(
        3.0 / float(pd.Series([1.0, 1.0, 1.0, 5.0]).quantile(0.99))
    )
    assert g["background_no_wait"] == {"nona": 0.75, "random": 0.75, "decima": 1.0}
    assert g["paper"] is paper and g["profile"] == "default"


def test_light_gains_count_nonas_mixed_subgraphs():
    jobs = {"nona": jobs_of([1.0] * 10), "spark_fair": jobs_of([3.0] * 10)}
    placements = pd.DataFrame({"scheme": ["nona", "nona", "nona_star"], "mixed": [True, False, True]})
    g = experiments.light_gains(jobs, placements, {"comm_load": 0.05})
    assert g == {"workload": {"comm_load": 0.05}, "inference_p99": {"spark_fair": 3.0}, "mixed_subgraphs": 1}
    with pytest.raises(KeyError, match="Nona did not run"):
        experiments.light_gains({"random": jobs_of([1.0])}, placements, {})


def test_decima_jct_rows_are_the_simulators_numbers_with_their_times_apart():
    import numpy as np

    from schedlab.nona import workload as W
    from schedlab.nona.schedulers import make_scheduler
    from schedlab.nona.sim import simulate

    table = experiments.decima_jct(
        ["alexnet"],
        [0.3, 0.5],
        ["random", "spark_fair"],
        servers=4,
        bandwidth_gbps=10.0,
        duration=0.5,
        warmup=0.05,
        seed=3,
        message_passing="spark-sched-sim",
    )
    assert table[["load", "scheme"]].values.tolist() == [
        [0.3, "random"],
        [0.3, "spark_fair"],
        [0.5, "random"],
        [0.5, "spark_fair"],
    ]
    assert set(experiments.DECIMA_TIMING_COLUMNS) <= set(table.columns)
    assert (table.wall_s > 0).all() and table.policy_ms_per_decision.isna().all()  # no Decima row here
    cluster = W.Cluster(servers=4, bandwidth_gbps=10.0)
    direct = simulate(
        W.build_workload(models=("alexnet",), load=0.5, cluster=cluster),
        cluster,
        make_scheduler("spark_fair"),
        duration=0.5,
        warmup=0.05,
        rng=np.random.default_rng(3),
    ).summary()
    row = table.iloc[3]
    assert (row.jobs, row.mean_jct_s, row.p99_jct_s) == (
        direct["jobs"],
        direct["mean_jct_s"],
        direct["p99_jct_s"],
    )
    with pytest.raises(ValueError, match="load must be in"):
        experiments.decima_jct(
            ["alexnet"],
            [1.5],
            ["random"],
            servers=4,
            bandwidth_gbps=10.0,
            duration=0.5,
            warmup=0.05,
            seed=3,
            message_passing="spark-sched-sim",
        )
