"""The scorecard: how the whole reproduction went, on one page.

Reads ``results/<paper>/comparison.json`` (written by ``schedlab compare <paper>``) and
``reference/<paper>.yaml`` for every paper, and writes

- ``results/scorecard.md``: per paper and in total, the counts per verdict, then every
  compared number (quantity, paper value, ours, tolerance, verdict, note, source) grouped by
  the figure or table it comes from, with that figure linked (relative path);
- ``results/scorecard.html``: the same, static, no script and no network; the figures are
  embedded (base64 PNG), so the page stands alone when copied or mailed;
- optionally the block between ``<!-- scorecard:start -->`` and ``<!-- scorecard:end -->`` of
  the README: one row per part (a figure or table of a paper), what it reproduces and how close.

Verdicts (the ``match`` of :func:`schedlab.reference.compare`):

========================  ==============================================================
``yes``                   reproduced within the tolerance
``no``                    not reproduced (outside the tolerance)
``not asserted``          shown next to the paper's, no tolerance (e.g. a different scale)
``paper profile only``    an entry marked ``profile: paper``: only ``make reproduce
                          PROFILE=paper`` computes it, the default profile leaves it empty
``missing input``         any other empty value: a real gap in the run
========================  ==============================================================

Times (``results/<paper>/timings/comparison.json``) vary with the machine: they are written
apart, to ``results/timings/scorecard_times.{md,html}`` (:data:`TIMES_NAME`; like every file
under ``timings/`` not a pipeline output), and never counted in the verdict totals, so that
``scorecard.{md,html}`` are the same bytes on every run of the same inputs.

Provenance follows the same rule. The commit, the profile, the date and the machine that
produced a scorecard (:func:`schedlab.provenance.describe`: also the profiles and commits of
the stage runs behind its numbers, which ``dvc repro`` may have left from earlier commits) open
the times page; ``scorecard.{md,html}`` name that page in their header instead of carrying the
facts, so two clones at the same commit on two machines write the same scorecard bytes.

Figures beside the claims: an entry's figures are its optional ``figure:`` field (a path or a
list, relative to the root), else, by convention, ``figures/<paper>/<part>.png`` where
``<part>`` is the id up to the first dot (``fig3.gain_avg.nona`` -> ``figures/nona/fig3.png``)
if that file exists. Each part shows the union of its entries' figures once.

Examples
--------
>>> part_label("fig8b"), part_label("table2"), part_label("hopkins")
('Fig. 8b', 'Table 2', 'hopkins')
>>> replace_block("a\\n<!-- scorecard:start -->\\nold\\n<!-- scorecard:end -->\\nb\\n", "new", "README.md")
'a\\n<!-- scorecard:start -->\\nnew\\n<!-- scorecard:end -->\\nb\\n'
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from schedlab import paths, provenance
from schedlab.io import atomic_write_text
from schedlab.reference import VERDICTS, load_reference, shown_verdicts

PAPERS = ("nona", "pcs", "polaris")
#: the command that fills the values marked ``profile: paper``
PAPER_PROFILE_COMMAND = "make reproduce PROFILE=paper"
START_MARKER = "<!-- scorecard:start -->"
END_MARKER = "<!-- scorecard:end -->"

#: verdict -> (text shown, CSS class, symbol): the text carries the meaning, colour only helps
VERDICT_STYLE = {
    "yes": ("reproduced within tolerance", "ok", "✔"),
    "no": ("not reproduced", "bad", "✘"),
    "not asserted": ("shown, not asserted", "info", "○"),
    "paper profile only": ("paper profile only", "paper", "◐"),
    "missing input": ("missing input (a gap)", "gap", "⚠"),
    "different setup": ("different setup (run with other values than the paper's)", "info", "≠"),
    "fitted": ("fitted (used to choose an unstated setting: not evidence)", "info", "◇"),
}
assert tuple(VERDICT_STYLE) == VERDICTS


class ScorecardError(ValueError):
    """An input of the scorecard is missing or does not match its reference file."""


@dataclass
class Row:
    id: str
    quantity: str
    paper: Any
    ours: Any
    tolerance: str
    verdict: str
    note: str
    source: str
    figures: list[str]

    @property
    def part(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass
class PaperCard:
    paper: str
    title: str
    rows: list[Row]
    times: list[Row]
    #: part -> DVC stages writing the files its numbers are read from
    stages: dict[str, list[str]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return count_verdicts(self.rows)

    def parts(self) -> dict[str, list[Row]]:
        out: dict[str, list[Row]] = {}
        for r in self.rows:
            out.setdefault(r.part, []).append(r)
        return out


def count_verdicts(rows: list[Row]) -> dict[str, int]:
    """Rows per verdict: every regular verdict (zeros too), an occasional one where it occurs."""
    return {v: sum(r.verdict == v for r in rows) for v in shown_verdicts(r.verdict for r in rows)}


def _verdicts(cards: list["PaperCard"]) -> tuple[str, ...]:
    """The verdict columns of a scorecard: the regular ones, and an occasional one that occurs."""
    return shown_verdicts(r.verdict for c in cards for r in c.rows)


def part_label(part: str) -> str:
    """``fig3`` -> ``Fig. 3``, ``table2`` -> ``Table 2``; other parts as they are."""
    m = re.fullmatch(r"(fig|table)(\d+\w*)", part)
    if not m:
        return part
    return f"{'Fig.' if m.group(1) == 'fig' else 'Table'} {m.group(2)}"


# ---------------------------------------------------------------- reading


def _read_comparison(path: Path, paper: str) -> dict[str, dict]:
    if not path.is_file():
        raise ScorecardError(
            f"{path}: missing; run `schedlab compare {paper}` (DVC stage {paper}_compare) first"
        )
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ScorecardError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("values"), dict):
        raise ScorecardError(f"{path}: expected a mapping with a 'values' mapping (id -> row)")
    return doc["values"]


def _entry_figures(entry: dict, paper: str, root: Path) -> list[str]:
    given = entry.get("figure")
    if given is not None:
        figures = given if isinstance(given, list) else [given]
        for f in figures:
            if not (root / f).is_file():
                raise ScorecardError(
                    f"reference/{paper}.yaml: entry {entry['id']!r}: figure {f} does not exist under {root}"
                )
        return list(figures)
    conventional = f"figures/{paper}/{str(entry['id']).split('.', 1)[0]}.png"
    return [conventional] if (root / conventional).is_file() else []


def _verdict(match: str, entry: dict, where: str) -> str:
    if match not in VERDICTS:
        raise ScorecardError(f"{where}: unknown match {match!r}; expected one of {', '.join(VERDICTS)}")
    # comparisons written before 'paper profile only' existed call these 'missing input'
    if match == "missing input" and entry.get("profile") == "paper":
        return "paper profile only"
    return match


def _rows(values: dict[str, dict], entries: dict[str, dict], path: Path, paper: str, root: Path) -> list[Row]:
    rows = []
    for id_, got in values.items():
        if id_ not in entries:
            raise ScorecardError(
                f"{path}: id {id_!r} is not in reference/{paper}.yaml; the comparison is "
                f"stale, run `schedlab compare {paper}`"
            )
        entry = entries[id_]
        rows.append(
            Row(
                id=id_,
                quantity=str(entry["quantity"]),
                paper=got.get("paper", entry["paper"]),
                ours=got.get("ours"),
                tolerance=str(got.get("tolerance", "")),
                verdict=_verdict(got.get("match", ""), entry, f"{path}: {id_}"),
                note=str(entry.get("note") or "").strip(),
                source=str(entry["source"]),
                figures=_entry_figures(entry, paper, root),
            )
        )
    return rows


def _stages_by_file(root: Path) -> dict[str, list[str]]:
    dvc_file = root / "dvc.yaml"
    if not dvc_file.is_file():
        raise ScorecardError(f"{dvc_file}: missing; the scorecard names the stage behind each number from it")
    stages = (yaml.safe_load(dvc_file.read_text()) or {}).get("stages") or {}
    by_file: dict[str, list[str]] = {}
    for name, stage in stages.items():
        for key in ("outs", "metrics", "plots"):
            for out in stage.get(key) or []:
                by_file.setdefault(next(iter(out)) if isinstance(out, dict) else out, []).append(name)
    return by_file


def _writers(by_file: dict[str, list[str]], file: str) -> list[str]:
    """The stages that write ``file``: as a file out, or inside a folder out."""
    return [
        s
        for out, names in by_file.items()
        if file == out or file.startswith(out.rstrip("/") + "/")
        for s in names
    ]


def load_paper(paper: str, root: Path, reference_root: Path | None = None) -> PaperCard:
    """One paper's rows (and times) from its comparison files and reference file."""
    doc = load_reference(paper, reference_root or root / "reference")
    entries = {v["id"]: v for v in doc["values"]}
    main_path = root / "results" / paper / "comparison.json"
    rows = _rows(_read_comparison(main_path, paper), entries, main_path, paper, root)
    expected = [
        v["id"]
        for v in doc["values"]
        if v["measured"] is not None and f"/{paths.TIMINGS}/" not in f"/{v['measured']['file']}"
    ]
    absent = [i for i in expected if i not in {r.id for r in rows}]
    if absent:
        raise ScorecardError(
            f"{main_path}: lacks {len(absent)} compared id(s) of reference/{paper}.yaml "
            f"(first: {absent[0]!r}); the comparison is stale, run `schedlab compare {paper}`"
        )
    times_path = root / "results" / paper / paths.TIMINGS / "comparison.json"
    times = (
        _rows(_read_comparison(times_path, paper), entries, times_path, paper, root)
        if times_path.is_file()
        else []
    )  # a paper without timed numbers has no times file
    by_file = _stages_by_file(root)
    stages: dict[str, list[str]] = {}
    for r in rows:
        for s in _writers(by_file, entries[r.id]["measured"]["file"]):
            if s not in stages.setdefault(r.part, []):
                stages[r.part].append(s)
    return PaperCard(paper, str(doc.get("paper", paper)), rows, times, stages)


