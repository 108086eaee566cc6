"""Reference activations of spark-sched-sim's Decima, computed with PyTorch from ``model.pt``.

Writes ``tests/fixtures/decima/reference.npz``: a few fixed random observations (seeded
``numpy.random.Generator``) and, for each, the node embeddings, DAG and global summaries,
stage scores and executor scores of every job, evaluated by an independent PyTorch
reading of the architecture (this file; no torch-geometric, no code shared with
``schedlab.nona.decima.policy``). The test ``tests/nona/test_decima.py`` compares the NumPy
policy to this file, and re-runs :func:`reference_outputs` live when torch is importable.

How this differs from the NumPy implementation on purpose:

* weights come from ``model.pt`` through ``torch.load`` + ``load_state_dict(strict=True)``
  into ``nn.Sequential`` modules named like the original (so names, shapes and the
  ``Linear, act, Linear, act, Linear`` layout are checked by PyTorch itself);
* generations come from ``networkx.topological_generations``; aggregation is a dense
  adjacency-matrix product per message-passing step with ``torch.where`` masks;
* the ``exact`` variant is a per-node recursion in reverse topological order
  (``networkx.topological_sort``), not a per-level batch;
* executor scores follow the code's construction: ``arange(E) / E`` masked by the job's
  row of the (J, E) executor mask, not ``arange(cap)``.

Everything runs in float64 (the float32 weights are exact in float64), so the two
implementations should agree to ~1e-12.

Usage (torch is the ``trace`` extra; never needed at run time)::

    .venv/bin/python tools/make_decima_fixture.py
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import networkx as nx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "decima" / "reference.npz"
SEED = 20231108
EMBED = 16


# ------------------------------------------------------------------ observations
def random_job(rng: np.random.Generator, n: int, p_edge: float) -> list[tuple[int, int]]:
    """A random DAG on ``0..n-1``: edges only go from a lower to a higher index."""
    return [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p_edge]


def random_observation(
    rng: np.random.Generator, job_sizes: list[int], num_executors: int, p_edge: float, extra_edges=()
) -> dict:
    """Node features in spark-sched-sim's ranges, random DAGs, masks and executor caps."""
    ptr = np.concatenate([[0], np.cumsum(job_sizes)]).astype(np.int64)
    n, jobs = int(ptr[-1]), len(job_sizes)
    edges = []
    for j, size in enumerate(job_sizes):
        edges += [(ptr[j] + u, ptr[j] + v) for u, v in random_job(rng, size, p_edge)]
    edges += [tuple(e) for e in extra_edges]
    edges = np.array(sorted(set(edges)), dtype=np.int64).reshape(-1, 2)
    supply = rng.integers(0, num_executors + 1, size=jobs)
    committable = int(rng.integers(1, num_executors + 1))
    source = int(rng.integers(0, jobs + 1))  # == jobs: executors come from the general pool
    caps = np.minimum(np.maximum(num_executors - supply, 0), committable)
    if source < jobs:
        caps[source] = committable
    job_of = np.repeat(np.arange(jobs), job_sizes)
    remaining = rng.integers(0, 400, size=n).astype(np.float64)
    duration_ms = rng.uniform(10.0, 20000.0, size=n)
    x = np.stack(
        [
            caps[job_of] / num_executors,
            np.where(job_of == source, 1.0, -1.0),
            supply[job_of] / num_executors,
            remaining / 200.0,
            remaining * duration_ms / 1e5,
        ],
        axis=1,
    )
    stage_mask = rng.random(n) < 0.5
    stage_mask[rng.integers(0, n)] = True
    return dict(
        x=x,
        edges=edges,
        job_ptr=ptr,
        stage_mask=stage_mask,
        exec_caps=caps,
        num_executors=np.int64(num_executors),
    )


