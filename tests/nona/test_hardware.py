"""GPU/CPU scale for GPT-2: chain models rebuilt from PipeDream profiles, and the ratio."""

from __future__ import annotations

import json

import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from schedlab.nona import hardware, profiles  # noqa: E402


@pytest.fixture(scope="module")
def alexnet():
    return profiles.load("alexnet")


def test_profiled_batches(alexnet):
    assert hardware.profiled_batch(alexnet) == 256
    assert hardware.profiled_batch(profiles.load("vgg16")) == 128


def test_alexnet_chain_reproduces_every_output_size(alexnet):
    batch, big = 2, 256
    model = hardware.chain_model(alexnet).eval()
    order = hardware.chain_order(alexnet)
    assert order[0] == "node1" and order[-1] == "node23" and "node15" not in order  # Size(0) skipped
    assert [name for name, _ in model.named_children()] == order[1:]
    x = torch.randn(batch, 3, 224, 224)
    with torch.no_grad():
        for name, module in model.named_children():
            x = module(x)
            assert 4 * x.numel() * big / batch == alexnet.nodes[name]["activation_bytes"], name
    assert tuple(x.shape) == (batch, 1000)


@pytest.mark.parametrize(
    ("desc", "cls", "attrs"),
    [
        (
            "Conv2d(3, 64, kernel_size=(11, 11), stride=(4, 4), padding=(2, 2))",
            "Conv2d",
            dict(in_channels=3, out_channels=64, kernel_size=(11, 11), stride=(4, 4), padding=(2, 2)),
        ),
        ("ReLU(inplace)", "ReLU", dict(inplace=True)),
        ("ReLU(inplace=True)", "ReLU", dict(inplace=True)),
        ("ReLU()", "ReLU", dict(inplace=False)),
        (
            "MaxPool2d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)",
            "MaxPool2d",
            dict(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False),
        ),
        ("Dropout(p=0.5)", "Dropout", dict(p=0.5)),
        (
            "Linear(in_features=9216, out_features=4096, bias=True)",
            "Linear",
            dict(in_features=9216, out_features=4096),
        ),
        ("View(9216)", "View", dict(features=9216)),
        ("View(-1)", "View", dict(features=-1)),
    ],
)
def test_module_from_each_desc_kind(desc, cls, attrs):
    m = hardware.module_from_desc(desc)
    assert type(m).__name__ == cls
    for key, value in attrs.items():
        assert getattr(m, key) == value, key


def test_view_flattens_per_sample():
    x = torch.zeros(3, 4, 2, 2)
    assert tuple(hardware.module_from_desc("View(16)")(x).shape) == (3, 16)
    assert tuple(hardware.module_from_desc("View(-1)")(x).shape) == (3, 16)


@pytest.mark.parametrize(
    "desc",
    [
        "Add(inplace)",
        "Concat(1)",
        "BatchNorm2d(64)",
        "Input",
        "Size(0)",
        "Linear(in_features=__import__('os'))",
        "Conv2d(*x)",
        "ReLU(inplace",
        "os.system('x')",
    ],
)
def test_unsupported_or_unsafe_descs_raise(desc):
    with pytest.raises(ValueError, match="desc"):
        hardware.module_from_desc(desc)


def test_non_chain_graph_raises_naming_a_node():
    g = profiles.load("resnet18")
    with pytest.raises(
        ValueError, match=r"not a chain graph: node\d+ \(.+\) has 2 (successors|predecessors)"
    ):
        hardware.chain_model(g)


def test_unsupported_node_is_named(alexnet):
    g = alexnet.copy()
    g.nodes["node12"]["desc"] = "BatchNorm2d(256)"
    with pytest.raises(ValueError, match=r"node12 \(BatchNorm2d\(256\)\)"):
        hardware.chain_model(g)


def test_ratio_closed_form():
    table = pd.DataFrame(
        {
            "desc": ["Input", "Conv2d(...)", "ReLU(inplace)", "View(9216)"],
            "gpu_ms": [635.9, 6.0, 2.0, 0.0],
            "cpu_wall_ms": [0.0, 300.0, 90.0, 10.0],
            "cpu_thread_ms": [0.0, 150.0, 40.0, 10.0],
        }
    )
    ratio = hardware.gpu_cpu_ratio(table)
    assert ratio["wall"] == pytest.approx(8.0 / 400.0)
    assert ratio["thread"] == pytest.approx(8.0 / 200.0)


def test_parse_batches():
    assert hardware.parse_batches([], ["alexnet"]) == {"alexnet": None}
    assert hardware.parse_batches(["4"], ["alexnet", "vgg16"]) == {"alexnet": 4, "vgg16": 4}
    with pytest.raises(ValueError, match="resnet18"):
        hardware.parse_batches(["resnet18=2"], ["alexnet"])


def test_measure_and_cli_small_batch(tmp_path):
    table = hardware.measure_cpu_ms("alexnet", batch=1, repeats=1)
    assert table.attrs["scale"] == 256
    assert list(table["output_bytes"]) == list(table["activation_bytes"])
    compute = table[table["desc"] != "Input"]
    assert (compute["cpu_wall_ms"] > 0).all() and (compute["cpu_thread_ms"] >= 0).all()
    assert table.loc["node1", "cpu_wall_ms"] == 0.0
    out = tmp_path / "gpu_scale.json"
    hardware.main(["--models", "alexnet", "--batch", "1", "--repeats", "1", "--out", str(out)])
    report = json.loads(out.read_text())
    s = report["models"]["alexnet"]
    assert s["batch"] == 1 and s["profiled_batch"] == 256 and s["repeats"] == 1
    assert s["gpu_ms_sum"] == pytest.approx(44.80, abs=0.005)  # README: Σ forward, Input excluded
    assert s["ratio_wall"] == pytest.approx(s["gpu_ms_sum"] / s["cpu_wall_ms_sum"])
    assert len(report["loadavg_start"]) == 3 and report["machine"]["cpu_count"] >= 1
    assert [p.name for p in tmp_path.iterdir()] == ["gpu_scale.json"]  # no temporary left


def test_ratio_by_kind_groups_descs():
    table = pd.DataFrame(
        {
            "desc": ["Input", "Conv2d(1, 2)", "Conv2d(2, 2)", "ReLU(inplace)", "Dropout(p=0.5)"],
            "gpu_ms": [600.0, 1.0, 3.0, 1.0, 0.0],
            "cpu_wall_ms": [0.0, 100.0, 300.0, 20.0, 0.0],
            "cpu_thread_ms": [0.0, 50.0, 150.0, 10.0, 0.0],
        }
    )
    by_kind = hardware.ratio_by_kind(table)
    assert set(by_kind) == {"Conv2d", "ReLU"}  # Input and all-zero Dropout left out
    assert by_kind["Conv2d"] == pytest.approx({"wall": 0.01, "thread": 0.02})
    assert by_kind["ReLU"] == pytest.approx({"wall": 0.05, "thread": 0.1})


def test_gpt2_plain_forward_timing():
    pytest.importorskip("transformers")
    threads = torch.get_num_threads()
    out = hardware.measure_gpt2_cpu_ms(repeats=1, seq_len=16)
    assert out["wall_ms"] > 0 and out["thread_ms"] > 0 and out["seq_len"] == 16
    assert torch.get_num_threads() == threads  # the caller's thread setting is restored
