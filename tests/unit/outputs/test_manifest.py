"""Chunk and level manifests: deterministic bytes, union, loader, versioning."""

from __future__ import annotations

import json
import os
import re

import pytest

from pipeline.outputs.manifest import (
    FORMAT_VERSION,
    ManifestEntry,
    ManifestError,
    ManifestVersionError,
    SpecConstant,
    chunk_manifest,
    chunk_manifest_path,
    dump_json,
    level_manifest,
    level_manifest_path,
    load_chunk_manifest,
    load_level_manifest,
)
from pipeline.outputs.write_chunk import write_chunk_outputs
from pipeline.outputs.write_level import write_level_manifest
from pipeline.outputs.pak import PakReader
from pipeline.digest import bytes_hash

VERT, FRAG, FRAG2 = b"\x03\x02\x23\x07vert", b"\x03\x02\x23\x07frag", b"\x03\x02\x23\x07frag2"
BLOBS = {bytes_hash(b): b for b in (VERT, FRAG, FRAG2)}
OPAQUE = {"blend": False, "cull": "back", "depth_write": True}
FOLIAGE = {"blend": False, "cull": "none", "depth_write": True}


def entry(alpha="OPAQUE", draws=1, states=(OPAQUE,), double_sided=(False,), frag=FRAG) -> ManifestEntry:
    key = f"pbr/forward{{ALPHA_MODE={alpha},NORMAL_MAP=1}}"
    return ManifestEntry(
        key=key, hash=bytes_hash(key.encode()), shader="pbr", pass_name="forward",
        features={"NORMAL_MAP": True, "ALPHA_MODE": alpha},
        stages={"vertex": bytes_hash(VERT), "fragment": bytes_hash(frag)}, draws=draws,
        render_states=tuple(states), specialization={"DOUBLE_SIDED": SpecConstant(0, tuple(double_sided))})


def forest_c00():
    return chunk_manifest("forest/c00", "forest", [entry(), entry("MASK", 2, (FOLIAGE,), (True,), FRAG2)],
                          errors=[{"file": "forest/c00/bad.gltf", "pointer": "/meshes/0", "message": "boom"}])


def test_chunk_manifest_shape():
    doc = json.loads(dump_json(forest_c00().to_json()))
    assert set(doc) == {"format", "chunk", "level", "keys", "pak", "errors", "draws", "pipelines", "reflection",
                        "fallbacks"}
    assert (doc["format"], doc["chunk"], doc["level"]) == (3, "forest/c00", "forest")
    assert re.fullmatch(r"c00\.[0-9a-f]{16}\.pak", doc["pak"])  # named by the blobs it holds
    opaque = doc["keys"][entry().key]
    assert set(opaque) == {"hash", "shader", "pass", "features", "render_states", "specialization", "stages", "draws"}
    assert opaque["specialization"] == {"DOUBLE_SIDED": {"constant_id": 0, "values": [False]}}
    assert opaque["stages"]["vertex"] == bytes_hash(VERT)


def test_json_is_deterministic_and_canonical():
    a = chunk_manifest("forest/c00", "forest", [entry(states=(OPAQUE, FOLIAGE)), entry("MASK")])
    b = chunk_manifest("forest/c00", "forest", [entry("MASK"), entry(states=(FOLIAGE, OPAQUE, OPAQUE))])
    data = dump_json(a.to_json())
    assert data == dump_json(b.to_json())
    assert data.endswith(b"}\n") and b'\n  "chunk": "forest/c00",\n' in data
    assert data == (json.dumps(json.loads(data), sort_keys=True, indent=2) + "\n").encode()


def test_same_key_twice_is_merged():
    m = chunk_manifest("forest/c00", "forest", [entry(double_sided=(True,)), entry(draws=3, states=(FOLIAGE,))])
    merged = m.to_json()["keys"][entry().key]
    assert merged["draws"] == 4
    assert merged["render_states"] == sorted([OPAQUE, FOLIAGE], key=lambda s: json.dumps(s, sort_keys=True))
    assert merged["specialization"]["DOUBLE_SIDED"]["values"] == [False, True]


def test_conflicting_entries_refused():
    with pytest.raises(ManifestError, match="stages"):
        chunk_manifest("forest/c00", "forest", [entry(), entry(frag=FRAG2)])


def test_write_and_load_chunk(tmp_path):
    manifest = forest_c00()
    written = write_chunk_outputs(tmp_path, manifest, BLOBS)
    assert written == [tmp_path / "forest" / manifest.pak, tmp_path / "forest/c00.json"]
    loaded = load_chunk_manifest(tmp_path / "forest/c00.json")
    assert loaded.to_json() == manifest.to_json()
    pak = PakReader(tmp_path / "forest" / loaded.pak)
    needed = {h for e in loaded.keys.values() for h in e.stages.values()}
    assert set(pak.hashes()) == needed
    assert pak.get(bytes_hash(FRAG2)) == FRAG2


