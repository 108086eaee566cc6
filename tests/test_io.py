import os

import pytest

from schedlab.io import atomic_path, atomic_write_json, atomic_write_text


def test_atomic_write_replaces_whole(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    atomic_write_text(target, "first")
    atomic_write_text(target, "second")
    assert target.read_text() == "second"
    assert os.listdir(target.parent) == ["out.txt"]


def test_failed_write_leaves_nothing(tmp_path):
    target = tmp_path / "out.csv"
    atomic_write_text(target, "old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half written")
            raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_temp_keeps_suffix_for_format_sniffing(tmp_path):
    with atomic_path(tmp_path / "fig.pdf") as tmp:
        assert tmp.suffix == ".pdf"
        tmp.write_bytes(b"%PDF")


def test_json_handles_numpy(tmp_path):
    import numpy as np

    atomic_write_json(tmp_path / "m.json", {"a": np.float64(1.5), "b": np.arange(3)})
    assert (tmp_path / "m.json").read_text().replace(" ", "").replace("\n", "") == '{"a":1.5,"b":[0,1,2]}'


def test_savefig_pdf_is_byte_reproducible(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from schedlab.io import savefig

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    savefig(fig, tmp_path / "a.pdf")
    savefig(fig, tmp_path / "b.pdf")
    plt.close(fig)
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_respect_the_umask(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        atomic_write_text(tmp_path / "out.csv", "a\n")
    finally:
        os.umask(old)
    assert (tmp_path / "out.csv").stat().st_mode & 0o777 == mode
