"""report.budget: ``--budget`` and each level's configured budget against the required keys, with what pushed a
scope over."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from paths import SAMPLE_WORLD

from pipeline.config import CONFIG_NAME
from pipeline.facts import DrawSource
from pipeline.keys.key import PermutationKey
from pipeline.keys.required import KeysResult, KeyUses, RequiredKeys
from pipeline.report.budget import TOP_CULPRITS, budget_checks
from pipeline.report.rows import AreaRow, FeatureRow
from pipeline.scan.scanner import ScanResult
from pipeline.world import World, open_world


@dataclass
class Scope:
    """What a budget reads of a report: its scope, its levels (with budgets) and its features."""

    scope: dict = field(default_factory=lambda: {"level": None, "chunk": None})
    levels: list[AreaRow] = field(default_factory=list)
    features: list[FeatureRow] = field(default_factory=list)


@pytest.fixture(scope="module")
def world() -> World:
    return open_world(SAMPLE_WORLD)


def key(n: int) -> PermutationKey:
    return PermutationKey("t", "main", (("N", n),))


def found(uses: dict[str, dict[str, list[int]]]) -> KeysResult:
    """Keys by chunk, from ``{chunk: {file: [key numbers its draws need]}}``."""
    by_chunk = {}
    for chunk, files in uses.items():
        required = RequiredKeys()
        for file, numbers in files.items():
            for n in numbers:  # a draw per key, each with its own material: files count, not materials
                source = DrawSource(file=file, chunk=chunk, level=chunk.split("/")[0], node=n, mesh=0, primitive=0,
                                    material=n)
                required.keys.setdefault(key(n), KeyUses()).draws.append(source)
        by_chunk[chunk] = required
    scan = ScanResult(SAMPLE_WORLD, [], sorted(uses), [], [])
    return KeysResult(scan, RequiredKeys.union(by_chunk.values()), by_chunk)


def level(name: str, budget: int | None) -> AreaRow:
    return AreaRow(name, name, 0, 0, 0, 0, budget)


def feature(name: str, saved: int) -> FeatureRow:
    return FeatureRow("t", name, 2, 10, 10 - saved)


# a: keys 0-2 alone; b: 3-4 alone; c: key 5, which a needs too
WORLD = {"forest/c1": {"forest/c1/a.gltf": [0, 1, 2, 5], "forest/c1/c.gltf": [5]},
         "town/c1": {"town/c1/b.gltf": [3, 4]}}


def test_nothing_is_checked_without_a_budget(world) -> None:
    assert budget_checks(world, Scope(levels=[level("forest", None)]), found(WORLD), None) == []


@pytest.mark.parametrize("scope, kind, name", [
    ({"level": None, "chunk": None}, "world", "(all)"),
    ({"level": "forest", "chunk": None}, "level", "forest"),
    ({"level": "forest", "chunk": "forest/c1"}, "chunk", "forest/c1"),
])
def test_the_budget_option_is_checked_against_the_selection(world, scope, kind, name) -> None:
    keys = found(WORLD)
    total = len(keys.required.keys)
    (check,) = budget_checks(world, Scope(scope), keys, total)
    assert (check.scope, check.name, check.budget, check.required, check.origin) == (kind, name, total, total,
                                                                                      "--budget")
    assert not check.over and check.culprits == () and check.features == ()  # exactly at the budget: within


def test_a_level_budget_counts_the_keys_its_chunks_need_once(world) -> None:
    keys = found({"forest/c1": {"forest/c1/a.gltf": [0, 1]}, "forest/c2": {"forest/c2/b.gltf": [1, 2]},
                  "town/c1": {"town/c1/c.gltf": [2, 3, 4]}})
    levels = [level("forest", 3), level("town", 2), level("other", None)]
    checks = budget_checks(world, Scope(levels=levels), keys, 10)
    assert [(c.scope, c.name, c.origin, c.required, c.over) for c in checks] == [
        ("world", "(all)", "--budget", 5, False),
        ("level", "forest", CONFIG_NAME, 3, False),  # keys 0, 1, 2: key 1 of both its chunks counted once
        ("level", "town", CONFIG_NAME, 3, True)]
    # within the town scope its one file alone needs all 3 keys (key 2 too, though a forest file needs it)
    assert checks[2].culprits == (("town/c1/c.gltf", 3),)


@pytest.mark.parametrize("budget, culprits", [
    (5, [("forest/c1/a.gltf", 3)]),                                # 1 over: the file that alone needs 3 covers it
    (2, [("forest/c1/a.gltf", 3), ("town/c1/b.gltf", 2)]),         # 4 over: the next file too
    (0, [("forest/c1/a.gltf", 3), ("town/c1/b.gltf", 2)]),         # c needs no key alone: never named
])
def test_over_budget_names_the_files_that_alone_need_the_excess(world, budget, culprits) -> None:
    (check,) = budget_checks(world, Scope(), found(WORLD), budget)
    assert check.over and check.required == 6
    assert list(check.culprits) == culprits


def test_at_most_the_top_files_are_named(world) -> None:
    files = {f"forest/c1/f{i}.gltf": [i] for i in range(TOP_CULPRITS + 2)}
    (check,) = budget_checks(world, Scope(), found({"forest/c1": files}), 0)
    assert list(check.culprits) == [(f"forest/c1/f{i}.gltf", 1) for i in range(TOP_CULPRITS)]


def test_over_budget_names_the_first_three_features_that_save_keys(world) -> None:
    features = [feature("A", 4), feature("B", 2), feature("C", 1), feature("D", 1)]
    (check,) = budget_checks(world, Scope(features=features), found(WORLD), 5)
    assert check.features == (("t.A", 4), ("t.B", 2), ("t.C", 1))
    (check,) = budget_checks(world, Scope(features=[feature("A", 3), feature("B", 0)]), found(WORLD), 5)
    assert check.features == (("t.A", 3),)  # a feature that saves nothing is no advice
    (within,) = budget_checks(world, Scope(features=features), found(WORLD), 6)
    assert within.features == () and within.message().startswith("world (all): 6 required keys")
