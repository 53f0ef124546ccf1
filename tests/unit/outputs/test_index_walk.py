"""outputs.index_walk: the chunk indexes of an output folder and their stamps, found by one walk."""

from __future__ import annotations

import os

from pipeline.outputs.atomic import temp_path_for
from pipeline.outputs.index_walk import index_files, index_stamps
from pipeline.stamps import stamp_of


def test_the_walk_finds_chunk_indexes_with_their_stamps_and_nothing_else(tmp_path) -> None:
    for name in ("forest/c00.json", "forest/deep/c01.json", "town/square.json", "forest.level.json",
                 "shaders.pak", "notes.txt", ".hidden/c02.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    temp_path_for(tmp_path / "forest" / "c00.json").write_text("half")  # a cook's temp: not an index
    (tmp_path / "forest" / "link").symlink_to(tmp_path / "town", target_is_directory=True)  # not followed
    found = index_stamps(tmp_path)
    expected = sorted(os.fspath(tmp_path / n) for n in ("forest/c00.json", "forest/deep/c01.json", "town/square.json"))
    assert [path for path, _ in found] == expected == index_files(tmp_path)
    assert all(stamp == list(stamp_of(path)) for path, stamp in found)
    assert index_stamps(tmp_path / "missing") == []
