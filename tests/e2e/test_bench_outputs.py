"""bench/bench_outputs.py: the output bytes by kind add up to the folder, and the blob bytes to the library's blobs."""

from __future__ import annotations

import sys

from paths import REPO, SAMPLE_WORLD

sys.path.insert(0, str(REPO / "bench"))

import bench_outputs  # noqa: E402

from pipeline import api  # noqa: E402
from pipeline.outputs.pak import PakReader  # noqa: E402


def test_sizes_add_up_to_the_folder_and_the_library(tmp_path):
    result = api.cook(api.open_world(SAMPLE_WORLD), cache=tmp_path / "cache", out=tmp_path / "out", jobs=2)
    (tmp_path / "out" / "notes.txt").write_text("not an output")
    sizes = bench_outputs.output_sizes(tmp_path / "out", result.draws)
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert sizes["total"] == sum(p.stat().st_size for p in files)
    assert sizes["other"] == len("not an output")
    library = PakReader(tmp_path / "out" / "shaders.pak")
    assert sizes["blob_bytes"] == sum(len(library.get(d)) for d in library.hashes()) and sizes["blobs"] == len(library)
    assert sizes["library"] == (tmp_path / "out" / "shaders.pak").stat().st_size
    assert sizes["chunk table"] == (tmp_path / "out" / "shaders.chunks").stat().st_size > 0
    assert sizes["per_draw"] == (sizes["total"] - sizes["blob_bytes"]) / result.draws
    assert sizes["budget"] == sizes["blob_bytes"] + 100 * result.draws
    assert bench_outputs.index_load_ms(tmp_path / "out", runs=1) > 0
