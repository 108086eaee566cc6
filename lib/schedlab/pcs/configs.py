"""WFQ (PCS, the authors' "MCS") configurations: shipped JSON and the heuristic.

A configuration has ``num_classes`` size classes with upper thresholds (GPU-seconds, last
``inf``), class weights summing to 1 (kept as exact fractions, as the authors' pickles do),
``zeta_min`` (their ``clip_demand_factor``) and ``delta``.

Examples
--------
>>> c = WFQConfig.default()
>>> c.num_classes, c.zeta_min, c.delta
(1, 0.01, 0.1)
>>> h = heuristic_config([1, 1, 1, 100, 100, 1000], T=1.0, W=1.0)
>>> h.thresholds
(1.0, inf)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Sequence

import numpy as np

CONFIG_ENTRY = "pcs/pcs_configs/pcs_configs.json"


class ConfigError(ValueError):
    """A malformed WFQ configuration (names the field)."""


@dataclass(frozen=True)
class WFQConfig:
    """One WFQ configuration (validated on construction)."""

    thresholds: tuple  # floats, increasing, last = inf
    rates: tuple  # Fractions summing to 1
    zeta_min: float = 0.01
    delta: float = 0.1
    name: str = "wfq"

    def __post_init__(self) -> None:
        n = len(self.thresholds)
        where = f"WFQ config {self.name!r}"
        if n == 0 or len(self.rates) != n:
            raise ConfigError(
                f"{where}: 'class_thresholds' ({n}) and 'class_rates' "
                f"({len(self.rates)}) must have the same non-zero length"
            )
        thr = [float(t) for t in self.thresholds]
        for i in range(1, n):
            if not thr[i] > thr[i - 1]:
                raise ConfigError(
                    f"{where}: 'class_thresholds' must be strictly increasing; "
                    f"entry {i} = {thr[i]} <= entry {i - 1} = {thr[i - 1]}"
                )
        neg = [i for i, r in enumerate(self.rates) if r < 0]
        if neg:
            raise ConfigError(
                f"{where}: 'class_rates' must be >= 0; entry {neg[0]} = {Fraction(self.rates[neg[0]])}"
            )
        total = sum(Fraction(r) for r in self.rates)
        # the authors assert math.isclose(float(sum), 1.0)
        if not math.isclose(float(total), 1.0):
            raise ConfigError(f"{where}: 'class_rates' must sum to 1, they sum to {float(total)!r}")
        # zeta(n) = demand_min / (n demand_n) lies in (0, 1], so a cap threshold outside [0, 1]
        # means nothing; delta is the step by which zeta_min is relaxed (search space 0.01-0.9)
        if not 0.0 <= self.zeta_min <= 1.0:
            raise ConfigError(
                f"{where}: 'clip_demand_factor' (zeta_min) = {self.zeta_min}: expected a number in [0, 1]"
            )
        if not 0.0 < self.delta <= 1.0:
            raise ConfigError(f"{where}: 'delta' = {self.delta}: expected a number in (0, 1]")

    @property
    def num_classes(self) -> int:
        """Number of size classes."""
        return len(self.thresholds)

    @classmethod
    def default(cls) -> "WFQConfig":
        """The authors' default: one class (plain FIFO with the demand cap), ζ_min 0.01, δ 0.1."""
        return cls((math.inf,), (Fraction(1),), 0.01, 0.1, "default")

    @classmethod
    def from_dict(cls, d: dict, name: str = "wfq") -> "WFQConfig":
        """From the JSON form (``class_thresholds`` with ``"inf"``, rates as ``"a/b"``)."""
        if not isinstance(d, dict):
            raise ConfigError(
                f"WFQ config {name!r}: expected an object with 'class_thresholds' and "
                f"'class_rates', got {type(d).__name__} {d!r:.60}"
            )
        for key in ("class_thresholds", "class_rates"):
            if key not in d:
                raise ConfigError(f"WFQ config {name!r}: missing field {key!r}")
        for key in ("class_thresholds", "class_rates"):
            if not isinstance(d[key], list):
                raise ConfigError(f"WFQ config {name!r}: field {key!r} must be a list, got {d[key]!r:.60}")
        try:
            thr = tuple(float(t) for t in d["class_thresholds"])
            rates = tuple(Fraction(str(r)) for r in d["class_rates"])
        except (TypeError, ValueError, ZeroDivisionError) as e:
            raise ConfigError(f"WFQ config {name!r}: bad 'class_thresholds'/'class_rates': {e}") from None
        scalars = {}
        # null reads as absent (older authors' configs have no demand-cap fields): their defaults
        for key, default in (("num_classes", None), ("clip_demand_factor", 0.01), ("delta", 0.1)):
            v = default if d.get(key) is None else d[key]
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, str))):
                raise ConfigError(f"WFQ config {name!r}: field {key!r} must be a number, got {v!r:.60}")
            try:
                scalars[key] = None if v is None else float(v)
            except ValueError:
                raise ConfigError(
                    f"WFQ config {name!r}: field {key!r} must be a number, got {v!r:.60}"
                ) from None
        if scalars["num_classes"] is not None and scalars["num_classes"] != len(thr):
            raise ConfigError(
                f"WFQ config {name!r}: 'num_classes' = {d['num_classes']} but {len(thr)} thresholds"
            )
        return cls(thr, rates, scalars["clip_demand_factor"], scalars["delta"], name)

    def to_dict(self) -> dict:
        """JSON-serialisable form (inverse of :meth:`from_dict`)."""
        return {
            "num_classes": self.num_classes,
            "class_thresholds": ["inf" if math.isinf(t) else t for t in self.thresholds],
            "class_rates": [str(Fraction(r)) for r in self.rates],
            "clip_demand_factor": self.zeta_min,
            "delta": self.delta,
        }


