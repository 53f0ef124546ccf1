"""chunks: the chunk layout of a world folder, known before anything is scanned."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.chunks import ROOT_CHUNK, chunk_name, discover_folders, is_gltf_name
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
