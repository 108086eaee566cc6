"""Every bad input to a ``schedlab`` command ends in one clear line (what was wrong, which
file/option/field, what was expected), a non-zero exit, no traceback, and nothing written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from schedlab import paths
from schedlab.cli import main


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def clean_failure(res, *needles: str) -> str:
    """The error line of a failed command; the run must have failed without a traceback, with
    exactly one ``Error:`` line holding every needle."""
    assert res.exit_code not in (0, None), res.output
    assert isinstance(res.exception, SystemExit), repr(res.exception)  # click's exit, not a crash
    assert "Traceback" not in res.output, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, res.output
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


def _chattr(flag: str, path: Path) -> bool:
    """``chattr flag path``; whether it worked (needs root and a file system with the attribute)."""
    import subprocess

    exe = shutil.which("chattr")
    return bool(exe) and subprocess.run([exe, flag, str(path)], capture_output=True).returncode == 0


@pytest.fixture()
def ro_base(tmp_path):
    """``tmp_path`` holding a read-only folder ``ro/``: mode 0555, and immutable when the tests run
    as root (root writes into a 0555 folder; not into an immutable one)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    immutable = os.geteuid() == 0 and _chattr("+i", ro)
    if os.geteuid() == 0 and not immutable:
        ro.chmod(0o755)
        pytest.skip("running as root without chattr +i: no folder is read-only for this process")
    try:
        yield tmp_path
    finally:
        if immutable:
            _chattr("-i", ro)
        ro.chmod(0o755)


def _trace(base: Path) -> Path:
    p = base / "trace.csv"
    p.write_text("app_id,submit_time,service,num_jobs,sleep_time\n0,0,100,1,0\n1,5,200,2,0\n")
    return p


# Command builders: small valid defaults, so that each test names only what it varies.


def pcs_simulate(trace: Path, out: Path, *extra: str) -> list[str]:
    """``schedlab pcs simulate`` of ``trace`` under FIFO into ``out``."""
    return ["pcs", "simulate", "--trace", str(trace), "--policy", "FIFO", "--out", str(out), *extra]


def pcs_pareto(trace: Path, out: Path, *extra: str) -> list[str]:
    """``schedlab pcs pareto`` of ``trace`` over average JCT and prediction error into ``out``."""
    objectives = ["--objectives", "jct:avg", "pred_err:avg"]
    return ["pcs", "pareto", "--trace", str(trace), *objectives, *extra, "--out", str(out)]


def pcs_workload(out: Path) -> list[str]:
    """``schedlab pcs workload gavel`` of 3 applications into ``out``."""
    return ["pcs", "workload", "gavel", "--num-apps", "3", "--out", str(out)]


def nona_simulate(out: Path, *extra: str, scheme: str = "random") -> list[str]:
    """``schedlab nona simulate`` of ``scheme`` at load 0.5 for 1 s (per-server workload) into ``out``."""
    point = ["--load", "0.5", "--workload", "per-server", "--duration", "1"]
    return ["nona", "simulate", "--scheme", scheme, *point, *extra, "--out", str(out)]


