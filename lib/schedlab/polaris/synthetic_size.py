"""How many join rows a stand-in job has: a heavy-tailed number of workers per planned instance.

A terminated job's rows in the authors' faithful join are ``tasks x workers x sensor rows`` (the
instance and sensor tables join on ``inst_id``, a job id; one sensor row per worker). The v2
generator gave every task ``inst_num`` workers, so a job's rows were ``tasks x instances^2`` of
its template, and the templates' means fall short of what the real counts require:

* Table I's rows per workload over the real trace's workload-tagged jobs (group-tag table) and the
  job table's terminated share (:data:`TERMINATED_SHARE`, 69.4 %, taken to hold in every workload:
  an assumption) give the mean rows per terminated job, :func:`target_rows_per_job`: bert 287,
  inception 2,856, graphlearn 1,877, rl 4,918 against the templates' 181, 855, 293 and 268. The
  generator made up the difference with more jobs (inception 12,600 terminated against 5,440
  jobs in the real group-tag table, rl 3,200 against 249).
* The authors' test rows (the 999 rows the 800 calibration rows come from) are rows of jobs their
  100,001-row sample does not hold: their encoder, fitted on the sample, stored 3,591 values for
  the 999 rows' five metadata columns (``reference/polaris.yaml`` ``standin.test_known_per_row``),
  where rows drawn from all rows would have a known job name and group most of the time (docs/polaris.md).
  Such rows over-represent the workloads whose rows sit in jobs the sample misses: the calibration
  rows are 49 % ctr and 10.5 % inception against Table I's 25 % and 29 %.
* In the authors' 100,001-row sample the 2nd to 10th most frequent job names have 460 to 565 rows
  each (their evaluation notebook's job-name heatmap: the percentages are multiples of 1/460 ...
  1/565; the first, the rl job, 2,150), i.e. about 170,000-210,000 join rows: 300-460 workers
  of a one- or two-task job.

* Every task of a job has as many instance-merge rows as the job has workers, so the authors'
  rows per task name after that merge (:data:`schedlab.polaris.metadata.AUTHORS_TASK_WORKLOAD`)
  weigh jobs by workers, and a sample weighs them by workers squared. With one size model per
  workload, a bert ``ps`` job is as big as a bert single worker: bert's ``ps`` rows came out 1.5 %
  of its instance-merge rows (authors 16.4 %) and 0.7 % of its sample rows (the authors' profile 9
  alone holds 11,604 of their 29,818 bert sample rows, 39 %), ctr's evaluator rows 1.6 % (11.7 %).

* The authors' tensorflow tasks have 26,757 instance-merge rows and 67 rows of their sample: one
  worker each (:data:`UNIT_TASKS`). Sized by a multiplier (20 x for bert), the stand-in's
  tensorflow jobs gave 982 sample rows and 47-55 of 302 bert rows of missed jobs (real 10).
* PyTorchWorker: 193 rows of the authors' sample, 3.6 workers per task in their ratio
  (:func:`authors_workers_per_task`). Sized like bert's single workers (17 in that ratio), the
  stand-in's gave 517 sample rows and 17.5 of the 302 rows of missed bert jobs (real 10).

The model: a workload job's tasks each get ``max(round(inst_num x K), 1)`` workers (instance and
sensor rows; ``inst_num``, a feature, stays the template's), one ``K`` per job,
``K = min(scale_w x m_wc x P, cap)``, ``P ~ Pareto(a_w)`` on ``[1, inf)`` (``P(P > k) = k^-a``),
``m_wc`` the multiplier of the job's template class ``c`` (its task names, :func:`template_classes`),
the cap where the job would have more join rows than the trace's largest job, the planted top job
(:func:`schedlab.polaris.planted.planted_top_job_instances` workers of one task: 461 at the real
trace's size, 212,521 rows, about 580 rows of a 100,001-row sample; a two-task job then has at most
326 workers). A job with a :data:`UNIT_TASKS` task (``tensorflow``, ``ps+tensorflow``) has ``K = 1``,
one with a PyTorchWorker task ``K = 0.484`` (:data:`TASK_FACTORS`: about half its planned
instances); the templates of such a class are drawn ``g_wc`` times as often as
:func:`schedlab.polaris.metadata.template_mix` says (:attr:`JobSize.class_weight`,
:func:`weighted_mix`).

* PyTorchWorker's fixed factor, **fitted** to the authors' sample rows of the name
  (:func:`fit_task_factors`, :func:`sample_task_rows`: 195 expected, authors 193).

* bert, ctr, inception, graphlearn (:data:`MIX_FITTED`), all **fitted**:
  * the class multipliers and the weights of the tensorflow and PyTorchWorker classes to the
    authors' instance-merge rows per task name of the workload (:func:`fit_class_scales`;
    :func:`task_name_rows` with ``power = 1``);
  * the scale to :func:`target_rows_per_job` (:func:`fit_scale`), the two in turn
    (:func:`fit_sizes`);
  * the shape to the calibration rows' workloads read as rows drawn from the jobs a Table I
    sample misses (:func:`fit_test_mix_shapes`, :func:`missed_rows`; recorded in
    :data:`MIX_SHAPES`): bert inf (no tail), ctr 1.92, inception 1.11, graphlearn 1.056 (near
    the searched range's end).
  Bert's ``ps`` jobs thus have 8.6 times the scale of the workload (1.10), its single workers 0.47
  times, its tensorflow templates are drawn 20.7 times as often (41 % of bert jobs), its
  PyTorchWorker ones 1.6 times (3.3 %); ctr's evaluator jobs 41 times (0.30), its ``ps`` + worker
  jobs 0.74 times, its ``ps+tensorflow`` templates 5.2 times as often (5 % of ctr jobs).
* The others (at most 4 calibration rows each): scale 1, no class multipliers or weights, and
  ``a_w`` fitted to the mean alone (:func:`fit_shape`, bisection; inf, no extra workers, where the
  templates already reach it: nmt, resnet, vgg, xlnet, whose terminated share is lowered instead;
  rl 1.41).

Checks, not fitted (:func:`sample_job_counts`, :func:`sample_task_rows`,
:func:`missed_task_rows`; tests/polaris/test_synthetic_size.py):

* a Table I sample's rows per task name against the authors' sample
  (:data:`schedlab.polaris.metadata.AUTHORS_SAMPLE_TASKS`): worker 50,939 (50,125), ps 44,966
  (46,116), evaluator 3,847 (3,495). tensorflow 53 (67) and PyTorchWorker 195 (193) are no check:
  :data:`UNIT_TASKS` is read off the one count and :data:`TASK_FACTORS` fitted to the other;
* the calibration rows' task names read as rows of missed jobs: bert tensorflow 5.7 expected (10
  real), worker 282 (277), PyTorchWorker 10.3 (10), evaluator 3.6 (1), ps 0.1 (4: every bert ``ps``
  job is big enough to be sampled); ctr ps 172 (184), worker 171 (163), evaluator 48.7 (44),
  tensorflow 1.2 (2); inception ps 41.3 (41), worker 42.7 (43);
* the calibration rows hold 37 pairs of rows of one job within a workload. Read as drawn from the
  missed jobs the model expects 23.6: too few (Poisson P(X >= 37) 0.006; one scale per workload
  expected 45.0). Read as drawn from all rows far more; the sizes fitted to the mean alone expected
  95 under the first reading;
* the one-hot width of the sample and the groups of drawn test rows (docs/polaris.md).

The Pareto form, the scale below 1, the class multipliers, the one worker per tensorflow instance,
the one fixed factor of every PyTorchWorker job and the clipping are assumptions.

Examples
--------
>>> round(clipped_second_moment(3.0, np.array([np.inf])).item(), 3)
3.0
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from schedlab.polaris.job_model import JobModel
from schedlab.polaris.metadata import AUTHORS_SAMPLE_TASKS, AUTHORS_TASK_WORKLOAD
from schedlab.polaris.schema import (
    JOB_STATUS_COUNTS,
    TABLE_I_SIZES,
    TABLE_I_TARGET,
    WORKLOAD_JOB_COUNTS,
    WORKLOADS,
)

#: share of the real job table's jobs that terminated (732,355 of 1,055,501)
TERMINATED_SHARE = JOB_STATUS_COUNTS["Terminated"] / sum(JOB_STATUS_COUNTS.values())
#: the Pareto shapes :func:`fit_job_size` searches (below 1 the tail has no mean; above the upper
#: end the factor is 1 for all practical purposes)
SHAPE_RANGE = (1.05, 200.0)


#: the workloads whose size factor is fitted to the calibration rows' workloads read as rows of jobs
#: the authors' sample missed (:func:`fit_test_mix_shapes`; the others have at most 4 such rows)
MIX_FITTED = ("bert", "ctr", "inception", "graphlearn")
#: their fitted Pareto shapes (inf: no tail), recorded so that a stand-in does not re-run the fit;
#: ``tests/polaris/test_synthetic_size.py`` re-fits them
MIX_SHAPES = {"bert": float("inf"), "ctr": 1.92, "inception": 1.11, "graphlearn": 1.056}
#: task names whose jobs have one worker per planned instance (no factor ``K``): the
#: authors' tensorflow tasks have 26,757 instance-merge rows over all workloads and 67 rows of their
#: 100,001-row sample (a sample of Table I's 36,690,185 rows), so their ``sum(workers^2) /
#: sum(workers)`` is 0.92 (worker 22, ps 26, evaluator 15, PyTorchWorker 3.6): one worker each. A
#: template class with such a task (``tensorflow``, ``ps+tensorflow``) meets its share of the
#: instance-merge rows by how often its jobs occur (:attr:`JobSize.class_weight`), not by their size
UNIT_TASKS: frozenset[str] = frozenset({"tensorflow"})
#: task names whose jobs take one fixed factor ``K`` instead of a drawn one, **fitted** so that a
#: Table I sample holds the authors' rows of the name (:func:`fit_task_factors`; recorded so that a
#: stand-in does not re-run the fit, ``tests/polaris/test_synthetic_size.py`` re-fits it). Sized like
#: bert's single workers, PyTorchWorker had 517 rows of a 100,000-row sample (authors 193): its
#: ``sum(workers^2) / sum(workers)`` is 3.6 over the authors' tasks (:func:`authors_workers_per_task`;
#: at most 1.5 in nmt, which holds 8,535 of its 19,770 instance-merge rows and whose Table I rows are
#: 1.4 times its instance-merge rows), 17 in the stand-in's bert
TASK_FACTORS: dict[str, float] = {"PyTorchWorker": 0.484}


@dataclass(frozen=True)
class JobSize:
    """Per workload, the Pareto shape of the workers-per-instance factor (inf: none) and the
    largest job in workers (:func:`fit_job_size`)."""

    shape: dict[str, float]
    max_workers: int
    #: per workload, the factor's scale (``K = scale x Pareto draw``; missing: 1)
    scale: dict[str, float] = field(default_factory=dict)
    #: per workload, a multiplier of the scale per template class (:func:`template_classes`, e.g.
    #: ``"ps+worker"``; missing: 1), fitted to the authors' task names (:func:`fit_class_scales`)
    class_scale: dict[str, dict[str, float]] = field(default_factory=dict)
    #: per workload, a multiplier of the probability of the templates of a class whose jobs have a
    #: fixed factor (:func:`fixed_factors`; missing: 1), fitted to the authors' task names as
    #: ``class_scale`` is
    class_weight: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the fixed factor ``K`` of a job with a task of :data:`TASK_FACTORS` (missing: drawn); a
    #: :data:`UNIT_TASKS` task's is 1 whatever this says
    task_factor: dict[str, float] = field(default_factory=dict)

    def fixed(self, classes: np.ndarray) -> np.ndarray:
        """:func:`fixed_factors` of these template classes under this size's task factors."""
        return fixed_factors(classes, self.task_factor)

    def template_scales(self, w: str, classes: np.ndarray) -> np.ndarray:
        """The scale of ``K`` for ``w`` jobs of these template classes."""
        m = self.class_scale.get(w, {})
        return self.scale.get(w, 1.0) * np.array([m.get(c, 1.0) for c in classes], float)

    def weighted(self, w: str, mix: tuple, classes: np.ndarray) -> tuple:
        """``mix = (first, second, p)`` of a ``w`` job with its classes' probability multipliers
        (:func:`weighted_mix`)."""
        return weighted_mix(mix, classes, self.class_weight.get(w, {}))