def observations() -> list[dict]:
    """The fixed test observations (seeded); the first has a skip connection the code treats specially."""
    rng = np.random.default_rng(SEED)
    obs = [
        # job 0: a -> b -> c, a -> c, b -> d: b is re-updated without d at a's step
        random_observation(rng, [4, 3, 5], 50, 0.0, extra_edges=[(0, 1), (1, 2), (0, 2), (1, 3), (4, 5)]),
        random_observation(rng, [6, 1, 8, 3], 50, 0.35),
        random_observation(rng, [2, 1, 1], 80, 0.0),  # no edge at all: no message passing
        random_observation(rng, [12], 80, 0.25),
        random_observation(rng, [20, 15, 9, 30, 4, 7], 80, 0.15),
    ]
    return obs


# ------------------------------------------------------------------ torch reference
def build_actor(state_dict):
    """spark-sched-sim's module tree, loaded strictly from a state dict, in float64."""
    from torch import nn

    def mlp(dims, act):
        layers = []
        for i in range(len(dims) - 1):
            layers.append(nn.Linear(dims[i], dims[i + 1]))
            if i < len(dims) - 2:
                layers.append(act())
        return nn.Sequential(*layers)

    gnn = lambda i: mlp([i, 32, 16, EMBED], lambda: nn.LeakyReLU(0.2))  # noqa: E731
    pol = lambda i: mlp([i, 64, 64, 1], nn.Tanh)  # noqa: E731

    actor = nn.Module()
    actor.encoder = nn.Module()
    actor.encoder.node_encoder = nn.Module()
    actor.encoder.node_encoder.mlp_prep = gnn(5)
    actor.encoder.node_encoder.mlp_msg = gnn(EMBED)
    actor.encoder.node_encoder.mlp_update = gnn(EMBED)
    actor.encoder.dag_encoder = nn.Module()
    actor.encoder.dag_encoder.mlp = gnn(5 + EMBED)
    actor.encoder.global_encoder = nn.Module()
    actor.encoder.global_encoder.mlp = gnn(EMBED)
    actor.stage_policy_network = nn.Module()
    actor.stage_policy_network.mlp_score = pol(5 + 3 * EMBED)
    actor.exec_policy_network = nn.Module()
    actor.exec_policy_network.mlp_score = pol(3 + 2 * EMBED + 1)
    actor.load_state_dict(state_dict, strict=True)
    return actor.double().eval()


def load_actor(model_pt: Path):
    import torch

    return build_actor(torch.load(model_pt, map_location="cpu", weights_only=True))


def _graph(obs) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(obs["x"].shape[0]))
    g.add_edges_from(map(tuple, obs["edges"].tolist()))
    return g


def _embeddings_code(actor, obs, x):
    """Node encoder as spark-sched-sim's code does it (generation masks, deepest first)."""
    import torch

    ne = actor.encoder.node_encoder
    h0 = ne.mlp_prep(x)
    n = x.shape[0]
    if len(obs["edges"]) == 0:
        return h0
    g = _graph(obs)
    parents_of_edges = {u for u, _ in g.edges}
    leaf = torch.tensor([v not in parents_of_edges for v in range(n)])
    h = torch.where(leaf[:, None], ne.mlp_update(h0), torch.zeros_like(h0))
    gens = list(nx.topological_generations(g))
    steps = []
    for gen in gens[:-1]:
        members = set(gen) | {c for v in gen for c in g.successors(v)}
        steps.append([(u, v) for u, v in g.edges if u in members and v in members])
    for step in reversed(steps):
        adj = torch.zeros(n, n, dtype=torch.float64)
        for u, v in step:
            adj[u, v] += 1.0
        senders = adj.sum(0) > 0
        receivers = adj.sum(1) > 0
        msg = torch.where(senders[:, None], ne.mlp_msg(h), torch.zeros_like(h))
        agg = adj @ msg
        h = torch.where(receivers[:, None], h0 + ne.mlp_update(agg), h)
    return h


