"""Reflection records (compilers/reflection_records.py): the store's record kind for what SPIRV-Cross said of a blob."""

from __future__ import annotations

import warnings

from pipeline.cache.store import CacheWarning, RecordKind, Store
from pipeline.compilers.reflect import normalize
from pipeline.compilers.reflection_records import REFLECTION

DOC = normalize({"entryPoints": [{"name": "main", "mode": "frag"}],
                 "outputs": [{"type": "vec4", "name": "colour", "location": 0}],
                 "specialization_constants": [{"id": 2, "name": "FLIP", "type": "bool", "default_value": True}]})
KEY = "ab" * 32 + ":v2024.1"


def test_the_kind_is_named_reflection_at_version_two() -> None:
    assert (REFLECTION.namespace, REFLECTION.version) == ("reflection", 2)  # 1: push-constant sizes short


def test_a_document_stored_under_the_kind_reads_back_whole(tmp_path) -> None:
    with Store(tmp_path / "cache") as store:
        store.set(REFLECTION, KEY, DOC)
    with Store(tmp_path / "cache") as store:  # reopened: the record is on disk
        assert store.get(REFLECTION, KEY) == DOC
        assert store.keys(REFLECTION) == [KEY]


def test_a_record_of_another_layout_version_is_a_miss(tmp_path) -> None:
    older = RecordKind(REFLECTION.namespace, REFLECTION.version - 1)
    with Store(tmp_path / "cache") as store:
        store.set(older, KEY, {"stage": "fragment"})
        with warnings.catch_warnings():
            warnings.simplefilter("error", CacheWarning)  # a version miss is silent, not an unreadable entry
            assert store.get(REFLECTION, KEY) is None
        store.set(REFLECTION, KEY, DOC)
        assert store.get(REFLECTION, KEY) == DOC and store.get(older, KEY) is None


def test_reflection_records_are_apart_from_blobs_and_other_kinds(tmp_path) -> None:
    with Store(tmp_path / "cache") as store:
        digest = store.put_blob(b"\x03\x02\x23\x07 a blob")
        store.set(RecordKind("other", 1), KEY, {"blob": digest})
        assert store.get(REFLECTION, KEY) is None and store.keys(REFLECTION) == []
        store.set(REFLECTION, f"{digest}:rev", DOC)
        assert store.keys(REFLECTION) == [f"{digest}:rev"] and store.get_blob(digest) == b"\x03\x02\x23\x07 a blob"
