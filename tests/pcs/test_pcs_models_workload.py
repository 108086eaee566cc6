"""Speedup tables, microsecond clock, trace loading and bad-input errors."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from schedlab import data
from schedlab.pcs import (ConfigError, TraceError, WFQConfig, heuristic_config, load_config,
                          load_speedups, load_trace, throughput)
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


@pytest.mark.parametrize("x", [0.0, 1e-7, 4.9999995e-6, 123.4567895, 16482.000000499, 7.5e-7,
                               2.5e-6, 1e5 / 3])
def test_seconds_to_us_equals_timedelta(x):
    assert int(seconds_to_us(x)) == timedelta(seconds=x) // timedelta(microseconds=1)


def test_trace_first_n_rows(w1001):
    assert len(w1001) == 1001
    assert w1001.submit_us[0] == 0 and w1001.submit_us[1] == 6_000_000
    assert w1001.demand.max() == 8 and w1001.service[0] == 16482.0


def _write(tmp_path: Path, rows: list[str]) -> Path:
    p = tmp_path / "t.csv"
    p.write_text("app_id,submit_time,service,num_jobs,sleep_time,model_name\n" +
                 "\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize("rows,match", [
    (["0,0,10,1,0,VggnetModel256", "1,5,10,1,5,VggnetModel256", "2,3,10,1,-2,VggnetModel256"],
     r"row 2: field 'sleep_time'"),
    (["0,0,10,1,0,VggnetModel256", "1,5,10,1,5,VggnetModel256", "2,3,10,1,0,VggnetModel256"],
     r"row 2: field 'submit_time' = 3.0 is before row 1"),
    (["0,-4,10,1,0,VggnetModel256"], r"row 0: field 'submit_time' = -4.0"),
    (["0,0,10,1,0,VggnetModel256", "1,1,10,0,1,VggnetModel256"],
     r"row 1: field 'num_jobs' \(GPU demand\) = 0"),
    (["0,0,10,1,0,NoSuchModel"], r"row 0: field 'model_name': unknown model name 'NoSuchModel'"),
    (["0,0,10,9,0,VggnetModel256"], r"row 0: demand 9 GPUs exceeds"),
    (["0,0,ten,1,0,VggnetModel256"], r"row 0: field 'service' = 'ten'"),
])
def test_bad_traces_name_row_and_field(tmp_path, rows, match):
    with pytest.raises(TraceError, match=match):
        load_trace(_write(tmp_path, rows))


def test_wfq_configs_load_and_validate(tmp_path):
    c = load_config("PCS_config_0e4a51_jct")
    assert c.num_classes == 3 and sum(c.rates) == 1 and np.isinf(c.thresholds[-1])
    bad = {"num_classes": 2, "class_thresholds": [10, "inf"], "class_rates": ["1/2", "1/3"]}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match="'class_rates' must sum to 1"):
        load_config(p)
    bad = {"num_classes": 3, "class_thresholds": [10, 5, "inf"],
           "class_rates": ["1/2", "1/4", "1/4"]}
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
