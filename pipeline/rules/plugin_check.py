"""``pipeline rules check``: every plug-in a rule set names resolves and loads, before any cook.

A rule set names plug-ins in three ways besides its ``fact_providers:`` (resolved when it
loads, :mod:`pipeline.rules.build`): its ``transforms:``, a ``kind`` that is no built-in
one (a source generator), and a ``compile:`` target the tool does not ship (a compile
backend).  :func:`plugin_problems` resolves each one (:mod:`pipeline.plugin_loader`)
and gives a located error at the line naming it for one that does not load.  A
generator or backend comes from an installed entry point or from the ``[plugins]``
table of the world holding the rules folder (``pipeline.toml`` beside it); a rules
folder in no world cannot tell whether the world cooking it maps the name, so an
unmapped kind or target there is a warning.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.config import CONFIG_NAME, WorldConfig, load_world_config
from pipeline.errors import ConfigError, Diagnostic, Location
from pipeline.plugin_loader import PluginError, entry_point_names, resolve
from pipeline.rules.models import RuleSet

BUILTIN_KINDS = ("ubershader", "fragments", "materialx")


def world_of(folder: Path) -> tuple[Path, WorldConfig] | None:
    """The world holding a rules folder (its ``pipeline.toml`` in the folder's parent), when it reads."""
    root = Path(folder).resolve().parent
    if not (root / CONFIG_NAME).is_file():
        return None
    try:
        return root, load_world_config(root)
    except ConfigError:  # the cook reports a broken pipeline.toml; the rules are checked without it
        return None


def plugin_problems(rs: RuleSet, world: tuple[Path, WorldConfig] | None) -> list[Diagnostic]:
    """Located problems of the plug-ins ``rs`` names (transforms, generator kind, backend targets)."""
    base = Path(rs.path).parent if rs.path else Path.cwd()
    found = []
    for reference in rs.transforms:
        found += _resolves("transform", reference, base, rs, "transform plug-in")
    if rs.kind not in BUILTIN_KINDS:
        found += _named(rs, "generator", rs.kind, world, "source generator plug-in for kind", "generators")
    for target in rs.compile:
        if target.plugin:
            found += _named(rs, "backend", target.target, world, "compile backend plug-in for target", "backends")
    return found


def _named(rs: RuleSet, kind: str, name: str, world, what: str, table: str) -> list[Diagnostic]:
    """A generator kind or backend target: the world's ``[plugins]`` entry, else an installed one."""
    if world is not None:
        root, config = world
        reference = dict(getattr(config.plugins, table)).get(name)
        if reference is not None:
            return _resolves(kind, reference, root, rs, f"{what} '{name}'", at=name, key=kind)
    installed = entry_point_names(kind)
    if name in installed:
        return _resolves(kind, name, Path.cwd(), rs, f"{what} '{name}'", at=name, key=kind)
    where = f"[plugins] {table} of the world's {CONFIG_NAME}" if world is not None else \
        f"no {CONFIG_NAME} beside the rules folder"
    message = f"family {rs.shader}: no {what} '{name}' ({where}; installed: {', '.join(installed) or 'none'})"
    return [Diagnostic(_locate(rs.path, name, kind), message, "error" if world is not None else "warning")]


def _resolves(kind: str, reference: str, base: Path, rs: RuleSet, what: str, at: str | None = None,
              key: str = "") -> list[Diagnostic]:
    try:
        resolve(kind, reference, base)
    except PluginError as exc:
        return [Diagnostic(_locate(rs.path, at or reference, key), f"{what}: {exc}")]
    return []


def _locate(path: str, text: str, kind: str = "") -> Location:
    """The first mention of ``text`` in the rule set's file (a generator kind: on the ``kind:`` line),
    the file alone when it is not there."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return Location(path)
    for number, line in enumerate(lines, 1):
        if text in line and (kind != "generator" or line.lstrip().startswith("kind:")):
            return Location(path, number, line.index(text) + 1)
    return Location(path)
