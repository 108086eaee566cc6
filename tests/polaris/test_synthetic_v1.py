"""The earlier v1 generator, which moved to ``benchmarks/_synthetic_v1.py`` (only benchmarks use it)."""

import importlib.util
import sys
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from schedlab.polaris.schema import FEATURES, TABLES, TRACE_TABLES

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "_synthetic_v1.py"


def _load_v1():
    """``benchmarks/_synthetic_v1.py`` as a module (benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("_synthetic_v1", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


v1 = _load_v1()


@pytest.fixture(scope="module")
def calib_v1(calib_rows):
    return v1.calibrate_v1(calib_rows)


def test_copula_reproduces_marginals_and_dependence(calib_rows, calib_v1):
    rng = np.random.default_rng(0)
    cop = calib_v1.copulas["ctr"]
    real = calib_rows[calib_rows.workload == "ctr"]
    draw = pd.DataFrame(cop.sample(20_000, rng), columns=v1.COPULA_COLUMNS)
    for col in ("cpu_usage", "max_mem", "read", "duration"):
        assert stats.ks_2samp(draw[col], real[col]).statistic < 0.1, col
    for a, b in (("avg_mem", "max_mem"), ("read", "read_count"), ("avg_gpu_wrk_mem", "max_gpu_wrk_mem")):
        r_real = stats.spearmanr(real[a], real[b]).statistic
        r_syn = stats.spearmanr(draw[a], draw[b]).statistic
        assert abs(r_real - r_syn) < 0.15, (a, b, r_real, r_syn)
    # discrete columns only take observed values
    assert set(np.unique(draw.plan_mem)) <= set(real.plan_mem)


def test_sources_documented(calib_v1):
    assert calib_v1.source["ctr"].startswith("own copula")
    assert "pooled correlation" in calib_v1.source["resnet"]
    assert calib_v1.source["vgg"] == "pooled model (no real rows)"


def test_size_bias_resample_weights():
    # weights inst_num ** -1: rows with 1 and 4 instances, half each -> P(1) = 1 / (1 + 1/4) = 0.8
    r = pd.DataFrame(
        {"workload": ["bert"] * 4000 + ["ctr"] * 10, "inst_num": [1, 4] * 2005, "k": range(4010)}
    )
    out = v1.size_bias_resample(r, 1.0, np.random.default_rng(0))
    assert out.workload.value_counts().to_dict() == {"bert": 4000, "ctr": 10}  # strata sizes kept
    assert abs((out[out.workload == "bert"].inst_num == 1).mean() - 0.8) < 0.03  # ~5 sd of binomial noise
    assert (
        set(out.k) <= set(r.k) and (out.merge(r, on="k").inst_num_x == out.merge(r, on="k").inst_num_y).all()
    )


def _csv(trace: Path, table: str) -> bytes:
    with tarfile.open(trace / f"{table}.tar.gz") as tar:
        return tar.extractfile(tar.getmember(f"{table}.csv")).read()


def test_v1_writes_the_upstream_tables_reproducibly(tmp_path, calib_v1):
    a = v1.synthesize_v1(tmp_path / "a", 40, np.random.default_rng(0), calibration=calib_v1, progress=False)
    b = v1.synthesize_v1(tmp_path / "b", 40, np.random.default_rng(0), calibration=calib_v1, progress=False)
    assert a == b and a["pai_job_table"] == 40
    for t in TRACE_TABLES:  # same seed, same bytes; every row has the upstream field count
        assert _csv(tmp_path / "a", t) == _csv(tmp_path / "b", t)
        assert {line.count(",") for line in _csv(tmp_path / "a", t).decode().splitlines()} == {
            len(TABLES[t]) - 1
        }
    with pytest.raises(ValueError, match="size_bias_power"):
        v1.synthesize_v1(
            tmp_path / "c", 40, np.random.default_rng(0), calibration=calib_v1, size_bias_power=1.0
        )
    with pytest.raises(ValueError, match="preset"):
        v1.synthesize_v1(tmp_path / "d", "huge", np.random.default_rng(0), calibration=calib_v1)


def test_v1_rows_are_one_row_per_job(calib_rows):
    rows = v1.v1_rows(calib_rows, {"bert": 5}, np.random.default_rng(0), n_jobs=2_000)
    from schedlab.polaris.realism import DISCRETE

    assert list(rows.columns) == ["workload", "job_name", *DISCRETE, *FEATURES]
    assert len(rows) > 0 and rows.workload.isin(calib_rows.workload.unique().tolist() + ["rl", "vgg"]).all()
