"""Random corruptions of valid inputs end in the project's own error type, never another exception.

Each parser gets a valid file with bytes flipped, deleted, inserted, lines swapped or the file
cut short; it must either read it (the corruption happened to stay valid) or raise its own
error, which names the file. Anything else (a TypeError, a numpy error, an EOFError that click
turns into a bare "Aborted!") fails here.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.nona.graphs import GraphFormatError, read_graph
from schedlab.pcs.configs import ConfigError, load_config
from schedlab.pcs.workload import TraceError, load_trace

TRACE = (
    "app_id,submit_time,service,num_jobs,sleep_time,model_name\n"
    "0,0.0,3184686.79,4,0.0,TransformerModel256\n"
    "1,1456.0,3220179.86,4,1456.0,VggnetModel256\n"
    "2,1500.5,120.0,1,44.5,\n"
).encode()
GRAPH = (
    "node1 -- Input -- forward_compute_time=1.000, backward_compute_time=0.000, "
    "activation_size=8.000, parameter_size=0.000\n"
    "node2 -- Conv2d(3, 64) -- forward_compute_time=0.500, backward_compute_time=0.100, "
    "activation_size=[4.000; 4.000], parameter_size=16.000 -- stage_id=0\n"
    "node3 -- ReLU() -- forward_compute_time=0.200, backward_compute_time=0.100, "
    "activation_size=8.000, parameter_size=0.000 -- stage_id=1\n"
    "\tnode1 -- node2\n\tnode2 -- node3\n"
).encode()
CONFIG = json.dumps(
    {
        "num_classes": 2,
        "class_thresholds": [120, "inf"],
        "class_rates": ["2/3", "1/3"],
        "clip_demand_factor": 0.5,
        "delta": 0.2,
    }
).encode()

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def corrupted(draw, data: bytes) -> bytes:
    """``data`` after a few random edits of the kinds files really suffer."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "delete", "insert", "truncate", "swap_lines", "token"]))
        if not out:
            break
        i = draw(st.integers(0, len(out) - 1))
        if kind == "flip":
            out[i] = draw(st.integers(0, 255))
        elif kind == "delete":
            del out[i : i + draw(st.integers(1, 20))]
        elif kind == "insert":
            out[i:i] = draw(
                st.sampled_from(
                    [
                        b",",
                        b"\n",
                        b"-",
                        b"nan",
                        b"inf",
                        b"#",
                        b"\t",
                        b" -- ",
                        b'"',
                        b"1e400",
                        b"\x00",
                        b"\xff",
                        b"[",
                        b"=",
                        b"null",
                        b"{}",
                        b"[]",
                    ]
                )
            )
        elif kind == "truncate":
            del out[i:]
        elif kind == "swap_lines":
            lines = bytes(out).split(b"\n")
            a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            out = bytearray(b"\n".join(lines))
        else:
            out[i:i] = draw(st.sampled_from([b"-7", b"0", b"1/0", b"99999999999", b"-0.5", b"x"]))
    return bytes(out)


def _write(name: str, data: bytes) -> Path:
    path = Path(tempfile.mkdtemp()) / name
    path.write_bytes(data)
    return path


def _reads_or_raises_own_error(reader, path: Path, error: type[Exception]) -> None:
    try:
        reader(path)
    except error as e:
        assert str(path.name) in str(e) or "WFQ config" in str(e), f"error does not name the file: {e}"


@SETTINGS
@given(corrupted(TRACE))
def test_corrupted_trace_csv(data):
    _reads_or_raises_own_error(load_trace, _write("trace.csv", data), TraceError)


@SETTINGS
@given(
    st.one_of(
        corrupted(gzip.compress(TRACE, mtime=0)), corrupted(TRACE).map(lambda b: gzip.compress(b, mtime=0))
    )
)
def test_corrupted_trace_gzip(data):
    _reads_or_raises_own_error(load_trace, _write("trace.csv.gz", data), TraceError)


@SETTINGS
@given(corrupted(GRAPH))
def test_corrupted_graph(data):
    _reads_or_raises_own_error(read_graph, _write("graph.txt", data), GraphFormatError)


@SETTINGS
@given(corrupted(CONFIG))
def test_corrupted_wfq_config(data):
    _reads_or_raises_own_error(load_config, _write("config.json", data), ConfigError)


@SETTINGS
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda kids: (
            st.lists(kids, max_size=4)
            | st.dictionaries(
                st.sampled_from(
                    ["class_thresholds", "class_rates", "num_classes", "delta", "clip_demand_factor", "x"]
                ),
                kids,
                max_size=5,
            )
        ),
        max_leaves=12,
    )
)
def test_any_json_as_wfq_config(doc):
    try:
        text = json.dumps(doc)
    except ValueError:
        return
    _reads_or_raises_own_error(load_config, _write("config.json", text.encode()), ConfigError)


def _decima_npz() -> bytes:
    """A valid Decima weights file (every array of :data:`LAYOUT`, float32 as torch saves them)."""
    import io

    import numpy as np

    from schedlab.nona.decima.policy import LAYOUT

    rng = np.random.default_rng(0)
    state = {
        f"{p}.{i}.{kind}": rng.standard_normal(shape if kind == "weight" else shape[:1]).astype(np.float32)
        for p, (_, shapes) in LAYOUT.items()
        for i, shape in zip((0, 2, 4), shapes)
        for kind in ("weight", "bias")
    }
    buf = io.BytesIO()
    np.savez(buf, **state)
    return buf.getvalue()


DECIMA_NPZ = _decima_npz()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted(DECIMA_NPZ))
def test_corrupted_decima_weights(data):
    # numpy's own error nudges toward allow_pickle=True; ours names the file instead
    from schedlab.nona.decima.policy import load_weights

    path = _write("weights.npz", data)
    try:
        load_weights(path)
    except ValueError as e:
        assert str(e).startswith(f"{path}: ") and "allow_pickle" not in str(e), str(e)


def _params_excerpt() -> bytes:
    """Two papers' shared values and two stages of the project's params.yaml (shared keys, profiles,
    nested mappings), small enough for hypothesis to shrink a failure quickly."""
    import yaml

    doc = yaml.safe_load((Path(__file__).resolve().parents[1] / "params.yaml").read_text())
    keep = {"nona": ("common", "fig3"), "pcs": ("common", "fig7")}
    part = {"profile": doc["profile"], **{p: {s: doc[p][s] for s in ss} for p, ss in keep.items()}}
    return yaml.safe_dump(part, sort_keys=False, width=100).encode()


PARAMS = _params_excerpt()


@SETTINGS
@given(
    corrupted(PARAMS), st.sampled_from(["nona/fig3", "pcs/fig7"]), st.sampled_from([None, "smoke", "paper"])
)
def test_corrupted_params_yaml(data, stage, profile):
    from schedlab.notebooks.params import ParamsError, load_params

    path = _write("params.yaml", data)
    try:
        values = load_params(stage, path, profile)
    except ParamsError as e:
        assert "params.yaml" in str(e), f"error does not name the file: {e}"
    else:
        assert isinstance(values, dict) and "profile" in values
