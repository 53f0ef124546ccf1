"""The example fact provider of tests/data/plugins (sidecar_facts.py) used end to end by cooks of a small
world (tests/provider_helpers.py): a material sidecar beside each glTF file sets the draw's
``ext.wetness.*`` facts, a rule set derives its features from them, glslang compiles the keys."""

from __future__ import annotations

import json
import re

import pytest
from provider_helpers import PLUGINS, make_world, sidecar, wet_rules
from robust_helpers import one_error_line, run_cli

from pipeline import api
from pipeline.keys.incremental import cook_input
from pipeline.scan import pool
from pipeline.world import open_world

A_KEY, B_KEY, C_KEY = ("wet/forward{SOAKED=0,WETNESS=1}", "wet/forward{SOAKED=1,WETNESS=2}",
                       "wet/forward{SOAKED=0,WETNESS=0}")


def cook(world, tmp_path, **options) -> api.CookResult:
    return api.cook(world, cache=tmp_path / "cache", out=tmp_path / "build", jobs=1, scheduler="none", **options)


def chunk_keys(out, chunk: str) -> set[str]:
    """The key texts a chunk manifest holds."""
    doc = json.loads((out / "town" / f"{chunk}.json").read_text())
    texts = set()
    for key in doc["keys"]:
        name, features = doc["key_passes"][key[0]]
        texts.add(f"{name}{{{','.join(f'{f}={int(v)}' for f, v in zip(features, key[1]))}}}")
    return texts


def files_of(out) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_sidecar_facts_choose_each_file_s_key_and_the_keys_compile(tmp_path) -> None:
    world = make_world(tmp_path)
    result = cook(world, tmp_path)
    assert result.errors == [] and result.draws == 3
    assert sorted(k.text for k in result.plan.stages) == sorted([A_KEY, B_KEY, C_KEY])
    for chunk, key in (("a", A_KEY), ("b", B_KEY), ("c", C_KEY)):
        assert chunk_keys(tmp_path / "build", chunk) == {key}
    fragments = {key.text: stages["fragment"] for key, stages in result.plan.stages.items()}
    assert len(set(fragments.values())) == 3  # three wetness values: three fragment jobs, all compiled
    assert all(result.run.results[job].ok for job in fragments.values())


def test_editing_a_sidecar_re_evaluates_its_chunk_alone_and_compiles_only_the_new_key(tmp_path) -> None:
    world = make_world(tmp_path)
    cook(world, tmp_path)
    with api.open_store(tmp_path / "cache") as store:
        before = cook_input(open_world(world), store).fingerprints
    (world / "town" / "a" / "mesh.material.json").write_text(sidecar(2))
    with api.open_store(tmp_path / "cache") as store:
        after = cook_input(open_world(world), store).fingerprints
    assert sorted(c for c in before if before[c] != after[c]) == ["town/a"]
    result = cook(world, tmp_path)
    new = "wet/forward{SOAKED=0,WETNESS=2}"
    assert [(k["chunk"], k["key"]) for k in result.keys_added] == [("town/a", new)]
    assert [(k["chunk"], k["key"]) for k in result.keys_removed] == [("town/a", A_KEY)]
    assert {result.first_keys[job] for job in result.run.compiled} == {new}
    assert chunk_keys(tmp_path / "build", "a") == {new} and chunk_keys(tmp_path / "build", "b") == {B_KEY}
    again = cook(world, tmp_path)
    assert again.run.compiled == [] and again.written == []


def test_a_noop_stamp_sees_an_edited_sidecar(tmp_path) -> None:
    world = make_world(tmp_path)
    args = ("cook", world, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "--json")
    assert json.loads(run_cli(*args, cwd=world).stdout)["compiled"] == 4
    assert json.loads(run_cli(*args, cwd=world).stdout)["compiled"] == 0
    assert list((tmp_path / "cache" / "noop-stamps").iterdir())  # the next cook is answered from its stamp
    (world / "town" / "c" / "mesh.material.json").write_text(sidecar(1))  # a sidecar where there was none
    doc = json.loads(run_cli(*args, cwd=world).stdout)
    assert doc["compiled"] == 0  # town/c now uses town/a's key, compiled already
    assert chunk_keys(tmp_path / "build", "c") == {A_KEY}
    assert json.loads(run_cli(*args, cwd=world).stdout)["written"] == []


def test_editing_the_provider_re_evaluates_every_chunk_and_recompiles_nothing_unchanged(tmp_path) -> None:
    world = make_world(tmp_path)
    cook(world, tmp_path)
    with api.open_store(tmp_path / "cache") as store:
        before = cook_input(open_world(world), store).fingerprints
    provider = world / "plugins" / "sidecar_facts.py"
    provider.write_text(provider.read_text() + "# the same facts, from an edited file\n")
    with api.open_store(tmp_path / "cache") as store:
        after = cook_input(open_world(world), store).fingerprints
    assert all(before[c] != after[c] for c in before) and len(before) == 3
    result = cook(world, tmp_path)
    assert result.errors == [] and result.run.compiled == []


