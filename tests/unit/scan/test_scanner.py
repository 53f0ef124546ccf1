"""The scan cache: unchanged files are not read, touched files are hashed, edited files re-parsed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pipeline.cache.store import Store
from pipeline.scan import scanner
from pipeline.world import open_world
from pipeline.facts import dump

BOX = "glTF-Sample-Assets/Models/BoxVertexColors"


def scan(path, **options):
    """Scan the world of ``path`` (a world, chunk folder or file)."""
    return scanner.scan(open_world(path), **options)


@pytest.fixture
def world(tmp_path: Path, corpus: Path) -> Path:
    root = tmp_path / "world"
    for name in ("BoxVertexColors", "RiggedSimple", "MultiUVTest"):
        shutil.copytree(corpus / "glTF-Sample-Assets" / "Models" / name, root / "models" / name)
    return root


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "cache") as s:
        yield s


def signature_list(result) -> list[tuple]:
    return [(dump(d.source), result.signature(d)) for d in result.draws]


def test_second_scan_reads_no_file(world: Path, store: Store) -> None:
    first = scan(world, store=store)
    second = scan(world, store=store)
    assert first.files_read == len(first.files) > 0 and first.files_cached == 0
    assert (second.files_read, second.files_parsed, second.files_cached) == (0, 0, len(first.files))
    assert signature_list(second) == signature_list(first)
    assert [d.facts for d in second.draws] == [d.facts for d in first.draws]


def test_touch_with_same_content_is_hashed_not_parsed(world: Path, store: Store) -> None:
    first = scan(world, store=store)
    target = world / "models" / "BoxVertexColors" / "glTF" / "BoxVertexColors.gltf"
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    touched = scan(world, store=store)
    assert (touched.files_read, touched.files_parsed) == (1, 0)
    assert signature_list(touched) == signature_list(first)
    assert scan(world, store=store).files_read == 0  # the new mtime was recorded


def test_editing_one_file_rescans_only_that_file(world: Path, store: Store) -> None:
    scan(world, store=store)
    target = world / "models" / "MultiUVTest" / "glTF" / "MultiUVTest.gltf"
    target.write_text(target.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    edited = scan(world, store=store)
    assert (edited.files_read, edited.files_parsed) == (1, 1)
    assert edited.files_cached == len(edited.files) - 1


def test_optional_facts_are_part_of_the_key(world: Path, store: Store) -> None:
    scan(world, store=store)
    wanted = frozenset({"mesh.maxJointInfluences"})
    with_facts = scan(world, store=store, optional_facts=wanted)
    assert with_facts.files_parsed == len(with_facts.files)
    rigged = [d for d in with_facts.draws if d.source.file.endswith("RiggedSimple.glb")]
    assert rigged and all(d.facts.mesh.maxJointInfluences is not None for d in rigged)
    assert scan(world, store=store, optional_facts=wanted).files_read == 0


def test_removed_and_added_files(world: Path, store: Store, write_gltf) -> None:
    first = scan(world, store=store)
    (world / "models" / "BoxVertexColors" / "glTF" / "BoxVertexColors.gltf").unlink()
    write_gltf(world / "models" / "new" / "n.gltf", {"asset": {"version": "2.0"}})
    again = scan(world, store=store)
    assert len(again.files) == len(first.files) and again.files_parsed == 1
    assert not any(d.source.file.endswith("BoxVertexColors.gltf") for d in again.draws)


def test_corrupt_entry_is_a_miss(world: Path, store: Store) -> None:
    first = scan(world, store=store)
    for key in list(store._cache.iterkeys()):
        if key[0] == "scan":
            store._cache.set(key, {"files": {"x": "garbage"}, "facts": [], "signatures": []})
    again = scan(world, store=store)
    assert signature_list(again) == signature_list(first)


def test_error_files_are_cached_with_their_error(world: Path, store: Store, write_gltf) -> None:
    write_gltf(world / "bad" / "b.gltf", {"asset": {"version": "3.0"}})
    first = scan(world, store=store)
    second = scan(world, store=store)
    assert [str(e) for e in second.errors] == [str(e) for e in first.errors] == [
        "bad/b.gltf: /asset/version: error: unsupported glTF version '3.0' (expected 2.x)"]
    assert second.files_read == 0


def test_scan_a_chunk_folder_or_one_file(world: Path) -> None:
    chunk = scan(world / "models" / "BoxVertexColors" / "glTF-Binary")
    assert chunk.files == ["BoxVertexColors.glb"] and chunk.chunks == ["."]
    single = scan(world / "models" / "RiggedSimple" / "glTF" / "RiggedSimple.gltf")
    assert single.files == ["RiggedSimple.gltf"] and single.draws
    (world / "pipeline.toml").write_text("")
    inside = scan(world / "models" / "BoxVertexColors" / "glTF-Binary")
    assert inside.files == ["models/BoxVertexColors/glTF-Binary/BoxVertexColors.glb"]
    assert inside.chunks == ["models/BoxVertexColors/glTF-Binary"]
