"""PCS preference interface and SPEA2 Pareto search."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from schedlab.pcs import metrics
from schedlab.pcs.artifacts import trace_0e4a51
from schedlab.pcs.configs import pareto_config
from schedlab.parallel import Executor
from schedlab.pcs.pareto import (
    HeuristicSpace,
    Objective,
    PreferenceError,
    RawSpace,
    c2,
    evaluate_config,
    parse_objectives,
    pareto_search,
    wfq_policy,
)
from schedlab.pcs.sim import simulate

OBJ = ["jct:avg", "pred_err:avg"]


@pytest.fixture(scope="module")
def w100():
    return trace_0e4a51(100)


@pytest.mark.parametrize(
    "text, msg",
    [
        ("latency:avg", "unknown metric 'latency'"),
        ("jct:p0", "percentile 0 outside (0, 100]"),
        ("jct:p100.5", "percentile 100.5 outside (0, 100]"),
        ("pred_err:median", "measure must be 'avg' or a percentile"),
    ],
)
def test_objective_errors(text, msg):
    with pytest.raises(PreferenceError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        Objective.parse(text)


def test_parse_objectives_forms_and_errors():
    objs = parse_objectives(["jct:avg", ("pred_err", "p99"), Objective("unfairness", "p50")])
    assert [o.label for o in objs] == ["jct_avg", "pred_err_p99", "unfairness_p50"]
    # repeated metric with different measures is allowed (paper §3.2)
    assert len(parse_objectives(["jct:avg", "jct:p99"])) == 2
    with pytest.raises(PreferenceError, match="at least two"):
        parse_objectives(["jct:avg"])
    with pytest.raises(PreferenceError, match="duplicate"):
        parse_objectives(["jct:avg", "JCT:avg"])


def test_objective_values_match_summary(w100):
    cfg = pareto_config("0e4a51", 5)
    df = simulate(w100, wfq_policy(cfg), 64, predict=True)
    s = metrics.summary(df)
    objs = parse_objectives(["jct:avg", "jct:p99", "pred_err:avg", "pred_err:p99", "unfairness:avg"])
    got = evaluate_config(cfg, w100, objs)
    np.testing.assert_array_equal(
        got, [s["avg_jct"], s["p99_jct"], s["avg_pred_error"], s["p99_pred_error"], s["avg_unfairness"]]
    )


def test_heuristic_bounds_match_authors():
    # authors' stored search for 0e4a51 (2001 jobs): T upper bound = C^2 + 1 = 10.8468...
    w = trace_0e4a51(2001)
    sp = HeuristicSpace.for_workload(w)
    assert sp.xu[0] == pytest.approx(10.846812332625863, rel=1e-12)
    np.testing.assert_array_equal(sp.xl, [0.001, -3.0, 0.0, 0.01])
    np.testing.assert_array_equal(sp.xu[1:], [3.0, 1.0, 0.9])
    # decoding the authors' member 5 variables gives the config behind Fig. 7's PCS-JCT
    df = pd.read_csv(
        __import__("schedlab.data", fromlist=["require"]).require(
            "pcs/pareto_search/wfq_pareto_fronts_workload2_2023-11.csv.gz"
        )
    )
    r = df[(df.file == "WFQ_trace_0e4a51_avg_pred_error_vs_avg_jct.pkl") & (df.solution_idx == 5)].iloc[0]
    got = sp.decode([r.T_cov, r.W_decay, r.clip_demand_factor, r.delta])
    ref = pareto_config("0e4a51", 5)
    assert got.thresholds == ref.thresholds and got.rates == ref.rates
    assert (got.zeta_min, got.delta) == (ref.zeta_min, ref.delta)


def test_c2_closed_form():
    assert c2([1.0, 3.0]) == pytest.approx(0.25)  # var 1, mean 2


def test_raw_space_decoding(w100):
    sp = RawSpace.for_workload(w100)
    assert len(sp.xl) == len(sp.xu) == len(sp.names) == 13
    x = np.array([0.5, 0.5, 0.9, 0.0, 1.0, 1, 1, 1, 1, 1, 1, 0.3, 0.2])
    c = sp.decode(x)
    sizes = np.asarray(sp.sizes)
    # duplicate 0.5 quantiles merge; a threshold must be int, > 0 and below the max size
    exp = sorted(
        {float(int(v)) for v in np.quantile(sizes, [0.0, 0.5, 0.9, 1.0]) if 0 < int(v) < sizes.max()}
    )
    assert c.thresholds[:-1] == tuple(exp) and c.thresholds[-1] == np.inf
    assert sum(c.rates) == 1 and (c.zeta_min, c.delta) == (0.3, 0.2)


def _dominated(F):
    return [any(np.all(G <= f) and np.any(G < f) for G in F) for f in F]


@pytest.fixture(scope="module")
def full_run(w100):
    return pareto_search(
        w100, OBJ, budget=280, rng=np.random.default_rng(7), executor=Executor(workers=1), progress=False
    )


def test_search_front_is_pareto_and_applies(full_run, w100):
    f = full_run
    assert f.n_evaluations == 70 + 105 + 105 == len(f.evaluations)
    F = f.table[["jct_avg", "pred_err_avg"]].to_numpy()
    assert len(f) >= 2 and not any(_dominated(F))
    # every front point was evaluated, with exactly these objective values
    ev = f.evaluations
    for _, row in f.table.iterrows():
        hit = ev[
            (ev["T"] == row["T"])
            & (ev["W"] == row["W"])
            & (ev["zeta_min"] == row["zeta_min"])
            & (ev["delta"] == row["delta"])
        ]
        assert len(hit) >= 1 and (hit["jct_avg"] == row["jct_avg"]).all()
    # SetWFQConfig: the chosen config re-simulated gives its objective values
    df = simulate(w100, f.policy(0), 64, predict=True)
    s = metrics.summary(df)
    assert (s["avg_jct"], s["avg_pred_error"]) == (F[0, 0], F[0, 1])


def test_search_seeded(full_run, w100):
    again = pareto_search(
        w100, OBJ, budget=280, rng=np.random.default_rng(7), executor=1, progress=False
    )  # a worker count: resolved
    pd.testing.assert_frame_equal(again.table, full_run.table)
    other = pareto_search(w100, OBJ, budget=70, rng=np.random.default_rng(8), executor=1, progress=False)
    assert not other.evaluations["T"].head(70).equals(full_run.evaluations["T"].head(70))


class _Stop(Exception):
    pass


class _Counting(Executor):
    def __init__(self):
        super().__init__(workers=1)
        self.n = 0

    def map(self, fn, items, *args, **kwargs):
        items = list(items)
        self.n += len(items)
        return super().map(fn, items, *args, **kwargs)


def test_resume_after_interrupt_gives_same_front(full_run, w100, tmp_path):
    def stop_after_2(gen, n):
        if gen == 2:
            raise _Stop

    with pytest.raises(_Stop):
        pareto_search(
            w100,
            OBJ,
            budget=280,
            rng=np.random.default_rng(7),
            executor=1,
            checkpoint_dir=tmp_path,
            progress=False,
            on_generation=stop_after_2,
        )
    ex = _Counting()
    res = pareto_search(w100, OBJ, budget=280, executor=ex, checkpoint_dir=tmp_path, progress=False)
    assert ex.n == 105  # only the last generation was evaluated
    pd.testing.assert_frame_equal(res.table, full_run.table)
    pd.testing.assert_frame_equal(res.evaluations, full_run.evaluations)
    with pytest.raises(ValueError, match="checkpoint is for"):
        pareto_search(
            w100, ["jct:avg", "pred_err:p99"], budget=280, executor=1, checkpoint_dir=tmp_path, progress=False
        )


def test_two_local_workers_identical(full_run, w100):
    par = pareto_search(
        w100, OBJ, budget=280, rng=np.random.default_rng(7), executor=Executor(workers=2), progress=False
    )
    pd.testing.assert_frame_equal(par.table, full_run.table)


def test_raw_space_search_runs(w100):
    f = pareto_search(
        w100,
        ["jct:avg", "pred_err:p99"],
        budget=70,
        space="raw",
        rng=np.random.default_rng(0),
        executor=1,
        progress=False,
    )
    assert f.n_evaluations == 70 and len(f) >= 1
    F = f.table[["jct_avg", "pred_err_p99"]].to_numpy()
    assert not any(_dominated(F))


def test_dask_two_workers_identical(full_run, w100):
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        # a Client is resolved to a Dask executor (schedlab.parallel.resolve)
        res = pareto_search(
            w100, OBJ, budget=280, rng=np.random.default_rng(7), executor=client, progress=False
        )
    pd.testing.assert_frame_equal(res.table, full_run.table)


def test_cli_pareto(tmp_path):
    from click.testing import CliRunner

    from schedlab import data
    from schedlab.cli import main

    trace = str(data.require("pcs/workload2_philly_traces/trace_0e4a51.csv.gz"))
    out = tmp_path / "front.csv"
    args = [
        "pcs",
        "pareto",
        "--trace",
        trace,
        "--objectives",
        "jct:avg",
        "pred_err:avg",
        "--budget",
        "70",
        "--num-jobs",
        "100",
        "--workers",
        "1",
        "--resume",
        str(tmp_path / "ck"),
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    df = pd.read_csv(out)
    assert {"T", "W", "zeta_min", "delta", "jct_avg", "pred_err_avg"} <= set(df.columns)
    assert (tmp_path / "ck" / "checkpoint.pkl").exists()
    w = trace_0e4a51(100)
    f = pareto_search(w, OBJ, budget=70, rng=np.random.default_rng(0), executor=1, progress=False)
    np.testing.assert_array_equal(df["jct_avg"].to_numpy(), f.table["jct_avg"].to_numpy())
    bad = CliRunner().invoke(main, args[:5] + ["unfairness:p101", "--out", str(tmp_path / "x.csv")])
    assert bad.exit_code != 0 and "percentile 101 outside (0, 100]" in bad.output
    assert not (tmp_path / "x.csv").exists()


def test_fresh_operator_state_per_search():
    # pymoo's SPEA2 default operators are shared default arguments and its survival keeps
    # normalisation state: a second search in one process must not inherit the first's
    from schedlab.pcs.pareto import _algorithm

    a, b = _algorithm(4, 1), _algorithm(4, 1)
    for attr in ("survival", "initialization", "mating"):
        assert getattr(a, attr) is not getattr(b, attr)
    assert a.survival is not b.survival and a.mating.selection is not b.mating.selection


def test_evaluation_cpu_times_recorded(full_run):
    t = full_run.eval_cpu_seconds
    assert t.shape == (full_run.n_evaluations,) and np.all(t >= 0) and np.sum(t) > 0


def test_coverage_and_gap_closed_forms():
    from schedlab.pcs.pareto import archive_front, coverage, front_gap

    ref = np.array([[0.0, 10.0], [5.0, 5.0], [10.0, 0.0]])
    # ranges 10 and 10: a point 0.4 worse in one objective is found at eps 0.05, not 0.03
    found = np.array([[0.0, 10.0], [5.4, 5.0]])
    assert coverage(found, ref) == pytest.approx(1 / 3)
    assert coverage(found, ref, 0.05) == pytest.approx(2 / 3)
    assert coverage(found, ref, 0.03) == pytest.approx(1 / 3)
    assert coverage(np.empty((0, 2)), ref) == 0.0
    np.testing.assert_allclose(
        front_gap(np.array([[6.0, 5.0], [4.0, 4.0], [0.0, 12.0]]), ref), [0.1, 0.0, 0.2]
    )
    F = np.array([[3.0, 3.0], [1.0, 5.0], [np.inf, np.inf], [2.0, 2.0], [0.5, 9.0]])
    assert archive_front(F, 2).tolist() == [[3.0, 3.0], [1.0, 5.0]]
    assert archive_front(F, 5).tolist() == [[1.0, 5.0], [2.0, 2.0], [0.5, 9.0]]


def test_scale_arrivals_raises_load():
    from schedlab.pcs.generators import generate
    from schedlab.pcs.pareto import scale_arrivals

    w = trace_0e4a51(50)
    s = scale_arrivals(w, 0.25)
    np.testing.assert_array_equal(s.submit_us, np.rint(w.submit_us * 0.25).astype(np.int64))
    assert np.array_equal(s.service, w.service) and np.array_equal(s.demand, w.demand)
    with pytest.raises(ValueError, match="factor must be > 0"):
        scale_arrivals(w, 0)
    # the README's Poisson rule: the same draws at 80 % load are the 60 % gaps x 0.6/0.8
    a = generate("themis1", 300, np.random.default_rng(3), load=0.6)
    b = generate("themis1", 300, np.random.default_rng(3), load=0.8)
    assert np.array_equal(a.service, b.service)
    ga, gb = np.diff(a.submit_s), np.diff(b.submit_s)
    assert np.all(np.abs(gb - ga * 0.75) <= 1.0)  # gaps are cut to whole seconds
