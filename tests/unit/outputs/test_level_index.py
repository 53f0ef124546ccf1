"""A level manifest's compact document (outputs/level_index.py): per chunk its keys and pipeline states."""

from __future__ import annotations

import orjson
import pytest
from level_helpers import rows_naming

from pipeline.errors import PipelineError
from pipeline.keys.key import PermutationKey
from pipeline.outputs import level_index
from pipeline.outputs import manifest as mf
from pipeline.outputs.contract import pipeline_state

OPAQUE = {"blend": False, "cull": "back"}
STAGES = {"vertex": "a" * 64, "fragment": "b" * 64}


def _chunk(name: str, key: PermutationKey, draws: int) -> mf.ChunkManifest:
    pid, doc = pipeline_state(key.text, [], OPAQUE, {})
    entry = mf.ManifestEntry(key=key.text, hash=key.hash, shader=key.shader, pass_name=key.pass_name,
                             features=dict(key.features), stages=STAGES, draws=draws, render_states=(OPAQUE,))
    return mf.chunk_manifest(name, "forest", [entry], pipelines={pid: doc})


ONE = PermutationKey("pbr", "forward", (("NORMAL_MAP", True),))
TWO = PermutationKey("pbr", "forward", (("NORMAL_MAP", False),))


def test_each_chunk_names_its_keys_draws_and_pipeline_states_by_position() -> None:
    level = mf.level_manifest("forest", [_chunk("forest/c01", TWO, 2), _chunk("forest/c00", ONE, 3)])
    doc = level_index.encode_level(level)
    texts = sorted(level.keys)
    assert set(doc["chunks"]) == {"forest/c00", "forest/c01"}
    assert doc["chunks"]["forest/c00"] == {"index": "forest/c00.json", "keys": [texts.index(ONE.text), 3],
                                           "pipelines": [sorted(level.pipelines).index(pipeline_state(
                                               ONE.text, [], OPAQUE, {})[0])]}
    assert not {"draws", "uses", "files", "passes", "fallbacks", "chunk"} & doc.keys()
    fields = level_index.decode_level(doc, mf._Where("forest.level.json"), mf._index_entry)
    assert mf.LevelManifest("forest", **fields) == level


def test_a_chunk_row_naming_no_key_is_a_located_error() -> None:
    doc = level_index.encode_level(mf.level_manifest("forest", [_chunk("forest/c00", ONE, 1)]))
    doc["chunks"]["forest/c00"]["keys"] = [7, 1]
    with pytest.raises(PipelineError, match="outside its table") as caught:
        level_index.decode_level(doc, mf._Where("forest.level.json"), mf._index_entry)
    assert "/chunks/forest~1c00/keys" in str(caught.value)


def test_users_count_the_rows_naming_each_key_and_pipeline_state() -> None:
    three = PermutationKey("pbr", "forward", (("NORMAL_MAP", None),))
    level = mf.level_manifest("forest", [_chunk("forest/c00", ONE, 3), _chunk("forest/c01", TWO, 2),
                                         _chunk("forest/c02", ONE, 1), _chunk("forest/c03", three, 4)])
    users = level_index.users(level)
    assert users == rows_naming(level_index.encode_level(level))
    assert sorted(users[0]) == [1, 1, 2] and sorted(users[1]) == [1, 1, 2]


def test_raw_rows_leave_each_chunk_s_row_as_its_json_text(tmp_path) -> None:
    level = mf.level_manifest("forest", [_chunk("forest/c00", ONE, 3), _chunk("forest/c01", TWO, 2)])
    data = mf.dump_json(level.to_json())
    raw, parsed = level_index.raw_rows(data), orjson.loads(data)
    assert {name: orjson.loads(bytes(row)) for name, row in raw["chunks"].items()} == parsed["chunks"]
    assert {name: value for name, value in raw.items() if name != "chunks"} == \
        {name: value for name, value in parsed.items() if name != "chunks"}
    path = tmp_path / "forest.level.json"
    path.write_bytes(data)
    assert mf.load_level_union(path, raw_rows=True)[1] == mf.load_level_union(path)[1]
    for bad in (b'{"format":5,"chunks":[1]}', b'{"format":5', b"[]"):
        path.write_bytes(bad)
        with pytest.raises(mf.ManifestError):
            mf.load_level_union(path, raw_rows=True)
