"""PCS preference interface (paper §3.2) and the SPEA2 Pareto search over WFQ configs (§3.3).

The paper's API ``SetPreference(<Metric, Measure>, ...)``, ``GetParetoFront()`` and
``SetWFQConfig(config)`` maps to:

* :func:`parse_objectives` / :class:`Objective` -- objectives as ``(metric, measure)`` pairs,
  from strings like ``"jct:avg"`` or ``"pred_err:p99"`` (metrics ``jct``, ``pred_err``,
  ``unfairness``; measures ``avg`` or ``pQ`` with ``0 < Q <= 100``). Repeated metrics with
  different measures are allowed, as in the paper.
* :func:`pareto_search` -- SPEA2 (pymoo) with the authors' settings; returns a
  :class:`ParetoFront` (the Pareto-optimal configurations with their objective values).
* :func:`pick` -- the paper's PCS-JCT / PCS-bal / PCS-pred picks from a front (our stated
  rule; the paper leaves the choice to the operator).
* :meth:`ParetoFront.policy` / :func:`wfq_policy` -- a chosen configuration as a simulator
  policy (``SetWFQConfig``).

Every evaluation is one full :func:`schedlab.pcs.sim.simulate` run with predictions on the
search workload. Evaluations go through the suite's executor
(:class:`schedlab.parallel.Executor`: local processes by default, a Dask cluster by address).
The search checkpoints after every generation and resumes without redoing evaluations, also
a finished search continued with a larger budget (same result as a fresh search with it).

Examples
--------
>>> parse_objectives(["jct:avg", "pred_err:p99"])
(Objective(metric='jct', measure='avg'), Objective(metric='pred_err', measure='p99'))
>>> Objective.parse("unfairness:p100").label
'unfairness_p100'
>>> Objective.parse("latency:avg")
Traceback (most recent call last):
...
schedlab.pcs.pareto.PreferenceError: objective 'latency:avg': unknown metric 'latency'; known: jct, pred_err, unfairness
"""

from __future__ import annotations

import math
import pickle
import re
import warnings
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from schedlab import parallel
from schedlab.pcs import metrics
from schedlab.pcs.configs import WFQConfig, heuristic_config
from schedlab.pcs.policies import make_policy
from schedlab.pcs.sim import SimulationError, simulate
from schedlab.pcs.workload import Workload


class PreferenceError(ValueError):
    """A malformed objective (names the objective and what was expected)."""


#: metric name -> per-job series of a simulation output frame
METRICS: dict[str, Callable[[pd.DataFrame], pd.Series]] = {
    "jct": metrics.jct,
    "pred_err": metrics.pred_error,
    "unfairness": metrics.unfairness,
}
_ALIASES = {
    "pred_error": "pred_err",
    "prederr": "pred_err",
    "performance": "jct",
    "predictability": "pred_err",
    "fairness": "unfairness",
}


@dataclass(frozen=True)
class Objective:
    """One ``<Metric, Measure>`` objective (minimised).

    ``measure`` is ``"avg"`` or ``"pQ"`` (a percentile, ``0 < Q <= 100``; the authors'
    ``np.percentile(..., method="lower")``, :func:`schedlab.pcs.metrics.percentile`).
    """

    metric: str
    measure: str = "avg"

    def __post_init__(self) -> None:
        where = f"objective '{self.metric}:{self.measure}'"
        if self.metric not in METRICS:
            raise PreferenceError(f"{where}: unknown metric {self.metric!r}; known: {', '.join(METRICS)}")
        if self.measure != "avg":
            m = re.fullmatch(r"p(\d+(?:\.\d+)?)", self.measure)
            if m is None:
                raise PreferenceError(
                    f"{where}: measure must be 'avg' or a percentile 'pQ' (e.g. 'p99'), got {self.measure!r}"
                )
            q = float(m.group(1))
            if not 0 < q <= 100:
                raise PreferenceError(f"{where}: percentile {q:g} outside (0, 100]")

    @classmethod
    def parse(cls, text: str) -> "Objective":
        """From ``"metric:measure"`` (``"jct:avg"``, ``"pred_err:p99"``); measure default avg."""
        metric, _, measure = str(text).strip().partition(":")
        metric = metric.strip().lower()
        metric = _ALIASES.get(metric, metric)
        return cls(metric, measure.strip().lower() or "avg")

    @property
    def label(self) -> str:
        """Column name, e.g. ``jct_avg``."""
        return f"{self.metric}_{self.measure}"

    def value(self, df: pd.DataFrame) -> float:
        """This objective on one simulation output."""
        x = METRICS[self.metric](df)
        if len(x) == 0:
            return math.nan
        if self.measure == "avg":
            return float(x.mean())
        return metrics.percentile(x, float(self.measure[1:]))


