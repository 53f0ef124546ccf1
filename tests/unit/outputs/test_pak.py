"""The shader library (shaders.pak, version 3): layout, round trip, the chunk table beside it, determinism,
corruption, versions."""

from __future__ import annotations

import struct

import orjson
import pytest

from library_helpers import write_library
from pipeline.errors import PipelineError
from pipeline.outputs.chunk_table import table_path
from pipeline.outputs.pak import (
    ALIGNMENT,
    ENTRY,
    FORMAT_VERSION,
    HEADER,
    LIBRARY_NAME,
    MAGIC,
    PakCorruptError,
    PakError,
    PakReader,
    PakVersionError,
    _checksum,
    pak_intact,
    read_index,
)
from pipeline.outputs.pak_write import blobs_by_hash, dump_reflection, write_pak

BLOBS = [b"\x03\x02\x23\x07" + bytes(range(n)) for n in (5, 12, 1, 30)]
TEXT = b"#version 300 es\nvoid main() {}\n"  # a GLSL ES text blob: no reflection


@pytest.fixture
def blobs() -> dict[str, bytes]:
    return blobs_by_hash([*BLOBS, TEXT])


def reflection_of(blobs: dict[str, bytes]) -> dict[str, dict | None]:
    return {h: None if b == TEXT else {"stage": "fragment", "size": len(b)} for h, b in blobs.items()}


def chunks_of(blobs: dict[str, bytes]) -> dict[str, list[str]]:
    hashes = sorted(blobs)
    return {"forest/c00": hashes[:3], "town/square": hashes[2:], "empty": []}


@pytest.fixture
def library(blobs) -> bytes:
    return write_pak(blobs, reflection_of(blobs))


def fix_checksum(data: bytearray) -> bytes:
    data[32:64] = _checksum(data)
    return bytes(data)


def test_round_trip(blobs, library, tmp_path):
    path = tmp_path / LIBRARY_NAME
    assert write_library(path, blobs, reflection_of(blobs), chunks_of(blobs)) == library
    table = {c: frozenset(hs) for c, hs in chunks_of(blobs).items()}
    for reader in (PakReader(library), PakReader(path), PakReader(str(path))):
        assert reader.hashes() == sorted(blobs)
        assert len(reader) == len(blobs)
        assert all(reader.get(h) == blob for h, blob in blobs.items())
        assert dict(reader.items()) == blobs
        assert {h: reader.reflection(h) for h in reader} == reflection_of(blobs)
        assert reader.chunks == ({} if reader.name == "<bytes>" else table)  # the table is the file beside it
        reader.verify()
    assert read_index(path) == (frozenset(blobs), table)
    assert pak_intact(path) and not pak_intact(tmp_path / "missing.pak")


def test_a_table_beside_another_library_is_not_read(blobs, tmp_path):
    """The table names the library it was written for by its checksum: beside another one (a cook killed
    between the two renames, a library copied alone) it is not this library's table."""
    path = tmp_path / LIBRARY_NAME
    write_library(path, blobs, reflection_of(blobs), chunks_of(blobs))
    table = table_path(path).read_bytes()
    write_library(path, blobs, None)  # the same blobs, other reflections: another checksum
    table_path(path).write_bytes(table)
    assert PakReader(path).chunks == {} and read_index(path) == (frozenset(blobs), None)
    table_path(path).unlink()
    assert PakReader(path).chunks == {} and read_index(path) == (frozenset(blobs), None)


def test_reader_api(blobs, library):
    reader = PakReader(library)
    some = next(iter(blobs))
    assert some in reader and "0" * 64 not in reader
    assert list(reader) == reader.hashes()
    assert reader.version == FORMAT_VERSION == 3 and reader.alignment == ALIGNMENT
    for missing in (reader.get, reader.reflection):
        with pytest.raises(KeyError):
            missing("0" * 64)


