"""Compile errors a person can read: glslang's messages reworded, one error per mistake.

glslang names parser tokens (``RIGHT_BRACE``) and writes an empty token (``'' :``)
for most of its messages; a mistake in a file every permutation includes fails
every job.  The cook prints such a mistake once, with how many keys it breaks.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from robust_helpers import run_cli

from pipeline.compilers import CompileRequest, SourceTree, compile_one, get_backend
from pipeline.compilers.preamble import readable
from pipeline.cook.error_docs import breaks, group_errors
from pipeline.errors import Diagnostic, Location
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
MATERIALS = ROOT / "materials"

# What glslang prints after ``ERROR: <file>:<line>:`` (copied from its logs), and what a person reads.
REWORDED = [
    ("'' :  syntax error, unexpected RIGHT_BRACE, expecting COMMA or SEMICOLON",
     "syntax error: unexpected '}', expected ',' or ';'"),
    ("'' :  syntax error, unexpected end of file", "syntax error at end of file"),
    ("'' :  syntax error, unexpected SEMICOLON, expecting LEFT_PAREN", "syntax error: unexpected ';', expected '('"),
    ("'' :  syntax error, unexpected IDENTIFIER", "syntax error: unexpected identifier"),
    ("'' :  syntax error, unexpected STAR", "syntax error: unexpected '*'"),
    ("'' :  syntax error, unexpected FLOAT, expecting COMMA or SEMICOLON",
     "syntax error: unexpected 'float', expected ',' or ';'"),
    ("'' :  syntax error, unexpected INTCONSTANT", "syntax error: unexpected number"),
    ("'' :  syntax error, unexpected SAMPLER2DARRAYSHADOW", "syntax error: unexpected 'sampler2DArrayShadow'"),
    ("'' : missing #endif", "missing #endif"),
    ("'' : array size must be a positive integer", "array size must be a positive integer"),
    ("'' : Could not perform requested binary operation", "Could not perform requested binary operation"),
    ("'foo' : undeclared identifier", "'foo' : undeclared identifier"),
    ("'=' :  cannot convert from ' const float' to ' global highp int'",
     "'=' : cannot convert from 'const float' to 'global highp int'"),
    ("'#else' : mismatched statements", "'#else' : mismatched statements"),
    ("'macro expansion' : Too few args in Macro M", "'macro expansion' : Too few args in Macro M"),
    ("cannot find include file 'lib/lighting.glsl'", "cannot find include file 'lib/lighting.glsl'"),
]


@pytest.mark.parametrize(("raw", "shown"), REWORDED)
def test_glslang_messages_are_reworded(raw, shown):
    assert readable(raw) == shown
    assert readable(shown) == shown  # a message already readable (a newer job record) stays as it is


# A shader library whose only file includes ``inc.glsl``: (text of inc.glsl, file and line, message).
HEADER = '#version 450\n#extension GL_GOOGLE_include_directive : require\n#include "inc.glsl"\n'
MAIN = "layout(location = 0) out vec4 color;\nvoid main() { color = vec4(1.0); }\n"
MISTAKES = {
    "missing semicolon": ("float f(float x) { return x * x }\n", "inc.glsl", 1,
                          "syntax error: unexpected '}', expected ',' or ';'"),
    "stray token": ("float f(float x) { return x * * x; }\n", "inc.glsl", 1, "syntax error: unexpected '*'"),
    "missing #endif": ("#ifdef FOO\nfloat g;\n", "s.frag", 6, "missing #endif"),
    "undeclared": ("float f(float x) { return foo * x; }\n", "inc.glsl", 1, "'foo' : undeclared identifier"),
    "end of file": (None, "s.frag", 7, "syntax error at end of file"),
}


@pytest.mark.parametrize("backend", ["capi", "cli"])
@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_the_real_compiler_s_messages_come_out_reworded(tmp_path, backend, mistake):
    include, file, line, message = MISTAKES[mistake]
    (tmp_path / "inc.glsl").write_text(include or "float f(float x) { return x; }\n")
    (tmp_path / "s.frag").write_text(HEADER + (MAIN if include else MAIN + "void g() {\n"))
    output = compile_one(CompileRequest("s.frag", "fragment"), SourceTree(tmp_path), get_backend(backend))
    assert output.spirv is None
    found = [(d.location.file, d.location.line, d.message) for d in output.errors]
    assert not any("''" in d.message for d in output.diagnostics)
    named = f"{tmp_path.resolve().as_posix()}/{file}"  # the file's absolute path
    if backend == "capi":
        assert found == [(named, line, message)]
    else:  # glslangValidator goes on to link what it parsed, and reports more
        assert (named, line, message) in found


def test_one_error_per_file_line_and_message_with_the_keys_it_breaks():
    def error(file, line, message, col=None):
        return Diagnostic(Location(file, line, col), message)

    found = [
        ("job-b", error("m/b.glsl", 3, "'x' : undeclared identifier")),
        ("job-a", error("m/a.glsl", 12, "syntax error at end of file", 7)),
        ("job-c", error("m/a.glsl", 12, "'' :  syntax error, unexpected end of file", 5)),  # an older record
        ("job-c", error("m/a.glsl", 2, "missing #endif")),
        ("job-d", error("m/a.glsl", 12, "'y' : undeclared identifier")),
    ]
    users = {"job-a": ["k/1", "k/2"], "job-b": ["k/3"], "job-c": ["k/2", "k/4"], "job-d": ["k/5"]}
    groups = group_errors(found, lambda job: users[job])
    assert [(g["file"], g["line"], g["col"], g["message"], g["count"], g["key"], g["keys"], g["jobs"])
            for g in groups] == [
        ("m/a.glsl", 2, None, "missing #endif", 2, "k/2", ["k/2", "k/4"], ["job-c"]),
        ("m/a.glsl", 12, 5, "syntax error at end of file", 3, "k/1", ["k/1", "k/2", "k/4"], ["job-a", "job-c"]),
        ("m/a.glsl", 12, None, "'y' : undeclared identifier", 1, "k/5", ["k/5"], ["job-d"]),
        ("m/b.glsl", 3, None, "'x' : undeclared identifier", 1, "k/3", ["k/3"], ["job-b"]),
    ]
    def by_message(groups):
        return {(g["file"], g["line"], g["message"]): (g["count"], g["keys"], g["jobs"]) for g in groups}

    assert by_message(group_errors(reversed(found), lambda job: users[job])) == by_message(groups)
    assert [breaks(g) for g in groups[:3]] == [" (breaks 2 keys, e.g. k/2)", " (breaks 3 keys, e.g. k/1)",
                                               " (key k/5)"]


# ------------------------------------------------------------------ a cook with the real compiler
@pytest.fixture
def world(tmp_path, monkeypatch):
    """The sample world with its own copy of the shader library (pipeline.toml ``materials``), cooked once."""
    shutil.copytree(SAMPLE, tmp_path / "world")
    shutil.copytree(MATERIALS, tmp_path / "shaders")
    config = tmp_path / "world" / "pipeline.toml"
    config.write_text(config.read_text() + 'materials = "../shaders"\n')
    monkeypatch.chdir(tmp_path)
    clean = cook()
    assert clean.returncode == 0, clean.stderr
    return tmp_path


def cook(*extra: str):
    return run_cli("cook", "world", "--cache", "cache", "--out", "out", "--jobs", "1", "-q", *extra,
                   cwd=Path.cwd())


def replace_line(path: Path, old: str, new: str) -> int:
    """Replace the line that reads ``old``; returns its 1-based number."""
    lines = path.read_text().splitlines()
    at = lines.index(old)
    lines[at] = new
    path.write_text("\n".join(lines) + "\n")
    return at + 1


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": error: " in line]


def broken_keys(out: Path, file: str, line: int) -> set[str]:
    """The keys the chunk manifests list as failing at ``file:line``."""
    return {e["key"] for path in out.rglob("*.json") if not path.name.endswith(".level.json")
            for e in json.loads(path.read_text())["errors"] if (e["file"], e["line"]) == (file, line)}


@pytest.mark.slow
def test_a_mistake_every_permutation_includes_is_one_error_naming_how_many_keys_it_breaks(world):
    line = replace_line(world / "shaders/pbr/common.glsl", "float sq(float x) { return x * x; }",
                        "float sq(float x) { return x * x }")
    done = cook("--json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    failed = {job["job"] for job in doc["explain"]}  # every job this cook compiled includes common.glsl
    assert failed and doc["compiled"] == len(failed) and doc["cache_hits"] == doc["jobs"] - len(failed) > 0
    [group] = doc["errors"]
    keys = broken_keys(world / "out", "../shaders/pbr/common.glsl", line)
    assert (group["file"], group["line"], group["message"]) == \
        ("shaders/pbr/common.glsl", line, "syntax error: unexpected '}', expected ',' or ';'")
    assert {job[:12] for job in group["jobs"]} == failed and len(group["jobs"]) == len(failed)
    assert group["keys"] == sorted(keys) and group["count"] == len(keys) > 0  # keys and jobs: many to many
    assert group["key"] == min(keys)
    assert error_lines(done.stderr) == [
        f"shaders/pbr/common.glsl:{line}: error: syntax error: unexpected '}}', expected ',' or ';' "
        f"(breaks {len(keys)} keys, e.g. {min(keys)})"]
    assert "''" not in done.stderr

    manifests = {p: p.read_bytes() for p in sorted((world / "out").rglob("*.json"))}
    text = cook()                                    # remembered as a failure, printed the same
    assert text.returncode == 1 and error_lines(text.stderr) == error_lines(done.stderr)
    assert "0 compiled" in text.stdout and "1 errors" in text.stdout
    assert {p: p.read_bytes() for p in sorted((world / "out").rglob("*.json"))} == manifests

    vertex_line = replace_line(world / "shaders/pbr/pbr.vert", "#include \"common.glsl\"",
                               "float early = ;\n#include \"common.glsl\"")
    two = cook("--json")
    assert two.returncode == 1
    lines = error_lines(two.stderr)
    assert len(lines) == 2 and "''" not in two.stderr
    assert lines[0].startswith(f"shaders/pbr/common.glsl:{line}: error: syntax error: unexpected '}}'")
    assert lines[1].startswith(f"shaders/pbr/pbr.vert:{vertex_line}: error: syntax error: unexpected ';'")
    fragment, vertex = json.loads(two.stdout)["errors"]
    assert {f"breaks {fragment['count']} keys", f"breaks {vertex['count']} keys"} == \
        {re.search(r"breaks \d+ keys", text).group() for text in lines}
    assert set(fragment["jobs"]).isdisjoint(vertex["jobs"])
    assert fragment["count"] == vertex["count"] == len(keys)  # every pbr key has both stages


@pytest.mark.slow
def test_the_watch_status_names_a_shared_mistake_once(world):
    from pipeline.cli.watch import _lines  # the lines `pipeline watch` prints
    from pipeline.watch import Watcher

    line = replace_line(world / "shaders/pbr/common.glsl", "float sq(float x) { return x * x; }",
                        "float sq(float x) { return x * x }")
    watcher = Watcher(world / "world", out=world / "out", cache=world / "cache", jobs=1)
    recook = watcher.recook(None, ["../shaders/pbr/common.glsl"])
    keys = broken_keys(world / "out", "../shaders/pbr/common.glsl", line)
    assert _lines(recook) == [f"shaders/pbr/common.glsl:{line}: error: syntax error: unexpected '}}', expected ',' "
                             f"or ';' (breaks {len(keys)} keys, e.g. {min(keys)})"]
    assert ", 1 errors, " in recook.line()
