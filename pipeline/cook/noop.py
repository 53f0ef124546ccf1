"""The no-op cook by file stats alone: a stamp of everything a cook read and wrote.

After a cook on the command line that changed nothing (nothing compiled, written or
removed, no warning, on this machine, no shared tier, nothing read outside the world,
rules and shader library) the command writes a stamp
under the cache folder, ``noop-stamps/<key>.json``, keyed by the command's arguments
and working directory.  It records a digest of the stamps (:mod:`pipeline.stamps`: ``mtime_ns``,
size, inode, ``ctime_ns``; folders too, so an added or removed file shows) of

- every file and folder of the world (the cache and output folders left out), of the
  rule sets and of the shader library; a cook of one chunk or level (``--chunk``,
  ``--level``) reads only that folder of the world: its stamp walks that folder, and
  lists the folders on the way there with their direct entries (``pipeline.toml``
  among them), not the rest of the world,
- every file of the output folder,
- the cache database, the code of this package and the compiler's library folder,

plus where the paths given (the world, ``--out``, ``--cache``, ``--rules``, ``--materials``)
resolved to through any symlinks (a link re-pointed to another world is another cook), the
day it was written, and what that cook printed (its summary or JSON document,
the located errors of bad input, which a no-op reports again) and its exit code; a JSON
document is printed again with its ``duration`` replaced by the time the answer took.  The next
``pipeline cook`` with the same arguments stats the same paths (the standard library and
orjson only, before anything else is imported); when every stat matches it prints that summary and exits 0.
Anything else, a symlink anywhere, an option this module does not know, or a new day
(use records for ``pipeline cache gc`` are refreshed by the first cook of each day),
takes the full path, which writes a new stamp.
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
import os
import re
import sys
import time
from dataclasses import dataclass, field

import orjson

from pipeline.stamps import of_stat, stamp_of

VERSION = 6  # 4: the stamps of pipeline.stamps (a missing file as [path]); 5: shallow roots (a chunk's way);
# 6: the state recorded as its digest
STAMPS = "noop-stamps"
_VALUE_OPTIONS = {"-l": "level", "--level": "level", "-c": "chunk", "--chunk": "chunk", "--cache": "cache",
                  "-o": "out", "--out": "out", "-j": "jobs", "--jobs": "jobs", "--backend": "backend",
                  "--rules": "rules", "--materials": "materials"}
_FLAGS = {"--json": "json", "-q": "quiet", "--quiet": "quiet"}
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Unstampable(Exception):
    """Something the stat walk cannot vouch for (a symlink, a folder that vanished ...)."""


def parse_args(argv: list[str]) -> dict | None:
    """The options of ``pipeline cook ARGV`` that a stamp covers, or None for anything else."""
    found: dict = {"json": False, "quiet": False}
    positional = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _FLAGS and not eq:
            found[_FLAGS[name]] = True
        elif name in _VALUE_OPTIONS:
            if not eq:
                i += 1
                if i >= len(argv):
                    return None
                value = argv[i]
            if _VALUE_OPTIONS[name] in found:
                return None
            found[_VALUE_OPTIONS[name]] = value
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            positional.append(arg)
        i += 1
    if len(positional) != 1 or found.get("backend", "capi") != "capi":
        return None
    if "jobs" in found and not (found["jobs"].isdigit() and int(found["jobs"]) >= 1):
        return None
    found["world"] = positional[0]
    return found


def stamp_key(args: dict) -> tuple[str, str]:
    """(cache folder, key) of a cook's arguments: what the stamp is looked up by."""
    cache = args.get("cache") or os.environ.get("PIPELINE_CACHE") or "cache"
    ident = {
        "version": VERSION, "cwd": os.getcwd(), "world": os.path.abspath(args["world"]),
        "level": args.get("level"), "chunk": args.get("chunk"), "cache": os.path.abspath(cache),
        "out": os.path.abspath(args.get("out") or "build"),
        "rules": os.path.abspath(args["rules"]) if args.get("rules") else None,
        "materials": os.path.abspath(args["materials"]) if args.get("materials") else None,
        "python": sys.executable, "scheduler": os.environ.get("PIPELINE_SCHEDULER") or "none",
        "path": os.environ.get("PATH"),
    }
    key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:32]
    return os.path.abspath(cache), key


def resolved(args: dict) -> dict:
    """Where the paths given lead, every symlink followed: what the stamped cook read and wrote."""
    given = {"world": args["world"], "out": args.get("out") or "build",
             "cache": args.get("cache") or os.environ.get("PIPELINE_CACHE") or "cache",
             "rules": args.get("rules"), "materials": args.get("materials")}
    return {name: os.path.realpath(path) if path else None for name, path in given.items()}


def _stamp_path(cache: str, key: str) -> str:
    return os.path.join(cache, STAMPS, key + ".json")


