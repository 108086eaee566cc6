"""Version ``v2``'s model of the static metadata (task name, user, group) of a workload's jobs.

The 800 real rows are about one row per job, so they hold only a handful of each workload's users
and groups; copying them (the generator before this model) gives a trace with 30 users, about 600
groups and no combination beyond the calibration rows. This model keeps the real values and their
dependence on the job's template row, and adds fitted smoothing mass for what 800 rows cannot show:

* **Task name** (workload -> task name): a job's tasks come with its template
  (:class:`schedlab.polaris.job_model.JobTemplates`), so numeric values and task name stay
  consistent. With probability :attr:`MetadataModel.borrow` (Good-Turing: task names seen once in
  the workload's rows, plus one, over rows plus one) a workload job takes a template of the pooled
  rows instead, its task name drawn from :data:`AUTHORS_TASK_WORKLOAD` (the authors' join counts
  per task name and workload, real) plus the workload's own counts. ``rl`` and ``vgg`` have no real
  row: their templates are pooled rows with the task mix of :data:`AUTHORS_TASK_WORKLOAD`
  (**invented** workloads, :data:`INVENTED_WORKLOADS`).
* **User** (workload, template -> user), three paths: the template row's real user; with
  probability :attr:`MetadataModel.p_any_user` (one pseudo-job per workload) a real user drawn by
  the workload's user counts plus one pseudo-row spread over all real users; with probability
  :attr:`MetadataModel.p_new_user` (Good-Turing: users seen once among the workload's rows, plus
  one, over rows plus one) an **invented** user of a Zipf(1.1) vocabulary shared by all workloads.
  An ``rl`` job's user is :data:`FIXED_USERS`'s (the authors' sample shows one rl user).
* **Group** ((workload, user) -> group; every real group has one user and one workload): drawn
  from the pair's Pitman–Yor random measure (:mod:`schedlab.polaris.groups`), whose discount and
  concentration (:attr:`MetadataModel.group_py`) are fitted by maximum likelihood to the real rows'
  per-pair partitions of jobs into groups (a workload with fewer than :data:`MIN_GROUP_FIT_JOBS`
  real jobs takes the fit pooled over all pairs). The heaviest atoms of a real user's measure
  carry the user's real groups of that workload (most jobs first); every other atom, and every
  atom of an invented user, is an **invented** group hashed from the workload, the user and the
  atom.

Invented ids have the trace's format (hex) and are told apart by :func:`provenance`: every real
user and group id the model holds, the invented workloads, and the fitted rates.
:func:`can_produce` says which discrete combinations (workload, task name, GPU type, user, group)
the model gives positive probability, from the model itself rather than from samples.

Examples
--------
>>> from schedlab.polaris.calibration import load_calibration_rows    # doctest: +SKIP
>>> from schedlab.polaris.job_model import calibrate                   # doctest: +SKIP
>>> meta = fit_metadata(calibrate(load_calibration_rows()))             # doctest: +SKIP
>>> round(meta.p_new_user["bert"], 3)                                   # doctest: +SKIP
0.036
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from schedlab.polaris.groups import fit_pitman_yor, stick_weights
from schedlab.polaris.job_model import JobModel
from schedlab.polaris.schema import WORKLOADS

#: joined rows per (task name, workload) of the authors' join of the real trace, as their EDA
#: notebook printed them (``polaris-slo-cloud/Profiling``, ``case-studies/alibaba/03-eda.ipynb``,
#: ``selected_df.value_counts(['task_name', 'workload'])``): the real support of task names per workload
AUTHORS_TASK_WORKLOAD: dict[tuple[str, str], int] = {
    ("ps", "ctr"): 324698, ("worker", "ctr"): 310884, ("worker", "bert"): 239376,
    ("ps", "inception"): 198623, ("worker", "inception"): 198077, ("evaluator", "ctr"): 84484,
    ("worker", "graphlearn"): 70336, ("ps", "graphlearn"): 70327, ("ps", "bert"): 53947,
    ("tensorflow", "bert"): 22248, ("PyTorchWorker", "bert"): 10746, ("PyTorchWorker", "nmt"): 8535,
    ("worker", "rl"): 6019, ("tensorflow", "ctr"): 4032, ("ps", "resnet"): 2449,
    ("worker", "resnet"): 2379, ("evaluator", "bert"): 2086, ("ps", "xlnet"): 1750,
    ("worker", "xlnet"): 1750, ("worker", "nmt"): 892, ("PyTorchWorker", "rl"): 489,
    ("TensorboardTask", "bert"): 445, ("OssToVolumeWorker", "bert"): 208, ("worker", "vgg"): 193,
    ("ps", "vgg"): 193, ("MWorker", "resnet"): 190, ("tensorflow", "graphlearn"): 154,
    ("tensorflow", "resnet"): 146, ("tensorflow", "xlnet"): 125, ("tensorflow", "nmt"): 47,
    ("TensorboardTask", "resnet"): 18, ("JupyterTask", "bert"): 5, ("TensorboardTask", "nmt"): 4,
    ("OpenmpiTracker", "vgg"): 4, ("OpenmpiTracker", "bert"): 3, ("tensorflow", "rl"): 3,
    ("OpenmpiWorker", "bert"): 3, ("TensorboardTask", "rl"): 2, ("JupyterTask", "graphlearn"): 2,
    ("ps", "rl"): 2, ("tensorflow", "vgg"): 2,
}  # fmt: skip
#: rows per task name of the authors' 100,001-row Table I sample (``polaris-slo-cloud/polaris-ai``
#: ``ml_data-profiling/alibaba_data-evaluation.ipynb`` cell 76, ``topk_task_names``): a check of
#: the stand-in's sample, not fitted (the sizes are fitted to :data:`AUTHORS_TASK_WORKLOAD`)
AUTHORS_SAMPLE_TASKS: dict[str, int] = {
    "worker": 50_125, "ps": 46_116, "evaluator": 3_495, "PyTorchWorker": 193, "tensorflow": 67,
    "OssToVolumeWorker": 4, "OpenmpiTracker": 1,
}  # fmt: skip
#: workloads without a real calibration row: their jobs are built from pooled rows (invented)
INVENTED_WORKLOADS: tuple[str, ...] = ("rl", "vgg")
#: a workload's single user, read off the authors' sample (``04-evaluation.ipynb``, top users):
#: user ``302aa475597b`` has 2,316 sample rows, exactly the sample's rl rows (Table I), so every rl
#: row is that user's (an inference from the two printed counts; the id is real)
FIXED_USERS: dict[str, str] = {"rl": "302aa475597b"}
#: Zipf exponent of the invented users' popularity
USER_ZIPF = 1.1
#: a workload with fewer real jobs than this takes the group recurrence fitted on all pairs
MIN_GROUP_FIT_JOBS = 50
#: the trace's user vocabulary size the generator draws from (real users of the model included)
N_USERS = 1_300
_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass
class MetadataModel:
    """What :func:`draw_metadata` draws from (fitted by :func:`fit_metadata`); per workload rates."""

    row_workload: np.ndarray  # workload of each real row ('' = none)
    user: np.ndarray  # per real row
    group: np.ndarray  # per real row
    task_name: np.ndarray  # per real row
    gpu_type: np.ndarray  # per real row ('' = none)
    p_new_user: dict[str, float]
    p_any_user: dict[str, float]
    borrow: dict[str, float]
    task_p: dict[str, tuple[np.ndarray, np.ndarray]]  # borrowed task names and probabilities
    known_users: dict[str, tuple[np.ndarray, np.ndarray]]  # any-user path: ids, probabilities
    invented_users: np.ndarray
    invented_p: np.ndarray
    salt: int  # keys every pair's random measure and its invented group ids
    group_py: dict[str, tuple[float, float]]  # per workload: Pitman-Yor discount, concentration
    group_fit: dict[str, str]  # per workload: 'own' rows or 'pooled' over all pairs
    real_groups: dict[tuple[str, str], np.ndarray]  # (workload, real user) -> its groups, most jobs first
    _measures: dict = field(default_factory=dict, repr=False, compare=False)  # memo of group_measure


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def hex_ids(n: int, n_chars: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random lowercase hex strings of ``n_chars`` characters (the trace's ID format).

    >>> [len(s) for s in hex_ids(2, 24, np.random.default_rng(0))]
    [24, 24]
    """
    digits = rng.integers(0, 16, size=(n, n_chars), dtype=np.uint8)
    return _HEX[digits].view(f"S{n_chars}").ravel().astype(str)


