"""The compact chunk index (outputs/chunk_index.py): round trips, byte-identical re-encoding, located errors."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline import api
from pipeline.digest import bytes_hash
from pipeline.keys.key import PermutationKey
from pipeline.outputs import chunk_index
from pipeline.outputs import manifest as mf
from pipeline.outputs.view import expanded
from pipeline.outputs import write_chunk
from pipeline.outputs.contract import pipeline_state
from pipeline.outputs.manifest import ManifestEntry, SpecConstant
from pipeline.structs import replace
from paths import SAMPLE_WORLD

SPIRV = {s: b"\x03\x02\x23\x07" + s.encode() for s in ("vertex", "fragment", "depth-vertex", "sky")}
TEXT = {s: f"#version 300 es\n// {s}\n".encode() for s in ("vertex", "fragment")}
OPAQUE = {"blend": False, "cull": "back", "depth_write": True}
FOLIAGE = {"blend": False, "cull": "none", "depth_write": True}
LAYOUT = [{"binding": 0, "format": "R32G32B32_SFLOAT", "location": 0, "rate": "vertex", "stride": 12}]

FORWARD = PermutationKey("pbr", "forward", (("ALPHA_MODE", "OPAQUE"), ("NORMAL_MAP", True), ("UV_SETS", 2)))
MASKED = PermutationKey("pbr", "forward", (("ALPHA_MODE", "MASK"), ("NORMAL_MAP", False), ("UV_SETS", 0)))
DEPTH = PermutationKey("pbr", "depth", (("ALPHA_MODE", "OPAQUE"),))
SKY = PermutationKey("sky", "main", ())
COMMA = PermutationKey("tint", "main", (("MODE", "a,b"),))       # its text does not split back
EQUALS = PermutationKey("tint", "main", (("MODE", "x=y"), ("Z", 1)))


def h(blob: bytes) -> str:
    return bytes_hash(blob)


def entry(key: PermutationKey, stages: dict, draws=1, states=(OPAQUE,), spec=None, targets=None) -> ManifestEntry:
    return ManifestEntry(key=key.text, hash=key.hash, shader=key.shader, pass_name=key.pass_name,
                         features=dict(key.features), stages=stages, draws=draws, render_states=tuple(states),
                         specialization=spec or {}, targets=targets)


def hand_made(chunk: str = "forest/c00") -> mf.ChunkManifest:
    """Several keys (one compiled for two targets, two whose text does not or barely splits), draws with
    several passes, pipeline states, fallbacks and errors."""
    forward_stages = {"vertex": h(SPIRV["vertex"]), "fragment": h(SPIRV["fragment"])}
    spec = {"DOUBLE_SIDED": SpecConstant(0, (False, True))}
    keys = [
        entry(FORWARD, forward_stages, 3, (OPAQUE, FOLIAGE), spec),
        entry(MASKED, forward_stages, 0, (FOLIAGE,), {"DOUBLE_SIDED": SpecConstant(0, (True,))}),
        entry(DEPTH, {"vertex": h(SPIRV["depth-vertex"])}, 2,
              targets={"gles300": {"vertex": h(TEXT["vertex"]), "fragment": h(TEXT["fragment"])},
                       "vulkan1.2": {"vertex": h(SPIRV["depth-vertex"])}}),
        entry(SKY, {"vertex": h(SPIRV["sky"])}, 1, ()),
        entry(COMMA, {"fragment": h(SPIRV["fragment"])}, 1),
        entry(EQUALS, {"fragment": h(SPIRV["fragment"])}, 1),
    ]
    states = {}
    for key, state, values in [(FORWARD, OPAQUE, {"DOUBLE_SIDED": (0, False)}),
                               (FORWARD, FOLIAGE, {"DOUBLE_SIDED": (0, True)}),
                               (MASKED, FOLIAGE, {"DOUBLE_SIDED": (0, True)}),
                               (DEPTH, OPAQUE, {}), (SKY, OPAQUE, {})]:
        pid, doc = pipeline_state(key.text, LAYOUT if key is not SKY else [], state, values)
        states[(key, state["cull"])] = pid
        states[pid] = doc
    fallback = states[(MASKED, "none")]
    draws = [
        {"file": f"{chunk}/a.gltf", "node": 0, "mesh": 0, "primitive": 0, "material": 0, "variant": None,
         "passes": {"pbr/forward": {"key": FORWARD.text, "pipeline": states[(FORWARD, "back")], "fallback": fallback},
                    "pbr/depth": {"key": DEPTH.text, "pipeline": states[(DEPTH, "back")]}}},
        {"file": f"{chunk}/a.gltf", "node": 1, "mesh": 0, "primitive": 1, "material": 2, "variant": "winter",
         "passes": {"pbr/forward": {"key": FORWARD.text, "pipeline": states[(FORWARD, "none")], "fallback": fallback}}},
        {"file": f"{chunk}/b.gltf", "node": 0, "mesh": 3, "primitive": 0, "material": None, "variant": None,
         "passes": {"sky/main": {"key": SKY.text, "pipeline": states[(SKY, "back")]},
                    "tint/main": {"key": COMMA.text}}},  # a pass without a pipeline state
    ]
    pipelines = {pid: doc for pid, doc in states.items() if isinstance(pid, str)}
    return mf.chunk_manifest(chunk, "forest", keys, [{"file": f"{chunk}/c.gltf", "message": "boom"}],
                             draws=tuple(draws), pipelines=pipelines,
                             fallbacks={"pbr/forward": MASKED.text}, reflection={h(SPIRV["sky"]): {"stage": "vertex"}})


def write(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(mf.dump_json(doc))
    return path


def round_trip(tmp_path: Path, m: mf.ChunkManifest) -> mf.ChunkManifest:
    return mf.load_chunk_manifest(write(tmp_path / "c00.json", m.to_json()))


@pytest.fixture(scope="module")
def cooked(tmp_path_factory) -> tuple[Path, list[mf.ChunkManifest]]:
    """The sample world cooked with the real compiler, with the chunk manifests the cook built in memory."""
    tmp = tmp_path_factory.mktemp("chunk_index")
    built = []
    real = write_chunk.build_chunk
    patch = pytest.MonkeyPatch()
    patch.setattr(write_chunk, "build_chunk", lambda *a, **k: built.append(real(*a, **k)) or built[-1])
    try:
        result = api.cook(api.open_world(SAMPLE_WORLD), cache=tmp / "cache", out=tmp / "out", jobs=2)
    finally:
        patch.undo()
    assert result.ok, result.errors
    return tmp / "out", [b.manifest for b in built]


def test_a_hand_made_manifest_round_trips(tmp_path):
    m = hand_made()
    back = round_trip(tmp_path, m)
    assert back == replace(m, reflection={})
    assert back.keys[DEPTH.text].targets == m.keys[DEPTH.text].targets
    assert back.draws[2]["passes"]["tint/main"] == {"key": COMMA.text}


def test_decode_of_encode_gives_the_manifest_back(tmp_path):
    m = hand_made()
    doc = chunk_index.encode(m, m.library)
    fields = chunk_index.decode(doc, mf._Where("c00.json"), mf._index_entry)
    assert replace(m, reflection={}) == mf.ChunkManifest(m.chunk, m.level, **fields)


def test_every_cooked_chunk_round_trips(cooked, tmp_path):
    out, built = cooked
    assert len(built) == 8
    for m in built:
        on_disk = mf.load_chunk_manifest(mf.chunk_manifest_path(out, m.chunk))
        assert on_disk == replace(m, reflection={}, draws=tuple(m.draws))
        assert mf.dump_json(on_disk.to_json()) == mf.chunk_manifest_path(out, m.chunk).read_bytes()
        assert round_trip(tmp_path, on_disk) == on_disk


def test_re_encoding_is_byte_identical(tmp_path):
    m = hand_made()
    data = mf.dump_json(m.to_json())
    back = round_trip(tmp_path, m)
    assert mf.dump_json(back.to_json()) == data
    assert mf.dump_json(round_trip(tmp_path / "again", back).to_json()) == data
    shuffled = replace(m, keys=dict(reversed(list(m.keys.items()))), pipelines=dict(reversed(list(m.pipelines.items()))))
    assert mf.dump_json(shuffled.to_json()) == data


def test_the_reflection_is_not_in_the_index(tmp_path):
    m = hand_made()
    assert m.reflection and mf.dump_json(m.to_json()) == mf.dump_json(replace(m, reflection={}).to_json())
    assert round_trip(tmp_path, m).reflection == {}


@pytest.mark.parametrize("key", [COMMA, EQUALS], ids=["comma", "equals"])
def test_a_key_whose_text_does_not_split_back_round_trips(tmp_path, key):
    m = mf.chunk_manifest("c00", "c00", [entry(key, {"fragment": h(SPIRV["fragment"])})])
    [row] = m.to_json()["keys"]
    if key is COMMA:  # "MODE=a,b" reads back as two features: kept as text and {name: value}
        assert row[:2] == [key.text, {"MODE": "a,b"}]
    else:             # "MODE=x=y" splits at its first "=": written by position like any other
        assert row[:2] == [0, ["x=y", 1]]
    back = round_trip(tmp_path, m)
    assert back == m and back.keys[key.text].hash == key.hash
    assert dict(back.keys[key.text].features) == dict(key.features)


def test_no_key_text_or_pipeline_id_is_stored():
    m = hand_made()
    data = mf.dump_json(m.to_json()).decode()
    assert FORWARD.text not in data and SKY.text not in data and COMMA.text in data
    assert not any(pid in data for pid in m.pipelines)
    assert b"\n" not in mf.dump_json(m.to_json())[:-1]


def test_key_hashes_equal_the_entries_hashes(cooked):
    m = hand_made()
    assert chunk_index.key_hashes(m.to_json()) == {text: e.hash for text, e in m.keys.items()}
    out, built = cooked
    for b in built:
        doc = orjson.loads(mf.chunk_manifest_path(out, b.chunk).read_bytes())
        assert chunk_index.key_hashes(doc) == {text: e.hash for text, e in b.keys.items()}
    assert chunk_index.key_hashes({"format": 4}) is None
    broken = m.to_json()
    broken["keys"][0][2] = {"vertex": 99}
    assert chunk_index.key_hashes(broken) is None


def test_pipeline_ids_recomputed_on_read_are_the_contracts(cooked, tmp_path):
    out, built = cooked
    assert any(b.pipelines for b in built)
    for b in built:
        on_disk = mf.load_chunk_manifest(mf.chunk_manifest_path(out, b.chunk))
        assert on_disk.pipelines == b.pipelines
        for pid, state in on_disk.pipelines.items():
            values = {n: (s["constant_id"], s["value"]) for n, s in state["specialization"].items()}
            assert pid == pipeline_state(state["key"], state["vertex_layout"], state["render_state"], values)[0]
    m = hand_made()
    assert set(round_trip(tmp_path, m).pipelines) == set(m.pipelines)


def test_stage_hashes_cover_every_target():
    m = hand_made()
    assert chunk_index.stage_hashes(m) == {h(b) for b in [*SPIRV.values(), *TEXT.values()]}
    assert m.to_json()["blobs"] == sorted(chunk_index.stage_hashes(m))


def test_expanded_names_every_reference():
    m = hand_made()
    doc = expanded(m)
    assert doc["keys"][FORWARD.text]["stages"] == m.keys[FORWARD.text].stages
    assert doc["pipelines"] == m.pipelines and doc["draws"] == list(m.draws) and doc["library"] == "../shaders.pak"


# ------------------------------------------------------------------ located errors
def rows() -> dict[str, int]:
    return {text: i for i, text in enumerate(sorted(hand_made().keys))}


def _set(path: tuple, value) -> callable:
    def damage(doc: dict) -> None:
        node = doc
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    return damage


F, D, C = (rows()[k.text] for k in (FORWARD, DEPTH, COMMA))
BAD = [
    (_set(("keys", F), [0, 1]), f"/keys/{F}"),
    (_set(("keys", F), "row"), f"/keys/{F}"),
    (_set(("keys", F, 3), "3"), f"/keys/{F}"),
    (_set(("keys", F, 0), 99), f"/keys/{F}/0"),
    (_set(("keys", F, 0), -1), f"/keys/{F}/0"),
    (_set(("keys", F, 0), True), f"/keys/{F}/0"),
    (_set(("keys", F, 1), []), f"/keys/{F}/1"),
    (_set(("keys", F, 2, "vertex"), 99), f"/keys/{F}/2/vertex"),
    (_set(("keys", F, 2, "vertex"), "0"), f"/keys/{F}/2/vertex"),
    (_set(("keys", F, 4), [99]), f"/keys/{F}/4"),
    (_set(("keys", F, 5), 99), f"/keys/{F}/5"),
    (_set(("keys", D, 6), []), f"/keys/{D}/6"),
    (_set(("keys", D, 6), {"gles300": 1}), f"/keys/{D}/6"),
    (_set(("keys", D, 6, "gles300", "vertex"), 99), f"/keys/{D}/6/gles300/vertex"),
    (_set(("keys", C, 0), "not a key"), f"/keys/{C}/0"),
    (_set(("key_passes", 0), "pbr/forward"), None),  # named by the first key row using it
    (_set(("key_passes", 0), ["pbr/forward", [1]]), None),
    (_set(("pipelines", 0), [0, 0, 0]), "/pipelines/0"),
    (_set(("pipelines", 0, 0), 99), "/pipelines/0/0"),
    (_set(("pipelines", 0, 1), 99), "/pipelines/0/1"),
    (_set(("pipelines", 0, 2), 99), "/pipelines/0/2"),
    (_set(("pipelines", 0, 3), 99), "/pipelines/0/3"),
    (_set(("uses", 0), "use"), "/uses/0"),
    (_set(("uses", 0), [[0, 0]]), "/uses/0"),
    (_set(("uses", 0), [[99, 0, None]]), "/uses/0"),
    (_set(("uses", 0), [[0, 99, None]]), "/uses/0"),
    (_set(("uses", 0), [[0, 0, 99]]), "/uses/0"),
    (_set(("uses", 0), [[0, 0, 0, 99]]), "/uses/0"),
    (_set(("draws", 0), [0, 0]), "/draws/0"),
    (_set(("draws", 0, 0), 99), "/draws/0/0"),
    (_set(("draws", 0, 6), 99), "/draws/0/6"),
    (_set(("fallbacks", "pbr/forward"), 99), "/fallbacks/pbr~1forward"),
    (_set(("fallbacks",), []), "/fallbacks"),
    (_set(("errors",), {}), "/errors"),
    (_set(("blobs",), None), "/blobs"),
    *((_set((table,), {}), f"/{table}") for table in chunk_index.TABLES),
    (_set(("keys",), {}), "/keys"),
    (_set(("chunk",), 1), "/chunk"),
]


@pytest.mark.parametrize("damage, pointer", BAD, ids=[f"{i}:{p}" for i, (_, p) in enumerate(BAD)])
def test_a_malformed_index_is_a_manifest_error_with_a_json_pointer(tmp_path, damage, pointer):
    doc = hand_made().to_json()
    damage(doc)
    path = write(tmp_path / "c00.json", doc)
    with pytest.raises(mf.ManifestError) as info:
        mf.load_chunk_manifest(path)
    location = info.value.diagnostics[0].location
    assert location.file == str(path)
    if pointer is None:  # a bad key_passes entry: the first key row naming it
        users = [i for i, row in enumerate(hand_made().to_json()["keys"]) if row[0] == 0]
        pointer = f"/keys/{users[0]}/0"
    assert location.pointer == pointer
    assert str(info.value).startswith(f"{path}:")


def test_a_malformed_key_specialization_is_located_in_the_index(tmp_path):
    doc = hand_made().to_json()
    doc["key_specializations"][0] = {"DOUBLE_SIDED": [0]}
    path = write(tmp_path / "c00.json", doc)
    with pytest.raises(mf.ManifestError) as info:
        mf.load_chunk_manifest(path)
    location = info.value.diagnostics[0].location
    assert location.file == str(path) and location.pointer is not None



@pytest.mark.parametrize("entry", [[], {}], ids=["list", "object"])
def test_a_passes_entry_that_is_not_a_string_is_a_located_error(tmp_path, entry):
    doc = hand_made().to_json()
    doc["passes"][0] = entry
    path = write(tmp_path / "c00.json", doc)
    with pytest.raises(mf.ManifestError) as info:
        mf.load_chunk_manifest(path)
    assert info.value.diagnostics[0].location.file == str(path)
    assert info.value.diagnostics[0].location.pointer


def test_key_hashes_of_an_index_with_a_non_string_pass_is_none():
    doc = hand_made().to_json()
    doc["passes"][0] = []
    assert chunk_index.key_hashes(doc) is None


def test_keys_of_one_text_with_a_bool_or_an_int_value_keep_their_own_hash(tmp_path):
    """Key texts and hashes made once per process are told apart by the values' types (True and 1 print alike)."""
    found = {}
    for value in (True, 1, True):
        key = PermutationKey("pbr", "forward", (("A", value),))
        entry = ManifestEntry(key=key.text, hash=key.hash, shader="pbr", pass_name="forward",
                              features={"A": value}, stages={"vertex": "1" * 64}, draws=1)
        path = write(tmp_path / f"{type(value).__name__}.json", mf.chunk_manifest("c", "c", [entry]).to_json())
        read = mf.load_chunk_manifest(path).keys[key.text]
        assert (read.hash, read.features) == (key.hash, {"A": value})
        found.setdefault(type(value), set()).add(read.hash)
    assert found[bool] != found[int] and len(found[bool]) == 1


