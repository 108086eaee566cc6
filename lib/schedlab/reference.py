"""Compare numbers measured by the pipeline with the papers' numbers.

``reference/<paper>.yaml`` lists each published number with its source (table, figure,
section), a tolerance and a locator for our measurement::

    - id: table2.resnet18.post_tasks
      quantity: ResNet18 tasks after contraction
      paper: 10
      tolerance: 0            # absolute; or rel_tolerance: 0.05; or null = shown, not asserted
      source: Table II, section IV-A
      measured: {file: results/nona/table2.csv, where: {model: resnet18}, column: post_tasks}

``measured.file`` may be a CSV (row chosen by ``where``, value by ``column``) or a JSON file
(value by ``key``, a dotted path). ``measured: null`` marks a paper value that a notebook shows
next to its own table but that the suite does not measure (e.g. Decima's training hours at
cluster sizes we do not train at): :func:`paper_values` returns it, :func:`compare` leaves it out. A missing file, row or value is reported as
``missing input``, never as a match, except for entries marked ``profile: paper``: values only
the paper profile computes (``make reproduce PROFILE=paper``), reported as ``paper profile only``
when the run did not make them. ``figure: figures/<paper>/<stem>.png`` (or a list) names the
figure an entry's claim is shown in (see :mod:`schedlab.scorecard`).

A reference file's ``setups`` list states the setup a group of the paper's numbers assumes::

    setups:
      - ids: fig7.                 # every entry whose id starts with this
        setup: {pcs.fig7.gpus: 64}  # params.yaml values (section.key) the paper's numbers hold for
        source: section 5 "a homogeneous 64 GPU cluster"

A run whose ``params.yaml`` (under its profile) gives another value is reported ``different
setup``, naming the value, instead of ``yes``/``no``: its number answers another question. That
verdict is counted only where it occurs (the default run has none).

A reference file's ``fitted`` entry names the params.yaml key listing the id prefixes of the
paper's numbers the suite *fitted* an unstated choice on (Nona's calibration)::

    fitted:
      param: nona.calibration.fit_on   # its value: a list of id prefixes, e.g. [fig3.gain_avg.]
      source: notebooks/nona/calibration (the fitting set, stated before the fit)

Such a number is reported ``fitted`` (its note says whether it fell within tolerance): it was
used to choose the setting, so it is not evidence that the setting reproduces the paper. The
``yes``/``no`` counts are then the held-out numbers only.

Examples
--------
>>> check(10, 10, {"tolerance": 0})
'yes'
>>> check(10, 10.6, {"rel_tolerance": 0.05})
'no'
>>> check(None, 10, {"tolerance": 0})
'missing input'
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import yaml

from schedlab import paths
from schedlab.io import atomic_write_json, atomic_write_text


class ReferenceError(ValueError):
    """A malformed reference file; names the file and entry."""


def load_reference(paper: str, root: Path | None = None) -> dict:
    path = (root or paths.REFERENCE) / f"{paper}.yaml"
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ReferenceError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("values"), list):
        raise ReferenceError(f"{path}: expected a mapping with a list under 'values'")
    seen = set()
    for i, v in enumerate(doc["values"]):
        for key in ("id", "quantity", "paper", "source", "measured"):
            if key not in v:
                raise ReferenceError(f"{path}: entry {i} ({v.get('id', '?')}) lacks field {key!r}")
        if v["id"] in seen:
            raise ReferenceError(f"{path}: duplicate id {v['id']!r}")
        seen.add(v["id"])
        if v.get("profile", "paper") != "paper":
            raise ReferenceError(
                f"{path}: entry {v['id']!r}: profile must be 'paper' (or absent), not {v['profile']!r}"
            )
        figures = v.get("figure", [])
        if not all(
            isinstance(f, str) and f.endswith(".png")
            for f in (figures if isinstance(figures, list) else [figures])
        ):
            raise ReferenceError(
                f"{path}: entry {v['id']!r}: figure must be a .png path or a list of them, not {figures!r}"
            )
    for i, group in enumerate(doc.get("setups") or []):
        if not (
            isinstance(group, dict)
            and isinstance(group.get("ids"), str)
            and isinstance(group.get("setup"), dict)
            and group.get("source")
        ):
            raise ReferenceError(
                f"{path}: setups[{i}] must have ids (an id prefix), setup (a mapping of "
                "params.yaml keys like pcs.fig7.gpus to values) and source"
            )
        for key in group["setup"]:
            if len(str(key).split(".")) < 3:
                raise ReferenceError(
                    f"{path}: setups[{i}]: {key!r} is not a params.yaml key <paper>.<section>.<key>"
                )
    fitted = doc.get("fitted")
    if fitted is not None and not (
        isinstance(fitted, dict)
        and len(str(fitted.get("param", "")).split(".")) == 3
        and fitted.get("source")
    ):
        raise ReferenceError(
            f"{path}: fitted must be a mapping with param (a params.yaml key "
            "<paper>.<section>.<key> whose value lists id prefixes) and source, "
            f"not {fitted!r}"
        )
    doc["_path"] = path
    return doc


def setup_keys(paper: str, root: Path | None = None) -> list[str]:
    """Every params.yaml key ``reference/<paper>.yaml`` names (its setups' and its fitted list's), sorted."""
    doc = load_reference(paper, root)
    keys = {k for group in doc.get("setups") or [] for k in group["setup"]}
    if doc.get("fitted"):
        keys.add(doc["fitted"]["param"])
    return sorted(keys)


def fitted_prefixes(doc: dict, params_file: Path) -> tuple[str, ...]:
    """The id prefixes of the numbers fitted in the run under ``params_file`` (see the module
    docstring); empty without a ``fitted`` entry. A value that is not a list of strings is an
    error naming the key."""
    fitted = doc.get("fitted")
    if not fitted or not params_file.is_file():
        return ()
    value = run_value(fitted["param"], params_file)
    if value is None:
        value = []
    if not (isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
        raise ReferenceError(
            f"{params_file}: {fitted['param']} must be a list of id prefixes "
            f"(named by {doc['_path']} fitted.param), got {value!r}"
        )
    return tuple(value)


def setup_of(entry: dict, doc: dict) -> dict[str, Any]:
    """The setup (params.yaml key -> value) the paper's number of ``entry`` assumes."""
    out: dict[str, Any] = {}
    for group in doc.get("setups") or []:
        if str(entry["id"]).startswith(group["ids"]):
            out.update(group["setup"])
    return out