def draw_users(n_users: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n_users`` synthetic user ids and their Zipf(1.1) probabilities (users of jobs without a
    workload; a workload job takes its template row's real user)."""
    users = hex_ids(n_users, 12, rng)
    user_p = 1.0 / np.arange(1, n_users + 1) ** 1.1
    user_p /= user_p.sum()
    return users, user_p


def _good_turing(values: np.ndarray) -> float:
    """Probability that the next draw is a value not seen yet: values seen once over draws, plus
    one each (so that a workload whose rows show one value keeps some mass).

    >>> _good_turing(np.array(["a", "a", "b"]))
    0.5
    """
    _, counts = np.unique(values, return_counts=True)
    once = int((counts == 1).sum())
    return (once + 1) / (values.size + 1) if values.size else 1.0


def row_workloads(model: JobModel) -> np.ndarray:
    """Workload of each real row of ``model`` (from its own templates; '' = pooled only)."""
    out = np.full(model.meta["user"].size, "", dtype=object)
    for w in WORKLOADS:
        tpl = model.templates[w]
        if tpl is model.templates[""]:
            continue
        out[tpl.first] = w
        out[tpl.second[tpl.second >= 0]] = w
    return out


def _task_prior(w: str, own: np.ndarray, available: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Borrowed task names of workload ``w``: the authors' join counts (normalised per workload)
    plus the workload's own row shares, over the task names that have pooled templates."""
    auth = np.array([AUTHORS_TASK_WORKLOAD.get((t, w), 0) for t in available], float)
    auth = auth / auth.sum() if auth.sum() else auth
    mine = np.array([(own == t).sum() for t in available], float)
    mine = mine / mine.sum() if mine.sum() else mine
    p = auth + mine
    if p.sum() == 0:  # a workload unknown to both sources: any pooled task name
        p = np.ones(available.size)
    return available, p / p.sum()


def fit_metadata(
    model: JobModel, rng: np.random.Generator | None = None, n_users: int = N_USERS
) -> MetadataModel:
    """Fit the metadata model on the real rows ``model`` holds (see the module docstring).

    ``rng`` draws the invented user ids (default: a fixed seed, so the same real rows give the
    same vocabulary); ``n_users`` is the size of the whole user vocabulary, real users included.
    """
    if n_users < 1:
        raise ValueError(f"n_users must be positive, got {n_users}")
    rng = np.random.default_rng(0) if rng is None else rng
    meta = model.meta
    wl = row_workloads(model)
    user, group, task = meta["user"], meta["group"], meta["task_name"]
    real_users, user_count = np.unique(user, return_counts=True)
    pooled_first_tasks = np.unique(task[model.templates[""].first])
    p_new_user, p_any, borrow, task_p, known = {}, {}, {}, {}, {}
    for w in WORKLOADS:
        rows = np.flatnonzero(wl == w)
        p_new_user[w] = _good_turing(user[rows])
        p_any[w] = 1.0 / (rows.size + 1)
        borrow[w] = _good_turing(task[rows]) if rows.size else 1.0
        task_p[w] = _task_prior(w, task[rows], pooled_first_tasks)
        ids, counts = np.unique(user[rows], return_counts=True)
        weight = user_count / user_count.sum()  # one pseudo-row over every real user
        weight[np.searchsorted(real_users, ids)] += counts
        known[w] = (real_users, weight / weight.sum())
        if w in FIXED_USERS:  # its user is known: no other path
            p_new_user[w] = p_any[w] = 0.0
    extra = max(n_users - real_users.size, 1)
    invented, inv_p = draw_users(extra, rng)
    group_py, group_fit = fit_group_recurrence(model)
    return MetadataModel(
        wl, user, group, task, meta["gpu_type"], p_new_user, p_any, borrow, task_p, known,
        invented, inv_p, int(hex_ids(1, 15, rng)[0], 16), group_py, group_fit, _real_groups(model),
    )  # fmt: skip


def pair_group_counts(model: JobModel) -> dict[tuple[str, str], pd.Series]:
    """Jobs per group of each real (workload, user) pair, most jobs first (ties by id); rows of one
    job count once."""
    meta = model.meta
    jobs = pd.DataFrame({k: meta[k] for k in ("job_name", "workload", "user", "group")})
    jobs = jobs[jobs.workload.isin(WORKLOADS)].drop_duplicates("job_name")
    out = {}
    for (w, u), pair in jobs.groupby(["workload", "user"], sort=True):
        c = pair.group.value_counts()
        out[(w, u)] = c.iloc[np.lexsort((c.index.to_numpy(), -c.to_numpy()))]
    return out


def job_partitions(model: JobModel) -> dict[str, list[np.ndarray]]:
    """Per workload, the real rows' partition of each user's jobs into groups (group sizes in jobs):
    what :func:`fit_group_recurrence` fits."""
    out: dict[str, list[np.ndarray]] = {w: [] for w in WORKLOADS}
    for (w, _), counts in pair_group_counts(model).items():
        out[w].append(counts.to_numpy())
    return out


def fit_group_recurrence(model: JobModel) -> tuple[dict[str, tuple[float, float]], dict[str, str]]:
    """Pitman–Yor ``(discount, concentration)`` of each workload's groups, maximum likelihood on
    :func:`job_partitions`; a workload with fewer than :data:`MIN_GROUP_FIT_JOBS` real jobs (or
    none) takes the fit over every workload's pairs. Returns the parameters and their source."""
    parts = job_partitions(model)
    pooled = fit_pitman_yor([p for w in WORKLOADS for p in parts[w]])
    params, source = {}, {}
    for w in WORKLOADS:
        own = sum(int(p.sum()) for p in parts[w]) >= MIN_GROUP_FIT_JOBS
        params[w] = fit_pitman_yor(parts[w]) if own else pooled
        source[w] = "own" if own else "pooled"
    return params, source


def _real_groups(model: JobModel) -> dict[tuple[str, str], np.ndarray]:
    """A real user's real groups per workload, most jobs first (ties by id): the labels of the
    heaviest atoms of that pair's measure."""
    return {pair: c.index.to_numpy().astype(object) for pair, c in pair_group_counts(model).items()}


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijective scramble of 64-bit integers (hashed ids)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9) & _MASK64
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB) & _MASK64
        return x ^ (x >> np.uint64(31))


def _pair_key(w: str, user: str, salt: int) -> int:
    """64-bit key of a (workload, user) pair: user ids are hex, the workload its index."""
    base = np.uint64(int(user, 16) & 0xFFFFFFFFFFFFFFFF) ^ np.uint64(salt & 0xFFFFFFFFFFFFFFFF)
    return int(_mix64(np.array([base ^ np.uint64(WORKLOADS.index(w) + 1)], dtype=np.uint64))[0])


def atom_group_ids(pair_key: int, atom: np.ndarray) -> np.ndarray:
    """32-hex-character invented group id of each ``atom`` of the pair keyed ``pair_key``.

    >>> atom_group_ids(7, np.array([3, 3, 4])).tolist()[0] == atom_group_ids(7, np.array([3]))[0]
    True
    """
    key = _mix64(np.uint64(pair_key) ^ (atom.astype(np.uint64) + np.uint64(1)))
    hi, lo = _mix64(key), _mix64(key ^ np.uint64(0x9E3779B97F4A7C15))
    return np.array([f"{a:016x}{b:016x}" for a, b in zip(hi.tolist(), lo.tolist())], dtype=object)


def group_measure(meta: MetadataModel, w: str, user: str) -> tuple[np.ndarray, int]:
    """Cumulative atom weights of the ``(w, user)`` pair's random measure and the pair's key.

    Drawn from a generator seeded by the pair's key alone (memoised), so every chunk of a trace
    draws from the same measure: the groups do not depend on how the trace is chunked."""
    key = (w, user)
    if key not in meta._measures:
        pair = _pair_key(w, user, meta.salt)
        d, theta = meta.group_py[w]
        weights = stick_weights(d, theta, np.random.default_rng(pair))
        meta._measures[key] = (np.cumsum(weights), pair)
    return meta._measures[key]


def draw_groups(
    meta: MetadataModel, workload: np.ndarray, user: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Group of each workload job from its ``(workload, user)`` pair's measure: a real user's
    heaviest atoms carry its real groups of that workload, the other atoms invented ids; a job in
    the measure's tail (mass below :data:`schedlab.polaris.groups.TAIL_MASS`) a group of its own."""
    out = np.empty(workload.size, dtype=object)
    tail = np.zeros(workload.size, dtype=bool)
    pairs = pd.DataFrame({"w": workload, "u": user}).groupby(["w", "u"], sort=True).indices
    u01 = rng.random(workload.size)
    for (w, u), sel in pairs.items():
        cum, pair = group_measure(meta, w, u)
        atom = np.searchsorted(cum, u01[sel], side="right")
        real = meta.real_groups.get((w, u), np.empty(0, dtype=object))
        labels = atom_group_ids(pair, atom)
        is_real = atom < real.size
        labels[is_real] = real[atom[is_real]]
        out[sel] = labels
        tail[sel] = atom >= cum.size
    out[tail] = hex_ids(int(tail.sum()), 32, rng)
    return out


def draw_metadata(
    meta: MetadataModel, workload: np.ndarray, first: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """User and group of each workload job (``workload`` non-empty; ``first`` its template's first
    real row): the template, any-real-user and invented-user paths of the module docstring, then
    the group from the pair's measure (:func:`draw_groups`)."""
    n = workload.size
    user = meta.user[first].astype(object)
    p_new = np.array([meta.p_new_user[w] for w in workload])
    p_any = np.array([meta.p_any_user[w] for w in workload])
    u = rng.random(n)
    new, anyu = u < p_new, (u >= p_new) & (u < p_new + p_any)
    for w in np.unique(workload[anyu]):
        sel = np.flatnonzero(anyu & (workload == w))
        ids, p = meta.known_users[w]
        user[sel] = ids[rng.choice(ids.size, sel.size, p=p)]
    k = rng.choice(meta.invented_users.size, int(new.sum()), p=meta.invented_p)
    user[new] = meta.invented_users[k]
    for w, u_id in FIXED_USERS.items():  # a known single user
        user[workload == w] = u_id
    return user, draw_groups(meta, workload, user, rng)


def _borrow_pool(meta: MetadataModel, model: JobModel, w: str, name: str) -> np.ndarray:
    """Pooled templates workload ``w`` may borrow for first task ``name``: a ``ps`` pair only with a
    partner whose task name ``w`` can have too (else any with that first task)."""
    names, p = meta.task_p[w]
    tpl = model.templates[""]
    first = np.flatnonzero(meta.task_name[tpl.first] == name)
    second = tpl.second[first]
    ok = (second < 0) | np.isin(meta.task_name[np.maximum(second, 0)], names[p > 0])
    return first[ok] if ok.any() else first


def _borrowable_pairs(meta: MetadataModel, model: JobModel, w: str) -> set:
    """(task name, GPU type) of the tasks of the pooled templates workload ``w`` can borrow: those
    whose first task name has positive borrowing probability (none when ``borrow`` is 0)."""
    if meta.borrow[w] <= 0:
        return set()
    names, p = meta.task_p[w]
    tpl = model.templates[""]
    k = np.concatenate([_borrow_pool(meta, model, w, t) for t in names[p > 0]]).astype(np.int64)
    rows = np.r_[tpl.first[k], tpl.second[k][tpl.second[k] >= 0]]
    return set(zip(meta.task_name[rows].tolist(), meta.gpu_type[rows].tolist()))


def _template_rows(model: JobModel, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Faithful-join rows of terminated jobs with these templates: ``tasks x instances^2``."""
    inst = model.values["inst_num"]
    n_inst = inst[first] + np.where(second >= 0, inst[np.maximum(second, 0)], 0.0)
    return (1.0 + (second >= 0)) * n_inst**2


def mixed_template_moments(meta: MetadataModel, model: JobModel, w: str) -> tuple[float, float]:
    """Expected join rows per terminated job and two-task share of workload ``w``'s jobs when they
    borrow pooled templates with probability ``borrow[w]`` (what the strata must be sized with)."""
    pooled, own = model.templates[""], model.templates[w]
    b = 1.0 if own is pooled else meta.borrow[w]
    names, p = meta.task_p[w]
    rows_b = pair_b = 0.0
    for name, q in zip(names, p):
        if q > 0:
            k = _borrow_pool(meta, model, w, name)
            rows_b += q * _template_rows(model, pooled.first[k], pooled.second[k]).mean()
            pair_b += q * float(np.mean(pooled.second[k] >= 0))
    rows_own = _template_rows(model, own.first, own.second).mean()
    return (1 - b) * rows_own + b * rows_b, (1 - b) * own.pair_share + b * pair_b


def template_mix(meta: MetadataModel, model: JobModel, w: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The templates a ``w`` job draws and their probabilities, borrowing included
    (``(first, second, p)`` over template rows, as :func:`mixed_template_moments` weighs them).

    ``p`` sums to one: an own template has ``(1 - borrow) / n_own``, a pooled one ``borrow x``
    its task name's probability over its pool's size."""
    pooled, own = model.templates[""], model.templates[w]
    b = 1.0 if own is pooled else meta.borrow[w]
    firsts, seconds, ps = [], [], []
    if b < 1.0:
        firsts.append(own.first)
        seconds.append(own.second)
        ps.append(np.full(own.first.size, (1.0 - b) / own.first.size))
    names, q = meta.task_p[w]
    for name, qq in zip(names, q):
        if qq > 0 and b > 0:
            k = _borrow_pool(meta, model, w, name)
            firsts.append(pooled.first[k])
            seconds.append(pooled.second[k])
            ps.append(np.full(k.size, b * qq / k.size))
    return np.concatenate(firsts), np.concatenate(seconds), np.concatenate(ps)


def can_produce(meta: MetadataModel, model: JobModel, rows: pd.DataFrame, *, gpu: bool = False) -> pd.Series:
    """Per row of ``rows`` (columns ``workload, task_name, user, group``, and ``gpu_type`` with
    ``gpu``): does the model give its discrete combination positive probability? Read off the
    model, not sampled:

    * task name (with ``gpu`` also the GPU type, which comes with the template's task): a task of
      one of the workload's own templates has it, or the workload borrows (``borrow > 0``) and a
      pooled template's task has it with a task name of positive borrowing probability;
    * user: a real user of the model (reachable by the any-user path when ``p_any_user > 0``), or
      an id the model does not hold and ``p_new_user > 0`` (the invented-user path: ids are
      anonymised hashes, so "a user not in the calibration rows" is what the model can produce);
    * group: one of the user's real groups of that workload, or an id the model does not hold (an
      invented atom of the pair's measure); a real group of another user or workload cannot be
      produced.
    """
    need = ("workload", "task_name", "user", "group", *(("gpu_type",) if gpu else ()))
    missing = [c for c in need if c not in rows]
    if missing:
        raise ValueError(f"can_produce needs columns {missing}")
    unknown = sorted(set(rows["workload"]) - set(WORKLOADS))
    if unknown:
        raise ValueError(f"can_produce: workload must be one of {list(WORKLOADS)}, got {unknown}")
    real_users, real_groups = set(meta.user.tolist()), set(meta.group.tolist())
    pooled = model.templates[""]
    borrowable = {w: _borrowable_pairs(meta, model, w) for w in WORKLOADS}
    out = []
    for r in rows.itertuples(index=False):
        w = r.workload
        g = ("" if pd.isna(r.gpu_type) else str(r.gpu_type)) if gpu else None
        tpl = model.templates[w]
        own = np.r_[tpl.first, tpl.second[tpl.second >= 0]] if tpl is not pooled else np.arange(0)
        own_gpu = meta.gpu_type[own] == g if gpu else True
        own_ok = bool(((meta.task_name[own] == r.task_name) & own_gpu).any())
        task_ok = own_ok or any(t == r.task_name and (not gpu or gg == g) for t, gg in borrowable[w])
        # every pair's measure has infinitely many atoms: any id the model does not hold is one
        # of them; a real group only under its own user and workload
        group_ok = r.group not in real_groups or r.group in meta.real_groups.get((w, r.user), ())
        if w in FIXED_USERS:
            user_ok = r.user == FIXED_USERS[w]
        elif r.user in real_users:
            user_ok = meta.p_any_user[w] > 0 or bool((meta.user[own] == r.user).any())
        else:
            user_ok = meta.p_new_user[w] > 0
        out.append(bool(task_ok and user_ok and group_ok))
    return pd.Series(out, index=rows.index, name="can_produce")


def provenance(meta: MetadataModel) -> dict:
    """What is real and what is invented in a trace drawn with ``meta``: the real user and group ids
    (any other id is invented), the invented workloads and the fitted rates per workload."""
    return {
        "real_users": sorted(set(meta.user.tolist())),
        "real_groups": sorted(set(meta.group.tolist())),
        "invented_workloads": list(INVENTED_WORKLOADS),
        "fixed_users": dict(FIXED_USERS),
        "invented_ids": "every user or group id not listed here (hex ids of the trace's format)",
        "rates": {
            w: {
                "p_new_user": meta.p_new_user[w],
                "p_any_user": meta.p_any_user[w],
                "group_discount": meta.group_py[w][0],
                "group_concentration": meta.group_py[w][1],
                "group_fit": meta.group_fit[w],
                "borrow_template": meta.borrow[w],
            }
            for w in WORKLOADS
        },
    }


def authors_one_hot_width(sample: pd.DataFrame) -> dict[str, int]:
    """Columns of the authors' one-hot encoding of ``sample`` per metadata column and in total:
    their ``OneHotEncoder`` is fitted on the whole Table I sample's ``job_name, user, task_name,
    group, workload`` (``polaris-ai``, ``alibaba_data-evaluation.ipynb``, cell 102; 21,547 columns),
    then applied to the clustered rows, so the width is the sum of distinct values in the sample.

    >>> s = pd.DataFrame({"job_name": ["a", "a"], "user": ["u", "v"], "task_name": ["ps", "ps"],
    ...                   "group": ["g", "g"], "workload": ["rl", "rl"]})
    >>> authors_one_hot_width(s)["total"]
    6
    """
    from schedlab.polaris.schema import METADATA

    missing = [c for c in METADATA if c not in sample]
    if missing:
        raise ValueError(f"authors_one_hot_width needs columns {missing}")
    out = {c: int(sample[c].astype(str).nunique()) for c in METADATA}
    out["total"] = sum(out.values())
    return out


def authors_known_values(sample: pd.DataFrame, test: pd.DataFrame) -> dict[str, float]:
    """How many of ``test``'s metadata values the authors' encoder (fitted on ``sample``'s
    ``job_name, user, task_name, group, workload``; :func:`authors_one_hot_width`) knows: per
    column the share of test rows whose value occurs in the sample, and ``per_row``, the values
    stored per test row (its one-hot row's non-zeros; 5 = every value known;
    ``handle_unknown='ignore'`` stores nothing for a value the sample lacks). The authors' 999 test
    rows give 3,591 / 999 (``reference/polaris.yaml`` ``standin.test_known_per_row``): with
    workload and task name known, 1.6 of job name, user and group.

    >>> s = pd.DataFrame({"job_name": ["a", "b"], "user": ["u", "u"], "task_name": ["ps", "ps"],
    ...                   "group": ["g", "h"], "workload": ["rl", "rl"]})
    >>> t = pd.DataFrame({"job_name": ["c"], "user": ["u"], "task_name": ["ps"], "group": ["h"], "workload": ["rl"]})
    >>> authors_known_values(s, t)["per_row"]
    4.0
    """
    from schedlab.polaris.schema import METADATA

    missing = [c for c in METADATA if c not in sample or c not in test]
    if missing:
        raise ValueError(f"authors_known_values needs columns {missing} in both frames")
    if len(test) == 0:
        raise ValueError("authors_known_values: no test rows")
    known = {c: test[c].astype(str).isin(set(sample[c].astype(str))).to_numpy() for c in METADATA}
    out = {c: float(k.mean()) for c, k in known.items()}
    out["per_row"] = float(sum(k.sum() for k in known.values()) / len(test))
    return out
