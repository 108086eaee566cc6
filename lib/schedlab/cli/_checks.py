"""Input checks shared by the ``schedlab`` commands: each bad input ends in one line naming the
option or file and what was expected, before any work starts and before anything is written.

Examples
--------
>>> import click
>>> POSITIVE_INTS.convert("50, 100", None, None)
[50, 100]
>>> try:
...     POSITIVE_INTS.convert("0,-5", None, None)
... except click.BadParameter as exc:
...     print(exc.message)
0 is not a positive integer; expected positive integers separated by commas, e.g. 50,100
>>> missing_columns(["a", "b"], ("a", "c", "d"))
['c', 'd']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import click

from schedlab.io import NotWritableError, require_writable


def writable(path: str | os.PathLike[str] | None, option: str, *, folder: bool = False) -> Path | None:
    """:func:`schedlab.io.require_writable` as a click error (``None`` passes: an optional output)."""
    if path is None:
        return None
    try:
        return require_writable(path, option, folder=folder)
    except NotWritableError as exc:
        raise click.ClickException(str(exc)) from None


class PositiveIntList(click.ParamType):
    """A comma-separated list of positive integers (``50,100,200``), as a Python list."""

    name = "N[,N...]"

    def convert(self, value, param, ctx) -> list[int]:
        if isinstance(value, (list, tuple)):
            return [int(v) for v in value]
        items = [s.strip() for s in str(value).split(",")]
        if any(not s for s in items):
            self.fail(
                f"{value!r} has an empty item; expected positive integers separated by commas, e.g. 50,100",
                param,
                ctx,
            )
        out = []
        for s in items:
            try:
                n = int(s)
            except ValueError:
                self.fail(
                    f"{s!r} is not an integer; expected positive integers separated by commas, e.g. 50,100",
                    param,
                    ctx,
                )
            if n < 1:
                self.fail(
                    f"{n} is not a positive integer; expected positive integers separated by commas, "
                    "e.g. 50,100",
                    param,
                    ctx,
                )
            out.append(n)
        return out


POSITIVE_INTS = PositiveIntList()


#: table formats an output may take, by file extension
TABLE_FORMATS = {".parquet": "parquet", ".csv": "csv"}


def table_format(path: str | os.PathLike[str], option: str) -> str:
    """``"parquet"`` or ``"csv"`` from ``path``'s extension; any other extension is refused, so a
    table is never written in one format under another's name.

    >>> table_format("runs/x.CSV", "--out")
    'csv'
    >>> table_format("x.xlsx", "OUT")
    Traceback (most recent call last):
    ...
    click.exceptions.BadParameter: x.xlsx: unsupported extension '.xlsx'; expected .parquet or .csv
    """
    suffix = Path(path).suffix.lower()
    if suffix not in TABLE_FORMATS:
        raise click.BadParameter(
            f"{path}: unsupported extension {suffix or '(none)'!r}; expected " + " or ".join(TABLE_FORMATS),
            param_hint=option,
        )
    return TABLE_FORMATS[suffix]


def write_table(df, path: str | os.PathLike[str], fmt: str) -> None:
    """``df`` to ``path`` atomically, as ``fmt`` (:func:`table_format`)."""
    from schedlab.io import atomic_path

    with atomic_path(path) as tmp:
        if fmt == "parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)


def missing_columns(present: Iterable[str], needed: Sequence[str]) -> list[str]:
    """The columns of ``needed`` not in ``present``, in ``needed``'s order."""
    have = set(present)
    return [c for c in needed if c not in have]


def require_columns(
    present: Iterable[str], needed: Sequence[str], path: str | os.PathLike[str], what: str
) -> None:
    """A click error naming ``path``, the missing columns and ``what`` the file should be."""
    present = list(present)
    missing = missing_columns(present, needed)
    if missing:
        shown = ", ".join(map(str, present[:8])) + (", ..." if len(present) > 8 else "")
        raise click.ClickException(
            f"{path}: missing column(s) {', '.join(missing)}; expected {what} "
            f"(its columns: {shown or 'none'})"
        )


def read_csv(path: str | os.PathLike[str], what: str, needed: Sequence[str] = ()):
    """A CSV as a DataFrame with the ``needed`` columns, or a click error naming the file."""
    import pandas as pd

    try:
        df = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise click.ClickException(f"{path}: empty file; expected {what}") from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError) as exc:
        raise click.ClickException(
            f"{path}: cannot be read as CSV ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:120]}); expected {what}"
        ) from None
    require_columns(df.columns, needed, path, what)
    if df.empty:
        raise click.ClickException(f"{path}: has a header but no rows; expected {what}")
    return df