def polaris_grid(sample: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    """``schedlab polaris grid`` of ``sample`` into ``out``, caching its runs in ``cache``."""
    return ["polaris", "grid", str(sample), str(out), "--cache", str(cache), *extra]


def polaris_train(sample: Path, grid: Path, out: Path, cache: Path) -> list[str]:
    """``schedlab polaris train`` on ``sample`` and the grid table ``grid`` into ``out``."""
    return ["polaris", "train", str(sample), str(grid), str(out), "--cache", str(cache)]


def _writing_commands(base: Path) -> dict[str, list[str]]:
    """Every command that writes, with its output in the read-only folder ``base/ro``."""
    ro = base / "ro"
    return {
        "pcs simulate": pcs_simulate(_trace(base), ro / "x.csv"),
        "pcs workload": pcs_workload(ro / "w.csv"),
        "nona solve": ["nona", "solve", "--workload", "per-server", "--out", str(ro / "s.json")],
        "nona simulate": nona_simulate(ro / "r.parquet"),
        "polaris synthesize": ["polaris", "synthesize", str(ro / "trace")],
        "compare --out-dir": ["compare", "nona", "--out-dir", str(ro / "cmp")],
        # and every other command that writes
        "pcs pareto": pcs_pareto(_trace(base), ro / "front.csv"),
        "pcs pick": ["pcs", "pick", str(_trace(base)), "--preference", "jct", "--out", str(ro / "pick.json")],
        "polaris ingest": ["polaris", "ingest", str(base), str(ro / "work")],
        "polaris sample": ["polaris", "sample", str(_trace(base)), str(ro / "s.parquet")],
        "polaris grid": polaris_grid(_trace(base), ro / "g.csv", base / "c"),
        "polaris train": polaris_train(_trace(base), _trace(base), ro / "m.joblib", base / "c"),
        "polaris predict": ["polaris", "predict", str(_trace(base)), str(_trace(base)), str(ro / "p.csv")],
        "scorecard --out-dir": ["scorecard", "--out-dir", str(ro / "card")],
        "notebook run --output-root": ["notebook", "run", "pcs/fig11", "--output-root", str(ro / "root")],
    }


@pytest.mark.parametrize(
    "command",
    [
        "pcs simulate",
        "pcs workload",
        "nona solve",
        "nona simulate",
        "polaris synthesize",
        "compare --out-dir",
        "pcs pareto",
        "pcs pick",
        "polaris ingest",
        "polaris sample",
        "polaris grid",
        "polaris train",
        "polaris predict",
        "scorecard --out-dir",
        "notebook run --output-root",
    ],
)
def test_read_only_output_folder_fails_before_any_work(ro_base, command, monkeypatch):
    # the solver and the simulator must never start: they would run to the end and then fail
    from schedlab.nona import experiments, optimise

    def never(*a, **k):
        raise AssertionError("work started before the output folder was checked")

    monkeypatch.setattr(experiments, "run_point", never)
    monkeypatch.setattr(optimise, "solve_point", never)
    args = _writing_commands(ro_base)[command]
    before = files_under(ro_base)
    res = CliRunner().invoke(main, args)
    line = clean_failure(res, str(ro_base / "ro"), "not writable", "expected a writable folder")
    assert line.count("\n") == 0
    assert files_under(ro_base) == before


def test_a_file_in_the_way_of_the_output_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    res = CliRunner().invoke(main, pcs_workload(tmp_path / "f" / "w.csv"))
    clean_failure(res, "--out", f"{tmp_path / 'f'} is a file, not a folder")
    res = CliRunner().invoke(main, pcs_workload(tmp_path))
    clean_failure(res, "--out", "is a directory")  # click.Path(dir_okay=False) says so first
    assert files_under(tmp_path) == {"f"}


def test_writable_check_passes_where_the_writer_succeeds(tmp_path):
    # the positive control: a missing sub-folder of a writable folder is fine (the writer creates it)
    res = CliRunner().invoke(main, pcs_workload(tmp_path / "new" / "w.csv"))
    assert res.exit_code == 0, res.output
    assert (tmp_path / "new" / "w.csv").read_text().startswith("app_id,")


# -- polaris grid --min-cluster-sizes -------------------------------------------------------------


def _feature_sample(path: Path, rows: int, seed: int = 0) -> Path:
    from schedlab.polaris.schema import FEATURES

    rng = np.random.default_rng(seed)
    pd.DataFrame(rng.random((rows, len(FEATURES))), columns=list(FEATURES)).to_parquet(path)
    return path


@pytest.mark.parametrize(
    "sizes, expected",
    [
        ("abc", "'abc' is not an integer"),
        ("0,-5", "0 is not a positive integer"),
        ("50,,100", "has an empty item"),
    ],
)
def test_grid_min_cluster_sizes_must_be_positive_integers(tmp_path, sizes, expected):
    sample = _feature_sample(tmp_path / "s.parquet", 20)
    res = CliRunner().invoke(
        main, polaris_grid(sample, tmp_path / "g.csv", tmp_path / "cache", "--min-cluster-sizes", sizes)
    )
    assert res.exit_code == 2
    clean_failure(res, "--min-cluster-sizes", expected, "expected positive integers")
    assert files_under(tmp_path) == {"s.parquet"}


def test_grid_min_cluster_size_larger_than_the_rows_writes_nothing(tmp_path):
    sample = _feature_sample(tmp_path / "s.parquet", 20)
    extra = ["--min-cluster-sizes", "5,21", "--algorithms", "hdbscan"]
    res = CliRunner().invoke(main, polaris_grid(sample, tmp_path / "g.csv", tmp_path / "cache", *extra))
    clean_failure(res, "--min-cluster-sizes", "21 is larger than the 20 rows", "expected sizes <= 20")
    assert files_under(tmp_path) == {"s.parquet"}


def test_grid_optics_sizes_are_checked_against_the_subsample(tmp_path):
    sample = _feature_sample(tmp_path / "s.parquet", 30)
    extra = ["--min-cluster-sizes", "12", "--algorithms", "optics", "--optics-subsample", "10"]
    res = CliRunner().invoke(main, polaris_grid(sample, tmp_path / "g.csv", tmp_path / "cache", *extra))
    clean_failure(res, "12 is larger than the 10 rows optics clusters")
    assert files_under(tmp_path) == {"s.parquet"}


# -- files of other columns ----------------------------------------------------------------------


def test_polaris_sample_on_a_parquet_of_other_columns(tmp_path):
    joined = tmp_path / "j.parquet"
    pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_parquet(joined)
    res = CliRunner().invoke(main, ["polaris", "sample", str(joined), str(tmp_path / "out.parquet")])
    clean_failure(
        res, str(joined), "missing column(s) row, workload", "expected the joined trace", "its columns: a, b"
    )
    assert files_under(tmp_path) == {"j.parquet"}  # not even DuckDB's spill folder


def test_polaris_train_with_a_grid_csv_of_other_columns(tmp_path):
    from schedlab.polaris.schema import METADATA

    sample = tmp_path / "s.parquet"
    pd.DataFrame({**{c: ["v"] for c in METADATA}, "duration": [1.0]}).to_parquet(sample)
    grid_csv = tmp_path / "g.csv"
    grid_csv.write_text("x,y\n1,2\n")
    res = CliRunner().invoke(main, polaris_train(sample, grid_csv, tmp_path / "m.joblib", tmp_path / "cache"))
    clean_failure(
        res,
        str(grid_csv),
        "missing column(s) algorithm, transform, metric",
        "scores_v1",
        "expected the grid table written by `schedlab polaris grid`",
    )
    assert files_under(tmp_path) == {"s.parquet", "g.csv"}


def test_polaris_train_with_a_sample_of_other_columns(tmp_path):
    sample = tmp_path / "s.parquet"
    pd.DataFrame({"a": [1.0]}).to_parquet(sample)
    grid_csv = tmp_path / "g.csv"
    grid_csv.write_text("algorithm,transform,metric,min_cluster_size,key,scores_v1\n")
    res = CliRunner().invoke(main, polaris_train(sample, grid_csv, tmp_path / "m.joblib", tmp_path / "cache"))
    clean_failure(res, str(sample), "missing column(s) job_name, user, task_name, group, workload, duration")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "empty file"),
        ("num_classes,class_thresholds,class_rates,zeta_min,delta,jct_avg\n", "has a header but no rows"),
        ("a,b\n1,2\n", "missing column(s) num_classes, class_thresholds"),
        ("num_classes,class_thresholds,class_rates,zeta_min,delta\n1,inf,1,0,0\n", "no objective column"),
    ],
)
def test_pcs_pick_on_an_empty_or_foreign_csv(tmp_path, text, expected):
    front = tmp_path / "front.csv"
    front.write_text(text)
    res = CliRunner().invoke(
        main, ["pcs", "pick", str(front), "--preference", "jct", "--out", str(tmp_path / "pick.json")]
    )
    clean_failure(res, str(front), expected, "expected a front CSV written by `schedlab pcs pareto --out`")
    assert files_under(tmp_path) == {"front.csv"}


