"""Known structure planted in the v2 synthetic trace, to score a clustering against.

* **Planted job** (every v2 trace large enough, :func:`planted_top_job_instances`): the paper's most
  recurrent job name (:data:`PAPER_TOP_JOB_NAME`) is an ``rl`` job whose ``instances^2`` join rows
  are :data:`PLANTED_JOB_SHARE` of the rl stratum.
* **Planted profiles** (``planted="authors"``, off by default): the authors' 26 profiles as their
  notebook printed them (workload, task name, sample rows; :data:`AUTHORS_PROFILES`) planted as
  job modes built from real rows (:func:`plant_profiles`, a copy of the
  :class:`schedlab.polaris.job_model.JobModel` that :mod:`schedlab.polaris.synthetic` draws from),
  with a ground-truth label per task beside the archives (:data:`PLANTED_LABELS`,
  :func:`attach_planted`), to score a clustering by adjusted Rand index
  (:func:`schedlab.polaris.scoring.planted_recovery`).
* **Spread inside a planted profile** (:data:`PLANTED_SPREAD`, :func:`spread_inst_num`,
  :func:`spread_factor`): a planted job's columns that the v2 generator copies exactly from its
  template row (:data:`schedlab.polaris.job_model.EXACT`) get noise too, and no nonzero sensor value
  keeps a zero noise scale. Without it every row of a profile repeats the template's exact
  ``inst_num, plan_*, max_gpu_wrk_mem``, and grouping rows by those five columns (no clustering:
  :func:`lookup_labels`) recovers the profiles as well as HDBSCAN does or better.
* **The check clustering must earn** (:func:`baselines`): the lookup and k-means with the true
  number of profiles, scored like the clustering; a clustering passes only when it beats the lookup.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.polaris.job_model import EXACT, JobModel, JobTemplates, strata_shares
from schedlab.polaris.schema import REAL_JOB_ROWS, TABLE_I_SIZES, WORKLOADS

#: the job name the paper calls the most recurrent one in its sample (Section III-C, SHAP), in
#: profiles 5 and 6, which it characterises as ``rl`` profiles with low spread
PAPER_TOP_JOB_NAME = "94b340f2cdedf37303d41bf2"
#: share of the ``rl`` stratum's faithful-join rows given to the planted job (an assumption: the
#: paper names the job but not its size)
PLANTED_JOB_SHARE = 0.25


def planted_top_job_instances(n_jobs: int) -> int:
    """Instances of the planted top job: ``instances^2`` faithful-join rows make
    :data:`PLANTED_JOB_SHARE` of the ``rl`` stratum's Table I rows at this scale (0: too small to plant).

    >>> planted_top_job_instances(REAL_JOB_ROWS)
    461
    """
    rows = PLANTED_JOB_SHARE * TABLE_I_SIZES["rl"] * n_jobs / REAL_JOB_ROWS
    return int(round(np.sqrt(rows))) if rows >= 4 else 0


#: log-scale noise (sd) of every nonzero column of a planted profile's job, the exactly copied ones
#: (:data:`schedlab.polaris.job_model.EXACT`) included, and the floor of the sensors' and the
#: duration's noise scale there (an assumption: 10 %, about the bandwidth noise of a typical real
#: row, so a profile is a blob, not a point). 0 plants the profiles without it, as before.
PLANTED_SPREAD = 0.1
#: floor of ``inst_num``'s spread in instances: ``inst_num`` is an integer, and a relative spread of
#: a one-instance task would round back to 1 every time
INST_MIN_SD = 0.5


def _inst_sd(inst: np.ndarray, spread: float) -> np.ndarray:
    return np.where(spread > 0, np.maximum(spread * np.asarray(inst, float), INST_MIN_SD), 0.0)


def spread_inst_num(inst: np.ndarray, spread: float, rng: np.random.Generator) -> np.ndarray:
    """Instances of planted tasks: ``max(1, round(inst + sd z))``, ``sd = max(spread x inst,
    INST_MIN_SD)`` (``spread = 0``: ``inst`` itself, no draw).

    >>> spread_inst_num(np.array([1, 40]), 0.0, np.random.default_rng(0)).tolist()
    [1, 40]
    >>> bool((spread_inst_num(np.full(1000, 1), 0.1, np.random.default_rng(0)) > 1).any())
    True
    """
    inst = np.asarray(inst, dtype=np.int64)
    if spread <= 0:
        return inst
    return np.maximum(1, np.round(inst + _inst_sd(inst, spread) * rng.normal(0.0, 1.0, inst.size))).astype(
        np.int64
    )


def inst_moments(inst: np.ndarray, spread: float) -> tuple[np.ndarray, np.ndarray]:
    """``E[k]`` and ``E[k^2]`` of :func:`spread_inst_num`'s value ``k`` for each ``inst``, exactly
    (the rounded normal's probabilities, its mass below 1 on 1): a planted mode's expected join rows.

    >>> [m.tolist() for m in inst_moments(np.array([3]), 0.0)]
    [[3.0], [9.0]]
    >>> m1, m2 = inst_moments(np.array([1]), 0.1)  # sd 0.5: P(1) = Phi(1), P(2) = Phi(3) - Phi(1), P(3) = Phi(5) - Phi(3)
    >>> round(float(m1[0]), 4), round(float(m2[0]), 4)  # 1 + P(2) + 2 P(3), 1 + 3 P(2) + 8 P(3)
    (1.16, 1.4827)
    """
    from scipy.stats import norm

    inst = np.asarray(inst, float)
    if spread <= 0:
        return inst, inst**2
    sd = _inst_sd(inst, spread)
    m1, m2 = np.empty(inst.size), np.empty(inst.size)
    for i, (mu, s) in enumerate(zip(inst, sd)):
        k = np.arange(max(2, int(mu - 9 * s)), int(mu + 9 * s) + 2)
        p = norm.cdf((k + 0.5 - mu) / s) - norm.cdf((k - 0.5 - mu) / s)
        p1 = norm.cdf((1.5 - mu) / s)  # everything rounding to 1 or less
        m1[i], m2[i] = p1 + p @ k, p1 + p @ k**2
    return m1, m2


def spread_factor(n: int, spread: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` log-normal factors ``exp(spread z)`` (all 1 without a draw when ``spread = 0``)."""
    return np.ones(n) if spread <= 0 else np.exp(spread * rng.normal(0.0, 1.0, n))


#: the planted structures :func:`plant_profiles` knows
PLANTED_SPECS: tuple[str, ...] = ("authors",)
#: files :func:`schedlab.polaris.synthetic.synthesize` writes beside the archives when it plants profiles
PLANTED_LABELS = "planted_labels.parquet"
PLANTED_PROFILES = "planted_profiles.csv"
#: key of the ground-truth frame in :func:`schedlab.polaris.synthetic.generate_tables`' result
PLANTED_KEY = "planted"

#: The authors' 26 HDBSCAN profiles of the 100,001-row sample: (profile, workload, task name,
#: sample rows). Printed in ``polaris-slo-cloud/polaris-ai`` ``ml_data-profiling/
#: alibaba_data-evaluation.ipynb``: cell 84 gives each workload's share of its sample rows per
#: profile and cell 83 the rows per workload, cell 77/76 the same per task name (their products
#: give these counts; the clustered rows add up to 75,398 = Table V's set; Table V's validation
#: support is about a fifth of each). Every profile is almost entirely one workload and one task
#: name (profile 9 also holds 1 graphlearn and 7 xlnet rows, profile 0 one tensorflow row, 13 four
#: worker rows: left to the background). Their notebooks print no per-profile feature medians or
#: means (only boxplot figures), so the planted profiles' feature values come from real rows.
AUTHORS_PROFILES: tuple[tuple[int, str, str, int], ...] = (
    (0, "bert", "worker", 2101),
    (1, "ctr", "ps", 5751),
    (2, "ctr", "ps", 836),
    (3, "ctr", "ps", 3043),
    (4, "rl", "worker", 717),
    (5, "rl", "worker", 735),
    (6, "rl", "worker", 340),
    (7, "inception", "worker", 737),
    (8, "bert", "worker", 12522),
    (9, "bert", "ps", 11604),
    (10, "graphlearn", "ps", 648),
    (11, "graphlearn", "ps", 302),
    (12, "ctr", "worker", 5501),
    (13, "ctr", "evaluator", 2283),
    (14, "graphlearn", "worker", 686),
    (15, "ctr", "worker", 777),
    (16, "ctr", "worker", 1943),
    (17, "graphlearn", "worker", 567),
    (18, "graphlearn", "worker", 585),
    (19, "graphlearn", "worker", 2072),
    (20, "graphlearn", "ps", 2128),
    (21, "graphlearn", "ps", 395),
    (22, "inception", "worker", 1891),
    (23, "inception", "worker", 7474),
    (24, "inception", "ps", 1994),
    (25, "inception", "ps", 7754),
)
#: the authors' sample rows per workload (same cell 83; Table I's rounding of TABLE_I_SIZES)
AUTHORS_SAMPLE_ROWS: dict[str, int] = {
    "bert": 29818,
    "inception": 29385,
    "ctr": 24881,
    "graphlearn": 13323,
    "rl": 2316,
    "resnet": 166,
    "xlnet": 43,
    "nmt": 37,
    "vgg": 32,
}
#: the profile holding most rows of the paper's top job (cell 72: 68 % in profile 5, 32 % in 6):
#: the planted top job copies its template row
TOP_JOB_PROFILE = 5
#: the planted top job's own label: it has its own instance count (a feature), so its rows are
#: not those of :data:`TOP_JOB_PROFILE`'s other jobs
TOP_JOB_LABEL = 26


@dataclass
class PlantedModes:
    """Planted job modes per workload (index 0 = background) and the planted profiles' table.

    A *mode* is one job template (one task, or a ``ps`` task with a partner task); each of its
    tasks carries a planted profile label (-1: background). ``weights[w]`` is P(mode) for a job of
    workload ``w``; background jobs draw uniformly from ``background[w]`` (the workload's v2
    templates that use no planted row).
    """

    profiles: pd.DataFrame
    first: dict[str, np.ndarray]
    second: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]  # (2, modes): planted profile of the first / second task
    weights: dict[str, np.ndarray]
    background: dict[str, JobTemplates]
    top_row: int = -1
    top_profile: int = -1
    #: :data:`PLANTED_SPREAD` as planted (0: every profile row repeats its template's exact values)
    spread: float = 0.0