def test_an_index_written_here_is_read_back_without_hashing_its_keys(monkeypatch):
    """The key rows encode writes are remembered with their entries' hashes: the index it replaces and the
    level holding the same keys decode them without hashing; keys never written here are hashed."""
    m = hand_made()
    hashed = []
    real = chunk_index.stable_hash
    monkeypatch.setattr(chunk_index, "stable_hash", lambda value: hashed.append(value) or real(value))
    doc = orjson.loads(mf.dump_json(m.to_json()))
    unsplit = sum(isinstance(row[0], str) for row in doc["keys"])  # a text that does not split back
    assert unsplit < len(m.keys)

    def key_hashes_made() -> int:
        return len([v for v in hashed if isinstance(v, dict) and "features" in v])

    monkeypatch.setattr(chunk_index, "_KEYS", {})  # as another process reads it
    hashed.clear()
    assert chunk_index.key_hashes(doc) == {text: e.hash for text, e in m.keys.items()}
    assert key_hashes_made() == len(m.keys)
    monkeypatch.setattr(chunk_index, "_KEYS", {})
    chunk_index.encode(m, m.library)  # what a cook writes, then reads back
    hashed.clear()
    assert chunk_index.key_hashes(doc) == {text: e.hash for text, e in m.keys.items()}
    assert key_hashes_made() == unsplit