# -- nona simulate --decima-weights ----------------------------------------------------------------


def _junk_weights(kind: str, path: Path) -> Path:
    if kind == "text":
        path.write_text("junk\n")
    elif kind == "pickled":
        np.savez(path, a=np.array([{"x": 1}], dtype=object))
    elif kind == "npy":
        with open(path, "wb") as fh:
            np.save(fh, np.zeros(3))
    elif kind == "truncated":
        np.savez(path, a=np.zeros(100))
        path.write_bytes(path.read_bytes()[:300])
    elif kind == "other arrays":
        np.savez(path, a=np.zeros(2))
    return path


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("text", "not a Decima weights file"),
        ("pickled", "not a Decima weights file"),
        ("npy", "not a Decima weights file"),
        ("truncated", "not a Decima weights file"),
        ("other arrays", "state dict keys differ from Decima's layout; missing 42 of 42"),
    ],
)
def test_nona_simulate_junk_decima_weights(tmp_path, kind, expected, monkeypatch):
    from schedlab.nona import sim  # experiments imports simulate from it at call time

    monkeypatch.setattr(sim, "simulate", lambda *a, **k: pytest.fail("simulated with junk weights"))
    weights = _junk_weights(kind, tmp_path / "junk.npz")
    args = nona_simulate(tmp_path / "o.parquet", "--decima-weights", str(weights), scheme="decima_retrained")
    res = CliRunner().invoke(main, args)
    line = clean_failure(res, str(weights), expected)
    assert "allow_pickle" not in res.output and len(line) < 400
    assert files_under(tmp_path) == {"junk.npz"}


