"""The artist's loop: one warm process that recooks the chunks whose files change.

:class:`Watcher` cooks a world (or one chunk of it) once, then, for each batch of
saved files (:mod:`watchfiles`, native file events), re-scans only what changed and
recooks the chunks it touches through :func:`pipeline.api.cook` (incremental: an
unchanged chunk is not looked at).  The rule sets stay loaded between recooks unless
a rule set, a shader or ``pipeline.toml`` changes, which reopens the world and recooks
the whole scope, as does a file no chunk names (a new folder, a buffer).

Each recook is a :class:`Recook` whose :meth:`Recook.line` is the status line
``forest/c03: rocks.gltf changed -> 2 new keys, 3 jobs compiled, 0.21 s``, the time from
the save being seen to the chunk's outputs on disk (its index, and the shader library
holding its blobs; the level manifest follows, in ``total`` of ``--json``); bad input is
reported as located errors and the loop goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from pipeline import api
from pipeline.outputs import manifest as mf
from pipeline.errors import CookDiagnostic, Diagnostic, PipelineError
from pipeline.stamps import stamp_of
from pipeline.world import World

GLTF_SUFFIXES = (".gltf", ".glb")


class Recook(msgspec.Struct):
    """What one recook did."""

    scope: str                      # the chunk(s) recooked, or the world's name
    changed: list[str]              # the files that changed, relative to the world root
    new_keys: int = 0               # keys the recooked manifests have now and did not have before
    compiled: int = 0
    seconds: float = 0.0            # until the chunk outputs were on disk (indexes and library)
    errors: list[Diagnostic] = msgspec.field(default_factory=list)   # located; each prints as one line
    root: Path | None = None  # the world root: a cook's errors name files from it
    total: float | None = None      # until the recook ended (level manifests updated too)

    def line(self) -> str:
        what = (f"{Path(self.changed[0]).name} changed" if len(self.changed) == 1
                else f"{len(self.changed)} files changed" if self.changed else "cooked")
        errors = f", {len(self.errors)} errors" if self.errors else ""
        return (f"{self.scope}: {what} -> {self.new_keys} new keys, {self.compiled} jobs compiled{errors}, "
                f"{self.seconds:.2f} s")

    def to_json(self) -> dict:
        return {"scope": self.scope, "changed": self.changed, "new_keys": self.new_keys,
                "compiled": self.compiled, "seconds": round(self.seconds, 4),
                "total": None if self.total is None else round(self.total, 4),
                "errors": [str(d) for d in self.errors]}


class Watcher:
    """A world kept open between recooks; :meth:`run` is the loop, :meth:`recook` one step of it."""

    def __init__(self, world: Path | str, *, chunk: str | None = None, out: Path | str = "build",
                 cache: Path | str | None = None, jobs: int | None = None, rules: Path | str | None = None,
                 materials: Path | str | None = None) -> None:
        self.path, self.chunk, self.jobs = Path(world), chunk, jobs
        self.out, self.cache = Path(out).absolute(), cache
        self.rules, self.materials = rules, materials
        self.world = self._open(None)
        self._read: dict[str, tuple] = {}  # chunk index -> (its stamp, its keys) when last read
        self._files: tuple[World, dict[str, str]] | None = None  # a world and its file -> chunk map

    # ------------------------------------------------------------ world
    def _open(self, previous: World | None) -> World:
        world = api.open_world(self.path, rules=self.rules, materials=self.materials, cache=self.cache)
        if previous is not None:  # the rule sets did not change: keep them loaded
            world.loaded = previous.loaded
        return world

    def roots(self) -> list[Path]:
        """The folders whose changes matter: the world, its rule sets and its shader library."""
        found = []
        for path in (self.world.root, self.world.rules_dir, self.world.materials_dir):
            path = path.resolve()
            if not any(path == p or path.is_relative_to(p) for p in found):
                found.append(path)
        return found

    def ignored(self, path: Path) -> bool:
        """Outputs, the cache, and editors' temporary and hidden files."""
        path = path.absolute()
        for folder in (self.out, Path(self.world.cache_dir).absolute()):
            if path == folder or path.is_relative_to(folder):
                return True
        name = path.name
        return name.startswith(".") or name.endswith(("~", ".swp", ".tmp"))

    def chunks_of(self, paths: Iterable[Path]) -> tuple[set[str] | None, list[str]]:
        """(chunks to recook, or None for the whole scope; changed files relative to the world root)."""
        root = self.world.root.resolve()
        before = self._chunk_of_file()
        changed, whole = [], False
        for path in paths:
            path = path.resolve() if path.exists() else path.absolute()
            if not path.is_relative_to(root) or path.name == "pipeline.toml":
                whole = True  # rule sets, shaders, configuration
                changed.append(str(path))
                continue
            rel = path.relative_to(root).as_posix()
            changed.append(rel)
            whole = whole or not rel.endswith(GLTF_SUFFIXES)
        reopen = whole or any(rel not in before for rel in changed)
        if whole:
            self.world = api.open_world(self.path, rules=self.rules, materials=self.materials, cache=self.cache)
            return None, sorted(changed)
        if reopen:  # a new or removed file: discover the chunks again
            self.world = self._open(self.world)
        after = self._chunk_of_file()
        chunks = {after.get(rel) or before.get(rel) for rel in changed}
        if None in chunks or any(c not in {x.name for x in self.world.chunks} for c in chunks):
            return None, sorted(changed)  # a chunk appeared or went away: the whole scope (and its sweep)
        if self.chunk is not None:
            chunks = {c for c in chunks if c == self.chunk or c.startswith(self.chunk.rstrip("/") + "/")}
        return chunks, sorted(changed)

    def _chunk_of_file(self) -> dict[str, str]:
        """File (relative to the world root) -> its chunk, made once per opened world (100,000 files
        at a save would cost ten milliseconds each time)."""
        if self._files is None or self._files[0] is not self.world:
            self._files = (self.world, {f: c.name for c in self.world.chunks for f in c.files})
        return self._files[1]

    # ------------------------------------------------------------ cooking
    def _manifest_keys(self, chunks: Iterable[str] | None) -> set[str]:
        if chunks is None:
            paths = [p for p in self.out.rglob("*.json") if not p.name.endswith(".level.json")] \
                if self.out.is_dir() else []
        else:
            paths = [mf.chunk_manifest_path(self.out, c) for c in chunks]
        keys: set[str] = set()
        for path in paths:
            stamp = stamp_of(path)
            known = self._read.get(str(path))
            if known is not None and stamp is not None and known[0] == stamp:
                keys.update(known[1])  # read after the last recook, unchanged since: not read again
                continue
            try:
                found = frozenset(mf.load_chunk_manifest(path).keys)
            except (mf.ManifestError, OSError):
                continue
            if stamp is not None:
                self._read[str(path)] = (stamp, found)
            keys.update(found)
        return keys

    def recook(self, chunks: set[str] | None, changed: list[str]) -> Recook:
        """Cook these chunks (None: the watched scope); bad input becomes located lines."""
        start = time.perf_counter()
        scope = ", ".join(sorted(chunks)) if chunks else (self.chunk or self.world.root.name)
        result = Recook(scope, changed, root=self.world.root)
        before = self._manifest_keys(chunks)
        on_disk = None  # when the last recooked chunk's outputs were in place
        for chunk in sorted(chunks) if chunks else [self.chunk]:
            try:
                cooked = api.cook(self.world, chunk=chunk, cache=self.cache, out=self.out, jobs=self.jobs)
            except PipelineError as exc:  # a shader file's, named canonically, prints as a cook's error does
                result.errors.extend(CookDiagnostic(d.location, d.message, d.severity) if exc.canonical_paths else d
                                     for d in exc.diagnostics)
                continue
            result.compiled += len(cooked.run.compiled)
            result.errors.extend(cooked.errors)
            on_disk = cooked.published_at or on_disk
        end = time.perf_counter()
        result.seconds, result.total = (on_disk or end) - start, end - start
        result.new_keys = len(self._manifest_keys(chunks) - before)
        return result

    def run(self, report: Callable[[Recook], None], *, ready: Callable[[list[Path]], None] | None = None,
            stop=None) -> None:
        """Cook the scope, then recook on every batch of changes until ``stop`` is set or Ctrl-C."""
        import watchfiles

        report(self.recook(None, []))
        roots = self.roots()
        # yield_on_timeout: an empty batch every 0.2 s of quiet; the first says the watch is active.
        # step: a batch is yielded once a step passes with no new change, so a save is seen 1-2 steps
        # after it (10-20 ms); the events of one save (write, close, an editor's rename) come within a
        # millisecond or two, and a save spread wider is recooked again when it ends.
        for batch in watchfiles.watch(*roots, step=10, debounce=400, stop_event=stop, raise_interrupt=False,
                                      rust_timeout=200, yield_on_timeout=True,
                                      watch_filter=lambda change, path: not self.ignored(Path(path))):
            if ready is not None:
                ready(roots)
                ready = None
            if not batch:
                continue
            paths = sorted({Path(path) for _, path in batch})
            try:
                chunks, changed = self.chunks_of(paths)
            except PipelineError as exc:  # a pipeline.toml that no longer loads: say so, wait for the fix
                for d in exc.diagnostics:
                    report(Recook(self.path.name, [str(p) for p in paths], errors=[d]))
                continue
            if chunks == set():
                continue  # changes outside the watched chunk
            report(self.recook(chunks, changed))
