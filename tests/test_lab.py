"""JupyterLab leaves the notebooks alone: starting a kernel and letting autosave run changes no file.

The unit tests pin :func:`schedlab.labhooks.restore_kernel_metadata`'s rules. The server tests run a
real Jupyter server (with jupytext's contents manager, as ``make lab`` does) and a real kernel, and
save every notebook the way JupyterLab's autosave does once the kernel is up: with ``kernelspec``
from the kernel's spec and ``language_info`` from the kernel's ``kernel_info_reply``. JupyterLab
itself is not needed (it is only in the ``lab`` extra): the server and kernel are what write files.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from schedlab import labhooks, notebooks, paths

LAB_CONFIG = paths.ROOT / ".jupyter"
#: how long the server, a kernel or one request may take before the test gives up
STARTUP_TIMEOUT = 60.0
REQUEST_TIMEOUT = 20.0

SPEC_ON_DISK = dict(notebooks.KERNELSPEC)
SPEC_FROM_LAB = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
INFO_FROM_LAB = {"name": "python", "version": "3.11.9", "mimetype": "text/x-python", "file_extension": ".py"}


# --- the rules -----------------------------------------------------------------------------------


def test_same_kernel_keeps_what_the_file_has():
    """The two committed forms (with and without ``language_info``) both come back as they were."""
    for on_disk in (
        {"kernelspec": SPEC_ON_DISK, "jupytext": {"x": 1}},
        {"kernelspec": SPEC_ON_DISK, "language_info": {"name": "python"}},
    ):
        sent = {**on_disk, "kernelspec": SPEC_FROM_LAB, "language_info": INFO_FROM_LAB}
        assert labhooks.restore_kernel_metadata(sent, on_disk) == on_disk


def test_other_metadata_is_saved_as_sent():
    """Only the kernel's entries are restored: an edit to any other metadata is saved."""
    on_disk = {"kernelspec": SPEC_ON_DISK, "title": "old"}
    sent = {"kernelspec": SPEC_FROM_LAB, "language_info": INFO_FROM_LAB, "title": "new"}
    assert labhooks.restore_kernel_metadata(sent, on_disk) == {"kernelspec": SPEC_ON_DISK, "title": "new"}


def test_choosing_another_kernel_is_an_edit():
    other = {"display_name": "R", "language": "R", "name": "ir"}
    sent = {"kernelspec": other, "language_info": {"name": "R"}}
    assert labhooks.restore_kernel_metadata(sent, {"kernelspec": SPEC_ON_DISK}) == sent
    assert labhooks.restore_kernel_metadata(sent, None) == sent  # a new notebook on another kernel


def test_new_notebook_gets_the_committed_kernelspec():
    """A notebook created in Lab (no file yet, or a file naming no kernel) on the project's kernel
    is saved in the form every committed notebook has."""
    sent = {"kernelspec": SPEC_FROM_LAB, "language_info": INFO_FROM_LAB}
    for saved in (None, {}, {"language_info": {"name": "python"}}):
        assert labhooks.restore_kernel_metadata(sent, saved) == {"kernelspec": notebooks.KERNELSPEC}


def test_no_kernel_named_changes_nothing_and_arguments_are_not_mutated():
    sent = {"language_info": INFO_FROM_LAB}
    on_disk = {"kernelspec": SPEC_ON_DISK}
    assert labhooks.restore_kernel_metadata(sent, on_disk) == sent
    sent = {"kernelspec": SPEC_FROM_LAB, "language_info": INFO_FROM_LAB}
    snapshot = json.dumps([sent, on_disk])
    restored = labhooks.restore_kernel_metadata(sent, on_disk)
    assert json.dumps([sent, on_disk]) == snapshot
    restored["kernelspec"]["display_name"] = "changed"
    assert on_disk["kernelspec"] == SPEC_ON_DISK, "the result shares objects with the file's metadata"


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="metadata must be"):
        labhooks.restore_kernel_metadata(["kernelspec"], None)
    with pytest.raises(TypeError, match="saved must be"):
        labhooks.restore_kernel_metadata({}, "kernelspec")


