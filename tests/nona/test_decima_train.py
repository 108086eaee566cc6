"""Decima's training loop (schedlab.nona.decima.train) on tiny budgets.

* the PyTorch log-probability equals the NumPy policy's, and its gradient equals a central
  finite difference of the NumPy policy's log-probability;
* resuming from a checkpoint gives the same weights as an uninterrupted run;
* exported weights load into the NumPy policy and give the action probabilities of an
  independent PyTorch reading of the architecture (tools/make_decima_fixture.py) at 1e-9;
* a short training run on a toy scenario (shortest-job-first pays) beats its initial policy.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace as NS

import networkx as nx
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="Decima training needs torch (the 'trace' extra)")

from schedlab.nona.decima import policy as P  # noqa: E402
from schedlab.nona.decima import train as T  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _job(name, works, rate, edges=None, nbytes=0.0):
    g = nx.DiGraph()
    names = [f"{name}{i}" for i in range(len(works))]
    for v, w in zip(names, works):
        g.add_node(v, work_s=w)
    for a, b in edges if edges is not None else list(zip(range(len(works) - 1), range(1, len(works)))):
        g.add_edge(names[a], names[b], bytes=nbytes)
    return NS(name=name, kind="inference", dag=g, arrival_rate=rate)


def _cluster(servers):
    return NS(servers=servers, bandwidth_gbps=10.0, compute_rate=1.0, link_bytes_per_s=1.25e9)


def _dag_workload():
    # a diamond with a skip edge (the two message-passing variants differ on it) and a chain
    diamond = _job(
        "diamond", [0.02, 0.03, 0.01, 0.02], 20.0, edges=[(0, 1), (0, 2), (1, 3), (2, 3), (0, 3)], nbytes=1e6
    )
    chain = _job("chain", [0.01, 0.01], 30.0)
    return [diamond, chain], _cluster(3)


def _toy_sjf(servers=2, load=0.85):
    """Short single-task jobs and long 4-task chains at equal rates: serving short jobs first pays."""
    return [
        _job("short", [0.2], load * servers / 2 / 0.2),
        _job("long", [1.0] * 4, load * servers / 2 / 4.0),
    ], _cluster(servers)


def _episode(weights, cfg, jc, cl, seed=1):
    return T.run_episode(weights, cfg, 11, seed, jc, cl)


def test_torch_log_prob_and_gradient_match_numpy_policy():
    jc, cl = _dag_workload()
    cfg = T.TrainConfig(episode_s=0.3, servers=3, rollouts=2, models=("toy",))
    module = T.make_module(generator=torch.Generator().manual_seed(3))
    w = T.export_weights(module)
    ep = _episode(w, cfg, jc, cl)
    assert len(ep.records) > 20
    assert any(r.any_edge for r in ep.records) and len({len(r.jobs) for r in ep.records}) > 1
    lp, ent = T.batch_log_probs(module, [ep])
    np.testing.assert_allclose(lp.detach().numpy(), [r.log_prob for r in ep.records], rtol=0, atol=1e-9)
    np.testing.assert_allclose(lp.detach().numpy(), T.numpy_log_probs(w, [ep]), rtol=0, atol=1e-9)
    assert (ent.detach().numpy() >= 0).all()
    # gradient of sum_k c_k log pi(a_k|s_k) (fixed random weights c_k) against a NumPy finite difference
    c = np.random.default_rng(0).normal(size=len(ep.records))
    (lp * torch.from_numpy(c)).sum().backward()
    state = {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}
    grads = {k: p.grad.numpy() for k, p in module.named_parameters()}
    rng = np.random.default_rng(1)
    checked = 0
    for key in (
        "encoder.node_encoder.mlp_prep.0.weight",
        "encoder.node_encoder.mlp_msg.2.weight",
        "encoder.node_encoder.mlp_update.4.bias",
        "encoder.dag_encoder.mlp.0.weight",
        "encoder.global_encoder.mlp.4.weight",
        "stage_policy_network.mlp_score.0.weight",
        "exec_policy_network.mlp_score.0.weight",
        "exec_policy_network.mlp_score.4.bias",
    ):
        for _ in range(2):
            idx = tuple(int(rng.integers(0, s)) for s in state[key].shape)
            eps = 1e-6
            vals = []
            for sign in (1, -1):
                st = {k: v.copy() for k, v in state.items()}
                st[key][idx] += sign * eps
                vals.append(float(c @ T.numpy_log_probs(P.weights_from_state_dict(st), [ep])))
            fd = (vals[0] - vals[1]) / (2 * eps)
            assert grads[key][idx] == pytest.approx(fd, rel=1e-5, abs=1e-7), (key, idx)
            checked += 1
    assert checked == 16


def test_resume_from_checkpoint_equals_uninterrupted(tmp_path):
    jc, cl = _dag_workload()
    cfg = T.TrainConfig(
        episode_s=0.2,
        servers=3,
        rollouts=2,
        iterations=4,
        checkpoint_every=2,
        lr=1e-2,
        entropy=0.01,
        models=("toy",),
        seed=5,
    )
    full = T.train(cfg, tmp_path / "a", progress=False, job_classes=jc, cluster=cl)
    part = T.train(cfg, tmp_path / "b", progress=False, job_classes=jc, cluster=cl, stop_after=2)
    assert len(part.curve) == 2 and (tmp_path / "b" / "checkpoint.pt").is_file()
    rest = T.train(cfg, tmp_path / "b", progress=False, job_classes=jc, cluster=cl)
    assert rest.resumed_from == 2
    for k, v in full.module.state_dict().items():
        np.testing.assert_array_equal(rest.module.state_dict()[k].numpy(), v.numpy(), err_msg=k)
    assert [c["mean_jct_s"] for c in rest.curve] == [c["mean_jct_s"] for c in full.curve]
    init = T.make_module(generator=torch.Generator().manual_seed(5)).state_dict()
    assert any((init[k] != v).any() for k, v in full.module.state_dict().items())  # it did move
    other = T.TrainConfig(**{**cfg.__dict__, "lr": 0.5})
    with pytest.raises(ValueError, match="another training config"):
        T.train(other, tmp_path / "b", progress=False, job_classes=jc, cluster=cl)


def _tool():
    spec = importlib.util.spec_from_file_location(
        "make_decima_fixture", ROOT / "tools" / "make_decima_fixture.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_trained_weights_load_into_numpy_policy(tmp_path):
    jc, cl = _dag_workload()
    cfg = T.TrainConfig(episode_s=0.2, servers=3, rollouts=2, iterations=2, lr=3e-2, models=("toy",))
    res = T.train(cfg, None, progress=False, job_classes=jc, cluster=cl)
    # the fixture tool builds its actor in float32 and then casts to float64: round the trained
    # weights to float32 values so both readings hold exactly the same numbers
    with torch.no_grad():
        for prm in res.module.parameters():
            prm.copy_(prm.float().double())
    path = tmp_path / "weights.npz"
    T.save_weights_npz(res.module, path)
    w = P.load_weights(path)
    assert w.num_parameters == 20802
    tool = _tool()
    actor = tool.build_actor({k: v.clone() for k, v in res.module.state_dict().items()})
    for obs in tool.observations():
        o = P.DecimaObservation(**{**obs, "num_executors": int(obs["num_executors"])})
        for variant in ("spark-sched-sim", "exact"):
            ref = tool.reference_outputs(actor, obs, variant)
            out = P.forward(w, o, variant)
            np.testing.assert_allclose(
                P.softmax(out.stage_scores), P.softmax(ref["stage_scores"]), rtol=0, atol=1e-9
            )
            ex = [P.exec_scores(w, o, out, j) for j in range(o.num_jobs)]
            np.testing.assert_allclose(np.concatenate(ex), ref["exec_scores"], rtol=0, atol=1e-9)
    # and the simulator plug-in's recorded log-probabilities equal the torch model's
    ep = _episode(w, cfg, jc, cl, seed=2)
    lp, _ = T.batch_log_probs(res.module, [ep])
    np.testing.assert_allclose(lp.detach().numpy(), [r.log_prob for r in ep.records], rtol=0, atol=1e-9)


def test_short_training_beats_the_initial_policy():
    """Toy scenario (2 servers, 85% load): short single tasks vs 4-task chains of long tasks.

    Measured at the time of writing: mean JCT 0.79 s -> 0.61-0.62 s (seeds 0, 1, 2; 25-30
    iterations); asserted: at least 8% better on 8 held-out arrival sequences."""
    jc, cl = _toy_sjf()
    cfg = T.TrainConfig(
        episode_s=40.0, servers=2, rollouts=4, iterations=20, lr=1e-2, models=("toy",), seed=1
    )
    res = T.train(cfg, None, progress=False, job_classes=jc, cluster=cl)
    init = T.export_weights(T.make_module(generator=torch.Generator().manual_seed(cfg.seed)))

    def mean_jct(w):
        return np.mean(
            [
                T.run_episode(w, cfg, T.EVAL_SEED_BASE + i, 77 + i, jc, cl, record=False).mean_jct_s
                for i in range(8)
            ]
        )

    before, after = mean_jct(init), mean_jct(res.weights)
    assert after < 0.92 * before, (before, after)


def test_discounted_returns_to_go_match_numerical_integral():
    """``returns_to_go(..., tau)`` against a brute-force Riemann sum of ``exp(-(s - t)/tau) N(s)``."""
    rng = np.random.default_rng(4)
    arrival = np.sort(rng.uniform(0, 3, 12))
    completion = arrival + rng.exponential(0.7, 12)
    times = np.concatenate([[0.0], rng.uniform(0, completion.max() + 0.5, 20)])
    s = np.linspace(0.0, completion.max() + 1.0, 400_001)
    ds = s[1] - s[0]
    mid = s[:-1] + ds / 2
    N = ((mid[None, :] >= arrival[:, None]) & (mid[None, :] < completion[:, None])).sum(0)
    for tau in (0.3, 2.0):
        G, G0 = T.returns_to_go(arrival, completion, times, tau)
        ref = [-(np.exp(-(mid[mid >= t] - t) / tau) * N[mid >= t]).sum() * ds for t in times]
        np.testing.assert_allclose(G, ref, rtol=1e-4, atol=1e-4)
        assert G0 == pytest.approx(ref[0], rel=1e-4)
    # tau -> infinity is the undiscounted return
    np.testing.assert_allclose(
        T.returns_to_go(arrival, completion, times, 1e9)[0],
        T.returns_to_go(arrival, completion, times)[0],
        rtol=1e-6,
        atol=1e-6,
    )


def test_stage_only_gradient_leaves_executor_head_untouched():
    jc, cl = _dag_workload()
    cfg = T.TrainConfig(
        episode_s=0.2,
        servers=3,
        rollouts=2,
        iterations=2,
        lr=1e-2,
        models=("toy",),
        seed=5,
        exec_head=False,
        discount_s=0.1,
        grad_clip=1.0,
    )
    res = T.train(cfg, None, progress=False, job_classes=jc, cluster=cl)
    init = T.make_module(generator=torch.Generator().manual_seed(5)).state_dict()
    after = res.module.state_dict()
    moved = {k for k in init if (init[k] != after[k]).any()}
    assert not any(k.startswith("exec_policy_network") for k in moved)
    assert any(k.startswith("stage_policy_network") for k in moved) and any(
        k.startswith("encoder") for k in moved
    )
    # the stage-only log-probability is the full one minus the executor head's
    ep = _episode(res.weights, cfg, jc, cl)
    lp_all, _ = T.batch_log_probs(res.module, [ep])
    lp_stage, _ = T.batch_log_probs(res.module, [ep], exec_head=False)
    assert (lp_stage.detach().numpy() >= lp_all.detach().numpy() - 1e-12).all()
    assert (lp_stage.detach().numpy() <= 1e-12).all()


def test_held_out_evaluation_is_the_same_serial_and_in_two_processes(tmp_path):
    """Each (scheme, arrival seed) is one executor task: same rows in one process and in two."""
    from schedlab.parallel import Executor

    cfg = T.TrainConfig(
        models=("alexnet", "resnet18"), servers=4, load=0.5, episode_s=0.1, iterations=2, rollouts=2
    )
    schemes = ["decima_init", "decima_init_greedy", "nona", "random", "spark_fair"]
    kw = dict(duration=0.5, weights=P.load_weights(), init_weights=T.initial_weights(cfg), progress=False)
    serial = T.evaluate(
        cfg, schemes, T.evaluation_seeds(2), nona_tables=tmp_path / "a" / "nona.json", executor=1, **kw
    )
    with Executor(workers=2) as ex:
        two = T.evaluate(
            cfg, schemes, T.evaluation_seeds(2), nona_tables=tmp_path / "b" / "nona.json", executor=ex, **kw
        )
    assert list(serial.scheme) == [s for s in schemes for _ in range(2)]
    assert (serial.status == "ok").all() and serial.mean_jct_s.notna().all()
    cols = [c for c in serial.columns if c != "wall_s"]
    assert serial[cols].equals(two[cols])
    with pytest.raises(ValueError, match="training arrival seeds"):
        train_seed = next(iter(T.training_arrival_seeds(cfg)))
        T.evaluate(cfg, ["random"], [train_seed], **kw)
