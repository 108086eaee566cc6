"""``schedlab nona ...``: Nona's graph contraction, placement optimiser and cluster simulator."""

from __future__ import annotations

import json
import sys

import click


#: ``--workload`` of ``solve`` and ``simulate``: which arrival rates a ``--load`` means
WORKLOADS = ("pipeline", "per-server")
WORKLOAD_HELP = (
    "pipeline (default): exactly the workload the pipeline's optimiser tables and Figs. 3-5 use, read at run "
    "time from params.yaml nona.common (workload, models, servers, bandwidth_gbps), so the CLI follows any "
    "change there; its load basis is that mapping's load_basis ('cluster': --load = sum_j lambda_j S_j over "
    "the whole cluster, section IV-B's formula taken literally; 'server', the default: per server). "
    "per-server: build_workload's own defaults, "
    "--load = sum_j lambda_j S_j / servers (each server's utilisation), background classes at 1/100 of the "
    "inference rate (100:1), background link load = --comm-load or the load. The JSON output's 'workload' "
    "says which basis and rates were used."
)
PROFILE_HELP = "params.yaml profile the pipeline workload is read under (default: the file's `profile`)."


def workload_setup(workload: str, stage: str, profile: str | None) -> dict:
    """The models, cluster and :func:`~schedlab.nona.workload.build_workload` arguments of ``workload``.

    ``"pipeline"``: the values the pipeline stage ``stage`` (``nona/optimiser`` for the tables,
    ``nona/fig3`` for the simulations) reads from ``params.yaml`` (its ``workload`` mapping, its
    ``models``, ``servers`` and ``bandwidth_gbps``), exactly as its notebook does. ``"per-server"``:
    the same models and cluster with ``build_workload``'s defaults (per-server load, 100:1
    background). Returns ``{"workload", "stage", "profile", "models", "servers", "bandwidth_gbps",
    "kwargs"}``; ``kwargs`` is a fresh dict.

    >>> s = workload_setup("per-server", "nona/optimiser", None)
    >>> s["kwargs"], s["servers"] > 0
    ({}, True)
    >>> workload_setup("cluster", "nona/optimiser", None)
    Traceback (most recent call last):
    ...
    ValueError: --workload must be one of pipeline, per-server, got 'cluster'
    """
    if workload not in WORKLOADS:
        raise ValueError(f"--workload must be one of {', '.join(WORKLOADS)}, got {workload!r}")
    from schedlab.notebooks.params import stage_params

    values = stage_params(stage, profile).values
    kwargs = dict(values.get("workload") or {}) if workload == "pipeline" else {}
    return {
        "workload": workload,
        "stage": stage,
        "profile": values["profile"],
        "models": list(values["models"]),
        "servers": int(values["servers"]),
        "bandwidth_gbps": float(values["bandwidth_gbps"]),
        "kwargs": kwargs,
    }


def describe_workload(setup: dict, classes, cluster, load: float) -> dict:
    """What the JSON outputs say about the workload: its name, source, load basis, the
    ``build_workload`` arguments, every class's arrival rate (jobs/s), the compute load per server
    and the background link load it implies.

    >>> from schedlab.nona.workload import Cluster, build_workload, job_f
    >>> c = Cluster(servers=2, bandwidth_gbps=80.0)
    >>> w = build_workload(classes=[job_f()], load=0.5, cluster=c, comm_load=0.2)
    >>> d = describe_workload({"workload": "per-server", "stage": "x", "profile": "default", "kwargs": {}}, w, c, 0.5)
    >>> d["load_basis"], round(d["compute_load_per_server"], 6), round(d["background_link_load"], 6)
    ('server', 0.5, 0.2)
    """
    from schedlab.nona.workload import BACKGROUND_COMM

    kwargs = setup["kwargs"]
    source = (
        f"params.yaml {setup['stage'].replace('/', '.')} (nona.common.workload, profile {setup['profile']})"
        if setup["workload"] == "pipeline"
        else "build_workload defaults"
    )
    per_server = sum(j.arrival_rate * j.service_s(cluster) for j in classes) / cluster.servers
    link = (
        sum(j.arrival_rate * j.transfer_bytes for j in classes if j.kind == BACKGROUND_COMM)
        / cluster.link_bytes_per_s
    )
    return {
        "name": setup["workload"],
        "source": source,
        "load": load,
        "load_basis": kwargs.get("load_basis", "server"),
        "build_workload": kwargs,
        "arrival_rates": {j.name: j.arrival_rate for j in classes},
        "compute_load_per_server": per_server,
        "background_link_load": link,
    }


