"""The ``schedlab`` command line.

Subcommands: ``fetch`` (raw inputs), ``notebook run`` (a pipeline stage), ``compare``
(paper vs ours), and one group per paper (``nona ...``). Each paper issue adds its commands
to its group; heavy imports stay inside the commands so ``schedlab --help`` is instant.
"""

from __future__ import annotations

import json
import sys

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="schedlab")
def main() -> None:
    """Reproducible research suite for Nona, PolarisProfiler and PCS."""


@main.command()
@click.argument("names", nargs=-1)
@click.option("--mirror", type=click.Path(file_okay=False), default=None,
              help="Mirror folder (default: $SCHEDLAB_MIRROR, else ../shared/data). Use '' to download.")
@click.option("--force", is_flag=True, help="Fetch and verify again even if a verified copy exists.")
@click.option("--optional", "include_optional", is_flag=True,
              help="Also fetch optional upstream archives (the full PAI trace, ~1.5 GB).")
@click.option("--list", "list_only", is_flag=True, help="List the matching manifest entries and exit.")
def fetch(names: tuple[str, ...], mirror: str | None, force: bool, include_optional: bool, list_only: bool) -> None:
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
@click.option("--output-root", type=click.Path(file_okay=False), default=None,
              help="Root for results/ and figures/ (default: the repository).")
def notebook_run(name: str, output_root: str | None) -> None:
    """Execute notebooks/NAME.ipynb with its params.yaml section (e.g. nona/table2)."""
    from pathlib import Path

    from schedlab import notebooks

    try:
        out = notebooks.run(name, output_root=Path(output_root) if output_root else None)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"executed {name} -> {out}")


@main.command()
@click.argument("paper")
@click.option("--out-dir", type=click.Path(file_okay=False), default=None,
              help="Where comparison.json/.md go (default: results/PAPER).")
def compare(paper: str, out_dir: str | None) -> None:
    """Compare the pipeline's numbers with reference/PAPER.yaml; write comparison.json and .md."""
    from pathlib import Path

    from schedlab import paths, reference

    try:
        table = reference.write_comparison(paper, Path(out_dir) if out_dir else paths.results(paper))
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(reference.to_markdown(table, f"{paper}: paper vs schedlab"))


@main.group()
def nona() -> None:
    """Nona: DNN inference DAGs, contraction, optimisation, simulation."""


@nona.command("contract")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--schedule", type=click.Choice(["rounds", "sequential"]), default="rounds", show_default=True,
              help="rounds: the paper's contract-all-of-C-per-round; sequential: one edge at a time.")
def nona_contract(path: str, as_json: bool, schedule: str) -> None:
    """Contract the PipeDream graph.txt at PATH with Nona's rule."""
    from schedlab.nona.contraction import bottleneck_nodes, contract
    from schedlab.nona.graphs import GraphFormatError, read_graph

    try:
        g = read_graph(path)
    except GraphFormatError as exc:
        raise click.ClickException(str(exc)) from None
    h = contract(g, schedule)  # type: ignore[arg-type]
    result = {
        "path": path,
        "pre_nodes": g.number_of_nodes(),
        "post_nodes": h.number_of_nodes(),
        "pre_edges": g.number_of_edges(),
        "post_edges": h.number_of_edges(),
        "bottlenecks": bottleneck_nodes(h),
        "nodes": [
            {"id": n, "members": list(d["members"]), "forward_ms": d["forward_ms"],
             "parameter_bytes": d["parameter_bytes"]}
            for n, d in h.nodes(data=True)
        ],
        "edges": [{"source": u, "target": v, "bytes": d["bytes"]} for u, v, d in h.edges(data=True)],
    }
    if as_json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return
    click.echo(f"{path}: {result['pre_nodes']} tasks / {result['pre_edges']} edges -> "
               f"{result['post_nodes']} tasks / {result['post_edges']} edges")
    for node in result["nodes"]:
        click.echo(f"  {node['id']}: {len(node['members'])} member(s), {node['forward_ms']:.3f} ms")
