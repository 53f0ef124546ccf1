"""plugin_loader: the one loader of every plug-in kind, fact providers included."""

from __future__ import annotations

import importlib.metadata

import pytest

from pipeline import plugin_loader
from pipeline.plugin_loader import GROUPS, PluginError, load, resolve
from paths import DATA


def test_every_kind_has_its_entry_point_group() -> None:
    assert GROUPS == {"transform": "permutation_pipeline.transforms", "generator": "permutation_pipeline.generators",
                      "backend": "permutation_pipeline.backends", "facts": "permutation_pipeline.facts"}


def test_a_fact_provider_resolves_from_a_file_and_loads_as_an_instance() -> None:
    ref = resolve("facts", "plugins/sidecar_facts.py:Wetness", DATA)
    assert (ref.kind, ref.name, ref.version) == ("facts", "wetness", "1.0")  # its declared name
    provider = load(ref.spec, ref.code)
    assert type(provider).__name__ == "Wetness" and provider is load(ref.spec, ref.code)  # made once


def test_an_installed_fact_provider_resolves_by_its_entry_point_name(monkeypatch) -> None:
    point = importlib.metadata.EntryPoint("wet", f"{DATA / 'plugins' / 'sidecar_facts.py'}:Wetness", GROUPS["facts"])
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda: importlib.metadata.EntryPoints([point]))
    assert plugin_loader.entry_point_names("facts") == {"wet": point.value}
    assert resolve("facts", "wet", DATA).spec.endswith("sidecar_facts.py:Wetness")
    with pytest.raises(PluginError, match="no facts plug-in named 'dry' \\(entry points of permutation_pipeline.facts: wet"):
        resolve("facts", "dry", DATA)


def test_installed_entry_points_are_read_once_per_process_for_every_group(monkeypatch) -> None:
    calls = []
    point = importlib.metadata.EntryPoint("wet", "somewhere:Wetness", GROUPS["facts"])
    other = importlib.metadata.EntryPoint("wet", "elsewhere:Other", "some.other.group")

    def find():
        calls.append(1)
        return importlib.metadata.EntryPoints([point, other])

    monkeypatch.setattr(importlib.metadata, "entry_points", find)
    for _ in range(3):
        assert plugin_loader.entry_point_names("facts") == {"wet": "somewhere:Wetness"}
        assert plugin_loader.entry_point_names("backend") == {}
    assert len(calls) == 1  # one pass over the installed packages answers every group
