"""A synthetic work folder (trace, Parquet, join, grid runs) is reused only by the generator
version that wrote it: a changed generator must not be handed the old generator's trace."""

from pathlib import Path

import numpy as np

from schedlab.polaris import pipeline


def _fake_synthesize(calls: list):
    def synth(tdir, n_jobs, rng, **kw):
        calls.append(n_jobs)
        Path(tdir).mkdir(parents=True, exist_ok=True)
        (Path(tdir) / "pai_task_table.tar.gz").write_bytes(rng.bytes(8))

    return synth


def test_work_folder_of_another_generator_is_rebuilt(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(pipeline.synthetic, "synthesize", _fake_synthesize(calls))
    work = pipeline.work_dir(tmp_path, "", 50, 0)
    pipeline.trace_folder("", work, 50, 0)
    (work / "grid_cache").mkdir()  # something derived from the trace
    pipeline.trace_folder("", work, 50, 0)
    assert calls == [50]  # same generator: reused
    assert (work / "grid_cache").is_dir()
    monkeypatch.setattr(pipeline, "generator_fingerprint", lambda: "0" * 64)
    pipeline.trace_folder("", work, 50, 0)
    assert calls == [50, 50]  # another generator: trace written again ...
    assert not (work / "grid_cache").exists()  # ... and what came from the old one is gone
    assert (work / pipeline.GENERATOR_STAMP).read_text() == "0" * 64


def test_folder_without_stamp_is_treated_as_another_generator(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(pipeline.synthetic, "synthesize", _fake_synthesize(calls))
    work = pipeline.work_dir(tmp_path, "", 50, 0)
    (work / "trace").mkdir(parents=True)
    (work / "trace" / "pai_task_table.tar.gz").write_bytes(b"old")  # a cache from before stamps
    pipeline.trace_folder("", work, 50, 0)
    assert calls == [50]
    assert (work / "trace" / "pai_task_table.tar.gz").read_bytes() != b"old"


def test_fingerprint_follows_the_generator_source():
    fp = pipeline.generator_fingerprint()
    assert fp == pipeline.generator_fingerprint()
    assert len(fp) == 64 and int(fp, 16) >= 0
    assert np.all(
        [(Path(pipeline.__file__).parent / f"{m}.py").is_file() for m in pipeline.GENERATOR_MODULES]
    )
