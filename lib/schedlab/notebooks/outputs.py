"""Where a stage notebook writes: the pipeline's folders, or a scratch folder when run in JupyterLab;
and the staging folder a stage run writes into before its outputs move into place together."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
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


#: folder under an output root where a running stage writes (``<root>/.staging/<notebook>/``)
STAGING = ".staging"
#: inside a stage's staging folder: the list of files being moved into place (see :meth:`Staging.commit`)
COMMIT_MARKER = ".commit.json"


class StageBusy(RuntimeError):
    """Another run of the same stage is writing into the same output root."""


class Staging:
    """A stage's outputs written aside, then moved into place together.

    The notebook gets :attr:`view` as its output root: a folder that reads like ``root``
    (every top-level entry of ``root`` is a symbolic link to it, except ``results/`` and
    ``figures/``, which hold ``root``'s files (hard links), less the stage's own declared outputs,
    so it starts from nothing as under ``dvc repro``). What the notebook writes there stays
    there until :meth:`commit` moves every new or changed file to the same place under ``root``;
    :meth:`discard` removes it all, leaving ``root`` as it was. Caches (``data/``) and wall-clock
    times (``results/<paper>/timings/``) are links to ``root``'s: they are kept across failed
    runs and are not part of the set.

    Parameters
    ----------
    root
        The output root (an absolute path).
    name
        The notebook (``nona/fig3``): the folder is ``root/.staging/nona/fig3``.
    declared
        The stage's declared outputs relative to ``root`` (files or folders): left out of the
        copies, and a declared folder is replaced as a whole.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "results" / "nona").mkdir(parents=True)
    >>> _ = (root / "results/nona/old.csv").write_text("1")
    >>> st = Staging(root, "nona/t", declared=["results/nona/t.csv"])
    >>> view = st.open()
    >>> _ = (view / "results/nona/t.csv").write_text("new")
    >>> (root / "results/nona/t.csv").exists()  # not in place before the commit
    False
    >>> [p.relative_to(root).as_posix() for p in st.commit()]
    ['results/nona/t.csv']
    >>> st.release()
    >>> sorted(p.name for p in root.iterdir())  # no staging folder left; data/ holds caches
    ['data', 'results']
    """

    def __init__(self, root: Path, name: str, declared: Sequence[str] = ()):
        self.root = Path(root)
        self.name = name
        self.view = self.root / STAGING / name
        self.declared = [str(d).rstrip("/") for d in declared]
        self._seeded: dict[str, tuple[int, int, int]] = {}
        self._lock: int | None = None

    # -- opening -------------------------------------------------------------------------
    def open(self) -> Path:
        """Take the stage's lock, settle what an earlier run left, and make the view."""
        self._take_lock()
        self.recover()
        self.view.mkdir(parents=True)
        (self.root / "data").mkdir(exist_ok=True)  # caches go to root's data/ through the link
        for entry in sorted(self.root.iterdir()):
            if entry.name.startswith(".") or entry.name in SET_FOLDERS:
                continue
            (self.view / entry.name).symlink_to(entry)
        for top in SET_FOLDERS:
            self._seed(self.root / top, self.view / top)
        self._link_timings(self.name.split("/")[0])  # the stage's own paper, on a first run too
        return self.view

    def _take_lock(self) -> None:
        import fcntl

        lock = self._lock_path()
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StageBusy(
                f"{self.name}: another run of this stage is writing into {self.root} "
                f"(it holds {lock}); wait for it to finish"
            ) from None
        self._lock = fd

    def _lock_path(self) -> Path:
        return self.root / STAGING / f"{self.name}.lock"

    def _seed(self, src: Path, dst: Path) -> None:
        """Copy ``src`` (``root/results``) into ``dst``: the stage reads other stages' files
        as they are in ``root``; timings folders are links (not part of any set)."""
        dst.mkdir()
        if not src.is_dir():
            return
        for path in sorted(src.iterdir()):
            rel = path.relative_to(self.root).as_posix()
            if self._is_declared(rel):
                continue
            target = dst / path.name
            if path.is_dir():
                if path.name == paths.TIMINGS:
                    target.symlink_to(path)
                else:
                    self._seed(path, target)
            elif path.is_file():
                _link_or_copy(path, target)
                self._seeded[rel] = _identity(target)

    def _link_timings(self, paper: str) -> None:
        """``results/<paper>/timings`` in the view: a link to ``root``'s (made if missing)."""
        real, link = (
            self.root / "results" / paper / paths.TIMINGS,
            self.view / "results" / paper / paths.TIMINGS,
        )
        if link.is_symlink():
            return
        real.mkdir(parents=True, exist_ok=True)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(real)

    def _is_declared(self, rel: str) -> bool:
        return any(rel == d or rel.startswith(d + "/") for d in self.declared)

    def previous_in_place(self) -> bool:
        """Whether ``root`` holds any of the stage's declared outputs (``dvc repro`` removes
        them before it runs a stage; a direct run leaves them); ``True`` when none are declared."""
        return not self.declared or any((self.root / d).exists() for d in self.declared)

    # -- closing -------------------------------------------------------------------------
    def written(self) -> tuple[list[str], list[str]]:
        """``(folders, files)`` the run wrote, relative to the view: declared folders it made
        (moved whole) and every other new or changed file (links to ``root`` are not followed)."""
        folders = [d for d in self.declared if (self.view / d).is_dir() and not (self.view / d).is_symlink()]
        files = []
        for top, dirs, names in os.walk(self.view):
            here = Path(top)
            dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
            for n in names:
                path = here / n
                rel = path.relative_to(self.view).as_posix()
                if path.is_symlink() or rel in (COMMIT_MARKER,) or rel.startswith(OLD + "/"):
                    continue
                if any(rel.startswith(f + "/") for f in folders):
                    continue
                if self._seeded.get(rel) != _identity(path):
                    files.append(rel)
        return sorted(folders), sorted(files)

    def commit(self) -> list[Path]:
        """Move what the run wrote into place under ``root``; return the paths now in place.

        The list is written first (:data:`COMMIT_MARKER`), then each declared folder is swapped
        (the old one renamed aside, the new one renamed in) and each file moved with
        :func:`os.replace`: renames on one file system, no data copied, a few milliseconds for
        a stage's set. In that window a reader can see some files new and the others still
        old; never a partial file. A run killed inside it leaves the list behind, and the
        stage's next run finishes the move before it starts (:meth:`recover`).
        """
        folders, files = self.written()
        from schedlab.io import atomic_write_json

        atomic_write_json(self.view / COMMIT_MARKER, {"folders": folders, "files": files})
        return self._move(folders, files)

    def _move(self, folders: list[str], files: list[str]) -> list[Path]:
        moved = []
        old = self.view / OLD
        for i, rel in enumerate(folders):
            src, dst = self.view / rel, self.root / rel
            if not src.is_dir():  # moved by an earlier, interrupted commit
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            if dst.is_symlink() or dst.is_file():
                dst.unlink()
            elif dst.exists():
                old.mkdir(exist_ok=True)
                os.replace(dst, old / str(i))
            os.replace(src, dst)
            moved.append(dst)
        for rel in files:
            src, dst = self.view / rel, self.root / rel
            if not src.exists() and not src.is_symlink():
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)
            moved.append(dst)
        self.discard()
        return moved

    def discard(self) -> None:
        """Remove the staging folder (and its now empty parents), leaving ``root`` as it is;
        nothing without the stage's lock (the folder would be another run's)."""
        if self._lock is None:
            return
        if self.view.exists() or self.view.is_symlink():
            shutil.rmtree(self.view)
        self._prune()

    def recover(self) -> None:
        """Settle an earlier run of this stage killed without cleaning up (``kill -9``): finish
        its move if it had started one (the set it was moving is complete), else remove it."""
        marker = self.view / COMMIT_MARKER
        if marker.is_file():
            doc = json.loads(marker.read_text())
            self._move(doc["folders"], doc["files"])
        elif self.view.exists():
            self.discard()

    def release(self) -> None:
        """Drop the stage's lock (and its file); the staging folder is gone by then."""
        if self._lock is None:
            return
        self._lock_path().unlink(missing_ok=True)
        os.close(self._lock)
        self._lock = None
        self._prune()

    def _prune(self) -> None:
        """Remove empty folders from the view's parent up to ``root/.staging``."""
        top = self.root / STAGING
        folder = self.view.parent
        while top in (folder, *folder.parents):
            try:
                folder.rmdir()
            except OSError:  # not empty (another stage, the lock) or gone
                if folder.exists():
                    return
            folder = folder.parent


