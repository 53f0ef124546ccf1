"""The example plug-ins of tests/data/plugins used end to end by cooks of a small lit world
(tests/plugin_helpers.py): the loop-unrolling transform, the DXC compile backend wrapping a fake
compiler, a source generator; real scans, rules, glslang compiles and outputs."""

from __future__ import annotations

import json
import re

import pytest
from plugin_helpers import PLUGINS, TARGETS, lit_rules, make_world
from robust_helpers import one_error_line, run_cli

from pipeline import api
from pipeline.cache.job_records import JOB

DXC_TOML = '[plugins]\nbackends = { d3d12 = "plugins/dxc_backend.py:Dxc" }\n'
WITH_D3D12 = TARGETS[:-1] + ", d3d12]"


def cook(world, tmp_path, **options) -> api.CookResult:
    return api.cook(world, cache=tmp_path / "cache", out=tmp_path / "build", jobs=1, scheduler="none", **options)


def blobs(result: api.CookResult, tmp_path, source: str, target: str) -> dict[str, bytes]:
    """Key text -> the blob of its ``source`` job for ``target``."""
    store = api.open_store(tmp_path / "cache")
    try:
        out = {}
        for key, per_target in result.plan.targets.items():
            for label, stages in per_target.items():
                for job_key in stages.values():
                    job = result.plan.jobs[job_key]
                    blob = store.get(JOB, job_key)["blob"]
                    if label == target and job.request.source == source and blob is not None:
                        out[key.text] = store.get_blob(blob)
        return out
    finally:
        store.close()


def test_unrolled_light_loops_compile_for_webgl2_and_vulkan(tmp_path) -> None:
    result = cook(make_world(tmp_path), tmp_path)
    assert result.errors == []
    webgl = blobs(result, tmp_path, "lit.frag", "webgl2")
    assert sorted(webgl) == ["lit/forward{NUM_LIGHTS=0}", "lit/forward{NUM_LIGHTS=2}", "lit/forward{NUM_LIGHTS=4}"]
    for key, blob in webgl.items():
        lights = int(re.search(r"NUM_LIGHTS=(\d)", key).group(1))
        text = blob.decode()
        assert "for (" not in text and "pragma" not in text
        assert [int(i) for i in re.findall(r"lightColor\[(\d)\]\.rgb", text)] == list(range(lights))
    vulkan = blobs(result, tmp_path, "lit.frag", "vulkan1.2")
    assert len(vulkan) == 3 and all(blob[:4] == b"\x03\x02\x23\x07" for blob in vulkan.values())  # SPIR-V
    assert len(set(vulkan.values())) == 3
    plain = [job for job in result.plan.jobs.values() if job.request.source.startswith("plain")]
    assert plain and all(job.request.plugins == () and job.request.text is None for job in plain)


def test_editing_the_transform_recompiles_exactly_the_jobs_it_touched(tmp_path) -> None:
    world = make_world(tmp_path)
    first = cook(world, tmp_path)
    touched = {key for key, job in first.plan.jobs.items() if job.request.plugins}
    # lit: webgl2 1 vertex + 3 fragment jobs; vulkan1.2 auto_map links each key's stages: 3 + 3; plain: 2
    assert first.errors == [] and len(touched) == 10 and len(first.plan.jobs) == 12
    assert cook(world, tmp_path).run.compiled == []
    unroll = world / "plugins" / "unroll.py"
    unroll.write_text(unroll.read_text() + "\n# the same loops, unrolled by an edited file\n")
    second = cook(world, tmp_path)
    recompiled = set(second.run.compiled)
    assert len(recompiled) == len(touched) == 10
    assert {second.plan.jobs[k].request.source for k in recompiled} == {"lit.vert", "lit.frag"}
    assert all(second.run.reasons[k].startswith("plug-in changed: unroll") for k in recompiled)
    assert cook(world, tmp_path).run.compiled == []


def test_a_raising_transform_is_one_located_error_and_every_other_key_cooks(tmp_path) -> None:
    rules = lit_rules('["../plugins/unroll.py:UnrollLoops", "../plugins/faulty.py:RaisesOnFour"]')
    world = make_world(tmp_path, rules=rules)
    proc = run_cli("cook", world, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "-q", cwd=world)
    line = one_error_line(proc)
    assert re.fullmatch(r"plugins/faulty\.py:\d+:1: error: source transform 'raises-on-four' raised RuntimeError: "
                        r"four lights are not supported \(key lit/forward\{NUM_LIGHTS=4\}\)", line), line
    for chunk in ("none", "two", "four"):
        index = json.loads((tmp_path / "build" / "town" / f"{chunk}.json").read_text())
        assert index
    result = cook(world, tmp_path)
    failed = {e.key for e in result.errors}
    assert failed == {"lit/forward{NUM_LIGHTS=4}"}
    assert len(blobs(result, tmp_path, "lit.frag", "webgl2")) == 2  # the other two lit keys compiled


