"""The runtime contract in the cook outputs: draws -> keys and pipeline states, reflection, fallbacks.

Needs the spirv-cross tool (Debian package, installed by .ci/run) for the reflection.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipeline import api
from pipeline.keys.key import PermutationKey
from pipeline.keys.required import KeyUses
from pipeline.outputs import contract
from pipeline.outputs import manifest as mf
from pipeline.outputs.view import expanded
from pipeline.outputs.contract import DRAW_FIELDS, pipeline_state
from pipeline.outputs.read_outputs import load_chunk
from pipeline.compilers.reflect import normalize, reflect
from pipeline.digest import stable_hash
from pipeline.errors import RuleError
from pipeline.keys.fallback import fallback_key
from pipeline.facts import replace
from paths import REPO

SAMPLE = REPO / "examples" / "sample_world"
pytestmark = pytest.mark.skipif(shutil.which("spirv-cross") is None,
                                reason="spirv-cross (Debian package) is not installed; it reflects the blobs")


@pytest.fixture(scope="module")
def cooked(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("contract")
    result = api.cook(api.open_world(SAMPLE), cache=tmp / "cache", out=tmp / "out", jobs=2)
    assert result.ok and not result.warnings, (result.errors, result.warnings)
    return tmp / "out"


def _manifests(out: Path) -> list[dict]:
    """Each chunk of ``out`` as the expanded document (keys by text, pipeline states by id, reflection
    from the library) the runtime contract describes."""
    docs = []
    for path in sorted(out.rglob("*.json")):
        if path.name.endswith(".level.json"):
            continue
        manifest, _ = load_chunk(out, mf.load_chunk_manifest(path).chunk)
        docs.append({**expanded(manifest), "reflection": dict(manifest.reflection)})
    return docs


def _chunk(out: Path, chunk: str) -> dict:
    [doc] = [d for d in _manifests(out) if d["chunk"] == chunk]
    return doc


def test_every_draw_maps_to_its_key_per_pass(cooked: Path) -> None:
    found = api.keys(api.open_world(SAMPLE), cache=cooked.parent / "cache")
    expected = {}
    for key, info in found.required.keys.items():
        if {"SHADOWS", "QUALITY"} & dict(key.features).keys():
            continue  # a runtime axis off its default: in the pass's axes table, not its own key
        for src in info.draws:
            draw = tuple(getattr(src, f) for f in DRAW_FIELDS)
            expected.setdefault(draw, {})[f"{key.shader}/{key.pass_name}"] = key.text
    got = {}
    for doc in _manifests(cooked):
        for record in doc["draws"]:
            got[tuple(record[f] for f in DRAW_FIELDS)] = {p: u["key"] for p, u in record["passes"].items()}
    assert got == expected and len(got) == len(found.scan.draws)


def test_pipeline_states_are_deduplicated_and_complete(cooked: Path) -> None:
    for doc in _manifests(cooked):
        for record in doc["draws"]:
            for label, use in record["passes"].items():
                state = doc["pipelines"][use["pipeline"]]
                assert state["key"] == use["key"] and use["key"] in doc["keys"]
                if not label.startswith("pbr/"):  # generated families declare no fallback
                    assert "fallback" not in use and label not in doc["fallbacks"]
                    continue
                assert doc["pipelines"][use["fallback"]]["key"] == doc["fallbacks"][label]
                # same render state and specialization values for the draw's own and its fallback state
                fallback = doc["pipelines"][use["fallback"]]
                assert fallback["render_state"] == state["render_state"]
        for pid, state in doc["pipelines"].items():
            assert pid == stable_hash(state)
            assert state["render_state"] in doc["keys"][state["key"]]["render_states"]
            for name, spec in state["specialization"].items():
                assert spec["value"] in doc["keys"][state["key"]]["specialization"][name]["values"]
            assert state["vertex_layout"][0] == {"binding": 0, "format": "R32G32B32_SFLOAT", "location": 0,
                                                 "rate": "vertex", "stride": 12}


def test_level_manifest_unites_pipeline_states(cooked: Path) -> None:
    level = mf.load_level_manifest(cooked / "forest.level.json")
    chunks = [d for d in _manifests(cooked) if d["level"] == "forest"]
    union = {pid: s for d in chunks for pid, s in d["pipelines"].items()}
    assert level.pipelines == union
    assert len(union) < sum(len(d["pipelines"]) for d in chunks)  # shared states are listed once


def test_reflection_of_every_stage_blob(cooked: Path) -> None:
    doc = _chunk(cooked, "town/square")
    assert set(doc["reflection"]) == {h for e in doc["keys"].values() for h in e["stages"].values()}
    for key, entry in doc["keys"].items():
        vertex, fragment = (doc["reflection"][entry["stages"][s]] for s in ("vertex", "fragment"))
        assert vertex["stage"] == "vertex" and fragment["stage"] == "fragment"
        assert vertex["inputs"][0]["name"] == "inPosition" and vertex["inputs"][0]["format"] == "R32G32B32_SFLOAT"
        bindings = {(d["set"], d["binding"]): d for d in vertex["descriptors"] + fragment["descriptors"]}
        assert bindings[(0, 0)]["name"] == "FrameBlock" and bindings[(0, 0)]["block_size"] == 272
        if entry["features"].get("SKINNING"):
            assert bindings[(2, 1)] == {"set": 2, "binding": 1, "kind": "storage_buffer", "name": "JointMatrices",
                                        "count": 1, "block_size": 0}
            assert {i["location"]: i["format"] for i in vertex["inputs"]}[6] == "R32G32B32A32_UINT"
        if entry["pass"] == "forward":
            assert {c["id"]: c["name"] for c in fragment["specialization_constants"]} == \
                {0: "HAS_DOUBLE_SIDED", 1: "HAS_SPECULAR"}
            assert bindings[(1, 1)]["type"] == "sampler2D" and bindings[(0, 2)]["type"] == "samplerCube"


def test_reflection_shape_of_arrays_and_push_constants() -> None:
    raw = {"entryPoints": [{"name": "main", "mode": "frag"}],
           "textures": [{"type": "sampler2D", "name": "maps", "set": 1, "binding": 3, "array": [4]}],
           "push_constants": [{"name": "pc", "type": "_9", "push_constant": True}],
           "types": {"_9": {"members": [{"name": "a", "type": "vec4", "offset": 0},
                                        {"name": "b", "type": "vec4", "offset": 16}]}}}
    doc = normalize(raw)
    assert doc["descriptors"] == [{"set": 1, "binding": 3, "kind": "combined_image_sampler", "name": "maps",
                                   "count": 4, "type": "sampler2D"}]
    assert doc["push_constants"] == [{"name": "pc", "size": 32}]  # b ends at 16 + 16


def test_fallback_keys_are_cooked_in_every_chunk(cooked: Path) -> None:
    world = api.open_world(SAMPLE)
    pbr = world.families["pbr"]
    expected = {f"pbr/{p}": fallback_key(pbr, p).text for p in ("depth", "forward", "shadow")}
    assert "ALPHA_MODE=MASK" in expected["pbr/forward"]
    for doc in _manifests(cooked):
        if not any(k.startswith("pbr/") for k in doc["keys"]):
            assert doc["fallbacks"] == {}, "a chunk without pbr draws (generated families only) needs no pbr fallback"
            continue
        assert doc["fallbacks"] == expected
        assert all(doc["keys"][k]["stages"] for k in expected.values())


def test_fallback_naming_a_missing_feature_is_a_located_error(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    text = (REPO / "rules" / "pbr.yaml").read_text()
    (rules / "pbr.yaml").write_text(text.replace("fallback: {ALPHA_MODE: MASK}\n  forward:",
                                                 "fallback: {NORMAL_MAP: true}\n  forward:"))
    pbr = api.open_world(SAMPLE, rules=rules).families["pbr"]
    with pytest.raises(RuleError) as exc:
        fallback_key(pbr, "depth")
    assert "/passes/depth/fallback" in str(exc.value) and "NORMAL_MAP" in str(exc.value)


def test_pipeline_state_id_changes_with_each_part() -> None:
    layout = [{"location": 0, "binding": 0, "format": "R32G32B32_SFLOAT", "stride": 12, "rate": "vertex"}]
    base = pipeline_state("k", layout, {"cull": "back"}, {"DOUBLE_SIDED": (0, False)})[0]
    assert base != pipeline_state("k2", layout, {"cull": "back"}, {"DOUBLE_SIDED": (0, False)})[0]
    assert base != pipeline_state("k", [], {"cull": "back"}, {"DOUBLE_SIDED": (0, False)})[0]
    assert base != pipeline_state("k", layout, {"cull": "none"}, {"DOUBLE_SIDED": (0, False)})[0]
    assert base != pipeline_state("k", layout, {"cull": "back"}, {"DOUBLE_SIDED": (0, True)})[0]


def test_reflect_a_real_blob(cooked: Path) -> None:
    from pipeline.outputs.pak import PakReader

    manifest, library = load_chunk(cooked, "forest/c00")
    digest = next(iter(manifest.reflection))
    assert reflect(library.get(digest)) == manifest.reflection[digest] == library.reflection(digest)
    assert PakReader(mf.library_path(cooked)).reflection(digest) == manifest.reflection[digest]


def test_a_cook_reflects_its_new_blobs_before_the_outputs_and_each_once(tmp_path, monkeypatch) -> None:
    """prefetch reflects every new Vulkan blob (in parallel); writing the outputs then reflects nothing."""
    import pipeline.outputs.write_chunk as run
    from pipeline.compilers.reflection_records import REFLECTION
    from pipeline.cache.store import Store
    from pipeline.outputs import reflection

    calls: list[int] = []
    real, cached = reflection.reflect, run.reflect_cached
    monkeypatch.setattr(reflection, "reflect", lambda blob: calls.append(len(blob)) or real(blob))
    monkeypatch.setattr(run, "reflect_cached", lambda store, digest, load_blob: cached(
        store, digest, lambda d: pytest.fail(f"blob {d} was not reflected before the outputs")))
    result = api.cook(api.open_world(SAMPLE), cache=tmp_path / "cache", out=tmp_path / "out", jobs=2)
    assert result.ok, result.errors
    vulkan = {r.blob for key, r in result.run.results.items()
              if r.blob and result.plan.jobs[key].request.target.startswith("vulkan")}
    assert len(calls) == len(vulkan) > 0  # each new blob once
    with Store(tmp_path / "cache") as store:
        assert all(isinstance(store.get(REFLECTION, f"{d}:{reflection.tool_version()}"), dict) for d in vulkan)
        assert reflection.prefetch(store, sorted(vulkan), store.get_blob, 2) == 0  # nothing left to reflect


def test_a_pipeline_state_is_made_once_per_key_render_state_and_specialization(monkeypatch) -> None:
    """Draws that share a key, render state and specialization values share one pipeline state,
    made once; each different one gets its own."""
    from types import SimpleNamespace

    from pipeline.keys.key import PermutationKey
    from pipeline.outputs import contract
    from recorders import draw_sources

    made = []
    real = contract.pipeline_state
    monkeypatch.setattr(contract, "pipeline_state", lambda *args: made.append(args[0]) or real(*args))
    family = SimpleNamespace(instance_inputs=(), features={"HAS_X": SimpleNamespace(constant_id=3)})
    vertex = {"inputs": [{"location": 0, "name": "p", "type": "vec3", "format": "R32G32B32_SFLOAT", "size": 12}]}
    builder = contract.ContractBuilder(lambda digest: vertex if digest == "v" else {"inputs": []}, {"pbr": family})
    key = PermutationKey("pbr", "forward", ())
    opaque, blend = {"blend": False}, {"blend": True}
    draws = draw_sources(6)
    bindings = [(d, opaque if d.node < 4 else blend, {"HAS_X": d.node == 5}) for d in draws]
    builder.add_key(key, {"vertex": "v", "fragment": "f"}, bindings)
    assert len(made) == 3 == len(builder.pipelines)  # opaque; blend without X; blend with X
    ids = [builder.draws[tuple(contract.draw_id(d))]["passes"]["pbr/forward"]["pipeline"] for d in draws]
    assert len(set(ids[:4])) == 1 and len(set(ids)) == 3
    assert ids == [real(key.text, builder._layout("pbr", {"vertex": "v"}), state, builder._spec("pbr", spec))[0]
                   for _, state, spec in bindings]  # the same ids as made draw by draw


def _reference_draws(keys, fallbacks, reflection, families) -> tuple[list[dict], dict]:
    """The runtime contract's draws and pipeline states made the plain way, draw by draw (a record per
    draw, its pass's dict changed in place by each key and fallback key in turn)."""
    from pipeline.digest import canonical_bytes
    from pipeline.keys.required import AXES, draw_id
    from pipeline.outputs.reflection import vertex_layout
    from pipeline.rules.axes import axes_of

    records, pipelines = {}, {}

    def state_of(key, stages, state, spec):
        layout = vertex_layout(reflection(stages["vertex"]), tuple(families[key.shader].instance_inputs))
        features = families[key.shader].features
        return pipeline_state(key.text, layout, state,
                              {n: (features[n].constant_id, v) for n, v in spec.items() if n != AXES})

    for key, stages, bindings in keys:
        label = f"{key.shader}/{key.pass_name}"
        for draw, state, spec in bindings:
            record = records.setdefault(tuple(draw_id(draw)), dict(zip(DRAW_FIELDS, draw_id(draw))) | {"passes": {}})
            combinations = spec.get(AXES) if spec else None
            use = record["passes"].setdefault(label, {}) if combinations else {"key": key.text}
            if combinations is None:
                record["passes"][label] = use
            pid = None
            if len(stages) >= 2:
                pid, doc = state_of(key, stages, state, spec)
                pipelines[pid] = doc
                if combinations is None:
                    use["pipeline"] = pid
            for values in combinations or ():
                use.setdefault("axes", []).append({"values": dict(values), "key": key.text}
                                                  | ({"pipeline": pid} if pid else {}))
                allowed = axes_of(families[key.shader])
                if all(allowed[n][0] == v and type(allowed[n][0]) is type(v) for n, v in values.items()):
                    use["key"] = key.text
                    if pid is not None:
                        use["pipeline"] = pid
    for key, stages, bindings in fallbacks:
        label = f"{key.shader}/{key.pass_name}"
        for draw, state, spec in bindings:
            record = records.get(tuple(draw_id(draw)))
            if record is not None and label in record["passes"]:
                pid, doc = state_of(key, stages, state, spec)
                pipelines[pid] = doc
                record["passes"][label]["fallback"] = pid
    for record in records.values():
        for use in record["passes"].values():
            use.get("axes", []).sort(key=lambda row: canonical_bytes(row["values"]))
    return sorted(records.values(), key=lambda d: canonical_bytes([d[f] for f in DRAW_FIELDS])), pipelines


