"""WFQ's class water-filling with the authors' zero rule (``WFQ.authors_code``, 1e-3 GPUs).

Their ``MCSScheduler.compute_allocation`` (62a6ca3) treats amounts within 1e-3 of 0 as 0;
the exact default does not. Checked here: :func:`~schedlab.pcs.fairshare.water_fill` against
a transcription of their loop (their ``math.isclose`` calls kept) on random inputs, with the
rule and without (``abs_tol=0`` in their loop is exact equality); the compiled engine against
the reference engine with the rule on, where the rule changes the schedule; and bad input.
Against the authors' simulator itself: ``test_authors_every_policy.py``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from schedlab.pcs import _engine as E
from schedlab.pcs import _kernels_wfq as K
from schedlab.pcs import load_config, simulate
from schedlab.pcs.artifacts import trace_0e4a51
from schedlab.pcs.configs import WFQConfig
from schedlab.pcs.fairshare import water_fill
from schedlab.pcs.policies import WFQ, KernelSpec


def _their_loop(rates: list, demand: list, abs_tol: float) -> list:
    """The class loop of the authors' ``compute_allocation``, transcribed (their names)."""
    num_classes = len(rates)
    class_demand = list(demand)
    class_allocation = [0] * num_classes
    class_rates = list(rates)
    total_demand = sum(class_demand)
    residual = sum(rates)
    tries = 0
    while residual > 0 and total_demand > 0:
        for i in range(num_classes):
            allocation = min(class_rates[i], class_demand[i])
            if math.isclose(float(allocation), 0, abs_tol=abs_tol):
                allocation = 0
            class_allocation[i] += allocation
            class_demand[i] -= allocation
            residual -= allocation
            total_demand -= allocation
            if math.isclose(float(class_demand[i]), 0, abs_tol=abs_tol):
                class_rates[i] = 0
                class_demand[i] = 0
        if math.isclose(float(residual), 0.0, abs_tol=abs_tol) or math.isclose(
            float(total_demand), 0.0, abs_tol=abs_tol
        ):
            break
        R = sum(class_rates)
        if R > 0:
            class_rates = [Fraction(residual * class_rates[i], R) for i in range(num_classes)]
        tries += 1
        if tries > 100:
            break
    return class_allocation


def _random_case(rng: np.random.Generator) -> tuple[list, list]:
    """Class GPU shares (some tiny: 1/500-1/5000 of the cluster) and integer demands."""
    nc = int(rng.integers(2, 7))
    gpus = int(rng.choice([4, 8, 16, 64]))
    w = [
        Fraction(1, int(rng.choice([500, 1000, 2000, 5000])))
        if rng.random() < 0.4
        else Fraction(int(rng.integers(1, 50)))
        for _ in range(nc)
    ]
    total = sum(w)
    rates = [wi / total * gpus for wi in w]
    demand = [int(d) for d in rng.integers(0, 3 * gpus, size=nc) * (rng.random(nc) < 0.85)]
    return rates, demand


@pytest.mark.parametrize("tol", [0.0, 1e-3])
def test_water_fill_equals_their_loop(tol):
    rng = np.random.default_rng(20261127)
    changed = 0
    for _ in range(3000):
        rates, demand = _random_case(rng)
        ours = water_fill(rates, demand, tol)
        assert ours == _their_loop(rates, demand, tol), (rates, demand)
        changed += ours != water_fill(rates, demand)
    # the cases exercise the rule: with 1e-3 some allocations differ from the exact ones
    assert (changed > 0) == (tol > 0), changed


def test_kernel_class_shares_apply_the_rule():
    # the compiled engine's class shares (memoised Fraction path) with and without the rule
    rng = np.random.default_rng(7)
    for _ in range(300):
        rates, demand = _random_case(rng)
        gpus = int(sum(rates))
        w = [r / gpus for r in rates]
        num = np.array([x.numerator for x in w], dtype=np.int64)
        den = np.array([x.denominator for x in w], dtype=np.int64)
        cd = np.array(demand, dtype=np.int64)
        for tol in (0.0, 1e-3):
            got = K._class_shares(cd, num, den, gpus, E.new_cache(), tol)
            want = [float(a) for a in water_fill(rates, demand, tol)]
            assert got.tolist() == want


def test_engine_takes_the_fraction_path_with_the_rule():
    rates = (Fraction(1, 4), Fraction(3, 4))
    num, den = E.class_weights(KernelSpec("WFQ", rates=rates), 64, 100)
    assert den.tolist() == [0, 0]  # exact: the integer closed form
    num, den = E.class_weights(KernelSpec("WFQ", rates=rates, zero_tolerance=1e-3), 64, 100)
    assert (num.tolist(), den.tolist()) == ([1, 3], [4, 4])


