"""SPEA2's normalisation when an objective is the same for the whole population.

pymoo divides by the objective's range, 0 there, so every fitness is NaN and the archive is chosen
blind (``ConstantSafeNormalization`` in ``schedlab.pcs.pareto``). With one objective constant,
dominance is the other objective's order, so the survivors are known in closed form."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pymoo.algorithms.moo.nsga3 import HyperplaneNormalization
from pymoo.algorithms.moo.spea2 import SPEA2Survival
from pymoo.core.population import Population
from pymoo.core.problem import Problem

from schedlab.pcs.pareto import ConstantSafeNormalization, pareto_search
from schedlab.pcs.workload import Workload


def _survive(F: np.ndarray, n: int, norm) -> tuple[list[int], np.ndarray, list[str]]:
    """SPEA2's survival of ``n`` of the points ``F``: their indices, every SPEA2 fitness, warnings."""
    survival = SPEA2Survival(normalize=True)
    survival.norm = norm
    pop = Population.new(X=np.zeros((len(F), 1)), F=F)
    problem = Problem(n_var=1, n_obj=F.shape[1], xl=0.0, xu=1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kept = survival.do(problem, pop, n_survive=n, return_indices=True)
    return sorted(int(i) for i in kept), pop.get("SPEA_F"), [str(w.message) for w in caught]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_constant_objective_leaves_the_other_to_decide(seed):
    rng = np.random.default_rng(seed)
    F = np.column_stack([rng.random(40), np.full(40, 7.0)])  # every member: the same second objective
    kept, fitness, caught = _survive(F, 12, ConstantSafeNormalization())
    assert kept == sorted(np.argsort(F[:, 0])[:12].tolist())  # dominance = the first objective's order
    assert np.isfinite(fitness).all() and caught == []
    # the control: pymoo's own normalisation divides 0 by 0 here, and keeps another set
    kept_pymoo, fitness_pymoo, caught_pymoo = _survive(F, 12, None)
    # (every fitness NaN but the boundary points', which pymoo sets to -1 after the division)
    assert np.isnan(fitness_pymoo).sum() >= len(F) - 2 and any("invalid value" in m for m in caught_pymoo)
    assert kept_pymoo != kept


def test_the_same_as_pymoos_where_every_objective_varies():
    rng = np.random.default_rng(5)
    ours, theirs = ConstantSafeNormalization(), HyperplaneNormalization(3)
    for _ in range(6):  # a search's successive populations: the state carries over
        F = rng.random((30, 3)) * [1.0, 100.0, 1e-3]
        ours.update(F)
        theirs.update(F)
        for name in ("ideal_point", "nadir_point", "extreme_points"):
            assert np.array_equal(getattr(ours, name), getattr(theirs, name)), name


def test_a_search_where_no_configuration_matters_runs_without_warnings(tmp_path):
    # 12 one-GPU jobs on 64 GPUs never queue: every configuration gives the same JCT, no prediction error
    submit_s, service, demand = np.arange(12.0) * 10, np.full(12, 100.0), np.ones(12, int)
    w = Workload.from_arrays(submit_s=submit_s, service=service, demand=demand)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        front = pareto_search(
            w, ["jct:avg", "pred_err:avg"], budget=175, rng=np.random.default_rng(0), executor=1,
            checkpoint_dir=tmp_path, progress=False,
        )  # fmt: skip
    assert front.evaluations[["jct_avg", "pred_err_avg"]].nunique().tolist() == [1, 1]
    assert (tmp_path / "checkpoint.pkl").is_file()  # the normalisation pickles with the search


def test_pymoos_ignore_everything_filter_stays_inside_the_update():
    F = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.6]])  # a plane through the extremes: pymoo's solve succeeds
    before = list(warnings.filters)
    ConstantSafeNormalization().update(F)
    assert warnings.filters == before
    with warnings.catch_warnings():  # the control: pymoo's own update silences every warning after it
        HyperplaneNormalization(2).update(F)
        assert warnings.filters[0][:3] == ("ignore", None, Warning)
