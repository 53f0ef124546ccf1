"""The shared cache tier as a cook uses it (compile/shared.py): diagnostics travel relative to the shader
library and come back under the reading machine's own library folder."""

from __future__ import annotations

from pathlib import Path

from pipeline.cache.remote import RemoteCache
from pipeline.compilers import CompileOutput, CompileRequest, SourceTree, compile_one, get_backend
from pipeline.compile.shared import SharedTier
from pipeline.errors import Diagnostic, Location
from pipeline.plan.jobs import JobOptions, StageJob, job_key

SHADER = "#version 450\nlayout(location = 0) out vec4 colour;\nvoid main() { colour = vec4(1.0); }\n"


def library(folder: Path) -> SourceTree:
    folder.mkdir(parents=True)
    (folder / "ok.frag").write_text(SHADER)
    return SourceTree(folder)


def job_of(tree: SourceTree) -> StageJob:
    request = CompileRequest("ok.frag", "fragment")
    options = JobOptions(compiler=get_backend("capi").identity)
    closure = tree.closure("ok.frag")
    return StageJob(request, closure, options, job_key(request, closure, options))


def test_a_warning_written_on_one_machine_names_the_other_machine_s_file(tmp_path: Path) -> None:
    first, second = library(tmp_path / "a" / "materials"), library(tmp_path / "b" / "shaders")
    job = job_of(first)
    assert job.key == job_of(second).key  # the same content: one job wherever the library is
    built = compile_one(job.request, first, get_backend("capi"))
    warning = Diagnostic(Location(first.name("ok.frag"), 3, 1), "a warning", "warning")
    writer = SharedTier(RemoteCache(str(tmp_path / "tier")), first.named_root)
    writer.compiled(job, CompileOutput(built.spirv, (warning,)))
    writer.finish()
    assert writer.written == 1
    (record,) = writer.cache.get_records([job.key]).values()
    assert [d.file for d in record.diagnostics] == ["ok.frag"]  # relative to the library
    reader = SharedTier(RemoteCache(str(tmp_path / "tier"), mode="read"), second.named_root)
    (fetched,) = reader.fetch([job]).values()
    assert fetched.spirv == built.spirv
    assert fetched.diagnostics == (Diagnostic(Location(f"{(tmp_path / 'b' / 'shaders').resolve()}/ok.frag", 3, 1),
                                              "a warning", "warning"),)


def test_a_result_naming_a_file_outside_the_library_is_not_written_back(tmp_path: Path) -> None:
    tree = library(tmp_path / "materials")
    job = job_of(tree)
    built = compile_one(job.request, tree, get_backend("capi"))
    elsewhere = Diagnostic(Location(f"{tmp_path.resolve()}/other/x.glsl", 1), "a warning", "warning")
    tier = SharedTier(RemoteCache(str(tmp_path / "tier")), tree.named_root)
    tier.compiled(job, CompileOutput(built.spirv, (elsewhere,)))
    tier.finish()
    assert tier.written == 0 and tier.cache.get_records([job.key]) == {}
