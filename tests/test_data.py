"""The data layer: manifest coverage, verified fetch from a mirror or URL, and its errors."""

from __future__ import annotations

import gzip
import hashlib
import io
import stat
import urllib.error

import pytest
import yaml
from click.testing import CliRunner

from schedlab import data, paths
from schedlab.cli import main
from schedlab.data.fetch import is_verified
from schedlab.data.manifest import Entry, ManifestError, load_manifest


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def make_entry(content: bytes, **kw) -> Entry:
    base = dict(
        name="t/file.bin",
        path="t/file.bin",
        size=len(content),
        sha256=sha(content),
        license="test",
        urls=("https://example.invalid/file.bin",),
    )
    base.update(kw)
    return Entry(**base)


def test_manifest_covers_the_whole_mirror():
    mirror = paths.mirror()
    assert mirror is not None and mirror.is_dir(), "tests need ../shared/data beside the project"
    on_disk = {
        p.relative_to(mirror).as_posix()
        for p in mirror.rglob("*")
        if p.is_file() and p.name not in ("README.md", "MANIFEST.tsv")
    }
    listed = {e.path for e in data.entries() if not e.optional}
    assert on_disk == listed


def test_pipedream_profiles_point_at_their_upstream_folder():
    # PipeDream keeps GNMT under profiler/translation, the image classifiers under image_classification
    graphs = [e for e in data.entries() if e.name.startswith("nona/") and e.name.endswith("/graph.txt")]
    models = {e.name.split("/")[1] for e in graphs}
    assert {"gnmt", "inception_v3", "nasnetamobile", "resnet18"} <= models
    for e in graphs:
        model = e.name.split("/")[1]
        family = "translation" if model == "gnmt" else "image_classification"
        assert e.urls[0].endswith(f"/profiler/{family}/profiles/{model}/graph.txt"), e.urls


def test_manifest_entries_are_complete():
    for e in data.entries():
        assert e.license, e.name
        assert e.urls or e.derived, f"{e.name}: neither a public URL nor a derivation note"
        assert all(u.startswith("https://") for u in e.urls), e.name


def test_optional_upstream_archives_are_known_but_not_default():
    names = {e.name for e in data.select([])}
    assert "alibaba-pai/pai_instance_table.tar.gz" not in names
    e = data.entry("alibaba-pai/pai_instance_table.tar.gz")
    assert e.optional and e.size == 694839139 and e.urls


def test_fetch_from_mirror_verifies_and_is_read_only(tmp_path):
    out = data.fetch(["nona/alexnet"], root=tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in out] == ["nona/alexnet/graph.txt"]
    assert sha(out[0].read_bytes()) == data.entry("nona/alexnet/graph.txt").sha256
    assert not out[0].stat().st_mode & stat.S_IWUSR


def test_unknown_name_is_an_error():
    with pytest.raises(KeyError, match="no raw input named 'nona/gpt3'"):
        data.select(["nona/gpt3"])


def test_checksum_mismatch_in_mirror_keeps_nothing(tmp_path):
    mirror, root = tmp_path / "mirror", tmp_path / "raw"
    (mirror / "t").mkdir(parents=True)
    (mirror / "t/file.bin").write_bytes(b"tampered")
    e = make_entry(b"original")
    with pytest.raises(data.ChecksumMismatch) as info:
        data.fetch_entry(e, mirror=mirror, root=root)
    msg = str(info.value)
    assert "t/file.bin" in msg and sha(b"original") in msg and sha(b"tampered") in msg
    assert not (root / "t/file.bin").exists()
    assert list((root / "t").iterdir()) == []  # no temp left behind


def test_no_mirror_offline_names_file_url_and_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_OFFLINE", "1")
    e = make_entry(b"x")
    with pytest.raises(data.FetchError) as info:
        data.fetch_entry(e, mirror=tmp_path / "absent", root=tmp_path / "raw")
    msg = str(info.value)
    assert "t/file.bin" in msg and "https://example.invalid/file.bin" in msg and "SCHEDLAB_MIRROR" in msg


