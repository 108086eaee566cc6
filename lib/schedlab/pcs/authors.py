"""Run the PCS authors' own simulator next to ours, on the same inputs.

The authors' Python sources (PCS ``simulation/*.py`` at commit ``62a6ca3``, MIT) are raw
inputs of the data layer: manifest entries under ``pcs/authors-simulator/``, fetched and
verified like every other file (:func:`fetch_sources`). They are never modified:
:func:`prepare_workdir` copies them into a scratch folder, next to the uncompressed trace
their ``sim.py`` reads (``traces/<name>.csv``) and two small stand-in modules that go first on
the subprocess's ``sys.path``:

``ray``
    Their simulator imports Ray 2.10 for the predictor replays (``ray.remote``, ``ray.get``,
    ``ray.wait``, plus ``ray.init`` / ``ray.is_initialized`` / ``ray.__version__``). The
    stand-in makes these calls synchronous: ``f.remote(*args)`` calls ``f`` at once and
    returns a finished future. A replay works on a deep copy taken at the arrival (their
    ``snap_shot``), so running it at once rather than later on a worker changes no result,
    only the time (one core instead of a Ray cluster).
``dill``
    ``dill`` is not installed in this project's environment. Their code uses it twice:
    ``dill.load`` of the WFQ configuration (we write it with the standard ``pickle``, which
    ``dill`` reads too) and ``dill.dump`` of the whole scheduler to ``<out>_scheduler.pkl``
    after a run with predictions (a debugging snapshot, written before the per-job CSV).
    The standard pickler cannot store the lambdas of their priority schedulers, so the
    stand-in pickles each lambda / local function as a named placeholder. The per-job CSV is
    unaffected; the snapshot costs a little less time than real ``dill`` would (pure-Python
    pickler) -- a difference in the authors' favour of at most the snapshot's time.

:func:`run_authors` runs ``sim.py`` in a subprocess (one per policy) and returns their
per-job table (times shifted to the first arrival, like
:func:`schedlab.pcs.artifacts.load_run`) with its wall time, CPU time and the time their
own ``sim.py`` prints for ``scheduler.run()``. :func:`job_differences` gives the worst
relative difference, job by job, against a table of ours.

Examples
--------
>>> AUTHORS_POLICY["PCS"], AUTHORS_POLICY["THEMIS"]
('MCS', 'THEMIS')
>>> shim = Path(tempfile.mkdtemp()) / "shim"
>>> _ = write_shims(shim)
>>> sorted(p.name for p in shim.iterdir())
['dill.py', 'ray.py']
"""

from __future__ import annotations

import gzip
import math
import os
import pickle
import re
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.pcs.artifacts import load_run
from schedlab.pcs.configs import WFQConfig

#: Manifest folder holding the authors' simulator sources.
SOURCES_PREFIX = "pcs/authors-simulator"
#: Files their ``sim.py`` needs (the rest of the folder is search/plot tooling).
SIM_FILES = (
    "sim.py",
    "GenericScheduler.py",
    "PriorityScheduler.py",
    "MCSScheduler.py",
    "FairScheduler.py",
    "ThemisScheduler.py",
    "AFSScheduler.py",
    "common.py",
    "helpers.py",
    "models.py",
)
#: Our policy names -> their ``-scheduling_policy`` values.
AUTHORS_POLICY = {
    "FIFO": "FIFO",
    "SRSF": "SRSF",
    "LAS": "LAS",
    "FS": "FS",
    "AFS": "AFS",
    "THEMIS": "THEMIS",
    "PCS": "MCS",
}
#: Per-job columns compared by :func:`job_differences`.
COMPARED = ("jct", "start_time", "end_time", "estimated_start_time", "estimated_end_time")