def test_a_transform_returning_no_text_is_located_at_its_definition(tmp_path) -> None:
    world = make_world(tmp_path, rules=lit_rules('["../plugins/faulty.py:ReturnsNothing"]'))
    proc = run_cli("cook", world, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "-q", cwd=world)
    line = one_error_line(proc)
    number = next(i for i, text in enumerate((world / "plugins" / "faulty.py").read_text().splitlines(), 1)
                  if "def transform" in text and i > 15)
    assert line.startswith(f"plugins/faulty.py:{number}:1: error: source transform 'returns-nothing' returned "
                           "NoneType, not str"), line


def test_the_dxc_backend_compiles_the_d3d12_target_through_the_fake_compiler(tmp_path, monkeypatch) -> None:
    log = tmp_path / "dxc.log"
    monkeypatch.setenv("FAKE_DXC_LOG", str(log))
    world = make_world(tmp_path, rules=lit_rules(targets=WITH_D3D12), toml=DXC_TOML)
    result = cook(world, tmp_path)
    assert result.errors == []
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    fragment = sorted(line for line in lines if line[1] == "ps_6_0")
    assert [line[:6] for line in fragment] == [["-T", "ps_6_0", "-E", "main", "-D", f"NUM_LIGHTS={n}"]
                                               for n in (0, 2, 4)]
    assert [line[:4] for line in lines if line[1] == "vs_6_0"] == [["-T", "vs_6_0", "-E", "main"]]
    dxil = blobs(result, tmp_path, "lit.frag", "d3d12")
    assert len(dxil) == 3 and all(blob.startswith(b"DXIL") for blob in dxil.values())
    jobs = [job for job in result.plan.jobs.values() if job.request.target == "d3d12"]
    assert all(job.request.plugins[-1][:2] == ("dxc", "1.0") for job in jobs)
    assert all(job.request.plugins[0][:2] == ("unroll", "1.0") for job in jobs)


def test_a_source_generator_plugin_is_a_family_kind(tmp_path) -> None:
    toml = '[plugins]\ngenerators = { tint = "plugins/tint_generator.py:TintGenerator" }\n'
    world = make_world(tmp_path, toml=toml)
    (world / "rules" / "tinted.yaml").write_text(
        "shader: tinted\nkind: tint\nfeatures:\n  TINT: {values: [0, 5]}\n"
        "derive:\n  TINT: 5 if chunk.lights.point > 0 else 0\npasses: {forward: {}}\n")
    result = cook(world, tmp_path)
    assert result.errors == []
    tinted = {key.text: stages for key, stages in result.plan.stages.items() if key.shader == "tinted"}
    assert sorted(tinted) == ["tinted/forward{TINT=0}", "tinted/forward{TINT=5}"]
    assert len({stages["vertex"] for stages in tinted.values()}) == 1  # one vertex text: one job
    assert len({stages["fragment"] for stages in tinted.values()}) == 2
    assert all(result.plan.jobs[j].request.plugins[0][:2] == ("tint", "1.0")
               for stages in tinted.values() for j in stages.values())
    assert all(result.run.results[j].ok for stages in tinted.values() for j in stages.values())


def test_a_generator_returning_garbage_fails_its_family_alone(tmp_path) -> None:
    toml = '[plugins]\ngenerators = { tint = "plugins/tint_generator.py:Garbage" }\n'
    world = make_world(tmp_path, toml=toml)
    (world / "rules" / "tinted.yaml").write_text("shader: tinted\nkind: tint\nfeatures: {}\npasses: {forward: {}}\n")
    proc = run_cli("cook", world, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "-q", cwd=world)
    line = one_error_line(proc)
    assert re.fullmatch(r"plugins/tint_generator\.py:\d+:1: error: source generator 'tint' returned str for the "
                        r"fragment stage, not GeneratedStage \(key tinted/forward\{\}\)", line), line
    result = cook(world, tmp_path)
    assert {e.key for e in result.errors} == {"tinted/forward{}"}
    assert all(r.ok for k, r in result.run.results.items() if not result.plan.jobs[k].request.source.startswith("gen"))


