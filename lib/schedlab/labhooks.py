"""Keep JupyterLab from rewriting a notebook that was only opened.

When a notebook's kernel starts, JupyterLab 4's notebook panel copies two things from the kernel
into the notebook's metadata (``NotebookPanel._updateSpec`` and ``_updateLanguage`` in
``@jupyterlab/notebook``, 4.6):

* ``kernelspec``: ``{name, display_name, language}`` of the kernel's spec. The environment's
  ``python3`` spec is called "Python 3 (ipykernel)"; the committed notebooks say "Python 3"
  (:data:`schedlab.notebooks.KERNELSPEC`).
* ``language_info``: the kernel's ``kernel_info_reply`` (Python version, mimetype, CodeMirror
  mode, ...); the committed notebooks carry none or ``{"name": "python"}``.

The tab turns dirty and autosave writes the file within two minutes although nobody edited it:
``dvc status`` then says the stage changed, and git is dirty. Neither entry is an edit: both
describe the kernel that happens to run the notebook here. :func:`keep_kernel_metadata` is a
Jupyter server ``pre_save_hook`` (``.jupyter/jupyter_server_config.py``, which ``make lab``
loads) that writes them back as the file on disk has them, so a save with no edit writes the
same bytes. Choosing another kernel is an edit and is saved as Lab writes it.

Only the ``.ipynb`` needs this: the paired percent script keeps no notebook metadata
(``notebook_metadata_filter = "-all"`` in ``notebooks/jupytext.toml``), so the kernel's metadata
never reaches ``NAME.py``.

Examples
--------
>>> on_disk = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
>>> from_lab = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
...                            "name": "python3"},
...             "language_info": {"name": "python", "version": "3.11.9"}}
>>> restore_kernel_metadata(from_lab, on_disk) == on_disk
True
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from schedlab.notebooks import KERNELSPEC

#: the metadata entries JupyterLab fills from the running kernel
KERNEL_KEYS = ("kernelspec", "language_info")


def restore_kernel_metadata(metadata: Mapping[str, Any], saved: Mapping[str, Any] | None) -> dict[str, Any]:
    """The notebook metadata to save: ``metadata`` with the kernel's entries as ``saved`` has them.

    Parameters
    ----------
    metadata
        The notebook metadata JupyterLab sends with a save.
    saved
        The metadata of the notebook on disk, or None when there is none yet (a new notebook).

    Returns
    -------
    dict
        A new dict (the arguments are not changed). When ``metadata`` names the same kernel as
        ``saved``, ``kernelspec`` and ``language_info`` are ``saved``'s (removed where ``saved``
        has none). When ``saved`` names no kernel and ``metadata`` names the project's
        (``KERNELSPEC["name"]``), the notebook gets :data:`~schedlab.notebooks.KERNELSPEC` and no
        ``language_info``, the form every committed notebook has. Otherwise (no kernel named, or
        the user chose another kernel) ``metadata`` is kept as it is.

    Raises
    ------
    TypeError
        If ``metadata`` or ``saved`` is not a mapping.
    """
    for name, value in (("metadata", metadata), ("saved", saved)):
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a notebook's metadata mapping, got {type(value).__name__}")
    new = dict(metadata)
    source = _kernel_source(metadata.get("kernelspec"), saved or {})
    if source is None:
        return new
    for key in KERNEL_KEYS:
        if key in source:
            new[key] = copy.deepcopy(source[key])
        else:
            new.pop(key, None)
    return new


def _kernel_source(spec: Any, saved: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Where the kernel's entries should come from: the file on disk, the committed form, or None
    to keep what the frontend sent."""
    if not isinstance(spec, Mapping) or "name" not in spec:
        return None  # no kernel has written anything
    saved_spec = saved.get("kernelspec")
    if isinstance(saved_spec, Mapping) and saved_spec.get("name") == spec["name"]:
        return saved
    if saved_spec is None and spec["name"] == KERNELSPEC["name"]:
        return {"kernelspec": KERNELSPEC}
    return None  # another kernel than the file names: the user switched, which is an edit


def saved_metadata(os_path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The metadata of the notebook stored at ``os_path``, or None if there is no file there.

    Raises
    ------
    ValueError
        If the file is not a JSON notebook (its metadata cannot be read).
    """
    path = Path(os_path)
    if not path.is_file():
        return None
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: not a JSON notebook, cannot keep its kernel metadata ({err})") from err
    if not isinstance(nb, dict) or not isinstance(nb.get("metadata", {}), dict):
        raise ValueError(f"{path}: not a notebook (no metadata object), cannot keep its kernel metadata")
    return nb.get("metadata", {})


def _os_path(root_dir: str, path: str) -> Path:
    """The file an API path names under the server's root (as the contents manager resolves it)."""
    root = os.path.abspath(root_dir)
    full = os.path.abspath(os.path.join(root, *path.strip("/").split("/")))
    if os.path.commonpath([root, full]) != root:
        raise ValueError(f"{path!r} is outside the server's root {root}")
    return Path(full)


def keep_kernel_metadata(model: dict[str, Any], path: str, contents_manager: Any, **kwargs: Any) -> None:
    """Jupyter server ``pre_save_hook``: save a notebook's kernel metadata as the file has it.

    Set it as ``c.ContentsManager.pre_save_hook = "schedlab.labhooks.keep_kernel_metadata"``.
    Changes ``model["content"]["metadata"]`` in place (the server writes ``model`` after its
    hooks) through :func:`restore_kernel_metadata`; other models (files, directories, notebooks
    sent without content) pass untouched.

    Parameters
    ----------
    model
        The contents model being saved.
    path
        Its API path, relative to the server's root.
    contents_manager
        The server's contents manager; its ``root_dir`` locates the file on disk.
    **kwargs
        Whatever else the server passes (ignored).

    Raises
    ------
    ValueError
        If ``path`` is outside the root or the file there is not a notebook. The server logs the
        error and saves what the frontend sent (it never loses a save to a hook).
    """
    content = model.get("content")
    if model.get("type") != "notebook" or not isinstance(content, Mapping):
        return
    saved = saved_metadata(_os_path(contents_manager.root_dir, path))
    content["metadata"] = restore_kernel_metadata(content.get("metadata", {}), saved)
