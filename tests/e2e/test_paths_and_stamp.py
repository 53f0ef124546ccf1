"""Paths, links, UTF-8 and broken files never fool the cook: real `pipeline` processes and real glslang.

- a world given through a symlink that is re-pointed to another world: the next cook
  cooks the other world (the no-op stamp follows the link);
- folder links inside a world: followed when they lead inside the world or an allowed
  root (each file once), one located warning otherwise;
- a path given through a folder link stays in its world (its pipeline.toml);
- invalid UTF-8 in a .gltf string and in a GLB JSON chunk: one located error, exit 1,
  the rest cooks;
- a file that stops parsing keeps its chunk's keys and draws until it is deleted;
- a reader that opened the shader library just before a cook replaced it and the chunk
  index still gets a consistent pair: the new index with the new library.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from pipeline import api
from pipeline.cook import noop
from pipeline.outputs import read_outputs
from pipeline.outputs.manifest import ChunkManifest, load_chunk_manifest, stage_hashes
from pipeline.outputs.pak import LIBRARY_NAME, PakReader
from pipeline.structs import replace
from paths import REPO
from robust_helpers import document, glb, gltf_text, run_cli, write_good

WARNING = re.compile(r"^(?:warning: )?(?P<file>[^:\n]+): (?:warning: )?(?P<message>.+)$")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One compile cache for the module: the worlds here share their few keys."""
    return tmp_path_factory.mktemp("cache")


def masked() -> dict:
    """A triangle whose material needs other keys than :func:`document`'s."""
    doc = document()
    doc["materials"][0]["alphaMode"] = "MASK"
    return doc


def cook_cli(world, out, cache, *extra, cwd=None):
    return run_cli("cook", world, "--out", out, "--cache", cache, *extra, timeout=300, cwd=cwd)


def manifest(out: Path, chunk: str) -> ChunkManifest:
    return load_chunk_manifest(out / f"{chunk}.json")


def draw_files(doc: ChunkManifest) -> set[str]:
    return {d["file"] for d in doc.draws}


def drawn_keys(doc: ChunkManifest, file: str | None = None) -> set[str]:
    """The keys the draws of a chunk manifest (of one file) use."""
    return {use["key"] for d in doc.draws if file in (None, d["file"]) for use in d["passes"].values()}


