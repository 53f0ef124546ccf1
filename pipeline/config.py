"""``pipeline.toml``: the optional per-world configuration, as checked structs (:mod:`pipeline.checked`).

Format (TOML, at the world root; every key optional, unknown keys are errors)::

    level_depth = 1              # path components of a chunk name that name its level
    scenes = "all"               # or "default": draw only each file's default scene
    rules = "rules"              # rule-set folder, relative to the world root
    materials = "materials"      # shader library folder, relative to the world root
    allowed_roots = ["../shared"]  # folders outside the world, rules and materials roots that
                                   # glTF symlinks and rule set sources may lead to

    [levels.forest]              # per-level settings, by level name
    chunking = { grid = 64.0 }   # split the level into world-space cells of this size
    budget = 200                 # permutation budget the report checks

    [limits]                     # reader limits: a file over a limit is a located error
    max_file_bytes = 268435456   # largest .gltf/.glb (and external buffer) read: 256 MiB
    max_json_depth = 64          # deepest nesting of free-form values (extras)
    max_elements = 1000000       # most entries in one top-level array or extras container
    max_data_uri_bytes = 67108864  # longest buffer data: URI: 64 MiB
    max_string_length = 65536    # longest other string kept (names, URIs, extras)
    max_count_cells = 1048576    # largest table counting a family's valid keys builds (time and memory)

    [cook]
    spirv_opt = false

    [cook.compile]                 # compile targets by family (replace the rule set's compile:)
    legacy = [{ target = "webgl2" }, { target = "vulkan1.2", relaxed = true, auto_map = true, version = "310 es" }]

    [platforms.desktop]            # the target matrix: one cook makes every platform's outputs
    targets = ["vulkan1.2"]        # the same entries as [cook.compile]: names or tables
    [platforms.web]
    targets = ["webgl2", "webgpu"]
    families = ["pbr", "legacy"]   # the families this platform ships (default: all)

With ``[platforms]`` the matrix decides *which* targets a family is compiled for: the
targets of every platform that includes it (platforms by name, each platform's targets
in order, a label once).  The family's own entries (``[cook.compile]``, else its rule
set's ``compile:``) decide *how*: a platform target the family also names is compiled
with the family's options (relaxed, version, registers ...), the others with the
platform's.  Two platforms giving one target label different options is an error, and
so is a platform naming no family of the world (at plan time).  ``pipeline cook
--platform NAME`` cooks only the named platforms' targets.

    [farm]
    scheduler = "tcp://farm:8786"  # compile on this Dask scheduler (or "local:4"); $PIPELINE_SCHEDULER wins

    [cache]
    remote = "s3://team-cache/shaders"  # shared cache tier behind the local one (any fsspec URL)
    remote_mode = "readwrite"           # or "read": fetch, never write back
    key_file = "team-cache.key"         # signs and checks the tier's job records; $PIPELINE_CACHE_KEY wins

    [plugins]                           # a studio's own code (docs/plugins.md); paths relative to the world root
    transforms = ["plugins/unroll.py:UnrollLoops"]         # every family's stage text, in this order
    generators = { lights = "studio_fx.lights:Generator" }  # family kind -> source generator
    backends = { d3d12 = "studio_dxc" }                     # compile target -> backend (an entry-point name)

A missing file means the defaults.  Errors are :class:`~pipeline.errors.ConfigError`
located as ``pipeline.toml:LINE:COL: error: ...`` (the line of the offending key).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from pipeline.checked import Before, Checked, Invalid, Problem, convert, doc
from pipeline.errors import ConfigError, Diagnostic, Location
from pipeline.fileio import read_text

CONFIG_NAME = "pipeline.toml"
MAX_CONFIG_BYTES = 2**20
MAX_LEVEL_DEPTH = 64
_HUGE = 2**62  # upper bound of every integer setting: larger values are a located error, not an overflow


Count = Annotated[int, Meta(ge=1, le=_HUGE)]  # a positive integer setting; larger values are a located error


class Chunking(Checked, kw_only=True):
    grid: Annotated[float, Meta(gt=0, description="cell size in world units; cells are named <level>/x<i>_z<j>")]


class LevelConfig(Checked, kw_only=True):
    chunking: Annotated[Chunking | None, doc("split the level's scenes into a spatial grid")] = None
    budget: Annotated[Annotated[int, Meta(ge=0, le=_HUGE)] | None,
                      doc("permutation budget for this level (checked by report)")] = None


class Limits(Checked, kw_only=True):
    """Reader limits: inputs over a limit are a located error, never a crash or a hang."""

    max_file_bytes: Annotated[Count, doc("largest .gltf/.glb file read")] = 256 * 2**20
    max_json_depth: Annotated[Count, doc("deepest JSON nesting accepted")] = 64
    max_elements: Annotated[Count, doc("most entries in one top-level glTF array")] = 1_000_000
    max_data_uri_bytes: Annotated[Count, doc("longest data: URI of a buffer")] = 64 * 2**20
    max_string_length: Annotated[Count, doc("longest other string kept (names, URIs, extras)")] = 64 * 2**10
    max_count_cells: Annotated[Count, doc("largest table (cells) counting a family's valid keys may build")] = 2**20


TARGET_NAMES = ("vulkan1.0", "vulkan1.1", "vulkan1.2", "vulkan1.3", "opengl4.5", "webgl2", "es3.0", "metal", "webgpu")
_PLUGIN_TARGET = re.compile(r"^[a-z][a-z0-9_-]*$")


def _target_problem(value: str) -> str | None:
    """Why ``value`` names no target: not a built-in one, nor a plug-in's (a name unlike the built-in ones)."""
    if value in TARGET_NAMES:
        return None
    if _PLUGIN_TARGET.match(value) and not value.startswith(("vulkan", "opengl", "webgl", "es", "metal", "webgpu")):
        return None
    return (f"unknown target {value!r}: one of {', '.join(TARGET_NAMES)}, "
            "or the target of a compile backend plug-in ([plugins] backends)")