def weighted_mix(mix: tuple, classes: np.ndarray, weight: dict[str, float]) -> tuple:
    """``(first, second, p)`` with ``p`` times each template's class weight (missing: 1),
    renormalised; ``mix`` itself when there are none.

    >>> weighted_mix((np.array([0, 1]), np.array([-1, -1]), np.array([0.5, 0.5])),
    ...              np.array(["a", "b"]), {"b": 3.0})[2].tolist()
    [0.25, 0.75]
    """
    if not weight:
        return mix
    first, second, p = mix
    q = p * np.array([weight.get(c, 1.0) for c in classes], float)
    return first, second, q / q.sum()


def fixed_factors(classes: np.ndarray, task_factor: dict[str, float]) -> np.ndarray:
    """Per template class (:func:`template_classes`), the fixed factor ``K`` of its jobs: 1 with a
    task of :data:`UNIT_TASKS` (one worker per planned instance), else the smallest
    ``task_factor`` of its task names, nan (drawn) when it has none.

    >>> fixed_factors(np.array(["ps+tensorflow", "ps+worker", "PyTorchWorker"]), {"PyTorchWorker": 0.3}).tolist()
    [1.0, nan, 0.3]
    """
    out = np.full(len(classes), np.nan)
    for i, c in enumerate(classes):
        names = str(c).split("+")
        if not UNIT_TASKS.isdisjoint(names):
            out[i] = 1.0
        elif found := [task_factor[t] for t in names if t in task_factor]:
            out[i] = min(found)
    return out


