"""A chunk's keys read back from its records: compact until a key's uses are asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import api
from pipeline.keys.chunk_keys import ChunkKeys
from pipeline.keys.key import PermutationKey
from pipeline.keys.recorded import ExtendedKeys, RecordedKeys, release_uses
from pipeline.keys.required import KeyUses
from paths import SAMPLE_WORLD as SAMPLE


def _read_back(tmp_path: Path):
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    name, required = sorted(api.keys(world).by_chunk.items())[0]
    chunk = ChunkKeys(name, world.level_of(name), 0, dict(required.keys), [], [])
    summary, draws = chunk.to_records()
    return ChunkKeys.from_records(summary, {}, draws, chunk.definitions().get).keys, dict(required.keys)


def test_keys_read_back_make_no_uses_until_one_is_asked_for(tmp_path: Path) -> None:
    back, required = _read_back(tmp_path)
    assert isinstance(back, RecordedKeys) and len(required) > 1
    assert list(back) == list(required) and len(back) == len(required)
    assert back._made is None and back._at is None  # counting and listing the keys made nothing
    first = next(iter(required))
    assert first in back and PermutationKey("nothing", "here", ()) not in back
    assert back._made is None  # a look-up makes the position table only
    uses = back[first]
    assert back[first] is uses and uses.draw_count == required[first].draw_count
    assert uses.render_states == required[first].render_states
    assert back == required and required == back  # every use, its draws and bindings too
    back.release()
    assert back._made is None and back[first] is not uses  # made again when asked again
    with pytest.raises(KeyError):
        back[PermutationKey("nothing", "here", ())]


def test_a_record_naming_a_key_twice_is_refused(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    name, required = sorted(api.keys(world).by_chunk.items())[0]
    chunk = ChunkKeys(name, world.level_of(name), 0, dict(required.keys), [], [])
    summary, draws = chunk.to_records()
    for column in ("keys", "key_draws", "key_states", "key_specializations"):
        summary[column].append(summary[column][0])
    with pytest.raises(ValueError, match="names a key twice"):
        ChunkKeys.from_records(summary, {}, draws, chunk.definitions().get)


def test_keys_added_beside_a_chunk_s_own_leave_them_as_they_are(tmp_path: Path) -> None:
    back, required = _read_back(tmp_path)
    extra = PermutationKey("s", "fallback", ())
    added = KeyUses([], [{"cull": "back"}], {})
    both = ExtendedKeys(back, {extra: added})
    assert list(both) == [*required, extra] and len(both) == len(required) + 1
    assert both[extra] is added and extra in both and extra not in back
    assert both == {**required, extra: added}
    first = next(iter(required))
    assert both[first] is back[first]
    both.release()
    assert back._made is None  # releasing the whole releases what the chunk's own keys made
    again = ExtendedKeys(back, {first: added})  # an added key the chunk has already: the added one
    assert again[first] is added and len(again) == len(required) and list(again) == list(required)


def test_releasing_plain_uses_releases_each() -> None:
    released = []

    class Uses(KeyUses):
        def release(self) -> None:
            released.append(self)

    one, two = Uses(), Uses()
    release_uses({PermutationKey("s", "a", ()): one, PermutationKey("s", "b", ()): two})
    assert released == [one, two]
