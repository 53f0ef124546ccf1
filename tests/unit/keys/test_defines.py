"""SourceTree (includes, closures, tested macros) and stage projection: no compiler needed."""

from __future__ import annotations

import hashlib
import shutil

import pytest

from pipeline.compilers import SourceTree
from pipeline.errors import CompileError
from pipeline.keys.defines import project_defines
from paths import TESTS

GLSL = TESTS / "data" / "glsl"


@pytest.fixture()
def tree() -> SourceTree:
    return SourceTree(GLSL)


def test_closure_follows_includes_transitively(tree):
    files = [path for path, _ in tree.closure("mesh/mesh.frag")]
    assert files == ["common/frame.glsl", "common/math.glsl", "mesh/brdf.glsl", "mesh/interface.glsl",
                     "mesh/mesh.frag"]


def test_closure_hashes_are_content_hashes(tree):
    closure = dict(tree.closure("mesh/mesh.vert"))
    assert closure["common/frame.glsl"] == hashlib.sha256((GLSL / "common/frame.glsl").read_bytes()).hexdigest()


def test_tested_macros_through_includes(tree):
    fragment = tree.tested_macros("mesh/mesh.frag")
    assert {"CLEARCOAT", "NORMAL_MAP", "ALPHA_MODE", "ALPHA_MODE_MASK", "UV_SETS"} <= fragment
    vertex = tree.tested_macros("mesh/mesh.vert")
    assert "SKINNING" in vertex and "CLEARCOAT" not in vertex and "NORMAL_MAP" not in vertex


def test_tested_macros_close_over_macro_bodies(tree):
    # interface.glsl: "#define HAS_UV (UV_SETS > 0)" and "#if HAS_UV"; UV_SETS is never in a condition itself
    assert "UV_SETS" in tree.tested_macros("mesh/mesh.vert")


def test_comments_do_not_count(tmp_path):
    (tmp_path / "a.frag").write_text("#version 450\n// #if COMMENTED\n/* #ifdef ALSO\n */\n#ifdef REAL\n#endif\n")
    assert SourceTree(tmp_path).tested_macros("a.frag") == frozenset({"REAL"})


def test_defined_and_elif_forms(tmp_path):
    (tmp_path / "a.frag").write_text("#if defined(A) && !defined B\n#elif C == 2 \\\n  || D\n#endif\n")
    assert SourceTree(tmp_path).tested_macros("a.frag") == frozenset({"A", "B", "C", "D"})


def test_missing_include_is_located_and_part_of_the_closure(tree):
    (diagnostic,) = tree.include_errors("broken/missing.frag")
    assert str(diagnostic) == (f"{tree.root.as_posix()}/broken/missing.frag:3: error: "
                               "cannot find include file 'does_not_exist.glsl'")  # named by its absolute path
    closure = dict(tree.closure("broken/missing.frag"))  # planning never raises: the job fails instead
    assert closure["broken/missing.frag:3: #include does_not_exist.glsl"] == "missing"
    with pytest.raises(CompileError):
        missing = next(i for i in tree.parsed("broken/missing.frag").includes if i.name == "does_not_exist.glsl")
        tree.resolve_include(missing, "broken/missing.frag")


def test_include_resolution_prefers_includer_folder(tree):
    assert tree.resolve("interface.glsl", "mesh/mesh.frag") == "mesh/interface.glsl"
    assert tree.resolve("common/math.glsl", "mesh/mesh.frag") == "common/math.glsl"  # falls back to the root
    assert tree.resolve("../../etc/passwd", "mesh/mesh.frag") is None                # never leaves the root


def test_changed_file_is_reparsed(tmp_path):
    shutil.copytree(GLSL, tmp_path / "m")
    tree = SourceTree(tmp_path / "m")
    before = dict(tree.closure("mesh/mesh.frag"))
    (tmp_path / "m/mesh/brdf.glsl").write_text("#ifdef SHEEN\n#endif\n")
    after = dict(tree.closure("mesh/mesh.frag"))
    assert before["mesh/brdf.glsl"] != after["mesh/brdf.glsl"]
    assert "common/math.glsl" not in after  # brdf.glsl no longer includes it
    assert "SHEEN" in tree.tested_macros("mesh/mesh.frag")


def test_projection_keeps_only_tested_defines(tree):
    defines = (("ALPHA_MODE", "1"), ("CLEARCOAT", "1"), ("SKINNING", "4"), ("UV_SETS", "2"))
    assert project_defines(defines, tree.tested_macros("mesh/mesh.vert")) == (("SKINNING", "4"), ("UV_SETS", "2"))
    assert project_defines(defines, tree.tested_macros("mesh/mesh.frag")) == (
        ("ALPHA_MODE", "1"), ("CLEARCOAT", "1"), ("UV_SETS", "2"))


def test_projection_lets_keys_share_a_vertex_job(tree):
    tested = tree.tested_macros("mesh/mesh.vert")
    keys = [(("CLEARCOAT", c), ("NORMAL_MAP", n), ("UV_SETS", "1")) for c in "01" for n in "01"]
    assert len({project_defines(k, tested) for k in keys}) == 1