def _pairs(data):
    """A mapping as its sorted (key, value) pairs (hashable, one canonical order)."""
    return tuple(sorted(data.items())) if isinstance(data, dict) else data


RegisterShifts = Annotated[tuple[tuple[Literal["b", "t", "s", "u"], Annotated[int, Meta(ge=0, le=4096)]], ...],
                           Before(_pairs)]


class CompileTarget(Checked, kw_only=True):
    """One compile target of a family (rule set ``compile:``, or ``[cook.compile]`` here)."""

    target: Annotated[str, doc(
        "vulkan1.0-1.3 and opengl4.5: SPIR-V validated by spirv-val for that environment; "
        "webgl2/es3.0: validated GLSL ES 3.00 text; metal: MSL text by SPIRV-Cross; webgpu: WGSL "
        "text written and accepted by naga; any other name: a compile backend plug-in's target")]
    relaxed: Annotated[bool, doc("glslang's relaxed Vulkan rules (loose uniforms, no layout "
                                 "qualifiers)")] = False
    auto_map: Annotated[bool, doc("assign bindings and locations automatically")] = False
    version: Annotated[Annotated[str, Meta(pattern=r"^[1-9][0-9]{2}( es| core| compatibility)?$")] | None,
                       doc("#version used when a source has none, e.g. '300 es' or '450'")] = None
    registers: Annotated[RegisterShifts | None, doc(
        "HLSL register class -> binding shift on SPIR-V targets, e.g. {b = 0, t = 32, s = 64, "
        "u = 96} (the default); a class left out is not shifted")] = None
    msl_version: Annotated[Annotated[str, Meta(pattern=r"^[1-3]\.[0-9]$")] | None,
                           doc("metal: the MSL version SPIRV-Cross writes (default 2.1)")] = None
    argument_buffers: Annotated[bool, doc("metal: resources in argument buffers (MSL 2.0 or "
                                          "later)")] = False

    def __post_init__(self) -> None:
        problem = _target_problem(self.target)
        if problem:
            raise ValueError(problem)
        if self.target != "metal" and (self.msl_version is not None or self.argument_buffers):
            raise ValueError(f"msl_version and argument_buffers are options of the metal target, not {self.target}")
        if self.argument_buffers and self.msl_version is not None and self.msl_version < "2.0":
            raise ValueError("argument_buffers needs msl_version 2.0 or later")

    @classmethod
    def shape(cls, data):
        return {"target": data} if isinstance(data, str) else data

    @property
    def plugin(self) -> bool:
        """True when a compile backend plug-in compiles this target."""
        return self.target not in TARGET_NAMES

    @property
    def label(self) -> str:
        """The target's name in outputs: ``vulkan1.2``, ``vulkan1.2-relaxed``, ``metal-msl3.0-argbuf`` ..."""
        return self.target + ("-relaxed" if self.relaxed else "") \
            + (f"-msl{self.msl_version}" if self.msl_version else "") + ("-argbuf" if self.argument_buffers else "")


def compile_targets(data):
    """``compile:`` is one target (a mapping or a name) or a list of them."""
    return data if isinstance(data, (list, tuple)) else [data]


CompileTargets = Annotated[tuple[CompileTarget, ...], Before(compile_targets)]


