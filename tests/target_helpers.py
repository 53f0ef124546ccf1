"""Compiling the test data's stage pairs for a target (tests/data/targets/), for the target and client tests."""

from __future__ import annotations


from paths import TESTS

from pipeline.compilers.backends import compile_one, get_backend
from pipeline.compilers.request import CompileOutput, CompileRequest
from pipeline.compilers.sources import SourceTree
from pipeline.structs import replace

TARGETS_DATA = TESTS / "data" / "targets"
MATERIALS = TARGETS_DATA / "materials"
GL_ERA = {"relaxed": True, "auto_map": True, "version": "310 es"}


def pair(name: str, target: str, defines: tuple = (), **fields) -> dict[str, CompileRequest]:
    """The vertex and fragment request of ``materials/<name>/<name>.{vert,frag}``, linked as a program."""
    vertex = CompileRequest(f"{name}/{name}.vert", "vertex", defines=defines, target=target, **fields)
    fragment = CompileRequest(f"{name}/{name}.frag", "fragment", defines=defines, target=target, **fields)
    return {"vertex": replace(vertex, link=(fragment,)), "fragment": replace(fragment, link=(vertex,))}


def compile_pair(name: str, target: str, defines: tuple = (), **fields) -> dict[str, CompileOutput]:
    tree = SourceTree(MATERIALS)
    return {stage: compile_one(request, tree, get_backend("capi"))
            for stage, request in pair(name, target, defines, **fields).items()}
