"""How long ``make reproduce`` took per profile, and README's profile table generated from it.

    python tools/profile_table.py start --profile default   # make reproduce: before the run
    python tools/profile_table.py end --profile default     # make reproduce: after it succeeded
    python tools/profile_table.py readme                    # README's table from the measured runs
    python tools/profile_table.py readme --check            # exit 1 if README's table is stale

``start`` and ``end`` write ``results/timings/reproduce_<profile>.json`` (atomically; under
``timings/`` like every time, so no pipeline output and not in git): when the run began and
ended, the machine's cores and 1-minute load average at both ends and at both ends of every
stage it ran (the stage records of :mod:`schedlab.stagetimes`), the commit, and whether every
notebook stage of ``dvc.yaml`` ran in it (``complete``) or ``dvc repro`` skipped some
(``partial``: the time of a partial run says nothing about the profile's).

``readme`` keeps the last complete measurement of each profile in :data:`KNOWN`, a committed
file (a fresh clone has no ``results/``), and writes README's table between
:data:`START_MARKER` and :data:`END_MARKER` from it. A profile never measured as a whole says
"not measured", with what was measured of its parts as that file records it: no time is
estimated. ``tests/test_profile_table.py`` fails when README's table and the file disagree.

Examples
--------
>>> measured_cell({"wall_min": 35, "load": [1, 5], "cores": 2, "date": "2026-11-27", "commit": "1ca59e5"})
'**35 min** at load 1-5, 2 cores (2026-11-27, 1ca59e5)'
>>> measured_cell(None, parts="Fig. 3 12 s")
'not measured as a whole; parts: Fig. 3 12 s'
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from schedlab import paths, provenance, stagetimes
from schedlab.io import atomic_write_text
from schedlab.notebooks.params import PIPELINE_PROFILES

#: the last complete measurement of each profile (committed), README's table is made from it
KNOWN = paths.ROOT / "benchmarks" / "results" / "reproduce_profiles.yaml"
README = paths.ROOT / "README.md"
START_MARKER = "<!-- profiles:start -->"
END_MARKER = "<!-- profiles:end -->"
#: the columns of README's table
HEADER = ["profile", "size", "measured time (load)", "command"]
_NOTEBOOK_CMD = re.compile(r"^schedlab notebook run (\S+)$")
_STAMP = "%Y-%m-%dT%H:%M:%SZ"


class ProfileTableError(ValueError):
    """A record, the known-times file or README's markers are not as expected."""


# ---------------------------------------------------------------- records of make reproduce


def record_file(profile: str, root: Path | None = None) -> Path:
    """``<root>/results/timings/reproduce_<profile>.json`` (root: this checkout)."""
    return Path(root or paths.ROOT) / "results" / paths.TIMINGS / f"reproduce_{profile}.json"


def stages_root(profile: str, root: Path | None = None) -> Path:
    """Where the profile's stages run and record their times: the checkout for ``default``, else
    ``runs/<profile>/`` (:mod:`schedlab.profileruns`)."""
    root = Path(root or paths.ROOT)
    return root if profile == "default" else root / "runs" / profile


def _check_profile(profile: str) -> None:
    if profile not in PIPELINE_PROFILES:
        raise ProfileTableError(
            f"--profile {profile!r}: expected one of {', '.join(PIPELINE_PROFILES)} "
            "(the profiles `make reproduce` runs)"
        )


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)


def start(profile: str, root: Path | None = None, *, now: _dt.datetime | None = None) -> Path:
    """Record that ``make reproduce`` of ``profile`` begins now (replacing an earlier record)."""
    _check_profile(profile)
    entry = {
        "profile": profile,
        "status": "running",
        "started_utc": (now or _now()).strftime(_STAMP),
        "load_start": stagetimes.load_average(),
        "cores": os.cpu_count(),
        "host": platform.node(),
        **provenance.git_state(Path(root or paths.ROOT)),
    }
    path = record_file(profile, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(entry, indent=1) + "\n")
    return path


def notebook_stages(stages_at: Path) -> list[str]:
    """The notebooks ``dvc repro`` runs at ``stages_at`` (its dvc.yaml; frozen stages left out)."""
    dvc = stages_at / "dvc.yaml"
    if not dvc.is_file():
        raise ProfileTableError(f"{dvc}: missing; expected the pipeline's dvc.yaml where the stages ran")
    names = []
    for stage in (yaml.safe_load(dvc.read_text()) or {}).get("stages", {}).values():
        match = _NOTEBOOK_CMD.match(str(stage.get("cmd", "")).strip())
        if match and not stage.get("frozen"):
            names.append(match.group(1))
    return sorted(names)


