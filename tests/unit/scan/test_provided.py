"""scan.provided: fact providers over scanned draws; each sidecar read once; failures located and left out."""

from __future__ import annotations

import json
import os

import pytest

from provider_helpers import make_world, sidecar

from pipeline.fact_providers import provider_spec
from pipeline.facts import replace
from pipeline.plugin_loader import resolve
from pipeline.scan.provided import provide, providers_of, sidecar_stamps, with_provided_facts
from pipeline.scan.scanner import scan
from pipeline.world import open_world

COUNTING = '''
import json

class Counting:
    name = "wetness"
    version = "1"
    facts = {"level": "int"}
    sidecar = "{stem}.material.json"
    reads = []

    def read(self, gltf, sidecar):
        Counting.reads.append(gltf.name)
        return json.loads(sidecar) if sidecar else {}

    def provide(self, data, draw):
        if draw.node == 7:
            raise KeyError("node seven")
        return {"level": data.get("materials", {}).get(str(draw.material), {}).get("wetness", 0)}
'''


def scanned(tmp_path, **options):
    world = open_world(make_world(tmp_path, **options))
    return world, scan(world)


def test_each_draw_gets_its_file_s_sidecar_values_and_equal_answers_share_facts(tmp_path) -> None:
    world, found = scanned(tmp_path, sidecars={"a": sidecar(1), "b": sidecar(2, "soaked")})
    (world.root / "town" / "c" / "mesh.gltf").unlink()
    found = scan(world)
    twice = found.draws + [replace(d) for d in found.draws]
    [spec] = providers_of(world.rulesets)
    draws, problems = provide((spec,), world.root, twice)
    assert problems == []
    by_file = {d.source.file: d.facts.ext for d in draws}
    assert by_file == {"town/a/mesh.gltf": {"wetness": {"gloss": None, "level": 1, "surface": None}},
                       "town/b/mesh.gltf": {"wetness": {"gloss": None, "level": 2, "surface": "soaked"}}}
    assert len({id(d.facts) for d in draws}) == 2  # the copies share their file's new facts


def test_without_providers_the_scan_is_returned_as_it_is(tmp_path) -> None:
    world, found = scanned(tmp_path)
    assert with_provided_facts(found, []) is found
    provided = with_provided_facts(found, world.rulesets)
    assert provided is not found and [d.facts.ext["wetness"]["level"] for d in provided.draws] == [1, 2, 0]
    assert [d.facts.ext for d in found.draws] == [{}, {}, {}]  # the scan's own draws are left alone


def test_a_raising_provider_fails_its_draws_alone_with_one_error_per_file(tmp_path) -> None:
    world, found = scanned(tmp_path)
    (tmp_path / "counting.py").write_text(COUNTING)
    spec = provider_spec(resolve("facts", "counting.py:Counting", tmp_path))
    seven = [replace(d, source=replace(d.source, node=7)) for d in found.draws[:1]]
    draws, problems = provide((spec,), world.root, found.draws + seven * 3)
    assert [d.source.node for d in draws] == [1, 1, 1]
    line = next(i for i, text in enumerate(COUNTING.splitlines(), 1) if "raise KeyError" in text)
    assert len(problems) == 1 and str(problems[0]) == (
        "town/a/mesh.gltf: error: fact provider 'wetness' raised KeyError: 'node seven' on draw node 7 mesh 0 "
        f"primitive 0 ({(tmp_path / 'counting.py').resolve()}:{line}) (and 2 more draws of the file)")
    assert spec.plugin().reads == ["mesh.gltf"] * 3  # once per file


def test_sidecar_stamps_follow_the_sidecar_and_a_missing_one_is_its_path(tmp_path) -> None:
    world, _ = scanned(tmp_path)
    providers = providers_of(world.rulesets)
    assert sidecar_stamps(providers, world.root, "town/c/mesh.gltf") == [["town/c/mesh.material.json"]]
    [[path, *stamp]] = sidecar_stamps(providers, world.root, "town/a/mesh.gltf")
    assert path == "town/a/mesh.material.json" and len(stamp) == 4
    target = world.root / path
    target.write_text(json.dumps({"materials": {}}))
    os.utime(target, ns=(1, 1))
    assert sidecar_stamps(providers, world.root, "town/a/mesh.gltf") != [[path, *stamp]]


def test_a_sidecar_is_read_to_its_size_and_one_over_the_cap_is_refused(tmp_path, monkeypatch) -> None:
    from pipeline.scan import provided

    path = tmp_path / "a.sidecar"
    path.write_bytes(b"x" * 10)
    assert provided._sidecar_bytes(path) == b"x" * 10
    assert provided._sidecar_bytes(tmp_path / "missing") is None
    monkeypatch.setattr(provided, "MAX_SIDECAR_BYTES", 9)
    with pytest.raises(OSError, match="larger than 9 bytes"):
        provided._sidecar_bytes(path)
