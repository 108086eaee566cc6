"""Nona's probability tables: the optimiser JSON's ``classes`` section, read, checked, built.

A table says, for every bottleneck subgraph of a job class (in topological order), with which
probability each *option* is drawn: a partition of the subgraph's intermediate tasks into
parts, the part that runs on the source's server (``source_part``) and the part whose server
hosts the sink (``sink_part``). The schemes that place jobs from tables
(:class:`~schedlab.nona.schedulers.TableScheduler`: Nona, Nona*, the Expert, Opportunistic)
compile them with :func:`compile_plan`.

Where tables come from:

* the optimiser (:func:`solve_tables`, or ``schedlab nona solve --json``), read by
  :func:`load_tables` and refused for another workload by :func:`check_tables_match`;
* constructed from one rule per subgraph (:func:`option_tables`): :func:`split_option`
  (Opportunistic: each parallel branch on its own server) and :func:`together_option` (the
  whole subgraph on its source's server), mixed by :mod:`schedlab.nona.expert`.

Examples
--------
>>> import networkx as nx
>>> g = nx.DiGraph([("r", "a"), ("r", "b"), ("a", "m"), ("b", "m")])
>>> branch_partition(g, ["a", "b"])
[['a'], ['b']]
>>> together_option(g, "r", "m", ["a", "b"])["partition"]
[['a', 'b']]
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Sequence

import networkx as nx

from schedlab.nona.contraction import BRANCH_RULES, bottleneck_runs, branch_partition  # noqa: F401 (public here too)
from schedlab.nona.sim import CompiledClass, SimInputError


class TableError(SimInputError):
    """A probability table (optimiser JSON) that does not fit the workload."""


def segments(dag: nx.DiGraph) -> list[tuple[Any, Any, tuple]]:
    """``(source, sink, intermediate)`` for every pair of consecutive bounds of ``dag``.

    Bounds are ``None``, the bottleneck nodes in order, ``None``; unlike
    :func:`~schedlab.nona.contraction.bottleneck_subgraphs` empty runs are kept (they say
    "the next bottleneck runs with the previous one").
    """
    # the (None, first-bottleneck) and (last-bottleneck, None) ends matter only if they hold tasks
    return [(s, t, inner) for s, t, inner in bottleneck_runs(dag) if inner or t is not None]


def load_tables(path: str | Path) -> dict:
    """Read an optimiser JSON (format in helpers' ``nona_api.md``); clear error if missing."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(
            f"Nona needs the optimiser's probability tables, but {p} does not exist; "
            "produce it with `schedlab nona solve --json` (the optimiser stage) first"
        )
    try:
        doc = json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise TableError(f"{p}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("classes"), dict):
        raise TableError(f"{p}: expected an object with a 'classes' mapping")
    doc["_path"] = str(p)
    return doc


class Plan:
    """One class's placement plan in index form (what :func:`compile_plan` returns)."""

    __slots__ = ("n", "steps", "trivial")

    def __init__(self, n: int, steps: list, trivial: bool):
        self.n = n
        self.steps = steps  # [(src, sink, cum_p, options)], options: [(parts, sink_part)]
        self.trivial = trivial  # one task: just a uniform server


def compile_plan(cls: CompiledClass, entries: list | None, servers: int, where: str) -> Plan:
    """Check one class's table entries (``subgraphs``) against its DAG and index them.

    ``where`` names the table in error messages (its file, or the scheme).
    """
    dag = cls.dag
    pos = cls.pos
    if cls.n == 1:
        if entries:
            raise TableError(f"{where}: class {cls.name!r} has one task but the table lists subgraphs")
        return Plan(1, [], True)
    by_key = {}
    for e in entries or []:
        try:
            key = (e["source"], e["sink"])
        except (KeyError, TypeError):
            raise TableError(
                f"{where}: class {cls.name!r}: each subgraph needs 'source' and 'sink'"
            ) from None
        by_key[key] = e
    steps = []
    used = set()
    for s, t, inner in segments(dag):
        src = pos[s] if s is not None else -1
        snk = pos[t] if t is not None else -1
        if not inner:
            steps.append((src, snk, None, None))
            continue
        e = by_key.get((s, t))
        if e is None:
            raise TableError(
                f"{where}: class {cls.name!r}: no table for the subgraph {s!r} -> {t!r} "
                f"(intermediate {list(inner)})"
            )
        used.add((s, t))
        steps.append(
            (
                src,
                snk,
                *_compile_options(
                    e, set(inner), cls, servers, f"{where}: class {cls.name!r}, subgraph {s!r} -> {t!r}"
                ),
            )
        )
    extra = set(by_key) - used
    if extra:
        raise TableError(
            f"{where}: class {cls.name!r}: table lists subgraphs {sorted(extra, key=str)} "
            "that are not bottleneck subgraphs of its contracted DAG"
        )
    return Plan(cls.n, steps, False)


def _compile_options(
    entry: dict, want: set, cls: CompiledClass, servers: int, where: str
) -> tuple[list, list]:
    """``(cumulative probabilities, [(parts as task indices, sink part)])`` of one subgraph."""
    pos = cls.pos
    opts = entry.get("options") or []
    if not opts:
        raise TableError(f"{where}: no options")
    cum, options, acc = [], [], 0.0
    for k, o in enumerate(opts):
        part = [list(p) for p in o.get("partition", [])]
        flat = [x for p in part for x in p]
        if (
            sorted(map(str, flat)) != sorted(map(str, want))
            or len(flat) != len(want)
            or any(not p for p in part)
        ):
            raise TableError(
                f"{where}, option {k}: partition "
                f"{part} is not a partition of the intermediate tasks {sorted(want, key=str)}"
            )
        sp, kp = o.get("source_part", 0), o.get("sink_part", 0)
        if not (isinstance(sp, int) and isinstance(kp, int) and 0 <= sp < len(part) and 0 <= kp < len(part)):
            raise TableError(
                f"{where}, option {k}: source_part/sink_part must index the {len(part)} parts, got {sp}/{kp}"
            )
        if len(part) > servers:
            raise TableError(
                f"{where}, option {k}: needs {len(part)} distinct servers, the cluster has {servers}"
            )
        p = float(o.get("p", float("nan")))
        if not (p >= 0 and math.isfinite(p)):
            raise TableError(f"{where}, option {k}: p must be >= 0, got {p}")
        if p == 0:
            continue
        acc += p
        cum.append(acc)
        # parts reordered so the source's part comes first (it gets the source's server)
        order = [sp] + [i for i in range(len(part)) if i != sp]
        parts = [[pos[x] for x in part[i]] for i in order]
        options.append((parts, order.index(kp)))
    if abs(acc - 1.0) > 1e-6:
        raise TableError(f"{where}: probabilities sum to {acc}, not 1")
    return [c / acc for c in cum], options


# --------------------------------------------------------------------------------------
# tables built from one rule per subgraph (Opportunistic, the Expert's candidates)
# --------------------------------------------------------------------------------------


def option_tables(classes: Sequence[Any], chooser: Callable[[nx.DiGraph, Any, Any, list], list]) -> dict:
    """Tables built by ``chooser(dag, source, sink, intermediate) -> options`` for every subgraph."""
    out: dict[str, dict] = {}
    for c in classes:
        kind = c.kind
        if kind != "inference":
            continue
        dag = c.dag
        subs = []
        for s, t, inner in segments(dag):
            if inner:
                subs.append(
                    {
                        "source": s,
                        "sink": t,
                        "intermediate": list(inner),
                        "options": chooser(dag, s, t, list(inner)),
                    }
                )
        out[c.name] = {"kind": kind, "subgraphs": subs}
    return {"method": "constructed", "classes": out}


def split_option(dag, s, t, inner, branches: str = "chains") -> dict:
    """Every parallel branch (:func:`branch_partition` under rule ``branches``) on its own server,
    the first one with the source and the sink."""
    return {"partition": branch_partition(dag, inner, branches), "source_part": 0, "sink_part": 0, "p": 1.0}


def together_option(dag, s, t, inner) -> dict:
    """The whole subgraph on the source's server (no transfer)."""
    return {"partition": [list(inner)], "source_part": 0, "sink_part": 0, "p": 1.0}


def opportunistic_tables(classes: Sequence[Any], branches: str = "chains") -> dict:
    """The Opportunistic scheme as tables: :func:`split_option` with probability 1."""
    return option_tables(classes, lambda *a: [split_option(*a, branches=branches)])


# --------------------------------------------------------------------------------------
# tables from the optimiser, for one workload point
# --------------------------------------------------------------------------------------


def solve_tables(
    job_classes, cluster, path: str | Path, *, load: float, method: str = "global", pricing: str | None = None
) -> Path:
    """Run the optimiser (``schedlab.nona.optimise``) for one point and write its JSON to ``path``
    (``pricing``: see :func:`schedlab.nona.optimise.solve`; ``None``: the library default)."""
    from schedlab.io import atomic_write_json
    from schedlab.nona import optimise

    res = optimise.solve(job_classes, cluster, method=method, pricing=pricing)
    atomic_write_json(path, optimise.to_json(res, load))
    return Path(path)


def check_tables_match(doc: dict, job_classes, cluster, *, same_point: bool = True) -> None:
    """Refuse tables solved for another workload (arrival rates) or cluster (servers, bandwidth).

    ``same_point=False`` (Nona*) only checks that every inference class has a table.
    """
    where = doc.get("_path", "tables")
    known = doc.get("classes", {})
    for c in job_classes:
        if c.kind == "inference" and c.name not in known:
            raise TableError(f"{where}: no table for job class {c.name!r} (has {sorted(known)})")
    if not same_point:
        return
    for key, ours in (("servers", cluster.servers), ("bandwidth_gbps", cluster.bandwidth_gbps)):
        if key in doc and doc[key] is not None and float(doc[key]) != float(ours):
            raise TableError(f"{where}: solved for {key} = {doc[key]}, this point has {ours}")
    for c in job_classes:
        r = known.get(c.name, {}).get("arrival_rate")
        if r is not None and abs(float(r) - c.arrival_rate) > 1e-6 * max(1.0, c.arrival_rate):
            raise TableError(
                f"{where}: class {c.name!r} was solved at arrival rate {r}, this workload has "
                f"{c.arrival_rate} (different models/load/workload settings?)"
            )


def placement_shares(doc: dict) -> list[dict]:
    """What a probability table decides, subgraph by subgraph: ``class``, ``source``, ``sink``,
    ``p_together`` (probability of the option that keeps every intermediate task with the source
    and the sink on one server), ``p_split`` (1 - that), ``options`` (options drawn with p > 0)
    and ``mixed`` (more than one option drawn: the placement is stochastic, Nona's mechanism).

    >>> doc = {"classes": {"g": {"subgraphs": [{"source": "a", "sink": "d", "intermediate": ["b", "c"],
    ...        "options": [{"partition": [["b", "c"]], "source_part": 0, "sink_part": 0, "p": 0.25},
    ...                    {"partition": [["b"], ["c"]], "source_part": 0, "sink_part": 0, "p": 0.75}]}]}}}
    >>> placement_shares(doc)[0]["p_split"], placement_shares(doc)[0]["mixed"]
    (0.75, True)
    """
    rows = []
    for name, entry in doc.get("classes", {}).items():
        for sub in entry.get("subgraphs", []) or []:
            opts = [o for o in sub.get("options", []) if float(o.get("p", 0)) > 0]
            together = sum(
                float(o["p"])
                for o in opts
                if len(o["partition"]) == 1 and o.get("source_part", 0) == 0 and o.get("sink_part", 0) == 0
            )
            rows.append(
                {
                    "class": name,
                    "source": sub.get("source"),
                    "sink": sub.get("sink"),
                    "p_together": together,
                    "p_split": 1.0 - together,
                    "options": len(opts),
                    "mixed": len(opts) > 1,
                }
            )
    return rows
