"""Bad input never crashes: every malformed-file kind is one located error line; the rest still works.

Each kind of :data:`robust_helpers.CASES` runs in-process through ``pipeline.api.scan``
(fast); every kind together also runs through the real ``pipeline scan --json`` and
``pipeline cook`` processes (exit code 1, no traceback, good chunks cooked).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from robust_helpers import (
    BAD_CHUNK,
    CASES,
    CASES_BY_NAME,
    GOOD_CHUNKS,
    GOOD_FILES,
    LINE,
    Case,
    check_error_line,
    deny_reading,
    make_world,
    run_cli,
)

from pipeline import api
from pipeline.outputs.manifest import load_chunk_manifest, stage_hashes
from pipeline.outputs.pak import LIBRARY_NAME, PakReader
from pipeline.outputs.read_outputs import load_chunk


def check_cooked(out: Path, chunks) -> None:
    """Each chunk has keys, and the whole library holds every blob its index names."""
    library = PakReader(out / LIBRARY_NAME)
    library.verify()
    for chunk in chunks:
        manifest, _ = load_chunk(out, chunk)
        assert manifest.keys and stage_hashes(manifest) <= set(library.hashes())
        assert library.chunks[chunk] == stage_hashes(manifest)


def bad_world(tmp_path: Path, case: Case, monkeypatch) -> tuple[Path, str]:
    world = tmp_path / "world"
    bad = make_world(world, case)
    if case.deny:
        deny_reading(monkeypatch, world / bad)
    return world, bad


def test_the_suite_covers_at_least_forty_kinds():
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_file_is_one_located_error_and_every_other_file_still_scans(tmp_path, monkeypatch, case):
    world, bad = bad_world(tmp_path, case, monkeypatch)
    for attempt in ("fresh", "through the scan cache"):
        result = api.scan(world, cache=tmp_path / "cache")
        assert len(result.errors) == 1, f"{attempt}: {[str(e) for e in result.errors]}"
        check_error_line(str(result.errors[0]), bad, case)
        assert {d.source.file for d in result.draws} == set(GOOD_FILES), attempt
        assert bad in result.files
        (doc,) = result.to_json()["errors"]
        assert doc["file"] == bad and doc["message"] == result.errors[0].message


# ---------------------------------------------------------------- real processes
CLI_CASES = [c for c in CASES if not c.config and not c.deny]


@pytest.fixture(scope="module")
def all_bad_world(tmp_path_factory) -> tuple[Path, dict[str, Case]]:
    """One world holding every (config-free) bad kind, each in its own chunk bad/<kind>/."""
    world = tmp_path_factory.mktemp("all_bad") / "world"
    make_world(world)
    files = {}
    for case in CLI_CASES:
        name = f"bad/{case.name}/{case.filename}"
        (world / name).parent.mkdir(parents=True)
        case.write(world / name)
        files[name] = case
    return world, files


def located_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": error: " in line]


def test_cli_scan_json_reports_every_kind_once_and_exits_1(all_bad_world, tmp_path):
    world, files = all_bad_world
    proc = run_cli("scan", world, "--json", "--cache", tmp_path / "cache", cwd=world)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert sorted(e["file"] for e in doc["errors"]) == sorted(files)
    for line in located_lines(proc.stderr):
        file = LINE.match(line)["file"]
        check_error_line(line, file, files[file])
    assert {d["file"] for d in doc["draws"]} == set(GOOD_FILES)


def test_cli_cook_reports_every_kind_and_still_cooks_the_good_chunks(all_bad_world, tmp_path):
    world, files = all_bad_world
    out = tmp_path / "build"
    proc = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", out, "--jobs", "1", "--quiet", cwd=world)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = located_lines(proc.stderr)
    assert sorted(LINE.match(line)["file"] for line in lines) == sorted(files)
    for line in lines:
        check_error_line(line, LINE.match(line)["file"], files[LINE.match(line)["file"]])
    check_cooked(out, (*GOOD_CHUNKS, BAD_CHUNK))


@pytest.mark.parametrize("name", ["glb_chunk_length_past_end", "json_trailing_comma", "dangling_material",
                                  "node_two_parents", "uri_parent_escape", "folder_named_gltf"])
def test_cli_scan_one_bad_file_exit_1_with_one_located_line(tmp_path, name):
    case = CASES_BY_NAME[name]
    bad = make_world(tmp_path / "world", case)
    proc = run_cli("scan", tmp_path / "world", "--cache", tmp_path / "cache", cwd=tmp_path / "world")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    (line,) = located_lines(proc.stderr)
    check_error_line(line, bad, case)


@pytest.mark.parametrize("name", ["file_over_size_limit", "glb_truncated_body"])
def test_cli_cook_one_bad_file_exit_1_and_good_chunks_cooked(tmp_path, name):
    case = CASES_BY_NAME[name]
    bad = make_world(tmp_path / "world", case)
    out = tmp_path / "build"
    proc = run_cli("cook", tmp_path / "world", "--cache", tmp_path / "cache", "--out", out, "--jobs", "1", "-q",
                   cwd=tmp_path / "world")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    (line,) = located_lines(proc.stderr)
    check_error_line(line, bad, case)
    check_cooked(out, GOOD_CHUNKS)
    bad_chunk = load_chunk_manifest(out / f"{BAD_CHUNK}.json")
    assert bad_chunk.keys  # the good file next to the bad one still cooked
    assert [e["file"] for e in bad_chunk.errors] == [bad]  # and the manifest records the bad one
