"""outputs.pak_write: a library's bytes and the pieces they are made of; blobs copied from another library's file."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.digest import bytes_hash
from pipeline.outputs.file_pieces import Held
from pipeline.outputs.pak import PakReader, _checksum
from pipeline.outputs.pak_write import blobs_by_hash, pak_parts, write_pak


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=40), st.one_of(st.none(), st.binary(min_size=1, max_size=30))),
                max_size=8))
def test_the_pieces_of_a_library_join_to_its_bytes_and_their_checksum_is_the_file_s(items) -> None:
    blobs = blobs_by_hash(blob for blob, _ in items)
    texts = {bytes_hash(blob): text or b"" for blob, text in items}
    pak = pak_parts(blobs, texts=texts)
    data = pak.joined()
    assert data == write_pak(blobs, texts=texts) and len(data) == pak.size
    assert pak.checksum == _checksum(data) == data[32:64]
    assert sum(len(piece) for piece in pak.parts) == pak.size
    reader = PakReader(data)
    reader.verify()
    assert {h: reader.get(h) for h in reader} == blobs


def test_blobs_held_in_another_library_s_file_are_pieces_of_the_same_bytes(tmp_path) -> None:
    blobs = blobs_by_hash([b"\x03\x02\x23\x07" + bytes(range(n)) for n in (3, 17, 40)])
    old = tmp_path / "old.pak"
    old.write_bytes(write_pak(blobs))
    reader = PakReader(old)
    fd = os.open(old, os.O_RDONLY)
    try:
        held, texts = {}, {}
        for digest in reader:
            offset, size, texts[digest] = reader.held(digest)
            held[digest] = Held(fd, offset, size)
        grown = {**held, bytes_hash(b"new"): b"new"}
        pak = pak_parts(grown, texts=texts, trusted=texts)
        assert pak.joined() == write_pak({**blobs, bytes_hash(b"new"): b"new"}, texts={**texts})
        assert sum(isinstance(p, Held) for p in pak.parts) == len(blobs)  # none of them read
    finally:
        os.close(fd)
