"""A level manifest's compact document (outputs/level_index.py): per chunk its keys and pipeline states."""

from __future__ import annotations

import pytest

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
