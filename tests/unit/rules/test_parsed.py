"""rules.parsed: a rule file's YAML parse remembered across loads, replayed with the locations its compile
asked for, and parsed again wherever the replay cannot answer as the YAML would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from pipeline.errors import RuleError
from pipeline.rules import load, parsed
from pipeline.rules.load import load_rulesets
from pipeline.rules.yaml_nodes import YamlDocument

REPO = Path(__file__).resolve().parents[3]
FOLDERS = [REPO / "rules", *sorted(p.parent for p in (REPO / "tests" / "data").glob("*/rules/*.yaml"))]
RULESET = "shader: s\nsources: {vertex: t.vert, fragment: t.frag}\nfeatures: {F: {type: bool}}\n" \
          "passes: {main: {}}\nderive:\n  F:\n    - when: \"mesh.has('NORMAL')\"\n      value: true\n"


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The paths of the rule files parsed as YAML."""
    seen: list[str] = []
    real = YamlDocument.parse.__func__

    def counted(cls, text, path):
        seen.append(path)
        return real(cls, text, path)

    monkeypatch.setattr(YamlDocument, "parse", classmethod(counted))
    return seen


def entries(cache: Path) -> list[Path]:
    return sorted((cache / parsed.FOLDER).glob("*.msgpack"))


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_a_remembered_parse_compiles_to_the_rule_sets_a_fresh_parse_gives_without_parsing_yaml(
        folder, tmp_path, parses) -> None:
    fresh = load_rulesets(folder)
    assert len(parses) == len(fresh)
    first = load_rulesets(folder, cache_dir=tmp_path)  # parsed, and remembered
    assert len(parses) == 2 * len(fresh) and len(entries(tmp_path)) == len(fresh)
    again = load_rulesets(folder, cache_dir=tmp_path)
    assert len(parses) == 2 * len(fresh)  # no YAML parsed
    # compiled rules compare by identity: their text (locations, expressions, values) is what must agree
    assert repr(again) == repr(first) == repr(fresh)


def test_an_edited_file_a_damaged_entry_and_other_code_are_parsed_again(tmp_path, parses, monkeypatch) -> None:
    rules, cache = tmp_path / "rules", tmp_path / "cache"
    rules.mkdir()
    (rules / "s.yaml").write_text(RULESET)
    load_rulesets(rules, cache_dir=cache)
    load_rulesets(rules, cache_dir=cache)
    assert len(parses) == 1
    (rules / "s.yaml").write_text(RULESET.replace("value: true", "value: false"))
    edited = load_rulesets(rules, cache_dir=cache)
    assert len(parses) == 2 and edited[0].compiled.derive["F"][0].value is False
    [entry] = entries(cache)
    entry.write_bytes(b"\x93garbage")
    load_rulesets(rules, cache_dir=cache)
    assert len(parses) == 3
    load_rulesets(rules, cache_dir=cache)
    assert len(parses) == 3  # written again
    monkeypatch.setattr(parsed, "_code", lambda: "another reader")
    load_rulesets(rules, cache_dir=cache)
    assert len(parses) == 4


def test_a_file_with_a_problem_is_not_remembered_and_its_problem_reads_the_same(tmp_path, parses) -> None:
    rules, cache = tmp_path / "rules", tmp_path / "cache"
    rules.mkdir()
    (rules / "s.yaml").write_text(RULESET.replace("mesh.has('NORMAL')", "mesh.nope > 1"))
    with pytest.raises(RuleError) as fresh:
        load_rulesets(rules)
    with pytest.raises(RuleError) as cached:
        load_rulesets(rules, cache_dir=cache)
    assert cached.value.diagnostics == fresh.value.diagnostics and not entries(cache)


def test_a_compile_that_takes_another_path_reports_its_problem_as_a_fresh_parse(tmp_path, parses) -> None:
    rules, cache, materials = tmp_path / "rules", tmp_path / "cache", tmp_path / "materials"
    rules.mkdir()
    materials.mkdir()
    for name in ("t.vert", "t.frag"):
        (materials / name).write_text("void main() {}\n")
    (rules / "s.yaml").write_text(RULESET)
    load_rulesets(rules, materials_dir=materials, cache_dir=cache)
    (materials / "t.frag").unlink()  # the compile now locates a problem it never located before
    with pytest.raises(RuleError) as fresh:
        load_rulesets(rules, materials_dir=materials)
    with pytest.raises(RuleError) as cached:
        load_rulesets(rules, materials_dir=materials, cache_dir=cache)
    assert cached.value.diagnostics == fresh.value.diagnostics
    assert [d.location.line for d in fresh.value.diagnostics] == [2]
    assert len(parses) == 3  # the replay stopped, and the YAML was parsed


