"""The output folder's shader library kept exact (outputs/write_library.py): grow, settle, the chunk table beside it."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import orjson
import pytest

from pipeline import api
from pipeline.cache.store import Store
from pipeline.digest import bytes_hash, stable_hash
from pipeline.outputs import atomic, write_library
from pipeline.outputs import manifest as mf
from pipeline.stamps import stamp_of
from pipeline.outputs.chunk_table import ChunkTable, table_path
from pipeline.outputs.file_pieces import Held
from pipeline.outputs.pak import PakReader, read_head, read_index
from pipeline.outputs.pak_write import pak_parts, write_pak
from pipeline.outputs.reflection import reflect
from pipeline.outputs.index_walk import index_files
from pipeline.outputs.write_library import LIBRARY, SETTLED, Library, library_lock, settle_folder
from paths import SAMPLE_WORLD

NAMES = ("a", "b", "c", "d", "e")
TEXTS = {n: f"#version 300 es\n// blob {n}\nvoid main() {{}}\n".encode() for n in NAMES}  # GLSL ES text


@pytest.fixture
def site(tmp_path):
    with Store(tmp_path / "cache") as store:
        digests = {n: store.put_blob(blob) for n, blob in TEXTS.items() if n != "e"}  # "e" is in no store
        digests["e"] = bytes_hash(TEXTS["e"])
        yield store, tmp_path / "out", digests


def index(out: Path, chunk: str, *digests: str) -> Path:
    """A small real chunk index whose one key names ``digests`` (as stages s0, s1, ...)."""
    entry = mf.ManifestEntry(key="t/main{}", hash=stable_hash({"shader": "t", "pass": "main", "features": {}}),
                             shader="t", pass_name="main", features={},
                             stages={f"s{i}": d for i, d in enumerate(digests)}, draws=1)
    manifest = mf.chunk_manifest(chunk, chunk.split("/")[0], [entry])
    path = mf.chunk_manifest_path(out, chunk)
    atomic.write_atomic(path, mf.dump_json(manifest.to_json()))
    return path


def held(out: Path) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    found = read_index(mf.library_path(out))
    assert found is not None
    return found


def of(digests: dict, names: str) -> frozenset[str]:
    return frozenset(digests[n] for n in names)


def every_index_is_held(out: Path) -> bool:
    hashes = held(out)[0]
    return all(mf.stage_hashes(mf.load_chunk_manifest(p)) <= hashes for p in index_files(out))


class CountingLoads:
    def __init__(self, monkeypatch):
        self.paths, self.real = [], mf.load_chunk_manifest
        monkeypatch.setattr(write_library.mf, "load_chunk_manifest", self)

    def __call__(self, path):
        self.paths.append(Path(path))
        return self.real(path)


# ------------------------------------------------------------------ grow
def test_grow_adds_only_missing_blobs_and_writes_nothing_when_all_are_held(site, monkeypatch):
    store, out, d = site
    packed = []
    monkeypatch.setattr(write_library, "pak_parts", lambda *a, **k: packed.append(a[0]) or pak_parts(*a, **k))
    library = Library.open(out, store)
    assert not library.intact and library.hashes == frozenset()
    library.grow({"forest/c00": of(d, "ab")})
    assert library.written and held(out) == (of(d, "ab"), None)  # no table names the new library yet
    assert not library.table_written
    before = mf.library_path(out).stat()

    again = Library.open(out, store)
    again.grow({"forest/c00": of(d, "ab")})
    assert not again.written and mf.library_path(out).stat().st_mtime_ns == before.st_mtime_ns
    assert len(packed) == 1  # nothing was even packed

    store.delete_blob(d["a"])  # held blobs come from the library, only the new ones from the store
    more = Library.open(out, store)
    more.grow({"forest/c01": of(d, "c")})
    assert more.written and not more.errors and held(out)[0] == of(d, "abc") and len(packed) == 2
    assert PakReader(mf.library_path(out)).get(d["a"]) == TEXTS["a"]


def test_grow_leaves_the_chunk_table_to_settle_which_reads_it_as_the_replaced_library_had_it(site):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    Library.open(out, store).settle({})
    library = Library.open(out, store)
    library.grow({"town/x": of(d, "b")})
    assert held(out) == (of(d, "ab"), None)  # the table on disk names the library grow replaced
    assert library.chunks == {"forest/c00": of(d, "a")} and library.table_found  # read for that library
    index(out, "town/x", d["b"])
    library.settle({"town/x": of(d, "b")})
    assert library.table_written and held(out) == (of(d, "ab"), {"forest/c00": of(d, "a"), "town/x": of(d, "b")})


def test_grow_writes_nothing_when_every_blob_is_held_and_settle_brings_the_table_up_to_date(site):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    index(out, "town/x", d["b"])
    Library.open(out, store).settle({})
    library = Library.open(out, store)
    library.grow({"forest/c00": of(d, "ab")})  # both blobs are held (town/x names b)
    assert not library.written and held(out)[1]["forest/c00"] == of(d, "a")
    index(out, "forest/c00", d["a"], d["b"])  # the staged index in place
    assert every_index_is_held(out)
    library.settle({"forest/c00": of(d, "ab")})  # the table alone: the blobs are the same
    assert not library.written and library.table_written
    assert held(out) == (of(d, "ab"), {"forest/c00": of(d, "ab"), "town/x": of(d, "b")})


def test_a_cook_of_one_chunk_makes_no_other_chunk_s_table_entry_into_hashes(site, monkeypatch):
    store, out, d = site
    for i in range(20):
        index(out, f"forest/c{i:02d}", d["a"], d["b"])
    Library.open(out, store).settle({})
    made, real = [], ChunkTable.__getitem__
    monkeypatch.setattr(ChunkTable, "__getitem__", lambda self, chunk: made.append(chunk) or real(self, chunk))
    index(out, "forest/c03", d["c"])  # one chunk's index written again, naming another blob
    library = Library.open(out, store)
    library.grow({"forest/c03": of(d, "c")})
    library.settle({"forest/c03": of(d, "c")})
    assert library.written and set(made) == {"forest/c03"}
    assert held(out) == (of(d, "abc"), {**{f"forest/c{i:02d}": of(d, "ab") for i in range(20)}, "forest/c03": of(d, "c")})


# ------------------------------------------------------------------ settle
def test_a_chunk_using_other_blobs_the_library_holds_rewrites_the_table_and_not_the_library(site):
    """The edit an artist makes most: a chunk's keys change to others the world already uses."""
    store, out, d = site
    index(out, "forest/c00", d["a"])
    index(out, "town/x", d["b"])
    Library.open(out, store).settle({})
    library_before, table_before = mf.library_path(out).read_bytes(), table_path(mf.library_path(out)).read_bytes()
    stamp = stamp_of(mf.library_path(out))
    index(out, "forest/c00", d["a"], d["b"])
    library = Library.open(out, store)
    library.grow({"forest/c00": of(d, "ab")})
    library.settle({"forest/c00": of(d, "ab")})
    assert not library.written and library.table_written
    assert stamp_of(mf.library_path(out)) == stamp and mf.library_path(out).read_bytes() == library_before
    assert table_path(mf.library_path(out)).read_bytes() != table_before
    assert held(out) == (of(d, "ab"), {"forest/c00": of(d, "ab"), "town/x": of(d, "b")})
    again = Library.open(out, store)  # nothing changed since: neither is written
    again.settle({})
    assert not again.written and not again.table_written


