"""The ``metal`` target's blob: MSL text translated from the validated Vulkan SPIR-V by SPIRV-Cross.

The SPIR-V of a ``metal`` job is compiled and validated exactly as for ``vulkan1.2``
(spirv-val), then the ``spirv-cross`` command (Debian package ``spirv-cross``) writes
it as Metal Shading Language: ``--msl --msl-version MMmmpp`` from the request's
``msl_version``, ``--msl-argument-buffers`` when ``argument_buffers`` is set.  The text
is checked as far as this machine can: non-empty UTF-8 that declares the stage's entry
point (SPIRV-Cross names ``main`` ``main0``, since ``main`` is reserved in MSL).  No Metal
compiler or Metal device runs here, so the MSL is never compiled to a Metal library
here: a Metal runtime compiles it (``newLibraryWithSource``) or an offline ``metal``
build does.

:func:`identity` (the tool's revision and its executable's SHA-256) is in every
``metal`` job key, so another SPIRV-Cross build recompiles.
"""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
import subprocess
import tempfile

from pipeline.compilers.request import CompileRequest
from pipeline.compilers.toolchain import ToolchainError

TOOL = "spirv-cross"
MSL_STAGE = {"vertex": "vertex", "fragment": "fragment", "compute": "kernel"}
TIMEOUT = 120  # seconds one translation may take


class TranslateError(ValueError):
    """SPIRV-Cross refused a module, or its text does not hold the stage's entry point."""


@functools.cache
def executable() -> str:
    found = shutil.which(TOOL)
    if found is None:
        raise ToolchainError(f"the metal target needs {TOOL} on PATH (Debian package spirv-cross)", TOOL)
    return found


@functools.cache
def identity() -> str:
    """The SPIRV-Cross that writes MSL: its revision line and its executable's digest."""
    path = executable()
    run = subprocess.run([path, "--revision"], capture_output=True, text=True, timeout=TIMEOUT)
    revision = (run.stdout or run.stderr).strip().splitlines()[:1] or ["unknown"]
    with open(path, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    return f"{TOOL} {revision[0]} sha256:{digest[:16]}"


def msl_number(version: str) -> str:
    """``'2.1'`` -> ``'20100'`` (SPIRV-Cross's ``--msl-version`` form)."""
    major, minor = version.split(".")
    return f"{int(major)}{int(minor):02d}00"


def command(request: CompileRequest, path: str) -> list[str]:
    """The spirv-cross command line translating the module at ``path`` for ``request``."""
    return [executable(), path, "--msl", "--msl-version", msl_number(request.msl_version),
            *(["--msl-argument-buffers"] if request.argument_buffers else []),
            "--entry", request.entry, "--stage", {"vertex": "vert", "fragment": "frag", "compute": "comp"}[request.stage]]


def entry_name(request: CompileRequest) -> str:
    """The entry point's name in the MSL text (``main`` is reserved there: SPIRV-Cross writes ``main0``)."""
    return "main0" if request.entry == "main" else request.entry


def text_problem(request: CompileRequest, text: str) -> str | None:
    """Why ``text`` is not the MSL of ``request``'s stage (None: it can be)."""
    if not text.strip():
        return "the MSL text is empty"
    pattern = rf"\b{MSL_STAGE[request.stage]}\b[^;{{]*\b{re.escape(entry_name(request))}\s*\("
    if not re.search(pattern, text):
        return f"the MSL text declares no {MSL_STAGE[request.stage]} function {entry_name(request)!r}"
    return None


def to_msl(spirv: bytes, request: CompileRequest) -> bytes:
    """The MSL text of a validated SPIR-V module; raises :class:`TranslateError`."""
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(spirv)
        f.flush()
        run = subprocess.run(command(request, f.name), capture_output=True, timeout=TIMEOUT)
    if run.returncode != 0:
        message = run.stderr.decode("utf-8", "replace").strip() or f"exit code {run.returncode}"
        raise TranslateError(f"SPIRV-Cross cannot write MSL {request.msl_version}: {message.splitlines()[-1]}")
    text = run.stdout.decode("utf-8", "replace")
    problem = text_problem(request, text)
    if problem is not None:
        raise TranslateError(problem)
    return text.encode()