def test_the_contract_made_per_use_is_the_one_made_draw_by_draw() -> None:
    """Draws sharing render state and specialization objects, draws with equal but distinct ones, a value
    that is not hashable, one draw named by two equal objects, axis rows from two keys of one pass, a key
    without a pipeline state, a fallback, and a second chunk reusing the first's pipeline states: the
    contract made once per use (and per cook) equals the one made draw by draw."""
    from types import SimpleNamespace

    from pipeline.keys.key import PermutationKey
    from pipeline.keys.required import AXES
    from pipeline.outputs import contract
    from recorders import draw_sources

    vertex = {"inputs": [{"location": 0, "name": "p", "type": "vec3", "format": "R32G32B32_SFLOAT", "size": 12}]}
    family = SimpleNamespace(instance_inputs=(), compiled=SimpleNamespace(axes={"Q": ("LOW", "HIGH")}),
                             features={"X": SimpleNamespace(constant_id=3), "L": SimpleNamespace(constant_id=4)})
    families = {"pbr": family}
    reflection = lambda digest: vertex if digest == "v" else {"inputs": []}  # noqa: E731
    stages, broken = {"vertex": "v", "fragment": "f"}, {"vertex": "v"}
    low, high = PermutationKey("pbr", "forward", ()), PermutationKey("pbr", "forward", (("Q", "HIGH"),))
    depth, fallback = PermutationKey("pbr", "depth", ()), PermutationKey("pbr", "forward", (("SAFE", True),))
    opaque, blend = {"blend": False}, {"blend": True}

    def chunk(name: str) -> tuple[list, list]:
        draws = draw_sources(8, name)
        twin = replace(draws[0])  # the same draw, another object
        shared_spec = {"X": False, AXES: [{"Q": "LOW"}]}
        bindings_low = [(d, opaque if d.node < 5 else blend, shared_spec) for d in draws[:6]]
        bindings_low += [(draws[6], dict(opaque), {"X": False, AXES: [{"Q": "LOW"}]}),
                         (draws[7], opaque, {"X": True, "L": [1, 2], AXES: [{"Q": "LOW"}]})]  # not hashable
        bindings_high = [(d, opaque, {"X": d.node % 2 == 0, AXES: [{"Q": "HIGH"}]}) for d in draws[2:7]]
        bindings_depth = [(d, blend, {"X": d.node % 2 == 0}) for d in [*draws[:4], twin]]
        keys = [(depth, broken, bindings_depth), (low, stages, bindings_low), (high, stages, bindings_high)]
        return keys, [(fallback, stages, bindings_low + bindings_high)]

    shared: dict = {}
    for name in ("forest/c00", "forest/c01"):
        keys, fallbacks = chunk(name)
        builder = contract.ContractBuilder(reflection, families, shared)
        for key, key_stages, bindings in keys:
            builder.add_key(key, key_stages, bindings)
        by_pass = {"pbr/forward": fallbacks[0][2]}
        builder.add_fallback(fallback, stages, by_pass)
        draws, pipelines = _reference_draws(keys, fallbacks, reflection, families)
        assert builder.draw_list() == draws
        assert builder.pipelines == pipelines
        assert {n: [sorted(p) for p in d["passes"].values()] for n, d in enumerate(draws)}[7] == \
            [["axes", "fallback", "key", "pipeline"]]