def load(root: Path, papers: tuple[str, ...] = PAPERS, reference_root: Path | None = None) -> list[PaperCard]:
    return [load_paper(p, root, reference_root) for p in papers]


# ---------------------------------------------------------------- formatting


def fmt(x: Any) -> str:
    """A value for a table cell: integers whole, other floats to 4 significant digits.

    >>> fmt(388800.0), fmt(0.030837), fmt(None), fmt(1.5e-7)
    ('388800', '0.03084', '—', '1.5e-07')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int) or (x.is_integer() and abs(x) < 1e15):
        return str(int(x))
    return f"{x:.0f}" if abs(x) >= 1e5 else f"{x:.4g}"


def verdict_text(verdict: str) -> str:
    text, _, symbol = VERDICT_STYLE[verdict]
    return f"{symbol} {text}"


def how_close(counts: dict[str, int]) -> str:
    """One phrase for a part's or paper's outcome.

    >>> how_close({"yes": 3, "no": 1, "not asserted": 2, "paper profile only": 0, "missing input": 0})
    '3 of 4 asserted within tolerance; 2 shown'
    """
    asserted = counts["yes"] + counts["no"]
    bits = []
    held_out = " held-out" if counts.get("fitted") else ""
    if asserted:
        bits.append(
            f"all {asserted}{held_out} asserted within tolerance"
            if counts["no"] == 0 and asserted > 1
            else f"{counts['yes']} of {asserted}{held_out} asserted within tolerance"
        )
    if counts.get("fitted"):
        bits.append(f"{counts['fitted']} fitted (not counted as reproduced)")
    if counts["not asserted"]:
        bits.append(f"{counts['not asserted']} shown")
    if counts["paper profile only"]:
        bits.append(f"{counts['paper profile only']} paper profile only")
    if counts["missing input"]:
        bits.append(f"{counts['missing input']} MISSING")
    if counts.get("different setup"):
        bits.append(f"{counts['different setup']} run under a different setup")
    return "; ".join(bits) or "nothing compared"


def _count_cells(counts: dict[str, int], verdicts: tuple[str, ...] = VERDICTS) -> list[str]:
    return [str(sum(counts.values()))] + [str(counts.get(v, 0)) for v in verdicts]


def _count_header(verdicts: tuple[str, ...]) -> list[str]:
    return ["numbers"] + [VERDICT_STYLE[v][0] for v in verdicts]


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(cell(c) for c in r) + " |" for r in rows),
    ]


def _total(cards: list[PaperCard]) -> dict[str, int]:
    return count_verdicts([r for c in cards for r in c.rows])


def _row_cells(r: Row) -> list[str]:
    note = r.note
    if r.verdict == "paper profile only":
        note = f"filled by `{PAPER_PROFILE_COMMAND}`" + (f"; {note}" if note else "")
    return [
        f"`{r.id}`",
        r.quantity,
        fmt(r.paper),
        fmt(r.ours),
        r.tolerance or "—",
        verdict_text(r.verdict),
        note,
        r.source,
    ]


_ROW_HEADER = ["quantity", "paper", "ours", "tolerance", "verdict", "note", "source"]
_MD_ROW_HEADER = ["id", *_ROW_HEADER]


def to_markdown(cards: list[PaperCard], out_dir: Path, root: Path) -> str:
    """The scorecard as Markdown; figure links are relative to ``out_dir``."""
    total, vs = _total(cards), _verdicts(cards)
    lines = [
        "# schedlab scorecard: the papers' numbers vs ours",
        "",
        "Generated by `schedlab scorecard` from `results/<paper>/comparison.json` and "
        "`reference/<paper>.yaml`; do not edit.",
        "",
        f"Which commit, profile, date and machine produced it: "
        f"[{paths.TIMINGS}/{TIMES_NAME}.md]({paths.TIMINGS}/{TIMES_NAME}.md). {PROVENANCE_WHY}",
        "",
        "Verdicts: " + "; ".join(f"**{verdict_text(v)}**" for v in vs) + ".",
        "",
    ]
    lines += _md_table(
        ["paper"] + _count_header(vs) + ["how close"],
        [[c.paper, *_count_cells(c.counts(), vs), how_close(c.counts())] for c in cards]
        + [["**total**", *_count_cells(total, vs), how_close(total)]],
    )
    lines += [""] + _notes_on_totals(total, markdown=True)
    for c in cards:
        lines += ["", f"## {c.paper}: {c.title}", "", f"{how_close(c.counts())}.", ""]
        for part, rows in c.parts().items():
            stages = ", ".join(c.stages.get(part, [])) or "—"
            lines += [
                f"### {part_label(part)} ({c.paper}; stage {stages}): {how_close(count_verdicts(rows))}",
                "",
            ]
            for f in _part_figures(rows):
                lines += [f"![{f}]({Path(os.path.relpath(root / f, out_dir)).as_posix()})", ""]
            lines += _md_table(_MD_ROW_HEADER, [_row_cells(r) for r in rows]) + [""]
    lines += [
        "",
        "## Times on this machine",
        "",
        f"Wall-clock and CPU seconds vary with the machine and the load: they are in "
        f"[{TIMES_NAME}.md]({paths.TIMINGS}/{TIMES_NAME}.md), never in the verdict totals.",
        "",
    ]
    return "\n".join(lines).rstrip() + "\n"


#: file stem of the times page, under ``results/timings/`` (not a pipeline output)
TIMES_NAME = "scorecard_times"
#: why the scorecard names its provenance page instead of stating commit, date and machine itself
PROVENANCE_WHY = (
    "They are kept there, with the times, so that this page is the same bytes on every machine "
    "and every run of the same inputs."
)


def times_markdown(cards: list[PaperCard], prov: dict[str, Any] | None = None) -> str:
    """What produced this run (``prov``, :func:`schedlab.provenance.describe`, when given), then
    the times compared with the papers' (wall-clock and CPU seconds of this run), per paper."""
    lines = ["# Times on this machine (not in the verdict totals)", ""]
    if prov is not None:
        lines += ["## What produced this scorecard", ""]
        lines += _md_table(["", "value"], [[what, value] for what, value in provenance.rows(prov)]) + [""]
    lines += [
        "Wall-clock and CPU seconds of this run: they vary with the machine and the load, so they are "
        "shown, never asserted. Generated by `schedlab scorecard`.",
        "",
    ]
    for c in cards:
        if c.times:
            lines += (
                [f"## {c.paper}", ""] + _md_table(_MD_ROW_HEADER, [_row_cells(r) for r in c.times]) + [""]
            )
    return "\n".join(lines).rstrip() + "\n"


