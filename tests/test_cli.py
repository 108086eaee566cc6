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
