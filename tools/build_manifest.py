"""Regenerate ``lib/schedlab/data/manifest.yaml`` from a mirror folder and the provenance its READMEs record.

Run once when the mirror gains files (``python tools/build_manifest.py [MIRROR]``). It
hashes every file, attaches the original public URL and licence (from the READMEs'
provenance tables and ``pcs/MANIFEST.tsv``), and lists the upstream PAI archives that the
mirror does not carry. The output is reviewed and committed; the data layer only reads it.
"""

from __future__ import annotations

import csv
import hashlib
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "lib" / "schedlab" / "data" / "manifest.yaml"

GH = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
PIPEDREAM = ("msr-fiddle/pipedream", "7db6a1c3e64996d5b319faec6ca38cb31bfea1c4")
PAI_MIRROR = ("qzweng/clusterdata-cluster-trace-gpu-v2020-data", "e60d925fec479a526f4fb99379dfadefeab30c8e")
PAI_OSS = "https://aliopentrace.oss-cn-beijing.aliyuncs.com/v2020GPUTraces/{name}"
POLARIS = ("polaris-slo-cloud/Profiling", "3a5a2a502d0b283b56916113c33236fd06e18311")
SPARK_SCHED_SIM = ("ArchieGertsman/spark-sched-sim", "2ba8d80c2ce57ccb4f20e753476a69295db223c9")

LICENSES = {
    "nona": "MIT (Microsoft PipeDream), see nona/LICENSE.pipedream.txt",
    "pcs": "MIT (PCS); Philly-derived traces CC-BY-4.0; Gavel MIT; see pcs/LICENSE.*",
    "alibaba-pai": "CC-BY-4.0 (Alibaba cluster-trace-gpu-v2020); polaris-derived Apache-2.0",
    "decima": "MIT (spark-sched-sim), see decima/LICENSE.spark-sched-sim.txt",
}

# Authors' outputs that are not in the mirror (optional; found in their repository's history):
# the 2024 per-job Themis run on the whole ee9e8c trace (checked job by job in the tests).
PCS_UPSTREAM = {
    "pcs/authors_new_data/THEMIS_ee9e8c_result.csv": (
        686140,
        "03543dd3989a79e9ede114dc87a2cd4b08a5798f14c44103804e09ca7e42288c",
        "2cafc33ca54228509ec4cf3516d815773b24a249",
        "new_data/THEMIS_ee9e8c_result.csv",
    ),
}
# Upstream PAI archives not in the mirror: (bytes, sha256 of the .tar.gz) from alibaba-pai/README.md
PAI_UPSTREAM = {
    "pai_job_table.tar.gz": (62065432, "5aad7f7caac501136d14ed6a48e40546f825d7b0617a3a4f337e2348fe0a6cb0"),
    "pai_task_table.tar.gz": (35514117, "cd1d6dc3215d2a8607ccf6b6dd952b5db776df86926c73259fea7c1499ac40e5"),
    "pai_instance_table.tar.gz": (
        694839139,
        "1bf1e423a7ce3f8d086699801c362fd56a7182abdb234139e5ebbed97995ca06",
    ),
    "pai_sensor_table.tar.gz": (
        406119947,
        "9a0b82e8bdf3949281e4ba1423d9b4b34847e52799eecb138966de46da69c7a0",
    ),
    "pai_group_tag_table.tar.gz": (
        55064781,
        "722fef30b7fb7aa50dabd79155614b5423a9d65cf45a9b26c590d57725423a14",
    ),
    "pai_machine_metric.tar.gz": (
        206596175,
        "53ad917193d3b1dd0f3055e723148b1f36c2f81789b014ea2930a7875892eef5",
    ),
}

SKIP = {"README.md", "MANIFEST.tsv"}  # the mirror's own documentation, not raw inputs


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def gh(repo_commit: tuple[str, str], path: str) -> str:
    return GH.format(repo=repo_commit[0], commit=repo_commit[1], path=path)


# PipeDream keeps its translation models' profiles apart from the image classifiers'
PIPEDREAM_TRANSLATION = {"gnmt"}


def pipedream_path(rest: str) -> str:
    """PipeDream's path of a mirror file under ``nona/`` (``rest`` is the path below ``nona/``)."""
    if rest == "LICENSE.pipedream.txt":
        return "LICENSE.txt"
    family = "translation" if rest.split("/", 1)[0] in PIPEDREAM_TRANSLATION else "image_classification"
    return f"profiler/{family}/profiles/{rest}"


