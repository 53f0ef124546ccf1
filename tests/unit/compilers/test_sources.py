"""The shader library as the compiler sees it (compilers/sources.py): how its files are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers import SourceTree
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