def _embeddings_exact(actor, obs, x):
    """The paper's recursion: each node aggregates all its children once they are final."""
    import torch

    ne = actor.encoder.node_encoder
    h0 = ne.mlp_prep(x)
    if len(obs["edges"]) == 0:
        return h0
    g = _graph(obs)
    h = [None] * x.shape[0]
    for v in reversed(list(nx.topological_sort(g))):
        kids = list(g.successors(v))
        if not kids:
            h[v] = ne.mlp_update(h0[v : v + 1])[0]
        else:
            total = sum(ne.mlp_msg(h[c][None, :])[0] for c in kids)
            h[v] = h0[v] + ne.mlp_update(total[None, :])[0]
    return torch.stack(h)


def reference_outputs(actor, obs: dict, variant: str = "spark-sched-sim") -> dict:
    """All activations of one observation (float64 numpy arrays)."""
    import torch

    with torch.no_grad():
        x = torch.from_numpy(np.asarray(obs["x"], dtype=np.float64))
        h = (_embeddings_code if variant == "spark-sched-sim" else _embeddings_exact)(actor, obs, x)
        ptr = [int(p) for p in obs["job_ptr"]]
        jobs = len(ptr) - 1
        per_node = actor.encoder.dag_encoder.mlp(torch.cat([x, h], dim=1))
        h_dag = torch.stack([per_node[ptr[j] : ptr[j + 1]].sum(0) for j in range(jobs)])
        h_glob = actor.encoder.global_encoder.mlp(h_dag).sum(0, keepdim=True)
        batch = torch.repeat_interleave(torch.arange(jobs), torch.tensor(np.diff(ptr)))
        sm = torch.from_numpy(np.asarray(obs["stage_mask"], dtype=bool))
        stage_in = torch.cat([x[sm], h[sm], h_dag[batch[sm]], h_glob.expand(int(sm.sum()), -1)], dim=1)
        stage_scores = actor.stage_policy_network.mlp_score(stage_in).squeeze(-1)
        E = int(obs["num_executors"])
        exec_mask = torch.arange(E)[None, :] < torch.from_numpy(np.asarray(obs["exec_caps"]))[:, None]
        exec_list = []
        for j in range(jobs):
            actions = (torch.arange(E, dtype=torch.float64) / E)[exec_mask[j]].unsqueeze(1)
            m = actions.shape[0]
            job_in = torch.cat([x[ptr[j], :3], h_dag[j]])[None, :].expand(m, -1)
            inp = torch.cat([job_in, h_glob.expand(m, -1), actions], dim=1)
            exec_list.append(actor.exec_policy_network.mlp_score(inp).squeeze(-1))
        exec_ptr = np.concatenate([[0], np.cumsum([len(e) for e in exec_list])])
    return dict(
        h_node=h.numpy(),
        h_dag=h_dag.numpy(),
        h_glob=h_glob[0].numpy(),
        stage_scores=stage_scores.numpy(),
        exec_scores=torch.cat(exec_list).numpy(),
        exec_ptr=exec_ptr.astype(np.int64),
    )


def main() -> int:
    import torch

    sys.path.insert(0, str(ROOT / "lib"))
    from schedlab import data
    from schedlab.io import atomic_path

    model_pt = data.require("decima/model.pt")
    actor = load_actor(model_pt)
    arrays = {
        "model_pt_sha256": np.array(hashlib.sha256(model_pt.read_bytes()).hexdigest()),
        "torch_version": np.array(torch.__version__),
        "seed": np.int64(SEED),
    }
    obs_list = observations()
    arrays["num_observations"] = np.int64(len(obs_list))
    for i, obs in enumerate(obs_list):
        for k, v in obs.items():
            arrays[f"obs{i}/{k}"] = np.asarray(v)
        for variant in ("spark-sched-sim", "exact"):
            tag = "" if variant == "spark-sched-sim" else "exact/"
            for k, v in reference_outputs(actor, obs, variant).items():
                arrays[f"out{i}/{tag}{k}"] = v
    with atomic_path(FIXTURE) as tmp:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, **arrays)
        tmp.chmod(0o644)  # mkstemp makes 0600; the fixture is read by everyone
    print(
        f"wrote {FIXTURE.relative_to(ROOT)}: {len(obs_list)} observations, "
        f"{sum(o['x'].shape[0] for o in obs_list)} nodes, torch {torch.__version__}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
