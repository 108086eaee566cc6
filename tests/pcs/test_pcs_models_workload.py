"""Speedup tables, microsecond clock, trace loading and bad-input errors."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from schedlab import data
from schedlab.pcs import (
    ConfigError,
    TraceError,
    WFQConfig,
    heuristic_config,
    load_config,
    load_speedups,
    load_trace,
    throughput,
)
from schedlab.pcs.models import throughput_vec
from schedlab.pcs.workload import seconds_to_us


def test_speedup_tables_match_raw_times():
    t = load_speedups()
    row = t.row("VggnetModel256")
    assert len(row) == 9 and row[0] == 0.0 and row[1] == 1.0
    import pandas as pd

    df = pd.read_csv(data.require("pcs/model_scaling/model_speedups.csv"))
    v = df[df.model == "VggnetModel256"].time_per_iter_raw.to_numpy()
    np.testing.assert_allclose(row[1:], v[0] / v, rtol=1e-12)  # speedup = t(1)/t(n)


def test_throughput_interpolates_and_caps():
    row = np.array([0.0, 1.0, 1.5, 2.5])
    assert throughput(row, 2, 3) == 1.5
    assert throughput(row, 2.5, 3) == pytest.approx(2.0)
    assert throughput(row, 0.5, 3) == pytest.approx(0.5)
    assert throughput(row, 3.7, 3) == 2.5  # capped at the demand
    assert throughput(row, 2.5, 2) == 1.5  # above demand: the demand's value
    a = np.array([2.0, 2.5, 0.5, 3.7, 2.5])
    d = np.array([3, 3, 3, 3, 2])
    v = throughput_vec(np.tile(row, (5, 1)), a, d)
    assert v.tolist() == [throughput(row, x, int(k)) for x, k in zip(a, d)]


@pytest.mark.parametrize(
    "x", [0.0, 1e-7, 4.9999995e-6, 123.4567895, 16482.000000499, 7.5e-7, 2.5e-6, 1e5 / 3]
)
def test_seconds_to_us_equals_timedelta(x):
    assert int(seconds_to_us(x)) == timedelta(seconds=x) // timedelta(microseconds=1)


def test_trace_first_n_rows(w1001):
    assert len(w1001) == 1001
    assert w1001.submit_us[0] == 0 and w1001.submit_us[1] == 6_000_000
    assert w1001.demand.max() == 8 and w1001.service[0] == 16482.0


def _write(tmp_path: Path, rows: list[str]) -> Path:
    p = tmp_path / "t.csv"
    p.write_text("app_id,submit_time,service,num_jobs,sleep_time,model_name\n" + "\n".join(rows) + "\n")
    return p


# errors name the file line (the header is line 1, the first job line 2)
@pytest.mark.parametrize(
    "rows,match",
    [
        (
            ["0,0,10,1,0,VggnetModel256", "1,5,10,1,5,VggnetModel256", "2,3,10,1,-2,VggnetModel256"],
            r"line 4: field 'sleep_time'",
        ),
        (
            ["0,0,10,1,0,VggnetModel256", "1,5,10,1,5,VggnetModel256", "2,3,10,1,0,VggnetModel256"],
            r"line 4: field 'submit_time' = 3.0 is before line 3",
        ),
        (["0,-4,10,1,0,VggnetModel256"], r"line 2: field 'submit_time' = -4.0"),
        (
            ["0,0,10,1,0,VggnetModel256", "1,1,10,0,1,VggnetModel256"],
            r"line 3: field 'num_jobs' \(GPU demand\) = 0",
        ),
        (["0,0,10,1,0,NoSuchModel"], r"line 2: field 'model_name': unknown model name 'NoSuchModel'"),
        (["0,0,10,9,0,VggnetModel256"], r"line 2: demand 9 GPUs exceeds"),
        (["0,0,ten,1,0,VggnetModel256"], r"line 2: field 'service' = 'ten'"),
        (["0,0,10,1"], r"line 2: expected 6 fields"),
        ([], r"no jobs: a header and no data rows"),
    ],
)
def test_bad_traces_name_line_and_field(tmp_path, rows, match):
    with pytest.raises(TraceError, match=match):
        load_trace(_write(tmp_path, rows))


def test_trace_columns_are_read_by_name(tmp_path):
    ordered = _write(tmp_path, ["0,0,10,1,0,VggnetModel256", "1,5,20,2,5,VggnetModel256"])
    shuffled = tmp_path / "shuffled.csv"
    shuffled.write_text(
        "num_jobs,model_name,service,app_id,sleep_time,submit_time\n"
        "1,VggnetModel256,10,0,0,0\n2,VggnetModel256,20,1,5,5\n"
    )
    a, b = load_trace(ordered), load_trace(shuffled)
    assert a.service.tolist() == b.service.tolist() == [10.0, 20.0]
    assert a.demand.tolist() == b.demand.tolist() == [1, 2]
    assert a.submit_us.tolist() == b.submit_us.tolist()
    missing = tmp_path / "missing.csv"
    missing.write_text("app_id,submit_time,runtime,num_jobs,sleep_time\n0,0,10,1,0\n")
    with pytest.raises(TraceError, match=r"missing.csv: line 1: header .* lacks column\(s\) service"):
        load_trace(missing)


def test_trace_gzip_errors_are_trace_errors(tmp_path):
    import gzip

    not_gzip = tmp_path / "t.csv.gz"
    not_gzip.write_text("app_id,submit_time,service,num_jobs,sleep_time\n0,0,10,1,0\n")
    with pytest.raises(TraceError, match=r"t.csv.gz: cannot be read as gzip"):
        load_trace(not_gzip)
    body = (
        "app_id,submit_time,service,num_jobs,sleep_time\n"
        + "".join(f"{i},{i},10,1,{min(i, 1)}\n" for i in range(2000))
    ).encode()
    truncated = tmp_path / "cut.csv.gz"
    truncated.write_bytes(gzip.compress(body)[:-300])
    with pytest.raises(TraceError, match=r"cut.csv.gz: cannot be read as gzip.*truncated"):
        load_trace(truncated)


def test_wfq_configs_load_and_validate(tmp_path):
    c = load_config("PCS_config_0e4a51_jct")
    assert c.num_classes == 3 and sum(c.rates) == 1 and np.isinf(c.thresholds[-1])
    bad = {"num_classes": 2, "class_thresholds": [10, "inf"], "class_rates": ["1/2", "1/3"]}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match="'class_rates' must sum to 1"):
        load_config(p)
    bad = {"num_classes": 3, "class_thresholds": [10, 5, "inf"], "class_rates": ["1/2", "1/4", "1/4"]}
    p.write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match="strictly increasing; entry 1 = 5.0"):
        load_config(p)
    with pytest.raises(ConfigError, match="missing field 'class_rates'"):
        WFQConfig.from_dict({"class_thresholds": ["inf"]})


def test_heuristic_config_closed_form():
    # sizes 1,1,1 have C^2 = 0; adding 100 makes C^2 > 1 -> boundary at 1
    c = heuristic_config([1, 1, 1, 100, 100, 100], T=1.0, W=np.log(2))
    assert c.thresholds == (1.0, np.inf)
    assert [float(r) for r in c.rates] == [0.667, 0.333]
    assert sum(c.rates) == 1


def test_heuristic_reproduces_pareto_search_configs():
    import pandas as pd
    from fractions import Fraction

    from schedlab.pcs.artifacts import trace_0e4a51
    from schedlab.pcs.configs import PARETO_ENTRY

    w = trace_0e4a51(2001)  # the search used 2001 jobs
    df = pd.read_csv(data.require(PARETO_ENTRY))
    d = df[df.file.str.contains("0e4a51")]
    assert len(d) == 70
    for _, r in d.iterrows():
        c = heuristic_config(w.service, r.T_cov, r.W_decay, r.clip_demand_factor, r.delta)
        assert c.thresholds == tuple(float(x) for x in json.loads(r.class_thresholds))
        assert c.rates == tuple(Fraction(x) for x in json.loads(r.class_rates))


@pytest.mark.parametrize(
    "doc, match",
    [
        ({"foo": 1}, r"c.json: WFQ config 'foo': expected an object"),
        ([1, 2, 3], r"c.json: expected a JSON object .* got a list"),
        ({"class_thresholds": ["inf"], "class_rates": "1"}, r"field 'class_rates' must be a list"),
        (
            {"class_thresholds": [5, "inf"], "class_rates": ["3/2", "-1/2"]},
            r"'class_rates' must be >= 0; entry 1 = -1/2$",
        ),
        (
            {"class_thresholds": ["inf"], "class_rates": ["1"], "clip_demand_factor": -3},
            r"'clip_demand_factor' \(zeta_min\) = -3.0: expected a number in \[0, 1\]",
        ),
        (
            {"class_thresholds": ["inf"], "class_rates": ["1"], "delta": 7},
            r"'delta' = 7.0: expected a number in \(0, 1\]",
        ),
        (
            {"class_thresholds": ["inf"], "class_rates": ["1"], "delta": [1]},
            r"field 'delta' must be a number",
        ),
    ],
)
def test_bad_wfq_configs_name_file_and_field(tmp_path, doc, match):
    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=match):
        load_config(p)


def test_every_stored_wfq_config_is_valid():
    from schedlab import data
    from schedlab.pcs.configs import HISTORY_ENTRY, load_configs

    assert len(load_configs()) >= 40
    for e in json.loads(Path(data.require(HISTORY_ENTRY)).read_text()):
        WFQConfig.from_dict(e, e["path"])