def test_a_valid_weights_file_still_loads(tmp_path):
    # the positive control of the checks above: every array of the layout, as torch saves it
    from schedlab.nona.decima.policy import load_weights
    from test_parser_fuzz import DECIMA_NPZ

    path = tmp_path / "w.npz"
    path.write_bytes(DECIMA_NPZ)
    assert load_weights(path).num_parameters == 20802


# -- output format from the extension --------------------------------------------------------------


def test_nona_simulate_output_format_follows_the_extension(tmp_path):
    res = CliRunner().invoke(main, nona_simulate(tmp_path / "x.xlsx", "--seed", "3"))
    clean_failure(res, "--out", "unsupported extension '.xlsx'; expected .parquet or .csv")
    assert files_under(tmp_path) == set()
    for name in ("x.csv", "x.parquet"):
        res = CliRunner().invoke(main, nona_simulate(tmp_path / name, "--seed", "3"))
        assert res.exit_code == 0, res.output
    as_csv, as_parquet = pd.read_csv(tmp_path / "x.csv"), pd.read_parquet(tmp_path / "x.parquet")
    assert (tmp_path / "x.parquet").read_bytes()[:4] == b"PAR1" and len(as_csv) > 0
    # the same run in either format: equal columns and values (CSV floats round-trip exactly)
    assert list(as_csv.columns) == list(as_parquet.columns)
    for col in as_csv.columns:
        assert as_csv[col].astype(str).tolist() == as_parquet[col].astype(str).tolist(), col


