"""Figures a reader of the papers recognises: every figure a stage writes is a PNG (150 dpi) and a PDF."""

from __future__ import annotations

import re

import matplotlib
import pytest
import yaml

from schedlab import notebooks, paths

matplotlib.use("Agg")


def _stage_outs() -> set[str]:
    outs = set()
    for stage in yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())["stages"].values():
        for o in stage.get("outs", []):
            outs.add(o if isinstance(o, str) else next(iter(o)))
    return outs


def test_every_png_figure_has_its_pdf():
    outs = _stage_outs()
    pngs = sorted(o for o in outs if o.startswith("figures/") and o.endswith(".png"))
    assert pngs
    assert [p for p in pngs if p[:-4] + ".pdf" not in outs] == []


@pytest.mark.parametrize("path", notebooks.stage_notebooks(), ids=lambda p: p.stem)
def test_stage_notebooks_save_figures_through_outputs(path):
    """``out.savefig`` writes both formats at >= 150 dpi; a direct ``savefig`` call would bypass it."""
    src = path.with_suffix(".py").read_text()
    assert not re.search(r"\bio\.savefig\(|\.savefig\([^)]*dpi\s*=\s*1[0-4]\d\b", src), path.name


def test_outputs_savefig_writes_png_and_pdf(tmp_path):
    import matplotlib.pyplot as plt
    from PIL import Image

    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [0, 1])
    written = notebooks.Outputs(tmp_path, "nona/x").savefig(fig, "demo")
    assert [p.name for p in written] == ["demo.png", "demo.pdf"]
    assert written[1].read_bytes().startswith(b"%PDF")
    dpi = Image.open(written[0]).info["dpi"]
    assert round(dpi[0]) >= 150
    with pytest.raises(ValueError, match="150 dpi"):
        notebooks.Outputs(tmp_path, "nona/x").savefig(fig, "low", dpi=100)
