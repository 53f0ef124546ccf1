"""Typed user-facing errors.

A :class:`PipelineError` is a user error: it carries a location and prints as one
line, ``path:line:col: error: message`` (a JSON pointer stands in for line and
column in glTF files).  The CLI turns it into exit code 1.  Any other exception is
a bug: traceback, exit code 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_MESSAGE = 400  # characters of a message kept; the rest is elided
MAX_NAME = 200     # characters of a file name or pointer printed
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` on one line of at most about ``limit`` characters: control characters escaped
    (a newline in a folder name prints as ``\\n``), the middle of a longer text elided."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], str(text))
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 8)
    return f"{text[:keep // 2]}...[{len(text) - keep} characters]...{text[-(keep - keep // 2):]}"


def canonical_folder(path: Path | str) -> str:
    """A folder as diagnostics name the files it holds: its resolved absolute path, ending in ``/``.

    Paths inside the package are canonical (the same from any working folder); the command line
    shows them relative to the folder it runs in when they are inside it."""
    return Path(path).resolve().as_posix().rstrip("/") + "/"


@dataclass(frozen=True)
class Location:
    """Where a problem is: a file plus line/column (1-based) or a JSON pointer.

    With ``parameter`` set, ``file`` is not a file but the name of the argument of the
    call whose value is at fault (``chunk``, ``level``, ``what_if``): a front end that
    took the value from elsewhere names it its own way (the command line: ``--chunk``).
    """

    file: str
    line: int | None = None
    col: int | None = None
    pointer: str | None = None
    parameter: bool = False

    @classmethod
    def argument(cls, name: str) -> "Location":
        """The argument ``name`` of a library call (not a file)."""
        return cls(name, parameter=True)

    def __str__(self) -> str:
        text = one_line(self.file, MAX_NAME)
        if self.line is not None:
            text += f":{self.line}"
            if self.col is not None:
                text += f":{self.col}"
        if self.pointer is not None:
            text += f": {one_line(self.pointer, MAX_NAME) or '/'}"
        return text


@dataclass(frozen=True)
class Diagnostic:
    """One located message; ``severity`` is 'error' or 'warning'."""

    location: Location
    message: str
    severity: str = "error"

    def __post_init__(self) -> None:  # one bounded line, wherever the message is shown or stored
        if len(self.message) > MAX_MESSAGE or _CONTROL.search(self.message):
            object.__setattr__(self, "message", one_line(self.message))

    @property
    def file(self) -> str:
        return self.location.file

    @property
    def line(self) -> int | None:
        return self.location.line

    @property
    def col(self) -> int | None:
        return self.location.col

    @property
    def pointer(self) -> str | None:
        return self.location.pointer

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message}"

    def to_json(self) -> dict:
        loc = self.location
        return {
            "file": loc.file,
            "line": loc.line,
            "col": loc.col,
            "pointer": loc.pointer,
            "severity": self.severity,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Diagnostic":
        """The inverse of :meth:`to_json` (for records read back from the cache)."""
        loc = Location(str(data["file"]), data.get("line"), data.get("col"), data.get("pointer"))
        return cls(loc, str(data["message"]), str(data.get("severity", "error")))


def keys_broken(key: str | None, count: int, name=lambda key: one_line(key, MAX_NAME)) -> str:
    """How a compile error names the keys it breaks: `` (key K)`` for one, `` (breaks 37 keys, e.g. K)``
    for more (``name`` shows a key on a line); nothing without a key."""
    if not key:
        return ""
    return f" (key {name(key)})" if count <= 1 else f" (breaks {count} keys, e.g. {name(key)})"


@dataclass(frozen=True)
class CookDiagnostic(Diagnostic):
    """An error of a cook: a diagnostic plus the permutation key whose job reported it
    (the first by text that needs the job; None for scan, rule and output errors)."""

    key: str | None = field(default=None, kw_only=True)
    keys: tuple[str, ...] = field(default=(), kw_only=True)  # a compile error: every key it breaks, by text
    jobs: tuple[str, ...] = field(default=(), kw_only=True)  # a compile error: the jobs that reported it

    @property
    def count(self) -> int:
        """How many keys a compile error breaks (one mistake in a shared include breaks many)."""
        return len(self.keys)

    def __str__(self) -> str:
        return super().__str__() + keys_broken(self.key, self.count)

    def to_json(self) -> dict:
        doc = super().to_json() | {"key": self.key}
        if self.jobs:  # a compile error, grouped by file, line and message
            doc |= {"count": self.count, "keys": list(self.keys), "jobs": list(self.jobs)}
        return doc


class PipelineError(Exception):
    """A user error with one or more located diagnostics."""

    # True when the diagnostics name files by canonical (absolute) paths, which a front end shows
    # relative to its working folder; other absolute paths (the toolchain's) are shown as they are
    canonical_paths = False

    def __init__(self, diagnostics: Diagnostic | list[Diagnostic]):
        self.diagnostics = [diagnostics] if isinstance(diagnostics, Diagnostic) else list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    @classmethod
    def at(cls, file: str, message: str, *, line: int | None = None, col: int | None = None,
           pointer: str | None = None) -> "PipelineError":
        return cls(Diagnostic(Location(file, line, col, pointer), message))

    @classmethod
    def of_argument(cls, name: str, message: str) -> "PipelineError":
        """An error in the value of the call's argument ``name`` (``chunk: error: no chunk 'x' ...``)."""
        return cls(Diagnostic(Location.argument(name), message))


class GltfError(PipelineError):
    """A glTF file cannot be read; located by a JSON pointer."""


class RuleError(PipelineError):
    """A rule set is invalid; located by YAML line and column."""


class ConfigError(PipelineError):
    """pipeline.toml is invalid."""


class CompileError(PipelineError):
    """A shader failed to compile; located in the shader library, by canonical path."""

    canonical_paths = True
