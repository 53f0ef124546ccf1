"""What a build-farm worker runs: jobs carrying their sources as data, checked, compiled, and reported."""

from __future__ import annotations

import os
import shutil
import signal

import pytest

from pipeline.compile.farm_worker import (
    BatchFailure,
    BatchResult,
    CompilerMismatch,
    FarmBatch,
    FarmJob,
    MemoryTree,
    TransferError,
    check_files,
    compile_farm_batch,
    dask_setup,
    farm_task,
    noop,
    worker_address,
    worker_identity,
)
from pipeline.compilers import CompileRequest, get_backend
from pipeline.compilers.reflect import reflect, tool_version
from pipeline.digest import bytes_hash
from pipeline.errors import CompileError
from pipeline.structs import replace

LIBRARY = "/client/materials/"
TINT = "const float TINT = 0.5;\n"
GOOD = '#version 450\n#include "tint.glsl"\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(TINT); }\n'
BAD = '#version 450\n#include "tint.glsl"\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(nope); }\n'


def sha(text: str) -> str:
    return bytes_hash(text.encode("utf-8"))


def job(key: str, source: str, texts: dict[str, str]) -> FarmJob:
    return FarmJob(key, CompileRequest(source, "fragment"), tuple((rel, sha(text)) for rel, text in texts.items()))


def batch(*jobs: FarmJob, files: dict[str, str] | None = None, compiler: str | None = None) -> FarmBatch:
    if files is None:
        files = {}
        for j in jobs:
            for rel, digest in j.closure:
                files[digest] = {"good.frag": GOOD, "bad.frag": BAD, "tint.glsl": TINT}[rel]
    return FarmBatch(tuple(jobs), files, "capi", compiler or get_backend("capi").identity, LIBRARY)


GOOD_JOB = job("k-good", "good.frag", {"good.frag": GOOD, "tint.glsl": TINT})
BAD_JOB = job("k-bad", "bad.frag", {"bad.frag": BAD, "tint.glsl": TINT})


def test_check_files_accepts_texts_that_match_their_hash_and_refuses_any_other() -> None:
    check_files({sha(GOOD): GOOD, sha(TINT): TINT})
    check_files({})
    with pytest.raises(TransferError, match=f"source text {sha(TINT)[:12]} does not match its hash"):
        check_files({sha(GOOD): GOOD, sha(TINT): TINT.replace("0.5", "0.6")})


def test_a_batch_compiles_each_job_in_order_with_the_digest_of_its_bytes() -> None:
    result = compile_farm_batch(batch(BAD_JOB, GOOD_JOB))
    assert isinstance(result, BatchResult) and (result.worker, result.pid) == ("local", os.getpid())
    assert [r.key for r in result.results] == ["k-bad", "k-good"]
    bad, good = result.results
    assert good.spirv[:4] == b"\x03\x02\x23\x07" and good.digest == bytes_hash(good.spirv)
    assert bad.spirv is None and bad.digest is None
    (error,) = bad.diagnostics
    assert (error.file, error.line) == (LIBRARY + "bad.frag", 4)  # named as the client names its files


@pytest.mark.skipif(shutil.which("spirv-cross") is None, reason="spirv-cross (Debian package) is not installed")
def test_a_worker_with_the_clients_spirv_cross_reflects_each_blob_it_sends() -> None:
    revision = tool_version()
    bad, good = compile_farm_batch(replace(batch(BAD_JOB, GOOD_JOB), reflector=revision)).results
    assert good.reflection == reflect(good.spirv) and good.reflection["stage"] == "fragment"
    assert bad.reflection is None  # no blob, nothing to reflect
    for other in (None, revision + " (another build)"):  # no revision named, or not this worker's: the client reflects
        (result,) = compile_farm_batch(replace(batch(GOOD_JOB), reflector=other)).results
        assert result.spirv == good.spirv and result.reflection is None


def test_an_include_left_out_of_the_closure_is_a_located_compile_error() -> None:
    alone = job("k", "good.frag", {"good.frag": GOOD})  # tint.glsl not sent
    (result,) = compile_farm_batch(batch(alone)).results
    assert result.spirv is None
    assert [(d.file, d.line, d.message) for d in result.diagnostics] == \
        [(LIBRARY + "good.frag", 2, "cannot find include file 'tint.glsl'")]


def test_a_tampered_text_refuses_the_batch_before_compiling() -> None:
    files = {sha(GOOD): GOOD, sha(TINT): "const float TINT = 9.0;\n"}
    with pytest.raises(TransferError):
        compile_farm_batch(batch(GOOD_JOB, files=files))
    failure = farm_task(batch(GOOD_JOB, files=files))
    assert isinstance(failure, BatchFailure) and (failure.worker, failure.pid) == ("local", os.getpid())
    assert failure.message == f"TransferError: source text {sha(TINT)[:12]} does not match its hash"


def test_a_batch_without_the_text_its_closure_names_comes_back_as_a_failure() -> None:
    failure = farm_task(batch(GOOD_JOB, files={sha(GOOD): GOOD}))
    assert isinstance(failure, BatchFailure) and failure.message.startswith("KeyError: ")
    assert sha(TINT) in failure.message


def test_another_compiler_s_batch_is_refused_not_reported_as_a_failure() -> None:
    with pytest.raises(CompilerMismatch, match="worker local has compiler"):
        farm_task(batch(GOOD_JOB, compiler="glslang 0.0 (C API); SPIRV-Tools v0"))


def test_farm_task_returns_the_batch_result_when_all_is_well() -> None:
    result = farm_task(batch(GOOD_JOB))
    assert isinstance(result, BatchResult) and result.results[0].key == "k-good" and result.results[0].spirv


def test_a_memory_tree_holds_only_what_was_sent() -> None:
    tree = MemoryTree({"good.frag": GOOD}, LIBRARY)
    assert tree.has_file("good.frag") and not tree.has_file("tint.glsl")
    assert tree.read("good.frag") == GOOD and tree.name("good.frag") == LIBRARY + "good.frag"
    with pytest.raises(CompileError) as caught:
        tree.parsed("tint.glsl")
    assert str(caught.value) == f"{LIBRARY}tint.glsl: error: shader source not sent with the job"


def test_outside_a_dask_worker_the_worker_is_local_and_knows_its_compiler() -> None:
    assert worker_address() == "local"
    assert worker_identity("capi") == get_backend("capi").identity


def test_a_local_cluster_worker_ignores_sigint() -> None:
    before = signal.getsignal(signal.SIGINT)
    try:
        dask_setup(worker=None)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
    assert isinstance(noop(7), float)  # the overhead probe does no work and needs no argument
