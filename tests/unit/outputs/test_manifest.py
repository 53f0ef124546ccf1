"""Chunk indexes and level manifests: deterministic compact bytes, union, loader, versioning."""

from __future__ import annotations

import json

import orjson
import pytest

from library_helpers import write_library
from pipeline.digest import bytes_hash, stable_hash
from pipeline.outputs.manifest import (
    FORMAT_VERSION,
    ManifestEntry,
    ManifestError,
    ManifestVersionError,
    SpecConstant,
    chunk_manifest,
    chunk_manifest_path,
    dump_json,
    dump_pretty,
    level_manifest,
    level_manifest_path,
    library_path,
    load_chunk_manifest,
    load_level_manifest,
    pak_stem,
    stage_hashes,
)
from pipeline.outputs.pak import LIBRARY_NAME, PakReader
from pipeline.outputs.write_level import write_level_manifest

VERT, FRAG, FRAG2 = b"\x03\x02\x23\x07vert", b"\x03\x02\x23\x07frag", b"\x03\x02\x23\x07frag2"
BLOBS = {bytes_hash(b): b for b in (VERT, FRAG, FRAG2)}
OPAQUE = {"blend": False, "cull": "back", "depth_write": True}
FOLIAGE = {"blend": False, "cull": "none", "depth_write": True}


def entry(alpha="OPAQUE", draws=1, states=(OPAQUE,), double_sided=(False,), frag=FRAG) -> ManifestEntry:
    features = {"ALPHA_MODE": alpha, "NORMAL_MAP": True}
    return ManifestEntry(
        key=f"pbr/forward{{ALPHA_MODE={alpha},NORMAL_MAP=1}}",
        hash=stable_hash({"shader": "pbr", "pass": "forward", "features": features}), shader="pbr",
        pass_name="forward", features=features,
        stages={"vertex": bytes_hash(VERT), "fragment": bytes_hash(frag)}, draws=draws,
        render_states=tuple(states), specialization={"DOUBLE_SIDED": SpecConstant(0, tuple(double_sided))})


def forest_c00():
    return chunk_manifest("forest/c00", "forest", [entry(), entry("MASK", 2, (FOLIAGE,), (True,), FRAG2)],
                          errors=[{"file": "forest/c00/bad.gltf", "pointer": "/meshes/0", "message": "boom"}])


def write_outputs(out, *manifests) -> None:
    """Chunk indexes and the library holding their blobs, as a cook leaves them."""
    for m in manifests:
        path = chunk_manifest_path(out, m.chunk)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(dump_json(m.to_json()))
    write_library(library_path(out), BLOBS, chunks={m.chunk: stage_hashes(m) for m in manifests})


def test_chunk_index_shape(tmp_path):
    doc = json.loads(dump_json(forest_c00().to_json()))
    assert set(doc) == {"format", "chunk", "level", "library", "blobs", "keys", "pipelines", "draws", "files",
                        "passes", "render_states", "layouts", "specializations", "key_specializations", "uses",
                        "key_passes", "fallbacks", "errors"}
    assert (doc["format"], doc["chunk"], doc["level"]) == (5, "forest/c00", "forest")
    assert doc["library"] == "../" + LIBRARY_NAME and "reflection" not in doc and "pak" not in doc
    assert doc["blobs"] == sorted(BLOBS)
    assert not any(entry().key in json.dumps(row) for row in doc["keys"])  # no key text is stored
    assert doc["key_passes"] == [["pbr/forward", ["ALPHA_MODE", "NORMAL_MAP"]]]
    assert sorted(row[1] for row in doc["keys"]) == [["MASK", True], ["OPAQUE", True]]
    opaque = load_chunk_manifest(_write(tmp_path, doc)).keys[entry().key]
    assert opaque.specialization == {"DOUBLE_SIDED": SpecConstant(0, (False,))}
    assert opaque.stages["vertex"] == bytes_hash(VERT) and opaque.hash == entry().hash


def test_json_is_deterministic_compact_and_canonical():
    a = chunk_manifest("forest/c00", "forest", [entry(states=(OPAQUE, FOLIAGE)), entry("MASK")])
    b = chunk_manifest("forest/c00", "forest", [entry("MASK"), entry(states=(FOLIAGE, OPAQUE, OPAQUE))])
    data = dump_json(a.to_json())
    assert data == dump_json(b.to_json())
    assert data.endswith(b"}\n") and data.count(b"\n") == 1 and b'"chunk":"forest/c00",' in data
    assert data == orjson.dumps(json.loads(data), option=orjson.OPT_SORT_KEYS) + b"\n"
    pretty = dump_pretty(a.to_json())
    assert b'\n  "chunk": "forest/c00",\n' in pretty and json.loads(pretty) == json.loads(data)


def test_same_key_twice_is_merged():
    m = chunk_manifest("forest/c00", "forest", [entry(double_sided=(True,)), entry(draws=3, states=(FOLIAGE,))])
    merged = m.keys[entry().key].to_json()
    assert merged["draws"] == 4
    assert merged["render_states"] == sorted([OPAQUE, FOLIAGE], key=lambda s: json.dumps(s, sort_keys=True))
    assert merged["specialization"]["DOUBLE_SIDED"]["values"] == [False, True]