def authors_workers_per_task(t: str) -> float:
    """``sum(workers^2) / sum(workers)`` over the authors' tasks named ``t``: their sample's rows
    (:data:`schedlab.polaris.metadata.AUTHORS_SAMPLE_TASKS`, each task ``workers^2`` join rows) over
    their instance-merge rows (:data:`schedlab.polaris.metadata.AUTHORS_TASK_WORKLOAD`, ``workers``
    rows), times Table I's rows over the sample's.

    >>> round(authors_workers_per_task("PyTorchWorker"), 2), round(authors_workers_per_task("tensorflow"), 2)
    (3.58, 0.92)
    """
    merged = sum(v for (name, _), v in AUTHORS_TASK_WORKLOAD.items() if name == t)
    return AUTHORS_SAMPLE_TASKS[t] / merged * sum(TABLE_I_SIZES.values()) / TABLE_I_TARGET


def sample_task_rows(model: JobModel, mixes: dict, size: JobSize) -> dict[str, float]:
    """Expected rows per task name of a Table I sample (:func:`table_i_sample_rows`): each
    workload's rows split as its jobs' sensor-merge rows (:func:`workload_task_rows`, ``power =
    2``); to set beside :data:`schedlab.polaris.metadata.AUTHORS_SAMPLE_TASKS`."""
    got: dict[str, float] = {}
    for w, n in table_i_sample_rows().items():
        rows = workload_task_rows(model, mixes[w], size, w, 2)
        total = sum(rows.values())
        for t, r in rows.items():
            got[t] = got.get(t, 0.0) + n * r / total
    return got


def fit_task_factors(model: JobModel, mixes: dict, max_workers: int, tol: float = 0.005) -> dict[str, float]:
    """Per name of :data:`TASK_FACTORS`, the fixed factor ``K`` whose :func:`fit_job_size` (class
    weights, scales and the shapes outside :data:`MIX_SHAPES` re-fitted with it) gives the
    authors' rows of the name in a Table I sample (:func:`sample_task_rows`,
    :data:`schedlab.polaris.metadata.AUTHORS_SAMPLE_TASKS`): bisection on ``log K`` in ``[1/64,
    4]`` down to ``tol`` (the rows rise with ``K``, in steps of the rounding to whole workers: the
    class's weight keeps its instance-merge rows while each job grows), then the end nearer the
    target; one name at a time (seconds per step, so an end is fitted only when it is one)."""
    factor = dict(TASK_FACTORS)
    for t in TASK_FACTORS:
        target = AUTHORS_SAMPLE_TASKS[t]

        def rows(log_k: float) -> float:
            size = fit_job_size(model, mixes, max_workers, {**factor, t: float(np.exp(log_k))})
            return sample_task_rows(model, mixes, size).get(t, 0.0)

        lo, hi = np.log(1 / 64), np.log(4.0)
        got: dict[float, float] = {}
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            got[mid] = rows(mid)
            lo, hi = (lo, mid) if got[mid] >= target else (mid, hi)
        for end in (lo, hi):  # a range's end never bisected to
            if end not in got:
                got[end] = rows(end)
        factor[t] = float(np.exp(min((lo, hi), key=lambda x: abs(got[x] - target))))
    return factor


