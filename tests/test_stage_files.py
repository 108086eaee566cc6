"""The files a stage notebook writes are declared outs of its stage, and the files it reads from other
stages are declared deps: read from the notebook's code and its params, so a new per-point file or a
new input that dvc.yaml does not list fails here instead of leaving an output nobody declared.

Paths are read statically: every ``out.results(...)``, ``out.figures(...)`` and ``out.savefig(fig,
...)`` with a literal or f-string argument (an f-string's fields become ``*``), and every string that
starts with ``results/`` or ``figures/`` in the notebook's code or in its parameters' values.
"""

from __future__ import annotations

import ast
import fnmatch

import pytest
import yaml

from schedlab import notebooks, paths

STAGES = {
    name: st
    for name, st in yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())["stages"].items()
    if str(st.get("cmd", "")).startswith("schedlab notebook run ")
}
TIMINGS = "/timings/"  # wall-clock files: never outs, never deps (results/<paper>/timings/)


def _pattern(node: ast.AST) -> str | None:
    """A literal or f-string argument as a glob (``f"load_{x:g}.json"`` -> ``load_*.json``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "*" for v in node.values)
    return None


def written(name: str) -> set[str]:
    paper = name.split("/")[0]
    tree = ast.parse((paths.NOTEBOOKS / f"{name}.py").read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "out"
        ):
            continue
        kind, args = node.func.attr, node.args
        timing = any(k.arg == "timing" and getattr(k.value, "value", False) for k in node.keywords)
        if kind in ("results", "figures") and args and (p := _pattern(args[0])):
            out.add(f"{kind}/{paper}/{p}")
        elif kind == "savefig" and len(args) > 1 and (p := _pattern(args[1])) and not timing:
            out |= {f"figures/{paper}/{p}.png", f"figures/{paper}/{p}.pdf"}
    return {p for p in out if TIMINGS not in p}


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def read(name: str) -> set[str]:
    """Pipeline files (results/, figures/) the notebook names outside its own ``out`` calls."""
    tree = ast.parse((paths.NOTEBOOKS / f"{name}.py").read_text())
    found = {p for n in ast.walk(tree) if (p := _pattern(n))}
    for profile in notebooks.PROFILES:
        found |= set(_strings(notebooks.load_params(name, profile=profile)))
    found = {p.split("{")[0] + "*" + p.split("}")[-1] if "{" in p else p for p in found}
    return {p for p in found if p.startswith(("results/", "figures/")) and TIMINGS not in p}


def _paths(entries) -> list[str]:
    return [e if isinstance(e, str) else next(iter(e)) for e in entries or []]


def covered(pattern: str, declared: list[str]) -> bool:
    """A declared path equals the file, matches the glob, or is a folder holding it."""
    return any(
        fnmatch.fnmatch(d, pattern)
        or pattern == d
        or pattern.startswith(d.rstrip("/") + "/")
        or fnmatch.fnmatch(pattern, d.rstrip("/") + "/*")
        for d in declared
    )


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_file_a_stage_writes_is_declared(stage):
    st = STAGES[stage]
    name = st["cmd"].split()[-1]
    outs = _paths(st.get("outs")) + _paths(st.get("metrics")) + _paths(st.get("plots"))
    missing = sorted(p for p in written(name) if not covered(p, outs))
    assert not missing, f"dvc.yaml stage {stage} writes {missing}, which it does not declare as outs"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_pipeline_file_a_stage_reads_is_a_dep(stage):
    st = STAGES[stage]
    name = st["cmd"].split()[-1]
    own = _paths(st.get("outs")) + _paths(st.get("metrics")) + _paths(st.get("plots"))
    deps = _paths(st.get("deps"))
    missing = sorted(p for p in read(name) if not covered(p, own) and not covered(p, deps))
    assert not missing, (
        f"dvc.yaml stage {stage} reads {missing} from other stages without declaring them as deps"
    )


def test_the_checks_see_a_missing_declaration():
    """The optimiser writes one table per load into its folder out; without the folder, it is undeclared."""
    assert "results/nona/optimiser/load_*.json" in written("nona/optimiser")
    assert covered("results/nona/optimiser/load_*.json", ["results/nona/optimiser"])
    assert not covered("results/nona/optimiser/load_*.json", ["results/nona/optimiser/summary.csv"])
    assert "results/nona/optimiser/load_*.json" in read("nona/fig5")  # nona_tables, a template per load
    assert not covered("results/nona/decima_train/weights.npz", ["results/nona/optimiser"])


def undeclared_writes(stage: str, root) -> list[str]:
    """Files a run of ``stage`` into ``root`` wrote that the stage does not declare (timings, the
    executed notebook and the work folder a stage keeps for itself are not outputs)."""
    st = STAGES[stage]
    outs = _paths(st.get("outs")) + _paths(st.get("metrics")) + _paths(st.get("plots"))
    written_files = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    skip = ("data/executed/", "data/cache/", "data/scratch/")
    return sorted(
        f for f in written_files if not f.startswith(skip) and TIMINGS not in f"/{f}" and not covered(f, outs)
    )