def test_polaris_predict_output_format_follows_the_extension(tmp_path):
    import joblib
    from polaris._rows import profile_meta

    from schedlab.polaris.classifier import ProfileClassifier

    meta, prof = profile_meta(120)
    clf = ProfileClassifier(n_estimators=5).fit(meta, prof, np.arange(len(meta), dtype=float))
    joblib.dump(clf, tmp_path / "m.joblib")
    meta.head(5).to_csv(tmp_path / "jobs.csv", index=False)
    base = ["polaris", "predict", str(tmp_path / "m.joblib"), str(tmp_path / "jobs.csv")]
    res = CliRunner().invoke(main, [*base, str(tmp_path / "p.xlsx")])
    clean_failure(res, "OUT", "p.xlsx: unsupported extension '.xlsx'; expected .parquet or .csv")
    assert files_under(tmp_path) == {"m.joblib", "jobs.csv"}
    for name in ("p.csv", "p.parquet"):
        assert CliRunner().invoke(main, [*base, str(tmp_path / name)]).exit_code == 0
    as_csv, as_parquet = pd.read_csv(tmp_path / "p.csv"), pd.read_parquet(tmp_path / "p.parquet")
    assert len(as_parquet) == 5 and {"profile", "expected_duration"} <= set(as_parquet.columns)
    pd.testing.assert_frame_equal(as_csv, as_parquet, check_dtype=False)


# -- schedlab scorecard --root ----------------------------------------------------------------------


def test_scorecard_root_without_reference(tmp_path):
    res = CliRunner().invoke(main, ["scorecard", "--root", str(tmp_path)])
    clean_failure(
        res, "--root", f"{tmp_path} has no reference/ folder", "expected a folder holding reference/"
    )
    (tmp_path / "reference").mkdir()  # present but empty: the missing file is named
    res = CliRunner().invoke(main, ["scorecard", "--root", str(tmp_path)])
    clean_failure(res, str(tmp_path / "reference"), ".yaml: missing", "expected a folder holding reference/")
    assert files_under(tmp_path) == {"reference"}


# -- trace app_ids ----------------------------------------------------------------------------------

HEADER = "app_id,submit_time,service,num_jobs,sleep_time\n"


@pytest.mark.parametrize(
    "rows, expected",
    [
        (
            "0,0,100,1,0\n1,5,200,2,5\n1,6,50,1,1\n",
            "line 4: field 'app_id' = 1 repeats line 3; expected one unique",
        ),
        ("0,0,100,1,0\nx,5,200,2,5\n", "line 3: field 'app_id' = 'x' is not a valid int"),
        ("0,0,100,1,0\n1.5,5,200,2,5\n", "line 3: field 'app_id' = '1.5' is not a valid int"),
        # header names swapped: the times land in app_id
        ("0.0,0,100,1,0\n", "line 2: field 'app_id' = '0.0' is not a valid int"),
    ],
)
def test_trace_with_repeated_or_non_integer_app_ids(tmp_path, rows, expected):
    trace = tmp_path / "t.csv"
    trace.write_text(HEADER + rows)
    res = CliRunner().invoke(main, pcs_simulate(trace, tmp_path / "o.csv"))
    clean_failure(res, str(trace), expected)
    assert files_under(tmp_path) == {"t.csv"}


def test_trace_ids_in_any_order_are_accepted(tmp_path):
    # ids need only be unique integers (negative, gaps, any order): the control of the test above
    from schedlab.pcs import load_trace

    trace = tmp_path / "t.csv"
    trace.write_text(HEADER + "7,0,100,1,0\n-3,5,200,2,5\n1000,6,50,1,1\n")
    assert len(load_trace(trace)) == 3


# -- a job too large to finish ----------------------------------------------------------------------


