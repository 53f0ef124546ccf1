"""SPIRV-Cross through its C API (compilers/spirv_cross_capi.py) against the ``spirv-cross`` command, on blobs
glslang compiles here (``blobs``, tests/conftest.py)."""

from __future__ import annotations

import concurrent.futures
import subprocess

import pytest

from pipeline.compilers import spirv_cross_capi
from pipeline.compilers.reflect import reflect_command, tool
from reflect_helpers import NEEDS_SPIRV_CROSS

pytestmark = pytest.mark.skipif(spirv_cross_capi.load() is None,
                                reason="libspirv-cross-c-shared0 (Debian package) is not installed; "
                                       "reflection runs the spirv-cross command instead")


@NEEDS_SPIRV_CROSS
def test_the_library_writes_the_bytes_the_command_writes(blobs) -> None:
    library = spirv_cross_capi.load()
    for name, blob in blobs.items():
        made = library.reflect_json(blob)
        assert made.startswith(b"{") and b'"entryPoints"' in made, name
        assert made == reflect_command(blob), name


@NEEDS_SPIRV_CROSS
def test_the_library_names_the_revision_the_command_names() -> None:
    run = subprocess.run([tool(), "--revision"], capture_output=True, text=True)
    assert spirv_cross_capi.load().revision() == ((run.stdout or run.stderr).strip() or "unknown")


def test_threads_reflecting_at_once_each_get_their_own_blob_s_document(blobs) -> None:
    library = spirv_cross_capi.load()
    alone = {name: library.reflect_json(blob) for name, blob in blobs.items()}
    names = list(blobs) * 20
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda name: library.reflect_json(blobs[name]), names))
    assert together == [alone[name] for name in names]
    assert len(set(alone.values())) == len(alone)  # the blobs differ, so a mix-up would show


@pytest.mark.parametrize("data, message", [
    (b"not a SPIR-V module", "whole 32-bit words; this one is 19 bytes"),
    (b"\x03\x02\x23\x07", "too small"),
    (b"\x00" * 64, "Invalid SPIRV format"),
])
def test_what_is_not_spirv_is_refused_with_spirv_cross_s_message(data, message) -> None:
    with pytest.raises(spirv_cross_capi.CrossError, match=message):
        spirv_cross_capi.load().reflect_json(data)


def test_a_truncated_module_is_refused_and_the_library_goes_on(blobs) -> None:
    library, blob = spirv_cross_capi.load(), blobs["t.frag"]
    with pytest.raises(spirv_cross_capi.CrossError):
        library.reflect_json(blob[: len(blob) // 8 * 4])
    assert library.reflect_json(blob).startswith(b"{")
