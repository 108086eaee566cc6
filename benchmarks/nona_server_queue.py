"""Benchmark: does a server queue in Nona's model make its predicted split gains hold under load?

Two pricings of :mod:`schedlab.nona.optimise`, both certified (``method="global"``):
``critical_path`` (the idle cluster's schedule plus the link's PK wait per transfer) and
``critical_path_queued`` (the same plus the servers' PK wait per task,
:func:`schedlab.nona.optimise.server_queue`). For each grid point and pricing: does Nona split,
the predicted gain of its tables over "keep every subgraph together", the simulated gain
(paired per seed: the same arrivals for both placements; min / median / max over the seeds)
and the verdict (:func:`schedlab.nona.branches.verdict`). Also the model's keep-together JCT
next to the simulated one (the model error that the server queue is meant to remove).

Part ``branches``: the instance of ``notebooks/nona/branches`` (``params.yaml`` ``nona.branches``:
inception_v3, per-server load, background link load 5%, 80 servers), loads x bandwidths x
byte scales. Part ``pipeline``: the default workload of Figs. 3-5 (``nona.common``), loads x
bandwidths at byte scale 1, as ``notebooks/nona/model_error``'s sign section.

    .venv/bin/python benchmarks/nona_server_queue.py [--part branches|pipeline|all]
        [--duration 60] [--seeds 0 1 2] [--out benchmarks/results/nona_server_queue.txt]

Printed and written, not asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import yaml

from schedlab.nona import branches, optimise
from schedlab.nona.workload import Cluster, build_workload

PRICINGS = ("critical_path", "critical_path_queued")
ROOT = Path(__file__).resolve().parents[1]


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"load average {os.getloadavg()}"


def point(wl, cl, seeds, duration) -> list[dict]:
    """Both pricings at one workload: predicted and simulated gains of Nona's tables over keep-together."""
    together = branches.together_tables(wl)
    sim_t = branches.simulated_means(wl, cl, together, seeds=seeds, duration=duration)
    rows = []
    first_theta = None
    for pricing in PRICINGS:
        t0 = time.process_time()
        res = optimise.solve(wl, cl, method="global", pricing=pricing, oversized="keep_together")
        cpu = time.process_time() - t0
        prob = res.problem
        pred_t = branches.inference_mean(
            prob.classes, optimise.evaluate(prob, optimise.theta_from_tables(prob, together)).tau
        )
        pred_n = branches.inference_mean(prob.classes, [res.tau[c.name] for c in prob.classes])
        counts = optimise.placement_counts(res)
        splits = counts["split_subgraphs"] > 0
        sim_n = (
            branches.simulated_means(wl, cl, optimise.to_json(res), seeds=seeds, duration=duration)
            if splits
            else sim_t
        )
        gains = sim_n / sim_t - 1
        pred_gain = pred_n / pred_t - 1
        # the options are laid out the same under every pricing: equal theta = the same placement
        same = first_theta is not None and np.allclose(res.theta, first_theta, atol=1e-9)
        first_theta = res.theta if first_theta is None else first_theta
        rows.append(
            {
                "pricing": pricing,
                "split": counts["split_subgraphs"],
                "mixed": counts["mixed_subgraphs"],
                "pred_gain": pred_gain,
                "sim_min": float(gains.min()),
                "sim_med": float(np.median(gains)),
                "sim_max": float(gains.max()),
                "verdict": branches.verdict(pred_gain, gains, splits),
                "pred_together_s": pred_t,
                "sim_together_s": float(sim_t.mean()),
                "server_wait_ms": 1e3 * prob.server_wait,
                "solve_cpu_s": cpu,
                "same_as_first": same,
            }
        )
    return rows


HEADER = (
    f"{'load':>5s} {'Gbps':>5s} {'bytes':>6s} {'pricing':>21s} {'split':>5s} {'mix':>3s} "
    f"{'pred%':>7s} {'sim% min/med/max':>23s} {'verdict':>10s} {'together model/sim s':>21s} {'Wsrv ms':>7s}"
)


