"""schedlab.csvrows.write_rows against pandas' ``to_csv``, the writer it replaces: the same bytes."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from schedlab.csvrows import write_rows


def _pandas(df: pd.DataFrame) -> bytes:
    return df.to_csv(header=False, index=False, lineterminator="\n").encode()


def _ours(df: pd.DataFrame) -> bytes:
    fh = io.BytesIO()
    write_rows(fh, df)
    return fh.getvalue()


def _floats(rng: np.random.Generator, n: int) -> np.ndarray:
    """Every magnitude from 1e-30 to 1e30, whole numbers, and the values where the two writers'
    exponent rules or a ``.0`` could differ."""
    scaled = rng.standard_normal(n) * 10.0 ** rng.integers(-30, 31, n)
    whole = np.round(rng.standard_normal(n) * 10.0 ** rng.integers(0, 17, n))
    edges = [
        0.0,
        -0.0,
        np.nan,
        np.inf,
        -np.inf,
        1e-4,
        9.999999999999999e-05,
        1e-5,
        1e9,
        999999999.5,
        9999999999.9,
        1e10,
        1e16,
        9999999999999998.0,
        5e-324,
        1.7976931348623157e308,
        -1e9,
    ]
    return np.concatenate([scaled, whole, edges])


@pytest.mark.parametrize("seed", [0, 1])
def test_same_bytes_as_pandas_for_floats_of_every_magnitude(seed):
    rng = np.random.default_rng(seed)
    v = _floats(rng, 20_000)
    df = pd.DataFrame({"x": v, "y": rng.permutation(v)})
    assert _ours(df) == _pandas(df)


def test_same_bytes_as_pandas_for_mixed_columns_with_missing_values():
    rng = np.random.default_rng(2)
    n = 5_000
    ids = pd.Series([f"{i:024x}" for i in rng.integers(0, 2**62, n)], dtype="string")
    ids[rng.random(n) < 0.1] = pd.NA
    obj = pd.Series(rng.choice(["ps", "worker", "", "/dev/nvidia1"], n), dtype=object)
    obj[rng.random(n) < 0.1] = None
    x = rng.standard_normal(n) * 1e3
    x[rng.random(n) < 0.1] = np.nan
    df = pd.DataFrame({"id": ids, "task": obj, "count": rng.integers(-5, 10**12, n), "x": x})
    assert _ours(df) == _pandas(df)


def test_a_lone_column_keeps_pandas_quoted_empty_field():
    df = pd.DataFrame({"x": [1.0, np.nan, 2.5]})
    assert _ours(df) == _pandas(df) == b'1.0\n""\n2.5\n'


def test_refuses_what_it_would_write_otherwise_than_pandas():
    with pytest.raises(ValueError, match="without quotes"):
        _ours(pd.DataFrame({"a": ["x,y"], "b": [1]}))
    with pytest.raises(TypeError, match="column 'b'.*bool"):
        _ours(pd.DataFrame({"a": ["x"], "b": [True]}))