def test_a_table_missing_or_of_another_library_is_made_again_from_the_indexes(site, monkeypatch):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    index(out, "town/x", d["b"])
    Library.open(out, store).settle({})
    table = table_path(mf.library_path(out))
    good = table.read_bytes()
    other = good.replace(b'"library":"', b'"library":"0')
    for damage, reason in ((table.unlink, "new"), (lambda: table.write_bytes(other), "missing, or written for another")):
        damage()
        loads = CountingLoads(monkeypatch)
        library = Library.open(out, store)
        assert library.chunks == {} and not library.table_found
        library.settle({})
        assert library.table_written and not library.written and len(loads.paths) == 2  # both indexes read
        assert table.read_bytes() == good and library.table_reason.startswith(reason)


def test_settle_keeps_exactly_the_blobs_of_the_indexes_on_disk(site):
    store, out, d = site
    index(out, "forest/c00", d["a"], d["b"])
    index(out, "town/square", d["b"], d["c"])
    library = Library.open(out, store)
    library.grow({"gone/chunk": of(d, "abcd")})
    library.settle({})
    assert held(out) == (of(d, "abc"), {"forest/c00": of(d, "ab"), "town/square": of(d, "bc")})
    assert not library.errors and every_index_is_held(out)
    record = store.get(LIBRARY, str(mf.library_path(out).resolve()))
    assert sorted(record[1]) == [str(out / "forest" / "c00.json"), str(out / "town" / "square.json")]