#: the folders whose files form a stage's set (copied into the view; everything else is linked)
SET_FOLDERS = ("results", "figures")
#: inside the view: declared folders of ``root`` renamed aside while their new versions move in
OLD = ".old"


def _link_or_copy(src: Path, dst: Path) -> None:
    """A hard link where the file system allows (no bytes copied: the 300 files of a full
    ``results/`` take milliseconds), else a copy. A link is safe for reading; the stage's own
    declared outputs are never linked, and a writer replaces a file rather than writing into
    it (the atomic writers of :mod:`schedlab.io`), which leaves ``root``'s copy alone."""
    try:
        os.link(src, dst, follow_symlinks=True)
    except OSError:
        shutil.copy2(src, dst)


def _identity(path: Path) -> tuple[int, int, int]:
    """What tells a copied file from one the run rewrote: a rewrite (atomic replace) makes a new
    inode; writing into the copy changes its modification time or size."""
    st = path.stat()
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def notebook_stages(dvc_file: Path | None = None) -> dict[str, tuple[str, dict]]:
    """The stages of ``dvc.yaml`` that run a notebook (``schedlab notebook run NAME``), in the
    pipeline's order: notebook name -> (stage name, the stage's entry); empty without the file.

    >>> notebook_stages()["nona/table2"][0]
    'nona_table2'
    """
    import yaml

    dvc_file = dvc_file or paths.ROOT / "dvc.yaml"
    if not dvc_file.is_file():
        return {}
    stages = (yaml.safe_load(dvc_file.read_text()) or {}).get("stages") or {}
    found = {}
    for stage, spec in stages.items():
        words = str(spec.get("cmd", "")).split()
        if len(words) == 4 and words[:3] == ["schedlab", "notebook", "run"]:
            found[words[3]] = (stage, spec)
    return found


def declared_outputs(name: str, dvc_file: Path | None = None) -> list[str]:
    """The outputs ``dvc.yaml`` declares for the stage that runs notebook ``name`` (outs,
    metrics and plots), relative to the root; empty for a notebook no stage runs.

    >>> "results/nona/table2.csv" in declared_outputs("nona/table2")
    True
    >>> declared_outputs("no/such")
    []
    """
    _, spec = notebook_stages(dvc_file).get(name, ("", {}))
    return [
        out if isinstance(out, str) else next(iter(out))
        for kind in ("outs", "metrics", "plots")
        for out in spec.get(kind) or []
    ]