def _authors_modes() -> list[tuple[str, int, int]]:
    """The authors' profiles as job modes ``(workload, first-task profile, second-task profile)``.

    Rule (documented, not fitted): within a workload the ``ps`` profiles, largest first, are the
    ``ps`` tasks of jobs whose ``worker`` task is the ``worker`` profile of the same rank (a ``ps``
    task never runs alone; bert's top jobs split about 50/50 between profiles 8 and 9 in cell 72);
    the other profiles are single-task jobs; a ``ps`` profile left over gets a background
    partner (-1). Pairs here: 9/8, 1/12, 3/16, 2/15, 25/23, 24/22, 20/19, 10/14, 21/18, 11/17.

    >>> _authors_modes()[:2]
    [('bert', 9, 8), ('bert', 0, -1)]
    """
    table = pd.DataFrame(AUTHORS_PROFILES, columns=["profile", "workload", "task_name", "rows"])
    modes = []
    for w in WORKLOADS:
        sub = table[table.workload == w].sort_values(["rows", "profile"], ascending=[False, True])
        ps = sub[sub.task_name == "ps"].profile.tolist()
        workers = sub[sub.task_name == "worker"].profile.tolist()
        k = min(len(ps), len(workers))
        modes += [(w, p, q) for p, q in zip(ps[:k], workers[:k])] + [(w, p, -1) for p in ps[k:]]
        modes += [(w, p, -1) for p in sub.profile if p not in ps and p not in workers[:k]]
    return modes


