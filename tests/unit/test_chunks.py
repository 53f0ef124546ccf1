"""chunks: the chunk layout of a world folder, known before anything is scanned: folders directly holding
glTF files, named from the root, links followed once."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.chunks import ROOT_CHUNK, chunk_name, discover, discover_folders, discover_listed, is_gltf_name
from pipeline.config import WorldConfig


def test_names_and_suffixes() -> None:
    assert chunk_name("") == ROOT_CHUNK == "."
    assert chunk_name("forest/c01") == "forest/c01"
    assert is_gltf_name("A.GLB") and not is_gltf_name("a.bin")


def test_a_folder_link_leading_outside_the_world_is_one_located_warning(tmp_path: Path) -> None:
    world, outside = tmp_path / "world", tmp_path / "outside"
    (world / "forest").mkdir(parents=True)
    (world / "forest" / "a.gltf").write_text("{}")
    outside.mkdir()
    (outside / "b.gltf").write_text("{}")
    os.symlink(outside, world / "linked")
    os.symlink(world / "forest", world / "again")
    chunks, warnings = discover_folders(world, WorldConfig())
    assert [(c.name, c.level, c.files) for c in chunks] == [("forest", "forest", ("forest/a.gltf",))]
    assert [(w.location.file, w.severity) for w in warnings] == [("again", "warning"), ("linked", "warning")]
    assert "which the world already holds" in warnings[0].message
    assert "leads outside the world" in warnings[1].message


def touch(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("{}")


def test_chunks_are_folders_directly_holding_gltf_files(tmp_path: Path) -> None:
    touch(tmp_path, "a.glb", "forest/c00/tree.gltf", "forest/c00/rock.GLB", "forest/notes.txt",
          "town/inner/deep/house.gltf", ".git/x.gltf", "forest/.cache/y.glb")
    chunks = discover(tmp_path, WorldConfig())
    assert [(c.name, c.level, c.files) for c in chunks] == [
        (ROOT_CHUNK, ROOT_CHUNK, ("a.glb",)),
        ("forest/c00", "forest", ("forest/c00/rock.GLB", "forest/c00/tree.gltf")),
        ("town/inner/deep", "town", ("town/inner/deep/house.gltf",)),
    ]
    assert chunks[1].directory == tmp_path / "forest" / "c00"


def test_level_depth_and_under(tmp_path: Path) -> None:
    touch(tmp_path, "town/inner/deep/house.gltf", "forest/c00/tree.gltf")
    (chunk,) = discover(tmp_path, WorldConfig(level_depth=2), under="town/")
    assert (chunk.name, chunk.level) == ("town/inner/deep", "town/inner")


def test_a_link_inside_the_world_is_followed_once_and_a_loop_is_one_warning(tmp_path: Path) -> None:
    touch(tmp_path, "forest/c00/tree.gltf")
    os.symlink(tmp_path / "forest" / "c00", tmp_path / "alias")
    os.symlink(tmp_path, tmp_path / "forest" / "loop")
    chunks, warnings = discover_folders(tmp_path, WorldConfig())
    assert [c.name for c in chunks] == ["forest/c00"]  # the real folder first; the second way in is not followed
    assert sorted(d.location.file for d in warnings) == ["alias", "forest/loop"]
    assert all(d.severity == "warning" for d in warnings)


def test_a_link_leading_outside_the_world_is_not_followed(tmp_path: Path) -> None:
    touch(tmp_path / "outside", "c/x.gltf")
    touch(tmp_path / "world", "a/y.gltf")
    os.symlink(tmp_path / "outside" / "c", tmp_path / "world" / "b")
    chunks, warnings = discover_folders(tmp_path / "world", WorldConfig())
    assert [c.name for c in chunks] == ["a"] and [d.location.file for d in warnings] == ["b"]


def test_gltf_names_by_suffix_in_any_case() -> None:
    assert is_gltf_name("a.gltf") and is_gltf_name("B.GLB") and not is_gltf_name("a.gltf.bak")


def _listing(root: Path) -> dict[str, list[str]]:
    """Every folder under ``root`` with the names of its entries that are not folders (a stat walk's listing)."""
    return {os.path.relpath(folder, root) if folder != str(root) else "": sorted(files)
            for folder, _, files in os.walk(root)}


def test_a_listing_of_the_whole_world_finds_the_chunks_its_walk_finds(tmp_path: Path) -> None:
    touch(tmp_path, "a.glb", "forest/c00/tree.gltf", "forest/c00/rock.GLB", "forest/notes.txt", "forest/c00/.x.glb",
          "town/inner/deep/house.gltf", ".git/x.gltf", "forest/.cache/y.glb", "forest/.cache/inner/z.gltf")
    for config in (WorldConfig(), WorldConfig(level_depth=2)):
        assert discover_listed(tmp_path, config, _listing(tmp_path)) == discover_folders(tmp_path, config)
        assert discover_listed(tmp_path, config, _listing(tmp_path))[0][1].files == (
            "forest/c00/rock.GLB", "forest/c00/tree.gltf")


def test_a_listing_cannot_tell_a_folder_named_like_a_gltf_file(tmp_path: Path) -> None:
    touch(tmp_path, "forest/c00/tree.gltf", "forest/c00/odd.glb/inner.txt")
    assert discover_listed(tmp_path, WorldConfig(), _listing(tmp_path)) is None  # the walk lists it as a file
    assert discover_folders(tmp_path, WorldConfig())[0][0].files == ("forest/c00/odd.glb", "forest/c00/tree.gltf")
