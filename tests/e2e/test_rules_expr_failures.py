"""Rule expressions that cannot be evaluated: typed at load where they can be, located per draw where not.

What the static types already rule out (a string in arithmetic, ``<`` between a string
and a number, ``has(mesh)``, a ``constant_id`` glslang refuses, ``x in y`` where ``y``
cannot hold ``x``) is one located line from ``rules check`` and from every command that
loads the rules.  What only the content decides (an overflow, a ``None`` where a value is
needed, a type in ``extras``) is one located line naming the draw: that draw gets no key
for the family (or pass) at fault, every other draw and family still cooks, exit 1.
``x in SET_FEATURE`` is membership among the set's define names, never a substring test.
"""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest
import yaml
from robust_helpers import run_cli
from rules_fixtures import draw, facts, mesh, ruleset_from

from pipeline.builtin import builtin_materials_dir
from pipeline.keys.required import required_keys
from pipeline.outputs.manifest import load_chunk_manifest

TIMEOUT = 180
SOURCES = {"vertex": "pbr/pbr.vert", "fragment": "pbr/pbr.frag"}


# ---------------------------------------------------------------- a small world
def triangle(extras: dict | None = None, morphed: str | None = None) -> dict:
    """A glTF drawing one triangle; ``morphed`` names a TEXCOORD set a morph target moves."""
    positions = struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0)
    uvs = struct.pack("<6f", 0, 0, 1, 0, 0, 1)
    data = positions + uvs
    uri = "data:application/octet-stream;base64," + base64.b64encode(data).decode()
    primitive: dict = {"attributes": {"POSITION": 0}, "material": 0}
    if morphed:
        primitive["attributes"][morphed] = 1
        primitive["targets"] = [{morphed: 1}]
    return {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"children": [1]}, {"mesh": 0}],
        "meshes": [{"primitives": [primitive]}],
        "materials": [{"extras": extras or {}}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]},
                      {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC2"}],
        "bufferViews": [{"buffer": 0, "byteLength": len(positions)},
                        {"buffer": 0, "byteOffset": len(positions), "byteLength": len(uvs)}],
        "buffers": [{"byteLength": len(data), "uri": uri}],
    }


def family(shader: str, features: dict, derive: dict, **more) -> dict:
    """A rule set over the built-in pbr sources with one pass reading every feature."""
    return {"shader": shader, "sources": SOURCES, "select": "True", "features": features, "derive": derive,
            "passes": {"main": {"features": "all"}}, **more}


# Always derivable: proves the bad draw still gets the keys of every family that does not fail.
OK_FAMILY = family("ok", {"UNLIT": {"type": "bool"}}, {"UNLIT": "material.unlit"})


def make_world(root: Path, write_gltf, families: list[dict], files: dict[str, dict]) -> tuple[Path, Path]:
    world, rules = root / "world", root / "rules"
    (world / "lvl" / "c00").mkdir(parents=True)
    (world / "pipeline.toml").write_text("level_depth = 1\n")
    for name, doc in files.items():
        write_gltf(world / "lvl" / "c00" / name, doc)
    rules.mkdir()
    for data in families:
        (rules / f"{data['shader']}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return world, rules


def cli(*args: object, cwd: Path) -> tuple[int, str, str]:
    proc = run_cli(*args, "--materials", builtin_materials_dir(), timeout=TIMEOUT, cwd=cwd)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": error: " in line]


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# ---------------------------------------------------------------- typed at load
LOAD_CASES = {
    "ordering a string against a number": (
        {"derive": {"A": "material.alphaMode > 1"}},
        "A: material.alphaMode > 1", "'>' cannot compare 'material.alphaMode' (a string) with '1' (a number)"),
    "arithmetic on a string": (
        {"derive": {"A": "chunk.name * 2 > 1"}},
        "A: chunk.name * 2 > 1", "arithmetic needs numbers; 'chunk.name' is a string"),
    "equality that can never hold": (
        {"derive": {"A": "mesh.vertexCount == 'many'"}},
        "A: mesh.vertexCount ==", "'mesh.vertexCount' is a number and 'many' is a string: '==' is never true"),
    "has() of a fact group": (
        {"derive": {"A": "has(mesh)"}},
        "A: has(mesh)", "has() takes a vertex attribute name, e.g. has('NORMAL'), not 'mesh'"),
    "in over a number": (
        {"derive": {"A": "'x' in mesh.vertexCount"}},
        "A: '''x'' in mesh.vertexCount'", "'in' needs a list, a mapping, a set feature or a string on its "
                                          "right; 'mesh.vertexCount' is a number"),
    "in over a list of strings": (
        {"derive": {"A": "3 in mesh.morphAttributes"}},
        "A: 3 in mesh.morphAttributes", "'mesh.morphAttributes' holds only strings and '3' is a number"),
    "in over a set feature": (
        {"normalize": [{"when": "3 in MORPHED", "set": {"A": True}}]},
        "when: 3 in MORPHED", "'MORPHED' holds only strings and '3' is a number"),
    "constant_id over glslang's limit": (
        {"features": {"S": {"type": "bool", "mode": "specialization", "constant_id": 2047}}},
        "constant_id: 2047", "constant_id 2047 is out of range: specialization constant ids are 0 to 2046"),
    "constant_id past 32 bits": (
        {"features": {"S": {"type": "bool", "mode": "specialization", "constant_id": 2**40}}},
        f"constant_id: {2**40}", f"constant_id {2**40} is out of range"),
}