def test_settle_drops_the_blobs_of_a_deleted_index(site):
    store, out, d = site
    index(out, "forest/c00", d["a"], d["b"])
    index(out, "town/square", d["b"], d["c"])
    Library.open(out, store).settle({})
    (out / "town" / "square.json").unlink()
    Library.open(out, store).settle({})
    assert held(out) == (of(d, "ab"), {"forest/c00": of(d, "ab")})


def test_settle_drops_the_chunks_it_is_told_were_removed(site):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    index(out, "town/square", d["c"])
    Library.open(out, store).settle({}, removed=["town/square"])
    assert held(out) == (of(d, "a"), {"forest/c00": of(d, "a")})


def test_settle_trusts_the_table_for_unchanged_indexes_and_reads_one_changed_behind_its_back(site, monkeypatch):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    index(out, "forest/c01", d["b"])
    index(out, "town/square", d["c"])
    Library.open(out, store).settle({})  # no record yet: every index is read once

    loads = CountingLoads(monkeypatch)
    quiet = Library.open(out, store)
    quiet.settle({})
    assert loads.paths == [] and not quiet.written

    index(out, "forest/c01", d["b"], d["d"])  # rewritten by hand: a new stamp
    Library.open(out, store).settle({})
    assert loads.paths == [out / "forest" / "c01.json"]
    assert held(out)[1]["forest/c01"] == of(d, "bd") and d["d"] in held(out)[0]


def test_settle_takes_the_blobs_of_cooked_chunks_from_the_cook(site, monkeypatch):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    Library.open(out, store).settle({})
    loads = CountingLoads(monkeypatch)
    index(out, "forest/c00", d["b"])
    library = Library.open(out, store)
    library.grow({"forest/c00": of(d, "b")})
    library.settle({"forest/c00": of(d, "b")})
    assert held(out) == (of(d, "b"), {"forest/c00": of(d, "b")})
    assert loads.paths == []  # a cooked chunk's blobs are the cook's: its index is not read


def test_the_library_holds_every_blob_of_every_index_through_grow_write_settle(site):
    store, out, d = site
    index(out, "forest/c00", d["a"], d["b"])
    index(out, "town/square", d["c"])
    Library.open(out, store).settle({})
    assert every_index_is_held(out)
    # the next cook gives forest/c00 other blobs
    with library_lock(out):
        library = Library.open(out, store)
        library.grow({"forest/c00": of(d, "d")})
        assert every_index_is_held(out) and held(out)[0] == of(d, "abcd")
        index(out, "forest/c00", d["d"])
        assert every_index_is_held(out)
        library.settle({"forest/c00": of(d, "d")})
    assert every_index_is_held(out)
    assert held(out) == (of(d, "cd"), {"forest/c00": of(d, "d"), "town/square": of(d, "c")})


def test_a_blob_in_neither_store_nor_library_is_an_error_and_drops_its_chunk_from_the_table(site):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    index(out, "town/square", d["b"], d["e"])
    library = Library.open(out, store)
    library.settle({})
    assert len(library.errors) == 1 and "town/square" in library.errors[0] and "cook those chunks again" in \
        library.errors[0]
    hashes, table = held(out)
    assert table == {"forest/c00": of(d, "a")} and d["e"] not in hashes and d["a"] in hashes


