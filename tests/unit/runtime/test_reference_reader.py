"""The reference reader (standard library only) reads what the package's own reader reads."""

from __future__ import annotations

import ast
import json
import shutil

import pytest

from pipeline import api
from pipeline.outputs import manifest as mf
from pipeline.outputs.read_outputs import load_chunk
from pipeline.runtime import reference_reader as ref
from pipeline.runtime.check import chunk_names
from paths import SAMPLE_WORLD


def cooked(world, tmp):
    result = api.cook(api.open_world(world), cache=tmp / "cache", out=tmp / "out", jobs=2)
    assert result.chunks > 0
    return tmp / "out"


@pytest.fixture(scope="module", params=["sample", "corpus"])
def out(request, tmp_path_factory, corpus):
    world = SAMPLE_WORLD if request.param == "sample" else corpus
    return cooked(world, tmp_path_factory.mktemp(request.param))


def test_every_draw_resolves_to_the_same_key_pipeline_state_and_blobs(out):
    chunks = chunk_names(out)
    assert chunks
    for chunk in chunks:
        manifest, library = load_chunk(out, chunk)
        index, ref_library = ref.load(out, chunk)
        assert len(index.draws) == len(manifest.draws)
        for theirs, ours in zip(index.draws, manifest.draws):
            assert {f: theirs[f] for f in ref.DRAW_FIELDS} == {f: ours[f] for f in ref.DRAW_FIELDS}
            assert set(theirs["passes"]) == set(ours["passes"])
            for name, use in theirs["passes"].items():
                expected = ours["passes"][name]
                assert use.key == expected["key"]
                assert use.stages == dict(manifest.keys[use.key].stages)
                assert (ref.pipeline_id(use.pipeline) if use.pipeline else None) == expected.get("pipeline")
                assert (ref.pipeline_id(use.fallback) if use.fallback else None) == expected.get("fallback")
                if use.pipeline:
                    assert use.pipeline == json.loads(json.dumps(manifest.pipelines[expected["pipeline"]]))
                for digest in use.stages.values():
                    assert ref_library.blob(digest) == library.get(digest)
                    assert ref_library.reflection(digest) == manifest.reflection.get(digest)
                rows = expected.get("axes") or []
                assert [(v, k) for v, k, _, _ in use.axes or []] == [(r["values"], r["key"]) for r in rows]
                for r in rows:  # each runtime axis combination picks its own key and pipeline state
                    key, stages, state = use.pick(r["values"])
                    assert (key, stages) == (r["key"], dict(manifest.keys[r["key"]].stages))
                    assert ref.pipeline_id(state) == r["pipeline"]


def test_a_combination_without_a_row_is_not_cooked():
    passes = ref.Pass("k0", {}, None, None, [({"SHADOWS": False}, "k0", {}, None), ({"SHADOWS": True}, "k1", {}, None)])
    assert passes.pick({"SHADOWS": True})[0] == "k1" and passes.pick({"SHADOWS": 1}) is None
    assert passes.pick({"SHADOWS": False, "QUALITY": "LOW"}) is None
    assert ref.Pass("k", {}, None, None).pick({"SHADOWS": True}) == ("k", {}, None)  # a pass without axes


def test_it_imports_nothing_but_the_standard_library():
    tree = ast.parse(open(ref.__file__).read())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= {"__future__", "hashlib", "json", "struct", "dataclasses", "pathlib"}


def test_an_index_of_another_format_is_refused(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"format": 4}))
    with pytest.raises(ref.OutputError, match="format 4 is not 5"):
        ref.Chunk(path)
    bad = tmp_path / "shaders.pak"
    bad.write_bytes(b"\x89PPAK\r\n\x1a" + (1).to_bytes(4, "little") + bytes(68))
    with pytest.raises(ref.OutputError, match="not a shader library of version 3"):
        ref.Library(bad)


def test_a_root_chunk_is_read_from_dot_root(tmp_path):
    shutil.copytree(SAMPLE_WORLD / "town" / "workshop", tmp_path / "world")  # glTF files in the world root
    out = cooked(tmp_path / "world", tmp_path)
    index, library = ref.load(out, mf.ROOT)
    assert index.name == mf.ROOT and index.draws
    assert all(d in library.index for d in index.blobs)
