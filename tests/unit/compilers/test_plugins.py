"""Plug-in references: resolved from a file, a module or an entry point; version and code hash; loaded once."""

from __future__ import annotations

import importlib.metadata
import sys

import pytest

from pipeline.compilers import plugins
from pipeline.compilers.plugins import PluginError, Plugins, PluginRef, code_of, resolve
from paths import DATA

UNROLL = DATA / "plugins" / "unroll.py"


def test_a_file_reference_resolves_relative_to_its_base_with_version_and_code(tmp_path) -> None:
    ref = resolve("transform", "plugins/unroll.py:UnrollLoops", DATA)
    assert (ref.kind, ref.name, ref.version) == ("transform", "unroll", "1.0")
    assert ref.spec == f"{UNROLL.resolve()}:UnrollLoops"
    assert ref.identity == ("unroll", "1.0", ref.code) and len(ref.code) == 64
    assert ref.shown == f"unroll 1.0 ({ref.code[:12]})"


def test_the_code_hash_follows_the_plugin_s_source(tmp_path) -> None:
    copy = tmp_path / "unroll.py"
    copy.write_text(UNROLL.read_text())
    before = code_of(f"{copy}:UnrollLoops")
    assert before == code_of(f"{copy}:UnrollLoops")
    copy.write_text(UNROLL.read_text() + "# edited\n")
    assert code_of(f"{copy}:UnrollLoops") != before


def test_a_module_reference_hashes_its_top_level_package() -> None:
    ref = resolve("generator", "pipeline.plan.generate.chain:ChainGenerator", DATA)
    assert ref.name == "pipeline.plan.generate.chain:ChainGenerator" and ref.version == ""
    assert ref.code == code_of("pipeline.plan.generate.link:link_chain")  # the whole `pipeline` package


@pytest.mark.parametrize("reference, message", [
    ("missing.py:X", "plug-in file missing.py does not exist"),
    ("plugins/unroll.py:Nope", "has no attribute 'Nope'"),
    ("no_such_module_here:X", "does not load: ModuleNotFoundError"),
    ("no-entry-point", "no transform plug-in named 'no-entry-point' (entry points of "
                       "permutation_pipeline.transforms: none installed"),
    ("", "must be a non-empty string"),
])
def test_a_reference_that_does_not_resolve_says_why(reference, message) -> None:
    with pytest.raises(PluginError) as raised:
        resolve("transform", reference, DATA)
    assert message in str(raised.value)


def test_an_entry_point_name_resolves_to_its_value(monkeypatch) -> None:
    point = importlib.metadata.EntryPoint("unroll", "pipeline.plan.generate.chain:ChainGenerator",
                                          plugins.GROUPS["generator"])
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda: importlib.metadata.EntryPoints([point]))
    assert plugins.entry_point_names("generator") == {"unroll": "pipeline.plan.generate.chain:ChainGenerator"}
    ref = resolve("generator", "unroll", DATA)
    assert ref.spec == "pipeline.plan.generate.chain:ChainGenerator" and ref.name == "unroll"


def test_a_plugin_whose_version_is_no_string_is_refused(tmp_path) -> None:
    (tmp_path / "bad.py").write_text("class T:\n    version = 2\n    def transform(self, *a):\n        return ''\n")
    with pytest.raises(PluginError, match="its version must be a string, not int"):
        resolve("transform", "bad.py:T", tmp_path)


def test_a_file_plugin_loads_once_per_process_under_a_stable_module_name(tmp_path) -> None:
    spec = f"{UNROLL.resolve()}:UnrollLoops"
    first = plugins.load(spec)
    assert plugins.load(spec) is first and isinstance(first, plugins.SourceTransform)
    assert type(first).__module__ in sys.modules


def test_plugins_chain_a_family_s_transforms_after_the_world_s() -> None:
    a, b, c = (PluginRef("transform", n, f"m:{n}", "1", n * 8) for n in "abc")
    backend = PluginRef("backend", "dxc", "m:D", "1", "d" * 8)
    found = Plugins((a,), (), (("d3d12", backend),), (("lit", (b, c)),))
    assert found.chain("lit") == (a, b, c) and found.chain("plain") == (a,)
    assert found.backend("d3d12") is backend and found.backend("vulkan1.2") is None and found.generator("x") is None


def test_a_warm_process_runs_the_edited_code_of_a_plugin_file(tmp_path) -> None:
    file = tmp_path / "shout.py"
    file.write_text("class Shout:\n    version = '1'\n    def transform(self, f, k, s, text, d):\n        return text.upper()\n")
    first = resolve("transform", "shout.py:Shout", tmp_path)
    assert plugins.load(first.spec, first.code).transform("f", "k", "s", "abc", {}) == "ABC"
    file.write_text(file.read_text().replace("text.upper()", "text + '!'"))
    edited = resolve("transform", "shout.py:Shout", tmp_path)
    assert edited.code != first.code
    assert plugins.load(edited.spec, edited.code).transform("f", "k", "s", "abc", {}) == "abc!"


def test_source_paths_name_a_file_or_the_package_folders() -> None:
    assert plugins.source_paths(f"{UNROLL}:UnrollLoops") == [UNROLL]
    (folder,) = plugins.source_paths("pipeline.plan.generate.chain:ChainGenerator")
    assert folder.name == "pipeline" and (folder / "api.py").is_file()
    ref = PluginRef("transform", "u", f"{UNROLL}:UnrollLoops", "1", "c")
    assert Plugins((ref,), (), (("d3d12", ref),)).refs() == [ref, ref]