def line(load, bw, bs, r) -> str:
    return (
        f"{load:5.2f} {bw:5g} {bs:6g} {r['pricing']:>21s} {r['split']:5d} {r['mixed']:3d} "
        f"{100 * r['pred_gain']:+7.2f} {100 * r['sim_min']:+7.2f}/{100 * r['sim_med']:+6.2f}/{100 * r['sim_max']:+7.2f} "
        f"{r['verdict']:>10s} {r['pred_together_s']:10.4f}/{r['sim_together_s']:<10.4f} {r['server_wait_ms']:7.2f}"
    )


def run_grid(title, models, workload, servers, loads, bws, scales, seeds, duration, emit) -> list:
    emit(f"\n## {title}\n{HEADER}")
    tally = {p: {"confirmed": 0, "refuted": 0, "unresolved": 0, "no split": 0} for p in PRICINGS}
    model_err = {p: [] for p in PRICINGS}
    split_rows: dict = {p: [] for p in PRICINGS}
    same = 0
    for bs in scales:
        for bw in bws:
            for load in loads:
                cl = Cluster(servers=servers, bandwidth_gbps=float(bw))
                wl = build_workload(
                    list(models), load=float(load), cluster=cl, byte_scale=float(bs), **workload
                )
                for r in point(wl, cl, seeds, duration):
                    emit(line(load, bw, bs, r))
                    tally[r["pricing"]][r["verdict"]] += 1
                    model_err[r["pricing"]].append(r["pred_together_s"] / r["sim_together_s"] - 1)
                    same += r["same_as_first"]
                    if r["split"]:
                        split_rows[r["pricing"]].append((load, r))
    for p in PRICINGS:
        e = 100 * np.array(model_err[p])
        emit(
            f"{p}: verdicts {tally[p]}; keep-together model error {e.min():+.1f}% .. {e.max():+.1f}% "
            f"(median {np.median(e):+.1f}%)"
        )
        for load in sorted({x for x, _ in split_rows[p]}):
            rs = [r for x, r in split_rows[p] if x == load]
            inside = sum(r["sim_min"] <= r["pred_gain"] <= r["sim_max"] for r in rs)
            d = [100 * (r["pred_gain"] - r["sim_med"]) for r in rs]
            emit(
                f"  load {load:g}: {len(rs)} points split; predicted gain inside the seeds' simulated "
                f"[min, max] at {inside}; predicted - simulated median {min(d):+.2f} .. {max(d):+.2f} pp"
            )
    emit(
        f"{PRICINGS[1]} chose the same placement as {PRICINGS[0]} at {same} of {len(loads) * len(bws) * len(scales)} points"
    )
    return tally


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("branches", "pipeline", "all"), default="all")
    ap.add_argument("--duration", type=float, default=60.0, help="measured window per simulation (s)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--pipeline-duration", type=float, default=20.0)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/nona_server_queue.txt")
    a = ap.parse_args()
    params = yaml.safe_load((ROOT / "params.yaml").read_text())["nona"]
    common, br = params["common"], params["branches"]
    lines: list[str] = []

    def emit(s: str) -> None:
        print(s, flush=True)
        lines.append(s)

    emit(f"# Nona: critical_path vs critical_path_queued, simulated on the same arrivals\n# {uptime()}")
    emit(
        f"# seeds {a.seeds}; windows {a.duration:g} s (branches), {a.pipeline_duration:g} s (pipeline); +10% warm-up"
    )
    t0 = time.perf_counter()
    if a.part in ("branches", "all"):
        run_grid(
            f"branches map instance ({', '.join(br['models'])}, {br['workload']})",
            br["models"],
            br["workload"],
            common["servers"],
            br["loads"],
            br["bandwidths_gbps"],
            br["byte_scales"],
            a.seeds,
            a.duration,
            emit,
        )
    if a.part in ("pipeline", "all"):
        run_grid(
            f"default pipeline workload of Figs. 3-5 ({', '.join(common['models'])}, {common['workload']})",
            common["models"],
            common["workload"],
            common["servers"],
            [0.1, 0.5, 0.9],
            [2.5, 10.0, 40.0],
            [1.0],
            a.seeds[:2],
            a.pipeline_duration,
            emit,
        )
    emit(f"# wall {time.perf_counter() - t0:.0f} s; {uptime()}")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
