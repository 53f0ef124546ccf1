"""A world's plug-ins resolved for its job plan, and source transforms run on a key's stage text.

:func:`world_plugins` resolves what ``pipeline.toml`` ``[plugins]`` and each rule set's
``transforms:`` name, plus the generators and backends installed as entry points
(:mod:`pipeline.compilers.plugins`); a reference that does not resolve is a located
error at the line naming it.

:func:`transformed` runs a family's transform chain on one stage of one key, in
declared order, in the planning process: the job then carries the transformed text
(``CompileRequest.text``), every worker compiles the same text, and the key of the job
holds the text and every transform's ``(name, version, code)``.  A transform that
raises, or returns anything but a string, fails that key's job with one located error
(at the plug-in's own line) naming the plug-in and the key; every other key cooks.
"""

from __future__ import annotations

import inspect
import re
import traceback
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import msgspec

from pipeline.compilers.plugins import (
    PluginError,
    PluginRef,
    Plugins,
    entry_point_names,
    load,
    load_attribute,
    resolve,
)
from pipeline.config import CONFIG_NAME
from pipeline.errors import CompileError, ConfigError, Diagnostic, Location, RuleError
from pipeline.plan.generate import GENERATORS, GeneratedStage
from pipeline.plan.matrix import family_targets
from pipeline.structs import replace
from pipeline.rules.models import RuleSet

if TYPE_CHECKING:
    from pipeline.world import World

IDENT_RE = re.compile(r"[A-Za-z_]\w*")


def world_plugins(world: "World", families: dict[str, RuleSet]) -> Plugins:
    """The plug-ins a world's plan uses; raises a located :class:`ConfigError` or :class:`RuleError`."""
    config, toml = world.config.plugins, world.root / CONFIG_NAME
    transforms = tuple(_resolved("transform", ref, world.root, toml, ConfigError) for ref in config.transforms)
    kinds = {r.kind for r in families.values()} - set(GENERATORS)
    compile_config = family_targets(world.config, families)
    targets = {t.target for name, r in families.items() for t in compile_config.get(name, r.compile) if t.plugin}
    # installed generators and backends are loaded only for the kinds and targets the families use
    generators = _installed("generator", kinds) | dict(config.generators)
    backends = _installed("backend", targets) | dict(config.backends)
    family_transforms = []
    for name, ruleset in sorted(families.items()):
        if ruleset.transforms:
            base = Path(ruleset.path).parent if ruleset.path else world.root
            family_transforms.append((name, tuple(_resolved("transform", ref, base, Path(ruleset.path), RuleError)
                                                  for ref in ruleset.transforms)))
    plugins = Plugins(transforms, _named("generator", generators, world.root, toml),
                      _named("backend", backends, world.root, toml), tuple(family_transforms))
    _check_targets(world, families, plugins)
    return plugins


def _installed(kind: str, wanted: set[str]) -> dict[str, str]:
    """The installed plug-ins of ``kind`` named in ``wanted`` (the installed packages are not read when none is)."""
    return {k: v for k, v in entry_point_names(kind).items() if k in wanted} if wanted else {}


def _named(kind: str, named: dict[str, str], base: Path, toml: Path) -> tuple[tuple[str, PluginRef], ...]:
    return tuple((name, _resolved(kind, ref, base, toml, ConfigError, name)) for name, ref in sorted(named.items()))


def _resolved(kind: str, reference: str, base: Path, file: Path, error: type, name: str | None = None) -> PluginRef:
    try:
        ref = resolve(kind, reference, base)
    except PluginError as exc:
        line, col = _locate(file, reference)
        raise error.at(str(file), f"{kind} plug-in: {exc}", line=line, col=col) from None
    if name is None or ref.name != reference:  # the plug-in's declared name wins over its key in the table
        return ref
    return PluginRef(ref.kind, name, ref.spec, ref.version, ref.code)


