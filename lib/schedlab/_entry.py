"""The ``schedlab`` console script: the command line, with the project root checked first.

:mod:`schedlab.paths` resolves the root when first imported, which the command line does at
import time; a bad ``$SCHEDLAB_ROOT`` must end in one line, not a traceback, so the root is
resolved here before :mod:`schedlab.cli` is imported.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def root_note(root: Path, cwd: Path) -> str | None:
    """The line saying which checkout is used, when it is not the working directory's.

    Two checkouts can share one editable install: commands then act on the install's
    checkout, which a user inside the other one would not expect.

    Examples
    --------
    >>> root_note(Path("/a/schedlab"), Path("/a/schedlab/notebooks")) is None
    True
    """
    from schedlab.paths import checkout_above

    here = checkout_above(cwd)
    if here is None or here == root:
        return None
    return (
        f"schedlab: using the project at {root}, not the checkout you are in ({here}); "
        f"set SCHEDLAB_ROOT={here} to work there"
    )


def run() -> None:
    """Entry point of the ``schedlab`` command."""
    try:
        from schedlab import paths
    except RuntimeError as exc:  # paths.RootError, before the class itself can be imported
        sys.exit(f"schedlab: {exc}")
    note = root_note(paths.ROOT, Path.cwd())
    if note:
        print(note, file=sys.stderr)
    from schedlab.cli import main
    from schedlab.notebooks.outputs import StageBusy
    from schedlab.notebooks.runner import StageInterrupted

    try:
        main()
    except StageInterrupted as exc:
        # one line, then out at once: the kernel is dead and its files are removed, and the
        # interpreter's exit would only let papermill's pending tasks report its closed sockets
        print(f"schedlab: {exc}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(exc.exit_code)
    except StageBusy as exc:
        sys.exit(f"schedlab: {exc}")
