"""The ``schedlab`` command line.

Subcommands: ``fetch`` (raw inputs), ``notebook run`` (a pipeline stage), ``compare``
(paper vs ours), ``scorecard`` (every paper's comparison on one page), ``timings`` (how long each stage took here), ``pinned`` (a command under the pipeline's CPU pins), and one group per paper, each in its own module of this package
(``nona``, ``pcs``, ``polaris``). Heavy imports stay inside the commands so
``schedlab --help`` is instant.
"""

from __future__ import annotations

import click

from schedlab.notebooks import PROFILES
from schedlab.notebooks.params import PIPELINE_PROFILES


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="schedlab")
def main() -> None:
    """Reproducible research suite for Nona, PolarisProfiler and PCS."""


@main.command()
@click.argument("names", nargs=-1)
@click.option(
    "--mirror",
    type=click.Path(file_okay=False),
    default=None,
    help="Mirror folder (default: $SCHEDLAB_MIRROR, else ../shared/data). Use '' to download.",
)
@click.option("--force", is_flag=True, help="Fetch and verify again even if a verified copy exists.")
@click.option(
    "--optional",
    "include_optional",
    is_flag=True,
    help="Also fetch optional upstream archives (the full PAI trace, ~1.5 GB).",
)
@click.option("--list", "list_only", is_flag=True, help="List the matching manifest entries and exit.")
def fetch(
    names: tuple[str, ...], mirror: str | None, force: bool, include_optional: bool, list_only: bool
) -> None:
    """Fetch raw inputs NAMES (entries or folders like 'nona', 'pcs/workload2_philly_traces').

    With no NAMES, every non-optional entry of the manifest. Files are verified by sha256
    and written atomically, read-only, under data/raw/.
    """
    from schedlab import data

    try:
        chosen = data.select(list(names), include_optional=include_optional)
        if list_only:
            for e in chosen:
                src = e.urls[0] if e.urls else f"(mirror only: {e.derived or 'no public URL'})"
                click.echo(f"{e.name}\t{e.size}\t{e.sha256[:12]}\t{src}")
            return
        mirror_arg = "default" if mirror is None else (mirror or None)
        fetched = [data.fetch_entry(e, mirror=mirror_arg, force=force) for e in chosen]
    except (KeyError, data.FetchError) as exc:
        raise click.ClickException(str(exc).strip('"')) from None
    click.echo(f"{len(fetched)} raw input(s) verified under data/raw/")


@main.group()
def notebook() -> None:
    """Run the suite's notebooks."""


@notebook.command("run")
@click.argument("name")
@click.option(
    "--output-root",
    type=click.Path(file_okay=False),
    default=None,
    help="Root for results/, figures/ and the executed copy (data/executed/) (default: the repository).",
)
@click.option(
    "--profile",
    "profile_name",
    type=click.Choice(PROFILES),
    default=None,
    help="Parameter profile (default: params.yaml's top-level 'profile').",
)
@click.option(
    "-p",
    "--param",
    "param_pairs",
    type=(str, str),
    multiple=True,
    metavar="KEY VALUE",
    help="Replace one value of params.yaml for this run (repeatable; VALUE is YAML: 30, "
    "'[0.1, 0.5]', null; a dotted KEY sets one field of a mapping, e.g. train.iterations).",
)
def notebook_run(
    name: str, output_root: str | None, profile_name: str | None, param_pairs: tuple[tuple[str, str], ...]
) -> None:
    """Execute notebooks/NAME.ipynb with its params.yaml section (e.g. nona/table2)."""
    from pathlib import Path

    from schedlab import notebooks
    from schedlab.cli._checks import writable

    # resolved once, here, against the working directory: the kernel runs in the repository, so a
    # relative root would put the results there and the executed copy and timings here
    root = writable(Path(output_root).resolve(), "--output-root", folder=True) if output_root else None
    # a run elsewhere (e.g. --profile paper into a scratch root) must not replace the
    # pipeline's executed copy in the repository, which DVC tracks
    executed = root / "data" / "executed" / f"{name}.ipynb" if root else None
    try:
        overrides = notebooks.parse_overrides(param_pairs)
        out = notebooks.run(
            name, output_root=root, executed=executed, profile=profile_name, overrides=overrides
        )
    except (FileNotFoundError, notebooks.ParamsError, notebooks.StageFailed) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"executed {name} -> {out}")


@notebook.command("sync")
@click.argument("names", nargs=-1)
def notebook_sync(names: tuple[str, ...]) -> None:
    """Pair notebooks/NAME.ipynb with NAME.py (all, or NAMES like nona/fig3): the newer side wins,
    both are rewritten in the form Jupyter saves (nbformat 4.5, stable cell ids, no outputs)."""
    from schedlab import notebooks

    try:
        targets = [notebooks.pair_path(n) for n in names] or None
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    changed = notebooks.sync(targets)
    for path in changed:
        click.echo(f"wrote {path}")
    click.echo(f"{len(changed)} file(s) changed")


@main.command()
@click.argument("paper")
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where comparison.json/.md go (default: results/PAPER).",
)
def compare(paper: str, out_dir: str | None) -> None:
    """Compare the pipeline's numbers with reference/PAPER.yaml; write comparison.json and .md."""
    from pathlib import Path

    from schedlab import paths, reference

    known = sorted(p.stem for p in paths.REFERENCE.glob("*.yaml"))
    if paper not in known:
        raise click.BadParameter(
            f"no reference/{paper}.yaml; the papers are: {', '.join(known)}", param_hint="PAPER"
        )
    from schedlab.cli._checks import writable

    target = writable(Path(out_dir) if out_dir else paths.results(paper), "--out-dir", folder=True)
    try:
        table = reference.write_comparison(paper, target)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(reference.to_markdown(table, f"{paper}: paper vs schedlab"))


