"""The Expert scheme, made honest: probability tables found by a direct search in the simulator.

The paper's Expert is "a manually derived probability distribution" per data point (section
IV-A); that process is not reproducible. Ours is the best table found by a *coordinate
search* that scores candidates by simulating them:

* **Candidates.** For every bottleneck subgraph ``t`` of every inference class, a two-option
  table mixing *together* (the whole subgraph on its source's server, no transfer) and
  *split* (each parallel branch on its own server, the first with the source and the sink;
  the Opportunistic placement; branches are parallel chains, so GPT-2's q/k/v split, see
  :func:`~schedlab.nona.tables.branch_partition`; ``branches="components"`` keeps a connected
  component whole) with probability ``p_t`` of *split*, ``p_t`` on the grid
  ``grid`` (default 0, 0.25, 0.5, 0.75, 1). This family is a subset of the optimiser's
  Omega_t (it contains its extreme points "all together" and "all branches apart").
* **Search.** Score all-together and all-split; from the better one, sweep the subgraphs in order, for each try every grid
  value with the others fixed and keep the best; repeat sweeps until a sweep changes
  nothing or ``budget`` simulations have run.
* **Score.** Mean JCT over all jobs (the paper's objective (I)) of one run of ``duration``
  seconds after ``warmup``, with the *same* seed for every candidate (common random numbers,
  so differences are not seed noise) and a seed different from the one the figures use
  (``search_seed``), so the Expert is not tuned on the evaluation run's noise.

Examples
--------
>>> from schedlab.nona.workload import Cluster, build_workload, job_f
>>> c = Cluster(servers=8, bandwidth_gbps=80)
>>> w = build_workload(classes=[job_f()], load=0.3, cluster=c, comm_load=0.1, background_ratio=20)
>>> res = search(w, c, duration=20, warmup=2, budget=12, search_seed=1)
>>> res.evaluations <= 12 and set(res.p) == {("f", "sum", "add")}
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

# the scoring runs place jobs with Nona's TableScheduler; neither schedulers nor tables imports this
# module back (the experiment driver, schedlab.nona.experiments, does)
from schedlab.nona.schedulers import TableScheduler
from schedlab.nona.sim import simulate
from schedlab.nona.tables import segments, split_option, together_option

DEFAULT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass
class ExpertResult:
    """The tables found, their score and the search log."""

    tables: dict
    p: dict[tuple, float]
    score: float
    evaluations: int
    log: list[dict] = field(default_factory=list)
    method: str = "coordinate search over split/together mixtures"


def subgraph_keys(job_classes: Sequence[Any], branches: str = "chains") -> list[tuple]:
    """``(class, source, sink)`` of every subgraph with a decision (more than one branch under the
    rule ``branches`` of :func:`~schedlab.nona.tables.branch_partition`)."""
    keys = []
    for c in job_classes:
        if c.kind != "inference":
            continue
        for s, t, inner in segments(c.dag):
            if inner and len(split_option(c.dag, s, t, list(inner), branches)["partition"]) > 1:
                keys.append((c.name, s, t))
    return keys


def tables_from_p(job_classes: Sequence[Any], p: dict[tuple, float], branches: str = "chains") -> dict:
    """Optimiser-format tables for split probabilities ``p`` (missing keys: together)."""
    classes: dict[str, dict] = {}
    for c in job_classes:
        if c.kind != "inference":
            continue
        subs = []
        for s, t, inner in segments(c.dag):
            if not inner:
                continue
            inner = list(inner)
            q = float(p.get((c.name, s, t), 0.0))
            opts = []
            if q > 0:
                opts.append({**split_option(c.dag, s, t, inner, branches), "p": q})
            if q < 1:
                opts.append({**together_option(c.dag, s, t, inner), "p": 1.0 - q})
            subs.append({"source": s, "sink": t, "intermediate": inner, "options": opts})
        classes[c.name] = {"kind": c.kind, "subgraphs": subs}
    return {"method": "expert-search", "classes": classes}


def search(
    job_classes: Sequence[Any],
    cluster: Any,
    *,
    duration: float,
    warmup: float,
    budget: int = 40,
    grid: Sequence[float] = DEFAULT_GRID,
    search_seed: int = 12345,
    branches: str = "chains",
    progress: bool = False,
) -> ExpertResult:
    """Coordinate search for the Expert's tables (see the module docstring).

    Parameters
    ----------
    job_classes, cluster : the workload point (as for :func:`~schedlab.nona.sim.simulate`).
    duration, warmup : length of each scoring run.
    budget : maximum number of scoring simulations.
    grid : candidate split probabilities per subgraph.
    search_seed : seed of every scoring run (common random numbers).
    """
    if budget < 1:
        raise ValueError(f"budget must be >= 1 simulation, got {budget}")
    keys = subgraph_keys(job_classes, branches)
    cache: dict[tuple, float] = {}
    log: list[dict] = []

    def score(p: dict) -> float:
        key = tuple(p.get(k, 0.0) for k in keys)
        if key not in cache:
            if len(cache) >= budget:
                return math.inf
            res = simulate(
                job_classes,
                cluster,
                TableScheduler(tables_from_p(job_classes, p, branches), name="expert"),
                duration=duration,
                warmup=warmup,
                rng=np.random.default_rng(search_seed),
            )
            cache[key] = float(res.jobs.jct.mean())
            log.append({"p": list(key), "mean_jct_s": cache[key]})
        return cache[key]

    best = {k: 0.0 for k in keys}
    best_score = score(best)
    if keys:
        split = {k: 1.0 for k in keys}
        s_split = score(split)
        if s_split < best_score:
            best, best_score = split, s_split
    bar = None
    if progress:
        from schedlab.progress import bar as progress_bar

        bar = progress_bar(total=budget, desc="expert search", leave=False)
    changed = True
    while changed and len(cache) < budget:
        changed = False
        for k in keys:
            for q in grid:
                if q == best[k]:
                    continue
                trial = {**best, k: q}
                s = score(trial)
                if bar is not None:
                    bar.n = len(cache)
                    bar.refresh()
                if s < best_score:
                    best, best_score, changed = trial, s, True
            if len(cache) >= budget:
                break
    if bar is not None:
        bar.close()
    return ExpertResult(tables_from_p(job_classes, best, branches), best, best_score, len(cache), log)
