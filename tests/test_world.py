"""World discovery: chunks are folders directly holding glTF files."""

from __future__ import annotations

from pathlib import Path

from pipeline.config import WorldConfig
from pipeline.scan.chunks import discover


def test_chunks_levels_and_files(tmp_path: Path) -> None:
    for name in ("forest/c03/rocks.glb", "forest/c03/trees.gltf", "forest/c01/a.GLTF", "desert/x.gltf",
                 "top.gltf", "forest/c03/readme.txt", ".hidden/h.gltf", "forest/empty/.keep"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    chunks = discover(tmp_path, WorldConfig())
    assert [(c.name, c.level, c.files) for c in chunks] == [
        (".", ".", ("top.gltf",)),
        ("desert", "desert", ("desert/x.gltf",)),
        ("forest/c01", "forest", ("forest/c01/a.GLTF",)),
        ("forest/c03", "forest", ("forest/c03/rocks.glb", "forest/c03/trees.gltf")),
    ]
    assert chunks[3].directory == tmp_path / "forest" / "c03"
    deep = discover(tmp_path, WorldConfig(level_depth=2))
    assert [c.level for c in deep] == [".", "desert", "forest/c01", "forest/c03"]
    assert [c.name for c in discover(tmp_path, WorldConfig(), "forest")] == ["forest/c01", "forest/c03"]


def test_corpus_chunks_are_model_folders(corpus: Path) -> None:
    names = [c.name for c in discover(corpus, WorldConfig())]
    assert "glTF-Sample-Assets/Models/BoxVertexColors/glTF-Binary" in names
    assert names == sorted(names)
