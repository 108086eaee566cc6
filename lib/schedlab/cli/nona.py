"""``schedlab nona ...``: Nona's graph contraction, placement optimiser and cluster simulator."""

from __future__ import annotations

import json
import sys

import click


@click.group()
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


@nona.command("simulate")
@click.option("--scheme", required=True,
              help="random | opportunistic | spark_fair | nona | nona_star | expert | decima | decima_retrained")
@click.option("--load", type=float, required=True, help="Compute load sum_j lambda_j S_j / servers, in (0, 1).")
@click.option("--bandwidth-gbps", type=float, default=10.0, show_default=True, help="Bottleneck link capacity.")
@click.option("--servers", type=int, default=80, show_default=True)
@click.option("--duration", type=float, default=60.0, show_default=True, help="Measured window, seconds.")
@click.option("--warmup", type=float, default=None, help="Warm-up, seconds (default 10% of --duration).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--models", default="gpt2,densenet121,vgg16,alexnet,resnet18", show_default=True,
              help="Comma-separated inference classes: the paper's five, or inception_v3, nasnetamobile, "
                   "gnmt (PipeDream profiles with parallel branches; several roots/sinks get a zero-cost "
                   "virtual root/sink). gpt2 needs data/generated/nona/gpt2/graph.txt.")
@click.option("--tables", type=click.Path(dir_okay=False), default=None,
              help="Optimiser JSON (`schedlab nona solve --json`); required for nona, nona_star, expert.")
@click.option("--decima-weights", type=click.Path(dir_okay=False), default=None,
              help="Retrained Decima weights (.npz, stage nona_decima_train); required for decima_retrained.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="Per-job records (parquet).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def nona_simulate(scheme, load, bandwidth_gbps, servers, duration, warmup, seed, models, tables, decima_weights,
                  out, as_json):
    """Simulate SCHEME at compute LOAD on Nona's cluster; write per-job records to OUT."""
    from schedlab.nona import experiments
    from schedlab.nona.schedulers import SchemeUnavailable
    from schedlab.nona.sim import SimInputError

    try:
        experiments.check_point(scheme, load, bandwidth_gbps, servers, duration, tables)
        res = experiments.run_point(scheme, load=load, bandwidth_gbps=bandwidth_gbps, servers=servers,
                                    duration=duration, warmup=warmup, seed=seed,
                                    models=[m.strip() for m in models.split(",") if m.strip()], tables=tables,
                                    decima_weights=decima_weights)
    except (ValueError, FileNotFoundError, SimInputError, SchemeUnavailable) as exc:
        raise click.ClickException(str(exc)) from None
    res.to_parquet(out)
    summary = res.summary()
    summary["out"] = out
    if as_json:
        json.dump(summary, sys.stdout, default=float)
        sys.stdout.write("\n")
        return
    click.echo(f"{scheme} at load {load}, {bandwidth_gbps} Gbps, {servers} servers: {summary['jobs']} jobs, "
               f"mean JCT {summary['mean_jct_s']:.4g} s, p99 {summary['p99_jct_s']:.4g} s, "
               f"inference mean {summary['inference_mean_jct_s']:.4g} s; "
               f"{summary['events']} events in {summary['wall_s']:.2f} s -> {out}")



@nona.command("solve")
@click.option("--load", type=float, default=0.5, show_default=True,
              help="Compute load sum_j lambda_j S_j / servers, in (0, 1).")
@click.option("--bandwidth-gbps", type=float, default=10.0, show_default=True, help="Bottleneck link capacity.")
@click.option("--servers", type=int, default=80, show_default=True)
@click.option("--method", type=click.Choice(["global", "local", "penalty"]), default="global", show_default=True,
              help="global: certified branch and bound over the link wait (Lagrangian bounds, no LP "
                   "solver); local: softmax + L-BFGS multi-start; penalty: the paper's Lagrangian penalty, "
                   "first order.")
@click.option("--models", default="gpt2,densenet121,vgg16,alexnet,resnet18", show_default=True,
              help="Comma-separated inference classes: the paper's five, or inception_v3, nasnetamobile, "
                   "gnmt (PipeDream profiles with parallel branches; several roots/sinks get a zero-cost "
                   "virtual root/sink). gpt2 needs data/generated/nona/gpt2/graph.txt.")
@click.option("--comm-load", type=float, default=None, help="Background link load (default: --load).")
@click.option("--pricing", type=click.Choice(["paper", "critical_path"]), default=None,
              help="How a split subgraph's time is priced: paper = (X)-(XI) as typeset (parts priced as if "
                   "parallel); critical_path = the longest path through the parts (a part waits for its "
                   "predecessors in other parts, a job's transfers queue one after another on the link; "
                   "what the simulator measures). Default: the library's DEFAULT_PRICING.")
@click.option("--oversized", type=click.Choice(["error", "keep_together"]), default="error", show_default=True,
              help="A subgraph with more than 100,000 placement options (inception_v3's auxiliary head, "
                   "nasnetamobile, gnmt): an error, or kept on one server.")
@click.option("--json", "as_json", is_flag=True, help="Print the optimiser JSON (the simulator's input).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Also write the JSON to this file.")
def nona_solve(load, bandwidth_gbps, servers, method, models, comm_load, pricing, oversized, as_json, out):
    """Solve Nona's placement optimisation (section III-C) for the section IV workload.

    With --json, stdout carries exactly one JSON object: anything the solvers might print goes
    to stderr, and errors are reported on stderr with a non-zero exit status.
    """
    import contextlib

    from schedlab.io import atomic_write_json
    from schedlab.nona.optimise import solve_point

    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is reserved for the result
            res, doc = solve_point(load, bandwidth_gbps=bandwidth_gbps, servers=servers, method=method,
                                   models=[m.strip() for m in models.split(",") if m.strip()],
                                   workload_kwargs={"comm_load": comm_load},
                                   oversized=oversized, **({} if pricing is None else {"pricing": pricing}))
        text = json.dumps(doc, allow_nan=False)
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    if out:
        atomic_write_json(out, doc)
    if as_json:
        sys.stdout.write(text + "\n")
        return
    gap = "" if res.gap is None else f", certified gap {res.gap:.3g}"
    click.echo(f"{method}: objective {res.objective:.6g} (mean JCT {res.mean_jct_s:.4g} s), link load "
               f"{res.rho:.3f}, wait {res.phi * 1e3:.3g} ms, search space {doc['search_space']} over "
               f"{doc['n_distributions']} distributions, {res.solve_seconds:.3f} s{gap}")
    for name, c in doc["classes"].items():
        dist = sum(1 - sg["options"][0]["p"] if sg["options"] and len(sg["options"][0]["partition"]) == 1 else 1
                   for sg in c.get("subgraphs", []))
        click.echo(f"  {name}: rate {c['arrival_rate']:.4g}/s, predicted JCT {c['predicted_jct_s']:.4g} s"
                   + (f", {len(c['subgraphs'])} subgraph(s), expected distributed {dist:.3f}" if c.get("subgraphs") else ""))
