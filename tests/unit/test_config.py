"""pipeline.toml: defaults, validation, located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import WorldConfig, load_world_config, parse_world_config
from pipeline.errors import ConfigError


def test_missing_file_means_defaults(tmp_path: Path) -> None:
    assert load_world_config(tmp_path) == WorldConfig()
    assert WorldConfig().limits.max_file_bytes > 0 and WorldConfig().cook.spirv_opt is False


def test_full_config(tmp_path: Path) -> None:
    (tmp_path / "pipeline.toml").write_text(
        'level_depth = 2\nrules = "my_rules"\n[levels.forest]\nchunking = { grid = 32.5 }\nbudget = 10\n'
        "[limits]\nmax_elements = 5\n[cook]\nspirv_opt = true\n")
    config = load_world_config(tmp_path)
    assert config.level_depth == 2 and config.rules == Path("my_rules") and config.materials is None
    assert config.grid("forest") == 32.5 and config.grid("desert") is None
    assert config.levels["forest"].budget == 10 and config.limits.max_elements == 5 and config.cook.spirv_opt


@pytest.mark.parametrize("text,expected", [
    ("level_depth = 1\nlevle = 3\n", "pipeline.toml:2:1: error: levle: unknown key (did you mean 'levels'?)"),
    ("[levels.forest]\nchunking = { grid = -1 }\n",
     "pipeline.toml:2:14: error: levels.forest.chunking.grid: expected float > 0.0, got -1"),
    ("[limits]\nmax_file_bytes = 'big'\n",
     "pipeline.toml:2:1: error: limits.max_file_bytes: expected int, got 'big'"),
    ('[limits]\nmax_file_bytes = 0\nmax_elements = "x"\n',
     "pipeline.toml:2:1: error: limits.max_file_bytes: expected int >= 1, got 0\n"
     "pipeline.toml:3:1: error: limits.max_elements: expected int, got 'x'"),  # every problem, each at its key
    ("rules = 3\n", "pipeline.toml:1:1: error: rules: expected a path (a string), got 3"),
    ("level_depth = \n", "pipeline.toml:1:15: error: invalid TOML: Invalid value"),
])
def test_errors_are_located(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_world_config(text)
    assert str(info.value) == expected


def test_a_compile_target_takes_hlsl_register_shifts_as_a_table() -> None:
    from pipeline.config import CompileTarget, parse_world_config

    compile_ = parse_world_config('[cook.compile]\ns = {target = "vulkan1.2", registers = {t = 8, b = 0}}\n').cook.compile
    assert compile_["s"] == (CompileTarget(target="vulkan1.2", registers=(("b", 0), ("t", 8))),)
    assert hash(compile_["s"][0]) == hash(CompileTarget(target="vulkan1.2", registers=(("b", 0), ("t", 8))))
    with pytest.raises(ConfigError):
        parse_world_config('[cook.compile]\ns = {target = "vulkan1.2", registers = {x = 1}}\n')


def test_msl_options_belong_to_the_metal_target_and_name_its_label() -> None:
    from pipeline.config import CompileTarget, parse_world_config

    compile_ = parse_world_config('[cook.compile]\ns = [{target = "metal", msl_version = "3.0", '
                                  'argument_buffers = true}, "webgpu"]\n').cook.compile["s"]
    assert [t.label for t in compile_] == ["metal-msl3.0-argbuf", "webgpu"]
    assert CompileTarget(target="metal").label == "metal"
    for bad in ('{target = "vulkan1.2", msl_version = "2.1"}', '{target = "webgpu", argument_buffers = true}',
                '{target = "metal", msl_version = "1.2", argument_buffers = true}',
                '{target = "metal", msl_version = "two"}'):
        with pytest.raises(ConfigError, match=r"pipeline.toml:2:\d+: error: cook.compile.s"):
            parse_world_config(f"[cook.compile]\ns = {bad}\n")


def test_platforms_are_the_target_matrix() -> None:
    config = parse_world_config('[platforms.desktop]\ntargets = ["vulkan1.2"]\n'
                                '[platforms.web]\ntargets = ["webgl2", { target = "webgpu", relaxed = true }]\n'
                                'families = ["pbr"]\n')
    assert [t.label for t in config.platforms["web"].targets] == ["webgl2", "webgpu-relaxed"]
    assert config.platforms["web"].families == ("pbr",) and config.platforms["desktop"].families is None
    assert set(config.for_platforms(["web"]).platforms) == {"web"} and config.for_platforms(()) is config


@pytest.mark.parametrize("text,expected", [
    ('[platforms.a]\ntargets = ["vulkan1.2"]\n[platforms.b]\ntargets = [{ target = "vulkan1.2", auto_map = true }]\n',
     "pipeline.toml:4:1: error: platforms.b.targets: target vulkan1.2 differs from the vulkan1.2 of platform a: "
     "one label, one set of options"),
    ("[platforms.a]\ntargets = []\n",
     "pipeline.toml:2:1: error: platforms.a.targets: needs at least 1 entry"),
    ('[platforms.a]\ntargets = ["vulkan1.2"]\nfamilies = []\n',
     "pipeline.toml:3:1: error: platforms.a.families: needs at least 1 entry"),
    ('[platforms.a]\ntarget = ["vulkan1.2"]\n', "pipeline.toml:2:1: error: platforms.a.target: unknown key "
     "(did you mean 'targets'?)\npipeline.toml:1:12: error: platforms.a.targets: required key missing"),
    ('[platforms.a]\nfamilies = ["pbr"]\n', "pipeline.toml:1:12: error: platforms.a.targets: required key missing"),
    ('[platforms.a]\ntargets = ["vulkan9"]\n', "pipeline.toml:2:1: error: platforms.a.targets.0: "
     "unknown target 'vulkan9': one of vulkan1.0, vulkan1.1, vulkan1.2, vulkan1.3, opengl4.5, webgl2, es3.0, metal, "
     "webgpu, or the target of a compile backend plug-in ([plugins] backends)"),
])
def test_platform_errors_are_located(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_world_config(text)
    assert str(info.value) == expected