class CookConfig(Checked, kw_only=True):
    spirv_opt: Annotated[bool, doc("run spirv-opt on compiled binaries")] = False
    compile: Annotated[dict[str, CompileTargets], doc(
        "family -> compile target(s), replacing the rule set's compile:")] = {}


_PLATFORM_NAME = r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$"


class PlatformConfig(Checked, kw_only=True):
    """One platform of the target matrix: its compile targets, for all families or the ones named."""

    targets: Annotated[CompileTargets, Meta(min_length=1, description="compile target(s) of this platform, the "
                                                                      "entries of [cook.compile]")]
    families: Annotated[Annotated[tuple[str, ...], Meta(min_length=1)] | None,
                        doc("the families this platform ships (default: all)")] = None


class FarmConfig(Checked, kw_only=True):
    scheduler: Annotated[str | None, doc("Dask scheduler address (tcp://HOST:8786) or local:N")] = None
    batch_timeout: Annotated[Annotated[float, Meta(gt=0, le=86400)] | None, doc(
        "seconds a farm batch may take at least before it is sent elsewhere (None: 120)")] = None


class CacheConfig(Checked, kw_only=True):
    remote: Annotated[str | None, doc("shared cache tier: a folder or any fsspec URL (s3://...)")] = None
    remote_mode: Annotated[Literal["read", "readwrite"], doc("read: never write back")] = "readwrite"
    key_file: Annotated[Path | None, doc(
        "file holding the team key that signs the shared tier's job records (relative to the world "
        "root); $PIPELINE_CACHE_KEY wins")] = None


class PluginsConfig(Checked, kw_only=True):
    """A studio's plug-ins (docs/plugins.md): entry-point names, ``module:attr`` or ``path.py:attr``."""

    transforms: Annotated[tuple[str, ...], doc(
        "source transforms run on every family's stage text, in order")] = ()
    generators: Annotated[dict[str, str], doc("family kind -> source generator")] = {}
    backends: Annotated[dict[str, str], doc("compile target -> compile backend")] = {}


class WorldConfig(Checked, kw_only=True):
    level_depth: Annotated[int, Meta(ge=1, le=MAX_LEVEL_DEPTH,
                                     description="path components of a chunk name that name its level")] = 1
    scenes: Annotated[Literal["all", "default"], doc(
        "draw every scene of a file, or only its default scene (the glTF 'scene', else scene 0)")] = "all"
    rules: Annotated[Path | None, doc("rule-set folder relative to the world root; None: built-in")] = None
    materials: Annotated[Path | None, doc(
        "shader library folder relative to the world root; None: built-in")] = None
    levels: Annotated[dict[str, LevelConfig], doc("per-level settings by level name")] = {}
    limits: Annotated[Limits, doc("reader limits")] = Limits()
    allowed_roots: Annotated[tuple[Path, ...], doc(
        "folders outside the world, rules and materials roots that symlinks and rule set sources may "
        "lead to (relative to the world root)")] = ()
    cook: Annotated[CookConfig, doc("cook options")] = CookConfig()
    farm: Annotated[FarmConfig, doc("build farm")] = FarmConfig()
    cache: Annotated[CacheConfig, doc("shared cache tier")] = CacheConfig()
    plugins: Annotated[PluginsConfig, doc("a studio's plug-ins")] = PluginsConfig()
    platforms: Annotated[dict[Annotated[str, Meta(pattern=_PLATFORM_NAME)], PlatformConfig], doc(
        "the target matrix: platform name -> its targets and families")] = {}
    axes: Annotated[dict[str, tuple[bool | int | str, ...]], doc(
        "runtime axis -> the values this world's game uses (default: all of the axis's values); a "
        "platform or quality tier's build restricts them here")] = {}
    include_logs: Annotated[Path | None, doc(
        "a folder of runtime miss logs and key lists (*.jsonl, *.json) whose valid keys every cook "
        "adds")] = None

    def for_platforms(self, names) -> "WorldConfig":
        """This configuration with only the platforms ``names`` in its matrix (all when empty)."""
        if not names:
            return self
        return msgspec.structs.replace(self, platforms={n: p for n, p in self.platforms.items() if n in set(names)})

    def allowed_paths(self, root: Path) -> tuple[Path, ...]:
        """Where a read may lead (symlinks resolved): the world root and ``allowed_roots``."""
        return _allowed_paths(self.allowed_roots, str(Path(root)))

    def level(self, name: str) -> LevelConfig:
        """Settings of one level (defaults when the level is not configured)."""
        return self.levels.get(name) or LevelConfig()

    def level_of(self, chunk: str) -> str:
        """The level a chunk (or grid cell) belongs to: its first ``level_depth`` path components.

        The one place levels are assigned; ``.`` (files in the world root) is its own level.
        """
        if chunk == ".":
            return "."
        return "/".join(chunk.split("/")[: self.level_depth])

    def grid(self, level: str) -> float | None:
        """Grid cell size of a level, None when the level is chunked by folders."""
        chunking = self.level(level).chunking
        return chunking.grid if chunking else None