def _stages_in(stages_at: Path, began: str, ended: str) -> list[dict[str, Any]]:
    """The stage records (:func:`schedlab.stagetimes.table`) that began within [began, ended]."""
    try:
        t = stagetimes.table(stages_at)
    except ValueError as exc:  # a stage record that is not one: say which file, no traceback
        raise ProfileTableError(str(exc)) from None
    return [r for r in t.to_dict("records") if began <= str(r["started_utc"]) <= ended]


def end(profile: str, root: Path | None = None, *, now: _dt.datetime | None = None) -> dict[str, Any]:
    """Complete the record :func:`start` wrote: end time, wall time, load range, stages run."""
    _check_profile(profile)
    path = record_file(profile, root)
    try:
        entry = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ProfileTableError(f"{path}: no start record ({exc}); expected `start` to run first") from None
    ended = (now or _now()).strftime(_STAMP)
    began = entry["started_utc"]
    at = stages_root(profile, root)
    ran = _stages_in(at, began, ended)
    expected = notebook_stages(at)
    ran_names = {r["stage"] for r in ran}
    loads = [entry["load_start"], stagetimes.load_average()]
    loads += [float(r[k]) for r in ran for k in ("load_start", "load_end")]
    entry.update(
        status="complete" if set(expected) <= ran_names else "partial",
        ended_utc=ended,
        wall_s=(_parse(ended) - _parse(began)).total_seconds(),
        load_end=loads[1],
        load_range=[min(loads), max(loads)],
        stages_run=len(ran_names & set(expected)),
        stages_total=len(expected),
    )
    atomic_write_text(path, json.dumps(entry, indent=1) + "\n")
    return entry


def _parse(stamp: str) -> _dt.datetime:
    return _dt.datetime.strptime(stamp, _STAMP).replace(tzinfo=_dt.timezone.utc)


def measured_from_record(entry: dict[str, Any]) -> dict[str, Any]:
    """A complete record as a :data:`KNOWN` entry's ``measured`` value."""
    commit = entry.get("commit")
    label = commit[:7] if commit else "no git checkout"
    if commit and entry.get("uncommitted"):
        label += f" + {entry['uncommitted']} uncommitted file(s)"
    lo, hi = entry["load_range"]
    return {
        "wall_min": round(entry["wall_s"] / 60, 1),
        "load": [round(lo, 1), round(hi, 1)],
        "cores": entry.get("cores"),
        "date": entry["ended_utc"][:10],
        "ended_utc": entry["ended_utc"],
        "commit": label,
        "source": f"all {entry['stages_total']} notebook stages ran; from `schedlab fetch` to the last "
        "stage, install not included",
    }


# ---------------------------------------------------------------- the known times and README


def load_known(path: Path = KNOWN) -> list[dict[str, Any]]:
    """The profiles of :data:`KNOWN`, in README's order, each with ``profile``, ``size``,
    ``command`` and ``measured`` (``None``: never measured as a whole)."""
    try:
        rows = yaml.safe_load(Path(path).read_text())["profiles"]
    except (OSError, yaml.YAMLError, TypeError, KeyError) as exc:
        raise ProfileTableError(f"{path}: expected a YAML mapping with a `profiles:` list ({exc})") from None
    for i, row in enumerate(rows):
        missing = [k for k in ("profile", "size", "command", "measured") if k not in row]
        if missing:
            raise ProfileTableError(f"{path}: profiles[{i}] lacks field(s) {', '.join(missing)}")
    return rows


Row = dict[str, Any]


def merge_records(rows: list[Row], root: Path | None = None) -> tuple[list[Row], list[str]]:
    """``rows`` with each profile's ``measured`` replaced by a newer complete record of
    ``make reproduce``; also the profiles replaced. Partial and unfinished runs are left out."""
    out, replaced = [], []
    for row in rows:
        row = dict(row)
        path = record_file(row["profile"], root)
        entry = json.loads(path.read_text()) if path.is_file() else {}
        known_end = str((row["measured"] or {}).get("ended_utc") or (row["measured"] or {}).get("date") or "")
        if entry.get("status") == "complete" and entry["ended_utc"] > known_end:
            row["measured"] = measured_from_record(entry)
            replaced.append(row["profile"])
        out.append(row)
    return out, replaced


