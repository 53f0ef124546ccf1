"""The incremental cook (chunk records, outputs checked without reading blobs) against the full path.

Each scenario edits the sample world, then cooks it twice from the same state:
incrementally (the default) and with ``incremental=False`` (scan everything, run
every rule) on copies of the cache and outputs.  The ``--json`` documents and the
output files must be the same.  Every scenario runs on two layouts of the world:
as it is (``level_depth = 1``: chunk ``forest/c00``, level ``forest``) and moved
under ``levels/`` with ``level_depth = 2`` (chunk ``levels/forest/c00``, level
``levels/forest``, level manifest ``levels/forest.level.json``).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import pytest

from pipeline import api
from pipeline.compile.scheduler import JobRunner
from pipeline.keys import incremental as chunkcache
from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakReader
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
MATERIALS = ROOT / "materials"
RULES = ROOT / "rules"
SAMPLE_CHUNKS = ["forest/c00", "forest/c01", "forest/c02", "forest/c03", "town/interior", "town/market", "town/square",
                 "town/workshop"]
LAYOUTS = {"level_depth_1": "", "level_depth_2": "levels/"}  # layout -> folder holding the sample's levels


def make_world(dest: Path, prefix: str) -> None:
    """The sample world, its levels moved under ``prefix`` (with level_depth = 2 when there is one)."""
    shutil.copytree(SAMPLE, dest / prefix)
    if prefix:
        (dest / "pipeline.toml").write_text("level_depth = 2\n")


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def cold(request, tmp_path_factory):
    base = tmp_path_factory.mktemp("cold")
    make_world(base / "world", LAYOUTS[request.param])
    shutil.copytree(RULES, base / "rules")
    run_cook(base, base / "cache", base / "out", jobs=2)
    return base, LAYOUTS[request.param]


@pytest.fixture
def at(cold):
    """A sample-world name in this layout: ``at("forest/c00")`` is ``levels/forest/c00`` at depth 2."""
    return lambda name: cold[1] + name


@pytest.fixture
def site(cold, tmp_path):
    for name in ("world", "rules", "cache", "out"):
        shutil.copytree(cold[0] / name, tmp_path / name)
    run_cook(tmp_path, tmp_path / "cache", tmp_path / "out")  # records are per world root: warm them here
    return tmp_path


def run_cook(base: Path, cache: Path, out: Path, jobs: int = 1, **options):
    compiler = JobRunner(MATERIALS, "capi", jobs)
    world = api.open_world(base / "world", rules=base / "rules", materials=MATERIALS)
    return api.cook(world, cache=cache, out=out, jobs=jobs, compiler=compiler, **options), compiler


@pytest.fixture
def missed(monkeypatch):
    """The chunks each cook scanned and evaluated (its records missed)."""
    seen: list[list[str]] = []
    compute = chunkcache.compute_chunks

    def spy(world, store, root, missing, *args):
        seen.append([c.name for c in missing])
        return compute(world, store, root, missing, *args)

    monkeypatch.setattr(chunkcache, "compute_chunks", spy)
    return seen


def files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def comparable(doc: dict, out: Path) -> dict:
    doc = dict(doc)
    for name in ("outputs", "written", "removed"):
        doc[name] = sorted(Path(p).relative_to(out).as_posix() for p in doc[name])
    doc["changes"] = {**doc["changes"], "written": doc["written"], "removed": doc["removed"]}
    doc["explain"] = [{k: v for k, v in line.items() if k != "seconds"} for line in doc["explain"]]  # wall time
    # the reasons come from each output folder's own records (absent for the copy): the files must agree
    doc["explain_outputs"] = sorted(Path(item["path"]).relative_to(out).as_posix() for item in doc["explain_outputs"])
    doc.pop("timing_log")  # in each cache folder
    assert doc.pop("duration") >= 0  # wall time
    return doc


def both(site: Path, **options) -> tuple[dict, dict]:
    """Cook incrementally and fully from the same state; check they agree; return both documents."""
    shutil.copytree(site / "cache", site / "cache-full")
    shutil.copytree(site / "out", site / "out-full")
    inc, inc_compiler = run_cook(site, site / "cache", site / "out", **options)
    full, full_compiler = run_cook(site, site / "cache-full", site / "out-full", incremental=False, **options)
    a, b = comparable(inc.to_json(), site / "out"), comparable(full.to_json(), site / "out-full")
    assert a == b
    assert inc_compiler.calls == full_compiler.calls == len(inc.run.compiled)
    assert files(site / "out") == files(site / "out-full")
    shutil.rmtree(site / "cache-full")
    shutil.rmtree(site / "out-full")
    return a, b


@pytest.mark.slow
def test_noop_uses_records_only(site, missed):
    doc, _ = both(site)
    assert missed == [] and doc["compiled"] == 0 and doc["written"] == []
    assert doc["chunks"] == len(SAMPLE_CHUNKS) and doc["draws"] > 0 and doc["keys"] > 0


def test_level_manifests_land_beside_their_level_folders(site, at):
    out = site / "out"
    levels = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.level.json"))
    assert levels == [at("forest.level.json"), at("town.level.json")]       # never levels.level.json
    forest = mf.load_level_manifest(out / at("forest.level.json"))
    assert forest.level == at("forest")
    assert sorted(forest.chunks) == [at(c) for c in SAMPLE_CHUNKS if c.startswith("forest/")]
    chunk = mf.load_chunk_manifest(out / at("forest/c01.json"))
    assert (chunk.chunk, chunk.level) == (at("forest/c01"), at("forest"))
    assert sorted(out.rglob("*.pak")) == [mf.library_path(out)]  # one library for the whole folder


def test_edit_one_file(site, missed, at):
    path = site / "world" / at("forest/c00/terrain.gltf")
    doc = json.loads(path.read_text())
    for material in doc.get("materials", []):
        material["alphaMode"] = "MASK"
        material["doubleSided"] = True
    path.write_text(json.dumps(doc))
    result, _ = both(site)
    assert missed == [[at("forest/c00")]]
    assert at("forest/c00.json") in result["written"]


def test_add_file(site, missed, at):
    source = site / "world" / at("forest/c01/rocks.gltf")
    shutil.copy(source, site / "world" / at("forest/c02/rocks.gltf"))
    both(site)
    assert missed == [[at("forest/c02")]]


def test_delete_file(site, missed, at):
    (site / "world" / at("town/square/character.glb")).unlink()
    both(site)
    assert missed == [[at("town/square")]]


def test_delete_chunk_folder(site, missed, at):
    assert at("forest/c01") in PakReader(mf.library_path(site / "out")).chunks
    shutil.rmtree(site / "world" / at("forest/c01"))
    doc, _ = both(site)
    assert missed == [] and doc["chunks"] == len(SAMPLE_CHUNKS) - 1
    assert doc["removed"] == [at("forest/c01.json")]  # the output of a chunk that is gone
    assert not (site / "out" / at("forest/c01.json")).exists()
    library = PakReader(mf.library_path(site / "out"))  # settled: the chunk gone from its table, no blob left over
    indexes = _indexes(site / "out")
    assert at("forest/c01") not in library.chunks and set(library.chunks) == set(indexes)
    assert set(library) == {d for m in indexes.values() for d in mf.stage_hashes(m)}


def _indexes(out: Path) -> dict[str, mf.ChunkManifest]:
    """Every chunk index of an output folder, by chunk."""
    found = (mf.load_chunk_manifest(p) for p in sorted(out.rglob("*.json")) if not p.name.endswith(".level.json"))
    return {m.chunk: m for m in found}


def _buffer(rgb: float) -> tuple[bytes, bytes]:
    return struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0), struct.pack("<12f", *([rgb, rgb, rgb, 1.0] * 3))


def _tint(folder: Path, rgb: float) -> None:
    (folder.parent / "buffers").mkdir(exist_ok=True)
    (folder.parent / "buffers" / "tri.bin").write_bytes(b"".join(_buffer(rgb)))


def _triangle_with_colors(folder: Path, rgb: float) -> None:
    """A triangle whose vertex colors (every channel ``rgb``) live in a buffer outside its chunk's folder
    (``../buffers/tri.bin``), so only the chunk's record of what it read can tell that it changed."""
    positions, colors = _buffer(rgb)
    _tint(folder, rgb)
    (folder / "tri.gltf").write_text(json.dumps({
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "COLOR_0": 1}}]}],
        "buffers": [{"uri": "../buffers/tri.bin", "byteLength": len(positions) + len(colors)}],
        "bufferViews": [{"buffer": 0, "byteLength": len(positions)},
                        {"buffer": 0, "byteOffset": len(positions), "byteLength": len(colors)}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]},
                      {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC4"}]}))


def test_an_edited_external_buffer_rescans_its_chunk_and_changes_its_keys(site, missed, at):
    folder = site / "world" / at("forest/c02")
    _triangle_with_colors(folder, 1.0)  # white: the vertex colors change nothing
    white, _ = both(site)
    assert missed == [[at("forest/c02")]]
    missed.clear()
    both(site)
    assert missed == []  # the buffer is recorded with the chunk: nothing to scan again
    _tint(folder, 0.5)  # the buffer alone rewritten, same size: the chunk is read again
    tinted, _ = both(site)
    assert missed == [[at("forest/c02")]]
    assert tinted["keys"] > white["keys"] or tinted["written"]


def test_touch_file(site, missed, at):
    path = site / "world" / at("town/market/stalls.gltf")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    doc, _ = both(site)
    assert missed == [[at("town/market")]] and doc["compiled"] == 0 and doc["written"] == []


def test_rescanned_chunk_reuses_stored_rule_evaluations(site, missed, monkeypatch, at):
    from pipeline.keys import required as keys
    calls = []
    real = keys.evaluate
    monkeypatch.setattr(keys, "evaluate", lambda *args: calls.append(1) or real(*args))
    path = site / "world" / at("town/market/stalls.gltf")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    result, _ = run_cook(site, site / "cache", site / "out")
    assert missed == [[at("town/market")]] and calls == []          # every combination was evaluated before
    assert mf.load_chunk_manifest(site / "out" / at("town/market.json")).keys and result.errors == []
    rules = site / "rules" / "pbr.yaml"                           # new rules: nothing stored applies
    rules.write_text(rules.read_text() + "\n# changed\n")
    run_cook(site, site / "cache", site / "out")
    assert calls


def test_rule_change_recomputes_every_chunk(site, missed, at):
    path = site / "rules" / "pbr.yaml"
    path.write_text(path.read_text() + "\n# a comment changes the bytes\n")
    both(site)
    assert sorted(missed[0]) == [at(c) for c in SAMPLE_CHUNKS]


@pytest.mark.slow
def test_level_and_chunk_filters(site, missed, at):
    both(site, level=at("town"))
    both(site, chunk=at("forest/c02"))
    assert missed == []


@pytest.mark.slow
def test_broken_file_keeps_its_diagnostics(site, missed, at):
    (site / "world" / at("forest/c02/cabin.gltf")).write_text("{not json")
    first, _ = both(site)
    assert first["errors"] and missed == [[at("forest/c02")]]
    second, _ = both(site)  # from the record now
    assert second["errors"] == first["errors"]


# ------------------------------------------------------------------ outputs repaired without a blob read
@pytest.mark.slow
def test_deleted_library_is_restored(site):
    before = files(site / "out")
    pak = mf.library_path(site / "out")
    pak.unlink()
    result, _ = run_cook(site, site / "cache", site / "out")
    assert result.to_json()["written"] == [str(pak)]
    assert files(site / "out") == before


@pytest.mark.slow
def test_truncated_manifest_is_restored(site, at):
    before = files(site / "out")
    path = site / "out" / at("town/market.json")
    path.write_bytes(path.read_bytes()[:40])
    result, _ = run_cook(site, site / "cache", site / "out")
    assert str(path) in result.written
    assert files(site / "out") == before


@pytest.mark.slow
@pytest.mark.parametrize("where", ["blob", "truncate"])
def test_corrupt_library_is_restored(site, where):
    """A truncated library is rewritten by any cook; one with a flipped blob byte (its index still reads
    fine) by a cook with ``verify``, which checks the library's checksum."""
    before = files(site / "out")
    path = mf.library_path(site / "out")
    data = bytearray(path.read_bytes())
    reader = PakReader(bytes(data))
    offset = bytes(data).find(reader.get(reader.hashes()[0]))
    if where == "blob":
        data[offset + 9] ^= 0xFF  # a blob byte: the index still reads fine
    else:
        data = data[:-16]
    path.write_bytes(bytes(data))
    result, _ = run_cook(site, site / "cache", site / "out", verify=where == "blob")
    assert str(path) in result.written
    assert files(site / "out") == before


@pytest.mark.slow
def test_noop_reads_no_blob_for_outputs(site, monkeypatch):
    from pipeline.cache.store import Store

    run_cook(site, site / "cache", site / "out")  # the output checks are remembered
    reads = []
    original = Store.get_blob
    monkeypatch.setattr(Store, "get_blob", lambda self, digest: reads.append(digest) or original(self, digest))
    result, _ = run_cook(site, site / "cache", site / "out")
    # every job's blob is in the library the last cook settled: the cache check looks it up, reads none
    assert result.written == [] and result.plan.jobs and reads == []


@pytest.mark.slow
def test_deleted_level_manifest_is_restored(site, at):
    before = files(site / "out")
    path = site / "out" / at("town.level.json")
    path.unlink()
    result, _ = run_cook(site, site / "cache", site / "out")
    assert result.written == [str(path)]
    assert files(site / "out") == before


@pytest.mark.slow
def test_stale_chunk_manifest_rebuilds_level(site, at):
    """A chunk manifest changed on disk by someone else: rewritten, and its level manifest checked again."""
    before = files(site / "out")
    path = site / "out" / at("forest/c02.json")
    data = path.read_bytes()
    assert mf.load_chunk_manifest(path).keys and b'"draws":[[' in data
    path.write_bytes(data.replace(b'"draws":[[', b'"draws":[[1', 1))  # another draw's row
    result, _ = run_cook(site, site / "cache", site / "out")
    assert str(path) in result.written
    assert files(site / "out") == before


def test_a_chunk_record_whose_draws_are_gone_is_a_miss(site, missed, at):
    from pipeline.cache.store import Store
    from pipeline.keys.records import CHUNK_DRAWS, CHUNK_KEYS

    with Store(site / "cache") as store:
        records = {store.get(CHUNK_KEYS, fp)["name"]: fp for fp in store.keys(CHUNK_KEYS)}
        store.delete(CHUNK_DRAWS, records[at("town/market")])
    doc, _ = both(site)
    assert missed == [[at("town/market")]] and doc["compiled"] == 0