@functools.lru_cache(maxsize=64)
def _allowed_paths(allowed: tuple[Path, ...], root: str) -> tuple[Path, ...]:
    base = Path(os.path.realpath(root))
    return (base, *(Path(os.path.realpath(base / p)) for p in allowed))


def load_world_config(root: Path) -> WorldConfig:
    """Read ``root/pipeline.toml``; defaults when absent.  Raises ConfigError."""
    path = Path(root) / CONFIG_NAME
    if not os.path.lexists(path):
        return WorldConfig()
    text = read_text(path, CONFIG_NAME, limit=MAX_CONFIG_BYTES, error=ConfigError)
    return parse_world_config(text)


def parse_world_config(text: str, file: str = CONFIG_NAME) -> WorldConfig:
    """Parse TOML text into a WorldConfig; raises ConfigError located at the bad key."""
    import tomllib  # only a world with a config file reads TOML
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(exc, file) from None
    except RecursionError:
        raise ConfigError.at(file, "invalid TOML: arrays or tables nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise ConfigError.at(file, f"invalid TOML: {str(exc).splitlines()[0][:200]}") from None
    try:
        config = convert(data, WorldConfig)
    except Invalid as exc:
        raise _validation_error(exc, text, file) from None
    _check_labels(config, text, file)
    return config


def _check_labels(config: WorldConfig, text: str, file: str) -> None:
    """One target label means one set of options across the platforms (else which would a family get?)."""
    seen: dict[str, tuple[str, CompileTarget]] = {}
    for name, platform in sorted(config.platforms.items()):
        for target in platform.targets:
            first = seen.setdefault(target.label, (name, target))
            if first[1] != target:
                line, col = _find_key(text, ("platforms", name, "targets"))
                raise ConfigError.at(file, f"platforms.{name}.targets: target {target.label} differs from the "
                                           f"{target.label} of platform {first[0]}: one label, one set of options",
                                     line=line, col=col)


_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def _toml_error(exc: ValueError, file: str) -> ConfigError:
    message = str(exc)
    match = _TOML_POS.search(message)
    if not match:
        return ConfigError.at(file, f"invalid TOML: {message}")
    return ConfigError.at(file, f"invalid TOML: {message[:match.start()]}",
                          line=int(match.group(1)), col=int(match.group(2)))


def _validation_error(exc: Invalid, text: str, file: str) -> ConfigError:
    """Every problem, each at the line of its key (the nearest table when the key is not written)."""
    return ConfigError([_located(problem, text, file) for problem in exc.problems])


def _located(problem: Problem, text: str, file: str) -> Diagnostic:
    loc = tuple(str(part) for part in problem.path)
    message = f"{'.'.join(loc) or '(root)'}: {problem.message}"
    named = loc
    while named and named[-1].isdigit():  # an array element (or a whole-target check): its array's key
        named = named[:-1]
    line, col = _find_key(text, named)
    while line is None and len(named) > 1:  # a key left out, or a bad table name: the table that holds it
        named = named[:-1]
        line, col = _find_key(text, named)
    return Diagnostic(Location(file, line, col), message)


def _find_key(text: str, loc: tuple[str, ...]) -> tuple[int | None, int | None]:
    """Best-effort line/column of the key at ``loc`` in TOML text (tomllib keeps no positions).

    Looks for the last key of ``loc`` as ``key =`` or inside a ``[table]`` header,
    preferring an occurrence after the header of its enclosing table.
    """
    if not loc:
        return None, None
    lines = text.splitlines()
    start = _table_start(lines, loc[:-1])
    key = re.escape(loc[-1])
    pattern = re.compile(rf'(^|[\s{{,.\[])"?({key})"?\s*[=.\]]')
    for number in list(range(start, len(lines))) + list(range(0, start)):
        match = pattern.search(lines[number])
        if match:
            return number + 1, match.start(2) + 1
    return None, None


def _table_start(lines: list[str], path: tuple[str, ...]) -> int:
    if not path:
        return 0
    header = re.compile(r"^\s*\[+\s*" + r"\s*\.\s*".join(re.escape(p) for p in path))
    for number, line in enumerate(lines):
        if header.match(line):
            return number
    return 0
