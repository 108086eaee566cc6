from click.testing import CliRunner

from schedlab.cli import main


def test_profile_cli_chain(tmp_path):
    r = CliRunner()
    res = r.invoke(main, ["profile", "synthesize", str(tmp_path / "t"), "--jobs", "300", "--seed", "2"])
    assert res.exit_code == 0, res.output
    assert "SYNTHETIC" in res.output
    res = r.invoke(main, ["profile", "ingest", str(tmp_path / "t"), str(tmp_path / "w"), "--memory-limit", "1GB"])
    assert res.exit_code == 0, res.output
    assert "faithful join" in res.output
    res = r.invoke(main, ["profile", "sample", str(tmp_path / "w" / "joined_faithful.parquet"),
                          str(tmp_path / "s.parquet"), "--total", "500"])
    assert res.exit_code == 0, res.output
    res = r.invoke(main, ["profile", "grid", str(tmp_path / "s.parquet"), str(tmp_path / "g.csv"), "--cache",
                          str(tmp_path / "c"), "--algorithms", "hdbscan", "--min-cluster-sizes", "25"])
    assert res.exit_code == 0, res.output
    res = r.invoke(main, ["profile", "train", str(tmp_path / "s.parquet"), str(tmp_path / "g.csv"),
                          str(tmp_path / "m.joblib"), "--cache", str(tmp_path / "c")])
    if "at least two profiles" not in res.output:
        assert res.exit_code == 0, res.output
        res = r.invoke(main, ["profile", "predict", str(tmp_path / "m.joblib"), str(tmp_path / "s.parquet"),
                              str(tmp_path / "p.csv")])
        assert res.exit_code == 0, res.output


def test_profile_cli_errors(tmp_path):
    r = CliRunner()
    res = r.invoke(main, ["profile", "ingest", str(tmp_path), str(tmp_path / "w")])
    assert res.exit_code != 0 and "missing archives" in res.output
    res = r.invoke(main, ["profile", "synthesize", str(tmp_path / "t"), "--jobs", "huge"])
    assert res.exit_code != 0 and "preset" in res.output
