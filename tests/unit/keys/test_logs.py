"""Reading what a cook can fold in: miss logs line by line, key lists as one document."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.keys.logs import read_entries, record_problem


def test_a_key_list_gives_one_entry_per_key(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"keys": ["pbr/forward{}", {"key": "pbr/depth{}", "chunk": "forest/c00"}, 5]}))
    assert read_entries(path) == [(1, {"key": "pbr/forward{}", "chunk": None}),
                                  (1, {"key": "pbr/depth{}", "chunk": "forest/c00"}),
                                  (1, "not a key list entry: 5")]
    path.write_text("[]")
    assert read_entries(path) == [(1, 'not a key list: expected {"keys": [key text or {"key", "chunk"}, ...]}')]


def test_a_miss_records_axes_must_be_axis_values(tmp_path: Path) -> None:
    base = {"chunk": "c", "key": None, "draw": {}}
    assert record_problem(base | {"axes": {"SHADOWS": True, "QUALITY": "LOW"}}) is None
    assert record_problem(base | {"axes": ["SHADOWS"]}) == \
        'not a miss record ("axes" must be an object of axis values, not a list)'
    log = tmp_path / "m.jsonl"
    log.write_text(json.dumps(base | {"axes": {"SHADOWS": [1]}}) + "\n")
    assert read_entries(log) == [(1, 'not a miss record ("axes" must be an object of axis values, not an object)')]
