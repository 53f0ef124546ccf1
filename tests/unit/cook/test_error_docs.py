"""How a cook's errors are written down (cook/error_docs.py): typed errors, grouped compile errors, manifest docs."""

from __future__ import annotations

from pathlib import Path

from pipeline.compile.scheduler import JobResult, RunResult
from pipeline.compilers import CompileRequest
from pipeline.cook.error_docs import (
    cancelled_doc,
    compact,
    compile_doc,
    compile_errors,
    errors_by_chunk,
    group_errors,
    grouped_error,
    job_users,
    manifest_prefix,
    scan_errors,
    world_named,
)
from pipeline.errors import CookDiagnostic, Diagnostic, Location
from pipeline.keys.incremental import CookInput
from pipeline.keys.key import PermutationKey
from pipeline.plan.jobs import JobOptions, JobPlan, StageJob

LIB = "/abs/shaders/"
SYNTAX = "'' :  syntax error, unexpected RIGHT_BRACE, expecting COMMA or SEMICOLON"  # as glslang reports it


def key(n: int) -> PermutationKey:
    return PermutationKey("t", "main", (("N", n),))


def job(source: str, stage: str = "fragment") -> StageJob:
    return StageJob(CompileRequest(source, stage), (), JobOptions(), key=source)


def found(*diagnostics: Diagnostic) -> CookInput:
    return CookInput([], 0, {}, {}, {}, list(diagnostics))


def test_manifest_prefix_names_the_library_from_the_world_root(tmp_path, monkeypatch) -> None:
    world = tmp_path / "world"
    (world / "shaders").mkdir(parents=True)
    (tmp_path / "shaders").mkdir()
    (tmp_path / "link").symlink_to("shaders")
    assert manifest_prefix(world, tmp_path / "shaders") == "../shaders/"
    assert manifest_prefix(world, world / "shaders") == "shaders/"
    assert manifest_prefix(world, tmp_path / "link") == "../shaders/"  # where the link leads
    monkeypatch.chdir(world)
    assert manifest_prefix(Path("."), Path("../shaders")) == "../shaders/"  # relative paths: from the working folder


def test_scan_errors_keep_the_errors_without_a_key() -> None:
    error = Diagnostic(Location("forest/c00/a.gltf", pointer="/meshes/0"), "bad accessor")
    warning = Diagnostic(Location("forest/c00/b.gltf"), "unused", "warning")
    [got] = scan_errors(found(warning, error))
    assert isinstance(got, CookDiagnostic) and got.key is None and got.count == 0
    assert (got.location, got.message, got.severity) == (error.location, error.message, "error")
    assert got.to_json() == error.to_json() | {"key": None}


def test_a_compile_doc_carries_its_key_and_a_readable_message() -> None:
    d = Diagnostic(Location(LIB + "t/t.frag", 4, 2), SYNTAX)
    assert compile_doc("t/main{N=1}", d) == {
        "file": LIB + "t/t.frag", "line": 4, "col": 2, "pointer": None, "severity": "error",
        "message": "syntax error: unexpected '}', expected ',' or ';'", "key": "t/main{N=1}"}


def test_job_users_list_each_key_once_per_job_in_text_order() -> None:
    shared, own1, own2 = "job-vert", "job-frag-1", "job-frag-2"
    plan = JobPlan(stages={key(2): {"vertex": shared, "fragment": own2}, key(1): {"vertex": shared, "fragment": own1},
                           key(3): {"vertex": shared, "fragment": shared}})
    users = job_users([key(3), key(2), key(1)], plan)
    assert users == {shared: [key(1).text, key(2).text, key(3).text], own1: [key(1).text], own2: [key(2).text]}


