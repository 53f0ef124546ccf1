"""A world's plug-ins for its plan, and transforms run on a key's stage text."""

from __future__ import annotations

import pytest

from pipeline.compilers.plugins import resolve
from pipeline.errors import ConfigError, RuleError
from pipeline.plan.plugins import transformed, world_plugins
from pipeline.world import open_world
from paths import DATA

PLUGINS = DATA / "plugins"
LIT = ("precision highp float;\n#pragma unroll_loop_start\n    for (int i = 0; i < NUM_LIGHTS; i++) {\n"
       "        s += l[i];\n    }\n#pragma unroll_loop_end\nafter();\n")


def test_the_unroll_example_unrolls_with_the_key_s_count_and_keeps_later_line_numbers() -> None:
    chain = (resolve("transform", "unroll.py:UnrollLoops", PLUGINS),)
    done = transformed(chain, "lit", "lit/forward{NUM_LIGHTS=3}", "fragment", LIT, (("NUM_LIGHTS", "3"),))
    assert done.problems == () and done.plugins == (chain[0].identity,)
    assert done.text == ("precision highp float;\n{         s += l[0];     } {         s += l[1];     } "
                         "{         s += l[2];     }\n#line 7\nafter();\n")
    assert {"after", "l", "s"} <= done.identifiers and "NUM_LIGHTS" not in done.identifiers


def test_transforms_chain_in_order_and_a_failure_names_the_plugin_at_its_line() -> None:
    unroll = resolve("transform", "unroll.py:UnrollLoops", PLUGINS)
    raises = resolve("transform", "faulty.py:RaisesOnFour", PLUGINS)
    ok = transformed((raises, unroll), "lit", "k", "vertex", LIT, (("NUM_LIGHTS", "1"),))
    assert ok.text.startswith("precision highp float;\n{ ") and ok.plugins == (raises.identity, unroll.identity)
    failed = transformed((unroll, raises), "lit", "k", "vertex", LIT, (("NUM_LIGHTS", "4"),))
    (problem,) = failed.problems
    assert failed.text is None
    assert problem.message == "source transform 'raises-on-four' raised RuntimeError: four lights are not supported"
    line = next(i for i, t in enumerate((PLUGINS / "faulty.py").read_text().splitlines(), 1) if "raise " in t)
    assert (problem.location.file, problem.location.line) == (str((PLUGINS / "faulty.py").resolve()), line)
    missing = transformed((unroll,), "lit", "k", "vertex", LIT, ())
    assert missing.problems[0].message.endswith("ValueError: unroll_loop bound NUM_LIGHTS is no define of the key")


def world(tmp_path, toml: str, rules: str = ""):
    (tmp_path / "rules").mkdir()
    (tmp_path / "materials").mkdir()
    (tmp_path / "materials" / "a.frag").write_text("void main() {}\n")
    (tmp_path / "rules" / "t.yaml").write_text(
        "shader: t\nsources: {fragment: a.frag}\n" + rules + "features: {}\npasses: {main: {}}\n")
    (tmp_path / "pipeline.toml").write_text('rules = "rules"\nmaterials = "materials"\n' + toml)
    return open_world(tmp_path)


def test_a_world_s_plugins_come_from_pipeline_toml_and_its_rule_sets(tmp_path) -> None:
    w = world(tmp_path, f'[plugins]\ntransforms = ["{PLUGINS}/unroll.py:UnrollLoops"]\n'
                        f'backends = {{ d3d12 = "{PLUGINS}/dxc_backend.py:Dxc" }}\n',
              f'transforms: ["{PLUGINS}/faulty.py:RaisesOnFour"]\ncompile: [vulkan1.2, d3d12]\n')
    found = world_plugins(w, w.families)
    assert [r.name for r in found.chain("t")] == ["unroll", "raises-on-four"]
    assert found.backend("d3d12").name == "dxc"


def test_a_bad_reference_in_pipeline_toml_is_located_at_its_line(tmp_path) -> None:
    w = world(tmp_path, '[plugins]\ntransforms = [\n  "nowhere.py:T",\n]\n')
    with pytest.raises(ConfigError) as raised:
        world_plugins(w, w.families)
    assert str(raised.value.diagnostics[0]).startswith(
        f"{tmp_path / 'pipeline.toml'}:5:4: error: transform plug-in: plug-in file nowhere.py does not exist")


def test_a_plugin_target_without_a_backend_is_located_in_the_rule_set(tmp_path) -> None:
    w = world(tmp_path, "", "compile: [vulkan1.2, d3d12]\n")
    with pytest.raises(RuleError, match=r"t\.yaml:3:\d+: error: family t: no compile backend plug-in for target 'd3d12'"):
        world_plugins(w, w.families)


def test_installed_backends_serve_the_targets_families_use_and_unused_ones_are_not_loaded(tmp_path, monkeypatch) -> None:
    import importlib.metadata

    from pipeline.compilers import plugins

    points = {plugins.GROUPS["backend"]: [importlib.metadata.EntryPoint("d3d12", f"{PLUGINS}/dxc_backend.py:Dxc",
                                                                        plugins.GROUPS["backend"]),
                                          importlib.metadata.EntryPoint("broken", "no_such_module_here:X",
                                                                        plugins.GROUPS["backend"])],
              plugins.GROUPS["generator"]: [importlib.metadata.EntryPoint("broken", "no_such_module_here:X",
                                                                          plugins.GROUPS["generator"])]}
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda: importlib.metadata.EntryPoints([p for group in points.values() for p in group]))
    w = world(tmp_path, "", "compile: [vulkan1.2, d3d12]\n")
    found = world_plugins(w, w.families)
    assert found.backend("d3d12").name == "dxc" and found.backend("broken") is None and found.generators == ()


def test_a_world_whose_families_use_no_plugin_kind_or_target_reads_no_installed_package(tmp_path, monkeypatch) -> None:
    from pipeline import plugin_loader

    read = []
    monkeypatch.setattr(plugin_loader, "_points", lambda kind: read.append(kind) or ())
    w = world(tmp_path, "", "compile: [vulkan1.2]\n")
    assert world_plugins(w, w.families).backends == () and read == []
    (tmp_path / "other").mkdir()
    w = world(tmp_path / "other", "", "compile: [vulkan1.2, d3d12]\n")
    with pytest.raises(RuleError):  # a plug-in target: the installed backends are looked at
        world_plugins(w, w.families)
    assert read == ["backend"]