def _setup_or_fail(workload: str, stage: str, profile: str | None, comm_load: float | None) -> dict:
    """:func:`workload_setup` with ``--comm-load`` laid on top; a bad value is a click error."""
    from schedlab.notebooks.params import ParamsError

    try:
        setup = workload_setup(workload, stage, profile)
    except (ValueError, ParamsError) as exc:
        raise click.ClickException(str(exc)) from None
    if comm_load is not None:
        setup["kwargs"]["comm_load"] = comm_load
    return setup


@click.group()
def nona() -> None:
    """Nona: DNN inference DAGs, contraction, optimisation, simulation."""


@nona.command("contract")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--schedule",
    type=click.Choice(["rounds", "sequential"]),
    default="rounds",
    show_default=True,
    help="rounds: the paper's contract-all-of-C-per-round; sequential: one edge at a time.",
)
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
            {
                "id": n,
                "members": list(d["members"]),
                "forward_ms": d["forward_ms"],
                "parameter_bytes": d["parameter_bytes"],
            }
            for n, d in h.nodes(data=True)
        ],
        "edges": [{"source": u, "target": v, "bytes": d["bytes"]} for u, v, d in h.edges(data=True)],
    }
    if as_json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return
    click.echo(
        f"{path}: {result['pre_nodes']} tasks / {result['pre_edges']} edges -> "
        f"{result['post_nodes']} tasks / {result['post_edges']} edges"
    )
    for node in result["nodes"]:
        click.echo(f"  {node['id']}: {len(node['members'])} member(s), {node['forward_ms']:.3f} ms")


MODELS_HELP = (
    "Comma-separated inference classes (default: params.yaml nona.common.models): the paper's five, or "
    "inception_v3, nasnetamobile, gnmt (PipeDream profiles with parallel branches; several roots/sinks "
    "get a zero-cost virtual root/sink). gpt2 needs data/generated/nona/gpt2/graph.txt."
)


def _models(models: str | None, setup: dict) -> list[str]:
    """The ``--models`` list (default: the workload's models); the workload's ``time_scale`` keeps
    only the chosen models (a hardware scaling of a model left out does not apply), in place."""
    chosen = setup["models"] if models is None else [m.strip() for m in models.split(",") if m.strip()]
    scale = setup["kwargs"].get("time_scale")
    if scale:
        setup["kwargs"]["time_scale"] = {m: f for m, f in scale.items() if m in chosen}
    return chosen


