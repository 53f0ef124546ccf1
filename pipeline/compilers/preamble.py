"""Defines as a preamble, and glslang's info log as located diagnostics.

Preamble and line mapping: the defines of a request become the text
``#define NAME VALUE\\n`` per define (in request order).  Neither backend splices
them into the file: both hand them to glslang as its *preamble* (the C API's
``glslang_shader_set_preamble``; glslangValidator's ``-D``), which glslang
processes after the ``#version`` line as a separate source string.  The shader's
own lines therefore keep their numbers.

GLSL ``#include`` needs ``GL_GOOGLE_include_directive`` enabled; we enable it so
material files need not ask.  glslangValidator takes it as preamble text
(``--P``).  The C API cannot: its preprocess step echoes a preamble
``#extension`` *before* ``#version`` into the text it then parses, so
:func:`enable_includes` inserts the line right after ``#version`` followed by
``#line <n>``, which gives the next original line its own number back.

glslang reports errors as ``ERROR: <name>:<line>: <message>`` where ``<name>``
is the string number (``0``) for the top-level source and the include name the
includer returned for an included file; :func:`parse_log` maps both back to
root-relative paths and then to the files' canonical (absolute) names.

Messages: glslang writes ``'<token>' : <message>``; the token is empty when it
has none, and syntax errors name parser tokens (``'' :  syntax error, unexpected
RIGHT_BRACE, expecting COMMA or SEMICOLON``).  :func:`readable` rewords those
(``syntax error: unexpected '}', expected ',' or ';'``, ``syntax error at end of
file``, ``missing #endif``); a message with a token keeps it
(``'foo' : undeclared identifier``).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable

from pipeline.compilers.request import CompileOutput, CompileRequest, parse_version, target_info
from pipeline.errors import Diagnostic, Location

INCLUDE_EXTENSION = "#extension GL_GOOGLE_include_directive : enable\n"
LOG_RE = re.compile(r"^(ERROR|WARNING):\s*(?:(.+?):(\d+):(?:(\d+):)?\s)?\s*(.*?)\s*$")
VERSION_RE = re.compile(r"^[ \t]*#[ \t]*version\b[^\n]*", re.M)
DEFAULT_VERSION = 100  # as glslangValidator: #version when absent, and the VULKAN macro's value
NOISE = ("compilation terminated", "compilation errors.  No code generated", "compilation errors. No code")


def define_lines(defines: tuple[tuple[str, str], ...]) -> str:
    """``#define NAME VALUE`` lines, one per define."""
    return "".join(f"#define {name} {value}\n" for name, value in defines)


def request_defines(request: CompileRequest) -> tuple[tuple[str, str], ...]:
    """The defines a request is compiled with: its target's macros (``PIPELINE_TARGET_WEBGPU`` for
    ``webgpu``), then its own."""
    target = target_info(request.target) if request.backend is None else None
    return (target.macros if target is not None else ()) + request.defines



LINE_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*line\b[^\n]*\n?", re.M)
GOOGLE_EXTENSION = re.compile(r"^[ \t]*#[ \t]*extension[ \t]+GL_GOOGLE_\w+[^\n]*\n?", re.M)


def default_version(request: CompileRequest, has_version: bool) -> tuple[int, str | None]:
    """(version, profile) glslang assumes for a source without ``#version``.

    The request's ``version``, else the target's default (``300 es`` for webgl2,
    ``450`` for opengl4.5); Vulkan targets keep glslangValidator's ``100`` without a
    profile.  With ``has_version`` the source's own line wins anyway.
    """
    target = target_info(request.target)
    text = request.version or (target.default_version if target.client != "vulkan" else None)
    return parse_version(text) if text else (DEFAULT_VERSION, None)


def es_version(request: CompileRequest, text: str) -> str:
    """``text`` with a desktop ``#version`` line (``450``) replaced by the ES version of an ES-only
    target (``webgl2``, ``es3.0``: the request's ES version, else ``300 es``), on the same line, so one
    source serves Vulkan and GLSL ES (``GL_ES`` is then defined); unchanged for other targets."""
    if request.language != "glsl" or request.backend is not None or target_info(request.target).client != "none":
        return text
    match = VERSION_RE.search(text)
    if not match or re.search(r"\bes\b", match.group(0)):
        return text
    version, profile = default_version(request, False)
    return f"{text[:match.start()]}#version {version} {profile or ''}".rstrip() + text[match.end():]