def test_a_job_that_can_never_finish_is_named(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text(HEADER + "0,0,100,1,0\n1,5,1e308,2,5\n2,6,50,1,1\n")
    for extra in ([], ["--predict"]):
        res = CliRunner().invoke(main, pcs_simulate(trace, tmp_path / "o.csv", *extra))
        clean_failure(
            res,
            "t.csv: line 3: field 'service' = 1e+308: job 1 is too large to ever finish",
            "best speedup (2, at most 2 GPUs)",
            "expected a size below 4e+11 GPU-seconds",
        )
    assert files_under(tmp_path) == {"t.csv"}


def test_the_size_limit_is_the_simulators_horizon():
    # just under the limit the simulator finishes the job (alone: the last event); at it, the
    # trace is refused, where the simulator would stop with "some job never finishes" and no name
    from schedlab.pcs import make_policy, simulate
    from schedlab.pcs.workload import TraceError, Workload
    from schedlab.pcs.world import NEVER_S

    limit = NEVER_S * 2  # LinearModel at 2 GPUs: speedup 2
    w = Workload.from_arrays(submit_s=[0, 5], service=[100.0, limit * (1 - 1e-9)], demand=[1, 2])
    df = simulate(w, make_policy("FIFO", None), 64)
    assert df.end_time.iloc[1] - df.start_time.iloc[1] == pytest.approx(limit * (1 - 1e-9) / 2, rel=1e-9)
    with pytest.raises(TraceError, match=r"arrays: row 1: field 'service' = 4e\+11: job 1 is too large"):
        Workload.from_arrays(submit_s=[0, 5], service=[100.0, limit], demand=[1, 2])


# -- SCHEDLAB_DASK pointing nowhere ----------------------------------------------------------------


def test_dask_address_with_nothing_listening_fails_fast(tmp_path, monkeypatch):
    import time

    monkeypatch.setenv("SCHEDLAB_DASK", "tcp://127.0.0.1:1")
    monkeypatch.setenv("SCHEDLAB_DASK_TIMEOUT", "1")
    t0 = time.perf_counter()
    res = CliRunner().invoke(main, pcs_pareto(_trace(tmp_path), tmp_path / "front.csv", "--num-jobs", "2"))
    took = time.perf_counter() - t0
    clean_failure(
        res,
        "$SCHEDLAB_DASK=tcp://127.0.0.1:1: no scheduler answered within 1 s",
        "expected the address of a running Dask scheduler",
        "unset $SCHEDLAB_DASK",
    )
    assert took < 15, took  # distributed's own default waits 30 s
    assert files_under(tmp_path) == {"trace.csv"}


def test_dask_timeout_must_be_positive(monkeypatch):
    from schedlab.parallel import dask_timeout

    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv("SCHEDLAB_DASK_TIMEOUT", bad)
        with pytest.raises(ValueError, match=r"\$SCHEDLAB_DASK_TIMEOUT must be a number of seconds > 0"):
            dask_timeout()
    monkeypatch.setenv("SCHEDLAB_DASK_TIMEOUT", "2.5")
    assert dask_timeout() == 2.5


# -- a relative --output-root -----------------------------------------------------------------------


def test_relative_output_root_is_resolved_once_against_the_working_directory(tmp_path, monkeypatch):
    from schedlab import notebooks

    seen = {}

    def fake_run(name, **kw):
        seen.update(kw)
        return kw["executed"]

    monkeypatch.setattr(notebooks, "run", fake_run)
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # outside the repository, where the kernel runs
    res = CliRunner().invoke(
        main, ["notebook", "run", "pcs/fig11", "--output-root", "scratch", "--profile", "paper"]
    )
    assert res.exit_code == 0, res.output
    # the results (the kernel's output_root) and the executed copy land under the same absolute root
    assert seen["output_root"] == elsewhere / "scratch" and seen["output_root"].is_absolute()
    assert seen["executed"] == elsewhere / "scratch" / "data" / "executed" / "pcs" / "fig11.ipynb"


def test_runner_makes_a_relative_output_root_absolute(tmp_path, monkeypatch):
    # the library entry point too: papermill gets the absolute root, the kernel's cwd is the repository
    import papermill

    from schedlab.notebooks import runner

    got = {}

    class Stop(Exception):
        pass

    def fake_execute(src, dst, parameters, **kw):
        got.update(parameters, cwd=kw["cwd"])
        raise Stop  # stop here: nothing else of the run matters to this test

    monkeypatch.setattr(papermill, "execute_notebook", fake_execute)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Stop):
        runner.run("pcs/fig11", output_root=Path("rel"), executed=tmp_path / "x.ipynb", profile="paper")
    assert got["output_root"] == str(tmp_path / "rel") and got["cwd"] != str(tmp_path)
    assert not (tmp_path / "x.ipynb").exists()


