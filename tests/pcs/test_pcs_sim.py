"""Event-loop semantics on closed-form cases, and the fast engine against the reference."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

from schedlab.pcs import Workload, make_policy, simulate
from schedlab.pcs import sim as S
from schedlab.pcs.artifacts import run_config
from schedlab.pcs.configs import WFQConfig

from schedlab.pcs.artifacts import trace_0e4a51


def test_fifo_closed_form_and_queueing():
    w = Workload.from_arrays(submit_s=[0, 0, 1], service=[10.0, 20.0, 6.0], demand=[2, 1, 2])
    out = simulate(w, make_policy("FIFO"), gpus=2, predict=True)
    # job 0 runs 5 s on 2 GPUs; job 1 starts at 5 (1 GPU, 20 s); job 2 gets 1 GPU at 5, 2 at 25?
    assert out.start_time.tolist() == [0.0, 5.0, 5.0]
    assert out.end_time.tolist() == [5.0, 25.0, 11.0]
    assert out.estimated_end_time.tolist() == out.end_time.tolist()  # no later arrivals


def test_completion_before_arrival_at_equal_time():
    # job 0 ends exactly when job 1 arrives: job 1 must see a free cluster at once
    w = Workload.from_arrays(submit_s=[0, 10], service=[10.0, 5.0], demand=[1, 1])
    out = simulate(w, make_policy("FS"), gpus=1)
    assert out.start_time.tolist() == [0.0, 10.0]
    assert out.num_apps_seen_diff.tolist() == [1.0, 1.0]


def test_srsf_preempts_and_las_shares():
    w = Workload.from_arrays(submit_s=[0, 2], service=[10.0, 2.0], demand=[1, 1])
    srsf = simulate(w, make_policy("SRSF"), gpus=1)
    assert srsf.end_time.tolist() == [12.0, 4.0]
    fs = simulate(w, make_policy("FS"), gpus=1)
    # from t=2 both share 0.5 GPU: job 1 ends at 6, job 0 has 6 left -> 12
    assert fs.end_time.tolist() == [12.0, 6.0]


def test_fractional_wfq_closed_form():
    cfg = WFQConfig.from_dict(
        {
            "class_thresholds": [5, "inf"],
            "class_rates": ["3/4", "1/4"],
            "clip_demand_factor": 0.0,
            "delta": 0.1,
        }
    )
    w = Workload.from_arrays(submit_s=[0, 0], service=[4.0, 40.0], demand=[4, 4])
    out = simulate(w, make_policy("PCS", cfg), gpus=4, predict=True)
    # class 0 gets 3 GPUs (job 0: 4/3 s), class 1 gets 1, then 4 GPUs: 40 - 4/3 left at 4/s
    assert out.end_time[0] == pytest.approx(4 / 3, abs=1e-6)
    assert out.end_time[1] == pytest.approx(4 / 3 + (40 - 4 / 3) / 4, abs=1e-6)


def test_cluster_too_small_is_an_error():
    w = Workload.from_arrays(submit_s=[0], service=[4.0], demand=[1])
    with pytest.raises(S.SimulationError):
        simulate(w, make_policy("FIFO"), gpus=0)


def _policy(name):
    if name.startswith("PCS"):
        return make_policy("PCS", run_config(name))
    return make_policy(name)


ALL = ["FIFO", "SRSF", "LAS", "FS", "AFS", "THEMIS", "PCS_jct", "PCS_bal"]


@pytest.mark.parametrize("name", ALL)
def test_fast_engine_equals_reference(name):
    w = trace_0e4a51(150)
    a = simulate(w, _policy(name), 64, predict=True, engine="reference")
    b = simulate(w, _policy(name), 64, predict=True, engine="fast")
    pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.parametrize("name", ["SRSF", "PCS_jct"])
def test_engines_agree_with_job_size_error(name):
    w = trace_0e4a51(120)
    a = simulate(
        w, _policy(name), 64, predict=True, p_error=20, rng=np.random.default_rng(3), engine="reference"
    )
    b = simulate(w, _policy(name), 64, predict=True, p_error=20, rng=np.random.default_rng(3), engine="fast")
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    c = simulate(w, _policy(name), 64, predict=True)
    assert not np.array_equal(a.estimated_end_time, c.estimated_end_time)


def _full_snapshot_prediction(w: S.World, t_us: int, target: int, policy):
    """Independent slow predictor: deep-copy the whole world and run every job to the end."""
    world = copy.deepcopy(w)
    world.rem[:] = w.est_rem
    if policy.replay_size == "estimate":
        world.service[:] = w.est_service  # else the true size stays (LAS default)
    world.last_us = t_us
    t_end, j = S.next_end(world, t_us)
    while j >= 0:
        S.advance(world, t_end, None)
        S.finish(world, j, t_end)
        S.apply_allocation(world, t_end, policy)
        t_end, j = S.next_end(world, t_end)
    return int(world.start_us[target]), int(world.end_us[target])


@pytest.mark.parametrize("name", ["SRSF", "PCS_jct", "LAS"])
def test_early_stopping_replay_equals_full_snapshot(name):
    calls = []

    def checked(w, t_us, target, policy):
        got = S.replay(w, t_us, target, policy)
        calls.append(got == _full_snapshot_prediction(w, t_us, target, policy))
        return got

    plain = simulate(trace_0e4a51(60), _policy(name), 16, predict=True, engine="reference")
    hooked = simulate(
        trace_0e4a51(60), _policy(name), 16, predict=True, engine="reference", hooks=S.Hooks(replay=checked)
    )
    assert len(calls) == 60 and all(calls)
    pd.testing.assert_frame_equal(hooked, plain, check_exact=True)


def test_next_end_hook_reaches_main_loop_and_default_replay():
    w = trace_0e4a51(40)
    calls = {"n": 0}

    def counted(world, t_us):
        calls["n"] += 1
        return S.next_end(world, t_us)

    plain = simulate(w, make_policy("SRSF"), 16, predict=True, engine="reference")
    hooked = simulate(
        w, make_policy("SRSF"), 16, predict=True, engine="reference", hooks=S.Hooks(next_end=counted)
    )
    pd.testing.assert_frame_equal(hooked, plain, check_exact=True)
    assert calls["n"] > 2 * len(w)  # every main-loop event and every replay event
    with pytest.raises(ValueError, match="engine='reference'"):
        simulate(w, make_policy("SRSF"), 16, hooks=S.Hooks(next_end=counted))


def test_policy_without_kernel_names_itself():
    from schedlab.pcs.policies import NoKernelError, Policy

    class Custom(Policy):
        name = "MyRule"

        def allocate(self, w):
            return np.ones(len(w.active))

    w = Workload.from_arrays(submit_s=[0], service=[4.0], demand=[1])
    with pytest.raises(NoKernelError, match="policy 'MyRule' .* engine='reference'"):
        simulate(w, Custom(), 1, engine="fast")  # asked for explicitly: refused
    assert simulate(w, Custom(), 1, engine="reference").end_time.tolist() == [4.0]
    with pytest.raises(TypeError, match="not a schedlab.pcs.policies.Policy"):
        simulate(w, object(), 1)


@pytest.mark.parametrize("name", ["FIFO", "SRSF", "LAS", "FS", "AFS", "PCS", "THEMIS"])
def test_every_library_policy_has_a_kernel(name):
    from schedlab.pcs._engine_core import CODES

    assert make_policy(name).kernel().code in CODES


def test_exact_class_allocation_equals_fraction_rounds():
    from schedlab.pcs import _kernels_wfq as K
    from schedlab.pcs.fairshare import integer_weights

    rng = np.random.default_rng(0)
    for num, den in [
        ([313, 19, 1], [333, 333, 333]),
        ([19, 6, 1], [20, 125, 500]),
        ([427, 73], [500, 500]),
        ([1, 1, 1, 1], [2, 4, 8, 8]),
    ]:
        num, den = np.array(num), np.array(den)
        P, L = integer_weights(num, den)
        for _ in range(300):
            cd = rng.integers(0, 40, size=len(num)) * rng.integers(0, 2, size=len(num))
            g = int(rng.integers(1, 128))
            a = K.wfq_class_alloc(cd, num, den, g)
            b = K.class_alloc_exact(cd.astype(np.int64), P, g)
            assert a.tolist() == b.tolist(), (cd, g)


def test_fig1_toy_matches_paper_table():
    # Fig. 1b: Tiresias 11.25 / 46 %, FIFO 15.75 / 0 %, Themis (1-unit lease) 13.5
    from schedlab.pcs import metrics
    from schedlab.pcs.policies import Themis

    w = Workload.from_arrays(submit_s=[0, 0, 1, 10], service=[10.0, 8.0, 1.0, 8.0], demand=[1, 1, 1, 1])
    t = simulate(w, make_policy("SRSF"), 1, predict=True)
    f = simulate(w, make_policy("FIFO"), 1, predict=True)
    th = simulate(w, Themis(1.0), 1, predict=True)
    assert metrics.jct(t).mean() == 11.25 and round(metrics.pred_error(t).mean()) == 46
    assert metrics.jct(f).mean() == 15.75 and metrics.pred_error(f).mean() == 0
    assert metrics.jct(th).mean() == 13.5
    assert th.end_time.tolist() == [19.0, 16.0, 3.0, 27.0]


def test_p_error_without_prediction_is_refused():
    w = Workload.from_arrays(submit_s=[0], service=[4.0], demand=[1])
    with pytest.raises(ValueError, match="p_error only applies with predict=True"):
        simulate(w, make_policy("FIFO"), 1, p_error=10, rng=np.random.default_rng(0))


@pytest.mark.parametrize("opts", [dict(valuation="linear"), dict(replay_size="true", replay_leases=False)])
def test_themis_variants_engines_agree(opts):
    from schedlab.pcs.policies import Themis

    w = trace_0e4a51(60)  # on 8 GPUs: contention, so the variants matter
    a = simulate(w, Themis(600.0, **opts), 8, predict=True, engine="reference")
    b = simulate(w, Themis(600.0, **opts), 8, predict=True, engine="fast")
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    c = simulate(w, Themis(600.0), 8, predict=True)
    assert not c.equals(a)  # each variant changes something on this trace


def test_themis_rejects_unknown_variant():
    from schedlab.pcs.policies import Themis

    with pytest.raises(ValueError, match="valuation"):
        Themis(valuation="sqrt")