def prepare_source(request: CompileRequest, text: str) -> str:
    """The source text glslang is given: the include extension enabled and, for a GLSL
    source without ``#version`` whose target or request names one, that version
    first (a desktop one becomes the ES version on an ES-only target: :func:`es_version`).
    ``#line`` directives keep every original line's number."""
    if request.language != "glsl":
        return text
    if VERSION_RE.search(text):
        return enable_includes(es_version(request, text))
    version, profile = default_version(request, False)
    if (version, profile) == (DEFAULT_VERSION, None):
        return enable_includes(text)  # glslang's own default, as glslangValidator would compile it
    shown = f"{version} {profile}" if profile else str(version)
    return f"#version {shown}\n{INCLUDE_EXTENSION}#line 1\n{text}"


def clean_preprocessed(text: str, version: str) -> str:
    """Preprocessed GLSL as a GLES runtime loads it: no ``#line`` or GL_GOOGLE extension lines,
    ``#version`` first (``version`` when the text has none)."""
    text = GOOGLE_EXTENSION.sub("", LINE_DIRECTIVE.sub("", text))
    lines = [line.rstrip() for line in text.splitlines()]
    body = "\n".join(line for line in lines if line.strip())
    if not VERSION_RE.search(body):
        body = f"#version {version}\n{body}"
    return body + "\n"


def enable_includes(text: str) -> str:
    """Insert the include extension after the ``#version`` line, keeping line numbers."""
    match = VERSION_RE.search(text)
    if not match:
        return text
    next_line = text.count("\n", 0, match.end()) + 2
    return f"{text[:match.end()]}\n{INCLUDE_EXTENSION}#line {next_line}{text[match.end():]}"


MESSAGE_RE = re.compile(r"^'([^']*)' :\s+(.*)$")
SYNTAX_RE = re.compile(r"^syntax error, unexpected (.+?)(?:, expecting (.+))?$")
PUNCTUATION = {
    "LEFT_PAREN": "(", "RIGHT_PAREN": ")", "LEFT_BRACKET": "[", "RIGHT_BRACKET": "]", "LEFT_BRACE": "{",
    "RIGHT_BRACE": "}", "DOT": ".", "COMMA": ",", "COLON": ":", "EQUAL": "=", "SEMICOLON": ";", "BANG": "!",
    "DASH": "-", "TILDE": "~", "PLUS": "+", "STAR": "*", "SLASH": "/", "PERCENT": "%", "LEFT_ANGLE": "<",
    "RIGHT_ANGLE": ">", "VERTICAL_BAR": "|", "CARET": "^", "AMPERSAND": "&", "QUESTION": "?",
    "LEFT_OP": "<<", "RIGHT_OP": ">>", "INC_OP": "++", "DEC_OP": "--", "LE_OP": "<=", "GE_OP": ">=",
    "EQ_OP": "==", "NE_OP": "!=", "AND_OP": "&&", "OR_OP": "||", "XOR_OP": "^^", "MUL_ASSIGN": "*=",
    "DIV_ASSIGN": "/=", "ADD_ASSIGN": "+=", "MOD_ASSIGN": "%=", "LEFT_ASSIGN": "<<=", "RIGHT_ASSIGN": ">>=",
    "AND_ASSIGN": "&=", "XOR_ASSIGN": "^=", "OR_ASSIGN": "|=", "SUB_ASSIGN": "-=",
}
WORDS = {"IDENTIFIER": "identifier", "TYPE_NAME": "type name", "STRING_LITERAL": "string",
         "BOOLCONSTANT": "boolean constant"}
OPAQUE_TYPE = re.compile(r"^(?:[iu]|f16)?(?:sampler|image|texture|subpassinput)")
OPAQUE_PARTS = (("array", "Array"), ("shadow", "Shadow"), ("cube", "Cube"), ("rect", "Rect"),
                ("buffer", "Buffer"), ("input", "Input"), ("ms", "MS"))


