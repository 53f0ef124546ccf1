"""The target matrix: which compile targets each family is cooked for.

Without ``[platforms]`` in pipeline.toml a family's targets are its ``[cook.compile]``
entry, else its rule set's ``compile:``, else the cook's default target.  With a
matrix, a family is cooked for the targets of every platform that includes it
(platforms by name, each platform's targets in its order, each label once); a target
the family names itself (``[cook.compile]``, else ``compile:``) keeps the family's
options, so a family that needs ``relaxed`` or a ``version`` still gets them.  A family
no platform includes is cooked for no target.  A platform naming a family the world
does not have is a located :class:`~pipeline.errors.ConfigError`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from pipeline.config import CONFIG_NAME, CompileTarget, WorldConfig
from pipeline.errors import ConfigError, PipelineError
from pipeline.checked import suggest
from pipeline.rules.models import RuleSet
from pipeline.structs import replace

if TYPE_CHECKING:
    from pipeline.world import World


def family_targets(config: WorldConfig, families: dict[str, RuleSet]) -> dict[str, tuple[CompileTarget, ...]]:
    """Family -> the targets pipeline.toml gives it (families it leaves alone are absent)."""
    configured = {name: targets for name, targets in config.cook.compile.items() if targets}
    if not config.platforms:
        return configured
    out = {}
    for name, ruleset in sorted(families.items()):
        own = configured.get(name) or ruleset.compile
        chosen: dict[str, CompileTarget] = {}
        for platform in (p for _, p in sorted(config.platforms.items())):
            if platform.families is not None and name not in platform.families:
                continue
            for entry in platform.targets:
                for target in [t for t in own if t.target == entry.target] or [entry]:
                    chosen.setdefault(target.label, target)
        out[name] = tuple(chosen.values())
    return out


def check_platform_families(world: "World", families: dict[str, RuleSet]) -> None:
    """Every family a platform names exists; raises a :class:`ConfigError` at the name in pipeline.toml."""
    for platform, config in sorted(world.config.platforms.items()):
        for name in config.families or ():
            if name not in families:
                file = world.root / CONFIG_NAME
                line, col = _locate(file, platform, name)
                raise ConfigError.at(str(file), f"platforms.{platform}.families: '{name}' is no shader family"
                                                f"{suggest(name, families)}", line=line, col=col)


def platform_targets(config: WorldConfig, families: dict[str, RuleSet]) -> dict[str, dict[str, list[str]]]:
    """Platform -> family -> the target labels it is cooked for there (what ``cook --json`` lists)."""
    out = {}
    for platform, entry in sorted(config.platforms.items()):
        one = msgspec.structs.replace(config, platforms={platform: entry})
        out[platform] = {family: [t.label for t in targets]
                         for family, targets in family_targets(one, families).items() if targets}
    return out


def cooked_targets(world: "World") -> dict:
    """``{"platforms": {name: {family: [labels]}}, "targets": {family: [labels]}}``: what a cook of the
    world compiles (without a matrix ``platforms`` is empty and ``targets`` names the families that name
    their targets)."""
    configured = family_targets(world.config, world.families)
    targets = {name: [t.label for t in configured.get(name, rs.compile)] for name, rs in sorted(world.families.items())}
    return {"platforms": platform_targets(world.config, world.families),
            "targets": {name: labels for name, labels in targets.items() if labels}}


def with_platforms(world: "World", platform: str | tuple[str, ...] | None) -> "World":
    """The world with only the platforms ``platform`` (a name or several) in its matrix; all when none."""
    names = (platform,) if isinstance(platform, str) else tuple(platform or ())
    return replace(world, config=select_platforms(world.config, names)) if names else world


def select_platforms(config: WorldConfig, names) -> WorldConfig:
    """``config`` with only the platforms ``names`` (all when none); an unknown name is an error at the argument."""
    for name in names or ():
        if name not in config.platforms:
            known = ", ".join(sorted(config.platforms)) or "none: pipeline.toml has no [platforms]"
            raise PipelineError.of_argument("platform", f"unknown platform '{name}'{suggest(name, config.platforms)} (platforms: {known})")
    return config.for_platforms(names)


def _locate(file: Path, platform: str, name: str) -> tuple[int | None, int | None]:
    """Line and column of ``name`` in the ``families`` of ``[platforms.PLATFORM]`` (None when not found)."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None, None
    header = re.compile(r'^\s*\[\s*platforms\s*\.\s*"?' + re.escape(platform) + r'"?\s*\]')
    inside = not any(header.match(line) for line in lines)  # an inline table: search the whole file
    quoted = re.compile(r'["\']' + re.escape(name) + r'["\']')
    for number, line in enumerate(lines, 1):
        if header.match(line):
            inside = True
        elif inside and line.lstrip().startswith("["):
            inside = not any(header.match(x) for x in lines)
        found = quoted.search(line) if inside else None
        if found:
            return number, found.start() + 2
    return None, None
