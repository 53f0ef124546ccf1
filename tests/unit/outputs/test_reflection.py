"""Reflection of SPIR-V blobs by the SPIRV-Cross tool (outputs/reflection.py), on blobs glslang compiles here.

Needs the spirv-cross tool (Debian package, installed by .ci/run).
"""

from __future__ import annotations

import shutil

import orjson
import pytest

from pipeline.cache.store import Store
from pipeline.compilers import CompileRequest, compile_batch
from pipeline.digest import bytes_hash
from pipeline.outputs import reflection
from pipeline.outputs.reflection import ReflectionError, dump, prefetch, reflect, reflect_cached, vertex_layout
from pipeline.outputs.reflection_records import REFLECTION

pytestmark = pytest.mark.skipif(shutil.which("spirv-cross") is None,
                                reason="spirv-cross (Debian package) is not installed; it reflects the blobs")

VERTEX = """#version 450
layout(location = 4) in ivec2 inIds;
layout(location = 0) in vec3 inPosition;
layout(location = 3) in float inWeight;
layout(location = 2) in uvec4 inJoints;
layout(location = 1) in vec2 inUv;
layout(location = 0) out vec2 outUv;
layout(set = 1, binding = 0) uniform Frame { mat4 viewProj; vec4 tint; } frame;
layout(push_constant) uniform Push { mat4 model; vec4 extra; } push;
void main() {
    outUv = inUv + float(inJoints.x + uint(inIds.y)) * inWeight + push.extra.xy;
    gl_Position = frame.viewProj * push.model * vec4(inPosition, 1.0);
}
"""
FRAGMENT = """#version 450
layout(constant_id = 3) const bool FLIP = true;
layout(constant_id = 1) const int COUNT = 4;
layout(set = 2, binding = 1) uniform sampler smp;
layout(set = 2, binding = 0) uniform texture2D plain;
layout(set = 0, binding = 2) uniform sampler2D maps[3];
layout(set = 0, binding = 1) buffer Lights { vec4 lights[]; };
layout(location = 0) in vec2 uv;
layout(location = 1) out vec4 second;
layout(location = 0) out vec4 colour;
void main() {
    vec4 c = texture(maps[COUNT - 2], uv) + lights[0] + texture(sampler2D(plain, smp), uv);
    colour = FLIP ? c : -c;
    second = c;
}
"""
SINGLE_PUSH = """#version 450
layout(push_constant) uniform Tint { vec4 tint; } pc;
layout(location = 0) out vec4 colour;
void main() { colour = pc.tint; }
"""


@pytest.fixture(scope="module")
def blobs(tmp_path_factory) -> dict[str, bytes]:
    lib = tmp_path_factory.mktemp("lib")
    sources = {"t.vert": VERTEX, "t.frag": FRAGMENT, "push.frag": SINGLE_PUSH}
    for name, text in sources.items():
        (lib / name).write_text(text)
    requests = [CompileRequest(name, "vertex" if name.endswith(".vert") else "fragment") for name in sources]
    outputs = compile_batch(requests, lib, "capi")
    assert all(o.ok for o in outputs), [o.diagnostics for o in outputs]
    return {name: o.spirv for name, o in zip(sources, outputs)}


def test_a_vertex_blob_lists_its_inputs_in_location_order_with_their_vulkan_formats(blobs) -> None:
    doc = reflect(blobs["t.vert"])
    assert (doc["stage"], doc["entry"]) == ("vertex", "main")
    assert [(i["location"], i["name"], i["type"], i["format"], i["size"]) for i in doc["inputs"]] == [
        (0, "inPosition", "vec3", "R32G32B32_SFLOAT", 12), (1, "inUv", "vec2", "R32G32_SFLOAT", 8),
        (2, "inJoints", "uvec4", "R32G32B32A32_UINT", 16), (3, "inWeight", "float", "R32_SFLOAT", 4),
        (4, "inIds", "ivec2", "R32G32_SINT", 8)]
    assert doc["outputs"] == [{"location": 0, "name": "outUv", "type": "vec2"}]  # no format: not a vertex input
    # mat4 (64 bytes) + vec4 (16 bytes)
    assert doc["descriptors"] == [{"set": 1, "binding": 0, "kind": "uniform_buffer", "name": "Frame", "count": 1,
                                   "block_size": 80}]
    assert doc["specialization_constants"] == []


