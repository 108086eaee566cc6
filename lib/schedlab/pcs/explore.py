"""PCS's WFQ knobs by hand: class thresholds and weights -> (avg JCT, Pred_err) on a small trace.

The interactive explorer (``notebooks/explore/pcs.ipynb``) lets a reader set a WFQ
configuration — how many size classes, where the class boundaries lie (GPU-seconds) and what
share of the GPUs each class is guaranteed (weights) — and see at once where it lands in the
paper's trade-off plane (average JCT against average Pred_err), next to the baselines (FIFO,
Tiresias/SRSF, AFS, Max-Min, Themis), the three PCS configurations of the paper's Fig. 7 and
the Pareto front of the pipeline's Fig. 3 stage (``results/pcs/fig3_front.csv``, same trace and
jobs) when it has been run.

Every point is one run of the compiled simulator with the predictor on
(:func:`schedlab.pcs.simulate`, ``predict=True``): on the first 300 jobs of trace 0e4a51 a
WFQ run takes tens of milliseconds, so a slider move is answered well within a second
(``benchmarks/bench_pcs_explore.py`` measures it).

Examples
--------
>>> from schedlab.pcs import Workload
>>> w = Workload.from_arrays(submit_s=[0, 0, 5], service=[10.0, 200.0, 10.0], demand=[1, 1, 1])
>>> c = wfq_config([50.0], [3, 1])
>>> c.thresholds, [str(r) for r in c.rates]
((50.0, inf), ['3/4', '1/4'])
>>> class_table(w, c)["jobs"].tolist()
[2, 1]
>>> p = evaluate(w, c, gpus=1)
>>> p.num_classes, round(p.avg_jct_s, 3)
(2, 85.0)
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.pcs import metrics
from schedlab.pcs.configs import WFQConfig, heuristic_config
from schedlab.pcs.policies import make_policy
from schedlab.pcs.sim import simulate
from schedlab.pcs.workload import Workload

#: the explorer's default trace: the Fig. 3 stage's (default profile), so its front can be drawn
TRACE = "0e4a51"
NUM_JOBS = 300
GPUS = 64
BASELINES = ("FIFO", "Tiresias", "AFS", "Max-Min", "Themis")
#: the paper's Fig. 7 configurations for 0e4a51 (thresholds found on the trace's first 2001 jobs)
PAPER_CONFIGS = ("PCS-JCT", "PCS-bal", "PCS-pred")
#: (T, W, zeta_min, delta) of the authors' SPEA2 member #5 for 0e4a51 (Fig. 7's PCS-JCT)
START_PARAMETERS = (0.672378, 2.414758, 0.7758, 0.568191)


def _trace_label(name: str) -> str:
    """``trace_0e4a51.csv.gz`` -> ``trace 0e4a51`` (the workload's name is its file name)."""
    stem = name.split(".")[0]
    return stem.replace("trace_", "trace ", 1)


def small_trace(trace: str = TRACE, num_jobs: int = NUM_JOBS) -> Workload:
    """The first ``num_jobs`` jobs of a workload-2 trace (``schedlab fetch pcs`` provides it)."""
    from schedlab import data
    from schedlab.pcs.workload import load_trace

    return load_trace(data.require(f"pcs/workload2_philly_traces/trace_{trace}.csv.gz"), num_jobs)


def wfq_config(
    thresholds: Sequence[float],
    weights: Sequence[float],
    zeta_min: float = 0.01,
    delta: float = 0.1,
    decimals: int = 3,
) -> WFQConfig:
    """A WFQ configuration from class upper bounds and relative class weights.

    Parameters
    ----------
    thresholds : the upper size bound (GPU-seconds) of every class but the last, increasing;
        ``len(weights) - 1`` values (the last class takes every larger job).
    weights : one positive number per class; only their ratios matter. They are normalised and
        rounded to ``decimals`` decimals as exact fractions, as the authors' configurations are.
    zeta_min, delta : the demand cap (a job gets at most the GPUs it uses with efficiency
        ``>= zeta_min``; the cap is relaxed by ``delta`` when GPUs are left over).

    Raises
    ------
    ValueError
        Wrong number of thresholds, or a weight that is not positive or rounds to 0.
    schedlab.pcs.ConfigError
        Thresholds not strictly increasing (names the entries).

    >>> [str(r) for r in wfq_config([], [5]).rates]
    ['1']
    """
    if len(weights) == 0:
        raise ValueError("wfq_config: at least one class weight is needed")
    if len(thresholds) != len(weights) - 1:
        raise ValueError(
            f"wfq_config: {len(weights)} classes need {len(weights) - 1} thresholds "
            f"(upper bounds of all but the last class), got {len(thresholds)}"
        )
    w = np.asarray(weights, dtype=float)
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"wfq_config: class weights must be positive numbers, got {list(weights)}")
    scale = 10**decimals
    ints = [int(round(x * scale)) for x in w / w.sum()]
    if min(ints) == 0:
        # a class with no guaranteed share starves its jobs whenever others are present
        raise ValueError(
            f"wfq_config: class {ints.index(0)} weight rounds to 0 at {decimals} decimals "
            f"({list(weights)}); give every class at least 1/{scale} of the total"
        )
    rates = tuple(Fraction(i, sum(ints)) for i in ints)
    return WFQConfig(
        tuple(float(t) for t in thresholds) + (math.inf,), rates, float(zeta_min), float(delta), "explorer"
    )