@main.command()
@click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="Folder holding results/, figures/, reference/ and dvc.yaml (default: the repository).",
)
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where scorecard.md and scorecard.html go (default: ROOT/results).",
)
@click.option(
    "--readme",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="Also rewrite the block between <!-- scorecard:start --> and <!-- scorecard:end --> here.",
)
def scorecard(root: str | None, out_dir: str | None, readme: str | None) -> None:
    """Write results/scorecard.md and .html: every paper's numbers vs ours, counted per verdict."""
    from pathlib import Path

    from schedlab import reference, scorecard as card
    from schedlab.cli._checks import writable

    expected = "expected a folder holding reference/<paper>.yaml, results/ and dvc.yaml (a checkout)"
    if root and not (Path(root) / "reference").is_dir():
        raise click.BadParameter(f"{root} has no reference/ folder; {expected}", param_hint="--root")
    writable(
        Path(out_dir) if out_dir else (Path(root) if root else card.paths.ROOT) / "results",
        "--out-dir",
        folder=True,
    )
    try:
        cards = card.write(
            Path(root) if root else None, Path(out_dir) if out_dir else None, Path(readme) if readme else None
        )
    except (card.ScorecardError, reference.ReferenceError) as exc:
        raise click.ClickException(str(exc)) from None
    except FileNotFoundError as exc:  # a reference file the papers' list names is missing under --root
        raise click.ClickException(f"{exc.filename}: missing; {expected}") from None
    for c in cards:
        click.echo(f"{c.paper}: {card.how_close(c.counts())}")
    where = Path(out_dir) if out_dir else (Path(root) if root else card.paths.ROOT) / "results"
    click.echo(
        f"wrote {where / 'scorecard.md'} and {where / 'scorecard.html'}"
        + (f"; updated {readme}" if readme else "")
    )


@main.command()
@click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="Folder holding results/ (default: the repository).",
)
@click.option("--paper", default=None, help="Only this paper's stages (nona, pcs, polaris).")
def timings(root: str | None, paper: str | None) -> None:
    """How long each stage's last run took here (wall, CPU, profile, load), and per-paper totals.

    Read from results/<paper>/timings/stages/, which every notebook run writes (not a pipeline
    output). `make reproduce` prints this at the end."""
    from pathlib import Path

    from schedlab import stagetimes

    try:
        t = stagetimes.table(Path(root) if root else None)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if paper:
        t = t[t.stage.str.startswith(f"{paper}/")]
    if t.empty:
        raise click.ClickException(
            "no stage times recorded yet (results/*/timings/stages/*.json): run a stage first"
        )
    shown = t.assign(wall_min=(t.wall_s / 60).round(2), cpu_min=(t.cpu_s / 60).round(2))
    click.echo(
        shown[["stage", "profile", "wall_min", "cpu_min", "load_start", "load_end", "started_utc"]].to_string(
            index=False
        )
    )
    click.echo(f"\ntotals ({t.cores.iloc[0]} cores; the stages of a paper run one after another):")
    click.echo(stagetimes.totals(t).to_string(index=False))


@main.command()
@click.option(
    "--profile",
    "profile_name",
    type=click.Choice([p for p in PIPELINE_PROFILES if p != "default"]),
    required=True,
    help="The profile to run (the default profile runs in the checkout: `make reproduce`).",
)
@click.option(
    "--dry", is_flag=True, help="Prepare runs/PROFILE/ and list the stages that would run; run nothing."
)
def reproduce(profile_name: str, dry: bool) -> None:
    """Run every stage under another profile in runs/PROFILE/, a copy of this working tree.

    params.yaml, dvc.lock and git of the checkout stay as they were, so the next plain
    `make reproduce` runs the default profile. A second call resumes: only stages whose inputs
    changed, or that did not finish, run again."""
    import subprocess

    from schedlab import notebooks, profileruns

    try:
        dest = profileruns.run(profile_name, dry=dry)
    except (notebooks.ParamsError, subprocess.CalledProcessError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"profile {profile_name}: {dest} (results/scorecard.html, figures/ there)")


@main.command(context_settings={"ignore_unknown_options": True})
@click.option(
    "--status", "show_status", is_flag=True, help="Print whether this process runs pinned, and exit."
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def pinned(show_status: bool, command: tuple[str, ...]) -> None:
    """Run COMMAND under the CPU pins the pipeline runs with (schedlab.cpu): e.g.
    `schedlab pinned -- jupyter lab`, whose kernels then compute the pipeline's bits."""
    from schedlab import cpu

    if show_status:
        for key, value in {**cpu.PINS, **cpu.status()}.items():
            click.echo(f"{key}: {value}")
        return
    if not command:
        raise click.UsageError("name a command to run, e.g. schedlab pinned -- jupyter lab")
    try:
        cpu.exec_pinned(list(command))
    except FileNotFoundError:
        raise click.ClickException(f"no such command: {command[0]}") from None


# after ``main`` exists; module names stay bound to the modules (schedlab.cli.nona is the module)
from schedlab.cli import nona as _nona, pcs as _pcs, polaris as _polaris  # noqa: E402

for _group in (_nona.nona, _pcs.pcs, _polaris.polaris):
    main.add_command(_group)