def test_a_fragment_blob_lists_every_descriptor_kind_sorted_by_set_and_binding(blobs) -> None:
    doc = reflect(blobs["t.frag"])
    assert doc["stage"] == "fragment"
    assert [(o["location"], o["name"]) for o in doc["outputs"]] == [(0, "colour"), (1, "second")]
    assert doc["inputs"] == [{"location": 0, "name": "uv", "type": "vec2"}]
    assert doc["descriptors"] == [
        {"set": 0, "binding": 1, "kind": "storage_buffer", "name": "Lights", "count": 1, "block_size": 0},
        {"set": 0, "binding": 2, "kind": "combined_image_sampler", "name": "maps", "count": 3, "type": "sampler2D"},
        {"set": 2, "binding": 0, "kind": "sampled_image", "name": "plain", "count": 1, "type": "texture2D"},
        {"set": 2, "binding": 1, "kind": "sampler", "name": "smp", "count": 1, "type": "sampler"}]
    assert doc["specialization_constants"] == [{"id": 1, "name": "COUNT", "type": "int", "default": 4},
                                               {"id": 3, "name": "FLIP", "type": "bool", "default": True}]
    assert doc["push_constants"] == []


def test_a_push_constant_block_size_covers_its_last_member(blobs) -> None:
    vertex = reflect(blobs["t.vert"])
    [frame] = vertex["descriptors"]  # the uniform block Frame has the same members as the push block
    assert vertex["push_constants"] == [{"name": "push", "size": frame["block_size"]}]
    assert reflect(blobs["push.frag"])["push_constants"] == [{"name": "pc", "size": 16}]


def test_a_push_constant_block_ends_after_its_arrays_structs_and_matrices() -> None:
    from pipeline.outputs.reflection import normalize
    raw = {"entryPoints": [{"name": "main", "mode": "frag"}],
           "push_constants": [{"name": "pc", "type": "_16", "push_constant": True}],
           "types": {"_15": {"members": [{"name": "a", "type": "vec3", "offset": 0},
                                         {"name": "b", "type": "float", "offset": 12}]},
                     "_16": {"members": [{"name": "m", "type": "mat4", "offset": 0, "matrix_stride": 16},
                                         {"name": "v", "type": "vec4", "array": [2], "offset": 64, "array_stride": 16},
                                         {"name": "s", "type": "_15", "offset": 96}]}}}
    assert normalize(raw)["push_constants"] == [{"name": "pc", "size": 112}]  # s: 96 + 16
    raw["types"]["_16"]["members"].append({"name": "f", "type": "float", "offset": 112})
    assert normalize(raw)["push_constants"] == [{"name": "pc", "size": 116}]
    raw["types"]["_16"]["members"].append({"name": "x", "type": "sampler2D", "offset": 120})
    assert normalize(raw)["push_constants"] == [{"name": "pc", "size": None}]  # a type it cannot size


def test_the_same_blob_gives_the_same_bytes(blobs) -> None:
    first = dump(reflect(blobs["t.frag"]))
    assert dump(reflect(blobs["t.frag"])) == first
    assert orjson.loads(first) == reflect(blobs["t.frag"])
    assert list(orjson.loads(first)) == sorted(orjson.loads(first))  # keys sorted


def test_a_blob_that_is_not_spirv_is_a_located_reflection_error() -> None:
    with pytest.raises(ReflectionError) as info:
        reflect(b"not a SPIR-V module at all")
    [diagnostic] = info.value.diagnostics
    assert diagnostic.location.file == "spirv-cross" and diagnostic.message.startswith("cannot reflect a blob: ")


def test_without_the_tool_the_error_names_the_package_to_install(monkeypatch) -> None:
    monkeypatch.setattr(reflection.shutil, "which", lambda name: None)
    reflection.tool.cache_clear()
    try:
        with pytest.raises(ReflectionError) as info:
            reflect(b"\x03\x02\x23\x07")
    finally:
        monkeypatch.undo()
        reflection.tool.cache_clear()
    assert "Debian package 'spirv-cross'" in str(info.value)
    assert reflection.tool() == shutil.which("spirv-cross")