def _number(x: float) -> str:
    return f"{round(float(x), 1):g}"


def measured_cell(measured: dict[str, Any] | None, parts: str | None = None) -> str:
    """The table's time cell: the time, the load range, cores, date and commit; or "not measured"."""
    if not measured:
        return "not measured as a whole" + (f"; parts: {parts}" if parts else "")
    load = measured.get("load")
    load_text = f" at load {_number(load[0])}-{_number(load[1])}" if load else ", load not recorded"
    cores = f", {measured['cores']} cores" if measured.get("cores") else ""
    text = f"**{_number(measured['wall_min'])} min**{load_text}{cores} ({measured['date']}, {measured['commit']})"
    return text + (f": {measured['source']}" if measured.get("source") else "")


def readme_block(rows: list[dict[str, Any]]) -> str:
    """README's table: one line per profile (size, measured time and load, command)."""
    lines = [
        f"<!-- generated by `python tools/profile_table.py readme` from {KNOWN.relative_to(paths.ROOT)} "
        "and results/timings/reproduce_*.json: edits here are overwritten -->",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    for r in rows:
        cells = [f"`{r['profile']}`", r["size"], measured_cell(r["measured"], r.get("parts")), r["command"]]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines)


def replace_block(text: str, block: str, name: str) -> str:
    """``text`` with what lies between the markers replaced by ``block`` (the markers stay).

    >>> replace_block(f"a\\n{START_MARKER}\\nold\\n{END_MARKER}\\nb", "new", "README.md").split("\\n")[1:4]
    ['<!-- profiles:start -->', 'new', '<!-- profiles:end -->']
    """
    starts, ends = text.count(START_MARKER), text.count(END_MARKER)
    if starts != 1 or ends != 1 or text.index(END_MARKER) < text.index(START_MARKER):
        raise ProfileTableError(
            f"{name}: expected one {START_MARKER} followed by one {END_MARKER}, found {starts} and {ends}"
        )
    head, rest = text.split(START_MARKER)
    tail = rest.split(END_MARKER)[1]
    return f"{head}{START_MARKER}\n{block.strip()}\n{END_MARKER}{tail}"


def current_block(text: str) -> str:
    """What README holds between the markers."""
    replace_block(text, "", "README")  # the same marker checks
    return text.split(START_MARKER)[1].split(END_MARKER)[0].strip()


def dump_known(rows: list[dict[str, Any]]) -> str:
    header = (
        "# The last complete `make reproduce` of each profile, measured on this project's machine.\n"
        "# README's profile table is generated from this file: python tools/profile_table.py readme\n"
        "# (which also takes newer complete runs from results/timings/reproduce_<profile>.json).\n"
        "# measured: null = never measured as a whole; `parts` then says what was measured of it.\n"
    )
    return header + yaml.safe_dump({"profiles": rows}, sort_keys=False, allow_unicode=True, width=100)


def update(readme: Path = README, known: Path = KNOWN, root: Path | None = None, *, check=False) -> bool:
    """Bring ``known`` and README's table up to date; ``True`` if either changed (or, with
    ``check``, would change: nothing is written then)."""
    rows, replaced = merge_records(load_known(known), root)
    text = readme.read_text(encoding="utf-8")
    new = replace_block(text, readme_block(rows), str(readme))
    stale = bool(replaced) or new != text
    if not check:
        if replaced:
            atomic_write_text(known, dump_known(rows))
        if new != text:
            atomic_write_text(readme, new)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["start", "end", "readme"])
    parser.add_argument("--profile", default="default", help="start/end: the profile make reproduce runs")
    parser.add_argument("--check", action="store_true", help="readme: exit 1 if out of date, write nothing")
    args = parser.parse_args(argv)
    try:
        if args.action == "start":
            start(args.profile)
        elif args.action == "end":
            e = end(args.profile)
            print(
                f"make reproduce ({args.profile}): {e['wall_s'] / 60:.1f} min, load "
                f"{_number(e['load_range'][0])}-{_number(e['load_range'][1])}, {e['stages_run']} of "
                f"{e['stages_total']} notebook stages ran ({e['status']}); README's profile table: "
                "python tools/profile_table.py readme"
            )
        else:
            stale = update(check=args.check)
            if args.check and stale:
                print("README's profile table is out of date: python tools/profile_table.py readme")
                return 1
    except ProfileTableError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