def _pick_row(
    model: JobModel,
    own: np.ndarray,
    task: str,
    used: np.ndarray,
    rng: np.random.Generator,
    near: float | None = None,
) -> int:
    """An unused real row with ``task_name == task``: of the workload's rows ``own`` if one is
    left, else of all rows; uniformly, or the one nearest in start time to ``near``."""
    match = (model.meta["task_name"] == task) & ~used
    for pool in (own[match[own]], np.flatnonzero(match)):
        if pool.size:
            if near is None:
                return int(pool[rng.integers(0, pool.size)])
            return int(pool[np.argmin(np.abs(model.values["start_time"][pool] - near))])
    raise ValueError(f"planted profiles: no unused real row with task_name {task!r} left")


def plant_profiles(
    model: JobModel,
    planted: str,
    rng: np.random.Generator,
    *,
    top_job: int = 0,
    spread: float = PLANTED_SPREAD,
) -> JobModel:
    """A copy of ``model`` whose workload jobs carry planted profiles (``planted="authors"``).

    The authors' 26 profiles (:data:`AUTHORS_PROFILES`: workload, task name and sample rows as
    their notebook printed them) become job modes (:func:`_authors_modes`). Each mode is one job
    template made of distinct real rows of its workload with the profile's task name (drawn
    uniformly with ``rng``: the real rows are rows of the join, so this already favours jobs by
    their join rows; a ``ps`` task's partner is the unused ``worker`` row nearest in start time,
    and a one-instance task other than a worker, ctr's evaluator, also gets such a partner whose
    rows are background; workloads without such rows, ``rl`` and ``vgg``, use other workloads'
    rows; no row serves two profiles). Its jobs get the v2 noise, so a profile is a blob around one real row.
    The mode weights make each profile's share of its workload's faithful-join rows the authors'
    share of the workload's sample rows (a mode's job has ``tasks x instances^2`` join rows; the
    two tasks of a pair have equal rows, so a pair's profiles get the mean of the authors' two
    sizes); the rest of the stratum (the authors' outliers, 24.6 %, and the small workloads) is
    background: ordinary v2 jobs from templates that use no planted row, label -1. Strata stay
    sized as Table I (:func:`schedlab.polaris.job_model.strata_shares`). ``top_job > 0`` (the
    planted top job's instances, :func:`planted_top_job_instances`): the paper's top job copies
    :data:`TOP_JOB_PROFILE`'s template row with its own instance count, is labelled
    :data:`TOP_JOB_LABEL` (27 planted profiles then) and takes :data:`PLANTED_JOB_SHARE` of the rl
    stratum out of that profile's share. Jobs without a workload keep the unplanted model's
    template weights. ``spread`` (:data:`PLANTED_SPREAD`) is the noise every nonzero column of a
    planted mode's job gets, the exactly copied ones included (drawn by
    :mod:`schedlab.polaris.synthetic`); the mode weights use the spread instance counts' exact
    expected join rows (:func:`inst_moments`). ``spread=0`` plants as before it existed.
    """
    if planted not in PLANTED_SPECS:
        raise ValueError(f"unknown planted structure {planted!r}; known: {PLANTED_SPECS}")
    if not (np.isfinite(spread) and 0 <= spread <= 1):
        raise ValueError(f"planted spread must be a log-scale sd in [0, 1], got {spread!r}")
    size = {p: n for p, _, _, n in AUTHORS_PROFILES}
    modes = sorted(
        _authors_modes(), key=lambda m: (model.templates[m[0]] is model.templates[""], WORKLOADS.index(m[0]))
    )  # own rows first
    n_rows = model.values["inst_num"].size
    used = np.zeros(n_rows, dtype=bool)
    wl_rows = {
        w: np.unique(
            np.r_[model.templates[w].first, model.templates[w].second[model.templates[w].second >= 0]]
        )
        for w in WORKLOADS
    }
    task_of = {p: t for p, _, t, _ in AUTHORS_PROFILES}
    inst_one = model.values["inst_num"] <= 1
    picked = []
    for w, p, q in modes:
        own = wl_rows[w] if model.templates[w] is not model.templates[""] else np.arange(0)
        a = _pick_row(model, own, task_of[p], used, rng)
        used[a] = True
        b = -1
        # a ps task runs with a partner task; so does a one-instance task other than a worker
        # (ctr's evaluators, all 44 real ones): alone, its job would have one join row
        if task_of[p] == "ps" or (task_of[p] != "worker" and inst_one[a]):
            b = _pick_row(
                model, own, task_of[q] if q >= 0 else "worker", used, rng, near=model.values["start_time"][a]
            )
            used[b] = True
        picked.append((w, p, q, a, b))
    inst = model.values["inst_num"]
    first, second, labels, weights, background, rpj, pair_share = {}, {}, {}, {}, {}, {}, {}
    records = []
    for w in WORKLOADS:
        mine = [m for m in picked if m[0] == w]
        bg = _unused_templates(model, w, used)
        n_tasks_bg = 1.0 + (bg.second >= 0)
        r_bg = bg.rows_per_job
        f = np.array([mm[3] for mm in mine], dtype=np.int64)
        s = np.array([mm[4] for mm in mine], dtype=np.int64)
        n_tasks = 1.0 + (s >= 0)
        # expected tasks x (instances summed over the job's tasks)^2, the tasks' spread independent
        (m1f, m2f), (m1s, m2s) = inst_moments(inst[f], spread), inst_moments(inst[np.maximum(s, 0)], spread)
        two = s >= 0
        r = n_tasks * (m2f + np.where(two, 2 * m1f * m1s + m2s, 0.0))
        # share of the stratum's rows per mode: the labelled tasks' authors' rows, a pair's two
        # tasks having equal rows (a leftover ps profile's partner rows are background)
        share = np.array(
            [
                (size[p] + (size[q] if q >= 0 else size[p] * (s_ >= 0))) / AUTHORS_SAMPLE_ROWS[w]
                for (_, p, q, _, s_) in mine
            ]
        )
        if top_job and w == "rl":
            share = share - PLANTED_JOB_SHARE * np.array([p == TOP_JOB_PROFILE for _, p, _, _, _ in mine])
            share = np.maximum(share, 0.0)
            top_share = PLANTED_JOB_SHARE
        else:
            top_share = 0.0
        q0 = max(0.0, 1.0 - share.sum() - top_share)
        # P(mode) proportional to (row share) / (rows per job): expected rows then follow the shares;
        # Table I rows / rows_per_job terminated jobs then make 1 - top_share of the stratum
        a_all = np.r_[q0 / r_bg, share / r]
        rows_per_job = 1.0 / a_all.sum()
        first[w], second[w] = np.r_[-1, f], np.r_[-1, s]
        labels[w] = np.vstack([np.r_[-1, [mm[1] for mm in mine]], np.r_[-1, [mm[2] for mm in mine]]]).astype(
            np.int64
        )
        weights[w] = a_all / a_all.sum()
        background[w], rpj[w] = bg, rows_per_job
        pair_share[w] = float(weights[w][0] * np.mean(n_tasks_bg - 1) + weights[w][1:] @ (n_tasks - 1))
        for k, (_, p, q, a, b) in enumerate(mine):
            for prof, row, role in ((p, a, "first"), (q, b, "second")):
                if prof >= 0:
                    records.append(
                        {
                            "profile": prof,
                            "workload": w,
                            "task_name": model.meta["task_name"][row],
                            "row": row,
                            "task": role,
                            "partner_profile": q if role == "first" else p,
                            "authors_rows": size[prof],
                            "mode_weight": float(weights[w][k + 1]),
                            "stratum_share": float(share[k] * (0.5 if s[k] >= 0 else 1.0)),
                            "rows_per_job": float(r[k]),
                            "inst_num": int(inst[row]),
                            **{c: float(model.values[c][row]) for c in ("plan_cpu", "plan_mem", "plan_gpu")},
                        }
                    )
    top_row = next(r["row"] for r in records if r["profile"] == TOP_JOB_PROFILE)
    if top_job:
        records.append(
            {
                **next(r for r in records if r["profile"] == TOP_JOB_PROFILE),
                "profile": TOP_JOB_LABEL,
                "partner_profile": -1,
                "authors_rows": -1,
                "mode_weight": float("nan"),
                "stratum_share": PLANTED_JOB_SHARE,
                "rows_per_job": float(top_job) ** 2,
                "inst_num": int(top_job),
            }
        )
    profiles = pd.DataFrame(records).sort_values("profile").reset_index(drop=True)
    job_share, term, pair_none, _ = strata_shares(rpj, pair_share)
    out = JobModel(
        model.values,
        model.meta,
        model.templates,
        job_share,
        term,
        pair_none,
        model.start_sd,
        model.none_weights,
        model.log_sd,
    )
    out.planted = PlantedModes(
        profiles, first, second, labels, weights, background, int(top_row), TOP_JOB_LABEL, float(spread)
    )
    return out