def run_value(key: str, params_file: Path) -> Any:
    """The value of ``<paper>.<section>.<key>[.<field>]`` a run under ``params_file`` used (its
    top-level profile, shared values merged)."""
    from schedlab.notebooks.params import load_params

    paper, section, *rest = key.split(".")
    node: Any = load_params(f"{paper}/{section}", params_file)
    for part in rest:
        node = node.get(part) if isinstance(node, dict) else None
    return node


def setup_differences(entry: dict, doc: dict, params_file: Path) -> list[str]:
    """``key=run value (paper: value)`` for each value of the entry's setup the run changed."""
    if not params_file.is_file():
        return []
    return [
        f"{k}={run_value(k, params_file)!r} (the paper's: {v!r})"
        for k, v in setup_of(entry, doc).items()
        if run_value(k, params_file) != v
    ]


def paper_values(paper: str, prefix: str = "", root: Path | None = None) -> dict[str, Any]:
    """The paper's numbers from ``reference/<paper>.yaml`` by id (those starting with ``prefix``).

    Notebooks read paper values here, never from literals of their own.

    >>> paper_values("nona", "fig3.gain_avg.")["fig3.gain_avg.spark_fair"]
    56
    """
    doc = load_reference(paper, root)
    return {v["id"]: v["paper"] for v in doc["values"] if str(v["id"]).startswith(prefix)}


def _is_missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


#: every verdict :func:`check` gives, in the order reports list them
VERDICTS = ("yes", "no", "not asserted", "paper profile only", "missing input", "different setup", "fitted")
#: verdicts reports list only when some number has them
OCCASIONAL = ("different setup", "fitted")


def check(ours: Any, paper: Any, spec: dict) -> str:
    """``yes``/``no`` for a number against the paper's, or ``missing input`` / ``not asserted``
    (``paper profile only`` for a missing value of an entry marked ``profile: paper``)."""
    if _is_missing(ours):
        return "paper profile only" if spec.get("profile") == "paper" else "missing input"
    if spec.get("bound") is not None:  # the paper states a bound ("within 10%", "up to")
        if spec["bound"] not in ("upper", "lower"):
            raise ReferenceError(
                f"entry {spec.get('id', '?')}: bound must be 'upper' or 'lower', got {spec['bound']!r}"
            )
        slack = float(spec.get("tolerance") or 0.0)
        ok = (
            float(ours) <= float(paper) + slack
            if spec["bound"] == "upper"
            else float(ours) >= float(paper) - slack
        )
        return "yes" if ok else "no"
    if "rel_tolerance" in spec and spec["rel_tolerance"] is not None:
        ok = abs(float(ours) - float(paper)) <= float(spec["rel_tolerance"]) * abs(float(paper))
    elif spec.get("tolerance", None) is not None:
        ok = abs(float(ours) - float(paper)) <= float(spec["tolerance"]) + 1e-12
    else:
        return "not asserted"
    return "yes" if ok else "no"


