"""The .pak archive: round trip, dedup, determinism, corruption and version checks."""

from __future__ import annotations

import struct

import pytest

from pipeline.outputs.pak import (
    ALIGNMENT,
    ENTRY,
    HEADER,
    MAGIC,
    PakCorruptError,
    PakError,
    PakReader,
    PakVersionError,
    _checksum,
    blobs_by_hash,
    write_pak,
)
from pipeline.digest import bytes_hash
from pipeline.errors import PipelineError

BLOBS = [b"\x03\x02\x23\x07" + bytes(range(n)) for n in (5, 12, 1, 30)]


@pytest.fixture
def blobs() -> dict[str, bytes]:
    return blobs_by_hash(BLOBS)


def test_round_trip(blobs, tmp_path):
    data = write_pak(blobs)
    path = tmp_path / "c00.pak"
    path.write_bytes(data)
    for reader in (PakReader(data), PakReader(path), PakReader(str(path))):
        assert reader.hashes() == sorted(blobs)
        assert len(reader) == len(blobs)
        assert all(reader.get(h) == blob for h, blob in blobs.items())
        assert dict(reader.items()) == blobs
        reader.verify()


def test_reader_api(blobs):
    reader = PakReader(write_pak(blobs))
    some = next(iter(blobs))
    assert some in reader and "0" * 64 not in reader
    assert list(reader) == reader.hashes()
    assert reader.version == 1 and reader.alignment == ALIGNMENT
    with pytest.raises(KeyError):
        reader.get("0" * 64)


def test_empty_pak():
    reader = PakReader(write_pak({}))
    assert reader.hashes() == [] and len(reader) == 0
    reader.verify()


def test_dedup():
    assert len(blobs_by_hash([b"a", b"a", b"b"])) == 2
    assert write_pak(blobs_by_hash([b"a", b"b", b"a"])) == write_pak(blobs_by_hash([b"b", b"a"]))


def test_deterministic_across_insertion_orders(blobs):
    reordered = dict(reversed(list(blobs.items())))
    assert list(reordered) != list(blobs)
    assert write_pak(reordered) == write_pak(blobs)


def test_layout_sorted_and_aligned(blobs):
    data = write_pak(blobs)
    _, version, count, alignment, _, size, _ = HEADER.unpack_from(data)
    assert (version, count, alignment, size) == (1, len(blobs), ALIGNMENT, len(data))
    entries = [ENTRY.unpack_from(data, HEADER.size + ENTRY.size * i) for i in range(count)]
    assert [e[0] for e in entries] == sorted(e[0] for e in entries)
    for digest, offset, length in entries:
        assert offset % ALIGNMENT == 0
        assert bytes_hash(data[offset:offset + length]) == digest.hex()
    assert len(data) % ALIGNMENT == 0


def test_key_must_be_the_blob_hash():
    with pytest.raises(ValueError):
        write_pak({"vertex": b"abc"})


def test_every_flipped_byte_is_detected(blobs):
    data = write_pak(blobs)
    for position in range(len(data)):
        broken = bytearray(data)
        broken[position] ^= 0x40
        with pytest.raises(PakError):
            PakReader(bytes(broken)).verify()


def test_every_truncation_is_detected(blobs):
    data = write_pak(blobs)
    for length in range(len(data)):
        with pytest.raises(PakCorruptError):
            PakReader(data[:length])


def test_wrong_magic():
    data = bytearray(write_pak(blobs_by_hash([b"x"])))
    data[:4] = b"RIFF"
    with pytest.raises(PakCorruptError, match="magic"):
        PakReader(bytes(data))
    with pytest.raises(PakCorruptError, match="magic"):
        PakReader(b"")


def test_future_version_refused_even_with_valid_checksum(tmp_path):
    data = bytearray(write_pak(blobs_by_hash([b"x"])))
    struct.pack_into("<I", data, len(MAGIC), 2)
    data[32:64] = _checksum(data)
    path = tmp_path / "c00.pak"
    path.write_bytes(bytes(data))
    with pytest.raises(PakVersionError, match="version 2") as info:
        PakReader(path)
    assert isinstance(info.value, PipelineError)
    assert str(info.value).startswith(f"{path}: error:")


def test_corrupt_blob_detected_by_get(blobs):
    data = bytearray(write_pak(blobs))
    reader = PakReader(bytes(data))
    digest = reader.hashes()[0]
    offset = ENTRY.unpack_from(data, HEADER.size)[1]
    data[offset] ^= 0xFF
    with pytest.raises(PakCorruptError):
        PakReader(bytes(data)).get(digest)


def test_unreadable_path(tmp_path):
    with pytest.raises(PakError, match="cannot read"):
        PakReader(tmp_path / "missing.pak")