def _unused_templates(model: JobModel, w: str, used: np.ndarray) -> JobTemplates:
    """Workload ``w``'s v2 templates (pooled if it has none, or if none is left) that use no
    planted row: its background."""
    for tpl in (model.templates[w], model.templates[""]):
        ok = ~used[tpl.first] & ((tpl.second < 0) | ~used[np.maximum(tpl.second, 0)])
        if ok.any():
            f, s = tpl.first[ok], tpl.second[ok]
            inst = model.values["inst_num"]
            n_inst = inst[f] + np.where(s >= 0, inst[np.maximum(s, 0)], 0.0)
            return JobTemplates(f, s, float(np.mean((1.0 + (s >= 0)) * n_inst**2)))
    raise ValueError(f"planted profiles: no background template left for workload {w!r}")


def draw_planted(
    n: int,
    w: str,
    planted: PlantedModes,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` jobs of workload ``w``: a mode per job (0 = background, a uniform background template)."""
    mode = rng.choice(planted.weights[w].size, size=n, p=planted.weights[w])
    bg = planted.background[w]
    k = rng.integers(0, bg.first.size, n)
    is_bg = mode == 0
    first = np.where(is_bg, bg.first[k], planted.first[w][mode])
    second = np.where(is_bg, bg.second[k], planted.second[w][mode])
    return first, second, planted.labels[w][0, mode], planted.labels[w][1, mode]


def attach_planted(sample: pd.DataFrame, trace_dir: str | Path) -> pd.DataFrame:
    """``sample`` (rows of the joined trace) with a ``planted`` column: the planted profile of
    each row's task (-1 = background), from :data:`PLANTED_LABELS` in ``trace_dir``, matched on
    ``job_name, task_name``. Every sampled row must find its label (they all carry a workload)."""
    path = Path(trace_dir) / PLANTED_LABELS
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no planted labels (synthesize the trace with planted='authors')")
    labels = pd.read_parquet(path)
    if labels.duplicated(["job_name", "task_name"]).any():
        raise ValueError(f"{path}: (job_name, task_name) is not unique")
    out = sample.drop(columns=["planted"], errors="ignore").merge(
        labels, on=["job_name", "task_name"], how="left", validate="many_to_one"
    )
    missing = int(out["planted"].isna().sum())
    if missing:
        raise ValueError(f"{path}: {missing} sampled rows have no planted label (trace and labels differ?)")
    out.index = sample.index
    out["planted"] = out["planted"].astype(np.int64)
    return out


def lookup_labels(sample: pd.DataFrame, min_size: int, columns: tuple[str, ...] = EXACT) -> np.ndarray:
    """The no-clustering baseline: rows grouped by their exact values of ``columns`` (default the
    five the v2 generator copies from a template row unchanged, :data:`schedlab.polaris.job_model.EXACT`);
    a group of fewer than ``min_size`` rows is noise (-1), as HDBSCAN's ``min_cluster_size``.

    >>> df = pd.DataFrame({"a": [1, 1, 1, 2, 2, 3], "b": [0, 0, 0, 5, 5, 0]})
    >>> lookup_labels(df, 2, columns=("a", "b")).tolist()
    [0, 0, 0, 1, 1, -1]
    """
    missing = [c for c in columns if c not in sample]
    if missing:
        raise ValueError(f"lookup_labels: sample lacks columns {missing}; expected {list(columns)}")
    if min_size < 1:
        raise ValueError(f"lookup_labels: min_size must be >= 1, got {min_size}")
    # NaN (a CPU-only task's plan_gpu) is a value of its own here, as in a groupby with dropna=False
    group = sample.groupby(list(columns), dropna=False, sort=True).ngroup().to_numpy()
    sizes = np.bincount(group)
    big = sizes >= min_size
    new_id = np.where(big, np.cumsum(big) - 1, -1)
    return new_id[group].astype(np.int64)


def kmeans_labels(Xt: np.ndarray, k: int, seed: int) -> np.ndarray:
    """k-means (scikit-learn, ``n_init=10``, ``random_state=seed``) with ``k`` clusters on the
    transformed features ``Xt``: a clustering told the true number of profiles (no noise label)."""
    from sklearn.cluster import KMeans

    if not 1 <= k <= len(Xt):
        raise ValueError(f"kmeans_labels: k must be in 1..{len(Xt)} (rows), got {k}")
    return KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(Xt).astype(np.int64)


def baselines(sample: pd.DataFrame, Xt: np.ndarray, found: np.ndarray, *, min_size: int, seed: int) -> dict:
    """The planted check: the clustering's labels ``found`` beside the lookup
    (:func:`lookup_labels` with ``min_size``) and k-means told the true number of planted profiles
    in ``sample`` (:func:`kmeans_labels` on ``Xt``, the clustering's transformed features), each
    scored by :func:`schedlab.polaris.scoring.planted_recovery` against ``sample["planted"]``.

    Returns ``{lookup,kmeans}_{ari,ari_non_noise}``, the lookup's group count and the share of
    planted rows it keeps, the true k, ``margin_ari`` / ``margin_ari_non_noise`` (clustering minus
    lookup) and ``passes``: the clustering's ARI over all rows (noise one more group) beats the
    lookup's. Only that score decides: ``ari_non_noise`` is taken over the rows a method keeps, so
    a lookup keeping a few pure groups scores 1 on them however many rows it calls noise.
    """
    from schedlab.polaris.scoring import planted_recovery

    truth = sample["planted"].to_numpy()
    k_true = int(np.unique(truth[truth >= 0]).size)
    ours = planted_recovery(found, truth)
    look = planted_recovery(lookup_labels(sample, min_size), truth)
    km = planted_recovery(kmeans_labels(Xt, max(k_true, 1), seed), truth)
    margin = ours["ari"] - look["ari"]
    margin_nn = ours["ari_non_noise"] - look["ari_non_noise"]
    return {
        "lookup_ari": look["ari"],
        "lookup_ari_non_noise": look["ari_non_noise"],
        "lookup_groups": look["found_profiles"],
        "lookup_noise_share": look["found_noise_share"],
        "lookup_planted_rows_kept": 1.0 - look["planted_rows_found_noise_share"],
        "kmeans_k": k_true,
        "kmeans_ari": km["ari"],
        "kmeans_ari_non_noise": km["ari_non_noise"],
        "margin_ari": float(margin),
        "margin_ari_non_noise": float(margin_nn),
        "passes": bool(margin > 0),
    }
