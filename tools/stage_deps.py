"""Keep dvc.yaml's library dependencies equal to what each stage imports.

    python tools/stage_deps.py           # list, per stage, what its deps lack or list in excess
    python tools/stage_deps.py --write   # rewrite the lib/schedlab/... lines of every stage's deps

Only the ``- lib/schedlab/...`` and ``- reference/...`` lines inside a stage's ``deps:`` are touched (comments, data
and other dependencies stay as written); the new lines are the stage's library files as
:func:`schedlab.imports.stage_library_files` derives them, plus package data files (``*.yaml``)
beside them. ``tests/test_stage_deps.py`` fails when dvc.yaml misses one.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

from schedlab import imports, paths
from schedlab.io import atomic_write_text

DVC = paths.ROOT / "dvc.yaml"


def derived_deps(cmd: str) -> list[str]:
    """Repository-relative library files a stage command runs, with package data beside them."""
    files = imports.stage_library_files(cmd)
    packages = {p.parent for p in files if imports.LIB in p.parents}
    data = {f for d in packages for f in d.glob("*.yaml")}
    return sorted(p.relative_to(paths.ROOT).as_posix() for p in files | data)


def rewrite(text: str, stages: dict) -> str:
    """``text`` (dvc.yaml) with each stage's ``- lib/schedlab/...`` deps lines replaced."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    stage = None
    in_deps = False
    inserted = False
    for line in lines:
        m = re.match(r"^  ([A-Za-z0-9_]+):\s*$", line)
        if m:
            stage, in_deps, inserted = m.group(1), False, False
        elif re.match(r"^    deps:\s*$", line):
            in_deps = True
        elif re.match(r"^    \S", line):
            in_deps = False
        if in_deps and stage in stages and re.match(r"^      - (lib/schedlab/|reference/)", line):
            if not inserted:
                indent = line[: len(line) - len(line.lstrip())]
                out.extend(f"{indent}- {d}\n" for d in derived_deps(stages[stage]["cmd"]))
                inserted = True
            continue
        out.append(line)
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite dvc.yaml in place")
    args = ap.parse_args(argv)
    text = DVC.read_text()
    stages = yaml.safe_load(text)["stages"]
    if args.write:
        new = rewrite(text, stages)
        if new != text:
            atomic_write_text(DVC, new)
            print(f"rewrote {DVC.relative_to(paths.ROOT)}")
        return 0
    bad = 0
    for name, st in stages.items():
        deps = [d if isinstance(d, str) else next(iter(d)) for d in st.get("deps", [])]
        missing = imports.uncovered(imports.stage_library_files(st["cmd"]), deps)
        if missing:
            bad += 1
            print(f"{name}: missing {', '.join(missing)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
