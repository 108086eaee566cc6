"""Benchmark: Nona's certified optimiser, CPU seconds per bandwidth band (printed, not asserted).

Default run (``--bands``): the certified ``global`` solve (the simulator's tables) on the grid

* bandwidth 1, 2, 3, 4, 5, 6, 7, 10, 25, 50, 100 Gbps (3-7 Gbps is where the search needs most nodes),
* background link load 0, 0.05, 0.1, 0.2, 0.3,
* compute load 0.1, 0.3, 0.5, 0.7, 0.9, 0.95,

for both workloads of ``schedlab nona solve --workload``: ``pipeline`` (params.yaml
``nona.common``: the figures' workload) and ``per-server`` (``build_workload``'s defaults). Per
point the CPU seconds (``time.process_time``, median of ``--repeats``) of one solve, the decision
space compiled and solved (graphs read once beforehand; the compiled kernels loaded once before
any timing, see ``schedlab.nona._lagrange.load_kernels``). Printed: min / median / max CPU per
bandwidth, the points above the 0.1 s goal, and with ``--profile-slow N`` a cProfile of the N
slowest points. CPU, not wall: the machine may be shared (``uptime`` lines give its load).

    .venv/bin/python benchmarks/bench_nona_solve.py [--repeats 3] [--profile-slow 3]
    .venv/bin/python benchmarks/bench_nona_solve.py --solvers    # global / HiGHS / local / penalty side by side
    .venv/bin/python benchmarks/bench_nona_solve.py --classic    # the earlier workloads + Table III sweep
    .venv/bin/python benchmarks/bench_nona_solve.py --pricings paper,critical_path   # global only, side by side
    .venv/bin/python benchmarks/bench_nona_solve.py --side-by-side HEAD   # the search of a git revision vs this tree

``--solvers``: the five-model per-server workload on background link load
{0, 0.01, 0.05, 0.1, 0.3} x compute load {0.1, 0.5, 0.9, 0.95} x bandwidth {1, 10, 100} Gbps,
per point the wall seconds of ``global`` (median of ``--repeats``), its gap, nodes and knapsack
LPs, ``global`` with the HiGHS interval LPs (``lp="highspy"``, the reference; once), ``local``
(once) and ``penalty`` (the paper's approach, section IV-F; once, at ``PENALTY_POINTS`` only,
with ``--penalty-max-iter`` iterations).

``--side-by-side REV``: the certified search (``_lagrange.solve_global``) of git revision REV's
``lib/schedlab/nona/_lagrange.py`` against this tree's, interleaved on the same compiled problems
(per-server workload, the band grid's slowest region and a few others; ``--side-grid``: every
point of the default run, both workloads, the search run even where the root relaxation would
settle the point), with the CPU ratio before / after and whether both return the same theta,
objective, bound and search statistics (else which differ, and by how much).

``--pricings`` times only the certified ``global`` solve under each pricing of
``schedlab.nona.optimise.PRICINGS`` at every ``--solvers`` grid point, interleaved (same load on
the machine), with the ratio critical_path / paper of median CPU seconds.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import platform
import statistics
import subprocess
import time

from schedlab.nona import _lagrange, profiles
from schedlab.nona.optimise import PRICINGS, compile_problem, placement_counts, solve
from schedlab.nona.workload import Cluster, build_workload, inference_classes, job_f

METHODS = ("global", "local", "penalty")
COMM_LOADS = (0.0, 0.01, 0.05, 0.1, 0.3)
LOADS = (0.1, 0.5, 0.9, 0.95)
BANDWIDTHS = (1.0, 10.0, 100.0)
PENALTY_POINTS = ((0.01, 0.5, 10.0), (0.05, 0.5, 10.0), (0.1, 0.5, 10.0))
BAND_BANDWIDTHS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 10.0, 25.0, 50.0, 100.0)
BAND_COMM_LOADS = (0.0, 0.05, 0.1, 0.2, 0.3)
BAND_LOADS = (0.1, 0.3, 0.5, 0.7, 0.9, 0.95)
GOAL_CPU_S = 0.1  # certified global, in-process, at every point


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"load average {os.getloadavg()}"


def timed(wl, cl, method, reps, opts):
    runs, cpu = [], []
    for _ in range(reps):
        c0 = time.process_time()
        runs.append(solve(wl, cl, method=method, **opts))
        cpu.append(time.process_time() - c0)
    return runs[-1], statistics.median(r.solve_seconds for r in runs), statistics.median(cpu)


def n_mixed(res) -> int:
    """Subgraphs placed at random, counted as the Table III notebook counts them."""
    return placement_counts(res)["mixed_subgraphs"]


def compile_seconds(wl, cl, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        compile_problem(wl, cl)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def workloads() -> dict[str, tuple[list[str], int, dict]]:
    """The CLI's two workloads: (models, servers, build_workload arguments), read as the CLI reads them."""
    from schedlab.cli.nona import workload_setup

    out = {}
    for name in ("pipeline", "per-server"):
        s = workload_setup(name, "nona/optimiser", None)
        out[name] = (s["models"], s["servers"], s["kwargs"])
    return out