def parse_objectives(items: Iterable[str | Objective | tuple]) -> tuple[Objective, ...]:
    """``SetPreference``: objectives from strings, ``(metric, measure)`` pairs or objects.

    At least two objectives (a Pareto front of one objective is a single point); an exact
    duplicate is rejected (it adds nothing).
    """
    out = []
    for it in items:
        if isinstance(it, Objective):
            out.append(it)
        elif isinstance(it, tuple):
            out.append(Objective.parse(":".join(map(str, it))))
        else:
            out.append(Objective.parse(it))
    if len(out) < 2:
        raise PreferenceError(f"need at least two objectives, got {len(out)}")
    if len(set(out)) != len(out):
        raise PreferenceError(f"duplicate objective in {[o.label for o in out]}")
    return tuple(out)


def wfq_policy(config: WFQConfig):
    """``SetWFQConfig``: the simulator policy running ``config``."""
    pol = make_policy("PCS", config)
    pol.name = config.name
    return pol


# ----------------------------------------------------------------------------- spaces


def c2(sizes: Sequence[float]) -> float:
    """Squared coefficient of variation (population variance / mean²).

    >>> c2([1.0, 1.0, 1.0])
    0.0
    """
    x = np.asarray(sizes, dtype=float)
    return float(x.var() / x.mean() ** 2)


def max_prefix_c2(sizes: Sequence[float]) -> float:
    """Largest C² of a prefix of the sorted sizes: the largest ``T`` that still splits.

    The authors' upper bound for T is this + 1 (it reproduces their stored bound
    10.846812... for trace 0e4a51, 2001 jobs; the whole-set C² + 1 would be 10.03).

    >>> round(max_prefix_c2([1.0, 1.0, 3.0]), 12)  # whole set: var 8/9, mean 5/3
    0.32
    """
    x = np.sort(np.asarray(sizes, dtype=float))
    n = np.arange(1, len(x) + 1)
    mu = np.cumsum(x) / n
    var = np.cumsum(x * x) / n - mu * mu
    return float(np.max(np.maximum(var, 0.0) / (mu * mu)))


@dataclass(frozen=True)
class HeuristicSpace:
    """The paper's parameterisation ``(T, W, ζ_min, δ)`` (:func:`heuristic_config`).

    Bounds as the authors' stored searches (README ``pareto_search/``): T in
    [0.001, max prefix C² + 1] (:func:`max_prefix_c2`), W in [-3, 3], ζ_min in [0, 1], δ in [0.01, 0.9].
    """

    sizes: tuple
    names: tuple = ("T", "W", "zeta_min", "delta")

    @classmethod
    def for_workload(cls, w: Workload) -> "HeuristicSpace":
        return cls(tuple(float(s) for s in w.service))

    @property
    def xl(self) -> np.ndarray:
        return np.array([0.001, -3.0, 0.0, 0.01])

    @property
    def xu(self) -> np.ndarray:
        return np.array([max_prefix_c2(self.sizes) + 1.0, 3.0, 1.0, 0.9])

    def decode(self, x: Sequence[float]) -> WFQConfig:
        T, W, z, d = (float(v) for v in x)
        return heuristic_config(self.sizes, T, W, z, d)


@dataclass(frozen=True)
class RawSpace:
    """A direct parameterisation without the heuristics: 13 variables for up to 6 classes.

    The paper names the raw parameters (number of classes, weights, thresholds, demand cap)
    but not their encoding; ours: 5 threshold positions ``u_1..u_5`` in [0, 1] (each a
    quantile of the search workload's job sizes, cast to int as the authors' thresholds;
    equal values merge, so 1-6 classes), 6 class weights in [0.001, 1] (the first
    ``num_classes`` are used, normalised, rounded to 1e-3 as :func:`heuristic_config`),
    ζ_min in [0, 1] and δ in [0.01, 0.9] -- 5 + 6 + 2 = 13.
    """

    sizes: tuple
    max_classes: int = 6

    @classmethod
    def for_workload(cls, w: Workload) -> "RawSpace":
        return cls(tuple(float(s) for s in w.service))

    @property
    def names(self) -> tuple:
        k = self.max_classes
        return tuple([f"u{i}" for i in range(1, k)] + [f"w{i}" for i in range(k)] + ["zeta_min", "delta"])

    @property
    def xl(self) -> np.ndarray:
        k = self.max_classes
        return np.array([0.0] * (k - 1) + [0.001] * k + [0.0, 0.01])

    @property
    def xu(self) -> np.ndarray:
        k = self.max_classes
        return np.array([1.0] * (k - 1) + [1.0] * k + [1.0, 0.9])

    def decode(self, x: Sequence[float]) -> WFQConfig:
        k = self.max_classes
        x = np.asarray(x, dtype=float)
        q = np.quantile(np.asarray(self.sizes), np.sort(x[: k - 1]))
        # a threshold at/above the largest size would leave an empty last class
        thr = sorted({float(int(v)) for v in q if int(v) < max(self.sizes) and int(v) > 0})
        n = len(thr) + 1
        w = x[k - 1 : k - 1 + n]
        ints = [max(1, int(round(v * 1000))) for v in w / w.sum()]
        rates = tuple(Fraction(i, sum(ints)) for i in ints)
        return WFQConfig(tuple(thr) + (math.inf,), rates, float(x[-2]), float(x[-1]), "raw")