def test_verify_rewrites_a_library_whose_bytes_are_damaged(site):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    Library.open(out, store).settle({})
    path = mf.library_path(out)
    data = bytearray(path.read_bytes())
    at = data.index(TEXTS["a"])
    data[at] ^= 1  # a blob byte: the index still reads, the checksum and the blob hash do not hold
    path.write_bytes(bytes(data))
    assert not Library.open(out, store).intact  # its stamp is not the recorded one: read whole, found damaged
    record = store.get(LIBRARY, str(path.resolve()))  # bytes that rot on disk move no stamp
    store.set(LIBRARY, str(path.resolve()), [list(stamp_of(path)), record[1]])
    store.set(SETTLED, str(path.resolve()), list(stamp_of(path)))
    assert Library.open(out, store).intact
    library = Library.open(out, store, verify=True)
    assert not library.intact
    library.settle({})
    PakReader(path).verify()
    assert library.written and PakReader(path).get(d["a"]) == TEXTS["a"]


def test_a_missing_library_is_written_again_by_settle(site):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    Library.open(out, store).settle({})
    mf.library_path(out).unlink()
    library = Library.open(out, store)
    library.settle({})
    assert library.written and held(out) == (of(d, "a"), {"forest/c00": of(d, "a")})


# ------------------------------------------------------------------ reflections
@pytest.fixture(scope="module")
def spirv(tmp_path_factory) -> dict[str, bytes]:
    """Real SPIR-V blobs: those of the sample world cooked with the real compiler."""
    if shutil.which("spirv-cross") is None:
        pytest.skip("spirv-cross (Debian package) is not installed; it reflects the blobs")
    tmp = tmp_path_factory.mktemp("spirv")
    result = api.cook(api.open_world(SAMPLE_WORLD), cache=tmp / "cache", out=tmp / "out", jobs=2)
    assert result.ok, result.errors
    reader = PakReader(mf.library_path(tmp / "out"))
    return {digest: reader.get(digest) for digest in reader.hashes()[:2]}


def test_reflections_are_kept_for_spirv_blobs_and_none_for_text(site, spirv):
    store, out, d = site
    for blob in spirv.values():
        store.put_blob(blob)
    index(out, "forest/c00", d["a"], *spirv)
    library = Library.open(out, store)
    library.grow({"forest/c00": frozenset({d["a"], *spirv})})
    reader = PakReader(mf.library_path(out))
    assert reader.reflection(d["a"]) is None
    for digest, blob in spirv.items():
        assert reader.reflection(digest) == reflect(blob) and reader.reflection(digest)["stage"]
    assert not library.warnings

    for digest in spirv:  # a later rewrite keeps the reflections from the library itself
        store.delete_blob(digest)
    index(out, "town/square", d["b"])
    library = Library.open(out, store)
    library.settle({})
    reader = PakReader(mf.library_path(out))
    assert library.written and d["b"] in reader
    assert {digest: reader.reflection(digest) for digest in spirv} == {g: reflect(b) for g, b in spirv.items()}


def test_a_rewrite_copying_held_blobs_gives_the_bytes_a_write_from_the_store_gives(site, spirv, tmp_path, monkeypatch):
    store, out, d = site
    for blob in spirv.values():
        store.put_blob(blob)
    first = {"forest/c00": frozenset({d["a"], *spirv})}
    Library.open(out, store).grow(first)  # reflections made from the store's blobs
    library = Library.open(out, store)
    copied, copy_to = [], Held.copy_to
    monkeypatch.setattr(Held, "copy_to", lambda self, *a: copied.append(self.size) or copy_to(self, *a))
    library.grow({"town/square": of(d, "b")})  # held blobs and reflections copied as they are
    assert library.written and len(copied) == len(first["forest/c00"])  # file to file, none read
    table = {**first, "town/square": of(d, "b")}
    blobs = {g: store.get_blob(g) for g in frozenset().union(*table.values())}
    fresh = write_pak(blobs, {g: reflect(b) if g in spirv else None for g, b in blobs.items()})
    assert mf.library_path(out).read_bytes() == fresh