def pcs_sources(mirror: Path) -> dict[str, dict]:
    rows = {}
    with open(mirror / "pcs" / "MANIFEST.tsv", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            rows[row["path"]] = row
    return rows


def source_for(rel: str, pcs: dict[str, dict]) -> dict:
    """URL(s) and how the URL's bytes relate to the mirror copy, for one mirror path."""
    top, _, rest = rel.partition("/")
    if top == "nona":
        return {"urls": [gh(PIPEDREAM, pipedream_path(rest))]}
    if top == "decima":
        if rest == "model.pt":
            return {"urls": [gh(SPARK_SCHED_SIM, "models/decima/model.pt")]}
        if rest == "LICENSE.spark-sched-sim.txt":
            return {"urls": [gh(SPARK_SCHED_SIM, "LICENSE")]}
        return {
            "urls": [],
            "derived": "NumPy copy of model.pt (torch.load, numpy.savez); see decima/README.md",
        }
    if top == "alibaba-pai":
        if rest.startswith("polaris-derived/"):
            name = rest.split("/", 1)[1]
            if name == "calibration_rows.csv.gz":
                return {
                    "urls": [],
                    "derived": "800 of 999 rows of the authors' 1_000_sampled_test_data.csv; see alibaba-pai/README.md",
                }
            return {"urls": [gh(POLARIS, f"case-studies/alibaba/experiments/{name}")]}
        urls = [gh(PAI_MIRROR, rest)]
        if rest.endswith(".tar.gz"):
            urls.insert(0, PAI_OSS.format(name=rest))
        return {"urls": urls}
    if top == "pcs":
        row = pcs.get(rest)
        if row is None:
            raise SystemExit(f"pcs/MANIFEST.tsv has no row for {rest}")
        if row["kind"] != "copy":
            return {
                "urls": [],
                "derived": f"derived from {row['source_repo']} @ {row['source_commit']}: {row['source_path']}",
            }
        repo = row["source_repo"].removeprefix("github.com/")
        entry: dict = {"urls": [GH.format(repo=repo, commit=row["source_commit"], path=row["source_path"])]}
        if row["uncompressed_sha256"] and not row["source_path"].endswith(".gz"):
            # the mirror stores a gzip of the upstream file; a download is gzipped on arrival
            entry["url_content"] = "uncompressed"
            entry["content_sha256"] = row["uncompressed_sha256"]
        return entry
    raise SystemExit(f"no provenance rule for {rel}")


def main(mirror: Path) -> None:
    pcs = pcs_sources(mirror)
    entries = []
    for path in sorted(p for p in mirror.rglob("*") if p.is_file()):
        rel = path.relative_to(mirror).as_posix()
        if path.name in SKIP:
            continue
        entry = {"name": rel, "path": rel, "size": path.stat().st_size, "sha256": sha256(path)}
        entry.update(source_for(rel, pcs))
        entry["license"] = LICENSES[rel.split("/", 1)[0]]
        entries.append(entry)
    for name, (size, digest) in PAI_UPSTREAM.items():
        entries.append(
            {
                "name": f"alibaba-pai/{name}",
                "path": f"alibaba-pai/{name}",
                "size": size,
                "sha256": digest,
                "urls": [PAI_OSS.format(name=name)],
                "license": LICENSES["alibaba-pai"],
                "optional": True,  # not in the mirror; fetched only when asked for by name
            }
        )
    for name, (size, digest, commit, source) in PCS_UPSTREAM.items():
        entries.append(
            {
                "name": name,
                "path": name,
                "size": size,
                "sha256": digest,
                "urls": [GH.format(repo="abdullahfsm/PCS", commit=commit, path=source)],
                "license": LICENSES["pcs"],
                "optional": True,
            }
        )
    header = (
        "# Raw inputs of schedlab. Generated by tools/build_manifest.py from the mirror's READMEs;\n"
        "# review changes by hand. sha256/size are of the file as stored (mirror form).\n"
        "# url_content: uncompressed means the URL serves the file before gzip; content_sha256 is then\n"
        "# the sha256 of those bytes and the data layer gzips them on arrival.\n"
        "# optional: true entries are not in the mirror and are fetched only when named.\n"
    )
    OUT.write_text(header + yaml.safe_dump({"version": 1, "entries": entries}, sort_keys=False, width=200))
    print(f"wrote {len(entries)} entries to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "data")
