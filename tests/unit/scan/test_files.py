"""Scanning one glTF file into draws and diagnostics, and checking that the buffers a scan read are unchanged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from pipeline.checked import convert
from pipeline.config import WorldConfig
from pipeline.scan.files import FileScan, deps_fresh, relative_name, scan_bytes, scan_file, stat_dep
from pipeline.scan.gltf.draws import SharedFacts

WHITE = np.ones((3, 4), np.float32).tobytes()
LIGHTS = {"KHR_lights_punctual": {"lights": [{"type": "point"}, {"type": "spot", "spot": {}}]}}


def document(translations=((0, 0, 0),), *, lights: bool = False) -> dict:
    """Nodes drawing one triangle (bounds 0..2, material 0, COLOR_0 in mesh.bin) at the given translations."""
    nodes = [{"mesh": 0, "translation": list(t)} for t in translations]
    doc = {
        "asset": {"version": "2.0"}, "scenes": [{"nodes": list(range(len(nodes)))}], "nodes": nodes,
        "materials": [{"name": "m"}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "COLOR_0": 1}, "material": 0}]}],
        "accessors": [{"componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [2, 2, 2]},
                      {"componentType": 5126, "count": 3, "type": "VEC4", "bufferView": 0}],
        "bufferViews": [{"buffer": 0, "byteLength": len(WHITE)}],
        "buffers": [{"byteLength": len(WHITE), "uri": "mesh.bin"}],
    }
    if lights:
        doc["extensionsUsed"], doc["extensions"] = ["KHR_lights_punctual"], LIGHTS
        light_nodes = [{"extensions": {"KHR_lights_punctual": {"light": i}}, "translation": list(translations[i])}
                       for i in range(2)]
        doc["scenes"][0]["nodes"] += [len(nodes), len(nodes) + 1]
        doc["nodes"] += light_nodes
    return doc


def write(folder: Path, doc: dict | bytes, name: str = "a.gltf") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mesh.bin").write_bytes(WHITE)
    path = folder / name
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return path


def scan(path: Path, root: Path, config: WorldConfig = WorldConfig(), **options) -> FileScan:
    file = path.relative_to(root).as_posix()
    return scan_bytes(path.read_bytes(), path, root=root, file=file, chunk_name="lvl/c", level="lvl", config=config,
                      **{"optional_facts": frozenset()} | options)


def test_scan_file_names_each_draw_by_its_file_chunk_and_indices(tmp_path: Path) -> None:
    path = write(tmp_path / "lvl" / "c", document([(0, 0, 0), (5, 0, 0)]))
    draws, diagnostics = scan_file(path, root=tmp_path, chunk_name="lvl/c", level="lvl", config=WorldConfig())
    assert diagnostics == []
    assert [(d.source.file, d.source.chunk, d.source.level) for d in draws] == [("lvl/c/a.gltf", "lvl/c", "lvl")] * 2
    assert [(d.source.node, d.source.mesh, d.source.primitive, d.source.material, d.source.variant)
            for d in draws] == [(0, 0, 0, 0, None), (1, 0, 0, 0, None)]
    assert {(d.facts.chunk.name, d.facts.chunk.level) for d in draws} == {("lvl/c", "lvl")}


def test_a_bad_file_gives_no_draws_and_one_located_error(tmp_path: Path) -> None:
    path = write(tmp_path / "lvl" / "c", b'{"asset": x}', "bad.gltf")  # the x is at column 11
    draws, [diagnostic] = scan_file(path, root=tmp_path, chunk_name="lvl/c", level="lvl", config=WorldConfig())
    assert draws == [] and str(diagnostic).startswith("lvl/c/bad.gltf:1:11: error: invalid JSON")
    result = scan(path, tmp_path)
    assert result.failed and result.draws == [] and result.deps == [] and result.lights == ()
    assert [str(d) for d in result.diagnostics] == [str(diagnostic)]
    assert not scan(write(tmp_path / "lvl" / "c", document()), tmp_path).failed


def test_a_file_leading_out_of_the_root_is_refused_unless_its_folder_is_allowed(tmp_path: Path) -> None:
    real = write(tmp_path / "outside", document())
    link = tmp_path / "world" / "lvl" / "c" / "a.gltf"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    draws, [diagnostic] = scan_file(link, root=tmp_path / "world", chunk_name="lvl/c", level="lvl",
                                    config=WorldConfig())
    assert draws == [] and diagnostic.severity == "error"
    assert f"glTF file leads outside the allowed roots (to {real})" in diagnostic.message
    allowed = WorldConfig(allowed_roots=(Path("../outside"),))
    draws, diagnostics = scan_file(link, root=tmp_path / "world", chunk_name="lvl/c", level="lvl", config=allowed)
    assert len(draws) == 1 and diagnostics == []


def test_buffers_are_read_only_for_a_known_optional_fact(tmp_path: Path) -> None:
    path = write(tmp_path / "lvl" / "c", document())
    plain = scan(path, tmp_path)
    assert plain.deps == [] and plain.draws[0].facts.mesh.colorAllWhite is None
    unknown = scan(path, tmp_path, optional_facts=frozenset({"mesh.vertexCount"}))  # not a buffer fact
    assert unknown.deps == [] and unknown.draws[0].facts == plain.draws[0].facts
    wanted = scan(path, tmp_path, optional_facts=frozenset({"mesh.colorAllWhite"}))
    assert wanted.deps == [tmp_path / "lvl" / "c" / "mesh.bin"]
    assert wanted.draws[0].facts.mesh.colorAllWhite is True and wanted.diagnostics == []


def test_draws_go_to_grid_cells_on_a_chunked_level(tmp_path: Path) -> None:
    path = write(tmp_path / "lvl" / "c", document([(15, 0, 25), (-5, 0, 0)], lights=True))
    folders = scan(path, tmp_path)
    assert {d.facts.chunk.name for d in folders.draws} == {"lvl/c"}
    assert folders.lights == (("lvl/c", 0, 1, 1),)  # (chunk, directional, point, spot)
    grid = convert({"levels": {"lvl": {"chunking": {"grid": 10}}}}, WorldConfig)
    cells = scan(path, tmp_path, grid)
    # bounds 0..2 around each translation: centers (16, 1, 26) and (-4, 1, 1); a light node sits at its origin
    assert [d.facts.chunk.name for d in cells.draws] == ["lvl/x1_z2", "lvl/x-1_z0"]
    assert {d.facts.chunk.level for d in cells.draws} == {"lvl"}
    assert cells.lights == (("lvl/x-1_z0", 0, 0, 1), ("lvl/x1_z2", 0, 1, 0))


def test_only_the_default_scene_when_configured(tmp_path: Path) -> None:
    doc = document([(0, 0, 0), (1, 0, 0)])
    doc["scenes"] = [{"nodes": [0]}, {"nodes": [1]}]
    doc["scene"] = 1
    path = write(tmp_path / "lvl" / "c", doc)
    assert [d.node for d in scan(path, tmp_path).draws] == [0, 1]
    only_default = scan(path, tmp_path, WorldConfig(scenes="default"))
    assert [d.node for d in only_default.draws] == [1]


def test_files_of_one_scan_share_equal_facts(tmp_path: Path) -> None:
    shared = SharedFacts()
    first = scan(write(tmp_path / "lvl" / "c", document(), "a.gltf"), tmp_path, shared=shared)
    second = scan(write(tmp_path / "lvl" / "c", document(), "b.gltf"), tmp_path, shared=shared)
    assert second.draws[0].facts is first.draws[0].facts
    assert first.draws[0].signature == first.draws[0].facts.signature()
    alone = scan(tmp_path / "lvl" / "c" / "b.gltf", tmp_path)
    assert alone.draws[0].facts == first.draws[0].facts and alone.draws[0].facts is not first.draws[0].facts


def test_relative_name_is_posix_under_the_root_else_the_path_as_given(tmp_path: Path) -> None:
    assert relative_name(tmp_path / "lvl" / "c" / "a.gltf", tmp_path) == "lvl/c/a.gltf"
    assert relative_name(tmp_path / "lvl" / ".." / "b.glb", tmp_path) == "b.glb"
    outside = tmp_path.parent / "elsewhere.gltf"
    assert relative_name(outside, tmp_path) == outside.as_posix()


def test_recorded_dependencies_are_fresh_until_the_file_changes(tmp_path: Path) -> None:
    dep = tmp_path / "mesh.bin"
    dep.write_bytes(WHITE)
    recorded = stat_dep(dep)
    stat = os.stat(dep)
    assert recorded == (str(dep), stat.st_mtime_ns, stat.st_size, stat.st_ino, stat.st_ctime_ns)
    assert deps_fresh([recorded]) and deps_fresh([])
    assert deps_fresh([list(recorded)])  # as read back from a JSON record
    dep.write_bytes(WHITE + b"more")
    assert not deps_fresh([recorded])
    assert deps_fresh([stat_dep(dep)])
    current = stat_dep(dep)
    dep.unlink()
    assert not deps_fresh([current])
