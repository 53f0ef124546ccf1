"""A rule file's YAML parse remembered across processes, so that a process whose rule files did not
change neither imports PyYAML nor composes a node tree.

Loading a rule set (:func:`pipeline.rules.load.load_ruleset_text`) parses its YAML into data, validates
the data into a :class:`~pipeline.rules.models.RuleSet` and compiles it; the compile asks the YAML
document where each part of the rule set was written, for the locations compiled expressions and
rules carry.  After a load without a problem, :class:`Remembered` writes beside the cache, one file
per rule file (``<cache>/parsed-rules/<hash of its path>.msgpack``):

- the data the YAML gave,
- every location the compile asked for (:class:`Recording` notes them as it answers),
- a digest of the rule file's text and of the code that reads YAML and locates in it.

A later load of the same text validates and compiles that data again, every check included, with
the noted locations answering the compile (:class:`Replay`).  Where the compile asks for a location
that was not noted (it took another path: a fragment of the materials folder gone, a fact provider
changed), the replay stops and the file is parsed as YAML after all, so a problem is always reported
exactly as a fresh parse reports it.  A file that is missing, damaged, written for another text or
code, or unreadable is a miss; one that cannot be written (a read-only cache) is not written.  Only a
command that writes the cache writes these files (a cook, ``pipeline watch``): a report or a dry run
reads them and leaves the cache folder as it was.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import secrets
from pathlib import Path
from typing import Any

import msgspec

from pipeline.digest import code_hash, stable_hash
from pipeline.errors import Location

FOLDER = "parsed-rules"
FORMAT = 1
MAX_BYTES = 64 * 2**20
_DEFAULT = (1, 0)  # the (line, col) an expression's own location is asked with


class Missed(Exception):
    """The compile asked a replay for a location no earlier load noted."""


class _Entry(msgspec.Struct, array_like=True):
    """One remembered parse: what the file holds."""

    format: int
    digest: str  # of the rule file's text and the YAML-reading code
    data: bytes  # what the YAML gave, msgpack (decoded afresh by each load: the load adds to it)
    at: list[tuple[list, bool, int | None, int | None]]    # (path, key, line, col) of each at() asked
    exprs: list[tuple[list, bool, int | None, int | None]]  # (path, key, line, col) of each expression's place


_DECODER = msgspec.msgpack.Decoder(_Entry)


class Recording:
    """A YAML document (:class:`pipeline.rules.yaml_nodes.YamlDocument`) that notes each location it gives."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.root = doc.root
        self.at_asked: dict[tuple[tuple, bool], Location] = {}
        self.exprs: dict[tuple[tuple, bool], Location] = {}

    def location(self, node: Any) -> Location:
        return self.doc.location(node)

    def at(self, loc: tuple, *, key: bool = False) -> Location:
        found = self.at_asked[(tuple(loc), key)] = self.doc.at(loc, key=key)
        return found

    def find(self, loc: tuple, *, key: bool = False) -> tuple[tuple[tuple, bool], Any]:
        return (tuple(loc), key), self.doc.find(loc, key=key)

    def expr_location(self, found: tuple[tuple[tuple, bool], Any], line: int = 1, col: int = 0) -> Location:
        where = self.doc.expr_location(found[1], line, col)
        if (line, col) == _DEFAULT:
            self.exprs[found[0]] = where
        return where

    def validation_diagnostics(self, problems: list) -> list:
        return self.doc.validation_diagnostics(problems)


class Replay:
    """The locations an earlier load noted, answering the compile as the YAML document would."""

    def __init__(self, path: str, entry: _Entry) -> None:
        self.path = path
        self.at_asked = {(tuple(loc), key): Location(path, line, col) for loc, key, line, col in entry.at}
        self.exprs = {(tuple(loc), key): Location(path, line, col) for loc, key, line, col in entry.exprs}

    def at(self, loc: tuple, *, key: bool = False) -> Location:
        try:
            return self.at_asked[(tuple(loc), key)]
        except KeyError:
            raise Missed(loc) from None

    def find(self, loc: tuple, *, key: bool = False) -> tuple[tuple, bool]:
        return tuple(loc), key

    def expr_location(self, found: tuple[tuple, bool], line: int = 1, col: int = 0) -> Location:
        where = self.exprs.get(found) if (line, col) == _DEFAULT else None
        if where is None:
            raise Missed(found)
        return where

    def location(self, node: Any) -> Location:
        raise Missed(node)  # a node of the YAML: there is none

    def validation_diagnostics(self, problems: list) -> list:
        raise Missed(problems)  # the data no longer validates (the models changed): the YAML reports it


class Remembered:
    """The remembered parses of a cache folder's rule files (none: ``folder`` None); ``write``: a load that
    parses YAML remembers it (a command that only reads the cache, a report or a dry run, does not)."""

    def __init__(self, cache_dir: Path | None, *, write: bool = True) -> None:
        self.folder = None if cache_dir is None else Path(cache_dir) / FOLDER
        self.write = write

    def digest(self, text: str) -> str:
        return stable_hash([_code(), text])

    def get(self, file: Path, text: str) -> _Entry | None:
        """The remembered parse of ``file`` holding ``text``; None: none (or not for this text and code)."""
        if self.folder is None:
            return None
        try:
            with open(self._path(file), "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
            entry = _DECODER.decode(data) if len(data) <= MAX_BYTES else None
        except (OSError, msgspec.DecodeError, ValueError):
            return None
        if entry is None or entry.format != FORMAT or entry.digest != self.digest(text):
            return None
        return entry

    def data(self, entry: _Entry) -> dict | None:
        """The data of a remembered parse (a fresh copy); None when it does not decode to a mapping."""
        try:
            data = msgspec.msgpack.decode(entry.data)
        except msgspec.DecodeError:
            return None
        return data if isinstance(data, dict) else None

    def put(self, file: Path, text: str, data: bytes, recording: Recording) -> None:
        """Remember the parse of ``file`` (``data``: what its YAML gave, msgpack) and what ``recording`` noted."""
        if self.folder is None or not self.write:
            return
        entry = _Entry(FORMAT, self.digest(text), data,
                       [(list(loc), key, at.line, at.col) for (loc, key), at in recording.at_asked.items()],
                       [(list(loc), key, at.line, at.col) for (loc, key), at in recording.exprs.items()])
        try:
            _replace(self._path(file), msgspec.msgpack.encode(entry))
        except OSError:
            pass  # a cache that cannot be written: the next load parses the YAML again

    def _path(self, file: Path) -> Path:
        return self.folder / f"{stable_hash(os.path.abspath(file))[:32]}.msgpack"


def _replace(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` or what it held, never part of it: written beside it, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with open(temp, "xb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def encoded_data(data: Any) -> bytes | None:
    """What a rule file's YAML gave, as the remembered parse holds it; None where msgpack cannot (an
    integer wider than 64 bits): such a file is not remembered."""
    try:
        return msgspec.msgpack.encode(data)
    except (msgspec.EncodeError, OverflowError, TypeError):
        return None


@functools.cache
def _code() -> str:
    """The code that reads YAML into data and locations: this package's reader and the PyYAML installed
    (its files' place, size and time, found without importing it)."""
    spec = importlib.util.find_spec("yaml")
    origin = getattr(spec, "origin", None) or ""
    try:
        stat = os.stat(origin)
        installed = [origin, stat.st_size, stat.st_mtime_ns]
    except OSError:
        installed = [origin]
    return stable_hash([code_hash("rules/yaml_nodes.py", "rules/parsed.py"), installed])