def target_rows_per_job(w: str) -> float:
    """Mean faithful-join rows per terminated ``w`` job in the real trace: Table I's rows over the
    group-tag table's ``w`` jobs times :data:`TERMINATED_SHARE` (assumed the same per workload).

    >>> round(target_rows_per_job("inception"))
    2856
    """
    return TABLE_I_SIZES[w] / (WORKLOAD_JOB_COUNTS[w] * TERMINATED_SHARE)


def clipped_second_moment(a: float, cap: np.ndarray) -> np.ndarray:
    """``E[min(K, cap)^2]`` for ``K ~ Pareto(a)`` on ``[1, inf)``, per cap (>= 1):
    ``(a - 2 cap^(2-a)) / (a - 2)`` (``1 + 2 ln cap`` at ``a = 2``).

    >>> clipped_second_moment(4.0, np.array([1.0, np.inf])).tolist()
    [1.0, 2.0]
    """
    cap = np.maximum(np.asarray(cap, float), 1.0)
    if abs(a - 2.0) < 1e-9:
        return 1.0 + 2.0 * np.log(cap)
    with np.errstate(over="ignore", divide="ignore"):
        tail = np.where(np.isinf(cap), 0.0 if a > 2 else np.inf, cap ** (2.0 - a))
    return (a - 2.0 * tail) / (a - 2.0)


def job_caps(model: JobModel, first: np.ndarray, second: np.ndarray, max_workers: int) -> np.ndarray:
    """Largest factor ``K`` of jobs with these templates: at most the join rows of a one-task job
    of ``max_workers`` workers (``tasks x workers^2 <= max_workers^2``), at least 1 (a job never
    gets fewer workers than instances)."""
    tasks = 1.0 + (second >= 0)
    n = np.sqrt(template_rows(model, first, second) / tasks)  # the template's instances
    return np.maximum(max_workers / (np.maximum(n, 1.0) * np.sqrt(tasks)), 1.0)


def template_rows(model: JobModel, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Join rows of a terminated job with these templates and one worker per instance:
    ``tasks x instances^2``."""
    inst = model.values["inst_num"]
    n = inst[first] + np.where(second >= 0, inst[np.maximum(second, 0)], 0.0)
    return (1.0 + (second >= 0)) * n**2


def mean_rows(
    a: float, rows: np.ndarray, p: np.ndarray, caps: np.ndarray, fixed: np.ndarray | None = None
) -> float:
    """Expected join rows of a terminated job: template rows ``rows`` (probabilities ``p``) times
    ``E[min(K, cap)^2]`` with shape ``a`` (inf: no factor), or ``K^2`` for the templates whose
    ``fixed`` factor (:func:`fixed_factors`) is not nan (the rounding to whole workers left out)."""
    factor = np.ones(len(rows)) if np.isinf(a) else clipped_second_moment(a, caps)
    if fixed is not None:
        factor = np.where(np.isnan(fixed), factor, np.asarray(fixed, float) ** 2)
    return float(np.sum(p * rows * factor))


def fit_shape(
    rows: np.ndarray, p: np.ndarray, caps: np.ndarray, target: float, fixed: np.ndarray | None = None
) -> float:
    """The Pareto shape whose mean rows per job (:func:`mean_rows`) equal ``target``, by bisection
    in :data:`SHAPE_RANGE`; inf when the templates reach it without the factor, the heaviest shape
    when the caps keep it out of reach.

    >>> fit_shape(np.array([1.0]), np.array([1.0]), np.array([np.inf]), 3.0)
    3.0
    """
    if mean_rows(np.inf, rows, p, caps, fixed) >= target:
        return float("inf")
    lo, hi = SHAPE_RANGE
    if mean_rows(lo, rows, p, caps, fixed) <= target:
        return lo
    for _ in range(80):  # the mean falls as the shape grows
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if mean_rows(mid, rows, p, caps, fixed) > target else (lo, mid)
    return 0.5 * (lo + hi)


def fit_job_size(
    model: JobModel, mixes: dict, max_workers: int, task_factor: dict[str, float] | None = None
) -> JobSize:
    """Fit the factor per workload (see the module docstring). ``mixes[w]`` = ``(first, second,
    p)``: the templates a ``w`` job draws and their probabilities
    (:func:`schedlab.polaris.metadata.template_mix`); ``max_workers``: the trace's largest job.

    Workloads in :data:`MIX_SHAPES` take that shape and the scale whose mean rows per job equal
    :func:`target_rows_per_job` (:func:`fit_scale`); the others a shape fitted to that mean with
    scale 1 (:func:`fit_shape`). ``task_factor``: the fixed factors (default :data:`TASK_FACTORS`)."""
    if max_workers < 1:
        return JobSize({w: float("inf") for w in WORKLOADS}, 0)
    factor = dict(TASK_FACTORS if task_factor is None else task_factor)
    shape, scale, mult, weight = {}, {}, {}, {}
    for w in WORKLOADS:
        if w in MIX_SHAPES:
            shape[w] = MIX_SHAPES[w]
            scale[w], mult[w], weight[w] = fit_sizes(model, mixes[w], max_workers, shape[w], w, factor)
        else:
            first, second, p = mixes[w]
            caps = job_caps(model, first, second, max_workers)
            fixed = fixed_factors(template_classes(model, first, second), factor)
            shape[w] = fit_shape(template_rows(model, first, second), p, caps, target_rows_per_job(w), fixed)
    return JobSize(shape, int(max_workers), scale, mult, weight, factor)


def draw_factor(
    size: JobSize,
    workload: np.ndarray,
    caps: np.ndarray,
    rng: np.random.Generator,
    classes: np.ndarray | None = None,
) -> np.ndarray:
    """``K`` per job: the workload's scale (times its template class's multiplier, ``classes``:
    :func:`template_classes` per job) times a Pareto draw (1 for jobs without a workload; no draw
    with shape inf), clipped at ``caps``; the fixed factor (:meth:`JobSize.fixed`) for a workload job
    with a task of :data:`UNIT_TASKS` or :data:`TASK_FACTORS`.
    Draws one uniform per job whatever the shapes, so the stream does not depend on them."""
    u = rng.random(workload.size)
    a = np.array([size.shape.get(w, np.inf) if w else np.inf for w in workload], float)
    scale = np.array([size.scale.get(w, 1.0) if w else 1.0 for w in workload], float)
    if classes is not None:
        mult = [size.class_scale.get(w, {}).get(c, 1.0) if w else 1.0 for w, c in zip(workload, classes)]
        scale = scale * np.array(mult, float)
    with np.errstate(divide="ignore"):
        k = np.where(np.isinf(a), 1.0, (1.0 - u) ** (-1.0 / np.where(np.isinf(a), 1.0, a)))
    k = np.minimum(scale * k, np.maximum(caps, 1.0))
    if classes is not None:  # a fixed factor: the uniform is drawn all the same
        fixed = size.fixed(classes)
        sel = ~np.isnan(fixed) & (np.asarray(workload, dtype=object) != "")
        k[sel] = fixed[sel]
    return k


def task_instances(model: JobModel, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per template, the planned instances of its first and second task (0: no second task)."""
    inst = model.values["inst_num"]
    return inst[first].astype(float), np.where(second >= 0, inst[np.maximum(second, 0)], 0.0).astype(float)


