"""A stage's parameters: its ``params.yaml`` section, the paper's shared values, a profile, overrides.

``params.yaml`` is the only place a stage's values are written. Section ``<paper>.<name>`` holds
the notebook ``<paper>/<name>``'s values under the ``default`` profile; its optional ``profiles``
mapping holds, for ``teaching``, ``paper`` and ``smoke``, only what differs. ``smoke`` is for tests
only (seconds per notebook, every cell and output file, numbers meaningless): a pipeline run
(``params.yaml``'s top-level ``profile``, ``schedlab reproduce``) takes one of
:data:`PIPELINE_PROFILES`. Values several stages of a paper share live once, in ``<paper>.common``;
a section names those it takes in its ``shared`` list (``dvc.yaml`` lists each as a parameter of that
stage: ``tools/stage_deps.py --write``). Overrides (``schedlab notebook run NAME -p KEY VALUE``, or a notebook's ``overrides`` cell) replace
values for one run; an unknown key is an error naming the closest known one.

Examples
--------
>>> import tempfile
>>> f = Path(tempfile.mkdtemp()) / "params.yaml"
>>> _ = f.write_text(yaml.safe_dump({"x": {"common": {"n": 1}, "a": {"shared": ["n"], "m": 2}}}))
>>> p = stage_params("x/a", overrides={"m": 3}, params_file=f)
>>> p.values
{'m': 3, 'n': 1, 'profile': 'default'}
>>> p.sources["n"], p.sources["m"]
('x.common', 'override')
>>> stage_params("x/a", overrides={"nn": 3}, params_file=f)
Traceback (most recent call last):
...
schedlab.notebooks.params.ParamsError: x.a has no parameter 'nn' (did you mean 'n'?); its parameters: m, n
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from schedlab import paths

#: the profiles a whole pipeline run may use: ``params.yaml``'s top-level ``profile``, ``schedlab reproduce``
PIPELINE_PROFILES = ("default", "teaching", "paper")
#: the profiles one notebook runs under: the pipeline's and ``smoke``, the tests' tiny sizes that still
#: run every cell and write every output (tests/test_smoke_notebooks.py); its numbers mean nothing, so
#: no pipeline runs it and its outputs never go to the repository (:func:`schedlab.notebooks.run`)
SMOKE = "smoke"
PROFILES = (*PIPELINE_PROFILES, SMOKE)
#: a paper's section of values several of its stages share
COMMON = "common"
#: the key of a section that names the common values it takes
SHARED = "shared"


class ParamsError(ValueError):
    """A malformed ``params.yaml`` or override: names the file, the section and what was expected."""


def stage_key(name: str) -> str:
    """``nona/fig3`` -> ``nona.fig3``: a notebook's section of ``params.yaml``."""
    return name.strip("/").replace("/", ".")


