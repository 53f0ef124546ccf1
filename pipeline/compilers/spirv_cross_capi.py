"""SPIRV-Cross in this process: a SPIR-V blob's reflection JSON through its C API, without a process per blob.

``spirv-cross --reflect`` and the C API's JSON backend run the same code (SPIRV-Cross's
reflection compiler) on the same parsed module, so a build of the two from one source gives the
same bytes; :mod:`pipeline.compilers.reflect` uses this library when it loads and the command
otherwise.  A cook reflects every new blob, and a process per blob cost several times the
reflection itself (starting ``spirv-cross``, writing the blob to a temporary file).

The library is Debian's ``libspirv-cross-c-shared0`` (installed by ``script/bootstrap``), found by
the dynamic loader.  Each call makes and destroys its own SPIRV-Cross context, so threads may
reflect at once (ctypes lets go of the GIL during the call).
"""

from __future__ import annotations

import ctypes
import functools
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_void_p

from pipeline.compilers.toolchain import bind

# what the dynamic loader is asked for, in order (Linux, macOS, Windows)
NAMES = ("libspirv-cross-c-shared.so.0", "libspirv-cross-c-shared.so", "libspirv-cross-c-shared.0.dylib",
         "libspirv-cross-c-shared.dylib", "spirv-cross-c-shared.dll")
_SUCCESS, _BACKEND_JSON, _TAKE_OWNERSHIP = 0, 5, 1  # spvc_result, spvc_backend, spvc_capture_mode


class CrossError(Exception):
    """SPIRV-Cross refused a blob (its message)."""


class Cross:
    """The functions of libspirv-cross-c-shared that reflection calls."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self._create = bind(lib, "spvc_context_create", [POINTER(c_void_p)], c_int)
        self._destroy = bind(lib, "spvc_context_destroy", [c_void_p], None)
        self._error = bind(lib, "spvc_context_get_last_error_string", [c_void_p], c_char_p)
        self._parse = bind(lib, "spvc_context_parse_spirv", [c_void_p, c_char_p, c_size_t, POINTER(c_void_p)], c_int)
        self._compiler = bind(lib, "spvc_context_create_compiler",
                              [c_void_p, c_int, c_void_p, c_int, POINTER(c_void_p)], c_int)
        self._compile = bind(lib, "spvc_compiler_compile", [c_void_p, POINTER(c_char_p)], c_int)
        self._revision = bind(lib, "spvc_get_commit_revision_and_timestamp", [], c_char_p)

    def revision(self) -> str:
        """The build's revision, as ``spirv-cross --revision`` prints it."""
        return (self._revision() or b"").decode(errors="replace").strip() or "unknown"

    def reflect_json(self, spirv: bytes) -> bytes:
        """The reflection JSON of one blob (the bytes ``spirv-cross BLOB --reflect`` writes)."""
        if len(spirv) % 4:
            raise CrossError(f"a SPIR-V module is whole 32-bit words; this one is {len(spirv)} bytes")
        context = c_void_p()
        if self._create(byref(context)) != _SUCCESS:
            raise CrossError("cannot create a SPIRV-Cross context")
        try:
            parsed, compiler, text = c_void_p(), c_void_p(), c_char_p()
            if self._parse(context, spirv, len(spirv) // 4, byref(parsed)) != _SUCCESS \
                    or self._compiler(context, _BACKEND_JSON, parsed, _TAKE_OWNERSHIP, byref(compiler)) != _SUCCESS \
                    or self._compile(compiler, byref(text)) != _SUCCESS:
                raise CrossError((self._error(context) or b"SPIRV-Cross failed").decode(errors="replace").strip())
            return text.value or b""  # copied out before the context (which owns it) goes
        finally:
            self._destroy(context)


@functools.cache
def load() -> Cross | None:
    """The library, loaded once per process; None where it is not installed (the command is used)."""
    for name in NAMES:
        try:
            return Cross(ctypes.CDLL(name))
        except (OSError, AttributeError):  # not there, or a build without a function reflection calls
            continue
    return None
