"""The traced GPT-2 DAG: the committed file is the tracer's output, and torch stays optional."""

from __future__ import annotations

import subprocess
import sys

import networkx as nx
import pytest

from schedlab import paths
from schedlab.nona import profiles
from schedlab.nona.contraction import bottleneck_subgraphs, contract

GPT2_SMALL_PARAMS = 124_439_808  # GPT2LMHeadModel default config, wte and lm_head tied


@pytest.fixture(scope="module")
def gpt2():
    return profiles.load("gpt2")


def test_committed_graph_is_well_formed(gpt2):
    assert profiles.graph_path("gpt2") == paths.GENERATED / "nona" / "gpt2" / "graph.txt"
    assert nx.is_directed_acyclic_graph(gpt2)
    roots = [n for n in gpt2 if gpt2.in_degree(n) == 0]
    sinks = [n for n in gpt2 if gpt2.out_degree(n) == 0]
    assert roots == ["node1"] and gpt2.nodes["node1"]["desc"].startswith("Input(batch=1")
    assert len(sinks) == 1 and gpt2.nodes[sinks[0]]["desc"].startswith(
        "Linear(in_features=768, out_features=50257"
    )
    # parameters counted once (the LM head shares wte's weight)
    assert sum(d["parameter_bytes"] for _, d in gpt2.nodes(data=True)) == 4 * GPT2_SMALL_PARAMS
    assert profiles.model_size_mib(gpt2) == pytest.approx(474.70, abs=0.01)
    # logits: batch 1 x 128 tokens x 50257 float32
    assert gpt2.nodes[sinks[0]]["activation_bytes"] == 4 * 128 * 50257
    descs = [d["desc"] for _, d in gpt2.nodes(data=True)]
    assert sum(x.startswith("LayerNorm") for x in descs) == 25  # 2 per block + ln_f
    assert sum(x.startswith("Conv1D") for x in descs) == 48  # 4 per block
    assert sum(x.startswith("Softmax") for x in descs) == 12
    # module granularity: the attention's functional ops are tasks (q, k, v split, matmuls, ...)
    assert sum(x.startswith("Split") for x in descs) == 12
    assert sum(x.startswith("Matmul") for x in descs) == 24


def test_contracted_structure(gpt2):
    h = contract(gpt2)
    subs = bottleneck_subgraphs(h)
    # the embedding pair, then one subgraph per block between the residual adds: ln_1 + c_attn
    # + split, the q, k, v chains, q.k^T..dropout, and matmul..c_proj (the residual edge bypasses all)
    assert [len(s.intermediate) for s in subs] == [2] + [6] * 12
    assert (gpt2.number_of_nodes(), h.number_of_nodes()) == (395, 88)


@pytest.mark.parametrize(
    "variant, pre, post, inter",
    [
        ("graph_operator.txt", 382, 88, [2] + [6] * 12),  # torch.export ATen ops (previous default)
        ("graph_whitelist_attention.txt", 131, 4, [2]),  # GPT2Attention kept whole (PipeDream whitelist)
    ],
)
def test_committed_variants(variant, pre, post, inter):
    from schedlab.nona.graphs import read_graph

    g = read_graph(paths.GENERATED / "nona" / "gpt2" / variant)
    h = contract(g)
    assert (g.number_of_nodes(), h.number_of_nodes()) == (pre, post)
    assert [len(s.intermediate) for s in bottleneck_subgraphs(h)] == inter
    assert profiles.model_size_mib(g) == pytest.approx(474.70, abs=0.01)


def test_table2_size_is_parameters_plus_legacy_mask_buffers():
    from schedlab.nona.gpt2_trace import legacy_attention_buffer_bytes

    # transformers 4.x GPT2Attention buffers: bias (1x1x1024x1024 bool) + masked_bias (float32 scalar)
    assert legacy_attention_buffer_bytes() == 12 * (1024 * 1024 + 4)
    total_mib = (4 * GPT2_SMALL_PARAMS + legacy_attention_buffer_bytes()) / 2**20
    assert total_mib == pytest.approx(486.70, abs=0.005) and round(total_mib) == 487  # Table II: 487


def test_torch_is_not_needed_outside_the_tracer():
    code = (
        "import sys; import schedlab.cli, schedlab.nona.workload, schedlab.nona.optimise, "
        "schedlab.nona.decision, schedlab.nona.queueing, schedlab.nona.profiles; "
        "schedlab.nona.workload.inference_classes(['gpt2']); "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_tracer_reproduces_the_committed_graph(gpt2, tmp_path):
    pytest.importorskip("torch", reason="the GPT-2 tracer needs the optional 'trace' extra")
    pytest.importorskip("transformers", reason="the GPT-2 tracer needs the optional 'trace' extra")
    from schedlab.nona.gpt2_trace import trace

    g = trace(seq_len=128, batch=1, repeats=1, progress=False)
    _same_graph(g, gpt2)


@pytest.mark.parametrize(
    "variant, kwargs",
    [
        ("graph_operator.txt", {"granularity": "operator"}),
        ("graph_whitelist_attention.txt", {"whitelist": ("GPT2Attention",)}),
    ],
)
def test_tracer_reproduces_the_committed_variants(variant, kwargs):
    pytest.importorskip("torch", reason="the GPT-2 tracer needs the optional 'trace' extra")
    pytest.importorskip("transformers", reason="the GPT-2 tracer needs the optional 'trace' extra")
    from schedlab.nona.gpt2_trace import trace
    from schedlab.nona.graphs import read_graph

    g = trace(seq_len=128, batch=1, repeats=1, progress=False, **kwargs)
    _same_graph(g, read_graph(paths.GENERATED / "nona" / "gpt2" / variant))


def test_tracer_rejects_bad_options():
    pytest.importorskip("torch", reason="the GPT-2 tracer needs the optional 'trace' extra")
    from schedlab.nona.gpt2_trace import trace

    with pytest.raises(ValueError, match="granularity"):
        trace(granularity="layer")
    with pytest.raises(ValueError, match="whitelist"):
        trace(granularity="operator", whitelist=("GPT2Attention",))
    with pytest.raises(ValueError, match="GPT2Atention"):
        trace(whitelist=("GPT2Atention",), repeats=0, progress=False)


def _same_graph(g, gpt2):
    assert list(g.nodes) == list(gpt2.nodes)
    assert set(g.edges) == set(gpt2.edges)
    for n in g:
        a, b = g.nodes[n], gpt2.nodes[n]
        assert (a["desc"], a["activation_bytes"], a["parameter_bytes"]) == (
            b["desc"],
            pytest.approx(b["activation_bytes"], abs=0.001),
            b["parameter_bytes"],
        ), n
        assert a["forward_ms"] >= 0


def test_table2_layers_is_the_module_count():
    pytest.importorskip("torch", reason="the GPT-2 tracer needs the optional 'trace' extra")
    pytest.importorskip("transformers", reason="the GPT-2 tracer needs the optional 'trace' extra")
    from schedlab.nona.gpt2_trace import build_model

    model = build_model()
    assert len(list(model.modules())) == 164  # Table II "Layers" for GPT-2
    assert sum(p.numel() for p in model.parameters()) == GPT2_SMALL_PARAMS
    assert list(model.buffers()) == []  # today's transformers: no attention buffers (hence 474.70 MiB)
