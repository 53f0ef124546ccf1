"""The world: the one object every stage takes.

A world is a folder of glTF content.  :func:`open_world` decides, once, everything
the stages share about it:

- its **root**: the nearest folder at or above the given path that holds
  ``pipeline.toml`` (as git finds ``.git``); without one, the given folder (or a
  file's folder) is its own world.  A path below the root is a **scope**, not a
  new root: ``pipeline cook WORLD/forest`` cooks the chunks under ``forest`` of
  WORLD, with WORLD's config, rules, materials and output names;
- its **config** (``pipeline.toml``), rule-set folder and shader library
  (argument > ``pipeline.toml`` > built-in);
- **level assignment** (:meth:`WorldConfig.level_of`, the only place it is made);
- **selection**: which chunks a command covers (:meth:`World.select`), with
  "did you mean" for an unknown level or chunk;
- the **store** (the cache folder: argument > ``$PIPELINE_CACHE`` > ``./cache``).

Rule sets are loaded on first use: scanning never needs them.
"""

from __future__ import annotations

import difflib
import os
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from pipeline.builtin import builtin_materials_dir, builtin_rules_dir
from pipeline.cache.store import Store, default_cache_dir
from pipeline.chunks import ChunkInfo, discover_folders, discover_listed
from pipeline.config import CONFIG_NAME, WorldConfig, load_world_config
from pipeline.errors import Diagnostic, PipelineError

if TYPE_CHECKING:
    from pipeline.rules.models import RuleSet


class Selection(msgspec.Struct, frozen=True):
    """The chunks one command covers, and filters on what it keeps of them.

    ``only_file`` (a file scope) keeps that file's draws; ``only_chunk`` and
    ``only_chunks`` keep draws of those chunk names (folder chunks or grid cells).
    """

    root: Path
    chunks: list[ChunkInfo]
    only_file: str | None = None
    only_chunk: str | None = None
    only_chunks: frozenset[str] | None = None

    def wants(self, chunk: str) -> bool:
        """Whether draws of ``chunk`` (a folder chunk or a grid cell) are in the result."""
        return ((self.only_chunk is None or chunk == self.only_chunk)
                and (self.only_chunks is None or chunk in self.only_chunks))


@dataclass(eq=False)
class World:
    """A world folder with its configuration, rule sets, shader library and cache resolved."""

    root: Path
    config: WorldConfig
    rules_dir: Path
    materials_dir: Path
    cache_dir: Path
    scope: str = ""  # the sub-folder or file the world was opened at, '/'-separated ('' = all of it)
    # every folder of the world (by its path relative to the root, with the names of its entries that
    # are not folders) as a stat walk of all of it just found them: the chunks are found there, not by
    # walking the world again (pipeline.chunks.discover_listed; where it cannot tell, the walk decides).
    # A copy of this world (dataclasses.replace) keeps it.
    listing: Mapping[str, Sequence[str]] | None = field(default=None, repr=False)
    # rule sets by rules folder and runtime axes, shared by this world's copies (dataclasses.replace with
    # another cache folder or platform) and handed on by pipeline watch to a world opened again over the
    # same rules: a cook and the command that reports it load them once
    loaded: dict = field(default_factory=dict, repr=False)
    cache_opened: bool = field(default=False, repr=False)  # open_store gave the cache to write (a cook's)

    # ------------------------------------------------------------ rules
    @cached_property
    def rulesets(self) -> list[RuleSet]:
        from pipeline.rules.axes import restrict
        from pipeline.rules.load import load_rulesets  # rule sets load on first use

        key = (self.rules_dir, repr(sorted(self.config.axes.items())))
        if key not in self.loaded:
            # the parses of its rule files are remembered in the cache once this world opened it to write
            parsed = load_rulesets(self.rules_dir, cache_dir=self.cache_dir, remember=self.cache_opened)
            self.loaded[key] = restrict(parsed, self.config.axes, self.root / "pipeline.toml")
        return self.loaded[key]

    @cached_property
    def families(self) -> dict[str, RuleSet]:
        return {r.shader: r for r in self.rulesets}

    @property
    def allowed_roots(self) -> tuple[Path, ...]:
        """Folders outside the world, rules and materials roots that reads may lead to (pipeline.toml)."""
        return self.config.allowed_paths(self.root)[1:]

    # ------------------------------------------------------------ levels and chunks
    def level_of(self, chunk: str) -> str:
        """The level of a chunk or grid cell name."""
        return self.config.level_of(chunk)

    @cached_property
    def _discovered(self) -> tuple[list[ChunkInfo], list[Diagnostic]]:
        found = discover_listed(self.root, self.config, self.listing) if self.listing is not None else None
        return found or discover_folders(self.root, self.config)

    @property
    def chunks(self) -> list[ChunkInfo]:
        """Every chunk of the world, sorted by name (discovered once)."""
        return self._discovered[0]

    def folder_warnings(self, *, level: str | None = None, chunk: str | None = None,
                        chunks: Collection[str] | None = None) -> list[Diagnostic]:
        """A warning per folder link not followed (:mod:`pipeline.chunks`), of those in what a
        :meth:`select` of the same arguments covers: the world's folder scope, or one level of it."""
        if chunk is not None or chunks is not None or self._scope_is_file:
            return []
        prefix = self.scope + "/" if self.scope else ""
        return [d for d in self._discovered[1] if (not prefix or (d.file + "/").startswith(prefix))
                and (level is None or self.level_of(d.file) == _clean_name(level))]

    @property
    def levels(self) -> list[str]:
        return sorted({c.level for c in self.chunks} | set(self.config.levels))

    def select(self, *, level: str | None = None, chunk: str | None = None,
               chunks: Collection[str] | None = None) -> Selection:
        """The chunks in scope, narrowed to ``level``, ``chunk`` or the names in ``chunks``.

        An unknown level or chunk is a :class:`PipelineError` located at that argument
        (``chunk: error: no chunk 'x' in the world; did you mean ...``), with the closest names.
        Names in ``chunks`` that are not in the world are ignored.
        """
        if chunk is not None and level is None and chunks is None:
            alone = self._folder_chunk(chunk)
            if alone is not None:  # found without walking the rest of the world
                return Selection(self.root, [alone], None, alone.name, None)
        found = self._in_scope()
        only_file = self.scope if self._scope_is_file else None
        if level is not None:
            level = _clean_name(level)
            if level not in self.levels:
                raise _unknown("level", level, self.levels)
            found = [c for c in found if c.level == level]
        if chunk is not None:
            chunk = self._chunk_name(chunk)
            found = [c for c in found if c.name == chunk or self._in_grid_level(c, chunk)]
            if not found:
                raise _unknown("chunk", chunk, [c.name for c in self.chunks])
        only = None
        if chunks is not None:
            only = frozenset(chunks)
            found = [c for c in found if c.name in only or any(self._in_grid_level(c, n) for n in only)]
        return Selection(self.root, found, only_file, chunk, only)

    def _folder_chunk(self, name: str) -> ChunkInfo | None:
        """The folder chunk ``name`` found by walking its folder alone, as the whole world's walk would
        find it; None when that cannot be vouched for (the world walked already, a scope, a grid
        level, a link or hidden folder on the way, no such folder): the whole walk decides."""
        if "_discovered" in self.__dict__ or self.scope:
            return None
        clean = _clean_name(name)
        parts = clean.split("/")
        if not clean or any(not part or part.startswith(".") or part == ".." for part in parts) \
                or self.config.grid(self.config.level_of(clean)):
            return None
        folder = self.root
        for part in parts:
            folder = folder / part
            if folder.is_symlink() or not folder.is_dir():
                return None
        found = [c for c in discover_folders(self.root, self.config, clean)[0] if c.name == clean]
        return found[0] if found else None

    def _in_scope(self) -> list[ChunkInfo]:
        if not self.scope:
            return list(self.chunks)
        if self._scope_is_file:
            return [c for c in self.chunks if self.scope in c.files][:1]
        prefix = self.scope + "/"
        return [c for c in self.chunks if c.name == self.scope or c.name.startswith(prefix)]

    @cached_property
    def _scope_is_file(self) -> bool:
        return bool(self.scope) and not (self.root / self.scope).is_dir()

    def _in_grid_level(self, info: ChunkInfo, name: str) -> bool:
        return bool(self.config.grid(info.level)) and name.startswith(info.level + "/")

    def _chunk_name(self, name: str) -> str:
        """A chunk name as typed: ``forest/c01/`` and ``forest\\c01`` name ``forest/c01``."""
        if any(c.name == name for c in self.chunks):
            return name
        return _clean_name(name)

    # ------------------------------------------------------------ the cache
    def open_store(self) -> Store:
        """The cache; one that cannot be made or opened (under a file, read-only, a full disk) is a located error."""
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            store = Store(self.cache_dir)
        except (OSError, sqlite3.Error) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise PipelineError.at(str(self.cache_dir), f"cannot open the cache: {reason}") from None
        self.cache_opened = True
        return store


