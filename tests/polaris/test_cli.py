import pandas as pd
from click.testing import CliRunner

from schedlab.cli import main
from schedlab.polaris import pipeline


def test_profile_cli_chain(tmp_path):
    r = CliRunner()
    res = r.invoke(main, ["polaris", "synthesize", str(tmp_path / "t"), "--jobs", "300", "--seed", "2"])
    assert res.exit_code == 0, res.output
    assert "SYNTHETIC" in res.output
    res = r.invoke(
        main, ["polaris", "ingest", str(tmp_path / "t"), str(tmp_path / "w"), "--memory-limit", "1GB"]
    )
    assert res.exit_code == 0, res.output
    assert "faithful join" in res.output
    res = r.invoke(
        main,
        [
            "polaris",
            "sample",
            str(tmp_path / "w" / "joined_faithful.parquet"),
            str(tmp_path / "s.parquet"),
            "--total",
            "500",
        ],
    )
    assert res.exit_code == 0, res.output
    # the pipeline's path: the plan gives the same rows as the joined table, and the notebook's seeding
    res = r.invoke(
        main,
        [
            "polaris",
            "ingest",
            str(tmp_path / "t"),
            str(tmp_path / "w2"),
            "--memory-limit",
            "1GB",
            "--materialize",
            "never",
        ],
    )
    assert res.exit_code == 0 and "rows planned" in res.output, res.output
    res = r.invoke(
        main,
        [
            "polaris",
            "sample",
            str(tmp_path / "w2" / "plan_faithful.parquet"),
            str(tmp_path / "s2.parquet"),
            "--total",
            "500",
        ],
    )
    assert res.exit_code == 0, res.output
    a, b = pd.read_parquet(tmp_path / "s.parquet"), pd.read_parquet(tmp_path / "s2.parquet")
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b[a.columns].reset_index(drop=True))
    notebook = pipeline.draw_sample(
        tmp_path / "w" / "joined_faithful.parquet", 500, 0, keep_zero_strata=False
    )
    assert a["row"].tolist() == notebook["row"].tolist()
    res = r.invoke(
        main,
        [
            "polaris",
            "sample",
            str(tmp_path / "w2" / "plan_faithful.parquet"),
            str(tmp_path / "s3.parquet"),
            "--total",
            "500",
            "--authors-seed",
            "123",
        ],
    )
    assert res.exit_code == 0, res.output
    assert pd.read_parquet(tmp_path / "s3.parquet")["row"].tolist() != a["row"].tolist()
    res = r.invoke(
        main,
        [
            "polaris",
            "grid",
            str(tmp_path / "s.parquet"),
            str(tmp_path / "g.csv"),
            "--cache",
            str(tmp_path / "c"),
            "--algorithms",
            "hdbscan",
            "--min-cluster-sizes",
            "25",
        ],
    )
    assert res.exit_code == 0, res.output
    res = r.invoke(
        main,
        [
            "polaris",
            "train",
            str(tmp_path / "s.parquet"),
            str(tmp_path / "g.csv"),
            str(tmp_path / "m.joblib"),
            "--cache",
            str(tmp_path / "c"),
        ],
    )
    if "at least two profiles" not in res.output:
        assert res.exit_code == 0, res.output
        res = r.invoke(
            main,
            [
                "polaris",
                "predict",
                str(tmp_path / "m.joblib"),
                str(tmp_path / "s.parquet"),
                str(tmp_path / "p.csv"),
            ],
        )
        assert res.exit_code == 0, res.output


def test_profile_cli_errors(tmp_path):
    r = CliRunner()
    res = r.invoke(main, ["polaris", "ingest", str(tmp_path), str(tmp_path / "w")])
    assert res.exit_code != 0 and "missing archives" in res.output
    res = r.invoke(main, ["polaris", "synthesize", str(tmp_path / "t"), "--jobs", "huge"])
    assert res.exit_code != 0 and "preset" in res.output


def test_wrong_files_get_clear_errors_and_write_nothing(tmp_path):
    r = CliRunner()
    csv = tmp_path / "joined.csv"
    csv.write_text("a,b\n1,2\n")
    res = r.invoke(main, ["polaris", "sample", str(csv), str(tmp_path / "s.parquet")])
    assert res.exit_code == 1 and "joined.csv: not a Parquet file" in res.output, res.output
    assert "Traceback" not in res.output and not (tmp_path / "s.parquet").exists()
    junk = tmp_path / "model.joblib"
    junk.write_bytes(b"\x00junk that is no pickle")
    res = r.invoke(main, ["polaris", "predict", str(junk), str(csv), str(tmp_path / "p.csv")])
    assert (
        res.exit_code == 1
        and "model.joblib: not a model file saved by `schedlab polaris train`" in res.output
    )
    import joblib

    joblib.dump({"not": "a classifier"}, junk)
    res = r.invoke(main, ["polaris", "predict", str(junk), str(csv), str(tmp_path / "p.csv")])
    assert res.exit_code == 1 and "holds a dict, not the ProfileClassifier" in res.output
    assert not (tmp_path / "p.csv").exists()
