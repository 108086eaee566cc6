"""Header-less CSV rows with the bytes pandas writes, at Arrow's speed.

The synthetic stand-in writes about 36 million rows at the paper's size. ``DataFrame.to_csv``
formats every float through NumPy's ``astype(str)`` and writes the rows in Python: about 270 s of
a 430 s synthesis. :func:`write_rows` writes the same bytes as ``df.to_csv(fh, header=False,
index=False, lineterminator="\\n")`` with Arrow's CSV writer (``tests/test_csvrows.py`` compares
them).

Arrow writes a float as its shortest round-trip digits, as NumPy does, but without NumPy's
trailing ``.0`` on whole numbers and with exponents at other magnitudes; whole numbers get the
``.0`` here, and the few floats outside ``[1e-4, 1e9)`` (where either may use an exponent) take
NumPy's own text. Missing values are empty fields, as pandas writes them.

Examples
--------
>>> import io
>>> df = pd.DataFrame({"id": ["a", None], "n": [3, 4], "x": [2.0, float("nan")], "y": [1e-05, 0.25]})
>>> fh = io.BytesIO(); write_rows(fh, df); fh.getvalue().decode()
'a,3,2.0,1e-05\\n,4,,0.25\\n'
>>> df.to_csv(header=False, index=False, lineterminator="\\n")
'a,3,2.0,1e-05\\n,4,,0.25\\n'
"""

from __future__ import annotations

from typing import BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

#: floats Arrow and NumPy both write without an exponent (Arrow switches at 1e10, NumPy at 1e16 and 1e-4)
PLAIN_RANGE = (1e-4, 1e9)


def float_text(values: np.ndarray) -> pa.Array:
    """Each float as pandas writes it to CSV (NumPy's ``astype(str)``), NaN as null."""
    values = np.asarray(values, dtype=np.float64)
    text = pc.cast(pa.array(values, from_pandas=True), pa.string())
    magnitude = np.abs(values)
    plain = (magnitude >= PLAIN_RANGE[0]) & (magnitude < PLAIN_RANGE[1]) | (magnitude == 0)
    whole = plain & (values == np.floor(values))
    text = pc.if_else(pa.array(whole), pc.binary_join_element_wise(text, ".0", ""), text)
    odd = ~plain & np.isfinite(values)
    if odd.any():  # rare: let NumPy write them
        rows = np.flatnonzero(odd)
        text = text.to_numpy(zero_copy_only=False).astype(object)
        text[rows] = values[rows].astype(str)
        text = pa.array(text, type=pa.string())
    return text


def write_rows(fh: BinaryIO, df: pd.DataFrame) -> None:
    """Append ``df``'s rows to the binary file ``fh`` as ``df.to_csv(fh, header=False, index=False,
    lineterminator="\\n")`` would write them (integer, float and string columns)."""
    if df.shape[1] == 1:  # pandas quotes a lone empty field (""), so that the row is not a blank line
        fh.write(df.to_csv(header=False, index=False, lineterminator="\n").encode())
        return
    columns = []
    for name in df.columns:
        col = df[name]
        if pd.api.types.is_float_dtype(col.dtype):
            columns.append(float_text(col.to_numpy()))
        elif pd.api.types.is_integer_dtype(col.dtype) and not isinstance(
            col.dtype, pd.api.extensions.ExtensionDtype
        ):
            columns.append(pa.array(col.to_numpy()))
        elif pd.api.types.is_string_dtype(col.dtype):
            columns.append(pa.array(col, type=pa.string(), from_pandas=True))
        else:
            raise TypeError(
                f"column {name!r}: write_rows writes integer, float and string columns, got {col.dtype}"
            )
    table = pa.table(columns, names=[str(c) for c in df.columns])
    try:
        pacsv.write_csv(table, fh, pacsv.WriteOptions(include_header=False, quoting_style="none"))
    except pa.ArrowInvalid as exc:
        # pandas would quote such a field; the stand-in's ids and names never need it
        raise ValueError(f"write_rows writes fields without quotes: {exc}") from None