def test_grid_where_no_run_finds_a_cluster_writes_no_table(tmp_path):
    # 20 uniform rows, clusters of >= 10: every HDBSCAN run labels all rows noise
    sample = _feature_sample(tmp_path / "s.parquet", 20)
    extra = ["--min-cluster-sizes", "10", "--algorithms", "hdbscan"]
    res = CliRunner().invoke(main, polaris_grid(sample, tmp_path / "g.csv", tmp_path / "cache", *extra))
    clean_failure(
        res, "no scored runs for hdbscan", "found no cluster", "expected --min-cluster-sizes small enough"
    )
    assert not (tmp_path / "g.csv").exists()  # the per-run cache stays: a rerun resumes from it


# --- which project root: a mistyped $SCHEDLAB_ROOT, and two checkouts sharing one install ---


def _schedlab_cli(args, *, env, cwd):
    code = "import sys; from schedlab._entry import run; sys.argv = ['schedlab', *sys.argv[1:]]; run()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_schedlab_root_that_is_not_a_checkout(tmp_path, make):
    root = tmp_path / "nope"
    if make == "empty":
        root.mkdir()
    env = {**os.environ, "SCHEDLAB_ROOT": str(root)}
    res = _schedlab_cli(["--help"], env=env, cwd=tmp_path)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert "SCHEDLAB_ROOT" in line and str(root) in line and "dvc.yaml" in line
    assert ("does not exist" in line) == (make == "missing")


def test_a_command_says_which_checkout_it_uses(tmp_path):
    other = tmp_path / "other-checkout"
    (other / "lib").mkdir(parents=True)
    (other / "dvc.yaml").write_text("stages: {}\n")
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_ROOT"}
    res = _schedlab_cli(["--help"], env=env, cwd=other / "lib")
    assert res.returncode == 0, res.stderr
    assert f"using the project at {paths.ROOT}" in res.stderr and str(other) in res.stderr
    # inside the install's own checkout nothing is said
    res = _schedlab_cli(["--help"], env=env, cwd=paths.ROOT / "lib")
    assert res.returncode == 0 and res.stderr == ""


# --- a bad params.yaml value that only a cell can see: one line, and the failing run kept ---


def test_a_bad_value_fails_in_one_line_and_keeps_the_failing_run(tmp_path):
    import json

    out = tmp_path / "out"
    args = ["notebook", "run", "nona/table2", "--profile", "smoke", "--output-root", str(out)]
    res = CliRunner().invoke(main, [*args, "-p", "models", "[nosuchmodel]"])
    line = clean_failure(res, "nona/table2: cell", "ValueError", "nosuchmodel", "table2.failed.ipynb")
    assert len(res.output.strip().splitlines()[-1]) == len(line)  # the error is the last line, alone
    kept = out / "data/executed/nona/table2.failed.ipynb"
    outputs = [o for c in json.loads(kept.read_text())["cells"] for o in c.get("outputs", [])]
    assert any(o.get("output_type") == "error" and "nosuchmodel" in o.get("evalue", "") for o in outputs)
    assert not (out / "data/executed/nona/table2.ipynb").exists()  # no executed copy of a failed run
    # a good run afterwards replaces the failure with the executed copy
    assert CliRunner().invoke(main, args).exit_code == 0
    assert (out / "data/executed/nona/table2.ipynb").is_file() and not kept.exists()
