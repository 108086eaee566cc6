"""Keep dvc.yaml's library dependencies and parameters equal to what each stage imports and reads.

    python tools/stage_deps.py           # list, per stage, what its deps or params lack or list in excess
    python tools/stage_deps.py --write   # rewrite the lib/schedlab/... deps and the params of every stage

A notebook stage's ``params:`` are derived too: ``profile``, then for its notebook (and any other
notebook whose values it loads with ``load_params("<paper>/<name>", ...)``) the section and the
``<paper>.common`` values it shares (:func:`schedlab.imports.stage_param_list`).

Only the ``- lib/schedlab/...`` and ``- reference/...`` lines inside a stage's ``deps:`` are touched (comments, data
and other dependencies stay as written); the new lines are the stage's library files as
:func:`schedlab.imports.stage_library_files` derives them, plus package data files (``*.yaml``)
beside them. ``tests/test_stage_deps.py`` fails when dvc.yaml misses one.
"""

from __future__ import annotations

import argparse
import re
import sys

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
    """``text`` (dvc.yaml) with each stage's ``- lib/schedlab/...`` deps lines and, for a notebook
    stage, its ``params:`` entries replaced by the derived ones."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    stage = None
    block = None
    inserted = False

    def close_deps() -> None:
        # a new stage's deps list no library file yet: its derived ones go at the end of the list
        if block == "deps" and stage in stages and not inserted:
            at = len(out)
            while at and not out[at - 1].strip():  # before the blank lines that end the block
                at -= 1
            out[at:at] = [f"      - {d}\n" for d in derived_deps(stages[stage]["cmd"])]

    for line in lines:
        m = re.match(r"^  ([A-Za-z0-9_]+):\s*$", line)
        if m:
            close_deps()
            stage, block, inserted = m.group(1), None, False
        elif re.match(r"^    (deps|params):\s*$", line):
            close_deps()
            block, inserted = line.split(":")[0].strip(), False
        elif re.match(r"^    \S", line):
            close_deps()
            block = None
        if block == "deps" and stage in stages and re.match(r"^      - (lib/schedlab/|reference/)", line):
            if not inserted:
                indent = line[: len(line) - len(line.lstrip())]
                out.extend(f"{indent}- {d}\n" for d in derived_deps(stages[stage]["cmd"]))
                inserted = True
            continue
        params = (
            imports.stage_param_list(stages[stage]["cmd"]) if stage in stages and block == "params" else None
        )
        if params is not None and re.match(r"^      - ", line):
            if not inserted:
                out.extend(f"      - {p}{PROFILE_NOTE if p == 'profile' else ''}\n" for p in params)
                inserted = True
            continue
        out.append(line)
    close_deps()
    return "".join(out)


PROFILE_NOTE = "  # the one switch at the top of params.yaml"


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
        params = imports.stage_param_list(st["cmd"])
        if params is not None and params != st.get("params", []):
            bad += 1
            print(f"{name}: params {st.get('params', [])}, derived {params}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
