"""``runtime check``: every chunk manifest of an output folder, its modules and pipelines created on lavapipe."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runtime_helpers import chunk_index, cook_twin_chunks, needs_vulkan
from pipeline.outputs import manifest as mf
from pipeline.runtime.check import NothingToCheck, check, chunk_names


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return cook_twin_chunks(tmp_path_factory.mktemp("check"))


def manifests(out: Path) -> dict[str, mf.ChunkManifest]:
    return {p.stem: chunk_index(out, p.stem) for p in sorted(out.glob("c0?.json"))}


def test_chunk_names_lists_chunk_manifests_and_the_root_chunk_only(tmp_path: Path) -> None:
    for name in ("forest/c00.json", "forest.level.json", ".root.json", ".level.json", "forest/.hidden.json",
                 "town/market/c1.json", "notes.txt", "forest/c00.0123456789abcdef.pak",
                 "shaders.pak"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert sorted(chunk_names(tmp_path)) == [".", "forest/c00", "town/market/c1"]
    assert chunk_names(tmp_path, "town/market/c1") == ["town/market/c1"]
    assert chunk_names(tmp_path / "none") == []


def test_a_missing_folder_is_an_error_not_a_pass(tmp_path: Path) -> None:
    with pytest.raises(NothingToCheck) as info:
        check(tmp_path / "missing")
    assert info.value.diagnostics[0].location.file == str(tmp_path / "missing")
    assert "not a folder of cooked outputs" in info.value.diagnostics[0].message


def test_a_folder_without_manifests_is_an_error_not_a_pass(tmp_path: Path) -> None:
    (tmp_path / "forest.level.json").write_text("{}")
    with pytest.raises(NothingToCheck) as info:
        check(tmp_path)
    assert "no chunk manifest" in info.value.diagnostics[0].message


@needs_vulkan
def test_check_creates_each_pipeline_state_once_over_the_chunks(out: Path) -> None:
    result = check(out)
    docs = manifests(out)
    states = set(docs["c02"].pipelines) | set(docs["c03"].pipelines)
    assert docs["c02"].pipelines and set(docs["c02"].pipelines) == set(docs["c03"].pipelines)
    assert result.chunks == ["c02", "c03"]
    assert result.pipelines == result.created == len(states)
    assert result.modules == len({d for doc in docs.values() for e in doc.keys.values() for d in e.stages.values()})
    assert result.ok and result.validation_errors == [] and result.failed == []
    assert result.device and result.to_json()["created"] == len(states)


@needs_vulkan
def test_check_of_one_chunk(out: Path) -> None:
    result = check(out, "c03")
    assert result.chunks == ["c03"] and result.pipelines == len(manifests(out)["c03"].pipelines) and result.ok


@needs_vulkan
def test_a_bad_manifest_is_a_failure_and_the_other_chunks_are_still_checked(out: Path, tmp_path: Path) -> None:
    broken = tmp_path / "out"
    shutil.copytree(out, broken)
    (broken / "c02.json").write_text("{ not a manifest")
    result = check(broken)
    assert not result.ok
    assert [f.chunk for f in result.failed] == ["c02"] and result.failed[0].pipeline is None
    assert result.created == result.pipelines == len(manifests(out)["c03"].pipelines)
    assert result.to_json()["failed"][0]["chunk"] == "c02"