def test_empty_library():
    reader = PakReader(write_pak({}))
    assert reader.hashes() == [] and len(reader) == 0 and reader.chunks == {}
    reader.verify()


def test_dedup():
    assert len(blobs_by_hash([b"a", b"a", b"b"])) == 2
    assert write_pak(blobs_by_hash([b"a", b"b", b"a"])) == write_pak(blobs_by_hash([b"b", b"a"]))


def test_deterministic_across_insertion_orders(blobs, library):
    reordered = dict(reversed(list(blobs.items())))
    assert list(reordered) != list(blobs)
    reflection = dict(reversed(list(reflection_of(blobs).items())))
    assert write_pak(reordered, reflection) == library


def test_the_table_is_deterministic_across_orders(blobs, tmp_path):
    first, second = tmp_path / "a" / LIBRARY_NAME, tmp_path / "b" / LIBRARY_NAME
    first.parent.mkdir(), second.parent.mkdir()
    write_library(first, blobs, reflection_of(blobs), chunks_of(blobs))
    chunks = {c: list(reversed(hs)) + hs for c, hs in reversed(list(chunks_of(blobs).items()))}
    write_library(second, dict(reversed(list(blobs.items()))), reflection_of(blobs), chunks)
    assert table_path(first).read_bytes() == table_path(second).read_bytes()


def test_layout_header_entries_reflections_and_chunk_table(blobs, library, tmp_path):
    data = library
    magic, version, count, alignment, reserved, size, checksum, zero_a, zero_b = HEADER.unpack_from(data)
    assert HEADER.size == 80 and ENTRY.size == 64
    assert (magic, version, count, alignment, reserved, size) == (MAGIC, 3, len(blobs), ALIGNMENT, 0, len(data))
    assert zero_a == zero_b == 0
    assert checksum == _checksum(data)
    entries = [ENTRY.unpack_from(data, HEADER.size + ENTRY.size * i) for i in range(count)]
    digests = [e[0] for e in entries]
    assert digests == sorted(digests) and len(set(digests)) == count
    index_end = HEADER.size + ENTRY.size * count
    ends = []
    for digest, offset, length, text_at, text_size in entries:
        assert offset % ALIGNMENT == 0 and offset >= index_end
        assert data[offset:offset + length] == blobs[digest.hex()]
        expected = reflection_of(blobs)[digest.hex()]
        assert data[text_at:text_at + text_size] == dump_reflection(expected)
        assert text_size == (0 if expected is None else len(orjson.dumps(expected, option=orjson.OPT_SORT_KEYS)))
        if text_size:
            assert text_at % ALIGNMENT == 0 and text_at >= offset + length
        ends.append(max(offset + length, text_at + text_size))
    assert len(data) == max(ends) + (-max(ends) % ALIGNMENT) and not any(data[max(ends):])
    path = tmp_path / LIBRARY_NAME
    write_library(path, blobs, reflection_of(blobs), chunks_of(blobs))
    table = orjson.loads(table_path(path).read_bytes())
    hashes = sorted(blobs)
    assert table == {"chunks": {c: sorted(hashes.index(h) for h in hs) for c, hs in chunks_of(blobs).items()},
                     "format": 1, "library": checksum.hex()}
    assert table_path(path).read_bytes() == orjson.dumps(table, option=orjson.OPT_SORT_KEYS)
    assert table_path(path).name == "shaders.chunks"


def test_key_must_be_the_blob_hash():
    with pytest.raises(ValueError):
        write_pak({"vertex": b"abc"})


def test_a_chunk_naming_a_blob_not_given_is_refused(blobs, tmp_path):
    with pytest.raises(KeyError):
        write_library(tmp_path / LIBRARY_NAME, blobs, chunks={"forest/c00": ["0" * 64]})


def test_every_flipped_byte_is_detected(library):
    for position in range(len(library)):
        broken = bytearray(library)
        broken[position] ^= 0x40
        with pytest.raises(PakError):
            PakReader(bytes(broken)).verify()