def measure(locator: dict, root: Path) -> Any:
    """Our value for one reference entry, or ``None`` if it is not there."""
    path = root / locator["file"]
    if not path.is_file():
        return None
    if path.suffix == ".json":
        node: Any = json.loads(path.read_text())
        for part in str(locator["key"]).split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node
    table = pd.read_csv(path)
    for col, val in (locator.get("where") or {}).items():
        table = table[table[col].astype(str) == str(val)]
    if len(table) != 1 or locator["column"] not in table:
        return None
    value = table.iloc[0][locator["column"]]
    return None if pd.isna(value) else value.item() if hasattr(value, "item") else value


def is_timing(entry: dict) -> bool:
    """An entry measured from a file under ``results/<paper>/timings/`` (a wall-clock or CPU
    time): compared in its own report, outside the pipeline's deterministic outputs."""
    measured = entry.get("measured")
    return measured is not None and f"/{paths.TIMINGS}/" in f"/{measured['file']}"


def compare(
    paper: str, root: Path | None = None, reference_root: Path | None = None, *, timings: bool = False
) -> pd.DataFrame:
    """One row per published number: paper value, ours, tolerance, match.

    ``timings=False``: the numbers the pipeline reproduces (the same on every run);
    ``timings=True``: the times (seconds of solving, training, simulating), which vary from
    run to run and machine to machine.
    """
    root = root or paths.ROOT
    doc = load_reference(paper, reference_root)
    params_file = root / paths.PARAMS.name
    fitted = fitted_prefixes(doc, params_file)
    rows = []
    for v in doc["values"]:
        if v["measured"] is None:  # a paper value shown beside a table of ours, never measured
            continue
        if is_timing(v) != timings:
            continue
        ours = measure(v["measured"], root)
        tol = v.get("rel_tolerance")
        tol_text = (
            f"±{tol:.0%}"
            if tol is not None
            else (f"±{v['tolerance']:g}" if v.get("tolerance") is not None else "—")
        )
        if v.get("bound") is not None:
            tol_text = "≤ paper" if v["bound"] == "upper" else "≥ paper"
        match, note = check(ours, v["paper"], v), v.get("note", "")
        changed = setup_differences(v, doc, params_file) if match != "missing input" else []
        if changed:
            match = "different setup"
            note = f"run with {'; '.join(changed)}" + (f". {note}" if note else "")
        elif fitted and match in ("yes", "no") and str(v["id"]).startswith(fitted):
            within = "within tolerance" if match == "yes" else "outside tolerance"
            match = "fitted"
            note = f"fitted ({within}): an unstated choice was fitted on this number" + (
                f". {note}" if note else ""
            )
        rows.append(
            {
                "id": v["id"],
                "quantity": v["quantity"],
                "source": v["source"],
                "paper": v["paper"],
                "ours": ours,
                "tolerance": tol_text,
                "match": match,
                "note": note,
            }
        )
    return pd.DataFrame(rows)


def paper_vs_ours(
    paper: str,
    prefixes: Sequence[str],
    root: str | Path | None = None,
    *,
    gains: bool = False,
    timings: bool = False,
    reference_root: Path | None = None,
) -> pd.DataFrame:
    """The rows of :func:`compare` a notebook shows: ids starting with one of ``prefixes``.

    Every paper's notebooks show their numbers next to the paper's through this one function.

    Parameters
    ----------
    paper
        ``nona``, ``pcs`` or ``polaris`` (the file ``reference/<paper>.yaml``).
    prefixes
        Id prefixes (``"fig7."``); each must select at least one row, so a typo is an error.
    root
        The notebook's output root, where ``results/<paper>/`` is read (default: the repository).
    gains
        The numbers are factors (Nona's speed-ups): add ``same side of 1``, whether ours and the
        paper's both say Nona is faster (``missing`` where ours is).
    timings
        The entries measured from ``results/<paper>/timings/`` (wall-clock times) instead.
    reference_root
        Where the reference files are (default: the repository's ``reference/``).

    Returns
    -------
    DataFrame
        ``id, quantity, paper, ours, diff`` (ours - paper), ``rel_diff_pct`` (100 diff /
        paper), ``ours / paper``, [``same side of 1``], ``tolerance, match, note``; ``ours`` and
        the comparisons are numbers (NaN where ours is missing or not a number; the relative
        ones NaN where the paper's value is 0).

    Raises
    ------
    ValueError
        No prefix given, or a prefix that selects no row (naming it).

    Examples
    --------
    >>> t = paper_vs_ours("nona", ["table2.resnet18.post_tasks"], root=Path("/nonexistent"))
    >>> r = t.iloc[0]
    >>> r["id"], int(r["paper"]), r["match"]
    ('table2.resnet18.post_tasks', 10, 'missing input')
    """
    if isinstance(prefixes, str) or not prefixes:
        raise ValueError(f"paper_vs_ours: prefixes must be a non-empty list of id prefixes, got {prefixes!r}")
    table = compare(
        paper, root=Path(root) if root is not None else None, reference_root=reference_root, timings=timings
    )
    ids = table["id"].astype(str) if len(table) else pd.Series([], dtype=str)
    unmatched = [p for p in prefixes if not ids.str.startswith(p).any()]
    if unmatched:
        raise ValueError(
            f"paper_vs_ours: no {'timing ' if timings else ''}entry of reference/{paper}.yaml "
            f"starts with {unmatched}"
        )
    table = table[ids.str.startswith(tuple(prefixes))].copy()
    ours = pd.to_numeric(table["ours"], errors="coerce")
    theirs = pd.to_numeric(table["paper"], errors="coerce")
    table["ours"] = ours
    table["diff"] = ours - theirs
    table["ours / paper"] = ours / theirs.where(theirs != 0)
    table["rel_diff_pct"] = 100.0 * (table["ours / paper"] - 1.0)
    columns = [
        "id",
        "quantity",
        "paper",
        "ours",
        "diff",
        "rel_diff_pct",
        "ours / paper",
        "tolerance",
        "match",
        "note",
    ]
    if gains:
        table["same side of 1"] = np.where(
            ours.isna(), "missing", np.where((ours > 1) == (theirs > 1), "yes", "no")
        )
        columns.insert(7, "same side of 1")
    return table[columns].reset_index(drop=True)


