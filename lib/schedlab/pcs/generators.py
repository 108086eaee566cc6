"""Synthetic workloads from the authors' CDFs (workload-1 ``themis1``, workload-3 ``gavel``),
the Fig. 1 toy example and the testbed trace.

Workload-3 (``gavel``) is reproducible job for job: ``generate("gavel", 3000,
authors_rng(seed), load=1.2)`` equals the workload of the authors' Fig. 8 runs (sizes,
demands, submit times; see ``draw_order``).

Sampler semantics (the authors' ``helpers.gen_data_from_cdf``): per point draw
``u ~ U(0,1)``, take the first CDF row with ``cdf >= u`` **in file order** (nine of the mirror's
size CDFs are not monotone, see :func:`first_at_least`) and draw the value **uniformly
between the previous row's value (0 for the first row) and that row's value**, then cast to
``int``. Draw order of one workload: sizes (``num_apps``), trials per app (``num_apps``), a
pool of 100 GPU counts, a pool of 100 min-GPU counts (unused), then per app the GPU
demand = sum of ``trials`` draws from the pool followed by its inter-arrival gap (from the
workload's inter-arrival CDF if it exists, else exponential with mean
``mean(size)/(load*G)``); ``draw_order="vector"`` draws all gaps before the demands and
``"per-trial"`` interleaves an unused min-GPU draw after each trial's GPUs. The size CDF can
be another set's (``service_cdf``, as the authors' ``gen_workload`` takes one name per
family). Sizes are rounded down to a multiple of the trial count
(``max(int(size/k), 1)*k``), gaps to whole seconds (``int(max(0.01, gap))``); the first app
arrives at 0.

Randomness: pass an explicit generator. ``np.random.Generator`` is the project default;
:func:`authors_rng` returns ``np.random.RandomState(seed)``, which is the stream the
authors' ``np.random.seed(seed)`` set up, so with it the workload equals theirs draw for
draw. The authors' Python-``random`` parts (the p_error factor, the 5000-app prediction
sampling) were unseeded; we draw the former from the ``rng`` given to
:func:`~schedlab.pcs.sim.simulate` and never sample predictions (all arrivals are
predicted, as the authors' code does for <= 5000 apps).

Examples
--------
>>> cdf = np.array([[1, 0.0], [1, 0.7], [2, 0.9], [4, 0.95], [8, 1.0]])
>>> x = sample_cdf(cdf, 20000, np.random.default_rng(0))
>>> round(float(np.mean(x == 1)), 2)   # the README's P(1 GPU) = 0.9, not 0.7
0.9
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from schedlab.pcs.models import SpeedupTables, linear_tables
from schedlab.pcs.workload import Workload, seconds_to_us

CDF_DIR = "pcs/workload_cdfs"
#: Paper names -> the authors' workload names.
PAPER_WORKLOADS = {"workload-1": "themis1", "workload-3": "gavel"}


def load_cdf(path: str | Path) -> np.ndarray:
    """``(k, 2)`` array of ``value, cdf`` rows (header skipped); last cdf must be 1."""
    rows = []
    for line in Path(path).read_text().splitlines()[1:]:
        if line.strip():
            v, c = line.strip().split(",")
            rows.append((float(v), float(c)))
    a = np.asarray(rows)
    if len(a) == 0 or a[-1, 1] != 1.0:
        raise ValueError(f"{path}: a CDF must end with cdf = 1.0")
    return a


def cdf_path(family: str, workload: str) -> Path | None:
    """Local path of ``cdf-<family>-<workload>.csv`` (None if the manifest has no such file)."""
    from schedlab import data

    name = f"{CDF_DIR}/cdf-{family}-{workload}.csv"
    try:
        data.entry(name)
    except Exception:  # noqa: BLE001 - absent entry means "no such CDF"
        return None
    return data.require(name)


def first_at_least(cums: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index of the first row ``i`` **in file order** with ``cums[i] >= u``, per ``u``.

    This is the authors' row scan (``helpers.gen_data_from_cdf``) without the loop. Some
    of the mirror's CDFs are not monotone (``cdf-app-service-times-workload_0e4a51.csv``
    has ``5322,0.528`` before ``1139,0.5021``), where a binary search on the raw column
    can land on a later row. On the running maximum it cannot: the first row whose running
    maximum reaches ``u`` is the first row that reaches ``u`` itself (the maximum only
    rises at a row whose own value is the new maximum).

    Parameters
    ----------
    cums : numpy.ndarray
        The CDF column in file order, ending with 1.0.
    u : numpy.ndarray
        Points in ``[0, 1]``.

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> cums = np.array([0.2, 0.528, 0.5021, 1.0])
    >>> first_at_least(cums, np.array([0.1, 0.51, 0.527, 0.6])).tolist()
    [0, 1, 1, 3]
    >>> np.searchsorted(cums, [0.51], side="left").tolist()   # the raw column misleads
    [3]
    """
    return np.searchsorted(np.maximum.accumulate(cums), u, side="left").astype(np.int64)