# ---------------------------------------------------------------- class 6: the no-op stamp
def test_a_world_link_repointed_to_another_world_cooks_the_other_world(tmp_path, cache):
    write_good(tmp_path / "A", "alpha/c00/a.gltf", "gltf")
    (tmp_path / "B" / "beta" / "c00").mkdir(parents=True)
    (tmp_path / "B" / "beta" / "c00" / "b.gltf").write_bytes(gltf_text(masked()))
    link = tmp_path / "LINK"
    link.symlink_to("A")
    for _ in range(2):  # the second cook changes nothing and writes the no-op stamp
        done = cook_cli("LINK", "build", cache, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert list((cache / "noop-stamps").glob("*.json")), "the unchanged cook left no stamp to test"
    assert draw_files(manifest(tmp_path / "build", "alpha/c00")) == {"alpha/c00/a.gltf"}

    link.unlink()
    link.symlink_to("B")
    done = cook_cli("LINK", "build", cache, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert draw_files(manifest(tmp_path / "build", "beta/c00")) == {"beta/c00/b.gltf"}
    assert not (tmp_path / "build" / "alpha" / "c00.json").exists()  # the old world's chunk is gone from it
    again = cook_cli("LINK", "build", cache, cwd=tmp_path)  # B unchanged: nothing to write
    assert again.returncode == 0 and "0 of 4 output files written" in again.stdout, again.stdout
    assert draw_files(manifest(tmp_path / "build", "beta/c00")) == {"beta/c00/b.gltf"}


# ---------------------------------------------------------------- class 10: paths
def linked_world(tmp_path: Path) -> Path:
    """World W (allowed_roots = ../shared) with folder links: to the shared folder, to a folder
    outside every root, to a hidden folder of W, and two that reach folders W already holds."""
    world = tmp_path / "W"
    write_good(world, "forest/c00/tree.gltf", "gltf")
    write_good(world, ".store/rocks/stone.gltf", "gltf")
    (tmp_path / "shared" / "props").mkdir(parents=True)
    (tmp_path / "shared" / "props" / "crate.gltf").write_bytes(gltf_text(masked()))
    write_good(tmp_path, "elsewhere/c00/x.gltf", "gltf")
    (world / "pipeline.toml").write_text('level_depth = 1\nallowed_roots = ["../shared"]\n')
    (world / "props").symlink_to("../shared/props")
    (world / "outside").symlink_to("../elsewhere")
    (world / "rocks").symlink_to(".store/rocks")
    (world / "again").symlink_to("forest")
    (world / "forest" / "up").symlink_to("..")
    return world


def test_folder_links_followed_inside_the_roots_each_file_once_and_a_warning_otherwise(tmp_path, cache):
    world = linked_world(tmp_path)
    found = api.scan(world)
    assert sorted({d.source.file for d in found.draws}) == ["forest/c00/tree.gltf", "props/crate.gltf",
                                                            "rocks/stone.gltf"]
    assert len(found.draws) == 3 and found.errors == []
    assert sorted((w.file, w.severity) for w in found.warnings) == [
        ("again", "warning"), ("forest/up", "warning"), ("outside", "warning")]

    scanned = run_cli("scan", world, cwd=tmp_path)
    assert scanned.returncode == 0, scanned.stderr
    lines = [line for line in scanned.stderr.splitlines() if "warning" in line]
    assert sorted(WARNING.match(line)["file"] for line in lines) == ["W/again", "W/forest/up", "W/outside"]
    outside = next(line for line in lines if line.startswith("W/outside"))
    assert "outside the world" in outside and "allowed_roots" in outside

    done = cook_cli("W", "build", cache, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warned = [WARNING.match(line)["file"] for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert sorted(warned) == ["W/again", "W/forest/up", "W/outside"]
    assert draw_files(manifest(tmp_path / "build", "props")) == {"props/crate.gltf"}
    assert draw_files(manifest(tmp_path / "build", "rocks")) == {"rocks/stone.gltf"}
    assert not (tmp_path / "build" / "outside").exists() and not (tmp_path / "build" / "again.json").exists()


def test_a_path_through_a_folder_link_stays_in_its_world(tmp_path, cache):
    world = tmp_path / "W"
    write_good(world, "forest/c00/tree.gltf", "gltf")
    write_good(tmp_path / "shared", "levels/c00/crate.gltf", "gltf")
    (world / "pipeline.toml").write_text('level_depth = 2\nallowed_roots = ["../shared"]\n')
    (world / "linked").symlink_to("../shared/levels")
    (tmp_path / "TO_W").symlink_to("W")

    done = cook_cli("W/linked", "build", cache, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = manifest(tmp_path / "build", "linked/c00")  # named in W, with W's level_depth
    assert doc.level == "linked/c00" and draw_files(doc) == {"linked/c00/crate.gltf"}
    assert sorted(p.relative_to(tmp_path / "build").as_posix() for p in (tmp_path / "build").rglob("*.json")) == [
        "linked/c00.json", "linked/c00.level.json"]

    through = cook_cli("TO_W/forest", "build2", cache, cwd=tmp_path)  # a link to the world itself
    assert through.returncode == 0, through.stderr
    assert manifest(tmp_path / "build2", "forest/c00").level == "forest/c00"
    assert api.open_world(tmp_path / "W" / "linked").root == world.resolve()
    assert api.open_world(tmp_path / "W" / "linked").scope == "linked"


def test_invalid_utf8_in_a_gltf_string_and_a_glb_json_chunk_is_one_located_error(tmp_path, cache):
    world = tmp_path / "W"
    write_good(world, "forest/c00/tree.gltf", "gltf")
    named = document()
    named["nodes"][1]["name"] = "NAME"
    text = gltf_text(named)
    (world / "town" / "c00").mkdir(parents=True)
    (world / "town" / "c00" / "bad.gltf").write_bytes(text.replace(b"NAME", b"N\xffME"))
    line = text[:text.index(b"NAME")].count(b"\n") + 1
    col = text.index(b"NAME") - text.rfind(b"\n", 0, text.index(b"NAME")) + 1  # the bad byte after the N
    material = document(uri=None)
    material["materials"][0]["name"] = "MAT"
    chunk_json = json.dumps(material).encode()
    (world / "town" / "c00" / "bad.glb").write_bytes(glb(json_bytes=chunk_json.replace(b"MAT", b"M\xc3\x28T")))
    glb_col = chunk_json.index(b"MAT") + 2

    done = cook_cli(".", "build", cache, cwd=world)
    assert done.returncode == 1, done.stderr
    errors = sorted(line for line in done.stderr.splitlines() if ": error: " in line)
    assert errors == [f"town/c00/bad.glb:1:{glb_col}: error: invalid JSON: invalid UTF-8 (byte 0xC3)",
                      f"town/c00/bad.gltf:{line}:{col}: error: invalid JSON: invalid UTF-8 (byte 0xFF)"]
    assert "Traceback" not in done.stderr
    assert draw_files(manifest(world / "build", "forest/c00")) == {"forest/c00/tree.gltf"}
    assert draw_files(manifest(world / "build", "town/c00")) == set()


# ---------------------------------------------------------------- class 11: a broken file keeps its keys
def test_a_file_that_stops_parsing_keeps_its_keys_until_it_is_deleted(tmp_path, cache):
    world = tmp_path / "W"
    write_good(world, "forest/c00/tree.gltf", "gltf")
    rock = world / "forest" / "c00" / "rock.gltf"
    rock.write_bytes(gltf_text(masked()))
    out = tmp_path / "build"
    first = cook_cli(world, out, cache)
    assert first.returncode == 0, first.stderr
    good = manifest(out, "forest/c00")
    assert draw_files(good) == {"forest/c00/tree.gltf", "forest/c00/rock.gltf"}

    assert len(api.scan(world, cache=cache).draws) == 2  # a scan of its own (no optional facts), recorded

    rock.write_text('{"asset": \n')
    for extra in ((), (), ("--verify",)):  # the cook after the break, a no-op one, one trusting no record
        broken = cook_cli(world, out, cache, *extra, cwd=tmp_path)
        assert broken.returncode == 1, broken.stderr
        errors = [line for line in broken.stderr.splitlines() if ": error: " in line]
        assert errors == ["W/forest/c00/rock.gltf:2:1: error: invalid JSON: EOF while parsing a value"], errors
        kept = manifest(out, "forest/c00")
        assert kept.keys == good.keys and kept.draws == good.draws and kept.pipelines == good.pipelines
        assert [e["file"] for e in kept.errors] == ["forest/c00/rock.gltf"]
        assert stage_hashes(kept) <= set(PakReader(out / LIBRARY_NAME).hashes())
    scanned = api.scan(world, cache=cache)  # the library's scan keeps them too
    assert {d.source.file for d in scanned.draws} == {"forest/c00/tree.gltf", "forest/c00/rock.gltf"}
    assert [e.file for e in scanned.errors] == ["forest/c00/rock.gltf"]

    rock.unlink()
    gone = cook_cli(world, out, cache)
    assert gone.returncode == 0, gone.stderr
    after = manifest(out, "forest/c00")
    assert draw_files(after) == {"forest/c00/tree.gltf"} and after.errors == ()
    rock_only = drawn_keys(good, "forest/c00/rock.gltf") - drawn_keys(good, "forest/c00/tree.gltf")
    assert rock_only and not rock_only & drawn_keys(after)  # left as fallbacks at most
    assert all(after.keys[k].draws == 0 for k in rock_only if k in after.keys)


# ---------------------------------------------------------------- a reader during a cook
def test_a_reader_holding_a_replaced_library_reads_the_new_index_with_the_new_library(tmp_path, cache, monkeypatch):
    world, out = tmp_path / "W", tmp_path / "build"
    write_good(world, "forest/c00/tree.gltf", "gltf")
    shutil.copytree(REPO / "materials", world / "shaders")
    (world / "pipeline.toml").write_text('materials = "shaders"\n')
    assert api.cook(world, cache=cache, out=out, jobs=1).errors == []
    old_index = manifest(out, "forest/c00")
    old_library = PakReader(out / LIBRARY_NAME)
    common = world / "shaders" / "pbr" / "common.glsl"  # the next cook makes other blobs
    common.write_text(common.read_text().replace("3.14159265358979", "3.0"))

    real = read_outputs.mf.load_chunk_manifest
    calls = []

    def cook_then_read(path):
        """A cook runs after the reader opened the library and before it reads the chunk index."""
        if not calls:
            calls.append(path)
            assert api.cook(world, cache=cache, out=out, jobs=1).errors == []
        return real(path)

    monkeypatch.setattr(read_outputs.mf, "load_chunk_manifest", cook_then_read)
    held, library = read_outputs.load_chunk(out, "forest/c00")
    monkeypatch.undo()
    assert calls and held == replace(real(out / "forest" / "c00.json"), reflection=held.reflection)
    # the race happened: the new index names blobs the library the reader opened first lacks ...
    assert stage_hashes(held) != stage_hashes(old_index) and stage_hashes(held) - set(old_library.hashes())
    # ... and those the old index alone named are gone from the library on disk
    assert not (stage_hashes(old_index) - stage_hashes(held)) & set(PakReader(out / LIBRARY_NAME).hashes())
    assert stage_hashes(held) <= set(library.hashes()) and library.chunks["forest/c00"] == stage_hashes(held)
    assert set(held.reflection) == {d for d in stage_hashes(held) if library.reflection(d) is not None} != set()
    assert os.path.basename(library.name) == LIBRARY_NAME


def test_a_chunk_cook_s_stamp_covers_its_chunk_and_the_way_to_it_not_the_rest_of_the_world(tmp_path):
    world, cache = tmp_path / "world", tmp_path / "cache"
    shutil.copytree(REPO / "examples" / "sample_world", world)
    stamps = cache / "noop-stamps"

    def cook() -> tuple[dict, bool]:
        """(the cook's document, whether it was answered from its stamp: the stamp file left as it was)."""
        before = {p: p.stat().st_mtime_ns for p in stamps.glob("*.json")} if stamps.exists() else {}
        done = cook_cli(world, tmp_path / "out", cache, "--chunk", "town/market", "--json")
        assert done.returncode == 0, done.stderr
        after = {p: p.stat().st_mtime_ns for p in stamps.glob("*.json")}
        return json.loads(done.stdout), bool(before) and before == after

    cook()
    assert cook()[1] is True  # the cook stamped what the next identical cook prints
    (world / "forest" / "c00" / "extra.gltf").write_text(json.dumps(document()))  # another level's chunk
    (world / "town" / "square" / "extra.gltf").write_text(json.dumps(document()))  # same level, another chunk
    (stamp,) = stamps.glob("*.json")
    recorded = json.loads(stamp.read_text())  # its state as a digest, of the walks of these roots
    walked = {entry[0] for walk in noop._state(recorded["roots"], tuple(recorded["skip"]), []) for entry in walk}
    assert str(world / "town" / "market") in walked and str(world / "pipeline.toml") in walked
    assert not any(path.startswith(str(world / "forest") + os.sep) for path in walked)
    assert cook()[1] is True  # what it does not read changed: still answered from its stamp
    shutil.copy(next((world / "town" / "market").glob("*.gltf")), world / "town" / "market" / "copy.gltf")
    doc, stamped = cook()
    assert not stamped and any(p.endswith("market.json") for p in doc["written"])  # its own chunk changed
    assert cook()[1] is True
    (world / "pipeline.toml").write_text((world / "pipeline.toml").read_text() + "\n# edited\n")
    assert cook()[1] is False  # on the way to it: read by every cook
