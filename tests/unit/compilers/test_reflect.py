"""What SPIRV-Cross says of a blob (compilers/reflect.py), on blobs glslang compiles here (``blobs``, tests/conftest.py)."""

from __future__ import annotations

import shutil

import orjson
import pytest

from pipeline.compilers import reflect as tool_module
from pipeline.compilers import spirv_cross_capi
from pipeline.compilers.reflect import ReflectionError, dump, normalize, reflect
from reflect_helpers import NEEDS_SPIRV_CROSS

pytestmark = NEEDS_SPIRV_CROSS


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


def test_without_the_library_the_command_reflects_the_same_document(blobs, monkeypatch) -> None:
    in_process = {name: reflect(blob) for name, blob in blobs.items()}
    monkeypatch.setattr(spirv_cross_capi, "load", lambda: None)
    assert {name: reflect(blob) for name, blob in blobs.items()} == in_process
    with pytest.raises(ReflectionError, match="^spirv-cross: error: cannot reflect a blob: "):
        reflect(b"not a SPIR-V module at all")


def test_without_library_and_command_the_error_names_both_packages_to_install(monkeypatch) -> None:
    monkeypatch.setattr(spirv_cross_capi, "load", lambda: None)
    monkeypatch.setattr(tool_module.shutil, "which", lambda name: None)
    tool_module.tool.cache_clear()
    try:
        with pytest.raises(ReflectionError) as info:
            reflect(b"\x03\x02\x23\x07")
    finally:
        monkeypatch.undo()
        tool_module.tool.cache_clear()
    assert "Debian package 'libspirv-cross-c-shared0'" in str(info.value)
    assert "Debian package 'spirv-cross'" in str(info.value)
    assert tool_module.tool() == shutil.which("spirv-cross")


def test_normalize_of_an_empty_document_has_every_field() -> None:
    doc = normalize({})
    assert doc == {"entry": "main", "stage": None, "inputs": [], "outputs": [], "descriptors": [],
                   "push_constants": [], "specialization_constants": []}
