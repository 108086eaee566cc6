"""The pipeline writes the planted check's stand-in in a second process while it synthesizes its
main one: the files must be those a foreground run writes, and a failure there must reach the
caller instead of leaving the planted check to run on a missing or partial trace. The same holds
for the planted check itself and for the realism check, which the pipeline also runs in a second
process."""

import hashlib
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from schedlab.polaris import pipeline

KW = dict(planted="authors", join="faithful", memory_limit="1GB")


def _digests(folder: Path) -> dict[str, str]:
    """sha256 of every file's content; of an archive's members' (its headers hold the write time)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.name.endswith(".tar.gz"):
            with tarfile.open(p) as tar:
                for m in tar.getmembers():
                    out[f"{p.name}/{m.name}"] = hashlib.sha256(tar.extractfile(m).read()).hexdigest()
        elif p.is_file():
            out[p.relative_to(folder).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_background_stand_in_equals_the_foreground_one(tmp_path):
    back, back_join = pipeline.prepare_planted_in_background(tmp_path / "back", 300, 1, **KW).result(
        timeout=600
    )
    front, front_join = pipeline.prepare_planted(tmp_path / "front", 300, 1, **KW)
    assert back_join.rows == front_join.rows and back_join.per_workload == front_join.per_workload
    assert back.name == front.name == "synthetic_300_1_planted-authors-s0.1"
    trace = _digests(back / "trace")
    assert (
        "pai_task_table.tar.gz/pai_task_table.csv" in trace and pipeline.planted_mod.PLANTED_LABELS in trace
    )
    assert trace == _digests(front / "trace")
    assert _digests(back / "parquet") == _digests(front / "parquet")


def test_a_failure_in_the_background_is_raised_by_result(tmp_path):
    future = pipeline.prepare_planted_in_background(
        tmp_path, 300, 1, **{**KW, "planted": "no-such-structure"}
    )
    with pytest.raises(ValueError, match="no-such-structure"):
        future.result(timeout=600)
    assert not (
        pipeline.work_dir(tmp_path, "", 300, 1, "no-such-structure") / "trace" / "pai_task_table.tar.gz"
    ).exists()


def test_background_planted_check_equals_the_foreground_one(tmp_path):
    from schedlab.polaris import grid

    kw = dict(**KW, sample_total=400, keep_zero_strata=True)
    chosen = grid.Config("hdbscan", "robust_scaler", "euclidean", 10)
    back_rec, back_df = pipeline.planted_recovery_in_background(
        tmp_path / "back", 300, 1, chosen, **kw
    ).result(timeout=600)
    front_rec, front_df = pipeline.planted_recovery_run(tmp_path / "front", 300, 1, chosen, **kw)
    assert back_rec == front_rec and back_rec["found_profiles"] > 1
    assert back_df.equals(front_df)


def test_background_realism_equals_the_foreground_one():
    only_ctr = {
        "min_rows": 303
    }  # the one workload with more real rows (393) than bert (302): a shorter check
    back = pipeline.realism_in_background(2, 3, **only_ctr).result(timeout=600)
    front = pipeline.realism(2, 3, **only_ctr)
    assert back.workload.tolist() == ["ctr", "all"] and {"auc", "auc_cat", "coverage"} <= set(back.columns)
    pd.testing.assert_frame_equal(back, front, check_exact=True)
