"""Every policy, predictions off and on, against the authors' own simulator run from the mirror.

The authors' ``sim.py`` (PCS ``simulation/`` at 62a6ca3, the data layer's
``pcs/authors-simulator/``) runs in a subprocess through :mod:`schedlab.pcs.authors` (Ray
calls made synchronous) on the first 80 jobs of trace 0e4a51 with 8 GPUs (Themis: 50 jobs;
PCS: 16 GPUs, and 8 GPUs with :meth:`~schedlab.pcs.policies.WFQ.authors_code`): enough
contention that every Themis and LAS replay variant predicts differently somewhere (checked below, so a variant that stopped reproducing their code would
show). Each of their runs takes 1-8 s. Compared job by job: JCT, start, end, predicted start
and predicted end; with predictions every arrival carries one (their ``p_of_estimate`` is 1
below 5000 jobs).

Not here: :class:`~schedlab.pcs.policies.RandomisedAFS`, the allocator of their stored Fig. 8
runs, is not in 62a6ca3's ``sim.py``; it is checked against those runs
(``test_afs_variant.py``, ``test_afs_compiled.py``).
"""

from __future__ import annotations

import math

import pytest

from schedlab import data
from schedlab.pcs import authors as A
from schedlab.pcs import load_config, make_policy, simulate
from schedlab.pcs.artifacts import TRACE_0E4A51, trace_0e4a51
from schedlab.pcs.policies import WFQ, PriorityPolicy, Themis

N, GPUS = 80, 8
#: PCS runs on 16 GPUs (the exact default); on 8 the authors' zero rule in the class
#: water-filling matters (test_pcs_small_shares_...);
#: Themis on 50 jobs (their replays at every lease make 80 take ~30 s)
GPUS_OF = {"PCS": 16}
N_OF = {"THEMIS": 50}
#: equal means every per-job relative difference at most this (measured: <= 1.5e-12, JCTs
#: being differences of two times)
RTOL = 1e-9
PCS_CONFIG = "PCS_config_0e4a51_jct"
POLICIES = ("FIFO", "SRSF", "LAS", "FS", "AFS", "PCS", "THEMIS")


def _ours(name: str):
    """Our policy as the authors' code at 62a6ca3 runs it."""
    if name == "THEMIS":
        return Themis.authors_code(600.0)
    if name == "PCS":
        return make_policy("PCS", load_config(PCS_CONFIG))
    return make_policy(name)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return A.prepare_workdir(tmp_path_factory.mktemp("authors-every"), data.require(TRACE_0E4A51))


@pytest.fixture(scope="module")
def theirs(workdir):
    """Their per-job tables, run once per (policy, predictions) on first use."""
    cache: dict = {}

    def get(name: str, predict: bool, gpus: int | None = None):
        gpus = gpus or GPUS_OF.get(name, GPUS)
        key = (name, predict, gpus)
        if key not in cache:
            cfg = load_config(PCS_CONFIG) if name == "PCS" else None
            cache[key] = A.run_authors(
                workdir,
                "trace_0e4a51",
                name,
                N_OF.get(name, N),
                predict=predict,
                gpus=gpus,
                config=cfg,
                timeout_s=300,
                tag=f"{name}_{int(predict)}_{gpus}",
            ).jobs
        return cache[key]

    return get


@pytest.fixture(scope="module")
def jobs():
    """The first jobs of 0e4a51, as many as each policy's runs have."""
    return lambda name: trace_0e4a51(N_OF.get(name, N))


def _assert_equal(diffs: dict) -> None:
    bad = {k: v for k, v in diffs.items() if not math.isnan(v) and not v <= RTOL}
    assert not bad, diffs


@pytest.mark.parametrize("predict", [False, True], ids=["nopred", "pred"])
@pytest.mark.parametrize("name", POLICIES)
def test_equal_to_the_authors_code_job_by_job(name, predict, theirs, jobs):
    their = theirs(name, predict)
    assert len(their) == N_OF.get(name, N)
    made = their.estimated_end_time != -1
    assert made.all() if predict else not made.any()
    for engine in ("fast", "reference"):
        ours = simulate(jobs(name), _ours(name), GPUS_OF.get(name, GPUS), predict=predict, engine=engine)
        diffs = A.job_differences(ours, their)
        _assert_equal(diffs)
        if predict:  # the predicted columns were compared, not skipped as all -1
            assert not math.isnan(diffs["estimated_end_time"])


