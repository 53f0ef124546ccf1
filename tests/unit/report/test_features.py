"""Which static features, files and materials cost the most keys."""

from __future__ import annotations

from types import SimpleNamespace

from pipeline.keys.key import PermutationKey
from pipeline.keys.required import KeyUses, RequiredKeys
from pipeline.report.features import contributor_rows, drop_feature, feature_rows, key_rows
from pipeline.facts import DrawSource


def source(file: str, material: int | None = 0, variant: str | None = None, node: int = 0) -> DrawSource:
    chunk = file.rsplit("/", 1)[0]
    return DrawSource(file=file, chunk=chunk, level=chunk.split("/")[0], node=node, mesh=0, primitive=0,
                      material=material, variant=variant)


def key(a: int, b: str, pass_name: str = "forward") -> PermutationKey:
    return PermutationKey("pbr", pass_name, (("A", a), ("B", b)))


def family(**modes: str):
    return SimpleNamespace(compiled=SimpleNamespace(modes=modes))


def test_drop_feature_keeps_the_other_features_in_order() -> None:
    k = PermutationKey("pbr", "forward", (("A", 1), ("B", "x"), ("C", True)))
    assert drop_feature(k, "B") == PermutationKey("pbr", "forward", (("A", 1), ("C", True)))
    assert drop_feature(k, "MISSING") == k


def test_feature_rows_count_what_each_static_feature_multiplies() -> None:
    keys = [key(0, "x"), key(1, "x"), key(2, "x"), key(0, "y")]
    required = RequiredKeys({k: KeyUses() for k in keys})
    rows = feature_rows({"pbr": family(A="static", B="static", C="dynamic")}, required)
    # A dynamic: {x, y} remain (2 keys, 2 saved); B dynamic: A in {0, 1, 2} remain (3 keys, 1 saved)
    assert [(r.feature, r.values_used, r.required, r.if_dynamic, r.saved) for r in rows] == \
        [("A", 3, 4, 2, 2), ("B", 2, 4, 3, 1)]
    assert rows[0].name == "pbr.A" and rows[0].to_json()["saved"] == 2


def test_feature_rows_of_a_family_without_keys() -> None:
    rows = feature_rows({"pbr": family(A="static")}, RequiredKeys())
    assert [(r.values_used, r.required, r.if_dynamic) for r in rows] == [(0, 0, 0)]


def test_contributors_by_file_and_by_material() -> None:
    shared, only_a, only_b = key(0, "x"), key(1, "x"), key(2, "x")
    required = RequiredKeys({
        shared: KeyUses(draws=[source("c/a.gltf"), source("c/b.gltf", material=None)]),
        only_a: KeyUses(draws=[source("c/a.gltf", material=1), source("c/a.gltf", material=1, node=2)]),
        only_b: KeyUses(draws=[source("c/b.gltf", material=0, variant="night")]),
    })
    files = contributor_rows(required, by_material=False)
    assert [(r.file, r.material, r.keys, r.only_here, r.draws) for r in files] == \
        [("c/a.gltf", None, 2, 1, 3), ("c/b.gltf", None, 2, 1, 2)]
    materials = contributor_rows(required, by_material=True)
    assert [(r.file, r.material, r.keys, r.only_here, r.draws) for r in materials] == [
        ("c/a.gltf", "material 1", 1, 1, 2), ("c/b.gltf", "material 0 [night]", 1, 1, 1),
        ("c/a.gltf", "material 0", 1, 0, 1), ("c/b.gltf", "default", 1, 0, 1)]


def test_key_rows_name_the_chunks_and_files_of_each_key() -> None:
    k = key(0, "x")
    required = RequiredKeys({k: KeyUses(draws=[source("z/b.gltf"), source("a/c.gltf"), source("z/b.gltf", node=3)])})
    (row,) = key_rows(required)
    assert (row.key, row.hash, row.shader, row.pass_name, row.draws) == (k.text, k.hash, "pbr", "forward", 3)
    assert row.chunks == ("a", "z") and row.files == ("a/c.gltf", "z/b.gltf")