def to_markdown(table: pd.DataFrame, title: str) -> str:
    cols = ["quantity", "source", "paper", "ours", "tolerance", "match", "note"]
    lines = [f"# {title}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in table.iterrows():
        cells = [
            "" if _is_missing(r[c]) else (f"{r[c]:g}" if isinstance(r[c], float) else str(r[c])) for c in cols
        ]
        lines.append("| " + " | ".join(cells) + " |")
    counts = table["match"].value_counts().to_dict()
    lines += ["", "Summary: " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))]
    return "\n".join(lines) + "\n"


def shown_verdicts(matches: Any) -> tuple[str, ...]:
    """The verdicts a report lists: every regular one, and an occasional one where it occurs."""
    present = set(matches)
    return tuple(v for v in VERDICTS if v not in OCCASIONAL or v in present)


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many rows of a :func:`compare` table got each verdict (zeros too, but for the
    occasional verdicts, listed only where they occur)."""
    return {k: int((table["match"] == k).sum()) for k in shown_verdicts(table.get("match", []))}


def numeric_metrics(table: pd.DataFrame) -> dict[str, int]:
    """The DVC metric of a comparison: counts per verdict, keys without spaces, and the total.

    >>> numeric_metrics(pd.DataFrame({"match": ["yes", "yes", "no"]}))["yes"]
    2
    """
    counts = {k.replace(" ", "_"): n for k, n in verdict_counts(table).items()}
    return {**counts, "compared": int(len(table))}


def _metrics(paper: str, table: pd.DataFrame) -> dict:
    return {
        "paper": paper,
        "summary": verdict_counts(table),
        "values": {
            r["id"]: {
                "paper": r["paper"],
                "ours": None if _is_missing(r["ours"]) else r["ours"],
                "tolerance": r["tolerance"],
                "match": r["match"],
                "source": r["source"],
            }
            for _, r in table.iterrows()
        },
    }


def write_comparison(paper: str, out_dir: Path, root: Path | None = None) -> pd.DataFrame:
    """Write ``comparison.json`` (every row; read by :mod:`schedlab.scorecard`), ``metrics.json``
    (the DVC metric: counts per verdict, see :func:`numeric_metrics`) and ``comparison.md``
    under ``out_dir``, and the times compared with the paper's to
    ``out_dir/timings/comparison.{json,md}`` (no DVC output: they change from run to run).
    Returns the first table."""
    table = compare(paper, root)
    atomic_write_json(out_dir / "comparison.json", _metrics(paper, table))
    atomic_write_json(out_dir / "metrics.json", numeric_metrics(table))
    atomic_write_text(out_dir / "comparison.md", to_markdown(table, f"{paper}: paper vs schedlab"))
    times = compare(paper, root, timings=True)
    if len(times):
        atomic_write_json(out_dir / paths.TIMINGS / "comparison.json", _metrics(paper, times))
        atomic_write_text(
            out_dir / paths.TIMINGS / "comparison.md",
            to_markdown(times, f"{paper}: times, paper vs schedlab (this run, this machine)"),
        )
    return table