def sample_cdf(cdf: np.ndarray, n: int, rng, interpolation: bool = True) -> np.ndarray:
    """``n`` integer draws with the authors' sampler.

    Per point, in stream order: ``u ~ U(0, 1)``, the first row with ``cdf >= u`` in file
    order (:func:`first_at_least`), then (``interpolation``) a uniform draw between the
    previous row's value (0 for the first row) and that row's value, cast to ``int``.

    The draws are taken in one vector: ``uniform(lo, hi)`` is ``lo + (hi - lo) * r`` for the
    stream's next double ``r`` in both :class:`numpy.random.RandomState` and
    :class:`numpy.random.Generator`, so the values and the stream position equal those of
    the authors' point-by-point loop (tested against it).

    Examples
    --------
    >>> cdf = np.array([[10.0, 0.5], [20.0, 1.0]])
    >>> sample_cdf(cdf, 4, np.random.RandomState(0)).tolist()
    [17, 15, 6, 8]
    """
    vals, cums = cdf[:, 0], cdf[:, 1]
    n = int(n)
    if n <= 0:
        return np.empty(0, dtype=np.int64)
    per_point = 2 if interpolation else 1
    r = rng.uniform(0.0, 1.0, size=n * per_point).reshape(n, per_point)
    i = first_at_least(cums, r[:, 0])
    if not interpolation:
        return vals[i].astype(np.int64)
    lo = np.where(i == 0, 0.0, vals[np.maximum(i - 1, 0)])
    hi = vals[i]
    # int() of the authors' code truncates toward zero, as astype does
    return (lo + (hi - lo) * r[:, 1]).astype(np.int64)


def authors_rng(seed: int) -> np.random.RandomState:
    """The legacy stream of the authors' ``np.random.seed(seed)`` (for bit-exact workloads)."""
    return np.random.RandomState(seed)


#: where the gaps (and the GPU draws) come in the stream, see :func:`generate`
DRAW_ORDERS = ("per-app", "vector", "per-trial")


def _draw_one(rng, pool: np.ndarray, min_pool: np.ndarray) -> int:
    """One trial's GPU count, then its (unused) min-GPU count, as ``generate_rect_jobs``."""
    g = rng.choice(pool)
    rng.choice(min_pool)
    return int(g)


#: CDF families a synthetic workload reads (the authors' ``gen_workload``), in draw order
FAMILIES = ("app-service-times", "num-jobs-per-app", "max-gpus-per-job", "min-gpus-per-job")
#: families a workload name must have its own CDF for (the min-GPU draws are unused, see below)
REQUIRED_FAMILIES = FAMILIES[:3]
#: the stand-in min-GPU CDF for workloads without one (its values are never used)
MIN_GPUS_STANDIN = "1GPU"


def _cdf_names(family: str) -> list[str]:
    """Names ``X`` of every ``cdf-<family>-X.csv`` in the data manifest."""
    from schedlab.data.manifest import entries

    prefix = f"{CDF_DIR}/cdf-{family}-"
    return sorted(
        e.name[len(prefix) : -len(".csv")]
        for e in entries()
        if e.name.startswith(prefix) and e.name.endswith(".csv")
    )


def workload_names() -> list[str]:
    """Every name :func:`generate` accepts: the paper's names, then each CDF set of the mirror
    that has its own size, trials-per-app and GPUs-per-job CDFs.

    >>> names = workload_names()
    >>> names[:2], "gavel" in names, "themis1" in names, "workload_0e4a51" in names
    (['workload-1', 'workload-3'], True, True, True)
    """
    sets = set(_cdf_names(REQUIRED_FAMILIES[0]))
    for fam in REQUIRED_FAMILIES[1:]:
        sets &= set(_cdf_names(fam))
    return list(PAPER_WORKLOADS) + sorted(sets)


