"""How far the synthetic PAI stand-in is from real rows it was not calibrated on.

The 800 real joined rows (:func:`schedlab.polaris.calibration.load_calibration_rows`) are split
into ``k`` folds, stratified by workload and grouped by job (a job's rows share a fold). For each
fold the generator is calibrated on the other ``k - 1`` folds, generates jobs whose templates are
those of rows of the jobs a Table I sample misses (``generate_tables(missed_rows="classes")``),
and one row is drawn per terminated synthetic job of a workload (a random terminated task of the
job with a random sensor row of the job, as a row of the authors' faithful join). The held-out
real rows of all folds are then compared with the synthetic rows,
per workload with at least ``min_rows`` real rows:

* per feature, a Kolmogorov-Smirnov test of the real rows against their own fold's synthetic
  rows (``synth_factor`` synthetic rows per real row; see :func:`realism_table`);
* a classifier two-sample test per fold: gradient-boosted trees (scikit-learn
  ``HistGradientBoostingClassifier``) told real from synthetic rows on a balanced sample,
  scored by the area under the ROC curve of out-of-fold predictions (stratified 5-fold
  cross-validation, job-grouped), averaged over the folds. 0.5 = indistinguishable, 1 = fully
  separable. ``auc`` uses the 17 features; ``auc_cat`` adds the discrete columns
  (:func:`encode_discrete`: task name, GPU type, and how common the row's user and group are among
  the fold's calibration rows);
* coverage (:func:`coverage_table`): the share of held-out real rows whose metadata combination
  (workload, task name, user, group) the generator calibrated without them can produce, read off
  its model (:func:`schedlab.polaris.metadata.can_produce`), beside a copy list's share and the
  share of exact plan values the calibration rows hold.

Why rows of missed jobs: the authors' test rows, which the 800 rows come from, are rows of jobs
their 100,001-row sample does not hold (their encoder knew 3.595 of a row's five metadata values;
:func:`schedlab.polaris.metadata.authors_known_values`), and the job sizes' shapes are fitted under
that reading (:func:`schedlab.polaris.synthetic_size.fit_test_mix_shapes`). A row of such jobs comes
from a job with probability proportional to its rows times the chance the sample misses it
(:func:`schedlab.polaris.synthetic_size.missed_template_rows`); a row's values depend on its job's
template, not on its number of workers, so drawing templates with those probabilities and one row
per job gives such rows. By default (``draw="classes"``) only the template classes (task names)
take those probabilities, the templates within a class the calibration rows' (seed 0, 5 folds: AUC
bert 0.55 / ctr 0.60 / inception 0.59, with the discrete columns 0.59 / 0.60 / 0.53, no feature
fails KS). ``draw="templates"`` tilts the templates themselves: the sizes make a small job's rows grow
with its planned instances while the sample misses it all the same, so its rows of missed jobs have
more instances than the real rows show (bert's mean log ``inst_num`` 2.60 against 2.35; KS p < 1e-4
on ``inst_num`` for bert and ctr; 4 and 3 features fail; AUC 0.64 / 0.61 / 0.52, with the discrete
columns 0.61 / 0.62 / 0.43). One row per job drawn as the jobs are puts 42 %
of the synthetic bert rows on tensorflow jobs against 3 % of the real rows (bert AUC 0.75).

Examples
--------
>>> from schedlab.polaris.calibration import load_calibration_rows   # doctest: +SKIP
>>> table = realism_table(load_calibration_rows(), 5, np.random.default_rng(0))  # doctest: +SKIP
>>> table[["version", "workload", "n_real", "auc", "ks_max", "ks_fail"]]  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats
from threadpoolctl import threadpool_limits

from schedlab.polaris import synthetic
from schedlab.polaris.calibration import add_features
from schedlab.polaris.schema import FEATURES, TABLES, WORKLOADS

#: p-value below which a feature's KS test counts as failed in ``ks_fail``
KS_ALPHA = 0.01


def fold_labels(
    workload: pd.Series, k: int, rng: np.random.Generator, jobs: pd.Series | None = None
) -> np.ndarray:
    """Fold number 0..k-1 per row, stratified and job-grouped: each workload's jobs (``jobs``, e.g.
    ``job_name``; default: every row its own job) are shuffled and dealt in turn, so the rows of
    one job share a fold (a job's rows repeat its task values: split, they would leak).

    >>> fold_labels(pd.Series(["a"] * 4 + ["b"] * 2), 2, np.random.default_rng(0)).tolist().count(0)
    3
    >>> f = fold_labels(pd.Series(["a"] * 4), 2, np.random.default_rng(0), pd.Series([1, 1, 2, 3]))
    >>> bool(f[0] == f[1])
    True
    """
    if k < 2:
        raise ValueError(f"need k >= 2 folds, got {k}")
    wl = workload.fillna("").astype(str).to_numpy()
    job = np.arange(wl.size) if jobs is None else pd.Series(jobs).astype(str).to_numpy()
    if job.size != wl.size:
        raise ValueError(f"jobs has {job.size} entries for {wl.size} rows")
    folds = np.empty(wl.size, dtype=np.int64)
    for w in sorted(set(wl)):
        idx = np.flatnonzero(wl == w)
        names, inv = np.unique(job[idx], return_inverse=True)
        deal = np.empty(names.size, dtype=np.int64)
        deal[rng.permutation(names.size)] = np.arange(names.size) % k
        folds[idx] = deal[inv]
    return folds


def _numeric(df: pd.DataFrame, cols) -> pd.DataFrame:
    out = df.copy()
    for c in cols:
        out[c] = pd.to_numeric(out[c], errors="coerce")  # empty field = NaN, as the trace's
    return out


#: the discrete columns the realism test compares besides the 17 features (``job_name`` groups rows)
DISCRETE: tuple[str, ...] = ("task_name", "gpu_type", "user", "group")


def one_row_per_job(tables: dict[str, pd.DataFrame], rng: np.random.Generator) -> pd.DataFrame:
    """One faithful-join row per terminated job with a workload: a random terminated task of the
    job and a random sensor row of the job (``inst_id``), with ``workload``, ``job_name``, the
    discrete columns :data:`DISCRETE` (GPU type ``''`` when none) and the 17 features."""
    job, tag = tables["pai_job_table"], tables["pai_group_tag_table"]
    task = _numeric(
        tables["pai_task_table"], ("inst_num", "start_time", "end_time", "plan_cpu", "plan_mem", "plan_gpu")
    )
    sens = _numeric(tables["pai_sensor_table"], TABLES["pai_sensor_table"][6:])
    task = task[task["status"] == "Terminated"]
    task = task.iloc[rng.permutation(len(task))].drop_duplicates("job_name")
    sens = sens.iloc[rng.permutation(len(sens))].drop_duplicates("inst_id")
    tag = tag[tag["workload"].astype(str) != ""].drop_duplicates("inst_id")
    rows = (
        task.merge(job[["job_name", "inst_id", "user"]], on="job_name")
        .merge(tag[["inst_id", "workload", "group"]], on="inst_id")
        .merge(sens.drop(columns=["job_name", "task_name", "machine"]), on="inst_id")
    )
    rows = add_features(rows).sort_values("job_name", kind="stable").reset_index(drop=True)
    rows["gpu_type"] = rows["gpu_type"].fillna("").astype(str)
    return rows[["workload", "job_name", *DISCRETE, *FEATURES]]


#: ``source(train, wanted, rng)``: one row per synthetic job (``workload`` and the 17 features, as
#: :func:`one_row_per_job`) from a generator calibrated on the real rows ``train``, with at least
#: ``wanted[w]`` rows of workload ``w`` where the generator can (:func:`realism_table` says when not)
RowSource = Callable[[pd.DataFrame, dict[str, int], np.random.Generator], pd.DataFrame]


def v2_rows(
    train: pd.DataFrame, wanted: dict[str, int], rng: np.random.Generator, draw: str = "classes"
) -> pd.DataFrame:
    """The :data:`RowSource` of :mod:`schedlab.polaris.synthetic`: jobs of exactly the wanted
    workloads, about 1.5 x ``wanted[w]`` of them terminated, from a model calibrated on ``train``,
    their templates those of rows of missed jobs (``draw`` as
    :func:`schedlab.polaris.synthetic.missed_templates`'; see the module docstring)."""
    cal = synthetic.calibrate(train)
    share = cal.terminated_share
    # enough jobs that about 1.5 x wanted of them terminate (+ 20 for small shares' noise)
    n = {w: int(np.ceil((1.5 * m + 20) / share[w])) for w, m in wanted.items() if m > 0}
    workload = np.concatenate([np.full(c, w, dtype=object) for w, c in sorted(n.items())])
    return one_row_per_job(
        synthetic.generate_tables(workload.size, rng, calibration=cal, workload=workload, missed_rows=draw),
        rng,
    )


def synthetic_rows(
    train: pd.DataFrame, wanted: dict[str, int], source: RowSource, rng: np.random.Generator
) -> pd.DataFrame:
    """At most ``wanted[w]`` one-per-job synthetic rows per workload from ``source`` calibrated on
    ``train`` (the first ones it made)."""
    rows = source(train, wanted, rng)
    parts = [rows[rows["workload"] == w].head(m) for w, m in sorted(wanted.items())]
    return pd.concat(parts, ignore_index=True)


def classifier_auc(
    real: np.ndarray,
    synth: np.ndarray,
    rng: np.random.Generator,
    *,
    cv: int = 5,
    groups: np.ndarray | None = None,
) -> float:
    """Out-of-fold ROC AUC of gradient-boosted trees telling ``real`` from ``synth`` rows
    (balanced: ``synth`` is cut to ``len(real)`` rows; leaf size ``n_rows / 20`` within [3, 20]).

    ``groups``: a job id per real row; rows of one job then stay in one cross-validation fold
    (synthetic rows are one per job), so the classifier cannot score a job it was trained on."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold, cross_val_predict

    n = min(len(real), len(synth))
    if n < 2 * cv:
        raise ValueError(f"classifier AUC needs at least {2 * cv} rows of each kind, got {n}")
    if groups is not None and len(groups) != len(real):
        raise ValueError(f"groups has {len(groups)} entries for {len(real)} real rows")
    X = np.vstack([real[:n], synth[:n]])
    y = np.r_[np.ones(n), np.zeros(n)]
    seed = int(rng.integers(0, 2**31 - 1))
    # leaves of >= 20 rows (the default) leave a fold of 17 + 17 inception rows without a single
    # split, i.e. constant predictions; scale the leaf size with the data instead
    leaf = int(np.clip(len(X) // 20, 3, 20))
    clf = HistGradientBoostingClassifier(
        max_iter=200, learning_rate=0.05, min_samples_leaf=leaf, random_state=seed
    )
    if groups is None:
        folds, g = StratifiedKFold(cv, shuffle=True, random_state=seed), None
    else:
        _, g_real = np.unique(np.asarray(groups)[:n].astype(str), return_inverse=True)
        folds, g = (
            StratifiedGroupKFold(cv, shuffle=True, random_state=seed),
            np.r_[g_real, g_real.max() + 1 + np.arange(n)],
        )
    with threadpool_limits(1, user_api="openmp"):  # small fits: threads only contend on a shared machine
        p = cross_val_predict(clf, X, y, cv=folds, groups=g, method="predict_proba")[:, 1]
    return float(roc_auc_score(y, p))


#: task names and GPU types the categorical encoding one-hots (others share an ``other`` column)
TASK_VOCAB: tuple[str, ...] = ("PyTorchWorker", "evaluator", "ps", "tensorflow", "worker")
GPU_VOCAB: tuple[str, ...] = ("", "MISC", "P100", "T4", "V100", "V100M32")


def encode_discrete(rows: pd.DataFrame, train: pd.DataFrame) -> np.ndarray:
    """The discrete columns as numbers a classifier can compare across real and synthetic rows:
    one-hot task name and GPU type, and how often the row's user (in its workload and overall) and
    group occur among the calibration rows ``train`` (0 = an id they do not hold). The ids are
    anonymised hashes, so what can be compared is whether a row's user or group is one of the
    calibration rows' and how common it is there, not the id itself.

    >>> t = pd.DataFrame({"workload": ["a"], "task_name": ["ps"], "gpu_type": [""], "user": ["u"], "group": ["g"]})
    >>> encode_discrete(t, t).shape
    (1, 16)
    """
    gpu = rows["gpu_type"].fillna("").astype(str)
    cols = [(rows["task_name"] == t).to_numpy(float) for t in TASK_VOCAB]
    cols.append((~rows["task_name"].isin(TASK_VOCAB)).to_numpy(float))
    cols += [(gpu == g).to_numpy(float) for g in GPU_VOCAB]
    cols.append((~gpu.isin(GPU_VOCAB)).to_numpy(float))
    per_wl = train.groupby(["workload", "user"]).size()
    key = pd.MultiIndex.from_arrays([rows["workload"], rows["user"]])
    cols.append(np.log1p(per_wl.reindex(key).fillna(0).to_numpy(float)))
    cols.append(np.log1p(rows["user"].map(train["user"].value_counts()).fillna(0).to_numpy(float)))
    cols.append(np.log1p(rows["group"].map(train["group"].value_counts()).fillna(0).to_numpy(float)))
    return np.column_stack(cols)


def realism_table(
    rows: pd.DataFrame,
    k: int,
    rng: np.random.Generator,
    *,
    sources: dict[str, RowSource] | None = None,
    min_rows: int = 20,
    synth_factor: int = 10,
) -> pd.DataFrame:
    """KS per feature and classifier AUC per workload (and ``all`` = those workloads pooled in
    their real proportions), synthetic vs held-out real rows, for each generator of ``sources``
    (name -> :data:`RowSource`, the name goes to column ``version``; default ``{"v2": v2_rows}``).

    Every comparison stays within a fold: fold ``f``'s real rows are compared only with rows of
    the generator calibrated without them (pooling synthetic rows across folds would compare real
    rows with noisy copies of themselves, made by the other folds' generators). Per fold, the AUC
    of :func:`classifier_auc`; ``auc`` is their mean weighted by real rows, ``auc_sd`` their
    spread. KS: each real row's randomised probability-integral transform under its own fold's
    synthetic sample, pooled over folds and tested against Uniform(0, 1) (``ks_<feature>``,
    ``p_<feature>``); ``ks_max`` is the largest statistic, ``ks_fail`` the number of features
    with p < :data:`KS_ALPHA`.
    """
    rows = rows.reset_index(drop=True)
    counts = rows["workload"].value_counts()
    kept = sorted(w for w in WORKLOADS if counts.get(w, 0) >= min_rows)
    if not kept:
        raise ValueError(f"no workload has {min_rows} real rows; lower min_rows")
    jobs = rows["job_name"] if "job_name" in rows else None
    folds = fold_labels(rows["workload"], k, rng, jobs)
    real = rows[rows["workload"].isin(kept)].assign(fold=folds[rows["workload"].isin(kept).to_numpy()])
    sources = {"v2": v2_rows} if sources is None else sources
    synth = {}
    for version, source in sources.items():
        for f in range(k):
            wanted = {
                w: synth_factor * int(((real["fold"] == f) & (real["workload"] == w)).sum()) for w in kept
            }
            synth[version, f] = synthetic_rows(rows[folds != f], wanted, source, rng)
    out = []
    for version in sources:
        for w in [*kept, "all"]:
            pairs = []
            for f in range(k):
                r, s = real[real["fold"] == f], synth[version, f]
                if w != "all":
                    r, s = r[r["workload"] == w], s[s["workload"] == w]
                pairs.append((r, _like(r, s, synth_factor), rows[folds != f]))
            out.append(_compare(version, w, pairs, rng))
    table = pd.DataFrame(out)
    if set(DISCRETE) <= set(rows.columns):
        cov = coverage_table(rows, folds, kept)
        table = table.merge(cov.drop(columns="n_real"), on="workload", how="left")
    return table


def coverage_table(rows: pd.DataFrame, folds: np.ndarray, workloads: list[str]) -> pd.DataFrame:
    """Per workload (and ``all`` pooled): the share of real rows whose discrete combination of the
    paper's metadata (workload, task name, user, group) the generator calibrated without their fold
    can produce, by :func:`schedlab.polaris.metadata.can_produce` (``coverage``; ``coverage_gpu``
    with the GPU type added); beside it the share a copy list of the calibration rows would cover
    (``coverage_copy``: the same workload, task name and user together in the calibration rows,
    the group among the user's or new), and
    the share whose exact plan values (``inst_num, plan_cpu, plan_mem, plan_gpu``, with workload
    and task name) the calibration rows hold (``coverage_plan``; the generator copies plan values
    from its templates, so this is what it can produce there)."""
    from schedlab.polaris.job_model import calibrate
    from schedlab.polaris.metadata import can_produce, fit_metadata

    rows = rows.reset_index(drop=True).assign(gpu_type=lambda d: d["gpu_type"].fillna("").astype(str))
    plan = ["workload", "task_name", "inst_num", "plan_cpu", "plan_mem", "plan_gpu"]
    cov = pd.DataFrame(index=rows.index, columns=["model", "gpu", "copy", "plan"], dtype=float)
    for f in np.unique(folds):
        test, train = rows[folds == f], rows[folds != f]
        model = calibrate(train)
        meta = fit_metadata(model)
        cov.loc[test.index, "model"] = can_produce(meta, model, test).to_numpy(float)
        cov.loc[test.index, "gpu"] = can_produce(meta, model, test, gpu=True).to_numpy(float)
        seen = (
            test[["workload", "task_name", "user"]]
            .merge(train[["workload", "task_name", "user"]].drop_duplicates(), how="left", indicator=True)[
                "_merge"
            ]
            .eq("both")
            .to_numpy()
        )
        group_ok = (
            ~test["group"].isin(train["group"]).to_numpy()
            | test["group"].isin(train.loc[train["user"].isin(test["user"]), "group"]).to_numpy()
        )
        cov.loc[test.index, "copy"] = (seen & group_ok).astype(float)
        key = test[plan].round(6).merge(train[plan].round(6).drop_duplicates(), how="left", indicator=True)
        cov.loc[test.index, "plan"] = key["_merge"].eq("both").to_numpy(float)
    out = []
    for w in [*workloads, "all"]:
        sel = rows["workload"].isin(workloads) if w == "all" else rows["workload"] == w
        c = cov[sel.to_numpy()]
        out.append({"workload": w, "n_real": int(sel.sum()), "coverage": c["model"].mean(),
                    "coverage_gpu": c["gpu"].mean(), "coverage_copy": c["copy"].mean(),
                    "coverage_plan": c["plan"].mean()})  # fmt: skip
    return pd.DataFrame(out)


def _like(real: pd.DataFrame, synth: pd.DataFrame, factor: int) -> pd.DataFrame:
    """Synthetic rows in the real rows' workload proportions (``factor`` per real row), interleaved
    so that the first ``len(real)`` are a balanced sample."""
    parts = []
    for w, grp in real.groupby("workload"):
        s = synth[synth["workload"] == w].head(factor * len(grp))
        if len(s) < len(grp):
            raise ValueError(
                f"only {len(s)} synthetic {w} rows for {len(grp)} real ones; the generator needs "
                "more jobs (e.g. v1_rows' n_jobs)"
            )
        parts.append(s.assign(_rank=np.arange(len(s)) // len(grp)))
    return pd.concat(parts).sort_values("_rank", kind="stable").drop(columns="_rank")


def randomised_pit(x: np.ndarray, reference: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``F(x-) + V (F(x) - F(x-))``, ``F`` the empirical CDF of ``reference``, ``V`` uniform: uniform
    on (0, 1) when ``x`` comes from ``reference``'s distribution, ties included.

    >>> u = randomised_pit(np.array([1.0, 1.0]), np.array([1.0, 1.0]), np.random.default_rng(0))
    >>> bool(((u > 0) & (u < 1)).all())
    True
    """
    ref = np.sort(reference)
    lo = np.searchsorted(ref, x, side="left") / ref.size
    hi = np.searchsorted(ref, x, side="right") / ref.size
    return lo + rng.random(x.size) * (hi - lo)


def _fold_aucs(
    pairs: list[tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]], rng: np.random.Generator, discrete: bool
) -> np.ndarray:
    """Per fold, :func:`classifier_auc` on the 17 features (and with ``discrete`` the encoded
    discrete columns, :func:`encode_discrete` against the fold's calibration rows), job-grouped."""
    feats = list(FEATURES)
    out = []
    for r, s, train in pairs:
        r = r.iloc[rng.permutation(len(r))]
        xr, xs = r[feats].to_numpy(float), s[feats].to_numpy(float)
        if discrete:
            xr, xs = np.hstack([xr, encode_discrete(r, train)]), np.hstack([xs, encode_discrete(s, train)])
        jobs = r["job_name"].to_numpy() if "job_name" in r else None
        out.append(classifier_auc(xr, xs, rng, groups=jobs))
    return np.array(out)


def _compare(
    version: str,
    workload: str,
    pairs: list[tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]],
    rng: np.random.Generator,
) -> dict:
    feats = list(FEATURES)
    aucs = _fold_aucs(pairs, rng, discrete=False)
    has_discrete = all(
        set(DISCRETE) <= set(s.columns) and set(DISCRETE) <= set(r.columns) for r, s, _ in pairs
    )
    aucs_cat = _fold_aucs(pairs, rng, discrete=True) if has_discrete else np.full(len(pairs), np.nan)
    n = np.array([len(r) for r, _, _ in pairs], float)
    ks = {}
    for c in feats:
        u = np.concatenate(
            [randomised_pit(r[c].to_numpy(float), s[c].to_numpy(float), rng) for r, s, _ in pairs]
        )
        ks[c] = stats.kstest(u, "uniform")
    row = {
        "version": version,
        "workload": workload,
        "n_real": int(n.sum()),
        "n_synth": int(sum(len(s) for _, s, _ in pairs)),
        "auc": float(np.average(aucs, weights=n)),
        "auc_sd": float(aucs.std(ddof=1)) if len(aucs) > 1 else float("nan"),
        "auc_cat": float(np.average(aucs_cat, weights=n)),
        "auc_cat_sd": float(aucs_cat.std(ddof=1)) if len(aucs_cat) > 1 else float("nan"),
        "ks_max": max(t.statistic for t in ks.values()),
        "ks_fail": sum(t.pvalue < KS_ALPHA for t in ks.values()),
    }
    row.update({f"ks_{c}": ks[c].statistic for c in feats})
    row.update({f"p_{c}": ks[c].pvalue for c in feats})
    return row