def _token(name: str) -> str:
    """A parser token name as the text a person wrote: ``RIGHT_BRACE`` -> ``'}'``, ``VEC3`` -> ``'vec3'``."""
    if name in PUNCTUATION:
        return f"'{PUNCTUATION[name]}'"
    if name in WORDS:
        return WORDS[name]
    if name.endswith("CONSTANT"):
        return "number"
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
        return name
    word = name.lower()
    if OPAQUE_TYPE.match(word):  # sampler2DArrayShadow, image2DMS, ...
        word = re.sub(r"(\d)d", r"\1D", word)
        for part, shown in OPAQUE_PARTS:
            word = word[:3] + word[3:].replace(part, shown)
    return f"'{word}'"


def readable(message: str) -> str:
    """A glslang message without its empty-token noise, parser token names as source text."""
    match = MESSAGE_RE.match(message)
    if not match:
        return message
    token, text = match.groups()
    if token:  # 'foo' : undeclared identifier; '=' : cannot convert from 'const float' to 'highp int'
        return f"'{token}' : " + re.sub(r"\b(from|to) ' +", r"\1 '", text)
    syntax = SYNTAX_RE.match(text)
    if not syntax:
        return text
    unexpected, expecting = syntax.groups()
    wanted = f", expected {' or '.join(_token(t) for t in expecting.split(' or '))}" if expecting else ""
    if unexpected == "end of file":
        return f"syntax error at end of file{wanted}"
    return f"syntax error: unexpected {_token(unexpected)}{wanted}"


def _is_noise(message: str) -> bool:
    return any(n in message for n in NOISE)


def parse_log(log: str, to_relpath: Callable[[str | None], str], name: Callable[[str], str]
              ) -> tuple[Diagnostic, ...]:
    """Diagnostics from a glslang info log; ``to_relpath`` maps a reported name (None: unnamed) to a
    root-relative path, ``name`` that to the name a diagnostic carries."""
    found: list[Diagnostic] = []
    for line in log.splitlines():
        match = LOG_RE.match(line.strip())
        if not match or _is_noise(match.group(5)):
            continue
        kind, reported, lineno, col, message = match.groups()
        location = Location(name(to_relpath(reported)), int(lineno) if lineno else None, int(col) if col else None)
        diagnostic = Diagnostic(location, readable(message), "error" if kind == "ERROR" else "warning")
        if diagnostic not in found:
            found.append(diagnostic)
    return tuple(found)


def normalize_name(name: str | None, source: str, root: str) -> str:
    """Map a name glslang reported to a root-relative path (string numbers mean ``source``)."""
    if not name or name.isdigit():
        return source
    name = name.replace("\\", "/")
    if posixpath.isabs(name) and name.startswith(root.rstrip("/") + "/"):
        name = name[len(root.rstrip("/")) + 1:]
    return posixpath.normpath(name)


PROMOTED = ("Entry point not found",)


def _promote(diagnostic: Diagnostic) -> Diagnostic:
    if diagnostic.severity == "warning" and any(p in diagnostic.message for p in PROMOTED):
        return Diagnostic(diagnostic.location, diagnostic.message, "error")
    return diagnostic


def compile_output(spirv: bytes | None, log: str, request: CompileRequest, tree) -> CompileOutput:
    """A :class:`CompileOutput` from a backend's result and its raw log.

    glslang only warns when the entry point is missing (and emits an empty
    module); that is promoted to an error.  A failure whose log yields no located error (a crash, an unexpected format)
    still gets one error, at the request's source, carrying the raw log.
    """
    to_relpath = functools.partial(normalize_name, source=request.source, root=str(tree.root))
    diagnostics = tuple(_promote(d) for d in parse_log(log, to_relpath, tree.name))
    if any(d.severity == "error" for d in diagnostics):
        spirv = None
    if spirv is None and not any(d.severity == "error" for d in diagnostics):
        message = log.strip().splitlines()[-1] if log.strip() else "compilation failed without a message"
        diagnostics += (Diagnostic(Location(tree.name(request.source)), message),)
    return CompileOutput(spirv, diagnostics)