@pytest.mark.parametrize(
    "variant", ["output_2024_05_07", "paper_fig7", "fig8_runs", "no_pending_tick", "remaining_size"]
)
def test_themis_other_variants_predict_otherwise(variant, theirs, jobs):
    # the comparison above can fail: each other variant (and each of the two replay changes
    # alone) misses their predictions on this input; the main schedule is theirs unless the
    # valuation differs
    pol = {
        "output_2024_05_07": Themis.output_2024_05_07(600.0),
        "paper_fig7": Themis(600.0),
        "fig8_runs": Themis.fig8_runs(600.0),
        "no_pending_tick": Themis(600.0, valuation="linear", replay_size="attained+estimate"),
        "remaining_size": Themis(600.0, valuation="linear", replay_pending_tick=True),
    }[variant]
    diffs = A.job_differences(simulate(jobs("THEMIS"), pol, GPUS, predict=True), theirs("THEMIS", True))
    assert diffs["estimated_end_time"] > 1e-3, diffs
    if pol.valuation == "linear":
        assert diffs["end_time"] <= RTOL


@pytest.mark.parametrize(
    "replay_size,equal", [("true", True), ("attained+estimate", True), ("estimate", False)]
)
def test_las_replay_variants(replay_size, equal, theirs, jobs):
    # their 62a6ca3 replay keeps attained + estimated remaining size ("true" when sizes are
    # known exactly); the estimated remaining size alone (their code before 2024-06-03) differs
    ours = simulate(jobs("LAS"), PriorityPolicy("LAS", replay_size), GPUS, predict=True)
    diffs = A.job_differences(ours, theirs("LAS", True))
    if equal:
        _assert_equal(diffs)
    else:
        assert diffs["end_time"] <= RTOL and diffs["estimated_end_time"] > 1e-3, diffs


@pytest.mark.parametrize("predict", [False, True], ids=["nopred", "pred"])
def test_pcs_small_shares_authors_zero_rule_equal_to_the_authors_code(predict, theirs, jobs):
    # on 8 GPUs the weight 1/500 gives 0.016-GPU shares, and the authors' class water-filling
    # (MCSScheduler.compute_allocation) treats amounts within 1e-3 of 0 as 0:
    # WFQ.authors_code has that rule, on both engines
    their = theirs("PCS", predict, 8)
    for engine in ("fast", "reference"):
        ours = simulate(
            jobs("PCS"), WFQ.authors_code(load_config(PCS_CONFIG)), 8, predict=predict, engine=engine
        )
        diffs = A.job_differences(ours, their)
        _assert_equal(diffs)
        if predict:
            assert not math.isnan(diffs["estimated_end_time"])


def test_pcs_small_shares_exact_default_differs(theirs, jobs):
    # the rule matters here (so the test above can fail): with the exact default
    # water-filling exactly one job (app 33) ends 0.055 s apart from theirs, on both engines
    their = theirs("PCS", False, 8).set_index("app_id").end_time
    for engine in ("fast", "reference"):
        ours = simulate(jobs("PCS"), _ours("PCS"), 8, predict=False, engine=engine)
        gap = (ours.set_index("app_id").end_time - their).abs()
        apart = gap[gap > 1e-3]
        assert apart.index.tolist() == [33], apart
        assert 0.05 < apart.iloc[0] < 0.06, apart


@pytest.mark.slow
def test_themis_121_jobs_64_gpus(workdir):
    # the first setting where the difference was seen: 121 jobs of 0e4a51, 64 GPUs, 600 s
    # lease (their run: ~13 s CPU, 37 s wall at load 10); 15 predictions differ by up to
    # 12 % with the 2024-05-07 variant, none with authors_code
    their = A.run_authors(
        workdir, "trace_0e4a51", "THEMIS", 121, predict=True, gpus=64, timeout_s=900, tag="THEMIS_121"
    ).jobs
    w = trace_0e4a51(121)
    _assert_equal(A.job_differences(simulate(w, Themis.authors_code(600.0), 64, predict=True), their))
    old = A.job_differences(simulate(w, Themis.output_2024_05_07(600.0), 64, predict=True), their)
    assert old["end_time"] <= RTOL and old["estimated_end_time"] > 0.05, old