def test_hook_reads_the_file_and_rejects_what_is_not_a_notebook(tmp_path):
    class Manager:
        root_dir = str(tmp_path)

    (tmp_path / "a.ipynb").write_text(json.dumps({"metadata": {"kernelspec": SPEC_ON_DISK}, "cells": []}))
    model = {
        "type": "notebook",
        "content": {"metadata": {"kernelspec": SPEC_FROM_LAB, "language_info": INFO_FROM_LAB}, "cells": []},
    }
    labhooks.keep_kernel_metadata(model, "/a.ipynb", Manager())
    assert model["content"]["metadata"] == {"kernelspec": SPEC_ON_DISK}

    text_model = {"type": "file", "format": "text", "content": "x = 1\n"}
    labhooks.keep_kernel_metadata(text_model, "a.py", Manager())
    assert text_model == {"type": "file", "format": "text", "content": "x = 1\n"}

    (tmp_path / "broken.ipynb").write_text("<<<<<<< HEAD\n")
    with pytest.raises(ValueError, match="broken.ipynb: not a JSON notebook"):
        labhooks.keep_kernel_metadata({**model}, "broken.ipynb", Manager())
    with pytest.raises(ValueError, match="outside the server's root"):
        labhooks.keep_kernel_metadata({**model}, "../elsewhere.ipynb", Manager())


# --- a real server and kernel ----------------------------------------------------------------------


