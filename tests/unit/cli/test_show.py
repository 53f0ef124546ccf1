"""``pipeline show``: each kind of output file as plain JSON, and a located error for anything else."""

from __future__ import annotations

import json

import pytest

from pipeline.outputs import manifest as mf
from paths import SAMPLE_WORLD
from startup_helpers import pipeline
from click.testing import CliRunner

from pipeline.cli.show import command


@pytest.fixture(scope="module")
def cooked(tmp_path_factory):
    root = tmp_path_factory.mktemp("show")
    out = root / "out"
    proc = pipeline("cook", str(SAMPLE_WORLD), "--out", str(out), "--cache", str(root / "cache"), "-q", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return out


def show(path):
    """``pipeline show PATH`` through click, and the document it printed."""
    proc = CliRunner().invoke(command, [str(path)])
    return proc, (json.loads(proc.stdout) if proc.exit_code == 0 else None)


def test_a_chunk_index_shows_keys_by_text_and_draws_with_pipeline_ids(cooked):
    path = cooked / "forest" / "c00.json"
    proc, doc = show(path)
    assert proc.exit_code == 0, proc.output
    manifest = mf.load_chunk_manifest(path)
    assert set(doc["keys"]) == set(manifest.keys)
    assert doc["draws"] == [json.loads(json.dumps(d)) for d in manifest.draws]
    assert set(doc["pipelines"]) == set(manifest.pipelines)
    assert all(use["pipeline"] in doc["pipelines"] for d in doc["draws"] for use in d["passes"].values()
               if "pipeline" in use)


def test_a_level_manifest_shows_each_chunk_s_keys_and_pipelines(cooked):
    proc, doc = show(cooked / "forest.level.json")
    assert proc.exit_code == 0, proc.output
    level = mf.load_level_manifest(cooked / "forest.level.json")
    assert list(doc["chunks"]) == list(level.chunks)
    used = {text for c in doc["chunks"].values() for text in c["keys"]}
    assert used == set(doc["keys"])


def test_the_library_shows_every_blob_with_the_chunks_using_it(cooked):
    proc, doc = show(cooked / "shaders.pak")
    assert proc.exit_code == 0, proc.output
    assert doc["bytes"] == (cooked / "shaders.pak").stat().st_size
    indexes = {}
    for path in cooked.rglob("*.json"):
        if not path.name.endswith(".level.json"):
            m = mf.load_chunk_manifest(path)
            indexes[m.chunk] = mf.stage_hashes(m)
    assert {c: set(b) for c, b in doc["chunks"].items()} == indexes
    assert set(doc["blobs"]) == set().union(*indexes.values())


def test_a_file_that_is_no_output_is_one_located_error(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    proc, _ = show(other)
    assert proc.exit_code == 1
    assert proc.output.strip().endswith("error: not an output of pipeline cook (a chunk index, a level manifest, "
                                        "shaders.pak or its chunk table shaders.chunks)")