def cpu_of(wl, cl, reps: int):
    """(last result, median CPU seconds) of ``reps`` certified solves."""
    cpu, res = [], None
    for _ in range(reps):
        c0 = time.process_time()
        res = solve(wl, cl, method="global")
        cpu.append(time.process_time() - c0)
    return res, statistics.median(cpu)


def bands(a) -> None:
    """CPU per bandwidth band for both workloads; the points above the goal; profiles of the slowest."""
    print(f"compiled kernels loaded in {_lagrange.load_kernels():.3f} s (once per process, not timed below)")
    rows = []
    for name, (models, servers, kwargs) in workloads().items():
        classes = inference_classes(models)  # graphs read once per workload
        print(
            f"workload {name}: {servers} servers, models {','.join(models)}, build_workload {kwargs}",
            flush=True,
        )
        for bw in BAND_BANDWIDTHS:
            for comm in BAND_COMM_LOADS:
                for load in BAND_LOADS:
                    cl = Cluster(servers=servers, bandwidth_gbps=bw)
                    wl = build_workload(
                        classes=classes, load=load, cluster=cl, **{**kwargs, "comm_load": comm}
                    )
                    r, c = cpu_of(wl, cl, a.repeats)
                    rows.append(
                        {
                            "workload": name,
                            "bw": bw,
                            "comm": comm,
                            "load": load,
                            "cpu": c,
                            "gap": r.gap,
                            "nodes": r.info.get("nodes", 0),
                            "lps": r.info.get("lps", 0),
                            "root": bool(r.info.get("root_relaxation", False)),
                            "wl": wl,
                            "cl": cl,
                            **placement_counts(r),
                        }
                    )
            xs = [x["cpu"] for x in rows if x["workload"] == name and x["bw"] == bw]
            print(
                f"  {bw:5.0f} Gbps: CPU s min {min(xs):.4f} median {statistics.median(xs):.4f} max {max(xs):.4f} "
                f"over {len(xs)} points, {sum(x > GOAL_CPU_S for x in xs)} above {GOAL_CPU_S} s",
                flush=True,
            )
    print(
        f"\n{'workload':>10s} {'Gbps':>5s} {'n':>4s} {'min':>7s} {'median':>7s} {'max':>7s} {'> goal':>6s} "
        f"{'max nodes':>9s} {'root-certified':>14s}"
    )
    for name in dict.fromkeys(x["workload"] for x in rows):
        for bw in BAND_BANDWIDTHS:
            sel = [x for x in rows if x["workload"] == name and x["bw"] == bw]
            xs = [x["cpu"] for x in sel]
            print(
                f"{name:>10s} {bw:5.0f} {len(xs):4d} {min(xs):7.4f} {statistics.median(xs):7.4f} {max(xs):7.4f} "
                f"{sum(x > GOAL_CPU_S for x in xs):6d} {max(x['nodes'] for x in sel):9d} "
                f"{sum(x['root'] for x in sel):14d}"
            )
        xs = [x["cpu"] for x in rows if x["workload"] == name]
        print(
            f"{name:>10s} {'all':>5s} {len(xs):4d} {min(xs):7.4f} {statistics.median(xs):7.4f} {max(xs):7.4f} "
            f"{sum(x > GOAL_CPU_S for x in xs):6d}"
        )
    worst_gap = max(x["gap"] for x in rows)
    print(
        f"largest certified gap {worst_gap:.2e}; splits at {sum(x['split_subgraphs'] > 0 for x in rows)} and mixes "
        f"at {sum(x['mixed_subgraphs'] > 0 for x in rows)} of {len(rows)} points"
    )
    slow = sorted(rows, key=lambda x: -x["cpu"])
    above = [x for x in slow if x["cpu"] > GOAL_CPU_S]
    print(f"points above {GOAL_CPU_S} s CPU: {len(above)} of {len(rows)}")
    for x in above:
        print(
            f"  {x['workload']:>10s} {x['bw']:5.0f} Gbps, bg link {x['comm']:.2f}, load {x['load']:.2f}: "
            f"{x['cpu']:.4f} s, {x['nodes']} nodes, {x['lps']} LPs, gap {x['gap']:.1e}"
        )
    for x in slow[: a.profile_slow]:
        prof = cProfile.Profile()
        prof.enable()
        solve(x["wl"], x["cl"], method="global")
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(12)
        print(
            f"\ncProfile of {x['workload']} {x['bw']:g} Gbps, bg link {x['comm']:g}, load {x['load']:g} "
            "(tottime, top 12):"
        )
        print("\n".join(line for line in buf.getvalue().splitlines() if line.strip())[-2000:])