RAY_SHIM = '''"""Synchronous stand-in for the three Ray calls of the PCS authors' simulator.

``f.remote(*a)`` runs ``f(*a)`` at once; ``get``/``wait`` hand back finished results.
Written by schedlab.pcs.authors; not Ray.
"""
__version__ = "2.10.0"
_initialized = False


class ObjectRef:
    """A finished future holding its value."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _RemoteFunction:
    def __init__(self, fn):
        self._fn = fn

    def remote(self, *args, **kwargs):
        return ObjectRef(self._fn(*args, **kwargs))


def remote(*args, **kwargs):
    """``@ray.remote`` and ``@ray.remote(num_cpus=...)``."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return _RemoteFunction(args[0])
    return _RemoteFunction


def init(*args, **kwargs):
    global _initialized
    _initialized = True


def is_initialized():
    return _initialized


def get(refs, timeout=None):
    if isinstance(refs, ObjectRef):
        return refs.value
    return [r.value for r in refs]


def wait(refs, num_returns=1, timeout=None, fetch_local=True):
    refs = list(refs)
    return refs[:num_returns], refs[num_returns:]
'''

DILL_SHIM = '''"""Stand-in for ``dill`` (not installed): the standard pickle, lambdas as placeholders.

Written by schedlab.pcs.authors; not dill. ``load`` reads standard pickles; ``dump`` stores
every lambda or local function as a named placeholder, since the standard pickler cannot.
"""
import pickle
import types
from pickle import HIGHEST_PROTOCOL, PicklingError, UnpicklingError, load, loads  # noqa: F401


def unpicklable(qualname):
    """What a pickled lambda becomes when the snapshot is read back."""
    return "<not pickled: %s>" % qualname


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, types.FunctionType) and "<" in obj.__qualname__:
            return unpicklable, (obj.__qualname__,)
        return NotImplemented


def dump(obj, file, protocol=None, **kwargs):
    _Pickler(file, protocol).dump(obj)


def dumps(obj, protocol=None, **kwargs):
    import io
    buf = io.BytesIO()
    dump(obj, buf, protocol)
    return buf.getvalue()
'''

_BOOTSTRAP = """\
import runpy, sys
shim, simdir = sys.argv[1], sys.argv[2]
sys.path[:0] = [shim, simdir]
sys.argv = [simdir + '/sim.py'] + sys.argv[3:]
runpy.run_path(simdir + '/sim.py', run_name='__main__')
"""


class AuthorsRunError(RuntimeError):
    """The authors' simulator failed or timed out (message names the command and output)."""


def fetch_sources() -> Path:
    """Fetch and verify the authors' simulator sources through the data layer.

    Returns
    -------
    pathlib.Path
        ``data/raw/pcs/authors-simulator`` (read-only copies of the manifest entries).
    """
    from schedlab import data

    paths = data.fetch([SOURCES_PREFIX])
    folder = data.raw_path(SOURCES_PREFIX + "/sim.py").parent
    missing = [f for f in SIM_FILES if not (folder / f).is_file()]
    if missing or not paths:
        raise AuthorsRunError(f"{folder}: the manifest's {SOURCES_PREFIX}/ entries lack {missing}")
    return folder


