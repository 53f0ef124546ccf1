"""The ship check: every draw, pass and allowed axis combination has its key, state and whole blobs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runtime_helpers import chunk_index, cook_twin_chunks, fail_key
from pipeline import api
from pipeline.outputs import manifest as mf
from pipeline.runtime.ship import expected, verify_ship


@pytest.fixture(scope="module")
def cooked(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ship")
    out = cook_twin_chunks(tmp)
    world = api.open_world(tmp / "world", cache=tmp / "cache")
    return out, api.keys(world).by_chunk


def test_a_fresh_cook_has_no_hole(cooked) -> None:
    out, by_chunk = cooked
    result = verify_ship(out, by_chunk)
    assert result.ok and result.chunks == 2 and result.draws == 2 * len(chunk_index(out, "c02").draws)
    per_draw = expected(by_chunk["c02"])
    lit = [rows for passes in per_draw.values() for label, rows in passes.items() if label == "pbr/forward"]
    assert any(len(rows) == 4 for rows in lit)  # SHADOWS x QUALITY
    assert result.checked == 2 * sum(len(rows) for passes in per_draw.values() for rows in passes.values())


def test_each_missing_piece_is_a_named_hole(cooked, tmp_path: Path) -> None:
    out, by_chunk = cooked
    broken = tmp_path / "out"
    shutil.copytree(out, broken)
    key = chunk_index(out, "c02").draws[0]["passes"]["pbr/forward"]["key"]
    fail_key(broken, "c02", key)  # the key's blobs and pipeline states gone from c02
    (broken / "c03.json").unlink()
    result = verify_ship(broken, by_chunk)
    assert not result.ok
    missing = {(h.chunk, h.missing) for h in result.holes}
    assert ("c02", f"no pipeline state for key {key}") in missing
    assert any(c == "c03" and m.startswith("chunk index: ") for c, m in missing)
    hole = next(h for h in result.holes if h.chunk == "c02")
    assert hole.line().startswith("c02 c02/") and "pbr/forward [QUALITY=HIGH,SHADOWS=0]" in hole.line()
    assert hole.to_json()["axes"] == {"QUALITY": "HIGH", "SHADOWS": False}


def test_no_library_is_a_hole(cooked, tmp_path: Path) -> None:
    out, by_chunk = cooked
    broken = tmp_path / "out"
    shutil.copytree(out, broken)
    mf.library_path(broken).unlink()
    result = verify_ship(broken, by_chunk)
    assert result.holes[0].missing.startswith("shader library: ")