def test_remembered_data_that_no_longer_validates_is_parsed_again(tmp_path, parses) -> None:
    rules, cache = tmp_path / "rules", tmp_path / "cache"
    rules.mkdir()
    (rules / "s.yaml").write_text(RULESET)
    expected = repr(load_rulesets(rules, cache_dir=cache))
    [path] = entries(cache)
    entry = msgspec.msgpack.decode(path.read_bytes(), type=parsed._Entry)
    data = msgspec.msgpack.decode(entry.data)
    data["unknown_key"] = 1  # as if the rule-set model had changed since the parse was remembered
    path.write_bytes(msgspec.msgpack.encode(msgspec.structs.replace(entry, data=msgspec.msgpack.encode(data))))
    assert repr(load_rulesets(rules, cache_dir=cache)) == expected and len(parses) == 2


def test_a_cache_that_cannot_be_written_loads_as_without_one(tmp_path, parses) -> None:
    rules, cache = tmp_path / "rules", tmp_path / "cache"
    rules.mkdir()
    cache.write_text("a file where the cache folder would be")
    (rules / "s.yaml").write_text(RULESET)
    assert repr(load_rulesets(rules, cache_dir=cache)) == repr(load_rulesets(rules))
    assert cache.read_text() == "a file where the cache folder would be"


def test_a_value_msgpack_cannot_hold_is_not_remembered(tmp_path, parses) -> None:
    rules, cache = tmp_path / "rules", tmp_path / "cache"
    rules.mkdir()
    (rules / "s.yaml").write_text(RULESET + f"description: x\nversion_note: {2**70}\n")
    with pytest.raises(RuleError):
        load_rulesets(rules, cache_dir=cache)  # an unknown key: the problem, as always
    assert parsed.encoded_data({"wide": 2**70}) is None and not entries(cache)


def test_a_process_whose_rule_files_are_remembered_does_not_import_pyyaml(tmp_path) -> None:
    code = ("import sys; from pipeline.rules.load import load_rulesets; "
            f"rs = load_rulesets({str(REPO / 'rules')!r}, cache_dir={str(tmp_path)!r}); "
            "print(len(rs), 'yaml' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
            for _ in range(2)]
    assert runs[0][1] == "True" and runs[1] == [runs[0][0], "False"]


def test_load_keeps_pyyaml_out_of_its_imports() -> None:
    assert "yaml_nodes" not in load.__dict__ and not hasattr(load, "yaml")


def test_a_killed_write_leaves_the_entry_before_it_or_none(tmp_path, monkeypatch) -> None:
    rules, cache = tmp_path / "rules", tmp_path / "cache"
    rules.mkdir()
    (rules / "s.yaml").write_text(RULESET)
    monkeypatch.setattr(parsed.os, "replace", lambda *a: (_ for _ in ()).throw(OSError(28, "no space")))
    load_rulesets(rules, cache_dir=cache)  # the write failed: no entry, no temp file left
    assert list((cache / parsed.FOLDER).iterdir()) == []


def test_a_load_that_may_not_write_the_cache_reads_what_is_remembered_and_writes_nothing(tmp_path, parses) -> None:
    rules, cache = tmp_path / "rules", tmp_path / "cache"
    rules.mkdir()
    (rules / "s.yaml").write_text(RULESET)
    load_rulesets(rules, cache_dir=cache, remember=False)
    assert not cache.exists() and len(parses) == 1  # a report or a dry run: no folder made
    load_rulesets(rules, cache_dir=cache)
    load_rulesets(rules, cache_dir=cache, remember=False)
    assert len(parses) == 2 and len(entries(cache)) == 1  # what a cook remembered, read


def test_a_world_remembers_its_rule_files_once_it_opened_its_cache_to_write(tmp_path) -> None:
    from pipeline.world import open_world

    world, cache = tmp_path / "world", tmp_path / "cache"
    world.mkdir()
    looked = open_world(world, rules=REPO / "rules", materials=REPO / "materials", cache=cache)
    assert looked.rulesets and not cache.exists()  # a world that only reads its cache writes nothing there
    cooking = open_world(world, rules=REPO / "rules", materials=REPO / "materials", cache=cache)
    with cooking.open_store():
        assert cooking.rulesets and len(entries(cache)) == len(cooking.rulesets)