def service_cdf_names() -> list[str]:
    """Every size CDF (``cdf-app-service-times-X.csv``) that ``service_cdf=`` accepts."""
    return _cdf_names("app-service-times")


def resolve_workload(workload: str) -> str:
    """The authors' CDF-set name of ``workload`` (paper names map through
    :data:`PAPER_WORKLOADS`); :class:`ValueError` listing the known names otherwise.

    >>> resolve_workload("workload-3")
    'gavel'
    """
    name = PAPER_WORKLOADS.get(workload, workload)
    missing = [f for f in REQUIRED_FAMILIES if cdf_path(f, name) is None]
    if missing:
        raise ValueError(
            f"workload {workload!r}: no CDF {', '.join(f'cdf-{f}-{name}.csv' for f in missing)}"
            f" in the data manifest; known workloads: {', '.join(workload_names())}"
        )
    return name


def generate(
    workload: str,
    num_apps: int,
    rng,
    *,
    load: float = 0.8,
    gpus: int = 64,
    tables: SpeedupTables | None = None,
    draw_order: str = "per-app",
    service_cdf: str | None = None,
) -> Workload:
    """A synthetic workload (``themis1``, ``gavel``, ``workload_<vc>``, ...), linear scaling.

    Parameters
    ----------
    workload : str
        The authors' workload name (suffix of the CDF files) or a paper name
        (:data:`PAPER_WORKLOADS`); :func:`workload_names` lists them all.
    num_apps : int
    rng : numpy.random.Generator or numpy.random.RandomState
        Explicit randomness; :func:`authors_rng` reproduces the authors' draws.
    load, gpus : float, int
        Offered load and cluster size (ignored for inter-arrivals when the workload has an
        inter-arrival CDF, as in the authors' code).
    draw_order : {"per-app", "vector"}
        Where the inter-arrival gaps come in the stream. ``"per-app"`` (default): per app,
        its GPU demand, then its gap, the order of the authors' runs behind Fig. 8: with
        ``authors_rng(seed)`` this reproduces their ``workload3_gavel_load1.2_5seeds``
        workloads exactly (sizes, demands and submit times; tested job by job).
        ``"vector"``: all gaps first, then the demands, as the public ``sim.py`` of 2024
        (every named workload of its ``-workload`` list equals its ``gen_workload`` job by
        job, tested); it reproduces their ``new_results/new/*_gavel_result.csv`` runs (with
        ``service_cdf="gavel-contmultiple"``, seed 4567, load 1.2, 3000 apps).
        ``"per-trial"``: per app, each trial draws its GPU count and then an unused
        min-GPU count (the authors' ``generate_rect_jobs``), then the app's gap; with seed
        4567 this gives the sizes, total demands and submit times of the
        ``themis1_5seeds`` baseline files (their seed was not applied; the MCS files there
        are ``per-app`` with the file's seed). Those runs simulated each trial as its own
        rigid job inside the app, a model this library does not have, so only their
        workload is reproduced, not their schedules.
    service_cdf : str, optional
        Size CDF to use instead of the workload's own (``cdf-app-service-times-<name>.csv``,
        :func:`service_cdf_names`), as the authors' ``gen_workload`` takes one name per CDF
        family. As in their code the inter-arrival CDF is looked up under this name
        (``cdf-app-interarrival-times-<service_cdf>.csv``). ``"gavel-contmultiple"`` is the
        ``gavel`` size CDF before the authors' commit 2778152.

    Notes
    -----
    The min-GPU pool (100 draws) is drawn and never used, as by the authors; it moves the
    stream by 200 uniforms whatever the CDF, so a workload without its own min-GPU CDF
    (``gavel-contsingle``) draws it from :data:`MIN_GPUS_STANDIN`. This is what the
    authors' Fig. 8 runs, named ``gavel-contsingle``, did: ``generate("gavel-contsingle",
    ...)`` equals ``generate("gavel", ...)`` and their workloads.
    """
    if draw_order not in DRAW_ORDERS:
        raise ValueError(f"draw_order must be one of {', '.join(DRAW_ORDERS)}, not {draw_order!r}")
    if int(num_apps) < 1:
        raise ValueError(f"num_apps = {num_apps}: expected at least 1 app")
    if not (np.isfinite(load) and load > 0):
        raise ValueError(f"load = {load}: expected a number > 0")
    if int(gpus) < 1:
        raise ValueError(f"gpus = {gpus}: expected at least 1 GPU")
    name = resolve_workload(workload)
    svc_name = name if service_cdf is None else service_cdf
    svc_path = cdf_path("app-service-times", svc_name)
    if svc_path is None:
        raise ValueError(
            f"service_cdf {svc_name!r}: no cdf-app-service-times-{svc_name}.csv; "
            f"known: {', '.join(service_cdf_names())}"
        )
    min_path = cdf_path("min-gpus-per-job", name) or cdf_path("min-gpus-per-job", MIN_GPUS_STANDIN)
    svc = sample_cdf(load_cdf(svc_path), num_apps, rng)
    trials = sample_cdf(load_cdf(cdf_path("num-jobs-per-app", name)), num_apps, rng)
    pool = sample_cdf(load_cdf(cdf_path("max-gpus-per-job", name)), 100, rng)
    min_pool = sample_cdf(load_cdf(min_path), 100, rng)  # unused values, as by the authors
    iat_path = cdf_path("app-interarrival-times", svc_name)
    iat_cdf = load_cdf(iat_path) if iat_path is not None else None  # read once, drawn per app
    mean_gap = float(np.mean(svc)) / (load * gpus)

    def draw_gaps(n):
        if iat_cdf is not None:
            return sample_cdf(iat_cdf, n, rng).astype(float)
        return rng.exponential(mean_gap, size=n)

    if draw_order == "vector":
        gaps = draw_gaps(num_apps)
    else:
        gaps = np.empty(num_apps)
    service = np.empty(num_apps)
    demand = np.empty(num_apps, dtype=np.int64)
    for a in range(num_apps):
        k = int(trials[a])
        service[a] = max(int(float(svc[a]) / k), 1) * k
        if draw_order == "per-trial":
            # the authors' generate_rect_jobs: per trial its GPUs, then an unused min-GPU draw
            demand[a] = sum(int(_draw_one(rng, pool, min_pool)) for _ in range(k))
        else:
            demand[a] = int(np.sum(rng.choice(pool, k)))
        if draw_order in ("per-app", "per-trial"):
            gaps[a] = draw_gaps(1)[0]
    sleeps = np.array([int(max(0.01, g)) for g in gaps], dtype=float)
    submit = np.concatenate([[0.0], np.cumsum(sleeps)[:-1]])
    tables = tables if tables is not None else linear_tables(max(int(demand.max()), 1))
    label = name if service_cdf is None else f"{name}+{service_cdf}"
    w = Workload(
        seconds_to_us(submit),
        service,
        demand,
        np.full(num_apps, tables.index("LinearModel"), dtype=np.int64),
        tables,
        f"{label}_{num_apps}",
    )
    return w


def toy_fig1() -> Workload:
    """The Fig. 1 toy example from ``testbed_traces/trace_toy.csv`` (linear scaling)."""
    from schedlab import data
    from schedlab.pcs.workload import load_trace

    return load_trace(data.require("pcs/testbed_traces/trace_toy.csv"), tables=linear_tables(64))


def testbed_trace() -> Workload:
    """The 101-app testbed trace (Figs. 4-6), linear scaling, apps sorted by submit time.

    The source's last row (app 100, submit 0) is out of order; its ``sleep_time`` based
    clock would place it last, so we use the ``submit_time`` column and a stable sort.
    """
    import pandas as pd

    from schedlab import data

    df = pd.read_csv(data.require("pcs/testbed_traces/trace_themis1_scaled.csv"))
    df = df.sort_values("submit_time", kind="stable").reset_index(drop=True)
    t = linear_tables(max(64, int(df["num_jobs"].max())))
    return Workload(
        seconds_to_us(df["submit_time"].to_numpy(float)),
        df["service"].to_numpy(float),
        df["num_jobs"].to_numpy(np.int64),
        np.zeros(len(df), dtype=np.int64),
        t,
        "testbed_themis1_scaled",
    )