def _clean_name(name: str) -> str:
    cleaned = name.replace("\\", "/").strip("/")
    return cleaned or name


def _unknown(kind: str, name: str, known: list[str]) -> PipelineError:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return PipelineError.of_argument(kind, f"no {kind} {name!r} in the world{hint}")


def find_world_root(path: Path) -> Path:
    """The world a path belongs to (its real folder): see :func:`locate`."""
    return locate(path)[0]


def locate(path: Path | str) -> tuple[Path, str]:
    """(world root, scope) of a path: the nearest folder at or above it holding pipeline.toml.

    The path is first taken as given (made absolute, symlinks not resolved), so a path through
    a folder link of a world (``WORLD/linked``) stays in that world, scope ``linked``, as its
    chunks are named.  When no folder on that way holds pipeline.toml, the path's real folder is
    looked up the same way, so a link to a folder inside a world (``LINK/forest``) finds that
    world.  Without one either way, a folder is its own world and a file belongs to its parent
    folder.  The root returned is a real path.
    """
    given = Path(os.path.abspath(path))
    for way in (given, given.resolve()):
        start = way if way.is_dir() else way.parent
        for folder in (start, *start.parents):
            if (folder / CONFIG_NAME).is_file():
                return folder.resolve(), way.relative_to(folder).as_posix()
    real = given.resolve()
    start = real if real.is_dir() else real.parent
    return start, real.relative_to(start).as_posix()


def open_world(path: Path | str, *, rules: Path | str | None = None, materials: Path | str | None = None,
               cache: Path | str | None = None) -> World:
    """Resolve the world of ``path``: root, config, rules, materials, cache and scope."""
    given = Path(path)
    if not given.exists():
        raise PipelineError.at(str(path), "no such file or folder")
    root, scope = locate(given)
    config = load_world_config(root)
    return World(root, config,
                 _folder(rules, config.rules, root, builtin_rules_dir(), "rules"),
                 _folder(materials, config.materials, root, builtin_materials_dir(), "materials"),
                 Path(cache) if cache is not None else default_cache_dir(),
                 "" if scope == "." else scope)


def _folder(explicit, configured, root: Path, builtin: Path, name: str) -> Path:
    if explicit is not None:
        return Path(explicit)
    if configured is not None:
        if not (root / configured).is_dir():
            raise PipelineError.at(CONFIG_NAME, f"{name}: {str(configured)[:200]!r} is not a folder")
        return root / configured
    return builtin
