"""``pipeline cook --explain``: every output file a cook rewrites comes with why (real compiler)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import main

ROCKS = "forest/c01/rocks.gltf"
LIBRARY = "build/shaders.pak"
TABLE = "build/shaders.chunks"  # the library's chunk table


def cook(*extra: str) -> str:
    result = CliRunner().invoke(main, ["cook", "world", "--cache", "cache", "--out", "build", "-j", "1",
                                       "--color", "never", *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


def cook_json(*extra: str) -> dict:
    return json.loads(cook("--json", *extra))


def reasons(doc: dict) -> dict[str, str]:
    """Output path (relative to the site) -> why the cook rewrote it."""
    return {Path(item["path"]).as_posix(): item["reason"] for item in doc["explain_outputs"]}


def changed_inputs(reason: str) -> list[str]:
    head, _, names = reason.partition(": ")
    assert head == "inputs changed", reason
    return names.split(", ")


def drop_normal_map(site: Path) -> None:
    """The "rock" material of forest/c01 loses its normal texture: the chunk's keys change."""
    path = site / "world" / ROCKS
    doc = json.loads(path.read_text())
    (rock,) = [m for m in doc["materials"] if m.get("name") == "rock"]
    del rock["normalTexture"]
    path.write_text(json.dumps(doc, indent=1))


def test_a_first_cook_says_every_index_and_level_is_new_and_lists_the_library_once(site):
    doc = cook_json()
    assert sorted(reasons(doc)) == sorted(doc["written"]) and len(doc["written"]) == len(doc["outputs"])
    assert doc["outputs"].count(LIBRARY) == doc["written"].count(LIBRARY) == 1
    assert [item for item in doc["explain_outputs"] if item.get("library")] == [
        {"path": LIBRARY, "library": True, "reason": reasons(doc)[LIBRARY]}]
    assert {why for path, why in reasons(doc).items() if path != LIBRARY} == {"new"}
    assert not any(path.endswith(".pak") for path in doc["outputs"] if path != LIBRARY)


def test_a_first_cook_says_the_library_is_new_as_its_dry_run_does(site):
    planned = CliRunner().invoke(main, ["cook", "world", "--cache", "cache", "--out", "build", "--dry-run"]).stdout
    assert f"would write {LIBRARY}: new\n" in planned
    assert reasons(cook_json())[LIBRARY] == "new"


def test_a_deleted_library_is_written_again_with_a_reason(site):
    cook()
    library = site / LIBRARY
    good = library.read_bytes()
    library.unlink()
    out = cook("--explain")
    assert f"    {LIBRARY}: " in out and "files written (1):" in out
    assert library.read_bytes() == good
    library.unlink()
    doc = cook_json()
    assert doc["written"] == [LIBRARY] and [i["path"] for i in doc["explain_outputs"]] == [LIBRARY]
    assert doc["explain_outputs"][0]["library"] is True and doc["explain_outputs"][0]["reason"]
    assert library.read_bytes() == good and cook_json()["written"] == []


def test_a_deleted_library_is_written_again_because_it_is_missing(site):
    cook()
    (site / LIBRARY).unlink()
    assert f"    {LIBRARY}: file missing: shaders.pak\n" in cook("--explain")
    (site / LIBRARY).unlink()
    assert reasons(cook_json()) == {LIBRARY: "file missing: shaders.pak"}


def test_a_material_edit_rewrites_its_chunk_for_its_keys_and_the_level_for_its_chunk_manifests(site):
    cook()
    drop_normal_map(site)
    planned = CliRunner().invoke(main, ["cook", "world", "--cache", "cache", "--out", "build", "--dry-run"]).stdout
    assert "would write build/forest/c01.json: inputs changed: " in planned
    assert "keys" in changed_inputs(planned.split("c01.json: ", 1)[1].splitlines()[0])
    assert "would write build/forest.level.json: inputs changed: chunk manifests\n" in planned

    doc = cook_json()
    why = reasons(doc)
    # the chunk uses fewer of the library's blobs, which other chunks still use: its table, not the library
    assert sorted(why) == sorted(["build/forest/c01.json", "build/forest.level.json", TABLE])
    assert "keys" in changed_inputs(why["build/forest/c01.json"])
    assert why["build/forest.level.json"] == "inputs changed: chunk manifests"
    assert why[TABLE] == "chunks' blobs changed"
    assert [item.get("chunk") or item.get("level") or item["path"] for item in doc["explain_outputs"]] == \
        ["forest/c01", "forest", TABLE]


def test_a_level_manifest_edited_on_disk_is_written_back_and_says_so(site):
    cook()
    level = site / "build" / "town.level.json"
    level.write_bytes(level.read_bytes() + b" ")
    out = cook("-q", "--explain")  # asked for by name: shown with --quiet too
    assert "build/town.level.json: modified on disk (" in out and "): town.level.json\n" in out


def test_a_new_job_for_one_chunk_builds_that_chunks_index_alone(site, monkeypatch):
    """A chunk's index depends on its own keys' jobs: the other chunks cost a record look-up and a stat."""
    from pipeline.outputs import write_chunks

    cook()
    before = {p: p.read_bytes() for p in (site / "build").rglob("*.json")}
    built = []
    real = write_chunks.write_built
    monkeypatch.setattr(write_chunks, "write_built", lambda jobs, chunk, *rest: built.append(chunk) or
                        real(jobs, chunk, *rest))
    path = site / "world" / ROCKS  # the "rock" material of forest/c01 blends: a key no chunk had
    doc = json.loads(path.read_text())
    (rock,) = [m for m in doc["materials"] if m.get("name") == "rock"]
    rock["alphaMode"] = "BLEND"
    path.write_text(json.dumps(doc, indent=1))
    doc = cook_json()
    assert doc["compiled"] >= 1 and built == ["forest/c01"]
    assert {p for p, data in before.items() if p.read_bytes() != data} == \
        {site / "build/forest/c01.json", site / "build/forest.level.json"}
