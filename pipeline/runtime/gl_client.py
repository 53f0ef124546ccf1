"""The GLSL ES client: a key's ``webgl2`` / ``es3.0`` texts compiled and linked by a real GL driver.

A GL driver links a program by name: a varying whose type differs between the
stages, a fragment input no vertex output feeds, a uniform declared with two types:
each stage alone passes glslang's ES front end (what the cook validates), the link
refuses them.  :class:`GlClient` opens a headless context through EGL with
``moderngl`` (Mesa's llvmpipe on a machine without a GPU, whose OpenGL 4.5 core
context compiles ``#version 300 es`` through ARB_ES3_compatibility) and makes each
key's vertex + fragment text one program, as a WebGL 2 or GLES 3 runtime does.
:func:`available` says why no client can run here (``moderngl`` not installed, no
EGL driver).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STAGE_NAMES = {"vertex_shader": "vertex", "fragment_shader": "fragment"}


class GlUnavailable(RuntimeError):
    """No EGL context can be made here (the reason in words)."""


@dataclass(frozen=True)
class LinkFailure:
    stage: str    # 'vertex', 'fragment', or 'program' for a link error
    log: str      # the driver's log, one line per message


def _context():
    try:
        import moderngl
    except ImportError as exc:
        raise GlUnavailable(f"moderngl is not installed (pip install '.[runtime]'): {exc}") from None
    try:
        return moderngl.create_context(standalone=True, backend="egl")
    except Exception as exc:  # noqa: BLE001 - no EGL display or driver: say why
        raise GlUnavailable(f"no EGL context (Debian packages libegl1 libegl-mesa0 libgl1-mesa-dri): {exc}") \
            from None


def available() -> str | None:
    """None when a GL context opens here, else why not."""
    try:
        _context().release()
    except GlUnavailable as exc:
        return str(exc)
    return None


def parse_error(message: str) -> LinkFailure:
    """moderngl's error text as the stage that failed and the driver's log."""
    lines = [line for line in message.splitlines() if line.strip() and not set(line.strip()) <= {"="}]
    stage = "program"
    for line in lines:
        if line.strip() in STAGE_NAMES:
            stage = STAGE_NAMES[line.strip()]
    log = [line.strip() for line in lines
           if line.strip() not in STAGE_NAMES and line.strip() != "Program"
           and not re.match(r"^GLSL (Compiler|Linker) failed$", line.strip())]
    return LinkFailure(stage, "; ".join(log) or message.strip())


class GlClient:
    """One headless GL context; :meth:`link` makes a program of a vertex and fragment text."""

    def __init__(self) -> None:
        self.ctx = _context()
        info = self.ctx.info
        self.name = f"{info.get('GL_RENDERER', 'GL')} OpenGL {info.get('GL_VERSION', '')} through EGL".strip()

    def link(self, vertex: str, fragment: str) -> LinkFailure | None:
        """None when the driver compiles and links the pair, else what it refused."""
        try:
            program = self.ctx.program(vertex_shader=vertex, fragment_shader=fragment)
        except Exception as exc:  # noqa: BLE001 - moderngl.Error carries the driver's log
            return parse_error(str(exc))
        program.release()
        return None

    def close(self) -> None:
        self.ctx.release()

    def __enter__(self) -> GlClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