def load_case_family(change: dict) -> dict:
    features = {"A": {"type": "bool"}, "MORPHED": {"type": "set", "define": "MORPH_{value}"}}
    derive = {"A": "material.unlit", "MORPHED": "mesh.morphAttributes"}
    data = family("t", {**features, **change.get("features", {})}, {**derive, **change.get("derive", {})})
    if "normalize" in change:
        data["normalize"] = change["normalize"]
    for name, spec in change.get("features", {}).items():
        data["derive"].setdefault(name, "material.doubleSided")
    return data


@pytest.mark.slow
@pytest.mark.parametrize("case", list(LOAD_CASES))
def test_what_static_types_rule_out_is_a_located_load_error(tmp_path, write_gltf, case):
    change, where, message = LOAD_CASES[case]
    world, rules = make_world(tmp_path, write_gltf, [load_case_family(change)], {"a.gltf": triangle()})
    code, out, err = cli("rules", "check", "--rules", rules, cwd=tmp_path)
    (line,) = errors(err)
    assert code == 1 and message in line, line
    path = rules / "t.yaml"
    assert line.startswith(f"rules/t.yaml:{line_of(path, where)}:"), (line, path.read_text())
    for command in (("keys", world, "--rules", rules), ("cook", world, "--rules", rules, "--cache", tmp_path / "c",
                                                         "--out", tmp_path / "out")):
        code, out, err = cli(*command, cwd=tmp_path)  # every command that loads the rules says the same
        assert code == 1 and errors(err) == [line], err


def test_what_static_types_allow_still_loads(tmp_path, write_gltf):
    derive = {"A": "has('NORMAL') or material.extras.n * 2 > 3 or 'NORMAL' in mesh.morphAttributes "
                   "or mesh.vertexCount + 1 > 2 or material.alphaMode in ('MASK', 'BLEND') or True == 1"}
    world, rules = make_world(tmp_path, write_gltf, [family("t", {"A": {"type": "bool"}}, derive)],
                              {"a.gltf": triangle()})
    code, out, err = cli("rules", "check", "--rules", rules, cwd=tmp_path)
    assert code == 0 and not errors(err), err


