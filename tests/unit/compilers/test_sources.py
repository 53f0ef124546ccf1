"""The shader library as the compiler sees it (compilers/sources.py): file names, parses, includes, closures."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers.sources import Include, SourceTree, parse_source
from pipeline.digest import bytes_hash
from pipeline.errors import CompileError


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    (tmp_path / "lib" / "inc").mkdir(parents=True)
    (tmp_path / "lib" / "inc" / "common.glsl").write_text("float f() { return 1.0; }\n")
    (tmp_path / "lib" / "a.frag").write_text('#version 450\n#include "inc/common.glsl"\n#include "gone.glsl"\n')
    return tmp_path / "lib"


def test_files_are_named_by_their_absolute_path_from_any_working_folder(lib: Path, monkeypatch) -> None:
    monkeypatch.chdir(lib.parent)
    beside = SourceTree(Path("lib"))
    monkeypatch.chdir(lib / "inc")
    inside = SourceTree(Path(".."))
    expected = f"{lib.resolve()}/inc/common.glsl"
    assert beside.name("inc/common.glsl") == inside.name("inc/common.glsl") == expected
    assert beside.named_root == inside.named_root == f"{lib.resolve()}/"
    assert [str(d) for d in beside.include_errors("a.frag")] == [str(d) for d in inside.include_errors("a.frag")] == \
        [f"{lib.resolve()}/a.frag:3: error: cannot find include file 'gone.glsl'"]


def test_a_library_reached_through_a_link_is_named_by_its_real_folder(lib: Path, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(lib)
    assert SourceTree(tmp_path / "link").name("a.frag") == f"{lib.resolve()}/a.frag"


def test_a_tree_rebuilt_elsewhere_names_files_under_the_library_it_came_from(lib: Path) -> None:
    tree = SourceTree(lib, named_root="/studio/game/materials/")  # a build-farm worker's copy
    assert tree.name("inc/common.glsl") == "/studio/game/materials/inc/common.glsl"
    with pytest.raises(CompileError) as caught:
        tree.parsed("missing.glsl")
    assert str(caught.value).startswith("/studio/game/materials/missing.glsl: error: cannot read shader source")


def test_a_parse_finds_includes_at_their_lines_but_not_in_comments() -> None:
    text = ('#version 450\n/* #include "old.glsl"\n   still a comment */\n  #  include <sys/a.glsl>\n'
            '// #include "commented.glsl"\n#include "local.glsl" // trailing\n')
    parsed = parse_source(text)
    assert parsed.includes == (Include("sys/a.glsl", 4, True), Include("local.glsl", 6, False))
    assert parsed.text == text and parsed.sha256 == bytes_hash(text.encode("utf-8"))


def test_a_parse_collects_tested_names_macro_bodies_and_identifiers_outside_comments() -> None:
    text = ("#if defined(A) && B > \\\n    C\n#elif D // E\n#endif\n#ifndef F\n#define G(x) (x + H)\n#endif\n"
            "/* uniform float COMMENTED; */\nuniform float K[N + 1];\n")
    parsed = parse_source(text)
    assert parsed.tested == frozenset({"A", "B", "C", "D", "F"})  # continuation joined; "defined" and E are not
    assert parsed.macro_refs == (("G", frozenset({"x", "H"})),)
    assert {"K", "N", "uniform", "float"} <= parsed.identifiers and "COMMENTED" not in parsed.identifiers


def test_quoted_includes_look_beside_the_includer_first_and_angle_brackets_at_the_root_only(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    for name in ("a/x.glsl", "x.glsl", "a/only_here.glsl"):
        (tmp_path / name).write_text("\n")
    tree = SourceTree(tmp_path)
    assert tree.resolve("x.glsl", "a/m.frag") == "a/x.glsl"
    assert tree.resolve("x.glsl", "a/m.frag", system=True) == "x.glsl"
    assert tree.resolve("only_here.glsl", "a/m.frag", system=True) is None
    assert tree.resolve("..\\x.glsl", "a/m.frag") == "x.glsl"  # a backslash is a separator
    assert tree.resolve("a", "m.frag") is None  # a folder is not a file


def test_files_are_the_sorted_closure_through_nested_relative_includes(lib: Path) -> None:
    (lib / "inc" / "common.glsl").write_text('#include "../deep/d.glsl"\nfloat f() { return 1.0; }\n')
    (lib / "deep").mkdir()
    (lib / "deep" / "d.glsl").write_text('#include "a.frag"\n')  # not beside d.glsl: the root's a.frag, a cycle
    tree = SourceTree(lib)
    assert tree.files("a.frag") == ("a.frag", "deep/d.glsl", "inc/common.glsl")
    assert tree.used_identifiers("deep/d.glsl") >= {"f", "float", "return"}


def test_an_unchanged_file_is_parsed_once_and_a_too_big_one_is_refused(lib: Path, monkeypatch) -> None:
    tree = SourceTree(lib)
    assert tree.parsed("a.frag") is tree.parsed("a.frag")
    monkeypatch.setattr("pipeline.compilers.sources.MAX_SOURCE_BYTES", 8)
    text = "float x = 1.0;\n"
    (lib / "big.glsl").write_text(text)
    with pytest.raises(CompileError) as caught:
        tree.parsed("big.glsl")
    assert str(caught.value) == f"{lib.resolve()}/big.glsl: error: file is {len(text)} bytes, over the limit of 8"