# ------------------------------------------------------------------ the folder
def test_settle_folder_drops_what_no_index_names_and_creates_no_library(site, tmp_path):
    store, out, d = site
    index(out, "forest/c00", d["a"])
    index(out, "town/square", d["b"])
    Library.open(out, store).settle({})
    (out / "town" / "square.json").unlink()
    settle_folder(out, store)
    assert held(out) == (of(d, "a"), {"forest/c00": of(d, "a")})
    empty = tmp_path / "empty"
    index(empty, "forest/c00", d["a"])
    settle_folder(empty, store)
    assert not mf.library_path(empty).exists()


def test_index_files_are_the_json_files_but_level_manifests_hidden_folders_and_temps(site):
    store, out, d = site
    chunks = [index(out, c, d["a"]) for c in ("forest/c00", "forest/deep/c01", "town")]
    (out / "forest.level.json").write_bytes(b"{}")
    (out / ".history").mkdir()
    (out / ".history" / "c00.json").write_bytes(b"{}")
    atomic.temp_path_for(out / "forest" / "c02.json").write_bytes(b"{}")
    (out / "notes.txt").write_bytes(b"x")
    (out / "other.json").write_bytes(b"{}")
    assert index_files(out) == sorted(str(p) for p in [*chunks, out / "other.json"])
    Library.open(out, store).settle({})  # a JSON file that is not a chunk index is no chunk of the table
    assert set(held(out)[1]) == {"forest/c00", "forest/deep/c01", "town"}
    mf.library_path(out).write_bytes(write_pak({}))  # a library written by another tool: its table is read again
    Library.open(out, store).settle({})
    assert set(held(out)[1]) == {"forest/c00", "forest/deep/c01", "town"}


def test_held_blobs_are_the_library_s_as_the_last_settle_left_it(site):
    store, out, d = site
    assert write_library.held_blobs(out, store) == frozenset()  # no library
    index(out, "forest/c00", d["a"], d["b"])
    Library.open(out, store).settle({})
    assert write_library.held_blobs(out, store) == of(d, "ab")
    data = mf.library_path(out).read_bytes()
    mf.library_path(out).write_bytes(data)  # the same bytes written by something else: its stamp changed
    assert write_library.held_blobs(out, store) == frozenset()
    Library.open(out, store).settle({})  # checked whole and recorded again
    assert write_library.held_blobs(out, store) == of(d, "ab")


def test_the_table_is_read_by_settle_not_by_open_or_grow(site, monkeypatch):
    """A one-chunk edit's library work before its index is in place reads no chunk table (a large world's
    is a thousand chunks' entries); settle reads it once, after."""
    store, out, d = site
    index(out, "forest/c00", d["a"])
    index(out, "town/x", d["b"])
    Library.open(out, store).settle({})
    loads = []
    real = write_library.read_table
    monkeypatch.setattr(write_library, "read_table", lambda *a, **k: loads.append(a) or real(*a, **k))
    library = Library.open(out, store)
    library.grow({"forest/c00": of(d, "ac")})
    assert loads == [] and library.written
    index(out, "forest/c00", d["a"], d["c"])
    library.settle({"forest/c00": of(d, "ac")})
    assert len(loads) == 1 and library.table_written
    assert held(out) == (of(d, "abc"), {"forest/c00": of(d, "ac"), "town/x": of(d, "b")})


# ------------------------------------------------------------------ the table and the counts a settle trusts
def record_of(store: Store, out: Path) -> list:
    return store.get(LIBRARY, str(mf.library_path(out).resolve()))


def users_in_file(out: Path) -> list[int]:
    """How many chunks of the table file name each blob of the library, counted from the files."""
    hashes, _ = read_head(mf.library_path(out))
    count = [0] * len(hashes)
    for at in orjson.loads(table_path(mf.library_path(out)).read_bytes())["chunks"].values():
        for i in at:
            count[i] += 1
    return count


