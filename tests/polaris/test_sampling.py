import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import sampling
from schedlab.polaris.schema import TABLE_I_SIZES, TABLE_I_TARGET
from schedlab.reference import paper_values


def test_table_i_exact():
    paper = paper_values("polaris", "table1.")
    sizes = sampling.stratum_sizes(TABLE_I_SIZES, TABLE_I_TARGET)
    assert sizes == {w: paper[f"table1.{w}.sampled"] for w in TABLE_I_SIZES}
    assert sum(sizes.values()) == 100_001
    assert sum(TABLE_I_SIZES.values()) == 36_690_185


def test_errors():
    with pytest.raises(ValueError, match="unknown workload"):
        sampling.stratum_sizes({"bert": 10, "gpt5": 3}, 5)
    with pytest.raises(sampling.EmptyStratumError, match="vgg"):
        sampling.stratum_sizes({"bert": 10, "vgg": 0}, 5, strata=["bert", "vgg"])
    with pytest.raises(sampling.EmptyStratumError, match="nmt"):
        sampling.stratum_sizes({"bert": 10_000, "nmt": 1}, 100)
    with pytest.raises(ValueError, match="total"):
        sampling.stratum_sizes({"bert": 10}, 11)


def test_dataframe_and_duckdb_paths_agree(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "row": np.arange(5000),
            "workload": rng.choice(["bert", "ctr", "rl"], 5000, p=[0.6, 0.3, 0.1]),
            "x": rng.random(5000),
        }
    )
    df.to_parquet(tmp_path / "j.parquet")
    a = sampling.stratified_sample(df, 700, np.random.default_rng(42))
    b = sampling.stratified_sample(tmp_path / "j.parquet", 700, np.random.default_rng(42))
    assert a["row"].tolist() == b["row"].tolist()
    assert a["row"].is_unique
    counts = df.workload.value_counts().to_dict()
    assert a.workload.value_counts().to_dict() == sampling.stratum_sizes(counts, 700)


def test_keep_zero_strata():
    sizes = sampling.stratum_sizes({"bert": 10_000, "nmt": 1}, 100, on_zero="keep")
    assert sizes == {"bert": 100, "nmt": 0}
    df = pd.DataFrame({"row": np.arange(10_001), "workload": ["nmt"] + ["bert"] * 10_000})
    out = sampling.stratified_sample(df, 100, np.random.default_rng(0), on_zero="keep")
    assert out.workload.value_counts().to_dict() == {"bert": 100}


def _authors_stratified_sample(df, size, seed):
    """The authors' ``stratified_sample(df, ['workload'], size, seed)`` (their EDA notebook), with
    ``pd.concat`` for the removed ``DataFrame.append``: an independent implementation to check against."""
    grouped = df[["workload"]].assign(size=1).groupby(["workload"]).count().reset_index()
    grouped["samp_size"] = round(size / len(df) * grouped["size"]).astype(int)
    parts = [
        df.query(f"workload == '{w}'").sample(n=n, random_state=seed)
        for w, n in zip(grouped.workload, grouped.samp_size)
    ]
    return pd.concat(parts)


def test_authors_draw_picks_the_rows_of_the_authors_pandas_code():
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "row": np.arange(5000),
            "workload": rng.choice(["bert", "ctr", "graphlearn"], 5000, p=[0.5, 0.3, 0.2]),
        }
    )
    ours = sampling.stratified_sample(df, 700, sampling.AuthorsDraw(sampling.AUTHORS_SEED))
    theirs = _authors_stratified_sample(df, 700, 123)
    assert sorted(ours["row"]) == sorted(theirs["row"]) and len(ours) == len(theirs)
    other = sampling.stratified_sample(df, 700, sampling.AuthorsDraw(124))
    assert sorted(other["row"]) != sorted(ours["row"])  # the seed matters
    with pytest.raises(TypeError, match="AuthorsDraw"):
        sampling.stratified_sample(df, 700, 123)