SIDE_POINTS = tuple((bw, 0.0, load) for bw in (3.0, 4.0, 5.0, 6.0, 7.0) for load in (0.3, 0.9)) + (
    (25.0, 0.0, 0.9),
    (10.0, 0.05, 0.5),
    (100.0, 0.0, 0.5),
)


def side_by_side(a) -> None:
    """REV's certified search against this tree's, interleaved, on the same problems."""
    import importlib.util
    import sys
    import tempfile
    from pathlib import Path

    import numpy as np
    from threadpoolctl import threadpool_limits

    src = subprocess.run(
        ["git", "show", f"{a.side_by_side}:lib/schedlab/nona/_lagrange.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "lagrange_before.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("lagrange_before", path)
    before = importlib.util.module_from_spec(spec)
    sys.modules["lagrange_before"] = before
    spec.loader.exec_module(before)
    _lagrange.load_kernels()
    stats = lambda r: {k: v for k, v in r.info.items() if k != "kernel_load_s"}  # noqa: E731
    if a.side_grid:  # every point of the default run, both workloads
        points = [
            (name, servers, models, kwargs, bw, comm, load)
            for name, (models, servers, kwargs) in workloads().items()
            for bw in BAND_BANDWIDTHS
            for comm in BAND_COMM_LOADS
            for load in BAND_LOADS
        ]
    else:
        points = [("per-server", 80, list(profiles.MODELS), {}, *p) for p in SIDE_POINTS]
    classes = {m: inference_classes(m) for m in dict.fromkeys(tuple(p[2]) for p in points)}
    print(
        f"certified search of {a.side_by_side} (before) vs this tree (after), median CPU of {a.repeats}, "
        "compiled problems shared"
    )
    print(
        f"{'workload':>10s} {'Gbps':>5s} {'bg':>4s} {'load':>4s} {'nodes':>5s} {'before s':>8s} {'after s':>8s} "
        f"{'ratio':>6s} same"
    )
    ratios, n_same, after_max = [], 0, 0.0
    with threadpool_limits(limits=1, user_api="blas"):
        for i, (name, servers, models, kwargs, bw, comm, load) in enumerate(points):
            cl = Cluster(servers=servers, bandwidth_gbps=bw)
            wl = build_workload(
                classes=classes[tuple(models)], load=load, cluster=cl, **{**kwargs, "comm_load": comm}
            )
            prob = compile_problem(wl, cl)
            if i == 0:  # the first calls load (or compile) both versions' kernels: not timed
                before.solve_global(prob), _lagrange.solve_global(prob)
            tb, ta = [], []
            for _ in range(a.repeats):  # interleaved: both see the same load on the machine
                c0 = time.process_time()
                rb = before.solve_global(prob)
                tb.append(time.process_time() - c0)
                c0 = time.process_time()
                ra = _lagrange.solve_global(prob)
                ta.append(time.process_time() - c0)
            diff = [
                name
                for name, equal in (
                    ("theta", np.array_equal(rb.theta, ra.theta)),
                    ("objective", rb.objective == ra.objective),
                    ("bound", rb.lower_bound == ra.lower_bound),
                    ("stats", stats(rb) == stats(ra)),
                )
                if not equal
            ]
            same = "True" if not diff else "differ: " + ",".join(diff)
            if diff:
                rel = (ra.objective - rb.objective) / abs(rb.objective)
                gaps = [(r.objective - r.lower_bound) / abs(r.objective) for r in (rb, ra)]
                same += (
                    f" (objective after-before {rel:+.1e} rel; relative gaps {gaps[0]:.1e} / {gaps[1]:.1e})"
                )
            mb, ma = statistics.median(tb), statistics.median(ta)
            ratios.append(mb / ma)
            n_same += not diff
            after_max = max(after_max, ma)
            if not a.side_grid or diff or mb > 0.01:  # the grid prints the points where the search works
                print(
                    f"{name:>10s} {bw:5.0f} {comm:4.2f} {load:4.2f} {ra.info['nodes']:5d} {mb:8.4f} {ma:8.4f} "
                    f"{mb / ma:6.2f} {same}",
                    flush=True,
                )
    print(
        f"before / after CPU: min {min(ratios):.2f} median {statistics.median(ratios):.2f} max {max(ratios):.2f} "
        f"over {len(ratios)} points; identical theta, objective, bound and statistics at {n_same} of {len(ratios)}; "
        f"slowest search after {after_max:.4f} s"
    )


def grid(a) -> None:
    five = inference_classes(profiles.MODELS)  # GPT-2's graph read once
    print(
        f"five-model workload, 80 servers; global(new) median of {a.repeats}; highspy, local, penalty once; "
        f"penalty max_iter {a.penalty_max_iter} on {len(PENALTY_POINTS)} points"
    )
    head = (
        f"{'bg link':>7s} {'load':>5s} {'Gbps':>5s} {'compile':>8s} {'new s':>7s} {'new cpu':>7s} {'gap':>8s} {'nodes':>5s} "
        f"{'LPs':>4s} {'mix':>3s} {'highspy s':>9s} {'LPs':>4s} {'local s':>8s} {'penalty s':>9s} "
        f"{'new obj':>11s} {'highspy-new':>11s} {'local-new':>10s} {'penalty-new':>11s}"
    )
    print(head)
    worst, worst_cpu = {}, {}
    for cl_load in COMM_LOADS:
        for load in LOADS:
            for bw in BANDWIDTHS:
                cl = Cluster(servers=80, bandwidth_gbps=bw)
                wl = build_workload(classes=five, load=load, cluster=cl, comm_load=cl_load)
                comp = compile_seconds(wl, cl, a.repeats)
                new, t_new, c_new = timed(wl, cl, "global", a.repeats, {})
                ref, t_ref, _ = (
                    timed(wl, cl, "global", 1, {"lp": "highspy"}) if not a.no_highspy else (None, None, None)
                )
                loc, t_loc, _ = timed(wl, cl, "local", 1, {})
                pen = t_pen = None
                if (cl_load, load, bw) in PENALTY_POINTS:
                    pen, t_pen, _ = timed(wl, cl, "penalty", 1, {"max_iter": a.penalty_max_iter})
                worst[cl_load] = max(worst.get(cl_load, 0.0), t_new)
                worst_cpu[cl_load] = max(worst_cpu.get(cl_load, 0.0), c_new)

                def cell(x, fmt):
                    width = int("".join(ch for ch in fmt.split(".")[0] if ch.isdigit()))
                    return format(x, fmt) if x is not None else f"{'-':>{width}}"

                print(
                    f"{cl_load:7.2f} {load:5.2f} {bw:5.0f} {comp:8.4f} {t_new:7.4f} {c_new:7.4f} {new.gap:8.1e} "
                    f"{new.info.get('nodes', 0):5d} {new.info.get('lps', 0):4d} {n_mixed(new):3d} "
                    f"{cell(t_ref, '9.3f')} {cell(ref.info['lps'] if ref else None, '4d')} {t_loc:8.4f} "
                    f"{cell(t_pen, '9.3f')} {new.objective:11.6f} "
                    f"{cell(ref.objective - new.objective if ref else None, '11.1e')} "
                    f"{loc.objective - new.objective:10.1e} {cell(pen.objective - new.objective if pen else None, '11.1e')}",
                    flush=True,
                )
    print(
        "slowest global (new) per background link load, wall: "
        + ", ".join(f"{k:g}: {v:.4f} s" for k, v in worst.items())
    )
    print(
        "slowest global (new) per background link load, CPU (what an idle core would take): "
        + ", ".join(f"{k:g}: {v:.4f} s" for k, v in worst_cpu.items())
    )


def pricings(a) -> None:
    """Certified global solve under each pricing, side by side, at every grid point."""
    names = a.pricings.split(",")
    bad = [p for p in names if p not in PRICINGS]
    if bad:
        raise SystemExit(f"--pricings: unknown {bad}; choose from {PRICINGS}")
    five = inference_classes(profiles.MODELS)
    print(f"five-model workload, 80 servers; global, median of {a.repeats} (wall s / CPU s per pricing)")
    print(
        f"{'bg link':>7s} {'load':>5s} {'Gbps':>5s} "
        + " ".join(
            f"{p + ' wall':>18s} {p + ' cpu':>17s} {'gap':>8s} {'split':>5s} {'mix':>3s}" for p in names
        )
        + (f" {'cpu ratio':>9s}" if len(names) == 2 else "")
    )
    cpus: dict[str, list[float]] = {p: [] for p in names}
    for cl_load in COMM_LOADS:
        for load in LOADS:
            for bw in BANDWIDTHS:
                cl = Cluster(servers=80, bandwidth_gbps=bw)
                wl = build_workload(classes=five, load=load, cluster=cl, comm_load=cl_load)
                cells, row = [], {}
                for p in names:
                    r, t, c = timed(wl, cl, "global", a.repeats, {"pricing": p})
                    row[p] = c
                    cpus[p].append(c)
                    pc = placement_counts(r)
                    cells.append(
                        f"{t:18.4f} {c:17.4f} {r.gap:8.1e} {pc['split_subgraphs']:5d} "
                        f"{pc['mixed_subgraphs']:3d}"
                    )
                ratio = f" {row[names[1]] / row[names[0]]:9.2f}" if len(names) == 2 else ""
                print(f"{cl_load:7.2f} {load:5.2f} {bw:5.0f} " + " ".join(cells) + ratio, flush=True)
    for p in names:
        xs = sorted(cpus[p])
        print(
            f"{p}: CPU s min {xs[0]:.4f} median {statistics.median(xs):.4f} max {xs[-1]:.4f} "
            f"over {len(xs)} points"
        )


def classic(a) -> None:
    c80 = Cluster(servers=80, bandwidth_gbps=10)
    c2 = Cluster(servers=2, bandwidth_gbps=80)
    five = inference_classes()
    workloads = {
        "five models (gpt2 traced)": (build_workload(classes=five, load=a.load, cluster=c80), c80),
        "four PipeDream models": (build_workload(classes=five[1:], load=a.load, cluster=c80), c80),
        "job f, 2 servers, load 0.6": (
            build_workload(classes=[job_f()], load=0.6, cluster=c2, background_comm_bytes=20e6),
            c2,
        ),
    }
    print(
        f"{'workload':28s} {'options':>8s} {'dists':>5s} {'method':8s} {'wall s':>8s} {'cpu s':>8s} "
        f"{'objective':>12s} {'excess vs LB':>12s} info"
    )
    for name, (wl, cl) in workloads.items():
        prob = compile_problem(wl, cl)
        lb = None
        for method in METHODS:
            opts = {"max_iter": a.penalty_max_iter} if method == "penalty" else {}
            r, t, cpu = timed(wl, cl, method, 1 if method == "penalty" else a.repeats, opts)
            if method == "global":
                lb = r.lower_bound
            info = {
                k: v
                for k, v in r.info.items()
                if k in ("lps", "nodes", "starts", "evaluations", "iterations", "rounds", "active_options")
            }
            print(
                f"{name:28s} {prob.n_options:8d} {prob.n_distributions:5d} {method:8s} {t:8.4f} {cpu:8.4f} "
                f"{r.objective:12.6g} {r.objective - lb:12.3g} {info}"
            )
    print(
        f"\nTable III sweep: five models, load {a.load}, 10 Gbps (wall s / cpu s; median of {a.repeats}, "
        "penalty once)"
    )
    print(f"{'servers':>7s} " + " ".join(f"{m + ' wall':>13s} {m + ' cpu':>12s}" for m in METHODS))
    for n in range(16, 129, 16):
        cl = Cluster(servers=n, bandwidth_gbps=10)
        wl = build_workload(classes=five, load=a.load, cluster=cl)
        cells = []
        for method in METHODS:
            opts = {"max_iter": a.penalty_max_iter} if method == "penalty" else {}
            _, t, cpu = timed(wl, cl, method, 1 if method == "penalty" else a.repeats, opts)
            cells.append(f"{t:13.4f} {cpu:12.4f}")
        print(f"{n:7d} " + " ".join(cells))
    print("paper (Table III): 13 s per solve, single-threaded, at every cluster size")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--load", type=float, default=0.5, help="compute load of the --classic workloads")
    ap.add_argument("--penalty-max-iter", type=int, default=2_000)
    ap.add_argument(
        "--no-highspy", action="store_true", help="skip the HiGHS reference (slow where splitting pays)"
    )
    ap.add_argument(
        "--classic", action="store_true", help="the earlier workloads and the Table III sweep instead"
    )
    ap.add_argument(
        "--solvers", action="store_true", help="global / HiGHS / local / penalty side by side instead"
    )
    ap.add_argument(
        "--profile-slow", type=int, default=3, help="cProfile the N slowest points of the default run"
    )
    ap.add_argument(
        "--side-by-side",
        default=None,
        metavar="REV",
        help="time git revision REV's certified search against this tree's (e.g. HEAD)",
    )
    ap.add_argument(
        "--side-grid",
        action="store_true",
        help="with --side-by-side: every point of the default run (both workloads) instead of a sample",
    )
    ap.add_argument(
        "--pricings",
        default=None,
        help="comma-separated pricings (e.g. paper,critical_path): global only, side by side",
    )
    a = ap.parse_args()
    print(
        f"{platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} cpus; {uptime()}"
    )
    t0 = time.perf_counter()
    mode = (
        side_by_side
        if a.side_by_side
        else classic
        if a.classic
        else pricings
        if a.pricings
        else grid
        if a.solvers
        else bands
    )
    mode(a)
    print(f"done in {time.perf_counter() - t0:.0f} s; {uptime()}")
    print(f"goal: certified global <= {GOAL_CPU_S} s CPU at every point; paper (Table III): 13 s per solve")


if __name__ == "__main__":
    main()