def rebuilt(out: Path, store: Store, at: Path) -> tuple[bytes, bytes]:
    """The library's and the table's bytes a settle with no record leaves: ``out`` copied to ``at`` but its
    table, and settled with ``store`` (which never saw ``at``)."""
    shutil.copytree(out, at)
    table_path(mf.library_path(at)).unlink()
    Library.open(at, store).settle({})
    return mf.library_path(at).read_bytes(), table_path(mf.library_path(at)).read_bytes()


class Calls:
    """Calls of ChunkTable methods: the full check of a table read, the count of every entry, entries decoded."""

    def __init__(self, monkeypatch):
        self.checked, self.counted, self.decoded = [], [], []
        read, users, positions = ChunkTable.read.__func__, ChunkTable.users, ChunkTable.positions
        monkeypatch.setattr(ChunkTable, "read", classmethod(lambda cls, *a: self.checked.append(1) or read(cls, *a)))
        monkeypatch.setattr(ChunkTable, "users", lambda table: self.counted.append(1) or users(table))
        monkeypatch.setattr(ChunkTable, "positions", lambda table, c: self.decoded.append(c) or positions(table, c))

    def clear(self) -> None:
        self.checked.clear(), self.counted.clear(), self.decoded.clear()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_seeded_settles_keep_the_recorded_counts_those_of_the_table_and_its_bytes_the_rebuild_s(
        site, tmp_path, monkeypatch, seed):
    """Chunks cooked, edited behind the cook's back, removed, blobs entering and leaving the library: after the
    first settle every one reads the table it left unchecked and counts from the record, and leaves the bytes
    (and the counts) a settle with no record gives."""
    store, out, d = site
    rng = random.Random(seed)
    blobs = sorted({*d.values(), *(store.put_blob(f"// extra {i}\n".encode()) for i in range(6))} - {d["e"]})
    chunks = ["forest/c00", "forest/c01", "forest/c02", "forest/deep/c03", "town/x", "town/y"]
    calls = Calls(monkeypatch)
    with Store(tmp_path / "rebuild-cache") as other:
        for step in range(24):
            chunk, used = rng.choice(chunks), frozenset(rng.sample(blobs, rng.randint(0, 4)))
            op = rng.choice(["cook", "cook", "edit", "remove", "none"]) if step else "cook"
            calls.clear()
            with library_lock(out):
                library = Library.open(out, store)
                if op == "cook":
                    library.grow({chunk: used})
                    index(out, chunk, *sorted(used))
                elif op == "edit":  # behind the cook's back: a stamp of its own even within the clock's tick
                    os.utime(index(out, chunk, *sorted(used)), ns=(step * 10**9, step * 10**9))
                elif op == "remove":
                    mf.chunk_manifest_path(out, chunk).unlink(missing_ok=True)
                library.settle({chunk: used} if op == "cook" else {},
                               removed=[chunk] if op == "remove" and rng.random() < 0.5 else [])
            assert not library.errors
            if step:
                assert calls.checked == calls.counted == [], (step, op)  # the table and counts it left: trusted
                assert set(calls.decoded) <= {chunk} or library.written, (step, op, calls.decoded)
            on_disk = {mf.load_chunk_manifest(p).chunk: mf.stage_hashes(mf.load_chunk_manifest(p))
                       for p in index_files(out)}
            assert held(out) == (frozenset().union(*on_disk.values()), on_disk)
            record = record_of(store, out)
            assert record[2] == {"table": list(stamp_of(table_path(mf.library_path(out)))), "users": users_in_file(out)}
            assert rebuilt(out, other, tmp_path / f"copy{step}") == \
                (mf.library_path(out).read_bytes(), table_path(mf.library_path(out)).read_bytes())