@nona.command("simulate")
@click.option(
    "--scheme",
    required=True,
    help="random | opportunistic | spark_fair | nona | nona_star | expert | decima | decima_retrained",
)
@click.option(
    "--load",
    type=float,
    required=True,
    help="Compute load sum_j lambda_j S_j in (0, 1), over the cluster or per server as --workload says.",
)
@click.option(
    "--workload", type=click.Choice(WORKLOADS), default="pipeline", show_default=True, help=WORKLOAD_HELP
)
@click.option("--profile", default=None, help=PROFILE_HELP)
@click.option(
    "--comm-load",
    type=float,
    default=None,
    help="Background link load (default: the workload's comm_load, else the load).",
)
@click.option(
    "--bandwidth-gbps",
    type=float,
    default=None,
    help="Bottleneck link capacity (default: params.yaml nona.common.bandwidth_gbps).",
)
@click.option("--servers", type=int, default=None, help="Servers (default: params.yaml nona.common.servers).")
@click.option("--duration", type=float, default=60.0, show_default=True, help="Measured window, seconds.")
@click.option("--warmup", type=float, default=None, help="Warm-up, seconds (default 10% of --duration).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--models", default=None, help=MODELS_HELP)
@click.option(
    "--tables",
    type=click.Path(dir_okay=False),
    default=None,
    help="Optimiser JSON (`schedlab nona solve --json`, same --workload and point); required for nona, "
    "nona_star, expert.",
)
@click.option(
    "--decima-weights",
    type=click.Path(dir_okay=False),
    default=None,
    help="Retrained Decima weights (.npz, stage nona_decima_train); required for decima_retrained.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    required=True,
    help="Per-job records; the format follows the extension: .parquet or .csv.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the summary (and the workload used) as one JSON object."
)
def nona_simulate(
    scheme,
    load,
    workload,
    profile,
    comm_load,
    bandwidth_gbps,
    servers,
    duration,
    warmup,
    seed,
    models,
    tables,
    decima_weights,
    out,
    as_json,
):
    """Simulate SCHEME at compute LOAD on Nona's cluster; write per-job records to OUT."""
    from schedlab.nona import experiments
    from schedlab.nona.schedulers import SchemeUnavailable
    from schedlab.nona.sim import SimInputError
    from schedlab.cli._checks import table_format, writable, write_table
    from schedlab.nona.workload import Cluster, build_workload

    fmt = table_format(out, "--out")
    writable(out, "--out")  # before the simulation, not after it
    setup = _setup_or_fail(workload, "nona/fig3", profile, comm_load)
    servers = setup["servers"] if servers is None else servers
    bandwidth_gbps = setup["bandwidth_gbps"] if bandwidth_gbps is None else bandwidth_gbps
    model_list = _models(models, setup)
    try:
        experiments.check_point(scheme, load, bandwidth_gbps, servers, duration, tables)
        cluster = Cluster(servers=servers, bandwidth_gbps=float(bandwidth_gbps))
        used = describe_workload(
            setup, build_workload(model_list, load=load, cluster=cluster, **setup["kwargs"]), cluster, load
        )
        res = experiments.run_point(
            scheme,
            load=load,
            bandwidth_gbps=bandwidth_gbps,
            servers=servers,
            duration=duration,
            warmup=warmup,
            seed=seed,
            models=model_list,
            tables=tables,
            workload_kwargs=setup["kwargs"],
            decima_weights=decima_weights,
        )
    except (ValueError, FileNotFoundError, SimInputError, SchemeUnavailable) as exc:
        raise click.ClickException(str(exc)) from None
    write_table(res.jobs, out, fmt)
    summary = res.summary()
    summary["out"] = out
    summary["workload"] = used
    if as_json:
        json.dump(summary, sys.stdout, default=float)
        sys.stdout.write("\n")
        return
    click.echo(
        f"{scheme} at load {load} ({workload} workload, load basis {used['load_basis']}), {bandwidth_gbps} "
        f"Gbps, {servers} servers: {summary['jobs']} jobs, "
        f"mean JCT {summary['mean_jct_s']:.4g} s, p99 {summary['p99_jct_s']:.4g} s, "
        f"inference mean {summary['inference_mean_jct_s']:.4g} s; "
        f"{summary['events']} events in {summary['wall_s']:.2f} s -> {out}"
    )


