"""The WebGPU client (runtime/webgpu_client.py): a key's webgpu blobs (WGSL) made shader modules and one render
pipeline through wgpu on lavapipe, its vertex buffers and color targets read from the WGSL entry points;
stages that do not agree are refused at the pipeline."""

from __future__ import annotations

import pytest
from runtime_helpers import needs_naga, needs_wgpu
from target_helpers import GL_ERA, MATERIALS, compile_pair

from pipeline.compilers.backends import compile_one, get_backend
from pipeline.compilers.request import CompileRequest
from pipeline.compilers.sources import SourceTree
from pipeline.runtime.webgpu_client import WebGpuClient, color_targets, interface, vertex_buffers, wgsl_type

VERTEX = """struct VertexOutput {
    @location(0) member: vec4<f32>,
    @builtin(position) gl_Position: vec4<f32>,
    @location(1) @interpolate(flat) member_1: vec2<i32>,
}

struct Extra {
    @location(3) weights: vec4f,
}

@vertex \nfn VSMain(@location(1) a_normal: vec3<f32>, @builtin(vertex_index) i: u32, extra: Extra,
    @location(0) a_position: vec3<f32>) -> VertexOutput {
    return VertexOutput();
}
"""


def test_vertex_buffers_and_color_targets_follow_the_reflection() -> None:
    inputs = {"inputs": [{"location": 0, "type": "vec3"}, {"location": 2, "type": "vec2"}]}
    assert vertex_buffers(inputs) == [
        {"array_stride": 12, "step_mode": "vertex", "attributes": [{"format": "float32x3", "offset": 0,
                                                                     "shader_location": 0}]},
        {"array_stride": 8, "step_mode": "vertex", "attributes": [{"format": "float32x2", "offset": 0,
                                                                    "shader_location": 2}]}]
    assert color_targets({"outputs": [{"location": 1, "type": "vec4"}]}) == [None, {"format": "rgba8unorm"}]


def test_the_interface_is_read_from_the_wgsl_entry_point() -> None:
    assert interface(VERTEX, "vertex") == {
        "entry": "VSMain", "inputs": [{"location": 0, "type": "vec3"}, {"location": 1, "type": "vec3"},
                                      {"location": 3, "type": "vec4"}],
        "outputs": [{"location": 0, "type": "vec4"}, {"location": 1, "type": "ivec2"}]}
    fragment = "@fragment \nfn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {\n    return v;\n}\n"
    assert interface(fragment, "fragment") == {"entry": "main", "inputs": [{"location": 0, "type": "vec4"}],
                                               "outputs": [{"location": 0, "type": "vec4"}]}
    assert interface(fragment, "vertex") == {"entry": "main", "inputs": [], "outputs": []}
    assert [wgsl_type(t) for t in ("f32", "u32", "vec2<u32>", "vec3i", "mat4x4<f32>")] == \
        ["float", "uint", "uvec2", "ivec3", "mat4x4<f32>"]


@pytest.fixture(scope="module")
def client():
    return WebGpuClient()


def _blobs(outputs) -> dict:
    assert all(o.ok for o in outputs.values()), outputs
    return {stage: output.spirv for stage, output in outputs.items()}


@needs_wgpu
@needs_naga
def test_a_cooked_webgpu_program_makes_a_render_pipeline(client) -> None:
    outputs = compile_pair("portable", "webgpu", (("TEXTURED", "0"), ("VERTEX_COLOR", "1")), **GL_ERA)
    assert "through wgpu" in client.name
    assert client.create(_blobs(outputs)) is None


@needs_wgpu
@needs_naga
def test_stages_that_disagree_are_refused_at_the_render_pipeline(client, tmp_path) -> None:
    (tmp_path / "a.vert").write_text("#version 450\nlayout(location = 0) in vec3 p;\nlayout(location = 0) out vec2 v;\n"
                                     "void main() { v = p.xy; gl_Position = vec4(p, 1.0); }\n")
    (tmp_path / "a.frag").write_text("#version 450\nlayout(location = 0) in vec4 v;\nlayout(location = 0) out vec4 c;\n"
                                     "void main() { c = v; }\n")
    tree = SourceTree(tmp_path)
    outputs = {stage: compile_one(CompileRequest(f"a.{ext}", stage, target="webgpu"), tree, get_backend("capi"))
               for stage, ext in (("vertex", "vert"), ("fragment", "frag"))}
    assert all(o.ok for o in outputs.values())  # naga accepts each stage alone
    stage, why = client.create(_blobs(outputs))
    assert stage == "pipeline" and why


@needs_wgpu
@needs_naga
def test_a_module_naga_refuses_is_named_by_its_stage(client) -> None:
    blobs = _blobs(compile_pair("portable", "webgpu", (("TEXTURED", "0"), ("VERTEX_COLOR", "1")), **GL_ERA))
    broken = blobs["fragment"].replace(b"return _e5;", b"return _e5 + true;")
    stage, why = client.create({**blobs, "fragment": broken})
    assert stage == "fragment" and "Operation Add can't work with" in why


@needs_wgpu
@needs_naga
def test_a_depth_only_pass_renders_into_a_depth_attachment(client, tmp_path) -> None:
    (tmp_path / "d.vert").write_text("#version 450\nlayout(location = 0) in vec3 p;\n"
                                     "void main() { gl_Position = vec4(p, 1.0); }\n")
    (tmp_path / "d.frag").write_text("#version 450\nvoid main() { }\n")  # a depth or shadow pass: no color
    tree = SourceTree(tmp_path)
    outputs = {stage: compile_one(CompileRequest(f"d.{ext}", stage, target="webgpu"), tree, get_backend("capi"))
               for stage, ext in (("vertex", "vert"), ("fragment", "frag"))}
    blobs = _blobs(outputs)
    assert interface(blobs["fragment"].decode(), "fragment")["outputs"] == []
    assert client.create(blobs) is None
