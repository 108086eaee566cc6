"""A user's own policy: the example, loading by name, the engine choice,
and the library's validation of p_error and the Themis lease."""

from __future__ import annotations

import logging
import textwrap

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from schedlab.pcs import Workload, make_policy, simulate
from schedlab.pcs.examples import ShortestRemainingTimeFirst
from schedlab.pcs.generators import authors_rng, generate
from schedlab.pcs.policies import NoKernelError, Themis, load_policy
from schedlab.pcs.sim import choose_engine


def test_srtf_closed_form():
    # job 1 (2 GPU-s on 1 GPU: 2 s) arrives at 1 s, before job 0 has 3 s left: it goes first
    w = Workload.from_arrays(submit_s=[0, 1], service=[8.0, 2.0], demand=[2, 1])
    out = simulate(w, ShortestRemainingTimeFirst(), 2, predict=True)
    assert out.end_time.tolist() == [5.0, 3.0]
    assert out.estimated_end_time.tolist() == [4.0, 3.0]  # job 0 alone at arrival: 8/2


def test_srtf_orders_by_time_not_by_gpu_seconds():
    # SRSF weighs by demand (16 vs 6 GPU-s): job 1 first; SRTF by time (2 s vs 6 s): job 0
    w = Workload.from_arrays(submit_s=[0, 0], service=[16.0, 6.0], demand=[8, 1])
    srtf = simulate(w, ShortestRemainingTimeFirst(), 8)
    srsf = simulate(w, make_policy("SRSF"), 8)
    assert srtf.end_time.tolist() == [2.0, 8.0]
    # SRSF: job 1 takes 1 GPU, job 0 the other 7 (16/7 s)
    assert srsf.end_time.tolist() == pytest.approx([16 / 7, 6.0], abs=1e-6)


def test_auto_engine_runs_a_user_policy_with_one_notice(caplog):
    w = generate("gavel", 120, authors_rng(4), load=1.2)
    with caplog.at_level(logging.WARNING, logger="schedlab.pcs"):
        auto = simulate(w, ShortestRemainingTimeFirst(), 64, predict=True)
    notes = [r.getMessage() for r in caplog.records]
    assert notes == [
        "policy 'SRTF' (ShortestRemainingTimeFirst) has no compiled kernel: running on the reference engine"
    ]
    ref = simulate(w, ShortestRemainingTimeFirst(), 64, predict=True, engine="reference")
    pd.testing.assert_frame_equal(auto, ref, check_exact=True)
    with pytest.raises(NoKernelError, match="policy 'SRTF'"):
        simulate(w, ShortestRemainingTimeFirst(), 64, engine="fast")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="schedlab.pcs"):
        assert choose_engine(make_policy("SRSF")) == "fast"
    assert not caplog.records


def _user_module(tmp_path, monkeypatch, body: str) -> str:
    (tmp_path / "my_sched.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_sched"


def test_load_policy_from_a_user_module(tmp_path, monkeypatch):
    mod = _user_module(
        tmp_path,
        monkeypatch,
        """
        import numpy as np
        from schedlab.pcs.policies import Policy

        class LargestDemandFirst(Policy):
            name = "LDF"

            def allocate(self, w):
                jobs = w.act()
                jobs = jobs[np.argsort(-w.demand[jobs], kind="stable")]
                w.active[:] = jobs.tolist()
                d = w.demand[jobs]
                return np.clip(w.gpus - (np.cumsum(d) - d), 0, d).astype(float)

        class NeedsArgs(Policy):
            def __init__(self, k):
                self.k = k

        not_a_policy = 3
    """,
    )
    pol = make_policy(f"{mod}:LargestDemandFirst")
    assert pol.name == "LDF"
    w = Workload.from_arrays(submit_s=[0, 0], service=[2.0, 8.0], demand=[1, 2])
    assert simulate(w, pol, 2).end_time.tolist() == [6.0, 4.0]  # the 2-GPU job first
    with pytest.raises(ValueError, match="cannot build NeedsArgs\\(\\) without arguments"):
        load_policy(f"{mod}:NeedsArgs")
    with pytest.raises(ValueError, match="'not_a_policy' is not a schedlab.pcs.policies.Policy"):
        load_policy(f"{mod}:not_a_policy")
    with pytest.raises(ValueError, match="cannot import module 'no_such_mod'"):
        load_policy("no_such_mod:X")
    with pytest.raises(ValueError, match="has no 'Missing'"):
        load_policy(f"{mod}:Missing")


def test_cli_runs_the_example_policy(tmp_path):
    from schedlab.cli import main
    from schedlab.pcs.workload import write_trace

    w = generate("gavel", 80, authors_rng(6), load=1.2)
    trace = write_trace(w, tmp_path / "t.csv")
    out = tmp_path / "srtf.csv"
    r = CliRunner().invoke(
        main,
        [
            "pcs",
            "simulate",
            "--trace",
            str(trace),
            "--policy",
            "schedlab.pcs.examples:ShortestRemainingTimeFirst",
            "--predict",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    notice = [ln for ln in r.output.splitlines() if "reference engine" in ln]
    assert notice == [
        "policy 'SRTF' (ShortestRemainingTimeFirst) has no compiled kernel: running on the reference engine"
    ]
    lib = simulate(w, ShortestRemainingTimeFirst(), 64, predict=True)
    pd.testing.assert_frame_equal(pd.read_csv(out), lib, check_dtype=False, check_exact=True)
    r = CliRunner().invoke(
        main,
        [
            "pcs",
            "simulate",
            "--trace",
            str(trace),
            "--policy",
            "schedlab.pcs.examples:Nope",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code != 0 and "has no 'Nope'" in r.output


@pytest.mark.parametrize("p_error", [-1.0, 100.0, 150.0, float("nan")])
def test_library_refuses_p_error_outside_0_100(p_error):
    w = Workload.from_arrays(submit_s=[0], service=[4.0], demand=[1])
    with pytest.raises(ValueError, match=r"p_error = .*0 <= p_error < 100"):
        simulate(w, make_policy("FIFO"), 1, predict=True, p_error=p_error, rng=np.random.default_rng(0))


@pytest.mark.parametrize("lease", [0, -5.0, float("inf"), float("nan"), 1e-7, "600"])
def test_library_refuses_a_themis_lease_not_above_zero(lease):
    with pytest.raises(ValueError, match="Themis: lease 'quantum_s'"):
        Themis(lease)
    with pytest.raises(ValueError, match="Themis: lease 'quantum_s'"):
        Themis.fig8_runs(lease)