def test_a_raising_provider_is_one_located_error_and_every_other_file_cooks(tmp_path) -> None:
    rules = wet_rules("../plugins/faulty_facts.py:RaisesOnThree", soaked="ext.wetness.level == 2")
    world = make_world(tmp_path, rules=rules, sidecars={"a": sidecar(1), "b": sidecar(3)})
    proc = run_cli("cook", world, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "-q", cwd=world)
    line = one_error_line(proc)
    assert re.fullmatch(r"town/b/mesh\.gltf: error: fact provider 'wetness' raised ValueError: wetness 3 is not "
                        r"supported on draw node 1 mesh 0 primitive 0 \(plugins/faulty_facts\.py:\d+\)", line), line
    assert chunk_keys(tmp_path / "build", "a") == {A_KEY}
    assert chunk_keys(tmp_path / "build", "c") == {C_KEY}
    b = json.loads((tmp_path / "build" / "town" / "b.json").read_text())
    assert b["keys"] == [] and "wetness 3 is not supported" in b["errors"][0]["message"]


def test_a_provider_answering_the_wrong_type_is_located_and_a_broken_sidecar_at_its_line(tmp_path) -> None:
    world = make_world(tmp_path, rules=wet_rules("../plugins/faulty_facts.py:AnswersText", soaked="False"),
                       sidecars={"a": sidecar(1)})
    line = one_error_line(run_cli("cook", world, "--out", tmp_path / "o", "--cache", tmp_path / "c", "-q", cwd=world))
    assert line.startswith("town/a/mesh.gltf: error: fact provider 'wetness' answered level = 'two' (str), not "
                           "of type int on draw node 1 mesh 0 primitive 0 (plugins/faulty_facts.py:"), line
    world = make_world(tmp_path / "json", sidecars={"a": '{"materials": {"0": {"wetness": 1}}}',
                                                    "b": '{"materials":\n  {"0": {"wetness": 2,}}}'})
    line = one_error_line(run_cli("cook", world, "--out", tmp_path / "o2", "--cache", tmp_path / "c2", "-q",
                                  cwd=world))
    assert re.fullmatch(r"town/b/mesh\.material\.json:2:\d+: error: fact provider 'wetness' raised JSONDecodeError: "
                        r".* \(plugins/sidecar_facts\.py:\d+\)", line), line


def check_errors(world) -> list[str]:
    """The located lines ``pipeline rules check`` printed for the world's rules (it exits 1)."""
    proc = run_cli("rules", "check", "--rules", world / "rules", cwd=world)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if ": error: " in line]


def test_rules_check_catches_bad_fact_references_and_unloadable_providers(tmp_path) -> None:
    world = make_world(tmp_path, rules=wet_rules(wetness="min(ext.wetness.levle, 2)"))
    assert check_errors(world) == [
        "rules/wet.yaml:9:16: error: unknown fact 'ext.wetness.levle' (did you mean 'ext.wetness.level'?)"]
    (world / "rules" / "wet.yaml").write_text(wet_rules(soaked="ext.wetness.surface > 1"))
    [line] = check_errors(world)
    assert line.startswith("rules/wet.yaml:10:11: error: ") and "'ext.wetness.surface' (a string)" in line, line
    (world / "rules" / "wet.yaml").write_text(wet_rules(provider="../plugins/sidecar_facts.py:Nope"))
    file = (world / "plugins" / "sidecar_facts.py").resolve()
    assert check_errors(world)[0] == (f"rules/wet.yaml:2:18: error: fact provider plug-in: '{file}:Nope': {file} has "
                                      "no attribute 'Nope'")


@pytest.mark.slow
def test_forked_chunk_workers_and_a_local_farm_write_the_same_bytes(tmp_path, monkeypatch) -> None:
    pytest.importorskip("distributed")
    world = make_world(tmp_path)
    here = api.cook(world, cache=tmp_path / "c1", out=tmp_path / "o1", jobs=1, scheduler="none")
    monkeypatch.setattr(pool, "POOL_MIN_FILES", 2)  # three one-file chunks: scanned and evaluated on a pool
    forked = api.cook(world, cache=tmp_path / "c2", out=tmp_path / "o2", jobs=2, scheduler="none")
    farm = api.cook(world, cache=tmp_path / "c3", out=tmp_path / "o3", scheduler="local:2")
    assert here.errors == forked.errors == farm.errors == []
    assert set(farm.run.where.values()) != {"local"}  # the farm compiled jobs
    assert files_of(tmp_path / "o1") and files_of(tmp_path / "o1") == files_of(tmp_path / "o2") == \
        files_of(tmp_path / "o3")


def test_keys_and_explain_read_the_provided_facts(tmp_path) -> None:
    world = make_world(tmp_path)
    keys = run_cli("keys", world, cwd=world)
    assert keys.returncode == 0, keys.stderr
    assert sorted(re.findall(r"wet/forward\{[^}]*\}", keys.stdout)) == sorted([A_KEY, B_KEY, C_KEY])
    explained = run_cli("explain", world, B_KEY, cwd=world)
    assert explained.returncode == 0, explained.stderr
    assert "ext.wetness.level = 2" in explained.stdout and "ext.wetness.surface = 'soaked'" in explained.stdout


def test_no_noop_stamp_is_kept_for_a_provider_outside_the_world(tmp_path) -> None:
    world = make_world(tmp_path, rules=wet_rules(f"{PLUGINS / 'sidecar_facts.py'}:Wetness"))
    args = ("cook", world, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "--json")
    assert json.loads(run_cli(*args, cwd=world).stdout)["compiled"] == 4
    assert json.loads(run_cli(*args, cwd=world).stdout)["compiled"] == 0
    stamps = tmp_path / "cache" / "noop-stamps"
    assert not stamps.exists() or not list(stamps.iterdir())  # its edits would not be seen by file stats
