"""Synthetic workloads from the authors' CDFs (workload-1 ``themis1``, workload-3 ``gavel``),
the Fig. 1 toy example and the testbed trace.

Workload-3 (``gavel``) is reproducible job for job: ``generate("gavel", 3000,
authors_rng(seed), load=1.2)`` equals the workload of the authors' Fig. 8 runs (sizes,
demands, submit times; see ``draw_order``).

Sampler semantics (the authors' ``helpers.gen_data_from_cdf``): per point draw
``u ~ U(0,1)``, take the first CDF row with ``cdf >= u`` and draw the value **uniformly
between the previous row's value (0 for the first row) and that row's value**, then cast to
``int``. Draw order of one workload: sizes (``num_apps``), trials per app (``num_apps``), a
pool of 100 GPU counts, a pool of 100 min-GPU counts (unused), then per app the GPU
demand = sum of ``trials`` draws from the pool followed by its inter-arrival gap (from the
workload's inter-arrival CDF if it exists, else exponential with mean
``mean(size)/(load*G)``); ``draw_order="vector"`` draws all gaps before the demands. Sizes are rounded down to a multiple of the trial count
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

from schedlab.pcs.models import SpeedupTables, linear_tables, load_speedups
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


def sample_cdf(cdf: np.ndarray, n: int, rng, interpolation: bool = True) -> np.ndarray:
    """``n`` integer draws with the authors' sampler (two uniforms per point, in order)."""
    vals, cums = cdf[:, 0], cdf[:, 1]
    out = np.empty(n, dtype=np.int64)
    for k in range(n):
        u = rng.uniform(0.0, 1.0)
        i = int(np.searchsorted(cums, u, side="left"))  # first cdf >= u
        lo = 0.0 if i == 0 else vals[i - 1]
        out[k] = int(rng.uniform(lo, vals[i])) if interpolation else int(vals[i])
    return out


def authors_rng(seed: int) -> np.random.RandomState:
    """The legacy stream of the authors' ``np.random.seed(seed)`` (for bit-exact workloads)."""
    return np.random.RandomState(seed)


def generate(workload: str, num_apps: int, rng, *, load: float = 0.8, gpus: int = 64,
             tables: SpeedupTables | None = None, draw_order: str = "per-app") -> Workload:
    """A synthetic workload (``themis1``, ``gavel``, ``workload_<vc>``, ...), linear scaling.

    Parameters
    ----------
    workload : str
        The authors' workload name (suffix of the CDF files); see :data:`PAPER_WORKLOADS`.
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
        ``"vector"``: all gaps first, then the demands, as the public ``sim.py`` of 2024.
        Neither reproduces the submit times of the ``themis1_5seeds`` files (seed 4567
        reproduces their sizes only).
    """
    if draw_order not in ("per-app", "vector"):
        raise ValueError(f"draw_order must be 'per-app' or 'vector', not {draw_order!r}")
    need = {f: cdf_path(f, workload) for f in
            ("app-service-times", "num-jobs-per-app", "max-gpus-per-job", "min-gpus-per-job")}
    for f, p in need.items():
        if p is None and f != "min-gpus-per-job":
            raise ValueError(f"workload {workload!r}: no CDF cdf-{f}-{workload}.csv")
    svc = sample_cdf(load_cdf(need["app-service-times"]), num_apps, rng)
    trials = sample_cdf(load_cdf(need["num-jobs-per-app"]), num_apps, rng)
    pool = sample_cdf(load_cdf(need["max-gpus-per-job"]), 100, rng)
    if need["min-gpus-per-job"] is not None:  # drawn (and unused) by the authors
        sample_cdf(load_cdf(need["min-gpus-per-job"]), 100, rng)
    iat_path = cdf_path("app-interarrival-times", workload)
    mean_gap = float(np.mean(svc)) / (load * gpus)

    def draw_gaps(n):
        if iat_path is not None:
            return sample_cdf(load_cdf(iat_path), n, rng).astype(float)
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
        demand[a] = int(np.sum(rng.choice(pool, k)))
        if draw_order == "per-app":
            gaps[a] = draw_gaps(1)[0]
    sleeps = np.array([int(max(0.01, g)) for g in gaps], dtype=float)
    submit = np.concatenate([[0.0], np.cumsum(sleeps)[:-1]])
    tables = tables if tables is not None else linear_tables(max(int(demand.max()), 1))
    w = Workload(seconds_to_us(submit), service, demand,
                 np.full(num_apps, tables.index("LinearModel"), dtype=np.int64), tables,
                 f"{workload}_{num_apps}")
    return w


def toy_fig1() -> Workload:
    """The Fig. 1 toy example from ``testbed_traces/trace_toy.csv`` (linear scaling)."""
    from schedlab import data
    from schedlab.pcs.workload import load_trace

    return load_trace(data.require("pcs/testbed_traces/trace_toy.csv"),
                      tables=linear_tables(64))


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
    return Workload(seconds_to_us(df["submit_time"].to_numpy(float)),
                    df["service"].to_numpy(float), df["num_jobs"].to_numpy(np.int64),
                    np.zeros(len(df), dtype=np.int64), t, "testbed_themis1_scaled")
