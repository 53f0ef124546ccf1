"""Cooking the whole third-party corpus: every required key compiles.

The only error allowed is the scan error of the one file that requires an
extension nobody supports (FAKE_materials_quantumRendering).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import api
from pipeline.outputs.manifest import load_chunk_manifest, stage_hashes
from pipeline.outputs.pak import LIBRARY_NAME, PakReader
from pipeline.compile.scheduler import JobRunner

FAKE = "glTF-Asset-Generator/Output/Positive/Compatibility/Compatibility_05.gltf"


@pytest.mark.slow
def test_corpus_cooks_with_zero_compile_errors(corpus: Path, tmp_path: Path) -> None:
    world = api.open_world(corpus)
    compiler = JobRunner(world.materials_dir, "capi", 2)
    result = api.cook(world, cache=tmp_path / "cache", out=tmp_path / "out", jobs=2, compiler=compiler)
    assert [(e.file, e.key) for e in result.errors] == [(FAKE, None)]
    assert "FAKE_materials_quantumRendering" in result.errors[0].message
    assert all(r.ok for r in result.run.results.values())
    assert compiler.calls == len(result.plan.jobs) == len(result.run.compiled)
    assert result.plan.stage_report()["vertex"]["jobs"] < result.plan.stage_report()["vertex"]["uses"]
    manifest = load_chunk_manifest(tmp_path / "out" / (FAKE.rsplit("/", 1)[0] + ".json"))
    assert [(e["file"], e["pointer"]) for e in manifest.errors] == [(FAKE, "/extensionsRequired/0")]
    out = tmp_path / "out"
    assert sorted(out.rglob("*.pak")) == [out / LIBRARY_NAME]  # one library for every chunk
    library = PakReader(out / LIBRARY_NAME)
    library.verify()
    indexes = [load_chunk_manifest(p) for p in sorted(out.rglob("*.json")) if not p.name.endswith(".level.json")]
    assert len(indexes) == result.chunks
    assert library.chunks == {m.chunk: stage_hashes(m) for m in indexes}
    assert set(library.hashes()) == {r.blob for r in result.run.results.values()}  # each blob once
    for m in indexes[:: max(1, len(indexes) // 10)]:
        for digest in stage_hashes(m):
            library.get(digest)