def times_html(cards: list[PaperCard], prov: dict[str, Any] | None = None) -> str:
    """:func:`times_markdown` as a static page."""
    out = [
        '<!doctype html><html><head><meta charset="utf-8"><title>schedlab: times on this machine</title>'
        "</head><body>",
        "<h1>Times on this machine (not in the verdict totals)</h1>",
    ]
    if prov is not None:
        out += [
            '<h2 id="provenance">What produced this scorecard</h2>',
            _html_table(
                ["", "value"],
                [
                    [f"<th>{html.escape(what)}</th>", f"<td>{html.escape(value)}</td>"]
                    for what, value in provenance.rows(prov)
                ],
            ),
        ]
    out += [
        "<p>Wall-clock and CPU seconds of this run: they vary with the machine and the load, so they are "
        "shown, never asserted.</p>"
    ]
    for c in cards:
        if c.times:
            out += [
                f"<h2>{html.escape(c.paper)}</h2>",
                _html_table(_ROW_HEADER, [_html_row(r) for r in c.times]),
            ]
    out.append("</body></html>\n")
    return "\n".join(out)


def _notes_on_totals(total: dict[str, int], markdown: bool) -> list[str]:
    code = (lambda s: f"`{s}`") if markdown else (lambda s: f"<code>{html.escape(s)}</code>")
    out = []
    if total["paper profile only"]:
        out.append(
            f"{total['paper profile only']} number(s) are computed only at the papers' scale: "
            f"run {code(PAPER_PROFILE_COMMAND)} (hours) to fill them."
        )
    if total["missing input"]:
        out.append(
            f"{total['missing input']} number(s) are MISSING although the run should have made them: "
            f"a gap in this run, not a matter of profile."
        )
    return out