def _today() -> int:
    return int(time.time() // 86400)


# ---------------------------------------------------------------- the stat walk
def _walk(root: str, skip: tuple[str, ...], deep: bool = True, folders: list | None = None) -> list:
    """[path, *stamp] of ``root`` and everything under it, folders included, in walk order: the stamp
    the full cook trusts (:mod:`pipeline.stamps`).  Not ``deep``: the folder and its direct files only
    (its own stamp shows an entry added, removed or renamed; what its sub-folders hold is not read).
    Each folder's entry comes first, then its entries that are not folders, by name.  ``folders``
    collects the positions of the folders' entries, and None for a sub-folder left out."""
    out = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            st = os.stat(folder)
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            raise _Unstampable(folder) from exc
        if folders is not None:
            folders.append(len(out))
        out.append([folder, *of_stat(st)])
        for entry in entries:
            if entry.is_symlink():
                raise _Unstampable(entry.path)
            if entry.is_dir():
                if deep and entry.path not in skip and entry.name != "__pycache__":
                    stack.append(entry.path)
                elif folders is not None:
                    folders.append(None)
            else:
                out.append([entry.path, *of_stat(entry.stat())])
    return out


def world_scope(root: str, folder: str | None) -> list[list]:
    """The roots a cook's stamp walks in the world: the whole of it, or (a cook of the chunk or level
    in ``folder``, relative to ``root``) that folder, and each folder on the way with its direct entries."""
    root = os.path.abspath(root)
    if not folder:
        return [[root, True]]
    way, at = [[root, False]], root
    parts = folder.strip("/").split("/")
    for part in parts[:-1]:
        at = os.path.join(at, part)
        way.append([at, False])
    return way + [[os.path.join(at, parts[-1]), True]]


def _files(paths: list[str]) -> list:
    out = []
    for path in paths:
        stamp = stamp_of(path)
        out.append([path, *(stamp or ())])  # [path] alone: missing
    return out


def _state(roots: list, skip: tuple[str, ...], files: list[str], walked: dict | None = None,
           folders: dict | None = None) -> list:
    """The walk of each root (``[path, deep]``), then the stamps of ``files``; ``walked``: walks already
    taken, by ``(path, deep)``, used as they are; ``folders`` gets each root's folder positions (:func:`_walk`)."""
    walked, folders = walked or {}, {} if folders is None else folders
    return [walked.get((root, deep)) or _walk(root, skip, deep, folders.setdefault((root, deep), []))
            for root, deep in roots] + [_files(files)]


def _digest(state: list) -> str:
    """What a stamp records of ``state``: the SHA-256 of its JSON.  Equal digests, equal states: each walk
    lists the same paths in the same order, each with the same stamp (a path missing then is missing
    now).  Every stamp field takes part, as in :func:`pipeline.stamps.why_dirty`.  A digest, not the
    list: a world of 100,000 files has a state of 9 MB, which a check would parse (70 ms) to compare."""
    return hashlib.sha256(orjson.dumps(state)).hexdigest()


def _cache_files(cache: str) -> list[str]:
    return [os.path.join(cache, name) for name in ("cache.db", "cache.db-wal")]


# ---------------------------------------------------------------- write and check
def write_stamp(args: dict, *, world_root: str, rules_dir: str, materials_dir: str, compiler_dir: str | None,
                doc: str, text: str, errors: str = "", code: int = 0, started_ns: int = 0,
                folder: str | None = None, walk: "Walk | None" = None) -> None:
    """Record the state after a local cook: ``doc`` (``--json``) or ``text`` is what the next no-op prints
    on stdout, ``errors`` (located lines) on stderr, and ``code`` its exit code; ``folder``: the world
    folder (relative to its root) of the chunk or level it cooked alone (:func:`world_scope`).

    An input changed at or after ``started_ns`` (when the cook began) may have been read
    before or after its change: no stamp then, so the next cook takes the full path.
    ``walk``: what the missed check before the cook walked (:func:`walked`); an input root it walked
    is stamped as it was then, when the cook began, and not walked again (a file changed since
    then differs from its stamp: the next cook takes the full path).  The output folder and the
    cache are always stamped as they are now.
    """
    cache, key = stamp_key(args)
    out = os.path.abspath(args.get("out") or "build")
    skip = (out, cache)
    roots = world_scope(world_root, folder) + [[os.path.abspath(rules_dir), True],
                                               [os.path.abspath(materials_dir), True], [_PACKAGE, True]]
    if compiler_dir:
        roots.append([os.path.abspath(compiler_dir), True])
    if os.path.isdir(out):
        roots.append([out, True])
    path = _stamp_path(cache, key)
    try:
        where = resolved(args)
        if os.path.commonpath([where["world"], os.path.realpath(world_root)]) != os.path.realpath(world_root):
            raise _Unstampable("the world path leads elsewhere than the world cooked")
        before = walk.roots if walk is not None and walk.skip == skip else None
        taken = {(root, deep): found for (root, deep), found in (before or {}).items() if root != out}
        state = _state(roots, skip, _cache_files(cache), taken)
        inputs = state[:len(roots) - (1 if roots[-1][0] == out else 0)]
        if any(entry[1] >= started_ns for walk in inputs for entry in walk):
            raise _Unstampable("an input changed while the cook ran")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = f"{path}.{os.getpid()}.tmp"
        with open(temp, "wb") as f:
            f.write(orjson.dumps({"version": VERSION, "day": _today(), "roots": roots, "skip": list(skip),
                                  "resolved": where, "state": _digest(state), "doc": doc, "text": text,
                                  "errors": errors, "code": code}))
        os.replace(temp, path)
    except (_Unstampable, OSError):
        forget(args)


def forget(args: dict) -> None:
    """Remove the stamp of these arguments (the next cook takes the full path)."""
    cache, key = stamp_key(args)
    try:
        os.unlink(_stamp_path(cache, key))
    except OSError:
        pass


def check(args: dict) -> dict | None:
    """The recorded no-op answer when nothing a cook reads or writes changed since the stamp, else None."""
    cache, key = stamp_key(args)
    try:
        with open(_stamp_path(cache, key), "rb") as f:
            stamp = orjson.loads(f.read())
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("version") != VERSION or stamp.get("day") != _today():
        return None
    if stamp.get("resolved") != resolved(args):
        return None  # a symlink on the way to the world (or another path given) leads elsewhere now
    started_ns, folders = time.time_ns(), {}
    try:
        roots, skip = stamp["roots"], tuple(stamp["skip"])
        state = _state(roots, skip, _cache_files(cache), folders=folders)
    except (_Unstampable, KeyError, TypeError, ValueError):
        return None
    if _digest(state) == stamp.get("state"):
        return stamp
    _WALKED[key] = Walk(started_ns, {(root, deep): walk for (root, deep), walk in zip(roots, state)}, skip, folders)
    return None


@dataclass(frozen=True)
class Walk:
    """What a missed :func:`check` walked: each path's stamp, and when the walk began.  A cook that uses
    these stamps began then: an input changed after that is no input it vouches for (:func:`write_stamp`).
    ``roots``: each root's walk by ``(path, deep)``, with the paths it skipped (``skip``)."""

    started_ns: int
    roots: dict[tuple[str, bool], list]
    skip: tuple[str, ...]
    folders: dict[tuple[str, bool], list] = field(default_factory=dict)  # each root's folder positions (_walk)

    @functools.cached_property
    def stamps(self) -> dict[str, list]:
        """Each path the roots' walks saw, with its stamp, by path: its entry ``[path, *stamp]``."""
        found: dict[str, list] = {}
        for walk in self.roots.values():  # one C call per root: a world of 100,000 files takes 10 ms
            found.update(zip(map(operator.itemgetter(0), walk), walk))
        return found

    def listing(self, root: str) -> dict[str, list[str]] | None:
        """Every folder of ``root`` by its path relative to it ('' for ``root``), with the names of its
        entries that are not folders, by name: what the walk saw, which it refused had it met a link.
        None when the walk did not go through all of ``root`` (it was not walked whole, a sub-folder was
        left out) or saw a folder twice (one inode at two paths, as a bind mount shows it)."""
        walk, marks = self.roots.get((root, True)), self.folders.get((root, True))
        if walk is None or not marks or None in marks or len({walk[i][3] for i in marks}) < len(marks):
            return None
        out = {}
        for start, end in zip(marks, [*marks[1:], len(walk)]):
            folder = walk[start][0]
            cut = len(folder) + 1
            out[folder[len(root) + 1:]] = [entry[0][cut:] for entry in walk[start + 1:end]]
        return out


_WALKED: dict[str, Walk] = {}  # stamp key -> what a check that missed walked, for the cook that follows it


def walked(args: dict) -> Walk | None:
    """What the missed :func:`check` of these arguments walked in this process, for the cook that follows it
    to use rather than stat every file again (once: taken, it is gone)."""
    return _WALKED.pop(stamp_key(args)[1], None)


def drop_walks() -> None:
    """Forget what missed checks walked: they are good for the command that made them only."""
    _WALKED.clear()


_DURATION = re.compile(r'^  "duration": [^,\n]*', re.M)  # the top-level field of an indented, sorted document


def with_duration(doc: str, seconds: float) -> str:
    """A stamped ``--json`` document with ``duration`` the time this answer took, not the stamped cook's."""
    return _DURATION.sub(f'  "duration": {round(seconds, 3)!r}', doc, count=1)


def fast_cook(argv: list[str]) -> int | None:
    """``pipeline cook ARGV`` answered from its stamp (the exit code), or None: run the full cook."""
    started = time.perf_counter()
    args = parse_args(argv)
    if args is None or (os.environ.get("PIPELINE_SCHEDULER") or "none") != "none":
        return None
    stamp = check(args)
    if stamp is None:
        return None
    if stamp["errors"]:
        if sys.stderr.isatty():
            return None  # a terminal may want them coloured: the full path prints them
        sys.stderr.write(stamp["errors"])
        sys.stderr.flush()
    sys.stdout.write(with_duration(stamp["doc"], time.perf_counter() - started) if args["json"] else stamp["text"])
    sys.stdout.flush()
    return stamp["code"]
