"""The shader library as the compiler sees it: files, includes, closures, tested macros.

Include resolution (the same for every backend): ``#include "x"`` looks in the
including file's folder first, then at the materials root; ``#include <x>``
looks at the root only.  A path may not leave the root.  The resolved name is
the root-relative, '/'-separated path (``pbr/brdf.glsl``), which is also the name
the compiler reports errors under; a diagnostic names the file canonically, by its
absolute path under the root (:meth:`SourceTree.name`), the same from any working folder.

A file's parse (its includes, the identifiers its preprocessor conditions test,
the macros it defines) is cached and revalidated by ``stat`` (mtime_ns, ctime_ns,
size, inode): a changed file is re-read and re-hashed, an unchanged one is not.
Includes are followed regardless of ``#if`` branches, so a closure is a
conservative over-approximation of what a compile reads (right for cache keys);
so is :meth:`SourceTree.used_identifiers`, the names stage projection keeps.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

import msgspec

from pipeline.digest import bytes_hash
from pipeline.errors import CompileError, Diagnostic, Location, canonical_folder
from pipeline.fileio import check_inside, read_text
from pipeline.stamps import of_stat

MAX_SOURCE_BYTES = 16 * 2**20

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"]+)"|<([^>]+)>)', re.M)
CONDITION_RE = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b(.*)$", re.M)
DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:\([^)]*\))?(.*)$", re.M)
IDENT_RE = re.compile(r"[A-Za-z_]\w*")
COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


class Include(msgspec.Struct, frozen=True):
    """One ``#include`` directive: the name as written, its line, and ``<>`` or ``""``."""

    name: str
    line: int
    system: bool


class ParsedFile(msgspec.Struct, frozen=True):
    """What the tree needs to know about one file."""

    text: str
    sha256: str
    includes: tuple[Include, ...]
    tested: frozenset[str]                         # identifiers in #if/#ifdef/#ifndef/#elif
    macro_refs: tuple[tuple[str, frozenset[str]], ...]  # (macro, identifiers of its body)
    identifiers: frozenset[str] = frozenset()      # every identifier outside comments (conditions and code)


def _strip_comments(text: str) -> str:
    """Blank comments out, keeping newlines so line numbers stay right."""
    return COMMENT_RE.sub(lambda m: "\n" * m.group(0).count("\n") or " ", text)


def _join_continuations(text: str) -> str:
    return text.replace("\\\r\n", " ").replace("\\\n", " ")


def parse_source(text: str) -> ParsedFile:
    """Parse the preprocessor structure of one shader file."""
    code = _strip_comments(text)
    includes = tuple(
        Include(m.group(1) or m.group(2), code.count("\n", 0, m.start()) + 1, m.group(2) is not None)
        for m in INCLUDE_RE.finditer(code))
    joined = _join_continuations(code)
    tested = frozenset(i for m in CONDITION_RE.finditer(joined) for i in IDENT_RE.findall(m.group(1)))
    refs = tuple((m.group(1), frozenset(IDENT_RE.findall(m.group(2)))) for m in DEFINE_RE.finditer(joined))
    digest = bytes_hash(text.encode("utf-8"))
    return ParsedFile(text, digest, includes, tested - {"defined"}, refs, frozenset(IDENT_RE.findall(joined)))