def test_vertex_layout_gives_one_binding_per_input_and_instance_rate_where_listed(blobs) -> None:
    doc = reflect(blobs["t.vert"])
    layout = vertex_layout(doc, instance_inputs=(3, 4))
    assert [(b["location"], b["binding"], b["stride"], b["rate"]) for b in layout] == [
        (0, 0, 12, "vertex"), (1, 1, 8, "vertex"), (2, 2, 16, "vertex"), (3, 3, 4, "instance"), (4, 4, 8, "instance")]
    assert [b["format"] for b in layout] == [i["format"] for i in doc["inputs"]]
    no_format = {**doc, "inputs": [{"location": 0, "name": "inModel", "type": "mat4"}]}
    with pytest.raises(ReflectionError, match="vertex input type mat4 has no vertex format") as info:
        vertex_layout(no_format)
    assert info.value.diagnostics[0].location.file == "inModel"


class Loads:
    """``load_blob`` from a dict, counting what was asked."""

    def __init__(self, blobs: dict[str, bytes | None]):
        self.blobs, self.asked = blobs, []

    def __call__(self, digest: str) -> bytes | None:
        self.asked.append(digest)
        return self.blobs.get(digest)


def test_reflect_cached_reflects_a_blob_once_and_stores_it_by_digest_and_tool_version(blobs, tmp_path) -> None:
    digest = bytes_hash(blobs["t.frag"])
    load = Loads({digest: blobs["t.frag"]})
    with Store(tmp_path / "cache") as store:
        first = reflect_cached(store, digest, load)
        assert first == reflect(blobs["t.frag"]) and load.asked == [digest]
        assert store.get(REFLECTION, f"{digest}:{reflection.tool_version()}") == first
        assert reflect_cached(store, digest, load) == first and load.asked == [digest]  # the stored document
        with pytest.raises(ReflectionError, match="blob missing from the cache") as info:
            reflect_cached(store, "f" * 64, load)
        assert info.value.diagnostics[0].location.file == "f" * 64


def test_prefetch_reflects_only_what_is_not_stored_and_skips_what_it_cannot(blobs, tmp_path, monkeypatch) -> None:
    vert, frag = bytes_hash(blobs["t.vert"]), bytes_hash(blobs["t.frag"])
    bad, lost = bytes_hash(b"garbage"), "0" * 64
    load = Loads({vert: blobs["t.vert"], frag: blobs["t.frag"], bad: b"garbage", lost: None})
    version = reflection.tool_version()
    with Store(tmp_path / "cache") as store:
        store.set(REFLECTION, f"{frag}:{version}", reflect(blobs["t.frag"]))
        assert prefetch(store, [vert, frag, bad, lost, vert], load, workers=2) == 1
        assert sorted(load.asked) == sorted([vert, bad, lost])  # the stored one is not even loaded
        assert store.get(REFLECTION, f"{vert}:{version}") == reflect(blobs["t.vert"])
        assert store.get(REFLECTION, f"{bad}:{version}") is None  # left to reflect_cached to report
        load.asked.clear()
        monkeypatch.setattr(reflection, "_SEEN", {})
        monkeypatch.setattr(store, "get", lambda *a, **k: pytest.fail("a reflection read alone"))
        assert prefetch(store, [vert, frag], load, workers=2) == 0 and load.asked == []  # both read together
        assert reflect_cached(store, frag, load) == reflect(blobs["t.frag"])  # kept: not read again


def test_the_cache_key_holds_the_tool_revision(blobs, tmp_path, monkeypatch) -> None:
    """A document stored by another revision of the tool is not used: the blob is reflected again."""
    digest = bytes_hash(blobs["t.vert"])
    with Store(tmp_path / "cache") as store:
        store.set(REFLECTION, f"{digest}:{reflection.tool_version()}", {"stage": "stale"})
        monkeypatch.setattr(reflection, "tool_version", lambda: "another revision")
        assert reflect_cached(store, digest, Loads({digest: blobs["t.vert"]}))["stage"] == "vertex"
        assert store.get(REFLECTION, f"{digest}:another revision")["stage"] == "vertex"


def test_normalize_of_an_empty_document_has_every_field() -> None:
    doc = reflection.normalize({})
    assert doc == {"entry": "main", "stage": None, "inputs": [], "outputs": [], "descriptors": [],
                   "push_constants": [], "specialization_constants": []}
