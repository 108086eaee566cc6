"""Table I: stratified sampling of the joined table by ``workload``, as the authors.

Two sources, one rule: a materialised join (:func:`stratified_sample`, a Parquet file or a
DataFrame) or a join plan (:func:`sample_plan`, :func:`schedlab.polaris.ingest.plan_join`); both
size the strata with :func:`stratum_sizes` and draw with :func:`draw_positions`, so the same ``rng``
gives the same rows.

Per-stratum size ``n_w = round(N_w * total / N)`` (numpy rounding): with ``total = 100,000`` the
real counts give exactly the paper's per-workload sizes, which sum to 100,001 — the odd total of
the paper comes from this per-stratum rounding. Rows are drawn without replacement inside each
stratum with an explicit ``numpy.random.Generator``, or as the authors did with :class:`AuthorsDraw`:
their ``stratified_sample(selected_df, ['workload'], size=100000, seed=123)``
(``polaris-slo-cloud/Profiling`` ``case-studies/alibaba/03-eda.ipynb``) calls
``df.query(stratum).sample(n=n, random_state=123)`` once per stratum, i.e. a fresh
``numpy.random.RandomState(123).choice(N_w, n_w, replace=False)`` each time
(:data:`AUTHORS_SEED`). The same positions pick the same rows only if the stratum's rows are in
the authors' order, that of their pandas join; here a stratum is in ``row`` order.

Examples
--------
>>> from schedlab.polaris.schema import TABLE_I_SIZES
>>> sum(stratum_sizes(TABLE_I_SIZES, 100_000).values())
100001
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.polaris import ingest
from schedlab.polaris.schema import WORKLOADS


#: the ``seed`` of the authors' Table I sampling (their EDA notebook, see the module docstring)
AUTHORS_SEED = 123


class EmptyStratumError(ValueError):
    """A requested stratum has no rows (or would get none)."""


@dataclass(frozen=True)
class AuthorsDraw:
    """Draw as the authors' pandas code: per stratum ``DataFrame.sample(n, random_state=seed)``,
    a fresh legacy ``RandomState(seed)`` each (pass instead of a ``numpy.random.Generator``).

    >>> pos = AuthorsDraw(123).positions(10, 3)
    >>> pos.tolist() == sorted(pd.DataFrame({"x": range(10)}).sample(n=3, random_state=123).index)
    True
    """

    seed: int = AUTHORS_SEED

    def positions(self, n_rows: int, k: int) -> np.ndarray:
        """The ``k`` positions of ``n_rows`` pandas' ``sample(n=k, random_state=seed)`` keeps, sorted."""
        return np.sort(np.random.RandomState(self.seed).choice(n_rows, size=k, replace=False))


def stratum_sizes(
    counts: dict[str, int], total: int, *, strata=None, on_zero: str = "error"
) -> dict[str, int]:
    """Rows to draw per stratum: ``round(N_w * total / N)``.

    A stratum with rows that rounds to 0 draws is an error unless ``on_zero="keep"`` (it then
    contributes 0 rows, as a pandas ``sample(n=0)`` in the authors' code would)."""
    strata = list(strata) if strata is not None else [w for w in WORKLOADS if w in counts]
    unknown = sorted(set(counts) - set(WORKLOADS))
    if unknown:
        raise ValueError(f"unknown workload names {unknown}; expected a subset of {list(WORKLOADS)}")
    empty = [w for w in strata if counts.get(w, 0) <= 0]
    if empty:
        raise EmptyStratumError(f"empty strata {empty}: the joined table has no rows for them")
    n = sum(counts[w] for w in strata)
    if not 0 < total <= n:
        raise ValueError(f"total must be in 1..{n} (rows in the strata), got {total}")
    sizes = {w: int(np.round(counts[w] * total / n)) for w in strata}
    zero = [w for w, k in sizes.items() if k == 0]
    if on_zero not in ("error", "keep"):
        raise ValueError(f"on_zero must be 'error' or 'keep', got {on_zero!r}")
    if zero and on_zero == "error":
        raise EmptyStratumError(f"strata {zero} get 0 rows at total={total}; raise total or drop them")
    return {w: min(k, counts[w]) for w, k in sizes.items()}


def draw_positions(
    counts: dict[str, int], sizes: dict[str, int], rng: np.random.Generator | AuthorsDraw
) -> pd.DataFrame:
    """Positions (0-based, inside each stratum's row order) to keep: columns ``workload, k``
    (``rng`` an :class:`AuthorsDraw`: the authors' per-stratum pandas draws)."""
    if isinstance(rng, AuthorsDraw):

        def pick(n: int, k: int) -> np.ndarray:
            return rng.positions(n, k)
    elif isinstance(rng, np.random.Generator):

        def pick(n: int, k: int) -> np.ndarray:
            return np.sort(rng.choice(n, size=k, replace=False))
    else:
        raise TypeError(f"rng must be a numpy.random.Generator or an AuthorsDraw, got {type(rng).__name__}")
    parts = [pd.DataFrame({"workload": w, "k": pick(counts[w], k)}) for w, k in sizes.items() if k > 0]
    return pd.concat(parts, ignore_index=True)