def load_configs(path: str | Path | None = None) -> dict[str, WFQConfig]:
    """All configurations of ``pcs_configs.json`` (manifest entry by default), by name."""
    if path is None:
        from schedlab import data

        path = data.require(CONFIG_ENTRY)
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{path}: expected a JSON object (one configuration with 'class_thresholds' "
            f"and 'class_rates', or configurations by name), got a {type(raw).__name__}"
        )
    try:
        if "class_thresholds" in raw:  # a single configuration
            return {Path(path).stem: WFQConfig.from_dict(raw, Path(path).stem)}
        return {k: WFQConfig.from_dict(v, k) for k, v in raw.items()}
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None


def load_config(path_or_name: str | Path) -> WFQConfig:
    """A configuration from a JSON file (single config) or a name in ``pcs_configs.json``."""
    p = Path(path_or_name)
    if p.suffix == ".json" and p.exists():
        cfgs = load_configs(p)
        if len(cfgs) != 1:
            raise ConfigError(f"{p}: holds {len(cfgs)} configurations; name one of them")
        return next(iter(cfgs.values()))
    cfgs = load_configs()
    if str(path_or_name) not in cfgs:
        raise ConfigError(f"unknown WFQ config {str(path_or_name)!r}; known: {', '.join(sorted(cfgs))}")
    return cfgs[str(path_or_name)]


HISTORY_ENTRY = "pcs/pcs_configs/pcs_configs_history.json"


def history_config(path_contains: str, commit: str) -> WFQConfig:
    """A past version of an authors' config pickle from ``pcs_configs_history.json``.

    >>> history_config("0e4a51_avg_jct_avg_pred_error_bal", "b313687").num_classes
    2
    """
    from schedlab import data

    hist = json.loads(Path(data.require(HISTORY_ENTRY)).read_text())
    hits = [h for h in hist if path_contains in h["path"] and h["commit"].startswith(commit)]
    if len(hits) != 1:
        raise ConfigError(
            f"{len(hits)} history entries match path~{path_contains!r} "
            f"commit {commit!r}; expected exactly one"
        )
    h = hits[0]
    return WFQConfig.from_dict(h, f"{Path(h['path']).stem}@{h['commit'][:7]}")