# ---------------------------------------------------------------- located at run time, per draw
RUN_CASES = {
    "integer overflow": (
        {"N": {"type": "int", "values": "open"}}, {"N": "material.extras.n * 1000 if material.extras.n else 0"},
        {}, "material.extras.n * 1000", "arithmetic overflow: the result does not fit in a 64-bit number"),
    "None where a value is needed": (
        {"N": {"values": [0, 1, 2]}}, {"N": "material.extras.k if material.extras.n else 0"},
        {}, "material.extras.k if", "N derived as None, which is not one of its values (0, 1, 2)"),
    "a type only known at run time": (
        {"A": {"type": "bool"}}, {"A": "material.extras.s > 2"},
        {}, "material.extras.s > 2", "cannot evaluate 'material.extras.s > 2': cannot compare str with int"),
    "membership in a value that is not a container": (
        {"A": {"type": "bool"}}, {"A": "'x' in material.extras.n"},
        {}, "in material.extras.n", "'in' needs a list, dict or string, got int"),
    "overflow in a normalize rule over an open feature": (
        {"N": {"type": "int", "values": "open"}, "A": {"type": "bool"}}, {"N": "material.extras.n or 0"},
        {"normalize": [{"when": "N * N > 5", "set": {"A": True}}]}, "when: N * N > 5",
        "cannot evaluate 'N * N > 5': arithmetic overflow"),
}
BAD_EXTRAS = {"n": 10**17, "s": "abc"}


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.mark.parametrize("case", list(RUN_CASES))
def test_a_rule_failing_for_one_draw_is_located_at_the_rule_and_names_the_draw(tmp_path, write_gltf,
                                                                               shared_cache, case):
    features, derive, more, where, message = RUN_CASES[case]
    world, rules = make_world(tmp_path, write_gltf, [family("t", features, derive, **more), OK_FAMILY],
                              {"bad.gltf": triangle(BAD_EXTRAS), "good.gltf": triangle()})
    expected_start = f"rules/t.yaml:{line_of(rules / 't.yaml', where)}:"
    expected_end = "for draw lvl/c00/bad.gltf#/meshes/0/primitives/0 (node 1)"

    def the_error(err: str) -> str:
        (line,) = errors(err)
        assert line.startswith(expected_start) and message in line and line.endswith(expected_end), line
        return line

    out = tmp_path / "out"
    code, stdout, err = cli("cook", world, "--rules", rules, "--cache", shared_cache, "--out", out, "--json",
                            cwd=tmp_path)
    line = the_error(err)
    doc = json.loads(stdout)
    assert code == 1 and [e["message"] for e in doc["errors"]] == [line.split(": error: ", 1)[1]]
    manifest = load_chunk_manifest(out / "lvl" / "c00.json")
    draws = {(d["file"], family_pass) for d in manifest.draws for family_pass in d["passes"]}
    assert ("lvl/c00/good.gltf", "t/main") in draws and ("lvl/c00/good.gltf", "ok/main") in draws
    assert ("lvl/c00/bad.gltf", "ok/main") in draws and ("lvl/c00/bad.gltf", "t/main") not in draws

    code, stdout, err = cli("keys", world, "--rules", rules, "--json", cwd=tmp_path)
    assert code == 1 and the_error(err) == line
    keys = {k["key"].partition("{")[0]: k["draws"] for k in json.loads(stdout)["keys"]}
    assert keys == {"ok/main": 2, "t/main": 1}

    code, stdout, err = cli("report", world, "--rules", rules, "--cache", shared_cache, "--format", "json",
                            cwd=tmp_path)
    assert code == 1 and the_error(err) == line
    assert json.loads(stdout)["format"]


# ---------------------------------------------------------------- set membership
MEMBERSHIP = family(
    "m", {"MORPHED": {"type": "set", "define": "MORPH_{value}"}, "UV1_MOVES": {"type": "bool"}},
    {"MORPHED": "mesh.morphAttributes", "UV1_MOVES": "False"},
    normalize=[{"when": "'MORPH_TEXCOORD_1' in MORPHED", "set": {"UV1_MOVES": True}}])


def test_membership_in_a_set_feature_is_membership_not_a_substring(tmp_path, write_gltf):
    world, rules = make_world(tmp_path, write_gltf, [MEMBERSHIP],
                              {"ten.gltf": triangle(morphed="TEXCOORD_10"), "one.gltf": triangle(morphed="TEXCOORD_1")})
    code, stdout, err = cli("rules", "check", "--rules", rules, cwd=tmp_path)
    assert code == 0 and not errors(err), err  # a rule over an open set is not judged from its default alone
    code, stdout, err = cli("keys", world, "--rules", rules, "--json", cwd=tmp_path)
    assert code == 0, err
    assert sorted(k["key"] for k in json.loads(stdout)["keys"]) == [
        "m/main{MORPHED=MORPH_TEXCOORD_1,UV1_MOVES=1}",
        "m/main{MORPHED=MORPH_TEXCOORD_10,UV1_MOVES=0}",
    ]


def test_not_in_over_a_set_feature_and_several_elements():
    rs = ruleset_from(family(
        "m", {"MORPHED": {"type": "set", "define": "{value}"}, "A": {"type": "bool"}, "B": {"type": "bool"}},
        {"MORPHED": "mesh.morphAttributes"},
        normalize=[{"when": "'TEXCOORD_1' not in MORPHED", "set": {"A": True}},
                   {"when": "'NORMAL' in MORPHED", "set": {"B": True}}]))
    found = required_keys([rs], [draw(facts(mesh("NORMAL", morphAttributes=("NORMAL", "TEXCOORD_10"))))])
    assert [k.text for k in found.keys] == ["m/main{A=1,B=1,MORPHED=NORMAL+TEXCOORD_10}"]