def _locate(file: Path, text: str) -> tuple[int | None, int | None]:
    """Line and column of the first mention of ``text`` in ``file`` (None when absent)."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None, None
    for number, line in enumerate(lines, 1):
        if text in line:
            return number, line.index(text) + 1
    return None, None


def _check_targets(world: "World", families: dict[str, RuleSet], plugins: Plugins) -> None:
    """Every plug-in target a family compiles for has a backend."""
    compile_config = family_targets(world.config, families)
    for name, ruleset in sorted(families.items()):
        targets = compile_config.get(name, ruleset.compile)
        for target in targets:
            if target.plugin and plugins.backend(target.target) is None:
                file = world.root / CONFIG_NAME if name in compile_config else Path(ruleset.path)
                line, col = _locate(file, target.target)
                known = ", ".join(dict(plugins.backends)) or "none"
                raise (ConfigError if name in compile_config else RuleError).at(
                    str(file), f"family {name}: no compile backend plug-in for target '{target.target}' "
                               f"([plugins] backends: {known})", line=line, col=col)


class StageText(msgspec.Struct, frozen=True):
    """One stage's text after its family's transforms (or the located reason it has none)."""

    text: str | None
    plugins: tuple[tuple[str, str, str], ...]     # (name, version, code) of each transform run
    problems: tuple[Diagnostic, ...] = ()
    identifiers: frozenset[str] = frozenset()     # names the text uses (projection keeps their defines)


def transformed(chain: tuple[PluginRef, ...], family: str, key_text: str, stage: str, text: str,
                defines: tuple[tuple[str, str], ...]) -> StageText:
    """``text`` through ``chain`` in order; a failure is a located problem naming the plug-in and the key."""
    identities = tuple(ref.identity for ref in chain)
    view = MappingProxyType(dict(defines))
    for ref in chain:
        try:
            out = load(ref.spec, ref.code).transform(family, key_text, stage, text, view)
        except Exception as exc:  # the plug-in's own code: any failure is that key's located error
            where = _raised_at(ref, exc)
            return StageText(None, identities, (Diagnostic(where, f"source transform '{ref.name}' raised "
                                                                   f"{type(exc).__name__}: {exc}"),))
        if not isinstance(out, str):
            return StageText(None, identities, (Diagnostic(_defined_at(ref, "transform"),
                                                           f"source transform '{ref.name}' returned "
                                                           f"{type(out).__name__}, not str"),))
        text = out
    return StageText(text, identities, (), frozenset(IDENT_RE.findall(text)))


def _plugin_file(ref: PluginRef) -> str:
    module_part = ref.spec.rpartition(":")[0]
    if module_part.endswith(".py"):
        return module_part
    try:
        return inspect.getsourcefile(load_attribute(ref.spec, ref.code)) or module_part
    except TypeError:
        return module_part


def _raised_at(ref: PluginRef, exc: BaseException) -> Location:
    """The innermost frame of the plug-in's own file in the traceback, else the plug-in's file."""
    file = str(Path(_plugin_file(ref)).resolve())
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if str(Path(f.filename).resolve()) == file]
    if frames:
        return Location(file, frames[-1].lineno, 1)
    return _defined_at(ref, "transform")


def _defined_at(ref: PluginRef, method: str) -> Location:
    """The line where the plug-in's ``method`` is defined."""
    file = str(Path(_plugin_file(ref)).resolve())
    try:
        target = getattr(load(ref.spec, ref.code), method)
        return Location(file, inspect.getsourcelines(target)[1], 1)
    except (TypeError, OSError, AttributeError):
        return Location(file)


def stage_texts(ruleset: RuleSet, key, defines: tuple[tuple[str, str], ...], tree, plugins: Plugins
                ) -> dict[str, StageText]:
    """An ubershader key's stages through its family's transforms (empty when it has none)."""
    chain = plugins.chain(ruleset.shader)
    out: dict[str, StageText] = {}
    for stage, source in sorted(ruleset.sources.items()) if chain else ():
        try:
            text = tree.read(source.file)
        except CompileError:  # a file that cannot be read fails its job when it compiles
            continue
        out[stage] = transformed(chain, ruleset.shader, key.text, stage, text, defines)
    return out


def transformed_stages(stages: dict[str, GeneratedStage], ruleset: RuleSet, key, plugins: Plugins
                       ) -> dict[str, GeneratedStage]:
    """A generated key's stages through its family's transforms."""
    chain = plugins.chain(ruleset.shader)
    if not chain:
        return stages
    out = {}
    for stage, made in stages.items():
        if made.text is None:
            out[stage] = made
            continue
        done = transformed(chain, ruleset.shader, key.text, stage, made.text, made.defines)
        out[stage] = replace(made, text=done.text, problems=made.problems + done.problems,
                             plugins=made.plugins + done.plugins)
    return out


def key_stage_texts(ruleset: RuleSet, key, tree, plugins: Plugins) -> dict[str, str]:
    """An ubershader key's stage texts after its family's transforms, as its jobs compile them
    (``pipeline keys --transformed``); a failing transform gives its located error line instead.
    Empty for a family without transforms."""
    from pipeline.keys.defines import stage_defines

    defines = tuple((n, str(v)) for n, v in stage_defines(ruleset, key))
    return {stage: done.text if done.text is not None else "\n".join(map(str, done.problems))
            for stage, done in stage_texts(ruleset, key, defines, tree, plugins).items()}
