"""The README as a new user meets it: its commands exist and its links resolve."""

from __future__ import annotations

import re
import subprocess


from schedlab import paths

README = (paths.ROOT / "README.md").read_text()


def _fenced_block_after(heading: str, lang: str) -> str:
    section = README[README.index(heading) :]
    match = re.search(rf"```{lang}\n(.*?)```", section, re.S)
    assert match, f"README: no ```{lang} block after {heading!r}"
    return match.group(1)


def test_ci_runs_the_readme_test_command():
    assert "make test" in _fenced_block_after("## Two commands", "bash")
    assert "make test" in (paths.ROOT / ".ci" / "run").read_text()


def test_make_help_is_what_the_readme_shows():
    out = subprocess.run(
        ["make", "--no-print-directory", "help"], cwd=paths.ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == _fenced_block_after("## Two commands", "text").strip()


def test_relative_links_resolve(pipeline_outputs):
    """Every relative link of the README points at a file of the repository, or at an output the
    pipeline writes (results/, figures/)."""
    outs = pipeline_outputs
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if target.startswith(("http://", "https://")):
            continue
        assert (paths.ROOT / target).exists() or target in outs, (
            f"README links to {target}, which nothing provides"
        )


def test_scorecard_block_markers():
    assert README.count("<!-- scorecard:start -->") == 1 and README.count("<!-- scorecard:end -->") == 1


def test_the_readme_python_examples_run():
    """Every ```python block of the README runs as written (a stale example fails here)."""
    import re
    import subprocess
    import sys

    text = (paths.ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    for block in blocks:
        res = subprocess.run(
            [sys.executable, "-c", block], cwd=paths.ROOT, capture_output=True, text=True, timeout=300
        )
        assert res.returncode == 0, f"README example failed:\n{block}\n{res.stderr[-2000:]}"
