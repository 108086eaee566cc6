"""PCS experiment drivers through schedlab.parallel: same numbers serial, on 2 processes, and
as the plain per-policy loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from schedlab import stagetimes
from schedlab.pcs import experiments as X
from schedlab.pcs import metrics, simulate
from schedlab.pcs.artifacts import trace_0e4a51

FIG7 = ["AFS", "Tiresias", "Themis", "FIFO", "PCS-JCT", "PCS-bal", "PCS-pred"]


@pytest.fixture(scope="module")
def w120():
    return trace_0e4a51(120)


def _loop_fig7(workloads, gpus):
    """Fig. 7 as the notebook computed it before the executor: one policy after another."""
    rows = []
    for tr, w in workloads.items():
        labels = X.fig7_labels(tr, FIG7)
        pols = X.policy_set(labels, X.fig7_config_key(tr))
        runs = {lab: simulate(w, pols[lab], gpus, predict=True) for lab in labels}
        rows.append(metrics.fig7_aggregate(runs).assign(trace=tr, jobs=len(w)))
    return pd.concat(rows, ignore_index=True)


def test_fig7_table_same_on_every_backend(w120):
    workloads = {"0e4a51": w120, "2869ce": w120.head(80)}
    expected = _loop_fig7(workloads, 16)
    assert expected.policy.tolist() == FIG7 + ["AFS", "Tiresias", "Themis", "FIFO"]
    for executor in (1, 2):
        got = X.fig7_table(workloads, FIG7, 16, executor=executor)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_fig7_jct_table_reuses_predicted_runs_and_checks_the_smallest(w120, monkeypatch):
    workloads = {"a": w120, "b": w120.head(80), "c": w120.head(100)}
    predicted = X.fig7_table({t: workloads[t] for t in ("a", "b")}, FIG7[:4], 16)
    full = X.fig7_table(workloads, FIG7[:4], 16, predict=False)[X.JCT_COLUMNS]
    ran = []
    real = X.fig7_table
    monkeypatch.setattr(X, "fig7_table", lambda w, *a, **k: ran.append(list(w)) or real(w, *a, **k))
    got = X.fig7_jct_table(predicted, workloads, FIG7[:4], 16)
    assert ran == [["b", "c"]]  # "a" comes from the predicted runs; "b" is the smaller check
    pd.testing.assert_frame_equal(got, full, check_exact=True)
    # a schedule that changed under prediction is caught on the checked trace
    tampered = predicted.assign(
        avg_jct=np.where(predicted.trace == "b", predicted.avg_jct + 1, predicted.avg_jct)
    )
    with pytest.raises(RuntimeError, match="trace b"):
        X.fig7_jct_table(tampered, workloads, FIG7[:4], 16)


def test_run_many_seeds_each_task(w120):
    pols = X.policy_set(["FIFO", "PCS-JCT"], "0e4a51")
    runs = X.run_many(w120, pols, 16, p_error=20, seed=5, executor=2)
    assert list(runs) == ["FIFO", "PCS-JCT"]
    for lab, df in runs.items():
        ref = simulate(
            w120,
            X.policy_set([lab], "0e4a51")[lab],
            16,
            predict=True,
            p_error=20,
            rng=np.random.default_rng(5),
        )
        pd.testing.assert_frame_equal(df, ref, check_exact=True)


def test_fig9a_split_keeps_counts_and_moves_times(w120):
    """Fig. 9a's output part (classes, events) is the same on every run; times go apart."""
    config = [0.672378, 2.414758, 0.7758, 0.568191]
    runs = [X.fig9a_timings(w120, [60, 120], [64, 128], 1, config, executor=1) for _ in range(2)]
    parts = [stagetimes.split_timings(r, X.FIG9A_TIMING_COLUMNS, X.FIG9_KEY_COLUMNS) for r in runs]
    results, times = parts[0]
    assert list(results.columns) == ["jobs", "gpus", "classes", "events"]
    assert list(times.columns) == ["jobs", "gpus", *X.FIG9A_TIMING_COLUMNS]
    assert (results.events > 0).all() and (times.cpu_s >= 0).all()
    pd.testing.assert_frame_equal(parts[1][0], results, check_exact=True)


def test_fig9c_reuses_a_longer_search_with_the_same_identity(monkeypatch):
    """Fig. 9c takes the heuristic seed-0 archive from Fig. 9b's longer search: the table is
    the one the searches would give when run, and that search is not run again; a search of
    other jobs or another seed is not taken."""
    from schedlab.pcs import pareto

    w = trace_0e4a51(40)
    objs = pareto.parse_objectives(["jct:avg", "pred_err:avg"])
    b9, fronts = X.fig9b_searches(w, [(40, 64, 175), (30, 64, 175)], objs, executor=1, return_fronts=True)
    assert list(b9.evaluations) == [175, 175]
    plain = X.fig9c_coverage(w, objs, [70], [0, 1], 0.05, executor=1)
    runs = []
    real = pareto.pareto_search

    def counted(workload, objectives, **kw):
        runs.append((kw["space"], len(workload)))
        return real(workload, objectives, **kw)

    monkeypatch.setattr(pareto, "pareto_search", counted)
    reused = X.fig9c_coverage(w, objs, [70], [0, 1], 0.05, executor=1, reuse=fronts)
    assert runs == [("heuristic", 40), ("raw", 40), ("raw", 40)]  # heuristic seed 0 reused
    pd.testing.assert_frame_equal(reused[0], plain[0])
    np.testing.assert_array_equal(reused[1], plain[1])
    # the identity names what decides the evaluations; the budget is not in it
    assert fronts[0].identity == pareto.search_identity(w, objs, seed=0)
    assert fronts[0].identity != pareto.search_identity(w, objs, seed=1)
    assert fronts[1].identity != fronts[0].identity
    assert pareto.reuse_evaluations(fronts, fronts[0].identity, 176) is None  # 280 > 175 run