def class_thresholds(sizes: Sequence[float], T: float) -> tuple:
    """Size-class boundaries by squared coefficient of variation (the authors' procedure).

    Walk the sorted sizes keeping running sums; the C² is computed with the authors'
    formula ``var = (s2 + n*mu^2 - 2*mu*s)/n``. When it exceeds ``T`` the previous size
    (cast to ``int``) becomes a boundary and the running sums restart *empty* (the job that
    crossed the boundary is not counted in the next class's statistics, as in the original).
    """
    xs = sorted(float(x) for x in sizes)
    thresholds = []
    n, mu, s_, s2 = 0, 0.0, 0.0, 0.0
    for i, x in enumerate(xs):
        s_ += x
        s2 += x * x
        n += 1
        mu = ((n - 1.0) * mu + x) / n
        var = (1.0 / n) * (s2 + (n * mu * mu) - (mu * 2.0 * s_))
        c2 = var / (mu * mu) if mu != 0 else 0.0
        if c2 > T:
            thresholds.append(int(xs[i - 1]))
            n, mu, s_, s2 = 0, 0.0, 0.0, 0.0
    return tuple(float(t) for t in thresholds) + (math.inf,)


def heuristic_config(
    sizes: Sequence[float],
    T: float,
    W: float,
    zeta_min: float = 0.01,
    delta: float = 0.1,
    rate_decimals: int = 3,
) -> WFQConfig:
    """The paper's parameterisation (T, W, ζ_min, δ): thresholds by C², weights e^{-iW}.

    Thresholds: :func:`class_thresholds`. Weights ``w_i = exp(-i W)``, normalised, rounded
    to ``rate_decimals`` and renormalised as exact fractions. This reproduces the
    thresholds and rates of all 70 SPEA2 members of trace 0e4a51 in ``pareto_search/``
    from their (T, W) on the trace's first 2001 jobs (tested).
    """
    if len(sizes) == 0:
        raise ConfigError("heuristic_config: no job sizes")
    thresholds = class_thresholds(sizes, T)
    n = len(thresholds)
    w = np.exp(-np.arange(n) * W)
    w = w / w.sum()
    scale = 10**rate_decimals
    ints = [int(round(x * scale)) for x in w]
    # rounded weights renormalised exactly (e.g. 910, 83, 8 -> 10/11, 83/1001, 8/1001)
    rates = tuple(Fraction(i, sum(ints)) for i in ints)
    return WFQConfig(thresholds, rates, zeta_min, delta, f"heuristic_T{T}_W{W}")


PARETO_ENTRY = "pcs/pareto_search/wfq_pareto_fronts_workload2_2023-11.csv.gz"


def pareto_config(trace: str, solution_idx: int) -> WFQConfig:
    """SPEA2 population member ``solution_idx`` of the workload-2 search for VC ``trace``.

    Thresholds/rates are the README's recomputation from (T, W); ζ_min and δ are the raw
    search variables. Fig. 7's PCS-JCT / PCS-bal for 0e4a51 are members 5 / 6.
    """
    import pandas as pd

    from schedlab import data

    df = pd.read_csv(data.require(PARETO_ENTRY))
    row = df[
        (df["file"] == f"WFQ_trace_{trace}_avg_pred_error_vs_avg_jct.pkl")
        & (df["solution_idx"] == solution_idx)
    ]
    if len(row) != 1:
        raise ConfigError(f"no Pareto member {solution_idx} for trace {trace!r}")
    r = row.iloc[0]
    return WFQConfig.from_dict(
        {
            "class_thresholds": json.loads(r["class_thresholds"]),
            "class_rates": json.loads(r["class_rates"]),
            "clip_demand_factor": float(r["clip_demand_factor"]),
            "delta": float(r["delta"]),
        },
        f"pareto_{trace}_{solution_idx}",
    )
