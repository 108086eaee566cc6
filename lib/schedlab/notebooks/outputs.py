"""Where a stage notebook writes: the pipeline's folders, or a scratch folder when run in JupyterLab."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedlab import paths


class Outputs:
    """Where a notebook writes: the pipeline's folders, or a scratch folder when interactive."""

    def __init__(self, output_root: str | Path | None, name: str):
        if output_root:
            self.root = Path(output_root)
        else:
            self.root = paths.SCRATCH / name
        self.paper = name.split("/")[0]

    def results(self, filename: str) -> Path:
        return self.root / "results" / self.paper / filename

    def figures(self, filename: str) -> Path:
        return self.root / "figures" / self.paper / filename

    def savefig(
        self,
        fig: Any,
        stem: str,
        *,
        dpi: int = 150,
        formats: tuple[str, ...] = ("png", "pdf"),
        timing: bool = False,
    ) -> list[Path]:
        """Write ``fig`` as ``figures/<paper>/<stem>.png`` (``dpi``, at least 150) and ``.pdf``,
        atomically and byte-reproducibly; ``timing=True`` puts it under ``results/<paper>/timings/``
        (a figure of wall-clock times, not a pipeline output). Returns the paths written."""
        from schedlab.io import savefig

        if dpi < 150:
            raise ValueError(f"figures are written at 150 dpi or more, got dpi={dpi} for {stem!r}")
        written = []
        for ext in formats:
            path = self.timings(f"{stem}.{ext}") if timing else self.figures(f"{stem}.{ext}")
            path.parent.mkdir(parents=True, exist_ok=True)
            savefig(fig, path, dpi=dpi)
            written.append(path)
        return written

    def timings(self, filename: str) -> Path:
        """Where wall-clock and CPU times go: ``results/<paper>/timings/``, which no stage
        declares as an output and none depends on, so the pipeline's outputs stay byte for byte
        the same from run to run while the times are still kept (and compared with the papers'
        in ``timings/comparison.md``)."""
        return self.root / "results" / self.paper / paths.TIMINGS / filename