def test_add_fallbacks_adds_a_chunk_s_keys_beside_its_uses_as_read(monkeypatch) -> None:
    fallback, used = PermutationKey("s", "p", (("A", "0"),)), PermutationKey("s", "p", (("A", "1"),))
    other = PermutationKey("t", "p", ())
    monkeypatch.setattr(contract, "fallback_keys", lambda rs: {"p": fallback} if rs == "S" else {})
    gains, keeps = {used: KeyUses([], [{"cull": "back"}], {"B": [1]})}, {other: KeyUses([], [], {})}
    found = SimpleNamespace(keys={used: None, other: None}, by_chunk={"c1": gains, "c2": keeps})
    chosen = contract.add_fallbacks(found, {"s": "S", "t": "T"})
    assert found.by_chunk["c2"] is keeps  # nothing to add: the chunk's uses as read, not a copy
    assert found.by_chunk["c1"] is not gains and list(gains) == [used]  # the uses read are left as they were
    assert found.by_chunk["c1"][used] is gains[used]  # and not copied
    assert list(found.by_chunk["c1"]) == [used, fallback]
    assert found.by_chunk["c1"][fallback].render_states == [{"cull": "back"}]
    assert found.by_chunk["c1"][fallback].specialization == {"B": [1]}
    assert chosen == {"c1": {"s/p": fallback.text}} and fallback in found.keys
