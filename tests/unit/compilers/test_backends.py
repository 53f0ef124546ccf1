"""Compiling a batch (compilers/backends.py): what a pool worker returns does not depend on the folder it
runs in; diagnostics name the library's files by their absolute paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers import CompileRequest, compile_batch

GOOD = "#version 450\nlayout(location = 0) out vec4 colour;\nvoid main() { colour = vec4(1.0); }\n"
BAD = '#version 450\n#include "inc/bad.glsl"\nlayout(location = 0) out vec4 colour;\nvoid main() { colour = f(); }\n'
REQUESTS = [CompileRequest("good.frag", "fragment"), CompileRequest("bad.frag", "fragment"),
            CompileRequest("lost.frag", "fragment")]


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    (tmp_path / "lib" / "inc").mkdir(parents=True)
    (tmp_path / "lib" / "good.frag").write_text(GOOD)
    (tmp_path / "lib" / "bad.frag").write_text(BAD)
    (tmp_path / "lib" / "inc" / "bad.glsl").write_text("vec4 f() { return undefined_thing; }\n")
    (tmp_path / "lib" / "lost.frag").write_text('#version 450\n#include "nowhere.glsl"\nvoid main() {}\n')
    return tmp_path / "lib"


@pytest.mark.parametrize("backend", ["capi", "cli"])
def test_a_batch_gives_the_same_outputs_from_any_working_folder(lib: Path, monkeypatch, backend: str) -> None:
    monkeypatch.chdir(lib.parent)
    beside = compile_batch(REQUESTS, Path("lib"), backend)
    monkeypatch.chdir(lib / "inc")
    inside = compile_batch(REQUESTS, Path(".."), backend)
    assert [(o.spirv, o.diagnostics) for o in beside] == [(o.spirv, o.diagnostics) for o in inside]
    good, bad, lost = beside
    assert good.ok and not bad.ok and not lost.ok
    at = f"{lib.resolve()}/"
    assert (bad.errors[0].file, bad.errors[0].line) == (at + "inc/bad.glsl", 1)
    assert "undefined_thing" in bad.errors[0].message
    assert [str(d) for d in lost.errors] == [f"{at}lost.frag:2: error: cannot find include file 'nowhere.glsl'"]
