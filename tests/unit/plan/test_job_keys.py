"""A stage job's cache key: by source closure and defines, or by preprocessed text."""

from __future__ import annotations


from pipeline.compilers import CompileRequest, spirv_tools
from pipeline.plan.job_keys import exact_key, job_key
from pipeline.plan.jobs import JobOptions
from pipeline.structs import replace


def test_the_exact_key_reads_the_text_not_the_source_name_or_defines() -> None:
    options = JobOptions(compiler="c")
    one = CompileRequest("m/a.frag", "fragment", defines=(("A", "1"),))
    other = CompileRequest("m/b.frag", "fragment", defines=(("B", "2"), ("C", "3")))
    text = "#version 450\nvoid main() {}\n"
    assert exact_key(one, text, options) == exact_key(other, text, options)
    assert exact_key(one, text + "\n", options) != exact_key(one, text, options)
    assert exact_key(replace(one, target="vulkan1.0"), text, options) != exact_key(one, text, options)
    assert exact_key(one, text, JobOptions(compiler="d")) != exact_key(one, text, options)
    assert exact_key(one, text, options) != job_key(one, (), options)


def test_the_optimizer_that_runs_is_in_the_job_key(monkeypatch) -> None:
    options = JobOptions(compiler="c")
    optimized = CompileRequest("m/a.frag", "fragment", optimize=True)
    mapped = CompileRequest("m/a.frag", "fragment", auto_map=True)  # removes unused interface variables
    plain = CompileRequest("m/a.frag", "fragment")
    text = "#version 450\nvoid main() {}\n"
    before = [job_key(r, (), options) for r in (optimized, mapped, plain)] + [exact_key(optimized, text, options)]
    monkeypatch.setattr(spirv_tools, "optimizer_version", lambda: "spirv-opt of another build")
    after = [job_key(r, (), options) for r in (optimized, mapped, plain)] + [exact_key(optimized, text, options)]
    assert [b != a for b, a in zip(before, after)] == [True, True, False, True]  # plain runs no optimizer


def test_a_target_s_macros_are_in_its_job_keys_only(monkeypatch) -> None:
    from pipeline.compilers import request as request_module
    options = JobOptions(compiler="c")
    requests = [CompileRequest("m/a.frag", "fragment", target=t) for t in ("webgpu", "webgl2", "vulkan1.2", "metal")]
    text = "#version 450\nvoid main() {}\n"
    before = [job_key(r, (), options) for r in requests] + [exact_key(r, text, options) for r in requests]
    webgpu = request_module.TARGETS["webgpu"]
    monkeypatch.setitem(request_module.TARGETS, "webgpu", replace(webgpu, macros=webgpu.macros + (("X", "1"),)))
    after = [job_key(r, (), options) for r in requests] + [exact_key(r, text, options) for r in requests]
    assert [b != a for b, a in zip(before, after)] == [True, False, False, False] * 2