@pytest.mark.parametrize("gpus,predict", [(8, True), (4, True), (8, False)])
def test_compiled_equals_reference_with_the_rule(gpus, predict):
    # 150 jobs of 0e4a51, PCS-JCT's weights (one of 1/500): few GPUs make shares small
    w = trace_0e4a51(150)
    cfg = load_config("PCS_config_0e4a51_jct")
    runs = {
        e: simulate(w, WFQ.authors_code(cfg), gpus, predict=predict, engine=e) for e in ("reference", "fast")
    }
    pd.testing.assert_frame_equal(runs["reference"], runs["fast"], check_exact=True)
    exact = simulate(w, WFQ(cfg), gpus, predict=predict, engine="fast")
    assert not np.array_equal(exact.end_time, runs["fast"].end_time)  # the rule acted


def test_compiled_equals_reference_tiny_weights_many_classes():
    # four classes, two with weights 1/2000 and 1/1000: shares of 0.004-0.008 GPUs on 8
    w = trace_0e4a51(120)
    thr = tuple(float(t) for t in np.quantile(w.service, [0.25, 0.5, 0.75]).round()) + (math.inf,)
    rates = (Fraction(1, 2000), Fraction(1, 1000), Fraction(1, 2), 1 - Fraction(1, 2) - Fraction(3, 2000))
    cfg = WFQConfig(thr, rates, 0.3, 0.2, "tiny")
    pol = WFQ(cfg, zero_tolerance=1e-3)
    a = simulate(w, pol, 8, predict=True, engine="reference")
    b = simulate(w, pol, 8, predict=True, engine="fast")
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    exact = simulate(w, WFQ(cfg), 8, predict=True, engine="fast")
    assert not np.array_equal(exact.end_time, b.end_time)


def test_default_is_exact_and_the_variant_named():
    cfg = WFQConfig.default()
    assert WFQ(cfg).zero_tolerance == 0.0 and WFQ(cfg).kernel().zero_tolerance == 0.0
    pol = WFQ.authors_code(cfg, name="PCS-JCT")
    assert (pol.zero_tolerance, pol.kernel().zero_tolerance, pol.name) == (1e-3, 1e-3, "PCS-JCT")


@pytest.mark.parametrize("bad", [-1e-3, 1.0, math.nan, math.inf, "0.001", True])
def test_bad_zero_tolerance(bad):
    with pytest.raises(ValueError, match="zero_tolerance"):
        WFQ(WFQConfig.default(), zero_tolerance=bad)
    with pytest.raises(ValueError, match="zero_tolerance"):
        KernelSpec("WFQ", zero_tolerance=bad)
    with pytest.raises(ValueError, match="zero_tolerance"):
        water_fill([Fraction(1)], [1], bad)


def test_cli_pcs_variant(tmp_path):
    from click.testing import CliRunner

    from schedlab import data
    from schedlab.cli import main
    from schedlab.pcs.artifacts import TRACE_0E4A51

    trace = str(data.require(TRACE_0E4A51))
    outs = {}
    for variant in ("exact", "62a6ca3"):
        out = tmp_path / f"{variant}.csv"
        r = CliRunner().invoke(
            main,
            [
                "pcs",
                "simulate",
                "--trace",
                trace,
                "--num-jobs",
                "80",
                "--policy",
                "PCS",
                "--config",
                "PCS_config_0e4a51_jct",
                "--gpus",
                "8",
                "--pcs-variant",
                variant,
                "--out",
                str(out),
            ],
        )
        assert r.exit_code == 0, r.output
        outs[variant] = pd.read_csv(out)
    cfg = load_config("PCS_config_0e4a51_jct")
    want = simulate(trace_0e4a51(80), WFQ.authors_code(cfg), 8)
    np.testing.assert_array_equal(outs["62a6ca3"].end_time, want.end_time)
    assert not np.array_equal(outs["exact"].end_time, want.end_time)
    r = CliRunner().invoke(
        main,
        [
            "pcs",
            "simulate",
            "--trace",
            trace,
            "--policy",
            "FIFO",
            "--pcs-variant",
            "62a6ca3",
            "--out",
            str(tmp_path / "f.csv"),
        ],
    )
    assert r.exit_code != 0 and "--pcs-variant" in r.output
