"""Picking PCS-JCT / PCS-bal / PCS-pred from a front, and resuming a finished search with a
larger budget."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from schedlab import data
from schedlab.pcs.artifacts import trace_0e4a51
from schedlab.pcs.configs import load_config
from schedlab.pcs.pareto import PreferenceError, pareto_search, pick

OBJ = ["jct:avg", "pred_err:avg"]


def _front(jct, err, **more) -> pd.DataFrame:
    return pd.DataFrame({"T": range(len(jct)), "jct_avg": jct, "pred_err_avg": err, **more})


def test_pick_on_a_small_front_with_known_answers():
    # scaled: (0, 1), (0.1, 0.5), (0.4, 0.2), (1, 0); distances to (0, 0): 1, 0.51, 0.447, 1
    t = _front([100.0, 110.0, 140.0, 200.0], [50.0, 30.0, 18.0, 10.0])
    assert pick(t, "PCS-JCT") == pick(t, "jct") == pick(t, "jct_avg") == 0
    assert pick(t, "PCS-pred") == pick(t, "pred") == 3
    assert pick(t, "PCS-bal") == pick(t, "balanced") == 2
    assert pick(t.iloc[::-1].reset_index(drop=True), "bal") == 1  # a row position


def test_pick_ties_and_repeated_metrics():
    t = _front([1.0, 1.0, 2.0], [5.0, 4.0, 1.0], pred_err_p99=[9.0, 9.0, 0.5])
    assert pick(t, "jct") == 1  # equal JCT: the lower Pred_err
    assert pick(t, "pred") == 2  # first pred_err objective (avg)
    assert pick(t, "pred_err_p99") == 2
    same = _front([1.0, 1.0], [2.0, 2.0])
    assert pick(same, "jct") == 0 and pick(same, "bal") == 0


@pytest.mark.parametrize(
    "table,preference,message",
    [
        (_front([1.0], [1.0]), "latency", "unknown preference 'latency'"),
        (_front([1.0], [1.0]), "unfairness", "the front has no unfairness objective"),
        (pd.DataFrame({"jct_avg": [1.0]}), "jct", "at least two objective columns"),
        (_front([], []), "jct", "empty front"),
    ],
)
def test_pick_errors(table, preference, message):
    with pytest.raises(PreferenceError, match=message):
        pick(table, preference)


def test_pick_on_the_authors_stored_front():
    # the rule's picks on their 0e4a51 search (70 members flagged non-dominated); their own
    # hand picks for Fig. 7 were #5 (PCS-JCT) and #6 (PCS-bal), see pick's docstring
    df = pd.read_csv(data.require("pcs/pareto_search/wfq_pareto_fronts_workload2_2023-11.csv.gz"))
    t = df[df.file.str.contains("0e4a51") & (df.nondominated == 1)].reset_index(drop=True)
    t = t.rename(columns={"avg_jct": "jct_avg", "avg_pred_error": "pred_err_avg"})
    got = {p: int(t.solution_idx[pick(t, p)]) for p in ("PCS-JCT", "PCS-bal", "PCS-pred")}
    assert got == {"PCS-JCT": 4, "PCS-bal": 28, "PCS-pred": 56}


@pytest.fixture(scope="module")
def w60():
    return trace_0e4a51(60)


def test_finished_search_resumes_with_a_larger_budget(w60, tmp_path):
    small = pareto_search(
        w60,
        OBJ,
        budget=70,
        rng=np.random.default_rng(11),
        executor=1,
        checkpoint_dir=tmp_path,
        progress=False,
    )
    assert small.n_evaluations == 70
    again = pareto_search(
        w60, OBJ, budget=70, executor=1, checkpoint_dir=tmp_path, progress=False
    )  # the finished search, unchanged
    pd.testing.assert_frame_equal(again.table, small.table)
    more = pareto_search(w60, OBJ, budget=175, executor=1, checkpoint_dir=tmp_path, progress=False)
    fresh = pareto_search(w60, OBJ, budget=175, rng=np.random.default_rng(11), executor=1, progress=False)
    assert more.n_evaluations == fresh.n_evaluations == 175
    pd.testing.assert_frame_equal(more.evaluations, fresh.evaluations)
    pd.testing.assert_frame_equal(more.table, fresh.table)
    with pytest.raises(ValueError, match="a budget of 70 would have stopped earlier"):
        pareto_search(w60, OBJ, budget=70, executor=1, checkpoint_dir=tmp_path, progress=False)


def test_cli_pareto_pick_and_pick_command(tmp_path):
    from schedlab.cli import main
    from schedlab.pcs.workload import write_trace

    trace = write_trace(trace_0e4a51(60), tmp_path / "t.csv")
    out, cfg = tmp_path / "front.csv", tmp_path / "bal.json"
    base = [
        "pcs",
        "pareto",
        "--trace",
        str(trace),
        "--objectives",
        "jct:avg",
        "pred_err:avg",
        "--budget",
        "70",
        "--workers",
        "1",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(main, base + ["--pick", "PCS-bal", "--pick-out", str(cfg)])
    assert r.exit_code == 0, r.output
    front = pd.read_csv(out)
    i = pick(front, "bal")
    assert f"PCS-bal: row {i} " in r.output
    c = load_config(str(cfg))
    assert c.zeta_min == front.zeta_min[i] and c.num_classes == front.num_classes[i]
    assert json.loads(cfg.read_text())["delta"] == front.delta[i]
    r = CliRunner().invoke(main, ["pcs", "pick", str(out), "--preference", "pred"])
    assert r.exit_code == 0 and f"pred: row {pick(front, 'pred')} " in r.output, r.output
    bad = CliRunner().invoke(main, base + ["--pick", "unfairness"])
    assert bad.exit_code != 0 and "no unfairness objective" in bad.output