def test_an_unknown_plugin_reference_is_a_located_error(tmp_path) -> None:
    world = make_world(tmp_path, rules=lit_rules('["../plugins/missing.py:Nothing"]'))
    line = one_error_line(run_cli("cook", world, "--out", tmp_path / "build", "--cache", tmp_path / "c", "-q", cwd=world))
    assert re.fullmatch(r"rules/lit\.yaml:3:\d+: error: transform plug-in: plug-in file \.\./plugins/missing\.py does not exist",
                        line), line
    world = make_world(tmp_path / "b", rules=lit_rules(targets=WITH_D3D12))
    line = one_error_line(run_cli("cook", world, "--out", tmp_path / "build", "--cache", tmp_path / "c", "-q", cwd=world))
    assert re.fullmatch(r"rules/lit\.yaml:4:\d+: error: family lit: no compile backend plug-in for target 'd3d12' "
                        r"\(\[plugins\] backends: none\)", line), line


def test_explain_and_keys_name_the_plugins_and_show_the_transformed_text(tmp_path) -> None:
    world = make_world(tmp_path)
    cooked = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", tmp_path / "build", "--explain", cwd=world)
    assert cooked.returncode == 0, cooked.stderr
    assert "lit.frag [fragment] for lit/forward" in cooked.stdout and "through plug-ins unroll 1.0" in cooked.stdout
    assert not re.search(r"plain\.frag.*through plug-ins", cooked.stdout)
    explained = run_cli("explain", world, "lit/forward{NUM_LIGHTS=2}", "--cache", tmp_path / "cache", cwd=world)
    assert explained.returncode == 0, explained.stderr
    assert re.search(r"fragment\s+lit\.frag\s+job \w+\s+blob \w+\s+through unroll 1\.0", explained.stdout)
    keys = run_cli("keys", world, "--defines", "--transformed", "--chunk", "town/two", cwd=world)
    assert keys.returncode == 0, keys.stderr
    text = keys.stdout.split("    fragment text:\n", 1)[1].split("    vertex text:", 1)[0]
    assert "lightColor[0]" in text and "lightColor[1]" in text and "lightColor[2]" not in text
    assert "unroll_loop" not in text
    doc = json.loads(run_cli("keys", world, "--transformed", "--json", "--chunk", "town/two", cwd=world).stdout)
    by_key = {k["key"]: k["transformed"] for k in doc["keys"]}
    assert sorted(by_key["lit/forward{NUM_LIGHTS=2}"]) == ["fragment", "vertex"] and by_key["plain/forward{LIT=1}"] == {}


@pytest.mark.slow
def test_a_farm_cook_with_plugins_writes_the_same_bytes(tmp_path, monkeypatch) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setenv("FAKE_DXC_LOG", str(tmp_path / "dxc.log"))
    world = make_world(tmp_path, rules=lit_rules(targets=WITH_D3D12), toml=DXC_TOML)
    here = api.cook(world, cache=tmp_path / "c1", out=tmp_path / "o1", scheduler="none")
    farm = api.cook(world, cache=tmp_path / "c2", out=tmp_path / "o2", scheduler="local:2")
    assert here.errors == farm.errors == []
    assert set(farm.run.where.values()) != {"local"}  # the farm compiled jobs
    files = sorted(p.relative_to(tmp_path / "o1") for p in (tmp_path / "o1").rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(tmp_path / "o2") for p in (tmp_path / "o2").rglob("*") if p.is_file())
    assert all((tmp_path / "o1" / f).read_bytes() == (tmp_path / "o2" / f).read_bytes() for f in files)
    assert len((tmp_path / "dxc.log").read_text().splitlines()) == 8  # 4 d3d12 jobs here, 4 on the farm


def test_a_noop_cook_stamp_sees_an_edited_plugin_file_and_none_is_kept_for_one_outside(tmp_path) -> None:
    world = make_world(tmp_path)
    args = ("cook", world, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "--json")
    assert json.loads(run_cli(*args, cwd=world).stdout)["compiled"] == 12
    assert json.loads(run_cli(*args, cwd=world).stdout)["compiled"] == 0
    assert list((tmp_path / "cache" / "noop-stamps").iterdir())  # answered from its stamp next time
    unroll = world / "plugins" / "unroll.py"
    unroll.write_text(unroll.read_text() + "# edited\n")
    assert json.loads(run_cli(*args, cwd=world).stdout)["compiled"] == 10
    outside = make_world(tmp_path / "b", rules=lit_rules(f'["{PLUGINS / "unroll.py"}:UnrollLoops"]'))
    args = ("cook", outside, "--out", tmp_path / "b" / "build", "--cache", tmp_path / "b" / "cache", "--json")
    assert json.loads(run_cli(*args, cwd=outside).stdout)["compiled"] == 12
    assert json.loads(run_cli(*args, cwd=outside).stdout)["compiled"] == 0
    assert not (tmp_path / "b" / "cache" / "noop-stamps").exists() or \
        not list((tmp_path / "b" / "cache" / "noop-stamps").iterdir())
