"""The stand-in's CSV text, side by side: pandas' ``DataFrame.to_csv`` (what the generator called)
against :func:`schedlab.csvrows.write_rows` (what it calls now) on the tables of one chunk of the
stand-in, in one run, alternating which goes first; every table's bytes are checked equal (prints
figures; not a test).

Usage::

    .venv/bin/python benchmarks/bench_polaris_synth_csv.py --jobs 50000 --rounds 3 \\
        --out benchmarks/results/polaris_synth_csv.txt
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

import _report
from _report import say


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def chunk_tables(jobs: int, seed: int) -> dict:
    """The trace tables of the stand-in's first chunk of ``jobs`` jobs, as the generator makes them
    (``synthetic.write_archives`` is stopped before it writes anything)."""
    from schedlab.polaris import synthetic

    tables = {}

    class Stop(Exception):
        pass

    def grab(out_dir, n_jobs, make_chunk, *, chunk_jobs, progress):
        tables.update(make_chunk(n_jobs, 0))
        raise Stop

    real = synthetic.write_archives
    synthetic.write_archives = grab
    try:
        with tempfile.TemporaryDirectory() as tmp:  # synthesize makes its folder before it writes
            synthetic.synthesize(Path(tmp), jobs, np.random.default_rng([seed, 1]), progress=False)
    except Stop:
        pass
    finally:
        synthetic.write_archives = real
    return tables


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=50_000, help="jobs in the chunk (the generator's chunk size)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    _report.OUT = args.out

    from schedlab.csvrows import write_rows

    tables = chunk_tables(args.jobs, args.seed)
    say(
        f"# stand-in CSV text side by side ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{platform.node()}, {os.cpu_count()} cores, {load()}): one {args.jobs:,}-job chunk, "
        f"{args.rounds} rounds, best of each"
    )
    total = {"pandas": 0.0, "csvrows": 0.0}
    for name, df in tables.items():
        best = {"pandas": np.inf, "csvrows": np.inf}
        for r in range(args.rounds):
            order = ["pandas", "csvrows"] if r % 2 == 0 else ["csvrows", "pandas"]
            out = {}
            for who in order:
                t0 = time.perf_counter()
                if who == "pandas":
                    text = df.to_csv(header=False, index=False, lineterminator="\n").encode()
                else:
                    fh = io.BytesIO()
                    write_rows(fh, df)
                    text = fh.getvalue()
                best[who] = min(best[who], time.perf_counter() - t0)
                out[who] = text
            if out["pandas"] != out["csvrows"]:
                raise SystemExit(f"{name}: bytes differ")
        for who in total:
            total[who] += best[who]
        say(
            f"  {name:20s} {len(df):>9,} rows: pandas {best['pandas']:6.2f} s, csvrows {best['csvrows']:6.2f} s, "
            f"{best['pandas'] / best['csvrows']:5.1f}x; bytes equal ({len(out['pandas']):,}); {load()}"
        )
    say(
        f"all tables: pandas {total['pandas']:.2f} s, csvrows {total['csvrows']:.2f} s, "
        f"{total['pandas'] / total['csvrows']:.1f}x; {load()}"
    )


if __name__ == "__main__":
    main()