def test_a_one_chunk_cook_decodes_no_other_entry_and_writes_the_others_back_as_they_were(site, tmp_path, monkeypatch):
    store, out, d = site
    for i in range(20):
        index(out, f"forest/c{i:02d}", d["a"], d["b"])
    index(out, "town/x", d["c"])
    Library.open(out, store).settle({})
    calls = Calls(monkeypatch)
    index(out, "forest/c03", d["a"], d["c"])  # blobs the library holds: the table alone is written
    library = Library.open(out, store)
    library.grow({"forest/c03": of(d, "ac")})
    library.settle({"forest/c03": of(d, "ac")})
    assert not library.written and library.table_written
    assert calls.checked == calls.counted == [] and set(calls.decoded) == {"forest/c03"}
    assert record_of(store, out)[2]["users"] == users_in_file(out)
    index(out, "town/x", d["d"])  # c leaves the library (forest/c03 still names it), d enters
    calls.clear()
    library = Library.open(out, store)
    library.grow({"town/x": of(d, "d")})
    library.settle({"town/x": of(d, "d")})
    assert library.written and calls.checked == calls.counted == []  # positions moved: entries mapped, not counted
    assert record_of(store, out)[2]["users"] == users_in_file(out)
    with Store(tmp_path / "other") as other:
        assert rebuilt(out, other, tmp_path / "copy") == \
            (mf.library_path(out).read_bytes(), table_path(mf.library_path(out)).read_bytes())
    calls.clear()
    Library.open(out, store, verify=True).settle({})  # --verify: the table read and checked whole, whatever its stamp
    assert len(calls.checked) == len(calls.counted) == 1
    assert record_of(store, out)[2]["users"] == users_in_file(out)


@pytest.mark.parametrize("damage", ["same bytes", "by hand", "no counts", "counts short", "counts negative",
                                    "counts not ints", "binding not a dict", "old record"])
def test_an_edited_table_or_counts_that_do_not_fit_are_read_or_counted_whole(site, tmp_path, monkeypatch, damage):
    store, out, d = site
    index(out, "forest/c00", d["a"], d["b"])
    index(out, "town/x", d["b"], d["c"])
    Library.open(out, store).settle({})
    table, key = table_path(mf.library_path(out)), str(mf.library_path(out).resolve())
    record = record_of(store, out)
    if damage == "same bytes":  # written again by something else: another stamp
        table.write_bytes(table.read_bytes())
    elif damage == "by hand":  # still this library's table, not as a settle writes it
        table.write_bytes(orjson.dumps(orjson.loads(table.read_bytes()), option=orjson.OPT_INDENT_2))
    else:
        bound = {"no counts": {"table": record[2]["table"]}, "counts short": {**record[2], "users": [1]},
                 "counts negative": {**record[2], "users": [-1, 1, 1]},
                 "counts not ints": {**record[2], "users": ["1", 1, 1]}, "binding not a dict": [record[2]]}
        store.set(LIBRARY, key, record[:2] + ([] if damage == "old record" else [bound[damage]]))
    calls = Calls(monkeypatch)
    library = Library.open(out, store)
    library.settle({})
    table_read = damage in ("same bytes", "by hand", "binding not a dict", "old record")
    assert len(calls.checked) == table_read and len(calls.counted) == 1 and not library.table_written
    if damage == "by hand":  # left as it is (as before), so not trusted: read whole again next time
        assert len(record_of(store, out)) == 2
        Library.open(out, store).settle({})
        assert len(calls.checked) == 2
    else:
        assert record_of(store, out)[2] == {"table": list(stamp_of(table)), "users": users_in_file(out)}
    calls.clear()
    index(out, "forest/c00", d["c"], d["d"])  # a settle that changes the table and the library
    library = Library.open(out, store)
    library.grow({"forest/c00": of(d, "cd")})
    library.settle({"forest/c00": of(d, "cd")})
    assert library.written and library.table_written
    assert len(calls.counted) == len(calls.checked) == (damage == "by hand")
    assert record_of(store, out)[2] == {"table": list(stamp_of(table)), "users": users_in_file(out)}
    with Store(tmp_path / "other") as other:
        assert rebuilt(out, other, tmp_path / "copy") == (mf.library_path(out).read_bytes(), table.read_bytes())