def _workers_grid(
    inst_first: np.ndarray,
    inst_second: np.ndarray,
    caps: np.ndarray,
    a: float,
    scale,
    nodes: int = 400,
    fixed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Workers of a job per template (rows) and quadrature node (columns), and the nodes' weights:
    each task ``max(round(inst x K), 1)`` workers, ``K = min(scale x P, cap)``, ``P ~ Pareto(a)``
    on ``[1, inf)`` (inf: ``P = 1``) by quadrature over ``v = P(P > k)`` on a log grid down to
    ``1e-15`` (the tail beyond carries no weight worth counting). ``scale``: one, or one per template;
    ``fixed``: per template a fixed ``K``, nan where it is drawn (:func:`fixed_factors`)."""
    if np.isinf(a):
        k, w = np.array([1.0]), np.array([1.0])
    else:
        edges = np.concatenate([[1.0], np.geomspace(1.0, 1e-15, nodes + 1)[1:], [0.0]])
        k = np.sqrt(edges[:-1] * np.maximum(edges[1:], 1e-16)) ** (-1.0 / a)
        w = edges[:-1] - edges[1:]
    i1, i2 = np.asarray(inst_first, float)[:, None], np.asarray(inst_second, float)[:, None]
    s = np.broadcast_to(np.asarray(scale, float), (i1.shape[0],))[:, None]
    kk = np.minimum(s * k[None, :], np.maximum(np.asarray(caps, float), 1.0)[:, None])
    if fixed is not None:
        f = np.asarray(fixed, float)[:, None]
        kk = np.where(np.isnan(f), kk, f)
    workers = np.maximum(np.round(i1 * kk), 1.0) + np.where(i2 > 0, np.maximum(np.round(i2 * kk), 1.0), 0.0)
    return workers, w


def job_rows_distribution(
    inst_first: np.ndarray,
    inst_second: np.ndarray,
    p: np.ndarray,
    caps: np.ndarray,
    a: float,
    scale: float | np.ndarray = 1.0,
    nodes: int = 400,
    fixed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The join rows of one terminated job as a discrete distribution (values, probabilities),
    as the generator makes them: the job ``tasks x workers^2`` rows, workers as
    :func:`_workers_grid`'s. Templates: ``inst_first``, ``inst_second`` (0: one task;
    :func:`task_instances`) with probabilities ``p``; ``scale`` one or one per template; ``fixed``
    the templates' fixed factors (:func:`fixed_factors`)."""
    workers, w = _workers_grid(inst_first, inst_second, caps, a, scale, nodes, fixed)
    i2 = np.asarray(inst_second, float)[:, None]
    rows = (1.0 + (i2 > 0)) * workers**2
    return rows.ravel(), (np.asarray(p, float)[:, None] * w[None, :]).ravel()


def template_classes(model: JobModel, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Each template's class: its task names, ``"ps+worker"`` or ``"worker"``."""
    tn = model.meta["task_name"]
    two = second >= 0
    out = tn[first].astype(object)
    out[two] = out[two] + "+" + tn[second[two]].astype(object)
    return out


def task_name_rows(
    model: JobModel,
    mix: tuple,
    caps: np.ndarray,
    a: float,
    scale: np.ndarray,
    power: int,
    task_factor: dict[str, float] | None = None,
) -> dict[str, float]:
    """Expected rows per task name of one ``w`` job (templates ``mix``, per-template ``scale``,
    fixed factors by ``task_factor``, :func:`fixed_factors`): every task of a job has ``workers``
    rows after the authors' instance merge (``power = 1``: their
    ``selected_df.value_counts(['task_name', 'workload'])``) and ``workers^2`` after the sensor
    merge (``power = 2``: the faithful join a Table I sample is drawn from)."""
    first, second, p = mix
    fixed = fixed_factors(template_classes(model, first, second), task_factor or {})
    workers, w = _workers_grid(*task_instances(model, first, second), caps, a, scale, fixed=fixed)
    return _by_task_name(model, first, second, p * ((workers**power) @ w))


def _by_task_name(
    model: JobModel, first: np.ndarray, second: np.ndarray, per_task: np.ndarray
) -> dict[str, float]:
    """Sum of ``per_task[k]`` over every task of every template ``k``, per task name."""
    tn = model.meta["task_name"]
    out: dict[str, float] = {}
    for names, sel in ((tn[first], slice(None)), (tn[np.maximum(second, 0)], second >= 0)):
        for t, v in zip(np.asarray(names)[sel].tolist(), per_task[sel].tolist()):
            out[t] = out.get(t, 0.0) + v
    return out


def authors_task_shares(w: str, names) -> dict[str, float]:
    """The authors' instance-merge rows of workload ``w`` per task name
    (:data:`schedlab.polaris.metadata.AUTHORS_TASK_WORKLOAD`) as shares over ``names`` (the task
    names the stand-in's ``w`` templates hold); empty when they have none of them."""
    counts = {t: float(AUTHORS_TASK_WORKLOAD.get((t, w), 0)) for t in names}
    total = sum(counts.values())
    return {t: c / total for t, c in counts.items()} if total else {}


#: iterations and damping of :func:`fit_class_scales`' multiplicative updates
CLASS_ITERATIONS = 80
CLASS_STEP = 0.5
#: alternations of the class multipliers and the workload's scale in :func:`fit_sizes`
SIZE_ROUNDS = 3


def fit_class_scales(
    model: JobModel,
    mix: tuple,
    caps: np.ndarray,
    a: float,
    scale: float,
    w: str,
    task_factor: dict[str, float] | None = None,
) -> tuple[dict[str, float], dict[str, float]]:
    """Multipliers of ``scale`` per template class (:func:`template_classes`) whose instance-merge
    rows per task name (:func:`task_name_rows`, ``power = 1``) take the authors' shares
    (:func:`authors_task_shares`); a class whose jobs have a fixed factor (a task of
    :data:`UNIT_TASKS`, or of ``task_factor``: :func:`fixed_factors`) moves its templates'
    probability instead (:func:`weighted_mix`). Multiplicative updates from
    one common scale: each class's multiplier (or weight) times the geometric mean of ``(target /
    model share)^CLASS_STEP`` over its task names, :data:`CLASS_ITERATIONS` times, within ``[1/64,
    64]`` (the rounding to whole workers makes the shares step functions, so no gradient). A
    workload has more classes than task names; starting from one scale and moving every class by
    its own names' misfit keeps the classes that need no change near it. Returns ``(class_scale,
    class_weight)``; ``({}, {})`` when the authors' counts lack the task names."""
    first, second, _ = mix
    cls = template_classes(model, first, second)
    classes = sorted(set(cls.tolist()))
    names = sorted({t for c in classes for t in c.split("+")})
    target = authors_task_shares(w, names)
    if not target or len(names) < 2:
        return {}, {}
    index = np.searchsorted(classes, cls)
    members = [[n for n in names if n in c.split("+") and target[n] > 0] for c in classes]
    fixed = ~np.isnan(fixed_factors(np.array(classes, dtype=object), task_factor or {}))
    log_m = np.zeros(len(classes))
    for _ in range(CLASS_ITERATIONS):
        weight = {c: float(np.exp(v)) for c, v, f in zip(classes, log_m, fixed) if f}
        scales = scale * np.exp(np.where(fixed, 0.0, log_m)[index])
        rows = task_name_rows(model, weighted_mix(mix, cls, weight), caps, a, scales, 1, task_factor)
        total = sum(rows.values())
        gap = {n: np.log(target[n] / max(rows.get(n, 0.0) / total, 1e-12)) for n in names if target[n] > 0}
        step = np.array([np.mean([gap[n] for n in m]) if m else 0.0 for m in members])
        log_m = np.clip(log_m + CLASS_STEP * step, -np.log(64.0), np.log(64.0))
    mult = {c: float(np.exp(v)) for c, v, f in zip(classes, log_m, fixed) if not f}
    weight = {c: float(np.exp(v)) for c, v, f in zip(classes, log_m, fixed) if f}
    return mult, weight


def fit_sizes(
    model: JobModel,
    mix: tuple,
    max_workers: int,
    a: float,
    w: str,
    task_factor: dict[str, float] | None = None,
) -> tuple[float, dict[str, float], dict[str, float]]:
    """The scale, class multipliers and class weights of ``w`` jobs with shape ``a`` (fixed factors
    by ``task_factor``):
    :func:`fit_class_scales` and :func:`fit_scale` (mean rows per job
    :func:`target_rows_per_job`) in turn, :data:`SIZE_ROUNDS` times. Returns ``(scale,
    class_scale, class_weight)``."""
    first, second, p = mix
    caps = job_caps(model, first, second, max_workers)
    inst = task_instances(model, first, second)
    cls = template_classes(model, first, second)
    fixed = fixed_factors(cls, task_factor or {})
    scale = fit_scale(*inst, p, caps, a, target_rows_per_job(w), fixed=fixed)
    mult: dict[str, float] = {}
    weight: dict[str, float] = {}
    for _ in range(SIZE_ROUNDS):
        mult, weight = fit_class_scales(model, mix, caps, a, scale, w, task_factor)
        rel = np.array([mult.get(c, 1.0) for c in cls])
        pw = weighted_mix(mix, cls, weight)[2]
        scale = fit_scale(*inst, pw, caps, a, target_rows_per_job(w), rel, fixed)
    return scale, mult, weight


def fit_scale(
    inst_first: np.ndarray,
    inst_second: np.ndarray,
    p: np.ndarray,
    caps: np.ndarray,
    a: float,
    target: float,
    rel: np.ndarray | float = 1.0,
    fixed: np.ndarray | None = None,
) -> float:
    """The scale whose mean rows per job (:func:`job_rows_distribution`, template ``k``'s scale
    that times ``rel[k]``, ``fixed`` factors where not nan) reach ``target``: the smallest in
    ``[1/64, 64]`` (bisection on its logarithm; the mean rises with it, in steps)."""

    def mean(log_scale: float) -> float:
        r, pr = job_rows_distribution(
            inst_first, inst_second, p, caps, a, np.exp(log_scale) * np.asarray(rel), fixed=fixed
        )
        return float(np.sum(pr * r))

    lo, hi = np.log(1 / 64), np.log(64.0)
    if mean(lo) >= target:
        return float(np.exp(lo))
    if mean(hi) < target:
        return float(np.exp(hi))
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if mean(mid) >= target else (mid, hi)
    return float(np.exp(hi))


def workload_rows(model: JobModel, mix: tuple, size: JobSize, w: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`job_rows_distribution` of a terminated ``w`` job: its templates ``mix = (first,
    second, p)`` (:func:`schedlab.polaris.metadata.template_mix`) weighted by ``size``'s class
    weights, capped at ``size``'s largest job, with ``size``'s shape, scale and class multipliers
    for ``w``."""
    first, second, _ = mix
    cls = template_classes(model, first, second)
    p = size.weighted(w, mix, cls)[2]
    caps = job_caps(model, first, second, size.max_workers)
    scale = size.template_scales(w, cls)
    return job_rows_distribution(
        *task_instances(model, first, second), p, caps, size.shape[w], scale, fixed=size.fixed(cls)
    )


def workload_task_rows(model: JobModel, mix: tuple, size: JobSize, w: str, power: int) -> dict[str, float]:
    """:func:`task_name_rows` of a ``w`` job with templates ``mix`` as ``size`` sizes it (its largest
    job, shape, scale and class multipliers), as :func:`workload_rows` is for the job's rows."""
    first, second, _ = mix
    cls = template_classes(model, first, second)
    caps = job_caps(model, first, second, size.max_workers)
    scale = size.template_scales(w, cls)
    return task_name_rows(
        model, size.weighted(w, mix, cls), caps, size.shape[w], scale, power, size.task_factor
    )


def sample_job_counts(
    model: JobModel,
    mixes: dict,
    size: JobSize,
    sample_rows: dict[str, float],
    real_rows: dict[str, int],
) -> dict[str, dict[str, float]]:
    """Per workload, what a Table I sample of ``sample_rows[w]`` rows, drawn uniformly from a
    stratum of Table I's size whose ``N = rows / mean`` jobs have the model's rows
    (:func:`job_rows_distribution`; ``mixes`` as :func:`fit_job_size`'s), holds in expectation:

    * ``jobs``: distinct jobs in the sample, ``N E[1 - exp(-n q)]`` (``q``: a job's share of the
      stratum's rows);
    * ``missed_share``: the share of the stratum's rows in jobs the sample does not hold,
      ``N E[q exp(-n q)]``;
    * ``pairs_rows``: pairs of rows of one job among ``real_rows[w]`` rows drawn uniformly from the
      stratum, ``C(m, 2) N E[q^2]``;
    * ``pairs_unseen``: the same among rows drawn uniformly from the rows of jobs the sample does
      not hold (:func:`schedlab.polaris.pipeline.unseen_jobs` with ``exclude="jobs"``):
      ``C(m, 2) E[q^2 exp(-n q)] / (N E[q exp(-n q)]^2)`` (a job is missed with probability
      ``exp(-n q)``; its share of the missed rows is then ``q`` over theirs).
    """
    out = {}
    for w, n in sample_rows.items():
        r, pr = workload_rows(model, mixes[w], size, w)
        out[w] = stratum_counts(r, pr, TABLE_I_SIZES[w], n, real_rows.get(w, 0))
    return out


def stratum_counts(r: np.ndarray, pr: np.ndarray, stratum_rows: float, n: float, m: int) -> dict[str, float]:
    """:func:`sample_job_counts` for one stratum of ``stratum_rows`` rows whose jobs' rows have
    the distribution ``(r, pr)``, a sample of ``n`` rows and ``m`` real rows."""
    n_jobs = stratum_rows / float(np.sum(pr * r))
    q = r / stratum_rows
    missed = float(np.sum(pr * q * np.exp(-n * q)))
    c2 = m * (m - 1) / 2
    return {
        "jobs": n_jobs * float(np.sum(pr * -np.expm1(-n * q))),
        "missed_share": n_jobs * missed,
        "pairs_rows": c2 * n_jobs * float(np.sum(pr * q**2)),
        "pairs_unseen": c2 * float(np.sum(pr * q**2 * np.exp(-n * q))) / (n_jobs * missed**2),
    }


def missed_rows(
    model: JobModel, mixes: dict, size: JobSize, sample_rows: dict[str, float]
) -> dict[str, float]:
    """Per workload, the expected join rows of jobs a Table I sample of ``sample_rows[w]`` rows
    misses (:func:`sample_job_counts`' ``missed_share`` times the stratum's rows)."""
    counts = sample_job_counts(model, mixes, size, sample_rows, {})
    return {w: c["missed_share"] * TABLE_I_SIZES[w] for w, c in counts.items()}


def table_i_sample_rows() -> dict[str, float]:
    """Rows per workload of a Table I sample of :data:`schedlab.polaris.schema.TABLE_I_TARGET` rows
    (each workload's share of Table I's rows)."""
    total = sum(TABLE_I_SIZES.values())
    return {w: TABLE_I_TARGET * TABLE_I_SIZES[w] / total for w in WORKLOADS}


def missed_template_rows(
    model: JobModel, mix: tuple, size: JobSize, w: str, sample_rows: float
) -> np.ndarray:
    """Per template of ``mix``, its expected join rows in ``w`` jobs a Table I sample of
    ``sample_rows`` rows misses, per ``w`` job (a job is missed with probability ``exp(-n q)``,
    :func:`sample_job_counts`): normalised, the template of a row drawn from those rows."""
    r, pr = workload_rows(model, mix, size, w)
    q = r / TABLE_I_SIZES[w]
    return (pr * r * np.exp(-sample_rows * q)).reshape(mix[0].size, -1).sum(axis=1)


def missed_task_rows(
    model: JobModel, mix: tuple, size: JobSize, w: str, sample_rows: float
) -> dict[str, float]:
    """Shares per task name of the join rows of the ``w`` jobs a Table I sample of
    ``sample_rows`` rows misses (:func:`missed_template_rows`): what the calibration rows' task
    names are, read as rows of missed jobs. Every task of a job has the job's ``workers^2`` rows, so
    a two-task job's rows split evenly."""
    first, second, _ = mix
    per_template = missed_template_rows(model, mix, size, w, sample_rows)
    out = _by_task_name(model, first, second, per_template * np.where(second >= 0, 0.5, 1.0))
    total = sum(out.values())
    return {t: v / total for t, v in out.items()}


def fit_test_mix_shapes(
    model: JobModel,
    mixes: dict,
    max_workers: int,
    counts: dict[str, int],
    sample_rows: dict[str, float],
    start: dict[str, float] | None = None,
) -> tuple[dict[str, float], float]:
    """The shapes of :data:`MIX_FITTED` (each with its :func:`fit_scale`) that maximise the
    multinomial likelihood of ``counts`` (real rows per workload) when those rows are drawn
    uniformly from the rows of jobs a Table I sample of ``sample_rows`` misses
    (:func:`missed_rows`): the reading of the authors' test rows that their encoder's stored
    values require (:func:`schedlab.polaris.metadata.authors_known_values`). The other
    workloads keep :func:`fit_job_size`'s shapes. Nelder-Mead on ``log(a - 1.05)`` from
    ``a = 1.55`` (or the shapes ``start``, inf taken as 400); a shape over 200 is returned as inf.
    The rounding to whole workers makes the likelihood a step function of the shapes, flat along
    the heavy tails, so the search ends where its simplex stalls: a local optimum. Returns the
    shapes and the negative log-likelihood (up to a constant)."""
    from scipy.optimize import minimize

    base = fit_job_size(model, mixes, max_workers)
    lo = SHAPE_RANGE[0]

    def size_for(x: np.ndarray) -> JobSize:
        shape, scale, mult, weight = dict(base.shape), {}, {}, {}
        for w, xx in zip(MIX_FITTED, x):
            a = lo + float(np.exp(xx))
            a = float("inf") if a > SHAPE_RANGE[1] else a
            shape[w] = a
            scale[w], mult[w], weight[w] = fit_sizes(model, mixes[w], max_workers, a, w, base.task_factor)
        return JobSize(shape, int(max_workers), scale, mult, weight, base.task_factor)

    def nll(x: np.ndarray) -> float:
        u = missed_rows(model, mixes, size_for(x), sample_rows)
        total = sum(u.values())
        return -float(sum(c * np.log(u[w] / total) for w, c in counts.items() if c))

    res = minimize(
        nll,
        x0=(
            np.full(len(MIX_FITTED), np.log(0.5))
            if start is None
            else np.log(np.minimum([start[w] for w in MIX_FITTED], 400.0) - lo)
        ),
        method="Nelder-Mead",
        options={"xatol": 1e-3, "fatol": 1e-3, "maxiter": 600},
    )
    fitted = size_for(res.x)
    return {w: fitted.shape[w] for w in MIX_FITTED}, float(res.fun)


def pair_count(job_name, workload) -> dict[str, int]:
    """Pairs of rows sharing a job name within each workload (of real rows, e.g.).

    >>> pair_count(["a", "a", "a", "b"], ["x", "x", "x", "x"])
    {'x': 3}
    """
    import pandas as pd

    df = pd.DataFrame({"job": list(job_name), "w": list(workload)})
    c = df.groupby(["w", "job"]).size()
    return {w: int((g * (g - 1) // 2).sum()) for w, g in c.groupby(level=0)}
