"""A compile backend plug-in on one job: its answer taken, checked, or turned into one located error."""

from __future__ import annotations

import json

import pytest

from pipeline.compilers import CompileRequest, SourceTree, compile_one, get_backend
from pipeline.compilers.plugin_backend import compile_with_plugin
from paths import DATA

BACKENDS = '''
from pipeline.compilers.plugins import BackendResult
from pipeline.errors import Diagnostic, Location

class Echo:
    version = "1"
    def compile(self, job):
        return BackendResult(repr((job.text, job.stage, job.target, job.defines, sorted(job.includes))).encode())

class Raises:
    version = "1"
    def compile(self, job):
        raise OSError("no dxc here")

class Garbage:
    version = "1"
    def compile(self, job):
        return b"not a result"

class Fails:
    version = "1"
    def compile(self, job):
        return BackendResult(None, (Diagnostic(Location(job.source, 2, 3), "bad token"),))

class Silent:
    version = "1"
    def compile(self, job):
        return BackendResult(None)
'''


@pytest.fixture
def library(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.frag").write_text('#include "b.glsl"\nvoid main() {}\n')
    (tmp_path / "lib" / "b.glsl").write_text("// b\n")
    (tmp_path / "backends.py").write_text(BACKENDS)
    return tmp_path


def request(root, attribute: str, **fields) -> CompileRequest:
    return CompileRequest("a.frag", "fragment", target="d3d12", backend=f"{root / 'backends.py'}:{attribute}",
                          defines=(("N", "2"),), plugins=(("dxc", "1", "c" * 64),), **fields)


def test_the_backend_gets_the_text_defines_and_closure(library) -> None:
    tree = SourceTree(library / "lib")
    out = compile_with_plugin(request(library, "Echo", text="transformed\n"), tree)
    assert out.ok and out.diagnostics == ()
    assert out.spirv == repr(("transformed\n", "fragment", "d3d12", (("N", "2"),), ["a.frag", "b.glsl"])).encode()
    from_file = compile_one(request(library, "Echo"), tree, get_backend("capi"))
    assert from_file.spirv.startswith(repr(('#include "b.glsl"\nvoid main() {}\n',)).encode()[:-2])


@pytest.mark.parametrize("attribute, where, message", [
    ("Raises", 'raise OSError("no dxc here")', "compile backend 'dxc' raised OSError: no dxc here"),
    ("Garbage", "def compile(self, job):", "compile backend 'dxc' returned bytes, not BackendResult"),
])
def test_a_raising_or_garbage_backend_is_one_error_at_its_line(library, attribute, where, message) -> None:
    out = compile_with_plugin(request(library, attribute), SourceTree(library / "lib"))
    (diagnostic,) = out.diagnostics
    assert not out.ok and diagnostic.message == message
    lines = BACKENDS.splitlines()
    assert diagnostic.location.file == str(library / "backends.py")
    assert lines[diagnostic.location.line - 1].strip() == where
    assert lines[diagnostic.location.line - 3 - (where.startswith("raise"))].strip() == f"class {attribute}:"


def test_a_failure_keeps_the_backend_s_located_diagnostics(library) -> None:
    tree = SourceTree(library / "lib")
    (found,) = compile_with_plugin(request(library, "Fails"), tree).diagnostics
    assert (found.location.line, found.location.col, found.message) == (2, 3, "bad token")
    (silent,) = compile_with_plugin(request(library, "Silent"), tree).diagnostics
    assert silent.message == "compile backend 'dxc' failed without a message"
    assert silent.location.file == tree.name("a.frag")


def test_the_dxc_example_records_its_command_line(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_DXC_LOG", str(tmp_path / "log"))
    (tmp_path / "a.frag").write_text("void main() {}\n#error unsupported\n")
    spec = f"{DATA / 'plugins' / 'dxc_backend.py'}:Dxc"
    failed = compile_with_plugin(CompileRequest("a.frag", "fragment", target="d3d12", backend=spec,
                                                defines=(("N", "1"),)), SourceTree(tmp_path))
    (error,) = failed.diagnostics
    assert (error.location.line, error.location.col, error.message) == (2, 1, "unsupported")
    assert json.loads((tmp_path / "log").read_text())[:6] == ["-T", "ps_6_0", "-E", "main", "-D", "N=1"]
