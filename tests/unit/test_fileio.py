"""Reading inputs safely: regular files within a limit, located errors, and where a file really is."""

from __future__ import annotations

import os
import socket
import stat as st

import pytest

from pipeline.errors import ConfigError
from pipeline.fileio import (
    FileReadError,
    InsideRoots,
    check_inside,
    file_kind,
    inside,
    is_regular,
    open_regular,
    read_regular,
    read_text,
)


def message(exc: pytest.ExceptionInfo) -> tuple[str, str]:
    d = exc.value.diagnostics[0]
    return d.location.file, d.message


def test_read_regular_reads_up_to_its_limit(tmp_path) -> None:
    path = tmp_path / "a.bin"
    path.write_bytes(b"x" * 100)
    assert read_regular(path, limit=100) == b"x" * 100
    with pytest.raises(FileReadError) as info:
        read_regular(path, "shown/a.bin", limit=99, limit_name="limits.max_file_bytes")
    assert message(info) == ("shown/a.bin", "file is 100 bytes, over the limit of 99 (limits.max_file_bytes)")


def test_an_empty_file_reads_as_no_bytes(tmp_path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    assert read_regular(tmp_path / "empty", limit=0) == b""


def test_a_missing_file_names_its_role_and_raises_the_callers_error(tmp_path) -> None:
    with pytest.raises(ConfigError) as info:
        read_regular(tmp_path / "none.toml", error=ConfigError, what="pipeline.toml")
    file, text = message(info)
    assert file == str(tmp_path / "none.toml") and text.startswith("cannot read pipeline.toml: ")
    assert os.strerror(2) in text


def test_a_path_with_a_nul_byte_is_a_located_error(tmp_path) -> None:
    with pytest.raises(FileReadError) as info:
        read_regular(str(tmp_path / "a\0b"), "a\\0b")
    assert message(info)[0] == "a\\0b"


def test_a_folder_is_refused(tmp_path) -> None:
    with pytest.raises(FileReadError) as info:
        read_regular(tmp_path)
    assert message(info)[1] == "cannot read: a folder"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FileReadError) as info:
        read_regular(fifo, what="rule set")  # no writer: a blocking open or read would hang here
    assert message(info)[1] == "cannot read rule set: not a regular file (a FIFO)"
    with pytest.raises(OSError, match="a FIFO"):
        open_regular(fifo)
    assert not is_regular(fifo)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
def test_a_device_is_never_read() -> None:
    with pytest.raises(FileReadError) as info:
        read_regular("/dev/zero")
    assert message(info)[1].endswith("not a regular file (a device)")


def test_file_kind_names_each_kind() -> None:
    assert file_kind(st.S_IFDIR) == "a folder"
    assert file_kind(st.S_IFSOCK) == "not a regular file (a socket)"
    assert file_kind(st.S_IFBLK) == "not a regular file (a device)"
    assert file_kind(st.S_IFLNK) == "not a regular file"


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets on this system")
def test_a_socket_is_refused(tmp_path) -> None:
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(FileReadError) as info:
            read_regular(path)  # open() itself fails on a socket (ENXIO): refused either way
    file, text = message(info)
    assert file == str(path) and text.startswith("cannot read: ")


def test_open_regular_opens_a_file_for_binary_reading(tmp_path) -> None:
    (tmp_path / "a").write_bytes(b"abc")
    with open_regular(tmp_path / "a") as f:
        assert f.read() == b"abc"
    with pytest.raises(OSError):
        open_regular(tmp_path)
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "none")


def test_read_text_decodes_utf8_and_locates_bad_bytes(tmp_path) -> None:
    (tmp_path / "ok.txt").write_bytes("h\u00e9".encode())
    assert read_text(tmp_path / "ok.txt") == "h\u00e9"
    (tmp_path / "bad.txt").write_bytes(b"ab\xff")
    with pytest.raises(FileReadError) as info:
        read_text(tmp_path / "bad.txt", "bad.txt")
    assert message(info) == ("bad.txt", "not UTF-8 text (byte 2)")


def test_is_regular(tmp_path) -> None:
    (tmp_path / "f").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "f")
    (tmp_path / "dangling").symlink_to(tmp_path / "none")
    assert is_regular(tmp_path / "f") and is_regular(tmp_path / "link")
    assert not is_regular(tmp_path) and not is_regular(tmp_path / "dangling") and not is_regular("a\0b")


def test_inside_follows_symlinks(tmp_path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("x")
    (root / "a").write_text("x")
    (root / "leak").symlink_to(outside / "secret")
    (root / "sub").symlink_to(outside)
    assert inside(root / "a", [root]) and inside(root, [root])
    assert not inside(root / "leak", [root]) and not inside(root / "sub" / "secret", [root])
    assert inside(root / "leak", [root, outside])
    with pytest.raises(FileReadError) as info:
        check_inside(root / "leak", [root], "leak", what="glTF file")
    file, text = message(info)
    assert file == "leak" and text.startswith("glTF file leads outside the allowed roots")
    assert str(outside / "secret") in text and "allowed_roots" in text
    check_inside(root / "a", [root], "a")  # no error


def test_inside_roots_checks_folders_once_and_every_symlink(tmp_path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (outside / "x").write_text("x")
    (root / "d" / "a").write_text("x")
    (root / "d" / "leak").symlink_to(outside / "x")
    roots = InsideRoots([root])
    roots.check(str(root / "d" / "a"), "a")
    assert roots._folders == {str(root / "d"): True}
    with pytest.raises(FileReadError, match="leads outside"):
        roots.check(str(root / "d" / "leak"), "leak")  # a folder inside, but the file is a symlink
    with pytest.raises(FileReadError, match="leads outside"):
        roots.check(str(outside / "x"), "x")