def test_the_checksum_covers_all_but_the_blobs_whose_digests_it_covers(blobs, library):
    """A blob's bytes are checked against its digest in the index, which the checksum covers; so writing
    the library again hashes its header, index, padding and reflections, not every blob again."""
    first = ENTRY.unpack_from(library, HEADER.size)
    broken = bytearray(library)
    broken[first[1]] ^= 0x40  # a byte of the first blob
    assert _checksum(broken) == _checksum(library) == library[32:64]
    with pytest.raises(PakCorruptError, match="does not match its hash"):
        PakReader(bytes(broken)).verify()
    padded = bytearray(library)
    padded[first[1] + first[2]] ^= 0x40 if (first[1] + first[2]) % ALIGNMENT else 0  # padding after it
    reflection = bytearray(library)
    reflection[first[3]] ^= 0x40  # its reflection's first byte
    for damaged in (padded, reflection):
        if damaged != library:
            assert _checksum(damaged) != _checksum(library)


def test_every_truncation_is_detected(library, tmp_path):
    path = tmp_path / LIBRARY_NAME
    for length in range(len(library)):
        with pytest.raises(PakCorruptError):
            PakReader(library[:length])
        path.write_bytes(library[:length])
        assert read_index(path) is None


def test_wrong_magic():
    data = bytearray(write_pak(blobs_by_hash([b"x"])))
    data[:4] = b"RIFF"
    with pytest.raises(PakCorruptError, match="magic"):
        PakReader(bytes(data))
    with pytest.raises(PakCorruptError, match="magic"):
        PakReader(b"")


def _entry_offset(i: int, field: int) -> int:
    """Where field ``field`` (0 digest, 1 offset, 2 size, 3 reflection offset, 4 reflection size) of entry ``i`` is."""
    return HEADER.size + ENTRY.size * i + (0, 32, 40, 48, 56)[field]


def _swap_entries(data: bytearray) -> None:
    first, second = HEADER.size, HEADER.size + ENTRY.size
    a, b = bytes(data[first:second]), bytes(data[second:second + ENTRY.size])
    data[first:second], data[second:second + ENTRY.size] = b, a


def _set_u64(at: int, value) -> callable:
    return lambda data: struct.pack_into("<Q", data, at, value(data) if callable(value) else value)


@pytest.mark.parametrize("damage, match", [
    (_swap_entries, "out of order"),
    (lambda d: d.__setitem__(slice(_entry_offset(1, 0), _entry_offset(1, 1)), d[_entry_offset(0, 0):_entry_offset(0, 1)]),
     "out of order or duplicated"),
    (_set_u64(_entry_offset(0, 1), 3), "outside the file"),                         # a misaligned blob
    (_set_u64(_entry_offset(0, 1), 8), "outside the file"),                         # a blob inside the index
    (_set_u64(_entry_offset(0, 2), 1 << 40), "outside the file"),                   # a blob past the end
    (_set_u64(_entry_offset(0, 3), lambda d: len(d) - 4), "outside the file"),     # a reflection past the end
    (_set_u64(_entry_offset(0, 4), 1 << 20), "outside the file"),
    (_set_u64(12, 1 << 20), "bad header"),                                          # more entries than fit
    (_set_u64(64, 1 << 40), "bad header"),                                          # reserved bytes set
    (_set_u64(72, 1), "bad header"),
    (lambda d: struct.pack_into("<I", d, 16, 3), "bad header"),                     # alignment
])
def test_corrupt_structure_is_refused_by_the_reader_and_by_read_index(library, tmp_path, damage, match):
    data = bytearray(library)
    damage(data)
    data = fix_checksum(data)  # a consistent checksum: the structure alone is what is wrong
    with pytest.raises(PakCorruptError, match=match):
        PakReader(data).verify()
    path = tmp_path / LIBRARY_NAME
    path.write_bytes(data)
    assert read_index(path) is None


