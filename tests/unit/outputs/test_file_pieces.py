"""outputs.file_pieces: a file written as pieces, extents of another file copied file to file or, where the
system cannot, read and written."""

from __future__ import annotations

import errno
import os

import pytest

from pipeline.outputs import file_pieces
from pipeline.outputs.file_pieces import Held, write_pieces

SOURCE = bytes(range(256)) * 64  # 16 KiB


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "source"
    path.write_bytes(SOURCE)
    fd = os.open(path, os.O_RDONLY)
    yield fd
    os.close(fd)


def pieces(fd: int) -> tuple[list, bytes]:
    parts = [b"head", Held(fd, 100, 5000), memoryview(b"--mid--")[2:5], Held(fd, 0, 0), Held(fd, 16000, 384), b"end"]
    return parts, b"head" + SOURCE[100:5100] + b"mid" + SOURCE[16000:] + b"end"


def test_pieces_are_written_in_order_held_ones_copied_from_their_file(tmp_path, source) -> None:
    parts, expected = pieces(source)
    with open(tmp_path / "out", "wb") as handle:
        write_pieces(handle, parts)
    assert (tmp_path / "out").read_bytes() == expected
    assert Held(source, 100, 5000).read() == SOURCE[100:5100] and len(Held(source, 7, 9)) == 9


@pytest.mark.parametrize("refusal", [errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, None])
def test_where_the_system_cannot_copy_file_to_file_the_bytes_are_read_and_written(tmp_path, source, monkeypatch,
                                                                                  refusal) -> None:
    def refuse(*args):
        raise OSError(refusal, os.strerror(refusal))

    if refusal is None:
        monkeypatch.delattr(os, "copy_file_range", raising=False)  # a system without the call
    else:
        monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    parts, expected = pieces(source)
    with open(tmp_path / "out", "wb") as handle:
        write_pieces(handle, parts)
    assert (tmp_path / "out").read_bytes() == expected


def test_an_extent_past_the_end_of_its_file_is_an_error_not_a_short_file(tmp_path, source) -> None:
    with open(tmp_path / "out", "wb") as handle, pytest.raises(OSError) as copied:
        write_pieces(handle, [Held(source, len(SOURCE) - 10, 20)])
    assert copied.value.errno == errno.EIO
    with pytest.raises(OSError):
        Held(source, len(SOURCE), 1).read()


def test_another_error_of_the_copy_is_raised(tmp_path, source, monkeypatch) -> None:
    monkeypatch.setattr(os, "copy_file_range", lambda *a: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")),
                        raising=False)
    with open(tmp_path / "out", "wb") as handle, pytest.raises(OSError) as copied:
        write_pieces(handle, [Held(source, 0, 10)])
    assert copied.value.errno == errno.ENOSPC and file_pieces.Held is Held