def test_unchanged_outputs_not_rewritten(tmp_path):
    write_chunk_outputs(tmp_path, forest_c00(), BLOBS)
    path = tmp_path / "forest/c00.json"
    os.utime(path, ns=(1, 1))
    assert write_chunk_outputs(tmp_path, forest_c00(), BLOBS) == []
    assert path.stat().st_mtime_ns == 1


def test_missing_blob_is_a_bug(tmp_path):
    with pytest.raises(ValueError, match="no blob"):
        write_chunk_outputs(tmp_path, forest_c00(), {bytes_hash(VERT): VERT})
    assert not (tmp_path / "forest").exists()


def test_level_union(tmp_path):
    c01 = chunk_manifest("forest/c01", "forest", [entry(draws=5, double_sided=(True,))])
    level = level_manifest("forest", [c01, forest_c00()])
    doc = level.to_json()
    assert list(doc["chunks"]) == ["forest/c00", "forest/c01"]
    assert doc["chunks"]["forest/c01"] == {"manifest": "forest/c01.json", "pak": "forest/" + c01.pak}
    opaque = doc["keys"][entry().key]
    assert opaque["draws"] == 6 and opaque["chunks"] == ["forest/c00", "forest/c01"]
    assert opaque["specialization"]["DOUBLE_SIDED"]["values"] == [False, True]
    assert doc["keys"][entry("MASK").key]["chunks"] == ["forest/c00"]
    assert doc["errors"][0]["chunk"] == "forest/c00"
    assert dump_json(doc) == dump_json(level_manifest("forest", [forest_c00(), c01]).to_json())
    assert write_level_manifest(tmp_path, level) is True
    assert write_level_manifest(tmp_path, level) is False
    path = level_manifest_path(tmp_path, "forest")
    assert path == tmp_path / "forest.level.json"
    assert load_level_manifest(path).to_json() == doc


def test_level_manifest_of_nested_level():
    chunk = chunk_manifest("world/forest/c00", "world/forest", [entry()])
    doc = level_manifest("world/forest", [chunk]).to_json()
    assert doc["chunks"]["world/forest/c00"]["manifest"] == "forest/c00.json"


@pytest.mark.parametrize("name", ["", "forest/x.level", "../escape", "forest//c00", "/abs", "a\\b", "forest/."])
def test_bad_or_reserved_names(tmp_path, name):
    with pytest.raises(ManifestError):
        chunk_manifest_path(tmp_path, name)


def test_level_and_chunk_paths_cannot_collide(tmp_path):
    assert chunk_manifest_path(tmp_path, "forest") == tmp_path / "forest.json"
    assert level_manifest_path(tmp_path, "forest") == tmp_path / "forest.level.json"


def _write(tmp_path, doc) -> str:
    path = tmp_path / "c00.json"
    path.write_bytes(dump_json(doc) if isinstance(doc, dict) else doc)
    return path


def test_newer_format_refused(tmp_path):
    doc = forest_c00().to_json()
    doc["format"] = FORMAT_VERSION + 1
    with pytest.raises(ManifestVersionError, match=f"format {FORMAT_VERSION + 1} is not supported"):
        load_chunk_manifest(_write(tmp_path, doc))


@pytest.mark.parametrize("damage, match", [
    (lambda d: d.pop("keys"), "/keys"),
    (lambda d: d.update(chunk=3), "/chunk"),
    (lambda d: d["keys"][entry().key].update(draws="2"), "/draws"),
    (lambda d: d["keys"][entry().key].pop("stages"), "/stages"),
    (lambda d: d["keys"][entry().key]["specialization"].update(DOUBLE_SIDED=[0]), "DOUBLE_SIDED"),
    (lambda d: d.pop("format"), "format"),
])
def test_malformed_manifest_located(tmp_path, damage, match):
    doc = forest_c00().to_json()
    damage(doc)
    with pytest.raises(ManifestError, match=match):
        load_chunk_manifest(_write(tmp_path, doc))


def test_invalid_json_and_missing_file(tmp_path):
    with pytest.raises(ManifestError, match="not valid JSON"):
        load_chunk_manifest(_write(tmp_path, b"{\"format\": 1,"))
    with pytest.raises(ManifestError, match="cannot read"):
        load_level_manifest(tmp_path / "nope.level.json")