def test_conflicting_entries_refused():
    with pytest.raises(ManifestError, match="stages"):
        chunk_manifest("forest/c00", "forest", [entry(), entry(frag=FRAG2)])


def test_write_and_load_chunk(tmp_path):
    manifest = forest_c00()
    write_outputs(tmp_path, manifest)
    loaded = load_chunk_manifest(tmp_path / "forest/c00.json")
    assert loaded == manifest and loaded.reflection == {}
    assert loaded.library == "../shaders.pak"
    library = PakReader((tmp_path / "forest" / loaded.library).resolve())
    assert set(library.hashes()) >= stage_hashes(loaded) == set(BLOBS)
    assert library.chunks == {"forest/c00": stage_hashes(loaded)}
    assert library.get(bytes_hash(FRAG2)) == FRAG2


def test_library_path_from_each_depth(tmp_path):
    assert library_path(tmp_path) == tmp_path / "shaders.pak"
    assert chunk_manifest("c00", "c00", []).library == "shaders.pak"
    assert chunk_manifest("world/forest/c00", "world/forest", []).library == "../../shaders.pak"
    assert chunk_manifest(".", ".", []).library == "shaders.pak"


def test_pak_stem_names_the_chunk_of_an_old_per_chunk_pak():
    assert pak_stem("c00.0123456789abcdef.pak") == "c00"
    assert pak_stem(LIBRARY_NAME) is None and pak_stem("c00.pak") is None


def test_level_union(tmp_path):
    c01 = chunk_manifest("forest/c01", "forest", [entry(draws=5, double_sided=(True,))])
    level = level_manifest("forest", [c01, forest_c00()])
    assert level.chunks == ("forest/c00", "forest/c01")
    opaque = level.keys[entry().key]
    assert opaque.draws == 6 and opaque.chunks == ("forest/c00", "forest/c01")
    # a level's render states and specialization values are those of its pipeline states
    assert opaque.render_states == () and opaque.specialization == {}
    assert level.keys[entry("MASK").key].chunks == ("forest/c00",)
    assert level.uses["forest/c01"] == ({entry().key: 5}, ())
    assert level.errors[0]["chunk"] == "forest/c00"
    doc = level.to_json()
    assert doc["chunks"]["forest/c01"] == {"index": "forest/c01.json", "keys": [sorted(level.keys).index(entry().key), 5],
                                          "pipelines": []}
    assert doc["library"] == "shaders.pak" and "paks" not in doc
    assert dump_json(doc) == dump_json(level_manifest("forest", [forest_c00(), c01]).to_json())
    assert write_level_manifest(tmp_path, level) is True
    assert write_level_manifest(tmp_path, level) is False
    path = level_manifest_path(tmp_path, "forest")
    assert path == tmp_path / "forest.level.json"
    assert load_level_manifest(path) == level


def test_level_manifest_of_nested_level():
    chunk = chunk_manifest("world/forest/c00", "world/forest", [entry()])
    doc = level_manifest("world/forest", [chunk]).to_json()
    assert doc["chunks"]["world/forest/c00"]["index"] == "forest/c00.json"
    assert doc["library"] == "../shaders.pak"


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


@pytest.mark.parametrize("version", [3, FORMAT_VERSION + 1])
def test_other_formats_refused(tmp_path, version):
    doc = forest_c00().to_json()
    doc["format"] = version
    with pytest.raises(ManifestVersionError, match=f"format {version} is not supported") as info:
        load_chunk_manifest(_write(tmp_path, doc))
    assert str(info.value).startswith(f"{tmp_path / 'c00.json'}:")


@pytest.mark.parametrize("damage, match", [
    (lambda d: d.pop("keys"), "/keys"),
    (lambda d: d.update(chunk=3), "/chunk"),
    (lambda d: d["keys"][0].__setitem__(3, "2"), "/keys/0"),
    (lambda d: d["keys"][0].__setitem__(2, {"fragment": 9}), "/keys/0/2/fragment"),
    (lambda d: d["key_specializations"].__setitem__(0, {"DOUBLE_SIDED": [0]}), "/key_specializations/0: error: expected {feature: {constant_id, values}}"),
    (lambda d: d.pop("format"), "format"),
])
def test_malformed_index_located(tmp_path, damage, match):
    doc = forest_c00().to_json()
    damage(doc)
    with pytest.raises(ManifestError, match=match):
        load_chunk_manifest(_write(tmp_path, doc))


def test_invalid_json_and_missing_file(tmp_path):
    with pytest.raises(ManifestError, match="not valid JSON"):
        load_chunk_manifest(_write(tmp_path, b"{\"format\": 1,"))
    with pytest.raises(ManifestError, match="cannot read"):
        load_level_manifest(tmp_path / "nope.level.json")