def test_compile_errors_group_by_line_and_add_the_jobs_stopped_by_fail_fast() -> None:
    plan = JobPlan(jobs={"j1": job("t/a.frag"), "j2": job("t/b.frag"), "j3": job("t/c.frag")},
                   stages={key(1): {"fragment": "j1"}, key(2): {"fragment": "j2"}, key(3): {"fragment": "j3"}})
    broken = Diagnostic(Location(LIB + "t/common.glsl", 7, 3), SYNTAX)
    warned = Diagnostic(Location(LIB + "t/a.frag", 1), "deprecated", "warning")
    run = RunResult(results={"j1": JobResult(None, (broken, warned)), "j2": JobResult(None, (broken,))},
                    cancelled=["j3"])
    errors = compile_errors(plan, run, LIB, job_users(plan.stages, plan))
    assert [str(e) for e in errors] == [
        f"{LIB}t/c.frag: error: not compiled: stopped by --fail-fast (key {key(3).text})",
        f"{LIB}t/common.glsl:7:3: error: syntax error: unexpected '}}', expected ',' or ';' "
        f"(breaks 2 keys, e.g. {key(1).text})"]
    assert errors[1].jobs == ("j1", "j2") and errors[1].keys == (key(1).text, key(2).text)
    assert errors[0].to_json() == cancelled_doc(key(3).text, plan.jobs["j3"], LIB) | {
        "count": 1, "keys": [key(3).text], "jobs": ["j3"]}


def test_an_error_of_a_job_no_key_needs_names_no_key() -> None:
    plan = JobPlan(jobs={"j1": job("t/a.frag")})
    run = RunResult(results={"j1": JobResult(None, (Diagnostic(Location(LIB + "t/a.frag", 2), "'x' : undeclared"),))})
    [error] = compile_errors(plan, run, LIB, {})
    assert (error.key, error.count, error.jobs) == (None, 0, ("j1",))
    assert str(error) == f"{LIB}t/a.frag:2: error: 'x' : undeclared"


def test_a_grouped_document_and_its_typed_error_are_one_shape() -> None:
    found_ = [("j1", Diagnostic(Location("m/a.glsl", 3, 9, None), "'y' : undeclared identifier")),
              ("j2", Diagnostic(Location("m/a.glsl", 3, 4, None), "'y' : undeclared identifier"))]
    [doc] = group_errors(found_, lambda job_key: {"j1": ["k/2"], "j2": ["k/1", "k/2"]}[job_key])
    error = grouped_error(doc)
    assert error.to_json() == doc and error.location == Location("m/a.glsl", 3, 4)
    assert (error.key, error.keys, error.jobs) == ("k/1", ("k/1", "k/2"), ("j1", "j2"))


def test_compact_drops_empty_fields_and_the_severity() -> None:
    doc = compile_doc(None, Diagnostic(Location("forest/c00/a.gltf", pointer="/nodes/2"), "bad node"))
    assert compact(doc) == {"file": "forest/c00/a.gltf", "pointer": "/nodes/2", "message": "bad node"}
    assert compact({"file": "x", "line": 0, "count": 0, "keys": []}) == {"file": "x", "line": 0, "count": 0,
                                                                         "keys": []}  # falsy is not empty


def test_errors_by_chunk_file_each_error_under_the_chunk_folder_holding_its_file() -> None:
    diagnostics = [Diagnostic(Location("forest/c00/a.gltf", pointer="/meshes/0"), "bad mesh"),
                   Diagnostic(Location("forest/c00/b.gltf", 1, 1), "not JSON"),
                   Diagnostic(Location("forest/c00/c.gltf"), "odd", "warning"),
                   Diagnostic(Location("top.gltf"), "bad root file"),
                   Diagnostic(Location("grid/cell_3_4/d.gltf"), "in a grid cell"),
                   Diagnostic(Location("rules/t.yaml", 2, 1), "a rule error")]
    by_chunk = errors_by_chunk(found(*diagnostics), {"forest/c00": "forest", ".": ".", "town/sq": "town"})
    assert by_chunk == {
        "forest/c00": [{"file": "forest/c00/a.gltf", "pointer": "/meshes/0", "message": "bad mesh"},
                       {"file": "forest/c00/b.gltf", "line": 1, "col": 1, "message": "not JSON"}],
        ".": [{"file": "top.gltf", "message": "bad root file"}]}


def test_world_named_renames_the_library_in_file_and_message_only_under_it() -> None:
    error = {"file": LIB + "pbr/common.glsl", "line": 3,
             "message": f"type clash with {LIB}pbr/other.glsl:9", "key": "k"}
    assert world_named(error, LIB, "../shaders/") == {
        "file": "../shaders/pbr/common.glsl", "line": 3, "message": "type clash with ../shaders/pbr/other.glsl:9",
        "key": "k"}
    elsewhere = {"file": "forest/c00/a.gltf", "message": "bad mesh"}
    assert world_named(elsewhere, LIB, "../shaders/") == elsewhere
    assert world_named({"file": None, "message": None}, LIB, "x/") == {"file": None, "message": None}
