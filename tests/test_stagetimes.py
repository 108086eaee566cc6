"""The one timings writer: a table's reproducible part to results/, its times to results/<paper>/timings/."""

from __future__ import annotations

import pandas as pd
import pytest

from schedlab import stagetimes
from schedlab.notebooks import Outputs


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "servers": [8, 16],
            "method": ["global", "local"],
            "objective": [1.5, 2.25],
            "solve_s": [0.31, 0.92],
            "cpu_s": [0.3, 0.9],
        }
    )


def test_write_timed_splits_a_table_between_results_and_timings(tmp_path):
    out = Outputs(tmp_path, "nona/demo")
    kept = stagetimes.write_timed(
        out, table(), "sub/demo.csv", timing_columns=["solve_s", "cpu_s"], key_columns=["servers", "method"]
    )
    assert list(kept.columns) == ["servers", "method", "objective"]
    assert out.results("sub/demo.csv").read_text() == kept.to_csv(index=False)
    times = pd.read_csv(out.timings("sub/demo.csv"))
    assert list(times.columns) == ["servers", "method", "solve_s", "cpu_s"]
    assert times.solve_s.tolist() == [0.31, 0.92]
    # the same table with other times gives the same results file, byte for byte
    again = Outputs(tmp_path / "again", "nona/demo")
    stagetimes.write_timed(
        again,
        table().assign(solve_s=[9.0, 9.0]),
        "sub/demo.csv",
        timing_columns=["solve_s", "cpu_s"],
        key_columns=["servers", "method"],
    )
    assert again.results("sub/demo.csv").read_bytes() == out.results("sub/demo.csv").read_bytes()


def test_write_timed_may_name_the_timings_file_apart(tmp_path):
    out = Outputs(tmp_path, "nona/demo")
    stagetimes.write_timed(
        out,
        table(),
        "decima/jct.csv",
        timings_filename="decima_jct.csv",
        timing_columns=["solve_s"],
        key_columns=["servers"],
    )
    assert out.timings("decima_jct.csv").is_file() and not out.timings("decima/jct.csv").exists()


@pytest.mark.parametrize(
    "timing, keys, message",
    [(["wall_s"], ["servers"], "no column"), (["solve_s"], ["servers", "solve_s"], "both as key")],
)
def test_split_timings_refuses_bad_columns(timing, keys, message):
    with pytest.raises(KeyError, match=message):
        stagetimes.split_timings(table(), timing, keys)