def _part_figures(rows: list[Row]) -> list[str]:
    seen: list[str] = []
    for r in rows:
        seen += [f for f in r.figures if f not in seen]
    return seen


def figures_shown(cards: list[PaperCard]) -> list[str]:
    """Every figure the scorecard attaches (the scorecard stage's figure dependencies)."""
    return sorted({f for c in cards for r in c.rows for f in r.figures})


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1b1b1b;background:#fff;
 margin:1.5em auto;max-width:1500px;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{margin-top:2em;border-bottom:2px solid #ccc;padding-bottom:.2em}
h3{font-size:1.1em;margin:1.4em 0 .4em} h3 small{font-weight:normal;color:#555}
table{border-collapse:collapse;margin:.4em 0}
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left} th{background:#f2f2f2}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.summary td,table.summary th{text-align:right}
table.summary td:first-child,table.summary th:first-child,table.summary td:last-child,
table.summary th:last-child{text-align:left}
tr.total td{font-weight:bold;background:#fafafa} td.gapcell{background:#8a1c10;color:#fff;font-weight:bold}
.v{white-space:nowrap;border-radius:3px;padding:1px 5px;font-weight:600}
.ok{background:#d9f2dd;color:#0b5a1c} .bad{background:#fadbd8;color:#8a1c10} .info{background:#e8eef7;color:#213d6b}
.paper{background:#fff1cc;color:#6b4a00} .gap{background:#8a1c10;color:#fff}
.part{display:grid;grid-template-columns:minmax(0,1fr);gap:1.2em;align-items:start}
.part.withfig{grid-template-columns:minmax(0,1fr) minmax(280px,440px)}
@media (max-width:900px){.part.withfig{grid-template-columns:minmax(0,1fr)}}
.part table{width:100%;font-size:13px;table-layout:fixed} .part td{overflow-wrap:anywhere}
.part th:nth-child(1){width:25.5%} .part th:nth-child(2),.part th:nth-child(3){width:6.5%}
.part th:nth-child(4){width:8%} .part th:nth-child(5){width:15.5%} .part th:nth-child(6){width:23%}
.part th:nth-child(7){width:15%} .part .v{white-space:normal;display:inline-block}
.figs{position:sticky;top:.5em} .figs figure{margin:0 0 1em} .figs img{max-width:100%;border:1px solid #ddd}
figcaption{font-size:12px;color:#555} td.note,td.src{font-size:12px;color:#333}
code{background:#f4f4f4;padding:0 3px} .id{font-size:11px;color:#777;font-family:monospace}
nav{margin:.6em 0} nav a{margin-right:1em}
.callout{border-left:4px solid #e0b000;background:#fffaf0;padding:.4em .8em}
.callout.gapnote{border-color:#8a1c10;background:#fdf0ef}
"""


def _badge(verdict: str) -> str:
    _, css, _ = VERDICT_STYLE[verdict]
    return f'<span class="v {css}">{html.escape(verdict_text(verdict))}</span>'


def _html_table(header: list[str], rows: list[list[str]], css: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(rows_i) + "</tr>" for rows_i in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _html_row(r: Row) -> list[str]:
    note = html.escape(r.note)
    if r.verdict == "paper profile only":
        note = f"filled by <code>{html.escape(PAPER_PROFILE_COMMAND)}</code>" + (f"; {note}" if note else "")
    cells = (fmt(r.paper), fmt(r.ours), r.tolerance or "—")
    numbers = "".join(f'<td class="num">{html.escape(x)}</td>' for x in cells)
    return [
        f'<td>{html.escape(r.quantity)}<br><span class="id">{html.escape(r.id)}</span></td>',
        numbers,
        f"<td>{_badge(r.verdict)}</td>",
        f'<td class="note">{note}</td>',
        f'<td class="src">{html.escape(r.source)}</td>',
    ]


def _img(root: Path, figure: str) -> str:
    data = base64.b64encode((root / figure).read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{html.escape(figure)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{html.escape(figure)}</figcaption></figure>"
    )


def _summary_html(cards: list[PaperCard]) -> str:
    vs = _verdicts(cards)

    def cells(counts: dict[str, int]) -> list[str]:
        out = [f'<td class="num">{n}</td>' for n in _count_cells(counts, vs)]
        if counts["missing input"] > 0:  # a real gap: its count cell (after the total)
            out[1 + vs.index("missing input")] = f'<td class="num gapcell">⚠ {counts["missing input"]}</td>'
        return out + [f"<td>{html.escape(how_close(counts))}</td>"]

    rows = [[f'<td><a href="#{c.paper}">{html.escape(c.paper)}</a></td>'] + cells(c.counts()) for c in cards]
    table = _html_table(["paper"] + _count_header(vs) + ["how close"], rows, "summary")
    total = '<tr class="total"><td>total</td>' + "".join(cells(_total(cards))) + "</tr>"
    return table.replace("</tbody>", total + "</tbody>")


def to_html(cards: list[PaperCard], root: Path) -> str:
    """The scorecard as one static HTML page (inline CSS, figures embedded, no script)."""
    total = _total(cards)
    out = [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>schedlab scorecard</title><style>{_CSS}</style></head><body>",
        "<h1>schedlab scorecard: the papers' numbers vs ours</h1>",
        "<p>Generated by <code>schedlab scorecard</code> from <code>results/&lt;paper&gt;/comparison.json</code> "
        "and <code>reference/&lt;paper&gt;.yaml</code>. Verdicts: "
        + " ".join(_badge(v) for v in _verdicts(cards))
        + "</p>",
        # named, not linked: the page stands alone when copied or mailed (it links nothing)
        f"<p>Which commit, profile, date and machine produced it: <code>{paths.TIMINGS}/{TIMES_NAME}.html"
        f"</code> in this page's folder. {html.escape(PROVENANCE_WHY)}</p>",
        "<nav>"
        + "".join(f'<a href="#{c.paper}">{html.escape(c.paper)}</a>' for c in cards)
        + '<a href="#times">times on this machine</a></nav>',
        _summary_html(cards),
    ]
    for note in _notes_on_totals(total, markdown=False):
        out.append(f'<p class="{"callout gapnote" if "MISSING" in note else "callout"}">{note}</p>')
    for c in cards:
        out += [
            f'<h2 id="{c.paper}">{html.escape(c.paper)}: {html.escape(c.title)}</h2>',
            f"<p>{html.escape(how_close(c.counts()))}.</p>",
        ]
        for part, rows in c.parts().items():
            stages = ", ".join(c.stages.get(part, [])) or "—"
            out.append(
                f"<h3>{html.escape(part_label(part))} <small>({html.escape(c.paper)}; stage "
                f"{html.escape(stages)}): {html.escape(how_close(count_verdicts(rows)))}</small></h3>"
            )
            figs = "".join(_img(root, f) for f in _part_figures(rows))
            out.append(
                f'<div class="part{" withfig" if figs else ""}">'
                f"{_html_table(_ROW_HEADER, [_html_row(r) for r in rows])}"
                + (f'<div class="figs">{figs}</div>' if figs else "")
                + "</div>"
            )
    out += [
        '<h2 id="times">Times on this machine</h2>',
        f"<p>Wall-clock and CPU seconds vary with the machine and the load: they are in "
        f"<code>results/{paths.TIMINGS}/{TIMES_NAME}.html</code> (beside this page), never in the verdict "
        "totals.</p>",
    ]
    out.append("</body></html>\n")
    return "\n".join(out)


# ---------------------------------------------------------------- README block


def readme_block(cards: list[PaperCard]) -> str:
    """The generated README table: one row per part, what it reproduces and how close, plus totals."""
    rows, vs = [], _verdicts(cards)
    for c in cards:
        for part, part_rows in c.parts().items():
            counts = count_verdicts(part_rows)
            rows.append(
                [
                    c.paper,
                    part_label(part),
                    ", ".join(f"`{s}`" for s in c.stages.get(part, [])) or "—",
                    *_count_cells(counts, vs),
                    how_close(counts),
                ]
            )
        rows.append([f"**{c.paper}**", "all", "", *_count_cells(c.counts(), vs), how_close(c.counts())])
    total = _total(cards)
    rows.append(["**total**", "", "", *_count_cells(total, vs), how_close(total)])
    lines = ["<!-- generated by `schedlab scorecard --readme README.md`: edits here are overwritten -->", ""]
    lines += _md_table(["paper", "part", "stage"] + _count_header(vs) + ["how close"], rows)
    lines += [
        "",
        "Every number, with its source, tolerance and figure: `results/scorecard.html` "
        "(or `results/scorecard.md`).",
    ]
    notes = _notes_on_totals(total, markdown=True)
    if notes:
        lines += ["", *notes]
    return "\n".join(lines).rstrip()


def replace_block(text: str, block: str, name: str) -> str:
    """``text`` with what lies between the scorecard markers replaced by ``block`` (the markers stay)."""
    starts, ends = text.count(START_MARKER), text.count(END_MARKER)
    if starts != 1 or ends != 1:
        raise ScorecardError(
            f"{name}: expected exactly one {START_MARKER} and one {END_MARKER}, found {starts} and {ends}"
        )
    head, rest = text.split(START_MARKER)
    _, tail = rest.split(END_MARKER) if END_MARKER in rest else (None, None)
    if tail is None:
        raise ScorecardError(f"{name}: {END_MARKER} comes before {START_MARKER}")
    return f"{head}{START_MARKER}\n{block.strip()}\n{END_MARKER}{tail}"


def update_readme(readme: Path, cards: list[PaperCard]) -> bool:
    """Rewrite the scorecard block of ``readme`` (atomically); ``True`` if the file changed."""
    if not readme.is_file():
        raise ScorecardError(f"{readme}: no such README")
    text = readme.read_text(encoding="utf-8")
    new = replace_block(text, readme_block(cards), str(readme))
    if new != text:
        atomic_write_text(readme, new)
    return new != text


# ---------------------------------------------------------------- DVC plot data

#: where :func:`write_plot_data` puts the tables ``dvc plots show`` draws (dvc.yaml, top-level ``plots:``)
PLOT_DIR = "results/plots"
#: the results the plot tables are made from (the scorecard stage's dependencies)
PLOT_SOURCES = {
    "nona_fig3.csv": "results/nona/fig3.csv",
    "nona_fig4.csv": "results/nona/fig4.csv",
    "pcs_fig7.csv": "results/pcs/fig7.csv",
    "polaris_fig5a.csv": "results/polaris/pipeline_fig5.csv",
}


def _read_csv(path: Path, columns: list[str]) -> Any:
    import pandas as pd

    if not path.is_file():
        raise ScorecardError(
            f"{path}: missing; the plot table needs it (run `dvc repro` for the stage making it)"
        )
    table = pd.read_csv(path)
    absent = [c for c in columns if c not in table]
    if absent:
        raise ScorecardError(f"{path}: lacks column(s) {', '.join(absent)}")
    return table


def plot_tables(root: Path) -> dict[str, Any]:
    """The tables of the main curves, in the wide form DVC's templates draw (one column per line).

    - ``nona_fig3.csv``: ``load`` and, per scheme, its mean JCT (s) (Nona Fig. 3);
    - ``nona_fig4.csv``: ``bandwidth_gbps`` and, per scheme, its mean JCT (s) (Nona Fig. 4);
    - ``pcs_fig7.csv``: one row per policy and trace (``policy / trace``), normalised avg JCT and
      avg Pred_err (%) (PCS Fig. 7a/b; Fig. 8b is drawn straight from ``results/pcs/fig8.csv``);
    - ``polaris_fig5a.csv``: the CDF of the relative duration error (PolarisProfiler Fig. 5a).
    """
    tables = {}
    for name, axis in (("nona_fig3.csv", "load"), ("nona_fig4.csv", "bandwidth_gbps")):
        src = _read_csv(root / PLOT_SOURCES[name], [axis, "scheme", "status", "mean_jct_s"])
        ok = src[src["status"] == "ok"]
        wide = ok.pivot_table(index=axis, columns="scheme", values="mean_jct_s", aggfunc="first", sort=True)
        tables[name] = wide[[s for s in dict.fromkeys(ok["scheme"])]].reset_index()  # schemes in run order
    fig7 = _read_csv(
        root / PLOT_SOURCES["pcs_fig7.csv"], ["policy", "trace", "norm_avg_jct", "avg_pred_error"]
    )
    tables["pcs_fig7.csv"] = fig7.assign(policy_trace=fig7["policy"] + " / " + fig7["trace"].astype(str))[
        ["policy_trace", "policy", "trace", "norm_avg_jct", "avg_pred_error"]
    ]
    fig5 = _read_csv(root / PLOT_SOURCES["polaris_fig5a.csv"], ["rel_error"])
    errors = fig5["rel_error"].dropna().sort_values(ignore_index=True)
    tables["polaris_fig5a.csv"] = errors.to_frame("rel_error").assign(
        share_of_jobs=(errors.index + 1) / len(errors)
    )
    return tables


def write_plot_data(root: Path, out_dir: Path | None = None) -> list[Path]:
    """Write :func:`plot_tables` under ``out_dir`` (default ``root/results/plots``), atomically."""
    out_dir = out_dir or root / PLOT_DIR
    written = []
    for name, table in plot_tables(root).items():
        atomic_write_text(out_dir / name, table.to_csv(index=False, float_format="%.6g"))
        written.append(out_dir / name)
    return written


# ---------------------------------------------------------------- writing


def write(
    root: Path | None = None,
    out_dir: Path | None = None,
    readme: Path | None = None,
    reference_root: Path | None = None,
    *,
    papers: tuple[str, ...] = PAPERS,
    plots: bool = True,
) -> list[PaperCard]:
    """Write ``scorecard.md`` and ``scorecard.html`` to ``out_dir`` (default ``root/results``),
    the times to ``out_dir/timings/``:data:`TIMES_NAME```.{md,html}``, the tables of the DVC plots
    to ``out_dir/plots`` (unless ``plots=False``) and the README block if ``readme`` is given.
    Returns the cards."""
    root = (root or paths.ROOT).resolve()
    out_dir = (out_dir or root / "results").resolve()
    cards = load(root, papers, reference_root)
    atomic_write_text(out_dir / "scorecard.md", to_markdown(cards, out_dir, root))
    atomic_write_text(out_dir / "scorecard.html", to_html(cards, root))
    from schedlab import stagetimes  # pandas, as the rest of writing

    # commit, profile, date, machine: beside the times, never in the scorecard
    prov = provenance.describe(root, stagetimes.runs_summary(root))
    atomic_write_text(out_dir / paths.TIMINGS / f"{TIMES_NAME}.md", times_markdown(cards, prov))
    atomic_write_text(out_dir / paths.TIMINGS / f"{TIMES_NAME}.html", times_html(cards, prov))
    if plots:
        write_plot_data(root, out_dir / "plots")
    if readme is not None:
        update_readme(readme, cards)
    return cards