def stratified_sample(
    joined: str | Path | pd.DataFrame,
    total: int,
    rng: np.random.Generator | AuthorsDraw,
    *,
    strata=None,
    on_zero: str = "error",
    con=None,
    memory_limit: str = "4GB",
    temp_directory: str | Path | None = None,
) -> pd.DataFrame:
    """Sample ``joined`` (a Parquet path, read with DuckDB out of core, or a DataFrame with a
    ``row`` column) by workload; the result is ordered by workload then ``row``.

    ``memory_limit`` / ``temp_directory`` bound the DuckDB connection opened when ``con`` is not
    given (default spill folder: ``.duckdb_tmp`` next to the Parquet file)."""
    if isinstance(joined, pd.DataFrame):
        df = joined.sort_values("row") if "row" in joined else joined
        counts = df["workload"].value_counts().to_dict()
        sizes = stratum_sizes(counts, total, strata=strata, on_zero=on_zero)
        picks = draw_positions(counts, sizes, rng)
        df = df.assign(k=df.groupby("workload").cumcount())
        out = df.merge(picks, on=["workload", "k"]).drop(columns="k")
        return out.sort_values(["workload", *(["row"] if "row" in out else [])]).reset_index(drop=True)
    own = con is None
    con = con or ingest.connect(
        memory_limit, 2, temp_directory or Path(joined).parent / ".duckdb_tmp", progress=False
    )
    try:
        src = f"read_parquet('{Path(joined).as_posix()}')"
        counts = ingest.workload_counts(con, joined)
        sizes = stratum_sizes(counts, total, strata=strata, on_zero=on_zero)
        picks = draw_positions(counts, sizes, rng)
        # positions -> row ids, reading only the narrow (workload, row) columns; the wide rows are
        # fetched once at the end with a semi-join (much cheaper than a window over every column)
        ids = []
        for w, part in picks.groupby("workload", sort=False):
            rows = con.execute(
                f'SELECT "row" FROM {src} WHERE workload = ? ORDER BY "row"', [w]
            ).fetchnumpy()["row"]
            ids.append(np.asarray(rows)[part["k"].to_numpy()])
        con.register("picks", pd.DataFrame({"row": np.concatenate(ids) if ids else np.array([], np.int64)}))
        out = con.execute(f"""
            SELECT x.* FROM {src} x SEMI JOIN picks p ON p."row" = x."row"
            ORDER BY x.workload, x."row" """).fetch_df()
    finally:
        if own:
            con.close()
    return out


def sample_plan(
    plan: str | Path,
    total: int,
    rng: np.random.Generator | AuthorsDraw,
    *,
    strata=None,
    on_zero: str = "error",
) -> pd.DataFrame:
    """Table I's stratified sample drawn from a join plan (:func:`schedlab.polaris.ingest.plan_join`).

    The same rule and draws as :func:`stratified_sample` on the materialised join (per-stratum
    sizes, then :func:`draw_positions` with ``rng``), so the same ``rng`` gives the same rows; only
    the drawn rows are built (:func:`schedlab.polaris.ingest.build_rows`).

    Parameters
    ----------
    plan : str or Path
        A join plan written by :func:`schedlab.polaris.ingest.plan_join`.
    total : int
        Rows to draw over all strata (before per-stratum rounding).
    rng : numpy.random.Generator or AuthorsDraw
        Source of the draws (:class:`AuthorsDraw`: as the authors' pandas code).
    strata : iterable of str, optional
        Workloads to sample (default: every workload of the plan).
    on_zero : {"error", "keep"}
        What to do with a stratum that rounds to 0 rows (see :func:`stratum_sizes`).

    Returns
    -------
    pandas.DataFrame
        The joined rows drawn, ordered by workload then ``row``.
    """
    units, _ = ingest.read_plan(plan)
    counts = ingest.plan_counts(units)
    sizes = stratum_sizes(counts, total, strata=strata, on_zero=on_zero)
    picks = draw_positions(counts, sizes, rng)
    rows = [
        ingest.stratum_rows(units, w, part["k"].to_numpy())
        for w, part in picks.groupby("workload", sort=False)
    ]
    out = ingest.build_rows(plan, np.concatenate(rows) if rows else np.array([], np.int64), units=units)
    return out.sort_values(["workload", "row"], kind="stable").reset_index(drop=True)
