"""The target matrix: which targets each family is cooked for, with which options, and its located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import api
from pipeline.errors import ConfigError, PipelineError
from pipeline.plan.matrix import check_platform_families, cooked_targets, family_targets, with_platforms

MATRIX = '''[cook.compile]
pbr = [{ target = "webgpu", relaxed = true, auto_map = true }, "metal"]

[platforms.web]
targets = ["webgl2", "webgpu"]
families = ["pbr", "chain"]

[platforms.desktop]
targets = ["vulkan1.2", "webgl2"]
'''


def world(tmp_path: Path, toml: str):
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "pipeline.toml").write_text(toml)
    return api.open_world(tmp_path / "w")


def labels(w) -> dict[str, list[str]]:
    return {name: [t.label for t in targets] for name, targets in family_targets(w.config, w.families).items()}


def test_without_platforms_a_family_keeps_cook_compile(tmp_path: Path) -> None:
    w = world(tmp_path, '[cook.compile]\npbr = ["metal", "vulkan1.3"]\nchain = []\n')
    assert labels(w) == {"pbr": ["metal", "vulkan1.3"]}  # an empty entry leaves the family's own targets


def test_platforms_choose_the_targets_and_the_family_its_options(tmp_path: Path) -> None:
    w = world(tmp_path, MATRIX)
    # platforms by name (desktop, then web), each label once; pbr's own webgpu entry keeps its options,
    # its own metal entry is no platform's target so it is not cooked
    assert labels(w) == {"chain": ["vulkan1.2", "webgl2", "webgpu"], "mtlx": ["vulkan1.2", "webgl2"],
                         "pbr": ["vulkan1.2", "webgl2", "webgpu-relaxed"]}
    assert family_targets(w.config, w.families)["pbr"][2].auto_map is True


def test_a_family_no_selected_platform_includes_gets_no_target(tmp_path: Path) -> None:
    w = with_platforms(world(tmp_path, MATRIX), "web")
    assert labels(w) == {"chain": ["webgl2", "webgpu"], "mtlx": [], "pbr": ["webgl2", "webgpu-relaxed"]}
    assert cooked_targets(w) == {"platforms": {"web": {"chain": ["webgl2", "webgpu"],
                                                       "pbr": ["webgl2", "webgpu-relaxed"]}},
                                 "targets": {"chain": ["webgl2", "webgpu"], "pbr": ["webgl2", "webgpu-relaxed"]}}


def test_an_unknown_platform_is_an_error_of_the_argument(tmp_path: Path) -> None:
    with pytest.raises(PipelineError) as info:
        with_platforms(world(tmp_path, MATRIX), ("web", "desktp"))
    assert str(info.value) == "platform: error: unknown platform 'desktp' (did you mean 'desktop'?) " \
                              "(platforms: desktop, web)"


def test_a_platform_naming_no_family_is_located_at_the_name(tmp_path: Path) -> None:
    w = world(tmp_path, MATRIX.replace('["pbr", "chain"]', '["pbr",\n            "chian"]'))
    with pytest.raises(ConfigError) as info:
        check_platform_families(w, w.families)
    assert str(info.value) == f"{w.root / 'pipeline.toml'}:7:14: error: platforms.web.families: 'chian' is no " \
                              "shader family (did you mean 'chain'?)"
