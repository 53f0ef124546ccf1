"""The targets other than Vulkan in runtime check (runtime/target_check.py): each program checked once by its
target's client, located by chunk and key; metal listed as having no client here."""

from __future__ import annotations

from pathlib import Path

from family_worlds import triangle_world
from runtime_helpers import needs_egl, needs_naga, needs_wgpu
from target_helpers import MATERIALS, TARGETS_DATA

from pipeline import api
from pipeline.runtime.loader import Failure
from pipeline.runtime.target_check import NO_CLIENT, TargetCheck, check_targets, target_kind

PLAIN = [({"name": "plain"}, ()), ({"name": "colored"}, ("COLOR_0",))]


def _cook(tmp_path: Path, rules: Path, toml: str = "") -> Path:
    world = triangle_world(tmp_path / "world", rules, MATERIALS, PLAIN, toml)
    api.cook(api.open_world(world), cache=tmp_path / "cache", out=tmp_path / "out", jobs=1)
    return tmp_path / "out"


def test_a_label_names_its_target_first() -> None:
    assert [target_kind(x) for x in ("webgpu-relaxed", "metal-msl3.0-argbuf", "es3.0", "vulkan1.2-relaxed")] == \
        ["webgpu", "metal", "es3.0", "vulkan1.2"]


def test_a_check_is_ok_without_failures_and_reads_as_json() -> None:
    check = TargetCheck("webgl2", "GL", 2, 1, [Failure("c", None, "k", "m")])
    assert not check.ok and TargetCheck("metal", None, 2, note="n").ok
    assert check.to_json() == {"target": "webgl2", "client": "GL", "programs": 2, "created": 1, "note": None,
                               "failed": [{"chunk": "c", "pipeline": None, "key": "k", "message": "m"}]}


@needs_egl
def test_a_pair_the_gl_driver_cannot_link_is_named_by_chunk_key_and_driver_log(tmp_path: Path) -> None:
    out = _cook(tmp_path, TARGETS_DATA / "mismatch_rules")
    (check,) = check_targets(out, ["level/props"])  # two keys, one program: the sources read no feature
    assert (check.target, check.programs, check.created) == ("webgl2", 1, 0) and "through EGL" in check.client
    failure = check.failed[0]
    assert (failure.chunk, failure.key) == ("level/props", "mismatch/forward{VERTEX_COLOR=0}")
    assert failure.message.startswith("webgl2 program: GL driver: error: vertex shader output `v_shade'")


def test_metal_has_no_client_here_and_says_so(tmp_path: Path) -> None:
    out = _cook(tmp_path, TARGETS_DATA / "rules", '[cook.compile]\nportable = [{target = "metal", relaxed = true, '
                                                   'auto_map = true, version = "310 es"}]\n')
    (check,) = check_targets(out, ["level/props"])
    assert (check.target, check.client, check.programs, check.ok) == ("metal-relaxed", None, 2, True)
    assert check.note == NO_CLIENT["metal"] and "no Metal compiler or device runs here" in check.note


@needs_wgpu
@needs_naga
def test_webgpu_programs_are_made_from_their_wgsl_by_the_wgpu_client(tmp_path: Path) -> None:
    out = _cook(tmp_path, TARGETS_DATA / "rules", '[cook.compile]\nportable = [{target = "webgpu", relaxed = true, '
                                                   'auto_map = true, version = "310 es"}]\n')
    (check,) = check_targets(out, ["level/props"])
    assert (check.target, check.programs, check.created, check.failed) == ("webgpu-relaxed", 2, 2, [])
    assert "through wgpu" in check.client