def test_a_reflection_that_is_not_an_object_is_corrupt(blobs):
    digest = sorted(blobs)[0]
    data = bytearray(write_pak(blobs, {digest: {"stage": "vertex"}}))
    text_at, text_size = ENTRY.unpack_from(data, HEADER.size)[3:]
    data[text_at:text_at + text_size] = b"[1]".ljust(text_size)
    reader = PakReader(fix_checksum(data))
    with pytest.raises(PakCorruptError, match="not an object"):
        reader.reflection(digest)
    data[text_at:text_at + text_size] = b"{".ljust(text_size)
    with pytest.raises(PakCorruptError, match="not JSON"):
        PakReader(fix_checksum(data)).reflection(digest)


@pytest.mark.parametrize("version", [1, 2, 4])
def test_other_versions_refused_naming_the_file_even_with_a_valid_checksum(tmp_path, version):
    data = bytearray(write_pak(blobs_by_hash([b"x"])))
    struct.pack_into("<I", data, len(MAGIC), version)
    path = tmp_path / LIBRARY_NAME
    path.write_bytes(fix_checksum(data))
    with pytest.raises(PakVersionError, match=f"version {version} is not supported") as info:
        PakReader(path)
    assert isinstance(info.value, PipelineError) and isinstance(info.value, PakError)
    assert str(info.value).startswith(f"{path}: error:")
    assert ("per-chunk" in str(info.value)) == (version == 1)
    assert read_index(path) is None


def test_a_version_1_header_alone_is_refused_as_a_version():
    """A per-chunk pak of output format 3 (its 80-byte-less header) is still named as version 1."""
    old = MAGIC + struct.pack("<III", 1, 0, 8) + bytes(44)
    with pytest.raises(PakVersionError, match="version 1"):
        PakReader(old)


def test_corrupt_blob_detected_by_get_and_verify(blobs, library):
    data = bytearray(library)
    digest = PakReader(library).hashes()[0]
    offset = ENTRY.unpack_from(data, HEADER.size)[1]
    data[offset] ^= 0xFF
    reader = PakReader(fix_checksum(data))
    with pytest.raises(PakCorruptError, match="does not match its hash"):
        reader.get(digest)
    with pytest.raises(PakCorruptError):
        reader.verify()


def test_read_index_of_a_file_grown_or_missing(library, tmp_path):
    path = tmp_path / LIBRARY_NAME
    assert read_index(path) is None
    path.write_bytes(library + bytes(ALIGNMENT))
    assert read_index(path) is None
    path.write_bytes(library)
    assert read_index(path) is not None


def test_unreadable_path(tmp_path):
    with pytest.raises(PakError, match="cannot read"):
        PakReader(tmp_path / "missing.pak")


def test_a_library_written_from_stored_texts_of_trusted_blobs_is_the_same_library(blobs, library):
    reader = PakReader(library)
    held = {digest: reader.stored(digest) for digest in reader.hashes()}
    assert {d: blob for d, (blob, _) in held.items()} == {d: reader.get(d) for d in reader.hashes()}
    texts = {d: text for d, (_, text) in held.items()}
    again = write_pak({d: blob for d, (blob, _) in held.items()}, None, texts=texts, trusted=texts)
    assert again == bytes(library)


def test_a_reader_lets_go_of_its_mapping_when_closed_even_while_a_view_of_it_is_held(tmp_path, library) -> None:
    path = tmp_path / LIBRARY_NAME
    path.write_bytes(library)
    reader = PakReader(path)
    digest = reader.hashes()[0]
    blob, _ = reader.stored(digest)
    reader.close()  # a view remains: the mapping stays until it goes
    assert bytes(blob) == PakReader(library).get(digest)
    del blob
    again = PakReader(path)
    again.close()
    assert len(again) == len(PakReader(path))  # its index stays readable; its bytes are let go