class SourceTree:
    """The materials root: reads files, resolves includes, computes closures and tested macros."""

    def __init__(self, root: Path, allowed: tuple[Path, ...] = (), named_root: str | None = None):
        self.root = Path(root).resolve()
        self.allowed = (self.root, *allowed)  # where a file (symlinks resolved) may be
        # the folder diagnostics name files under: the root's canonical path, or the planning
        # machine's root for a tree rebuilt elsewhere (a build-farm worker's)
        self.named_root = named_root if named_root is not None else canonical_folder(self.root)
        self._files: dict[str, tuple[tuple[int, int, int, int], ParsedFile]] = {}
        self._prefix = os.path.join(str(self.root), "")  # root + separator: a file's path is prefix + relpath
        self._candidates: dict[tuple[str, str, bool], tuple[str, ...]] = {}  # what an #include may name

    def name(self, relpath: str) -> str:
        """The canonical name a diagnostic carries for a file: its absolute path under the root."""
        return self.named_root + relpath

    def path(self, relpath: str) -> Path:
        return self.root / relpath

    def parsed(self, relpath: str) -> ParsedFile:
        """The parse of one file, re-read only when its stat signature changed."""
        try:
            signature = of_stat(os.stat(self._prefix + relpath))
        except OSError as exc:
            raise CompileError.at(self.name(relpath), f"cannot read shader source: {exc.strerror or exc}") from None
        cached = self._files.get(relpath)
        if cached and cached[0] == signature:
            return cached[1]
        path, named = self.path(relpath), self.name(relpath)
        check_inside(path, self.allowed, named, error=CompileError, what="shader source")
        entry = parse_source(read_text(path, named, limit=MAX_SOURCE_BYTES, error=CompileError,
                                       what="shader source"))
        self._files[relpath] = (signature, entry)
        return entry

    def read(self, relpath: str) -> str:
        """The text of one file of the tree."""
        return self.parsed(relpath).text

    def resolve(self, name: str, includer: str, system: bool = False) -> str | None:
        """Root-relative path an ``#include`` names, or ``None`` if no such file."""
        folder = "" if system else posixpath.dirname(includer)
        candidates = self._candidates.get((name, folder, system))
        if candidates is None:
            found = []
            for base in ([""] if system else [folder, ""]):
                candidate = posixpath.normpath(posixpath.join(base, name.replace("\\", "/")))
                if not (candidate.startswith("../") or candidate == ".." or posixpath.isabs(candidate)):
                    found.append(candidate)
            candidates = self._candidates[(name, folder, system)] = tuple(found)
        for candidate in candidates:
            if self.has_file(candidate):
                return candidate
        return None

    def has_file(self, relpath: str) -> bool:
        """True when the tree holds a file at this root-relative path."""
        return os.path.isfile(self._prefix + relpath)

    def resolve_include(self, include: Include, includer: str) -> str:
        """Like :meth:`resolve` but a missing file is a located :class:`CompileError`."""
        found = self.resolve(include.name, includer, include.system)
        if found is None:
            raise CompileError(self._missing(include, includer))
        return found

    def _missing(self, include: Include, includer: str) -> Diagnostic:
        return Diagnostic(Location(self.name(includer), include.line), f"cannot find include file '{include.name}'")

    def _walk(self, relpath: str) -> tuple[list[str], list[tuple[Include, str]]]:
        """Every file of the closure, and every include that names no file (with its includer)."""
        seen, order, stack, missing = {relpath}, [relpath], [relpath], []
        while stack:
            current = stack.pop()
            for include in self.parsed(current).includes:
                found = self.resolve(include.name, current, include.system)
                if found is None:
                    missing.append((include, current))
                elif found not in seen:
                    seen.add(found)
                    order.append(found)
                    stack.append(found)
        return order, missing

    def files(self, relpath: str) -> tuple[str, ...]:
        """The file and everything it includes, transitively, sorted."""
        return tuple(sorted(self._walk(relpath)[0]))

    def closure(self, relpath: str) -> tuple[tuple[str, str], ...]:
        """``(relpath, sha256)`` of the file and everything it includes, sorted.

        An include that names no file is part of the closure too, as
        ``("<includer>:<line>: #include <name>", "missing")``: the job compiles to that
        located error, and creating the file later changes the closure (a new job).
        """
        files, missing = self._walk(relpath)
        found = [(f, self.parsed(f).sha256) for f in files]
        found += [(f"{includer}:{inc.line}: #include {inc.name}", "missing") for inc, includer in missing]
        return tuple(sorted(found))

    def include_errors(self, relpath: str) -> tuple[Diagnostic, ...]:
        """A located error for every include of the closure that names no file."""
        return tuple(self._missing(inc, includer) for inc, includer in self._walk(relpath)[1])

    def used_identifiers(self, relpath: str) -> frozenset[str]:
        """Every identifier of the closure outside comments: in a condition, a macro body or
        code (``uniform Light u_Lights[LIGHT_COUNT + 1];``).  A define whose name is not
        among them cannot change what the stage compiles to."""
        return frozenset().union(*(self.parsed(f).identifiers for f in self.files(relpath)))

    def tested_macros(self, relpath: str) -> frozenset[str]:
        """Every identifier a preprocessor condition of the closure tests.

        Closed through macro bodies: if ``#if HAS_X`` is tested and the closure
        has ``#define HAS_X (X != 0)``, ``X`` counts as tested too.
        """
        files = [self.parsed(f) for f in self.files(relpath)]
        tested = set().union(*(p.tested for p in files))
        bodies: dict[str, set[str]] = {}
        for parsed in files:
            for name, refs in parsed.macro_refs:
                bodies.setdefault(name, set()).update(refs)
        pending = list(tested)
        while pending:
            for ident in bodies.get(pending.pop(), ()):
                if ident not in tested:
                    tested.add(ident)
                    pending.append(ident)
        return frozenset(tested)
