"""The reflections a cook keeps (outputs/reflection.py): stored by blob and tool revision, prefetched, vertex layouts
(``blobs``: tests/conftest.py)."""

from __future__ import annotations

import pytest

from pipeline.cache.store import Store
from pipeline.digest import bytes_hash
from pipeline.outputs import reflection
from pipeline.outputs.reflection import ReflectionError, prefetch, reflect, reflect_cached, vertex_layout
from pipeline.compilers.reflection_records import REFLECTION
from reflect_helpers import NEEDS_SPIRV_CROSS

pytestmark = NEEDS_SPIRV_CROSS


def test_vertex_layout_gives_one_binding_per_input_and_instance_rate_where_listed(blobs) -> None:
    doc = reflect(blobs["t.vert"])
    layout = vertex_layout(doc, instance_inputs=(3, 4))
    assert [(b["location"], b["binding"], b["stride"], b["rate"]) for b in layout] == [
        (0, 0, 12, "vertex"), (1, 1, 8, "vertex"), (2, 2, 16, "vertex"), (3, 3, 4, "instance"), (4, 4, 8, "instance")]
    assert [b["format"] for b in layout] == [i["format"] for i in doc["inputs"]]
    no_format = {**doc, "inputs": [{"location": 0, "name": "inModel", "type": "mat4"}]}
    with pytest.raises(ReflectionError, match="vertex input type mat4 has no vertex format") as info:
        vertex_layout(no_format)
    assert info.value.diagnostics[0].location.file == "inModel"


class Loads:
    """``load_blob`` from a dict, counting what was asked."""

    def __init__(self, blobs: dict[str, bytes | None]):
        self.blobs, self.asked = blobs, []

    def __call__(self, digest: str) -> bytes | None:
        self.asked.append(digest)
        return self.blobs.get(digest)


def test_reflect_cached_reflects_a_blob_once_and_stores_it_by_digest_and_tool_version(blobs, tmp_path) -> None:
    digest = bytes_hash(blobs["t.frag"])
    load = Loads({digest: blobs["t.frag"]})
    with Store(tmp_path / "cache") as store:
        first = reflect_cached(store, digest, load)
        assert first == reflect(blobs["t.frag"]) and load.asked == [digest]
        assert store.get(REFLECTION, f"{digest}:{reflection.tool_version()}") == first
        assert reflect_cached(store, digest, load) == first and load.asked == [digest]  # the stored document
        with pytest.raises(ReflectionError, match="blob missing from the cache") as info:
            reflect_cached(store, "f" * 64, load)
        assert info.value.diagnostics[0].location.file == "f" * 64


def test_prefetch_reflects_only_what_is_not_stored_and_skips_what_it_cannot(blobs, tmp_path, monkeypatch) -> None:
    vert, frag = bytes_hash(blobs["t.vert"]), bytes_hash(blobs["t.frag"])
    bad, lost = bytes_hash(b"garbage"), "0" * 64
    load = Loads({vert: blobs["t.vert"], frag: blobs["t.frag"], bad: b"garbage", lost: None})
    version = reflection.tool_version()
    with Store(tmp_path / "cache") as store:
        store.set(REFLECTION, f"{frag}:{version}", reflect(blobs["t.frag"]))
        assert prefetch(store, [vert, frag, bad, lost, vert], load, workers=2) == 1
        assert sorted(load.asked) == sorted([vert, bad, lost])  # the stored one is not even loaded
        assert store.get(REFLECTION, f"{vert}:{version}") == reflect(blobs["t.vert"])
        assert store.get(REFLECTION, f"{bad}:{version}") is None  # left to reflect_cached to report
        load.asked.clear()
        monkeypatch.setattr(reflection, "_SEEN", {})
        monkeypatch.setattr(store, "get", lambda *a, **k: pytest.fail("a reflection read alone"))
        assert prefetch(store, [vert, frag], load, workers=2) == 0 and load.asked == []  # both read together
        assert reflect_cached(store, frag, load) == reflect(blobs["t.frag"])  # kept: not read again


def test_the_cache_key_holds_the_tool_revision(blobs, tmp_path, monkeypatch) -> None:
    """A document stored by another revision of the tool is not used: the blob is reflected again."""
    digest = bytes_hash(blobs["t.vert"])
    with Store(tmp_path / "cache") as store:
        store.set(REFLECTION, f"{digest}:{reflection.tool_version()}", {"stage": "stale"})
        monkeypatch.setattr(reflection, "tool_version", lambda: "another revision")
        assert reflect_cached(store, digest, Loads({digest: blobs["t.vert"]}))["stage"] == "vertex"
        assert store.get(REFLECTION, f"{digest}:another revision")["stage"] == "vertex"