@nona.command("solve")
@click.option(
    "--load",
    type=float,
    default=0.5,
    show_default=True,
    help="Compute load sum_j lambda_j S_j in (0, 1), over the cluster or per server as --workload says.",
)
@click.option(
    "--workload", type=click.Choice(WORKLOADS), default="pipeline", show_default=True, help=WORKLOAD_HELP
)
@click.option("--profile", default=None, help=PROFILE_HELP)
@click.option(
    "--bandwidth-gbps",
    type=float,
    default=None,
    help="Bottleneck link capacity (default: params.yaml nona.common.bandwidth_gbps).",
)
@click.option("--servers", type=int, default=None, help="Servers (default: params.yaml nona.common.servers).")
@click.option(
    "--method",
    type=click.Choice(["global", "local", "penalty"]),
    default="global",
    show_default=True,
    help="global: certified branch and bound over the link wait (Lagrangian bounds, no LP "
    "solver); local: softmax + L-BFGS multi-start; penalty: the paper's Lagrangian penalty, "
    "first order.",
)
@click.option("--models", default=None, help=MODELS_HELP)
@click.option(
    "--comm-load",
    type=float,
    default=None,
    help="Background link load (default: the workload's comm_load, else the load).",
)
@click.option(
    "--pricing",
    type=click.Choice(["paper", "critical_path", "critical_path_queued"]),
    default=None,
    help="How a split subgraph's time is priced: paper = (X)-(XI) as typeset (parts priced as if "
    "parallel); critical_path = the longest path through the parts (a part waits for its "
    "predecessors in other parts, a job's transfers queue one after another on the link; "
    "what the simulator measures on an idle cluster); critical_path_queued = the same plus the "
    "servers' queues (each task waits the PK wait of its server). Default: the library's DEFAULT_PRICING.",
)
@click.option(
    "--oversized",
    type=click.Choice(["error", "keep_together", "branches"]),  # decision.OVERSIZED (tested)
    default="error",
    show_default=True,
    help="A subgraph with more than 100,000 placement options (inception_v3's auxiliary head, "
    "nasnetamobile, gnmt): an error, kept on one server, or decided over partitions of its "
    "parallel branches (at most 2,000 options; schedlab.nona.decision.options).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the optimiser JSON (the simulator's input) with the workload used and the timings.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the JSON to this file (with the workload, without the timings: the same solve "
    "writes the same file).",
)
def nona_solve(
    load,
    workload,
    profile,
    bandwidth_gbps,
    servers,
    method,
    models,
    comm_load,
    pricing,
    oversized,
    as_json,
    out,
):
    """Solve Nona's placement optimisation (section III-C) for the section IV workload.

    With --json, stdout carries exactly one JSON object: anything the solvers might print goes
    to stderr, and errors are reported on stderr with a non-zero exit status. Its
    ``kernel_load_s`` is the one-off cost of loading the certified solver's compiled kernels in
    this process (numba's cache; a first run compiles them; 0 when the solve does not need them),
    timed apart from ``solve_s`` (compiling the decision space and solving).
    """
    import contextlib

    from schedlab.cli._checks import writable
    from schedlab.io import atomic_write_json
    from schedlab.nona.optimise import solve_point

    writable(out, "--out")  # before the solve, not after it
    setup = _setup_or_fail(workload, "nona/optimiser", profile, comm_load)
    servers = setup["servers"] if servers is None else servers
    bandwidth_gbps = setup["bandwidth_gbps"] if bandwidth_gbps is None else bandwidth_gbps
    model_list = _models(models, setup)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is reserved for the result
            res, doc = solve_point(
                load,
                bandwidth_gbps=bandwidth_gbps,
                servers=servers,
                method=method,
                models=model_list,
                workload_kwargs=setup["kwargs"],
                oversized=oversized,
                **({} if pricing is None else {"pricing": pricing}),
            )
        doc["workload"] = describe_workload(setup, res.problem.classes, res.problem.cluster, load)
        # loaded on the certified search's first use in this process (not at a point the root relaxation settles)
        kernel_load_s = float(res.info.get("kernel_load_s", 0.0))
        # a NaN is refused here, before anything is written
        text = json.dumps(
            {**doc, "kernel_load_s": kernel_load_s, "solve_s": res.solve_seconds}, allow_nan=False
        )
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    if out:
        atomic_write_json(out, doc)  # the timings only on stdout: the same solve writes the same file
    if as_json:
        sys.stdout.write(text + "\n")
        return
    gap = "" if res.gap is None else f", certified gap {res.gap:.3g}"
    w = doc["workload"]
    click.echo(
        f"{workload} workload (load basis {w['load_basis']}; {w['source']}), load {load}, "
        f"{bandwidth_gbps:g} Gbps, {servers} servers: compute load per server {w['compute_load_per_server']:.4g}, "
        f"background link load {w['background_link_load']:.4g}"
    )
    click.echo(
        f"{method}: objective {res.objective:.6g} (mean JCT {res.mean_jct_s:.4g} s), link load "
        f"{res.rho:.3f}, wait {res.phi * 1e3:.3g} ms, search space {doc['search_space']} over "
        f"{doc['n_distributions']} distributions, solve {res.solve_seconds:.3f} s "
        f"(+ compiled kernels loaded: {kernel_load_s:.3f} s){gap}"
    )
    for name, c in doc["classes"].items():
        dist = sum(
            1 - sg["options"][0]["p"] if sg["options"] and len(sg["options"][0]["partition"]) == 1 else 1
            for sg in c.get("subgraphs", [])
        )
        click.echo(
            f"  {name}: rate {c['arrival_rate']:.4g}/s, predicted JCT {c['predicted_jct_s']:.4g} s"
            + (
                f", {len(c['subgraphs'])} subgraph(s), expected distributed {dist:.3f}"
                if c.get("subgraphs")
                else ""
            )
        )