SPACES = {"heuristic": HeuristicSpace, "raw": RawSpace}


# ----------------------------------------------------------------------------- evaluation


def evaluate_config(
    config: WFQConfig, workload: Workload, objectives: Sequence[Objective], gpus: int = 64
) -> np.ndarray:
    """Objective values of one configuration: a full simulation with predictions.

    Runs on the compiled engine for any number of classes (bit-identical to the reference
    engine; ``tests/pcs/test_engine_classes.py`` checks configurations with more than 8).
    """
    df = simulate(workload, wfq_policy(config), gpus, predict=True, engine="fast")
    return np.array([o.value(df) for o in objectives])


def _evaluate_x(x: np.ndarray, space, workload: Workload, objectives, gpus: int) -> np.ndarray:
    """Objectives of one search point; ``inf`` where the simulation cannot complete.

    With the paper's weights rounded to 1e-3 (the authors' stored configs), a large |W|
    gives some classes weight 0; a job alone in such a class never runs and the simulator
    raises :class:`~schedlab.pcs.sim.SimulationError`. The paper does not say how the
    authors' search treated these; we mark them infeasible (a constraint violation in
    SPEA2, so they never enter the front) instead of inventing objective values.
    """
    # module-level so loky / Dask workers can import it
    try:
        return evaluate_config(space.decode(x), workload, objectives, gpus)
    except SimulationError:
        return np.full(len(objectives), np.inf)


def _evaluate_x_timed(x: np.ndarray, space, workload: Workload, objectives, gpus: int) -> np.ndarray:
    """:func:`_evaluate_x` followed by the CPU seconds it took in the worker process."""
    import time

    t0 = time.process_time()
    f = _evaluate_x(x, space, workload, objectives, gpus)
    return np.append(f, time.process_time() - t0)


# ----------------------------------------------------------------------------- search


@dataclass
class ParetoFront:
    """Result of :func:`pareto_search`: Pareto-optimal configurations, objective values.

    ``table`` has one row per configuration: the search variables, the objective columns
    (:attr:`Objective.label`), ``num_classes``, ``class_thresholds``, ``class_rates``,
    ``zeta_min`` and ``delta``. ``evaluations``: every (x, F) evaluated, in order
    (``inf`` marks an infeasible configuration).
    """

    table: pd.DataFrame
    configs: list
    objectives: tuple
    n_evaluations: int
    evaluations: pd.DataFrame
    #: CPU seconds of each evaluation in its worker process (NaN where resumed from an
    #: older checkpoint); timings, so not part of the deterministic result
    eval_cpu_seconds: np.ndarray | None = None
    #: what determines the search's evaluations (:func:`search_identity`): two searches with
    #: the same identity evaluate the same points in the same order, whatever their budgets
    identity: tuple | None = None

    def __len__(self) -> int:
        return len(self.configs)

    def config(self, i: int) -> WFQConfig:
        return self.configs[i]

    def policy(self, i: int):
        """``SetWFQConfig``: the simulator policy of front member ``i``."""
        return wfq_policy(self.configs[i])


def nondominated(F: np.ndarray) -> np.ndarray:
    """Mask of rows of ``F`` not dominated by any other row (minimisation).

    Rows equal to another row are all kept.

    >>> nondominated(np.array([[1, 3], [2, 2], [2, 3], [1, 3]])).tolist()
    [True, True, False, True]
    """
    F = np.asarray(F, dtype=float)
    n = len(F)
    keep = np.ones(n, dtype=bool)
    for i in range(n):
        le = np.all(F <= F[i], axis=1)
        lt = np.any(F < F[i], axis=1)
        if np.any(le & lt):
            keep[i] = False
    return keep


