"""rules.plugin_check: every plug-in a rule set names resolves at check time, located at its line."""

from __future__ import annotations

import shutil

from plugin_helpers import lit_rules, make_world

from pipeline.rules.lint import lint_rules
from pipeline.rules.plugin_check import world_of

TINTED = "shader: tinted\nkind: tint\nfeatures: {}\npasses: {forward: {}}\n"


def problems(folder) -> list[tuple[str, str]]:
    return [(f"{d.location.line}:{d.location.col} {d.severity}", d.message) for d in lint_rules(folder).diagnostics]


def test_an_unloadable_transform_kind_or_target_is_an_error_at_its_line(tmp_path) -> None:
    world = make_world(tmp_path, rules=lit_rules('["../plugins/missing.py:Nothing"]', targets="[webgl2, d3d12]"))
    (world / "rules" / "tinted.yaml").write_text(TINTED)
    assert world_of(world / "rules")[0] == world.resolve()
    assert problems(world / "rules") == [
        ("3:15 error", "transform plug-in: plug-in file ../plugins/missing.py does not exist"),
        ("4:19 error", "family lit: no compile backend plug-in for target 'd3d12' ([plugins] backends of the "
                       "world's pipeline.toml; installed: none)"),
        ("2:7 error", "family tinted: no source generator plug-in for kind 'tint' ([plugins] generators of the "
                      "world's pipeline.toml; installed: none)"),
    ]


def test_the_world_s_plugins_table_resolves_kinds_and_targets(tmp_path) -> None:
    toml = ('[plugins]\ngenerators = { tint = "plugins/tint_generator.py:Nope" }\n'
            'backends = { d3d12 = "plugins/dxc_backend.py:Dxc" }\n')
    world = make_world(tmp_path, rules=lit_rules(targets="[webgl2, d3d12]"), toml=toml)
    (world / "rules" / "tinted.yaml").write_text(TINTED)
    [(where, message)] = problems(world / "rules")
    assert where == "2:7 error" and message.startswith("source generator plug-in for kind 'tint': ")
    assert message.endswith("tint_generator.py has no attribute 'Nope'")


def test_a_rules_folder_in_no_world_warns_of_an_unmapped_kind(tmp_path) -> None:
    world = make_world(tmp_path)
    (world / "rules" / "tinted.yaml").write_text(TINTED)
    loose = tmp_path / "loose" / "rules"
    shutil.copytree(world / "rules", loose)
    (tmp_path / "loose" / "plugins").symlink_to(world / "plugins")  # the rule set's ../plugins/unroll.py still resolves
    assert world_of(loose) is None
    assert problems(loose) == [("2:7 warning", "family tinted: no source generator plug-in for kind 'tint' "
                                              "(no pipeline.toml beside the rules folder; installed: none)")]