def write_shims(folder: Path) -> Path:
    """Write the ``ray`` and ``dill`` stand-ins (module docstring) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ray.py").write_text(RAY_SHIM)
    (folder / "dill.py").write_text(DILL_SHIM)
    return folder


def prepare_workdir(workdir: Path, trace_gz: Path, sources: Path | None = None) -> Path:
    """Copy the authors' sources, the stand-ins and one uncompressed trace into ``workdir``.

    Parameters
    ----------
    workdir : pathlib.Path
        Scratch folder (created); gets ``sim/`` (their sources, writable copies),
        ``sim/traces/<trace>.csv`` and ``shim/``.
    trace_gz : pathlib.Path
        A ``trace_<vc>.csv.gz`` of the mirror; their ``-trace`` argument is its stem.
    sources : pathlib.Path, optional
        Folder with their sources; default :func:`fetch_sources`.

    Returns
    -------
    pathlib.Path
        ``workdir``.
    """
    sources = sources or fetch_sources()
    simdir = workdir / "sim"
    (simdir / "traces").mkdir(parents=True, exist_ok=True)
    for name in SIM_FILES:
        dest = simdir / name
        shutil.copyfile(sources / name, dest)
        dest.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    stem = Path(trace_gz).name.removesuffix(".gz").removesuffix(".csv")
    with gzip.open(trace_gz, "rb") as fin, open(simdir / "traces" / f"{stem}.csv", "wb") as fout:
        shutil.copyfileobj(fin, fout)
    write_shims(workdir / "shim")
    return workdir


def write_config(config: WFQConfig, path: Path) -> Path:
    """A WFQ configuration as the ``class_detail`` pickle their ``-MCS_config_file`` reads."""
    detail = {
        "num_classes": config.num_classes,
        "class_thresholds": [float(t) for t in config.thresholds],
        "class_rates": [Fraction(r) for r in config.rates],
        "clip_demand_factor": config.zeta_min,
        "delta": config.delta,
    }
    with open(path, "wb") as fh:
        pickle.dump(detail, fh)
    return path


@dataclass
class AuthorsRun:
    """One run of the authors' ``sim.py``.

    Attributes
    ----------
    jobs : pandas.DataFrame
        Their per-job CSV sorted by ``app_id``, times shifted to the first arrival.
    wall_s, cpu_s : float
        Wall and CPU (user + system) seconds of the whole subprocess (interpreter start,
        imports, workload, ``scheduler.run()``, CSV).
    sim_s : float
        What their ``sim.py`` prints as ``sim took`` (``scheduler.run()`` only).
    command : list of str
    """

    jobs: pd.DataFrame
    wall_s: float
    cpu_s: float
    sim_s: float
    command: list = field(default_factory=list)


def authors_args(
    trace: str,
    policy: str,
    num_jobs: int,
    predict: bool,
    gpus: int = 64,
    config_file: Path | None = None,
    out: str = "out.csv",
) -> list[str]:
    """Their ``sim.py`` arguments for ``num_jobs`` rows of ``trace`` (``-num_apps`` = n-1).

    >>> authors_args("trace_0e4a51", "SRSF", 1001, True)[:6]
    ['-trace', 'trace_0e4a51', '-num_gpus', '64', '-num_apps', '1000']
    """
    key = policy.upper()
    if key not in AUTHORS_POLICY:
        raise ValueError(f"policy {policy!r}: expected one of {', '.join(AUTHORS_POLICY)}")
    if key == "PCS" and config_file is None:
        raise ValueError("policy 'PCS' needs config_file (see write_config)")
    # their reader keeps rows with app_id <= num_apps
    args = [
        "-trace",
        trace,
        "-num_gpus",
        str(gpus),
        "-num_apps",
        str(num_jobs - 1),
        "-scheduling_policy",
        AUTHORS_POLICY[key],
        "-estimate",
        str(int(predict)),
        "-output_file",
        out,
    ]
    if config_file is not None:
        args += ["-MCS_config_file", str(config_file)]
    return args


def run_authors(
    workdir: Path,
    trace: str,
    policy: str,
    num_jobs: int,
    *,
    predict: bool,
    gpus: int = 64,
    config: WFQConfig | None = None,
    timeout_s: float | None = None,
    tag: str | None = None,
) -> AuthorsRun:
    """Run their ``sim.py`` once in a subprocess of this interpreter.

    Parameters
    ----------
    workdir : pathlib.Path
        Made by :func:`prepare_workdir`.
    trace : str
        Their trace name, e.g. ``"trace_0e4a51"``.
    policy : str
        A key of :data:`AUTHORS_POLICY`; ``"PCS"`` needs ``config``.
    num_jobs : int
        First ``num_jobs`` rows of the trace.
    predict : bool
        Their ``-estimate`` flag (JCT predictions at every arrival on traces of <= 5000 jobs;
        with ``p_error`` unset, their unseeded ``random`` is not drawn from otherwise).
    gpus : int
    config : WFQConfig, optional
    timeout_s : float, optional
        Kill the subprocess after this many seconds (raises :class:`AuthorsRunError`).
    tag : str, optional
        Output file stem (default: policy and flag).

    Returns
    -------
    AuthorsRun
    """
    simdir, shim = workdir / "sim", workdir / "shim"
    tag = tag or f"{policy}_{'pred' if predict else 'nopred'}"
    out = simdir / f"{tag}.csv"
    cfg_file = write_config(config, workdir / f"{tag}_config.pkl") if config is not None else None
    cmd = [sys.executable, "-c", _BOOTSTRAP, str(shim), str(simdir)]
    cmd += authors_args(trace, policy, num_jobs, predict, gpus, cfg_file, out.name)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    log = workdir / f"{tag}.log"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "wb") as fh:
        try:
            proc = subprocess.run(
                cmd, cwd=simdir, stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            raise AuthorsRunError(
                f"{policy} ({tag}): the authors' sim.py did not finish within {timeout_s:.0f} s; log {log}"
            ) from None
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = log.read_text(errors="replace")
    if proc.returncode != 0 or not out.is_file():
        raise AuthorsRunError(
            f"{policy} ({tag}): the authors' sim.py exited with "
            f"{proc.returncode}; command {' '.join(cmd[3:])}; output tail:\n"
            f"{text[-2000:]}"
        )
    took = re.findall(r"sim took ([0-9.]+) secs", text)
    if not took:
        raise AuthorsRunError(f"{log}: no 'sim took ... secs' line in the authors' output")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return AuthorsRun(read_output(out), wall, cpu, float(took[-1]), cmd[3:])


def read_output(path: Path) -> pd.DataFrame:
    """Their per-job CSV, sorted by ``app_id``, times counted from the first arrival."""
    df = load_run(str(path))
    if df.empty:
        raise AuthorsRunError(f"{path}: the authors' per-job CSV has no rows")
    return df


def job_differences(ours: pd.DataFrame, theirs: pd.DataFrame) -> dict[str, float]:
    """Worst relative difference per column, job by job (joined on ``app_id``).

    Columns: ``jct`` (end - submit), start, end, predicted start and end (times since the
    first arrival). Predicted columns compare the jobs both sides predicted; a job that one
    side predicted and the other did not counts as ``inf``. ``nan`` when no job has a value.

    Examples
    --------
    >>> a = pd.DataFrame({"app_id": [0], "submit_time": [0.0], "start_time": [1.0],
    ...                   "end_time": [3.0], "estimated_start_time": [-1.0],
    ...                   "estimated_end_time": [-1.0]})
    >>> job_differences(a, a)["jct"]
    0.0
    """
    m = ours.merge(theirs, on="app_id", suffixes=("_ours", "_theirs"))
    if len(m) != len(ours) or len(m) != len(theirs):
        raise ValueError(f"job sets differ: ours {len(ours)}, theirs {len(theirs)}, common {len(m)}")

    def col(name: str, side: str) -> np.ndarray:
        if name == "jct":
            return (m[f"end_time_{side}"] - m[f"submit_time_{side}"]).to_numpy(float)
        return m[f"{name}_{side}"].to_numpy(float)

    out: dict[str, float] = {}
    for name in COMPARED:
        a, b = col(name, "ours"), col(name, "theirs")
        if name.startswith("estimated_"):
            made_a, made_b = a != -1, b != -1
            if (made_a != made_b).any():
                out[name] = math.inf
                continue
            a, b = a[made_b], b[made_b]
        if len(a) == 0:
            out[name] = math.nan
            continue
        d = np.abs(a - b)
        out[name] = float(np.max(np.where(d == 0, 0.0, d / np.maximum(np.abs(b), 1e-300))))
    return out


def worst(diffs: dict[str, float]) -> float:
    """Largest finite-or-inf value of :func:`job_differences` (``nan`` entries ignored)."""
    vals = [v for v in diffs.values() if not math.isnan(v)]
    return max(vals) if vals else math.nan


def scratch_dir(prefix: str = "pcs-authors-") -> Path:
    """A fresh temporary folder for :func:`prepare_workdir`."""
    return Path(tempfile.mkdtemp(prefix=prefix))