_nondominated = nondominated


def _normalise(P: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``P`` and ``ref`` scaled per objective by ``ref``'s range (1 where it is flat)."""
    ref = np.asarray(ref, dtype=float)
    lo = ref.min(axis=0)
    span = ref.max(axis=0) - lo
    span = np.where(span > 0, span, 1.0)
    return (np.asarray(P, dtype=float) - lo) / span, (ref - lo) / span


def front_gap(points: np.ndarray, front: np.ndarray) -> np.ndarray:
    """How far each point is from the closest point of ``front`` (additive ε-indicator).

    Objectives are scaled by the front's range; the gap of ``p`` is
    ``min_q max_j max(0, p_j - q_j)``: how much ``p`` must improve in its worst objective to
    be as good as some front point (0 if ``p`` weakly dominates one). "Within 10 % of the
    closest Pareto-optimal point" (paper Fig. 10c) is ``gap <= 0.1`` in this reading; the
    paper does not define the distance.

    >>> q = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> front_gap(np.array([[0.5, 1.0], [1.0, 0.2], [0.0, 0.0]]), q).round(3).tolist()
    [0.5, 0.2, 0.0]
    """
    p, q = _normalise(points, front)
    if len(p) == 0:
        return np.zeros(0)
    d = np.maximum(p[:, None, :] - q[None, :, :], 0.0).max(axis=2)
    return d.min(axis=1)


def coverage(found: np.ndarray, reference: np.ndarray, eps: float = 0.0) -> float:
    """Share of ``reference`` points that some ``found`` point is within ``eps`` of.

    A reference point ``r`` counts as found if a found point ``p`` has
    ``p_j <= r_j + eps`` in every objective after scaling by the reference's range (``p`` is
    nowhere worse than ``r`` by more than ``eps``). ``eps = 0``: the exact point (or a better
    one) was found. The paper does not define "found"; this is our reading.

    >>> coverage(np.array([[0.0, 1.0]]), np.array([[0.0, 1.0], [1.0, 0.0]]))
    0.5
    >>> coverage(np.array([[0.0, 1.0], [1.05, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0]]), 0.1)
    1.0
    """
    reference = np.asarray(reference, dtype=float)
    found = np.asarray(found, dtype=float)
    if len(reference) == 0:
        return float("nan")
    if len(found) == 0:
        return 0.0
    f, r = _normalise(found, reference)
    ok = np.all(f[None, :, :] <= r[:, None, :] + eps + 1e-12, axis=2).any(axis=1)
    return float(ok.mean())


def archive_front(F: np.ndarray, budget: int) -> np.ndarray:
    """Non-dominated feasible objective vectors among the first ``budget`` evaluations."""
    F = np.asarray(F, dtype=float)[:budget]
    F = F[np.all(np.isfinite(F), axis=1)]
    return F[nondominated(F)] if len(F) else F


def scale_arrivals(workload: Workload, factor: float, name: str | None = None) -> Workload:
    """The same jobs with every submit time multiplied by ``factor`` (rounded to 1 µs).

    ``factor < 1`` compresses arrivals: the offered load grows by ``1/factor``. For the
    synthetic workloads this is the README's load rule (Poisson gaps with mean
    ``mean(size)/(load*G)``, so the same draws at another load are the same gaps scaled);
    for a trace (whose gaps are fixed) it is how we move it to another load or cluster size.

    >>> from schedlab.pcs.workload import Workload
    >>> w = Workload.from_arrays(submit_s=[0, 10, 30], service=[1.0, 1.0, 1.0], demand=[1, 1, 1])
    >>> scale_arrivals(w, 0.5).submit_s.tolist()
    [0.0, 5.0, 15.0]
    """
    from schedlab.pcs.workload import seconds_to_us

    if not factor > 0:
        raise ValueError(f"scale_arrivals: factor must be > 0, got {factor}")
    sub = seconds_to_us(workload.submit_us / 1e6 * float(factor))
    return Workload(
        np.asarray(sub, dtype=np.int64),
        workload.service,
        workload.demand,
        workload.model,
        workload.tables,
        name or f"{workload.name}_x{factor:g}",
    )


class ConstantSafeNormalization:
    """pymoo's SPEA2 normalisation (``HyperplaneNormalization``), except that an objective every
    member of the population shares is normalised to 0 instead of 0/0.

    SPEA2's density term divides each objective by its range ``nadir - ideal``; pymoo widens a
    range below 1e-6 to the population's worst value, which still leaves 0 when the whole
    population has the same value (a search where every configuration gives the same JCT, or no
    prediction error: small or lightly loaded workloads). pymoo then computes NaN distances
    (``RuntimeWarning: invalid value encountered in divide``), every member's fitness becomes NaN,
    and the archive is filled and truncated blind to dominance strength and density. Here such an
    objective gets range 1: its normalised values are all 0, so the distances come from the other
    objectives, as SPEA2 intends. Where every range is positive nothing changes, to the bit.

    Examples
    --------
    >>> norm = ConstantSafeNormalization()
    >>> norm.update(np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]]))
    >>> (np.array([[2.0, 5.0]]) - norm.ideal_point) / (norm.nadir_point - norm.ideal_point)
    array([[0.5, 0. ]])
    """

    def __init__(self) -> None:
        self._inner = None  # pymoo's, made at the first update (when the number of objectives is known)

    def update(self, F: np.ndarray, nds: np.ndarray | None = None) -> None:
        if self._inner is None:
            from pymoo.algorithms.moo.nsga3 import HyperplaneNormalization

            self._inner = HyperplaneNormalization(F.shape[1])
        # pymoo's update calls warnings.simplefilter("ignore") (for its own 1/plane), which would
        # silence every warning of the process from then on; keep that to this call
        with warnings.catch_warnings():
            self._inner.update(F, nds)

    @property
    def ideal_point(self) -> np.ndarray:
        return self._inner.ideal_point

    @property
    def extreme_points(self) -> np.ndarray:
        return self._inner.extreme_points

    @property
    def nadir_point(self) -> np.ndarray:
        ideal, nadir = self._inner.ideal_point, self._inner.nadir_point
        return np.where(nadir - ideal > 0, nadir, ideal + 1.0)


def _algorithm(n_var: int, seed: int):
    from pymoo.algorithms.moo.spea2 import SPEA2, SPEA2Survival, spea_binary_tournament
    from pymoo.operators.crossover.sbx import SBX
    from pymoo.operators.mutation.pm import PM
    from pymoo.operators.sampling.rnd import FloatRandomSampling
    from pymoo.operators.selection.tournament import TournamentSelection
    from pymoo.util.display.multi import MultiObjectiveOutput

    # the authors' settings: population 70, 105 offspring, SBX p=1 eta=20, PM p=1/n eta=20.
    # Every operator is a fresh instance: pymoo's SPEA2 defaults are shared default-argument
    # objects, and SPEA2Survival keeps normalisation state, so a second search in the same
    # process would otherwise depend on the first.
    survival = SPEA2Survival(normalize=True)
    survival.norm = ConstantSafeNormalization()  # pymoo's, without 0/0 on an objective all members share
    return SPEA2(
        pop_size=POPULATION,
        n_offsprings=OFFSPRING,
        sampling=FloatRandomSampling(),
        selection=TournamentSelection(spea_binary_tournament),
        survival=survival,
        output=MultiObjectiveOutput(),
        crossover=SBX(prob=1.0, eta=20),
        mutation=PM(prob=1.0, prob_var=1.0 / n_var, eta=20),
        seed=seed,
    )


class _Interrupted(Exception):
    pass


#: SPEA2's first generation (the initial population) and each later one (offspring)
POPULATION, OFFSPRING = 70, 105


def evaluations_for_budget(budget: int) -> int:
    """Evaluations a fresh :func:`pareto_search` with ``budget`` runs: generations of
    :data:`OFFSPRING` after the first :data:`POPULATION` while fewer than ``budget`` are done.

    >>> evaluations_for_budget(70), evaluations_for_budget(71), evaluations_for_budget(1024)
    (70, 175, 1120)
    """
    n = POPULATION
    while n < budget:
        n += OFFSPRING
    return n


def _search_key(workload: Workload, objs: Sequence[Objective], space: str, gpus: int) -> tuple:
    # the budget is not part of the key: a search resumes with a larger one
    return (
        workload.name,
        len(workload),
        float(np.sum(workload.service)),
        tuple(o.label for o in objs),
        space,
        gpus,
    )


def search_identity(
    workload: Workload, objectives, *, space: str = "heuristic", gpus: int = 64, seed: int | Sequence[int] = 0
) -> tuple:
    """The :attr:`ParetoFront.identity` of ``pareto_search(..., rng=default_rng(seed))``.

    SPEA2's generations do not depend on the budget, so a search with this identity and a
    larger budget ran, as its first :func:`evaluations_for_budget` evaluations, exactly the
    ones a search with a smaller budget would run (Fig. 9c reuses Fig. 9b's longest search).
    """
    draw = int(np.random.default_rng(seed).integers(2**31 - 1))  # as pareto_search draws it
    return _search_key(workload, parse_objectives(objectives), space, gpus), draw


def reuse_evaluations(fronts: Iterable[ParetoFront], identity: tuple, budget: int) -> pd.DataFrame | None:
    """The evaluations a fresh search of ``identity`` with ``budget`` would run, taken from
    the first of ``fronts`` with that identity and at least as many evaluations; ``None``
    if there is none."""
    n = evaluations_for_budget(budget)
    for f in fronts:
        if f.identity == identity and f.n_evaluations >= n:
            return f.evaluations.iloc[:n].reset_index(drop=True)
    return None


def pareto_search(
    workload: Workload,
    objectives,
    *,
    budget: int = 370,
    space: str = "heuristic",
    gpus: int = 64,
    rng: np.random.Generator | None = None,
    executor: parallel.Executor | int | str | None = None,
    checkpoint_dir: str | Path | None = None,
    progress: bool | str = True,
    on_generation: Callable[[int, int], None] | None = None,
) -> ParetoFront:
    """``GetParetoFront``: SPEA2 search for Pareto-optimal WFQ configurations.

    Parameters
    ----------
    workload : Workload
        The search workload (each evaluation simulates all of it, predictions on).
    objectives : iterable
        Objective strings or :class:`Objective` (:func:`parse_objectives`).
    budget : int
        Evaluations. Generations run while fewer than ``budget`` have been done, so the
        last generation may exceed it by up to 104 (pymoo's ``n_eval`` semantics).
    space : {"heuristic", "raw"}
        :class:`HeuristicSpace` (paper, 4 variables) or :class:`RawSpace` (13 variables).
    rng : numpy.random.Generator
        Seeds pymoo (one draw). Required unless resuming from a checkpoint.
    executor : schedlab.parallel.Executor, int, str or distributed.Client, optional
        Where evaluations run (:func:`schedlab.parallel.resolve`): an executor, a number of
        local worker processes, a Dask scheduler address or client; default
        ``$SCHEDLAB_WORKERS`` / all cores (or ``$SCHEDLAB_DASK``). The front does not
        depend on it (tested).
    checkpoint_dir : path, optional
        ``checkpoint.pkl`` is written atomically after every generation; if it exists the
        search resumes from it (same workload/objectives/space/gpus required; ``rng`` is
        then ignored) and gives the same result as an uninterrupted run (the pickled
        algorithm holds its Generator). This holds for an interrupted search and for a
        finished one resumed with a **larger budget**: SPEA2's generations do not depend on
        the budget (it only decides when to stop), so the result equals a fresh search with
        the larger budget, evaluation for evaluation (tested). A budget that a fresh search
        would have stopped at earlier (``<=`` the evaluations before the checkpoint's last
        generation) is refused; the checkpoint's own budget or any budget up to its
        evaluation count returns the finished search unchanged.
    progress : bool or str
        Show a progress bar (plain lines in a pipeline, :mod:`schedlab.progress`); a string
        shows it under that description instead of ``pareto``.
    on_generation : callable(generation, n_evaluations), optional
        Called after each checkpoint (tests use it to interrupt).

    Returns
    -------
    ParetoFront
        The non-dominated members of the final SPEA2 population, sorted by the first
        objective.
    """
    from pymoo.core.problem import Problem
    from schedlab.progress import bar as progress_bar

    objs = parse_objectives(objectives)
    if space not in SPACES:
        raise ValueError(f"unknown space {space!r}; known: {', '.join(SPACES)}")
    if budget < 70:
        raise ValueError(f"budget {budget} < population 70")
    sp = SPACES[space].for_workload(workload)
    key = _search_key(workload, objs, space, gpus)
    ckpt = Path(checkpoint_dir) / "checkpoint.pkl" if checkpoint_dir is not None else None
    if ckpt is not None and ckpt.exists():
        state = pickle.loads(ckpt.read_bytes())
        if state["key"] != key:
            raise ValueError(f"{ckpt}: checkpoint is for {state['key']}, not {key}")
        algo, X_all, F_all, gen = state["algo"], state["X"], state["F"], state["gen"]
        cpu_all = state.get("cpu", [math.nan] * len(X_all))
        before_last = state.get("before_last", 0)
        if before_last >= budget:
            # a fresh search with this budget would have stopped generations earlier
            raise ValueError(
                f"{ckpt}: the checkpoint already ran {len(X_all)} evaluations "
                f"({gen} generations, the last starting after {before_last}); a "
                f"budget of {budget} would have stopped earlier: give a budget > "
                f"{before_last}, or a new checkpoint directory"
            )
    else:
        if rng is None:
            raise ValueError("rng (numpy.random.Generator) is required for a new search")
        problem = Problem(n_var=len(sp.xl), n_obj=len(objs), n_ieq_constr=1, xl=sp.xl, xu=sp.xu)
        algo = _algorithm(len(sp.xl), int(rng.integers(2**31 - 1)))
        algo.setup(problem, verbose=False)
        X_all, F_all, cpu_all, gen = [], [], [], 0
        before_last = 0
    ex, own_executor = parallel.resolve(executor)
    bar = progress_bar(
        total=budget,
        initial=len(X_all),
        desc=progress if isinstance(progress, str) else "pareto",
        unit="evaluation",
        disable=not progress,
    )
    try:
        # our own budget check: with ask/tell pymoo's evaluator does not count evaluations
        while len(X_all) < budget:
            pop = algo.ask()
            X = pop.get("X")
            FC = np.asarray(
                ex.map(_evaluate_x_timed, list(X), sp, workload, objs, gpus, progress=False), dtype=float
            )
            F, cpu = FC[:, :-1], FC[:, -1]
            bad = ~np.all(np.isfinite(F), axis=1)
            # infeasible points: constraint violated; finite F so SPEA2's arithmetic is sane
            # (feasible points always dominate infeasible ones in pymoo's survival)
            pop.set("F", np.where(np.isfinite(F), F, 0.0), "G", bad.astype(float)[:, None])
            algo.tell(infills=pop)
            before_last = len(X_all)
            X_all.extend(np.asarray(X).tolist())
            F_all.extend(F.tolist())
            cpu_all.extend(cpu.tolist())
            gen += 1
            if ckpt is not None:
                from schedlab.io import atomic_path

                ckpt.parent.mkdir(parents=True, exist_ok=True)
                with atomic_path(ckpt) as tmp:
                    Path(tmp).write_bytes(
                        pickle.dumps(
                            {
                                "key": key,
                                "algo": algo,
                                "X": X_all,
                                "F": F_all,
                                "gen": gen,
                                "cpu": cpu_all,
                                "before_last": before_last,
                            }
                        )
                    )
            if bar.total is not None and bar.n + len(X) > bar.total:
                bar.total = bar.n + len(X)  # the last generation runs past the budget (up to 104)
            bar.update(len(X))
            bar.set_postfix(front=len(algo.opt) if algo.opt is not None else 0)
            if on_generation is not None:
                on_generation(gen, len(X_all))
    finally:
        bar.close()
        if own_executor:
            ex.close()
    pop = algo.pop
    X, F, G = pop.get("X"), pop.get("F"), pop.get("G")
    feas = G[:, 0] <= 0
    X, F = X[feas], F[feas]
    keep = _nondominated(F)
    X, F = X[keep], F[keep]
    # sorted by the objectives; members with equal objectives (different x) are kept, as
    # in the authors' stored populations
    order = np.lexsort(F.T[::-1])
    X, F = X[order], F[order]
    configs, rows = [], []
    for x, f in zip(X, F):
        c = sp.decode(x)
        configs.append(c)
        row = dict(zip(sp.names, map(float, x)))
        row.update({o.label: float(v) for o, v in zip(objs, f)})
        row.update(
            {
                "num_classes": c.num_classes,
                "class_thresholds": ";".join("inf" if math.isinf(t) else str(t) for t in c.thresholds),
                "class_rates": ";".join(str(Fraction(r)) for r in c.rates),
                "zeta_min": c.zeta_min,
                "delta": c.delta,
            }
        )
        rows.append(row)
    ev = pd.DataFrame(X_all, columns=list(sp.names))
    for j, o in enumerate(objs):
        ev[o.label] = [f[j] for f in F_all]
    return ParetoFront(
        pd.DataFrame(rows),
        configs,
        objs,
        len(X_all),
        ev,
        np.asarray(cpu_all, dtype=float),
        (key, int(algo.seed)),
    )


# ----------------------------------------------------------------------------- picking

#: preference names -> the metric whose objective is minimised ("bal": see :func:`pick`)
PREFERENCES = {
    "jct": "jct",
    "pcs-jct": "jct",
    "performance": "jct",
    "pred": "pred_err",
    "pred_err": "pred_err",
    "pcs-pred": "pred_err",
    "predictability": "pred_err",
    "unfairness": "unfairness",
    "fairness": "unfairness",
    "bal": "bal",
    "balanced": "bal",
    "pcs-bal": "bal",
}
_LABEL = re.compile(r"^(jct|pred_err|unfairness)_(avg|p\d+(?:\.\d+)?)$")


def objective_columns(table: pd.DataFrame) -> list[str]:
    """The objective columns of a front table (``jct_avg``, ``pred_err_p99``, ...), in order.

    >>> objective_columns(pd.DataFrame(columns=["T", "jct_avg", "pred_err_p99", "delta"]))
    ['jct_avg', 'pred_err_p99']
    """
    return [c for c in table.columns if _LABEL.match(str(c))]


def pick(front: "ParetoFront | pd.DataFrame", preference: str) -> int:
    """The paper's three PCS configurations from a Pareto front: row of the chosen one.

    The paper (§5.1) names three picks from each front: **PCS-JCT** (performance
    oriented: the lowest JCT), **PCS-pred** (predictability oriented: the lowest Pred_err;
    "PCS-pred has the highest JCT but the lowest Pred_err amongst the three") and
    **PCS-bal** (balanced, between the two), and leaves the choice to the operator (§6,
    "Deciding between Pareto-optimal choices"); the authors' tool picks the front point
    closest (Euclidean) to a point the operator clicks (``preference_selector.py``). Our
    rule, stated since the paper gives none:

    * ``"jct"`` / ``"pred"`` / ``"unfairness"`` (aliases ``"PCS-JCT"``, ``"PCS-pred"``): the
      lowest value of the first objective of that metric; ties go to the lowest of the
      other objectives, in order, then to the first row. An objective label
      (``"pred_err_p99"``) picks that objective.
    * ``"bal"`` (``"PCS-bal"``, ``"balanced"``): each objective scaled to [0, 1] over the
      front (min -> 0, max -> 1), the point closest (Euclidean) to the ideal point (0, ..., 0);
      ties go to the first row.

    On the authors' stored 0e4a51 search (``pareto_search/``, the 70 members flagged
    non-dominated) the rule gives members #4 (JCT), #56 (pred) and #28 (bal); the authors'
    hand-picked PCS-JCT
    and PCS-bal for Fig. 7 were #5 and #6 (README), one and two places from ours along the
    front: the paper's configurations are an operator's choice, not this rule's output.

    Parameters
    ----------
    front : ParetoFront or pandas.DataFrame
        A search result, or a front table with objective columns (:func:`objective_columns`).
    preference : str
        See above (case-insensitive).

    Returns
    -------
    int
        Position (0-based row) in ``front.table`` / the table.

    Examples
    --------
    >>> t = pd.DataFrame({"jct_avg": [1.0, 2.0, 4.0], "pred_err_avg": [9.0, 2.0, 0.0]})
    >>> [pick(t, p) for p in ("PCS-JCT", "PCS-bal", "PCS-pred")]
    [0, 1, 2]
    """
    table = front.table if isinstance(front, ParetoFront) else front
    cols = objective_columns(table)
    if len(cols) < 2:
        raise PreferenceError(
            f"a front needs at least two objective columns (jct_avg, "
            f"pred_err_p99, ...), got {list(table.columns)}"
        )
    if len(table) == 0:
        raise PreferenceError("cannot pick from an empty front")
    F = table[cols].to_numpy(dtype=float)
    key = str(preference).strip().lower()
    if key in cols:
        first = cols.index(key)
    elif PREFERENCES.get(key) == "bal":
        lo, span = F.min(axis=0), F.max(axis=0) - F.min(axis=0)
        scaled = (F - lo) / np.where(span > 0, span, 1.0)
        return int(np.argmin(np.sqrt((scaled**2).sum(axis=1))))
    elif key in PREFERENCES:
        metric = PREFERENCES[key]
        hits = [i for i, c in enumerate(cols) if c.startswith(metric + "_")]
        if not hits:
            raise PreferenceError(
                f"preference {preference!r}: the front has no {metric} "
                f"objective (objectives: {', '.join(cols)})"
            )
        first = hits[0]
    else:
        raise PreferenceError(
            f"unknown preference {preference!r}; use PCS-JCT (jct), PCS-bal "
            f"(bal), PCS-pred (pred), unfairness or one of {', '.join(cols)}"
        )
    others = [F[:, j] for j in range(F.shape[1]) if j != first]
    # np.lexsort sorts by the last key first; a stable sort keeps the first row on full ties
    order = np.lexsort(others[::-1] + [F[:, first]])
    return int(order[0])
