"""Predictions at scale: the FIFO window replay and the authors' predicted subset."""

from __future__ import annotations

import numpy as np
import pytest

from schedlab import data
from schedlab.pcs import Workload, load_trace, make_policy, simulate
from schedlab.pcs import sim as S


@pytest.fixture(scope="module")
def queued():
    """ee9e8c's first 1500 jobs: under FIFO a queue of hundreds forms (replays are long)."""
    return load_trace(data.require("pcs/workload2_philly_traces/trace_ee9e8c.csv.gz"), 1500)


@pytest.mark.parametrize("p_error", [None, 20.0])
def test_fifo_window_replay_equals_generic_replay(queued, p_error):
    n = len(queued)
    err = None if p_error is None else 1.0 + np.random.default_rng(3).uniform(-0.2, 0.2, n)
    mask = np.ones(n, dtype=np.uint8)
    fast, events = S._simulate_fast(queued, make_policy("FIFO"), 64, mask, err, fifo_window=True)
    generic, events_generic = S._simulate_fast(queued, make_policy("FIFO"), 64, mask, err, fifo_window=False)
    assert events == events_generic  # the same replay events, counted either way
    assert (fast.estimated_end_time > fast.submit_time).all()
    # queues long enough that the window matters: some job waited behind > 100 others
    assert fast.num_apps_seen_diff.max() > 100
    assert fast.equals(generic)


def test_predicted_subset_equals_full_prediction_on_its_jobs(queued):
    pol = "SRSF"
    full = simulate(queued, make_policy(pol), 64, predict=True)
    part = simulate(
        queued, make_policy(pol), 64, predict=True, predict_sample=300, rng=np.random.default_rng(7)
    )
    again = simulate(
        queued, make_policy(pol), 64, predict=True, predict_sample=300, rng=np.random.default_rng(7)
    )
    picked = part.estimated_end_time != -1
    # a prediction is a side-effect-free replay: the subset's values are the full run's
    assert part.equals(again)
    assert part[["start_time", "end_time"]].equals(full[["start_time", "end_time"]])
    cols = ["estimated_start_time", "estimated_end_time"]
    assert part.loc[picked, cols].equals(full.loc[picked, cols])
    assert (part.loc[~picked, cols] == -1).all().all()
    # p = 300/1500 per arrival: the count is Binomial(1500, 0.2), mean 300, sd 15.5
    assert 240 <= picked.sum() <= 360


def test_predicted_subset_engines_agree():
    w = Workload.from_arrays(
        submit_s=np.arange(40) * 3, service=np.linspace(5, 200, 40), demand=np.tile([1, 2, 4, 3], 10)
    )
    kw = dict(predict=True, predict_sample=15)
    fast = simulate(w, make_policy("LAS"), 4, rng=np.random.default_rng(1), **kw)
    ref = simulate(w, make_policy("LAS"), 4, rng=np.random.default_rng(1), engine="reference", **kw)
    assert (fast.estimated_end_time == -1).any() and (fast.estimated_end_time != -1).any()
    assert np.allclose(fast.to_numpy(float), ref.to_numpy(float), rtol=1e-12)


def test_subset_at_least_the_trace_predicts_every_arrival(queued):
    head = queued.head(200)
    every = simulate(head, make_policy("FIFO"), 64, predict=True)
    capped = simulate(
        head, make_policy("FIFO"), 64, predict=True, predict_sample=5000, rng=np.random.default_rng(0)
    )
    assert capped.equals(every)


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(predict=True, predict_sample=10), "needs an explicit numpy.random.Generator"),
        (
            dict(predict=False, predict_sample=10, rng=np.random.default_rng(0)),
            "only applies with predict=True",
        ),
        (dict(predict=True, predict_sample=0, rng=np.random.default_rng(0)), "expected a positive number"),
    ],
)
def test_bad_predict_sample_is_refused(kw, message):
    w = Workload.from_arrays(submit_s=[0, 1], service=[1.0, 2.0], demand=[1, 1])
    with pytest.raises(ValueError, match=message):
        simulate(w, make_policy("FIFO"), 1, **kw)


def test_cli_predict_sample_equals_the_library(tmp_path):
    from click.testing import CliRunner
    import pandas as pd

    from schedlab.cli import main

    path = data.require("pcs/workload2_philly_traces/trace_2869ce.csv.gz")
    out = tmp_path / "jobs.csv"
    r = CliRunner().invoke(
        main,
        [
            "pcs",
            "simulate",
            "--trace",
            str(path),
            "--policy",
            "SRSF",
            "--predict",
            "--predict-sample",
            "300",
            "--seed",
            "5",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    lib = simulate(
        load_trace(path),
        make_policy("SRSF"),
        64,
        predict=True,
        predict_sample=300,
        rng=np.random.default_rng(5),
    )
    got = pd.read_csv(out)
    assert ((got.estimated_end_time == -1) == (lib.estimated_end_time == -1)).all()
    assert np.allclose(got.estimated_end_time, lib.estimated_end_time, rtol=0, atol=1e-9)


@pytest.mark.parametrize("case", ["random", "ties", "nearly_sorted", "nan"])
def test_themis_sort_equals_a_stable_mergesort(case):
    from schedlab.pcs import _engine_core as E
    from schedlab.pcs._kernels_themis import _themis_sort

    rng = np.random.default_rng(11)
    n = 300
    keys = {
        "random": rng.normal(size=n),
        "ties": rng.integers(0, 5, n).astype(float),
        "nearly_sorted": np.sort(rng.normal(size=n))[::-1] + rng.normal(scale=1e-3, size=n),
        "nan": np.where(rng.random(n) < 0.05, np.nan, rng.normal(size=n)),
    }[case]
    lo = 7
    pool = rng.permutation(n).astype(np.int64)
    act = np.arange(n, dtype=np.int64)
    I = np.zeros((E.NI, n), dtype=np.int64)
    I[E.DEM] = rng.integers(1, 9, n)
    got_pool, got_keys = pool.copy(), keys.copy()
    _themis_sort(act, got_pool, lo, n, I, got_keys, np.zeros(n, dtype=np.int64))
    order = np.argsort(-keys[lo:], kind="mergesort")
    np.testing.assert_array_equal(got_pool[lo:], pool[lo:][order])
    np.testing.assert_array_equal(got_pool[:lo], pool[:lo])
    np.testing.assert_array_equal(got_keys[lo:], keys[lo:][order])