def start_config(workload: Workload) -> WFQConfig:
    """A starting point: the paper's PCS-JCT parameters (T, W, ζ_min, δ) decoded on ``workload``."""
    return heuristic_config(workload.service, *START_PARAMETERS)


def class_table(workload: Workload, config: WFQConfig) -> pd.DataFrame:
    """Per class: its size range (GPU-s), weight, and the jobs and work (GPU-s) it receives.

    A job goes to the first class whose upper bound is ``>=`` its size (as
    :meth:`schedlab.pcs.policies.WFQ.classify`)."""
    thr = np.asarray(config.thresholds, dtype=float)
    cls = np.minimum(np.searchsorted(thr, workload.service, side="left"), len(thr) - 1)
    rows = []
    for k in range(len(thr)):
        members = workload.service[cls == k]
        rows.append(
            {
                "class": k,
                "from_gpu_s": 0.0 if k == 0 else float(thr[k - 1]),
                "to_gpu_s": float(thr[k]),
                "weight": float(config.rates[k]),
                "jobs": int(len(members)),
                "work_share": float(members.sum() / workload.service.sum()),
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Point:
    """One configuration's result: average JCT (s), average and p99 Pred_err (%), classes used,
    and the wall seconds the simulation took."""

    label: str
    avg_jct_s: float
    avg_pred_error: float
    p99_pred_error: float
    num_classes: int
    seconds: float


def evaluate(workload: Workload, config: WFQConfig, gpus: int = GPUS, label: str = "yours") -> Point:
    """Simulate ``workload`` under WFQ ``config`` with the predictor on; its summary as a :class:`Point`."""
    t0 = time.perf_counter()
    runs = simulate(workload, make_policy("PCS", config), gpus, predict=True)
    s = metrics.summary(runs)
    return Point(
        label,
        s["avg_jct"],
        s["avg_pred_error"],
        s["p99_pred_error"],
        config.num_classes,
        time.perf_counter() - t0,
    )


def reference_points(
    workload: Workload,
    gpus: int = GPUS,
    policies: Sequence[str] = BASELINES + PAPER_CONFIGS,
    config_key: str = "fig7_0e4a51",
) -> pd.DataFrame:
    """The baselines and the paper's PCS configurations on ``workload``: one row per policy with
    ``avg_jct_s``, ``avg_pred_error``, ``p99_pred_error`` (the Fig. 3 stage's baselines are the
    same runs). ``config_key``: whose PCS configurations (see ``experiments.pcs_config``)."""
    from schedlab.pcs import experiments as X

    runs = X.run_many(workload, X.policy_set(policies, config_key), gpus)
    rows = []
    for lab, df in runs.items():
        s = metrics.summary(df)
        rows.append(
            {
                "policy": lab,
                "avg_jct_s": s["avg_jct"],
                "avg_pred_error": s["avg_pred_error"],
                "p99_pred_error": s["p99_pred_error"],
            }
        )
    return pd.DataFrame(rows)


def stored_front(
    trace: str = TRACE, num_jobs: int = NUM_JOBS, root: Path | None = None
) -> tuple[pd.DataFrame | None, str]:
    """The Fig. 3 stage's Pareto front for the same trace and jobs, and a sentence saying where it
    came from or why there is none (the stage has not run, or ran other jobs)."""
    from schedlab import paths

    path = (root or paths.ROOT) / "results/pcs/fig3_front.csv"
    if not path.is_file():
        return None, f"no Pareto front yet: {path} is written by the pcs_fig3 stage (`make reproduce`)"
    front = pd.read_csv(path)
    for col in ("trace", "jobs", "jct_avg", "pred_err_avg"):
        if col not in front:
            raise ValueError(f"{path}: expected a column {col!r} (the Fig. 3 stage's output)")
    same = front[(front.trace.astype(str) == trace) & (front.jobs == num_jobs)]
    if same.empty:
        got = sorted({(str(t), int(j)) for t, j in zip(front.trace, front.jobs)})
        return None, f"{path} holds the front of {got}, not of trace {trace} with {num_jobs} jobs"
    return (
        same.rename(columns={"jct_avg": "avg_jct_s", "pred_err_avg": "avg_pred_error"}),
        f"Pareto front of the pcs_fig3 stage ({len(same)} configurations, {int(same.evaluations.iloc[0])} simulations)",
    )


@dataclass
class Explorer:
    """A small trace, its reference points and front, and the points tried so far.

    ``Explorer.load()`` reads the default trace (needs ``schedlab fetch pcs``); then
    ``e.update([1e4], [0.9, 0.1])`` tries two classes split at 10,000 GPU-s with 90 % / 10 % of
    the GPUs guaranteed, and ``e.plot()`` draws it against the references.
    """

    workload: Workload
    references: pd.DataFrame
    front: pd.DataFrame | None
    front_note: str
    gpus: int = GPUS
    history: list[Point] = field(default_factory=list)

    @classmethod
    def load(
        cls, trace: str = TRACE, num_jobs: int = NUM_JOBS, gpus: int = GPUS, root: Path | None = None
    ) -> "Explorer":
        """Load the trace, simulate the reference policies once (about a second) and read the front."""
        w = small_trace(trace, num_jobs)
        front, note = stored_front(trace, num_jobs, root)
        return cls(w, reference_points(w, gpus), front, note, gpus)

    def update(
        self,
        thresholds: Sequence[float],
        weights: Sequence[float],
        zeta_min: float = 0.01,
        delta: float = 0.1,
    ) -> Point:
        """Simulate one configuration (see :func:`wfq_config`) and remember it."""
        point = evaluate(
            self.workload,
            wfq_config(thresholds, weights, zeta_min, delta),
            self.gpus,
            label=f"try {len(self.history) + 1}",
        )
        self.history.append(point)
        return point

    def best_avg_jct(self) -> float:
        """The smallest avg JCT among the reference points (the x axis' unit)."""
        return float(self.references.avg_jct_s.min())

    def plot(self, ax=None, last: int = 8):
        """The trade-off plane: reference points, the stored front, the last ``last`` tries
        (faded) and the newest (a large star). Returns the Figure."""
        import matplotlib.pyplot as plt

        from schedlab.pcs import plots

        if ax is None:
            fig, ax = plt.subplots(figsize=(8.4, 4.6))
            # fixed margins (room for the legend on the right): no second layout pass per refresh
            fig.subplots_adjust(left=0.09, right=0.68, bottom=0.12, top=0.92)
        fig = ax.figure
        best = self.best_avg_jct()
        if self.front is not None:
            ax.scatter(
                self.front.avg_jct_s / best,
                self.front.avg_pred_error,
                s=14,
                color="#bbbbbb",
                label="Pareto front (Fig. 3 stage)",
            )
        for _, r in self.references.iterrows():
            marker = "D" if r.policy.startswith("PCS") else "s"
            ax.scatter(
                r.avg_jct_s / best,
                r.avg_pred_error,
                marker=marker,
                s=55,
                color=plots.color(r.policy),
                label=r.policy,
            )
        tries = self.history[-last:]
        for p in tries[:-1]:
            ax.scatter(p.avg_jct_s / best, p.avg_pred_error, marker="*", s=60, color="black", alpha=0.25)
        if tries:
            p = tries[-1]
            ax.scatter(
                p.avg_jct_s / best,
                p.avg_pred_error,
                marker="*",
                s=260,
                color="gold",
                edgecolor="black",
                zorder=5,
                label=f"your configuration ({p.num_classes} classes)",
            )
        plots._symlog(ax)
        ax.set(
            xlabel="avg JCT / best reference avg JCT (×)",
            ylabel=f"avg {plots.PRED} (%, log above 1)",
            title=f"{_trace_label(self.workload.name)}, first {len(self.workload)} jobs, {self.gpus} GPUs",
        )
        ax.grid(alpha=0.3)
        # legend outside the axes; no tight_layout (a third of a refresh): Jupyter's inline
        # backend and savefig(bbox_inches="tight") fit the legend in anyway
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        return fig

    def png(self, dpi: int = 100) -> bytes:
        """:meth:`plot` rendered to PNG bytes and closed: what a widget shows after each move
        (one render, no tight-bbox pass, no figure left open)."""
        import io

        import matplotlib.pyplot as plt

        fig = self.plot()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        plt.close(fig)
        return buf.getvalue()
