"""The GLSL ES client (runtime/gl_client.py): Mesa's GL driver through EGL compiles and links a pair of
GLSL ES 3.00 texts as one program, and names what it refuses by stage with its own log."""

from __future__ import annotations

import pytest
from runtime_helpers import needs_egl

from pipeline.runtime.gl_client import GlClient, LinkFailure, parse_error

VERTEX = ("#version 300 es\nprecision highp float;\nin vec3 a_position;\nout vec3 v_shade;\n"
          "void main() { v_shade = a_position; gl_Position = vec4(a_position, 1.0); }\n")
FRAGMENT = ("#version 300 es\nprecision highp float;\nin {type} v_shade;\nout vec4 o_color;\n"
            "void main() {{ o_color = vec4(v_shade.xyz, 1.0){extra}; }}\n")


def test_moderngl_s_errors_become_the_stage_and_the_driver_s_log() -> None:
    link = "GLSL Linker failed\n\nProgram\n=======\nerror: vertex shader output `v' declared as type `vec3'\n\n"
    assert parse_error(link) == LinkFailure("program", "error: vertex shader output `v' declared as type `vec3'")
    compiled = "GLSL Compiler failed\n\nfragment_shader\n===============\n0:5(32): error: `y' undeclared\n0:5: x\n"
    assert parse_error(compiled) == LinkFailure("fragment", "0:5(32): error: `y' undeclared; 0:5: x")


@pytest.fixture(scope="module")
def client():
    with GlClient() as made:
        yield made


@needs_egl
def test_a_matching_pair_links(client) -> None:
    assert "through EGL" in client.name
    assert client.link(VERTEX, FRAGMENT.format(type="vec3", extra="")) is None


@needs_egl
def test_a_varying_whose_type_differs_between_the_stages_fails_the_link(client) -> None:
    refused = client.link(VERTEX, FRAGMENT.format(type="vec4", extra=""))
    assert refused.stage == "program"
    assert "v_shade" in refused.log and "vec3" in refused.log and "vec4" in refused.log


@needs_egl
def test_a_stage_the_driver_cannot_compile_is_named(client) -> None:
    refused = client.link(VERTEX, FRAGMENT.format(type="vec3", extra=" + undeclared_thing"))
    assert refused.stage == "fragment" and "undeclared_thing" in refused.log
