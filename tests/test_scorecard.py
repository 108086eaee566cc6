"""The scorecard: counts, one row per compared number, the paper-profile command,
a page that works offline, the README block, clear errors, and the DVC stage's dependencies."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from schedlab import paths, reference, scorecard
from schedlab.cli import main

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16  # the scorecard embeds the bytes; it never decodes them


def _entry(id_: str, paper: float, file: str, row: str, **extra) -> dict:
    return {
        "id": id_,
        "quantity": f"quantity {id_}",
        "paper": paper,
        "tolerance": 0.5,
        "source": "Table 1",
        "measured": {"file": file, "where": {"k": row}, "column": "v"},
        **extra,
    }


def _make_root(root: Path) -> Path:
    """Three papers named as the real ones, each with every verdict, a time, figures, and the
    plot sources, compared by :func:`schedlab.reference.write_comparison`."""
    (root / "reference").mkdir(parents=True)
    stages = {}
    for paper in scorecard.PAPERS:
        csv = f"results/{paper}/t.csv"
        values = [
            _entry("fig1.ok", 3, csv, "a"),  # yes
            _entry("fig1.off", 3, csv, "b", note="ours is larger"),  # no
            {**_entry("fig1.shown", 3, csv, "a"), "tolerance": None},  # not asserted
            _entry("table2.big", 9, csv, "absent", profile="paper"),  # paper profile only
            _entry("table2.gap", 9, csv, "absent"),  # missing input
            _entry("table2.fig", 3, csv, "a", figure=f"figures/{paper}/extra.png"),
            {**_entry("table3.seconds", 13, f"results/{paper}/timings/s.csv", "a"), "tolerance": None},
        ]
        (root / "reference" / f"{paper}.yaml").write_text(
            yaml.safe_dump({"paper": f"{paper} title", "values": values})
        )
        (root / "results" / paper / "timings").mkdir(parents=True)
        pd.DataFrame({"k": ["a", "b"], "v": [3.2, 4.0]}).to_csv(root / csv, index=False)
        pd.DataFrame({"k": ["a"], "v": [0.02]}).to_csv(root / f"results/{paper}/timings/s.csv", index=False)
        (root / "figures" / paper).mkdir(parents=True)
        (root / f"figures/{paper}/fig1.png").write_bytes(PNG)  # by convention, for part fig1
        (root / f"figures/{paper}/extra.png").write_bytes(PNG)  # by the entry's figure field
        stages[f"{paper}_tables"] = {"cmd": "x", "outs": [csv]}
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}))
    for name, axis in (("fig3", "load"), ("fig4", "bandwidth_gbps")):
        pd.DataFrame(
            {
                axis: [0.1, 0.1, 0.5, 0.5],
                "scheme": ["nona", "random"] * 2,
                "status": "ok",
                "mean_jct_s": [1.0, 2.0, 3.0, 4.0],
            }
        ).to_csv(root / f"results/nona/{name}.csv", index=False)
    pd.DataFrame(
        {
            "policy": ["AFS", "FIFO"],
            "trace": ["t1", "t1"],
            "norm_avg_jct": [1.0, 9.3],
            "avg_pred_error": [25.6, 0.0],
        }
    ).to_csv(root / "results/pcs/fig7.csv", index=False)
    pd.DataFrame({"rel_error": [0.5, 0.01, 3.0]}).to_csv(
        root / "results/polaris/pipeline_fig5.csv", index=False
    )
    for paper in scorecard.PAPERS:
        table = reference.compare(paper, root, root / "reference")
        (root / f"results/{paper}").mkdir(exist_ok=True)
        # as write_comparison does, with this reference root
        (root / f"results/{paper}/comparison.json").write_text(json.dumps(reference._metrics(paper, table)))
        (root / f"results/{paper}/metrics.json").write_text(json.dumps(reference.numeric_metrics(table)))
        times = reference.compare(paper, root, root / "reference", timings=True)
        (root / f"results/{paper}/timings/comparison.json").write_text(
            json.dumps(reference._metrics(paper, times))
        )
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return _make_root(tmp_path / "repo")


def test_counts_equal_the_comparisons_verdicts(root):
    cards = scorecard.load(root)
    for card in cards:
        summary = json.loads((root / f"results/{card.paper}/comparison.json").read_text())["summary"]
        metrics = json.loads((root / f"results/{card.paper}/metrics.json").read_text())
        assert (
            card.counts()
            == summary
            == {"yes": 2, "no": 1, "not asserted": 1, "paper profile only": 1, "missing input": 1}
        )
        assert {k.replace(" ", "_"): v for k, v in card.counts().items()} | {"compared": 6} == metrics
        assert [r.id for r in card.times] == ["table3.seconds"]  # apart, not in the counts
    md = scorecard.to_markdown(cards, root / "results", root)
    assert "| **total** | 18 | 6 | 3 | 3 | 3 | 3 |" in md


def test_a_comparison_written_before_paper_profile_only_existed_is_read_right(root):
    path = root / "results/pcs/comparison.json"
    doc = json.loads(path.read_text())
    doc["values"]["table2.big"]["match"] = "missing input"  # what the old write_comparison wrote
    path.write_text(json.dumps(doc))
    card = scorecard.load_paper("pcs", root)
    assert card.counts()["paper profile only"] == 1 and card.counts()["missing input"] == 1


def test_every_compared_entry_appears_once_with_its_figures(root):
    cards = scorecard.load(root)
    html = scorecard.to_html(cards, root)
    md = scorecard.to_markdown(cards, root / "results", root)
    times_md, times_html = scorecard.times_markdown(cards), scorecard.times_html(cards)
    for card in cards:
        for row in card.rows:
            assert html.count(f'<span class="id">{row.id}</span>') == len(cards), row.id  # once per paper
            assert md.count(f"| `{row.id}` |") == len(cards), row.id
        for row in card.times:  # times live on their own page: the scorecard's bytes do not depend on them
            assert row.id not in html and row.id not in md, row.id
            assert times_html.count(f'<span class="id">{row.id}</span>') == len(cards), row.id
            assert times_md.count(f"| `{row.id}` |") == len(cards), row.id
    # part fig1 shows figures/<paper>/fig1.png (convention), part table2 the entry's figure field
    assert md.count("](../figures/nona/fig1.png)") == 1 and md.count("](../figures/nona/extra.png)") == 1
    assert html.count("<img ") == 2 * len(cards)
    assert scorecard.figures_shown(cards) == sorted(
        f"figures/{p}/{s}.png" for p in scorecard.PAPERS for s in ("fig1", "extra")
    )


def test_paper_profile_only_rows_carry_the_command(root):
    cards = scorecard.load(root)
    md = scorecard.to_markdown(cards, root / "results", root)
    lines = [ln for ln in md.splitlines() if "| `table2.big` |" in ln]
    assert len(lines) == 3 and all(f"`{scorecard.PAPER_PROFILE_COMMAND}`" in ln for ln in lines)
    gap = [ln for ln in md.splitlines() if "| `table2.gap` |" in ln]
    assert all("missing input (a gap)" in ln and scorecard.PAPER_PROFILE_COMMAND not in ln for ln in gap)
    html = scorecard.to_html(cards, root)
    for chunk in html.split("<tr>"):
        if '<span class="id">table2.big</span>' in chunk:
            assert f"<code>{scorecard.PAPER_PROFILE_COMMAND}</code>" in chunk
            assert "paper profile only" in chunk


def test_html_is_static_and_offline(root):
    html = scorecard.to_html(scorecard.load(root), root)
    assert "<script" not in html.lower()
    links = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html)
    assert links, "expected the page's images and anchors"
    assert not [u for u in links if re.match(r"(?i)(https?:)?//", u)], "the page must not fetch anything"
    assert all(u.startswith(("data:image/png;base64,", "#")) for u in links)
    assert "@import" not in html and "url(" not in html


def test_readme_block_is_replaced_idempotently_and_nothing_else(root, tmp_path):
    cards = scorecard.load(root)
    readme = tmp_path / "README.md"
    before = (
        "# Title\n\nIntro.\n\n<!-- scorecard:start -->\nold table\n<!-- scorecard:end -->\n\n## After\ntext\n"
    )
    readme.write_text(before)
    assert scorecard.update_readme(readme, cards) is True
    once = readme.read_text()
    assert scorecard.update_readme(readme, cards) is False and readme.read_text() == once
    head, rest = once.split(scorecard.START_MARKER)
    block, tail = rest.split(scorecard.END_MARKER)
    assert head == before.split(scorecard.START_MARKER)[0] and tail == before.split(scorecard.END_MARKER)[1]
    assert "old table" not in block and "| **total** |" in block and "| nona | Fig. 1 |" in block
    for bad in (
        "no markers\n",
        f"{scorecard.END_MARKER}\n{scorecard.START_MARKER}\n",
        f"{scorecard.START_MARKER}\n{scorecard.START_MARKER}\n{scorecard.END_MARKER}\n",
    ):
        readme.write_text(bad)
        with pytest.raises(scorecard.ScorecardError, match="README.md"):
            scorecard.update_readme(readme, cards)
        assert readme.read_text() == bad


def test_missing_or_stale_comparison_is_a_clear_error(root):
    (root / "results/pcs/comparison.json").unlink()
    expected = r"results/pcs/comparison\.json: missing; run `schedlab compare pcs`"
    with pytest.raises(scorecard.ScorecardError, match=expected):
        scorecard.load(root)
    result = CliRunner().invoke(main, ["scorecard", "--root", str(root)])
    assert result.exit_code == 1 and "results/pcs/comparison.json: missing" in result.output
    path = root / "results/nona/comparison.json"
    doc = json.loads(path.read_text())
    del doc["values"]["fig1.ok"]
    path.write_text(json.dumps(doc))
    with pytest.raises(scorecard.ScorecardError, match=r"lacks 1 compared id.*'fig1\.ok'.*stale"):
        scorecard.load_paper("nona", root)


def test_cli_writes_both_pages_the_plot_tables_and_the_readme(root):
    (root / "README.md").write_text(f"x\n{scorecard.START_MARKER}\n{scorecard.END_MARKER}\n")
    result = CliRunner().invoke(main, ["scorecard", "--root", str(root), "--readme", str(root / "README.md")])
    assert result.exit_code == 0, result.output
    assert "nona: 2 of 3 asserted within tolerance; 1 shown; 1 paper profile only; 1 MISSING" in result.output
    assert (root / "results/scorecard.html").read_text().startswith("<!doctype html>")
    assert "| `fig1.ok` |" in (root / "results/scorecard.md").read_text()
    fig3 = pd.read_csv(root / "results/plots/nona_fig3.csv")
    assert fig3.columns.tolist() == ["load", "nona", "random"] and fig3["random"].tolist() == [2.0, 4.0]
    cdf = pd.read_csv(root / "results/plots/polaris_fig5a.csv")
    assert cdf["rel_error"].tolist() == [0.01, 0.5, 3.0] and cdf["share_of_jobs"].iloc[-1] == 1.0
    assert pd.read_csv(root / "results/plots/pcs_fig7.csv")["policy_trace"].tolist() == [
        "AFS / t1",
        "FIFO / t1",
    ]
    assert "| **total** |" in (root / "README.md").read_text()


def test_scorecard_stage_depends_on_what_it_reads():
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())
    stage = dvc["stages"]["scorecard"]
    assert stage["cmd"] == "schedlab scorecard"
    outs = {}
    for name, s in dvc["stages"].items():
        for o in s.get("outs", []) + s.get("metrics", []):
            outs[next(iter(o)) if isinstance(o, dict) else o] = name
    needed = {"lib/schedlab/scorecard.py", "lib/schedlab/reference.py", *scorecard.PLOT_SOURCES.values()}
    for paper in scorecard.PAPERS:
        needed |= {f"reference/{paper}.yaml", f"results/{paper}/comparison.json"}
        assert outs[f"results/{paper}/comparison.json"] == f"{paper}_compare"
        assert outs[f"results/{paper}/metrics.json"] == f"{paper}_compare"
        doc = reference.load_reference(paper)
        for v in doc["values"]:
            if v["measured"] is None or reference.is_timing(v):
                continue
            given = v.get("figure")
            figures = (
                (given if isinstance(given, list) else [given])
                if given
                else [f"figures/{paper}/{v['id'].split('.', 1)[0]}.png"]
            )
            for f in figures:
                if given or f in outs:  # a conventional figure counts when some stage makes it
                    assert f in outs, f"{paper}:{v['id']}: no stage makes {f}"
                    needed.add(f)
    missing = sorted(needed - set(stage["deps"]))
    assert not missing, f"scorecard stage lacks deps {missing}"
    assert {f"results/plots/{name}" for name in scorecard.PLOT_SOURCES} | {
        "results/scorecard.md",
        "results/scorecard.html",
    } == set(stage["outs"])
    assert not [d for d in stage["deps"] if f"/{paths.TIMINGS}/" in d]  # times are no DVC outputs


def test_top_level_plots_read_files_the_pipeline_makes():
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())
    outs = {
        next(iter(o)) if isinstance(o, dict) else o for s in dvc["stages"].values() for o in s.get("outs", [])
    }
    files = [f for plot in dvc["plots"] for spec in plot.values() for f in spec["y"]]
    assert files and all(f in outs for f in files), files


def test_numbers_are_formatted_for_reading():
    assert [scorecard.fmt(x) for x in (3, 3.0, 0.123456, 1234.5, 388800.4, None, float("nan"), "n/a")] == [
        "3",
        "3",
        "0.1235",
        "1234",
        "388800",
        "—",
        "—",
        "n/a",
    ]


def test_a_number_read_inside_a_folder_out_names_its_stage():
    by_file = {"results/nona/optimiser": ["nona_optimiser"], "results/nona/table2.csv": ["nona_table2"]}
    assert scorecard._writers(by_file, "results/nona/optimiser/search_space.csv") == ["nona_optimiser"]
    assert scorecard._writers(by_file, "results/nona/table2.csv") == ["nona_table2"]
    assert scorecard._writers(by_file, "results/nona/optimiser_x.csv") == []


def test_the_scorecard_does_not_change_with_the_times(root):
    """Two runs that differ only in their wall-clock times write the same scorecard bytes; the
    times page changes."""
    out = root / "results"
    scorecard.write(root, out, plots=False)
    first = {n: (out / n).read_bytes() for n in ("scorecard.md", "scorecard.html")}
    times_before = (out / "timings" / f"{scorecard.TIMES_NAME}.md").read_text()
    for paper in scorecard.PAPERS:
        path = root / f"results/{paper}/timings/comparison.json"
        doc = json.loads(path.read_text())
        for v in doc["values"].values():
            v["ours"] = 12345.678
        path.write_text(json.dumps(doc))
    scorecard.write(root, out, plots=False)
    assert {n: (out / n).read_bytes() for n in first} == first
    after = (out / "timings" / f"{scorecard.TIMES_NAME}.md").read_text()
    assert after != times_before and "1.235e+04" in after or "12345" in after


# ---------------------------------------------------------------- what produced it


def _git(root: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _committed_root(tmp_path: Path) -> Path:
    root = _make_root(tmp_path / "a")
    (root / "params.yaml").write_text("profile: teaching\n")
    _git(root, "init", "--quiet")
    _git(root, "add", "-A")
    _git(root, "commit", "--quiet", "-m", "fixture")
    return root


def test_the_times_page_states_commit_profile_date_and_machine(tmp_path):
    import platform

    from schedlab import provenance, stagetimes

    root = _committed_root(tmp_path)
    head = _git(root, "rev-parse", "HEAD")
    stagetimes.record(root, "pcs/fig1", profile="teaching", wall_s=2.0, cpu_s=1.0, load=(0.1, 0.2))
    scorecard.write(root, plots=False)
    times = (root / "results" / paths.TIMINGS / f"{scorecard.TIMES_NAME}.md").read_text()
    page = (root / "results" / paths.TIMINGS / f"{scorecard.TIMES_NAME}.html").read_text()
    facts = dict(provenance.rows(provenance.describe(root, stagetimes.runs_summary(root))))
    assert facts["commit"] == head[:10]  # the fixture's tree is clean
    assert facts["profile (params.yaml)"] == "teaching"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", facts["generated"])
    assert (
        facts["machine"].startswith(f"{platform.node()}: ") and f"{os.cpu_count()} cores" in facts["machine"]
    )
    assert facts["their profiles"] == "teaching: 1"
    for text in (times, page):
        assert head[:10] in text and "teaching" in text and platform.node() in text
    (root / "params.yaml").write_text("profile: paper\n")  # an uncommitted edit is said
    assert (
        provenance.label(provenance.git_state(root))
        == f"{head[:10]} (with uncommitted changes to 1 tracked file)"
    )


def test_two_clones_at_one_commit_write_the_same_scorecard(tmp_path):
    """The commit, date and machine live on the times page: the scorecard itself is the same
    bytes in two clones (other paths, other times), and it names where they are."""
    a = _committed_root(tmp_path)
    b = tmp_path / "b"
    _git(tmp_path, "clone", "--quiet", str(a), str(b))
    scorecard.write(a, plots=False)
    scorecard.write(b, plots=False)
    head = _git(a, "rev-parse", "HEAD")
    for name in ("scorecard.md", "scorecard.html"):
        text = (a / "results" / name).read_text()
        assert text == (b / "results" / name).read_text(), name
        assert (
            f"{paths.TIMINGS}/{scorecard.TIMES_NAME}." in text and "commit, profile, date and machine" in text
        )
        assert head[:7] not in text and str(tmp_path) not in text
    for root in (a, b):
        assert head[:10] in (root / "results" / paths.TIMINGS / f"{scorecard.TIMES_NAME}.md").read_text()


def test_stage_runs_count_their_profiles_and_commits(tmp_path):
    from schedlab import provenance, stagetimes

    stagetimes.record(tmp_path, "pcs/fig7", profile="default", wall_s=1.0, cpu_s=1.0, load=(0.0, 0.0))
    old = stagetimes.record(tmp_path, "pcs/fig9", profile="paper", wall_s=1.0, cpu_s=1.0, load=(0.0, 0.0))
    entry = json.loads(old.read_text())
    for key in ("commit", "uncommitted"):  # a record written before commits were kept
        entry.pop(key)
    old.write_text(json.dumps(entry))
    runs = stagetimes.runs_summary(tmp_path)
    assert runs["count"] == 2 and runs["profiles"] == {"default": 1, "paper": 1}
    state = provenance.git_state(paths.ROOT)  # the code that ran is the checkout's
    here = provenance.label(state) if state["commit"] else "not recorded"
    assert runs["commits"] == {here: 1, "not recorded": 1} if state["commit"] else {"not recorded": 2}
    # the old record reads with an empty commit; the new one has the checkout's (none outside git)
    assert stagetimes.table(tmp_path).commit.isna().tolist() == [state["commit"] is None, True]