def _read_params(params_file: Path | None) -> tuple[Path, dict]:
    path = params_file or paths.PARAMS
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as exc:
        raise ParamsError(f"{path}: byte {exc.start}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise ParamsError(f"{path}: {where}not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(doc, dict):
        raise ParamsError(f"{path}: expected a mapping of papers to sections")
    return path, doc


def selected_profile(params_file: Path | None = None) -> str:
    """The top-level ``profile`` of ``params.yaml`` (``default`` if absent)."""
    path, doc = _read_params(params_file)
    return _check_profile(doc.get("profile", "default"), f"{path}: profile", PIPELINE_PROFILES)


def _check_profile(profile: Any, where: str, allowed: tuple[str, ...] = PROFILES) -> str:
    if profile not in allowed:
        raise ParamsError(f"{where}: unknown profile {profile!r}; expected one of {', '.join(allowed)}")
    return profile


def _merge(base: dict, over: dict) -> dict:
    """``base`` with ``over`` laid on top; mappings merge key by key (a profile may change one
    field of a nested mapping, e.g. ``train.iterations``)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _section(doc: dict, key: str) -> dict | None:
    node: Any = doc
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _profiled(node: Any, where: str, profile: str, allowed: Iterable[str] = ()) -> dict:
    """A section's values under ``profile``: its defaults with ``profiles.<profile>`` laid on top."""
    if not isinstance(node, dict):
        raise ParamsError(f"{where} must be a mapping")
    section = dict(node)
    overrides = section.pop("profiles", None) or {}
    if not isinstance(overrides, dict):
        raise ParamsError(f"{where}: 'profiles' must map profile names to the values that differ")
    known = set(section) | set(allowed)
    for key, over in overrides.items():
        _check_profile(key, f"{where}: profiles")
        if not isinstance(over, dict):
            raise ParamsError(f"{where}: profiles.{key} must be a mapping of parameter names to values")
        unknown = sorted(set(over) - known)
        if unknown:
            raise ParamsError(
                f"{where}: profiles.{key} sets {', '.join(unknown)}, which the section "
                "does not define (give its default profile value in the section)"
            )
    if "profile" in section:
        raise ParamsError(f"{where}: 'profile' is chosen once, at the top of params.yaml")
    return _merge(section, overrides.get(profile, {}))


def shared_keys(name: str, params_file: Path | None = None) -> list[str]:
    """The ``<paper>.common`` values notebook ``name``'s section takes (its ``shared`` list)."""
    path, doc = _read_params(params_file)
    node = _section(doc, stage_key(name))
    shared = node.get(SHARED, []) if isinstance(node, dict) else []
    if not isinstance(shared, list) or not all(isinstance(k, str) for k in shared):
        raise ParamsError(
            f"{path}: section {stage_key(name)!r}: '{SHARED}' must be a list of names "
            f"of {name.split('/')[0]}.{COMMON}"
        )
    return list(shared)


def _resolve(name: str, params_file: Path | None, profile: str | None) -> tuple[dict, dict]:
    """(values, where each came from) of notebook ``name`` under ``profile``."""
    path, doc = _read_params(params_file)
    # the file's own choice is a pipeline run's; a caller may ask for any profile (smoke: tests)
    profile = (
        _check_profile(profile, f"{path}: profile")
        if profile
        else _check_profile(doc.get("profile", "default"), f"{path}: profile", PIPELINE_PROFILES)
    )
    key = stage_key(name)
    node = _section(doc, key)
    if node is None:
        return {"profile": profile}, {"profile": "profile"}
    shared = shared_keys(name, params_file)
    own = {k: v for k, v in node.items() if k != SHARED} if isinstance(node, dict) else node
    section = _profiled(own, f"{path}: section {key!r}", profile, allowed=shared)
    sources = {k: key for k in section}
    if shared:
        paper = key.split(".")[0]
        common_where = f"{path}: section '{paper}.{COMMON}'"
        common = _profiled(_section(doc, f"{paper}.{COMMON}") or {}, common_where, profile)
        for k in shared:
            if k in own:
                raise ParamsError(
                    f"{path}: section {key!r} sets {k!r} and also takes it from {paper}.{COMMON} "
                    f"(its '{SHARED}' list): keep one"
                )
            if k not in common:
                raise ParamsError(
                    f"{path}: section {key!r} takes {k!r} from {paper}.{COMMON}, which does not "
                    f"define it{_closest(k, common)}"
                )
            if k not in section:  # a stage's own profile may still change a shared value
                section[k], sources[k] = common[k], f"{paper}.{COMMON}"
    if profile != "default":
        default = _resolve(name, params_file, "default")[0]
        sources.update({k: f"profile {profile}" for k, v in section.items() if default.get(k) != v})
    return {**section, "profile": profile}, {**sources, "profile": "profile"}


def load_params(name: str, params_file: Path | None = None, profile: str | None = None) -> dict[str, Any]:
    """The parameters of notebook ``name`` under a profile (only ``profile`` if it has no section).

    ``profile`` (default: the file's top-level ``profile``) picks one; the result is flat,
    without ``profiles`` or ``shared``, with the shared values merged in and ``profile`` set to the
    name used.

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "params.yaml"
    >>> _ = f.write_text(yaml.safe_dump({"profile": "default", "x": {"a": {"n": 1, "m": 2},
    ...                                  "profiles": {"paper": {"a": {"n": 9}}}}}))
    >>> load_params("x", f)
    {'a': {'m': 2, 'n': 1}, 'profile': 'default'}
    >>> load_params("x", f, profile="paper")
    {'a': {'m': 2, 'n': 9}, 'profile': 'paper'}
    """
    return _resolve(name, params_file, profile)[0]


def _closest(key: str, known: Iterable[str]) -> str:
    match = difflib.get_close_matches(key, list(known), n=1, cutoff=0.5)
    return f" (did you mean {match[0]!r}?)" if match else ""


def apply_overrides(name: str, values: dict[str, Any], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """``values`` with ``overrides`` laid on top; a dotted key (``train.iterations``) changes one
    field of a mapping. A key the stage does not have is a :class:`ParamsError` naming the closest."""
    out = dict(values)
    for dotted, value in (overrides or {}).items():
        parts = str(dotted).split(".")
        node = out
        for depth, part in enumerate(parts):
            known = [k for k in node if k != "profile"] if depth == 0 else list(node)
            if part not in node or (depth == 0 and part == "profile"):
                where = stage_key(name) + "".join(f".{p}" for p in parts[:depth])
                hint = " (choose the profile with --profile)" if part == "profile" else _closest(part, known)
                raise ParamsError(
                    f"{where} has no parameter {part!r}{hint}; its parameters: {', '.join(sorted(known))}"
                )
            if depth < len(parts) - 1:
                if not isinstance(node[part], dict):
                    raise ParamsError(
                        f"{stage_key(name)}.{'.'.join(parts[: depth + 1])} is not a mapping: "
                        f"cannot set {dotted!r}"
                    )
                node[part] = dict(node[part])
                node = node[part]
        node[parts[-1]] = value
    return out


def parse_overrides(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """``-p KEY VALUE`` pairs from the command line: each VALUE read as YAML (``30``, ``[0.1, 0.5]``,
    ``null``, ``{a: 1}``; anything else stays a string).

    >>> parse_overrides([("duration", "30"), ("loads", "[0.1, 0.5]"), ("trace", "0e4a51")])
    {'duration': 30, 'loads': [0.1, 0.5], 'trace': '0e4a51'}
    """
    out = {}
    for key, text in pairs:
        try:
            out[key] = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ParamsError(f"-p {key} {text!r}: not a YAML value ({exc.problem})") from None
    return out


@dataclass(frozen=True)
class StageParams:
    """A stage notebook's values, with where each came from; a notebook shows it as a table.

    ``values`` is what the notebook computes with (every key becomes one of its variables);
    ``sources`` names, per key, the ``params.yaml`` section, ``<paper>.common``, the profile or
    ``override`` that set it.
    """

    name: str
    values: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)

    def rows(self) -> list[tuple[str, str, str]]:
        return [(k, repr(v), self.sources.get(k, "")) for k, v in self.values.items()]

    def _repr_markdown_(self) -> str:
        head = [
            f"Parameters of `{self.name}` (params.yaml, section `{stage_key(self.name)}`):",
            "",
            "| parameter | value | from |",
            "|---|---|---|",
        ]
        cells = [(k, v.replace("|", "\\|"), s) for k, v, s in self.rows()]
        return "\n".join(head + [f"| `{k}` | `{v}` | {s} |" for k, v, s in cells])

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td><code>{html.escape(k)}</code></td><td><code>{html.escape(v)}</code></td>"
            f"<td>{html.escape(s)}</td></tr>"
            for k, v, s in self.rows()
        )
        return (
            f"<p>Parameters of <code>{html.escape(self.name)}</code> (params.yaml, section "
            f"<code>{stage_key(self.name)}</code>)</p><table><thead><tr><th>parameter</th><th>value</th>"
            f"<th>from</th></tr></thead><tbody>{body}</tbody></table>"
        )

    def __str__(self) -> str:
        width = max((len(k) for k in self.values), default=0)
        return "\n".join(f"{k:<{width}}  {v}  ({s})" for k, v, s in self.rows())


def stage_params(
    name: str,
    profile: str | None = "default",
    overrides: Mapping[str, Any] | None = None,
    params_file: Path | None = None,
) -> StageParams:
    """Notebook ``name``'s values under ``profile`` with ``overrides`` applied (see the module doc)."""
    values, sources = _resolve(name, params_file, profile)
    values = apply_overrides(name, values, overrides)
    sources.update({str(k).split(".")[0]: "override" for k in (overrides or {})})
    return StageParams(name, values, sources)


def dvc_param_paths(name: str, params_file: Path | None = None) -> list[str]:
    """The ``params.yaml`` keys notebook ``name``'s values come from, as ``dvc.yaml`` lists them:
    its section, then each shared ``<paper>.common`` value and any profile's change of it. A stage
    that lists them re-runs exactly when one of its values may have changed.

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "params.yaml"
    >>> _ = f.write_text(yaml.safe_dump({"x": {"common": {"n": 1, "k": 0, "profiles": {"paper": {"n": 2}}},
    ...                                        "a": {"shared": ["n"], "m": 2}}}))
    >>> dvc_param_paths("x/a", f)
    ['x.a', 'x.common.n', 'x.common.profiles.paper.n']
    """
    _, doc = _read_params(params_file)
    key = stage_key(name)
    if _section(doc, key) is None:
        return []
    out = [key]
    for k in shared_keys(name, params_file):
        out += value_param_paths(name, k, params_file)
    return out


def value_param_paths(name: str, key: str, params_file: Path | None = None) -> list[str]:
    """The ``params.yaml`` keys that decide value ``key`` of notebook ``name``: its section's, or,
    for a shared value, ``<paper>.common``'s with any pipeline profile's change of it (``smoke``'s is
    left out: no pipeline runs it, so a smoke size never makes a stage re-run).

    >>> value_param_paths("pcs/fig7", "gpus")
    ['pcs.common.gpus']
    >>> value_param_paths("pcs/fig1", "gpus")
    ['pcs.fig1.gpus']
    """
    _, doc = _read_params(params_file)
    section = stage_key(name)
    paper = section.split(".")[0]
    if key not in shared_keys(name, params_file):
        own = _section(doc, section) or {}
        return [f"{section}.{key}"] + [
            f"{section}.profiles.{p}.{key}"
            for p, over in (own.get("profiles") or {}).items()
            if p in PIPELINE_PROFILES and isinstance(over, dict) and key in over
        ]
    common = _section(doc, f"{paper}.{COMMON}") or {}
    return [f"{paper}.{COMMON}.{key}"] + [
        f"{paper}.{COMMON}.profiles.{p}.{key}"
        for p, over in (common.get("profiles") or {}).items()
        if p in PIPELINE_PROFILES and key in over
    ]


def _names_used(name: str) -> set[str]:
    """Identifiers notebook ``name``'s code reads, plus the fields :class:`FigureSweep` takes by name
    when the notebook builds one ``from_params``."""
    import ast

    source = (paths.NOTEBOOKS / f"{name}.py").read_text()
    used = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    if "FigureSweep.from_params" in source:
        used |= _dataclass_fields(paths.ROOT / "lib/schedlab/nona/experiments.py", "FigureSweep")
    return used


def _dataclass_fields(module: Path, cls: str) -> set[str]:
    """The annotated fields of class ``cls`` in ``module``, read from its source: importing Nona's
    experiments here would make every stage depend on Nona's code."""
    import ast

    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {
                n.target.id
                for n in node.body
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            }
    raise ParamsError(f"{module}: no class {cls}")


def check_used(name: str, values: Mapping[str, Any]) -> None:
    """Refuse a parameter notebook ``name`` never reads: a typo in ``params.yaml`` (``schedul:``)
    would otherwise be ignored while the notebook fails, or runs, on something else."""
    used = _names_used(name)
    unused = [k for k in values if k != "profile" and k not in used]
    if unused:
        raise ParamsError(
            f"{paths.PARAMS.name}: section {stage_key(name)!r}: notebooks/{name}.py reads no "
            + ", ".join(f"{k!r}{_closest(k, used)}" for k in unused)
        )