class Server:
    """A Jupyter server on 127.0.0.1 with a token, driven through its REST API and websocket."""

    def __init__(self, root: Path, home: Path, with_hook: bool) -> None:
        self.root, self.token = root, secrets.token_hex(16)
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "IPYTHONDIR": str(home / "ipython"),
        }
        env.pop("JUPYTER_CONFIG_PATH", None)
        if with_hook:  # what `make lab` sets
            env["JUPYTER_CONFIG_PATH"] = str(LAB_CONFIG)
        home.mkdir(parents=True, exist_ok=True)
        self.log = (home / "server.log").open("w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_server",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
                "--ServerApp.open_browser=False",
                f"--ServerApp.root_dir={root}",
                "--ServerApp.allow_root=True",
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:
            self._wait_ready()
        except BaseException:  # never leave a server behind, whatever stopped the wait
            self.process.kill()
            self.process.wait(timeout=15)
            self.log.close()
            raise

    def request(self, method: str, api: str, body: dict | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.base}{api}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT) as resp:
            text = resp.read()
        return json.loads(text) if text else {}

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the Jupyter server exited ({self.process.returncode}):\n{self.output()}")
            try:
                self.request("GET", "/api/status")
                return
            except OSError:  # not listening yet (URLError, ConnectionError and timeouts are OSErrors)
                time.sleep(0.3)
        raise TimeoutError(f"the Jupyter server did not answer within {STARTUP_TIMEOUT} s:\n{self.output()}")

    def output(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text()

    def kernel_info(self, kernel_id: str) -> dict:
        """The kernel's ``kernel_info_reply`` content, asked over the kernel's websocket as Lab asks."""
        import websocket

        session = uuid.uuid4().hex
        ws = websocket.create_connection(
            f"ws://127.0.0.1:{self.port}/api/kernels/{kernel_id}/channels?session_id={session}",
            header=[f"Authorization: token {self.token}"],
            timeout=REQUEST_TIMEOUT,
        )
        try:
            msg_id = uuid.uuid4().hex
            ws.send(
                json.dumps(
                    {
                        "header": {
                            "msg_id": msg_id,
                            "msg_type": "kernel_info_request",
                            "session": session,
                            "username": "test",
                            "date": "",
                            "version": "5.3",
                        },
                        "parent_header": {},
                        "metadata": {},
                        "content": {},
                        "channel": "shell",
                        "buffers": [],
                    }
                )
            )
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while time.monotonic() < deadline:
                msg = json.loads(ws.recv())
                if (
                    msg.get("parent_header", {}).get("msg_id") == msg_id
                    and msg["msg_type"] == "kernel_info_reply"
                ):
                    return msg["content"]
            raise TimeoutError(f"no kernel_info_reply within {STARTUP_TIMEOUT} s")
        finally:
            ws.close()

    def stop(self) -> None:
        """Shut every kernel and the server down; kill the server if it does not exit."""
        try:
            for session in self.request("GET", "/api/sessions"):
                self.request("DELETE", f"/api/sessions/{session['id']}")
            self.request("POST", "/api/shutdown")
        except OSError:
            pass  # not answering: the process is stopped (killed if need be) below either way
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        self.log.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lab_autosave(server: Server, rel: str, kernelspec: dict, language_info: dict) -> None:
    """Save ``rel`` as JupyterLab's autosave does after the kernel started: the model the server
    gave, with ``kernelspec`` and ``language_info`` set from the kernel (NotebookPanel._updateSpec,
    _updateLanguage)."""
    model = server.request("GET", f"/api/contents/{rel}?content=1&type=notebook")
    metadata = model["content"]["metadata"]
    assert (metadata.get("kernelspec"), metadata.get("language_info")) != (kernelspec, language_info), (
        f"{rel}: the kernel's metadata equals the file's, so this save would prove nothing"
    )
    metadata.update(kernelspec=kernelspec, language_info=language_info)
    server.request(
        "PUT", f"/api/contents/{rel}", {"type": "notebook", "format": "json", "content": model["content"]}
    )


@pytest.mark.parametrize("with_hook", [True, False], ids=["make-lab-config", "no-config"])
def test_kernel_start_and_autosave_change_no_file(tmp_path, with_hook):
    """With the config ``make lab`` loads, every notebook and its script come back byte for byte;
    without it the same saves rewrite every ``.ipynb`` (so the first case proves the hook works)."""
    # the test extra installs all three (websocket-client comes with jupyter_server): not skipped
    import jupyter_server  # noqa: F401
    import jupytext  # noqa: F401
    import websocket  # noqa: F401

    root = tmp_path / "notebooks"
    shutil.copytree(paths.NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    rels = [p.relative_to(root).as_posix() for p in sorted(root.rglob("*.ipynb"))]
    assert rels, f"no notebooks under {root}"
    before = {rel: {s: (root / rel).with_suffix(s).read_bytes() for s in (".ipynb", ".py")} for rel in rels}
    py_mtimes = {rel: (root / rel).with_suffix(".py").stat().st_mtime_ns for rel in rels}
    stage = next(p.relative_to(paths.NOTEBOOKS).as_posix() for p in notebooks.stage_notebooks())

    server = Server(root, tmp_path / "jupyter", with_hook)
    try:
        session = server.request(
            "POST",
            "/api/sessions",
            {"path": stage, "type": "notebook", "name": "", "kernel": {"name": notebooks.KERNELSPEC["name"]}},
        )
        kernel = session["kernel"]
        spec = server.request("GET", "/api/kernelspecs")["kernelspecs"][kernel["name"]]["spec"]
        kernelspec = {
            "name": kernel["name"],
            "display_name": spec["display_name"],
            "language": spec["language"],
        }
        language_info = server.kernel_info(kernel["id"])["language_info"]
        assert language_info["name"] == "python" and "version" in language_info, language_info
        for rel in rels:  # every notebook: on this kernel Lab writes the same two entries into each
            _lab_autosave(server, rel, kernelspec, language_info)
    finally:
        server.stop()

    rewritten = [rel for rel in rels if (root / rel).read_bytes() != before[rel][".ipynb"]]
    # NAME.py carries no notebook metadata (notebook_metadata_filter "-all"): never changed
    scripts = [rel for rel in rels if (root / rel).with_suffix(".py").read_bytes() != before[rel][".py"]]
    assert not scripts, f"saving rewrote the scripts of {scripts}"
    written = [rel for rel in rels if (root / rel).with_suffix(".py").stat().st_mtime_ns != py_mtimes[rel]]
    assert written == rels, (
        "jupytext's contents manager did not save the pairs: the server is not the one Lab runs"
    )
    if with_hook:
        assert not rewritten, f"JupyterLab's autosave rewrites {rewritten} although nothing was edited"
    else:
        assert rewritten == rels, (
            f"without the hook these saves left {sorted(set(rels) - set(rewritten))} alone"
        )


def test_make_lab_loads_the_config():
    """`make lab` puts ``.jupyter`` on Jupyter's config path (what the server test above calls
    the make-lab-config), keeping any path the user had set."""
    dry_run = subprocess.run(
        ["make", "-n", "lab"],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "JUPYTER_CONFIG_PATH": "/elsewhere"},
        check=True,
    ).stdout
    command = next((line for line in dry_run.splitlines() if "JUPYTER_CONFIG_PATH=" in line), None)
    assert command is not None, f"`make lab` does not set JUPYTER_CONFIG_PATH:\n{dry_run}"
    assignment = command.strip().removesuffix("\\").strip()  # the prefix of the `jupyter lab` command
    shown = subprocess.run(
        ["bash", "-c", assignment + " env"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "JUPYTER_CONFIG_PATH": "/elsewhere"},
        check=True,
    ).stdout
    assert f"JUPYTER_CONFIG_PATH={LAB_CONFIG}:/elsewhere\n" in shown
    assert (LAB_CONFIG / "jupyter_server_config.py").is_file()
    # and Lab runs under the pipeline's CPU pins (its kernels compute the pipeline's bits)
    assert re.search(r"schedlab pinned -- \S*jupyter lab ", dry_run), dry_run
