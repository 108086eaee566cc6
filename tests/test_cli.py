"""The top-level commands: clear errors that say what exists."""

from __future__ import annotations

from click.testing import CliRunner

from schedlab.cli import main


def test_compare_an_unknown_paper_lists_the_papers():
    res = CliRunner().invoke(main, ["compare", "foo"])
    assert res.exit_code == 2
    assert "no reference/foo.yaml; the papers are: nona, pcs, polaris" in res.output
    assert "Errno" not in res.output


def test_notebook_run_an_unknown_notebook_lists_the_notebooks():
    res = CliRunner().invoke(main, ["notebook", "run", "nona/nope"])
    assert res.exit_code == 1
    assert "known notebooks:" in res.output and "nona/fig3" in res.output


def test_notebook_run_an_unknown_profile_is_refused():
    res = CliRunner().invoke(main, ["notebook", "run", "nona/table2", "--profile", "huge"])
    assert res.exit_code == 2 and "'huge' is not one of" in res.output


def test_every_paper_has_its_own_command_group():
    assert {"nona", "pcs", "polaris"} <= set(main.commands)
    assert "profile" not in main.commands  # PolarisProfiler has one name: polaris


def test_notebook_run_elsewhere_keeps_the_executed_copy_there(tmp_path, monkeypatch):
    # the executed copy of a run into --output-root goes under that root, not over the
    # repository's data/executed/ (a DVC output of the pipeline stage)
    from schedlab import notebooks

    seen = {}

    def fake_run(name, **kw):
        seen.update(kw, name=name)
        return kw["executed"]

    monkeypatch.setattr(notebooks, "run", fake_run)
    res = CliRunner().invoke(
        main, ["notebook", "run", "pcs/fig11", "--output-root", str(tmp_path), "--profile", "paper"]
    )
    assert res.exit_code == 0, res.output
    assert seen["executed"] == tmp_path / "data" / "executed" / "pcs" / "fig11.ipynb"
    assert seen["output_root"] == tmp_path and seen["profile"] == "paper"
    assert str(tmp_path) in res.output