def test_download_failure_names_url_and_mirror_help(tmp_path, monkeypatch):
    monkeypatch.delenv("SCHEDLAB_OFFLINE", raising=False)

    def unreachable(url):
        raise urllib.error.URLError("no network")

    with pytest.raises(data.FetchError, match="(?s)example.invalid.*no network.*SCHEDLAB_MIRROR"):
        data.fetch_entry(make_entry(b"x"), mirror=None, root=tmp_path, opener=unreachable)


def test_download_verifies_and_writes(tmp_path, monkeypatch):
    monkeypatch.delenv("SCHEDLAB_OFFLINE", raising=False)
    content = b"a,b\n1,2\n"
    path = data.fetch_entry(
        make_entry(content), mirror=None, root=tmp_path, opener=lambda u: io.BytesIO(content)
    )
    assert path.read_bytes() == content


def test_download_with_wrong_bytes_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("SCHEDLAB_OFFLINE", raising=False)
    with pytest.raises(data.ChecksumMismatch, match="expected sha256"):
        data.fetch_entry(
            make_entry(b"right"), mirror=None, root=tmp_path, opener=lambda u: io.BytesIO(b"wrong")
        )
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_uncompressed_url_is_gzipped_on_arrival(tmp_path, monkeypatch):
    monkeypatch.delenv("SCHEDLAB_OFFLINE", raising=False)
    content = b"app_id,submit_time\n0,0\n"
    stored = gzip.compress(content, mtime=0)
    e = make_entry(stored, url_content="uncompressed", content_sha256=sha(content))
    path = data.fetch_entry(e, mirror=None, root=tmp_path, opener=lambda u: io.BytesIO(content))
    assert gzip.decompress(path.read_bytes()) == content
    assert is_verified(e, path)


def test_real_pcs_entry_from_url_matches_mirror_content(tmp_path, monkeypatch):
    """A PCS trace fetched 'from its URL' (served here from the mirror's gunzipped bytes)."""
    monkeypatch.delenv("SCHEDLAB_OFFLINE", raising=False)
    e = data.entry("pcs/workload2_philly_traces/trace_51b7ef.csv.gz")
    original = gzip.decompress((paths.mirror() / e.path).read_bytes())
    path = data.fetch_entry(e, mirror=None, root=tmp_path, opener=lambda u: io.BytesIO(original))
    assert gzip.decompress(path.read_bytes()) == original


def test_derived_file_without_mirror_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_OFFLINE", "1")
    e = data.entry("decima/model_state_dict.npz")
    with pytest.raises(data.FetchError, match="no public URL"):
        data.fetch_entry(e, mirror=tmp_path, root=tmp_path / "raw")


@pytest.mark.parametrize(
    "patch, message",
    [
        ({"sha256": "abc"}, "field 'sha256' must be 64"),
        ({"size": -1}, "field 'size'"),
        ({"path": "../escape"}, "field 'path' must be relative"),
        ({"url_content": "zipped"}, "field 'url_content'"),
    ],
)
def test_malformed_manifest_names_entry_and_field(tmp_path, patch, message):
    entry = {"name": "x", "path": "x", "size": 1, "sha256": "0" * 64, "license": "l"}
    entry.update(patch)
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"entries": [entry]}))
    with pytest.raises(ManifestError, match=message) as info:
        load_manifest(path)
    assert "entry 0 (x)" in str(info.value)


def test_cli_fetch_error_is_clean(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_OFFLINE", "1")
    result = CliRunner().invoke(main, ["fetch", "nona/gpt3"])
    assert result.exit_code != 0 and "no raw input named 'nona/gpt3'" in result.output


def test_cli_fetch_list():
    result = CliRunner().invoke(main, ["fetch", "--list", "decima"])
    assert result.exit_code == 0
    assert "decima/model.pt" in result.output and "spark-sched-sim" in result.output
