"""The chunk index's runtime axis rows: encoded by position, decoded back, bad rows located."""

from __future__ import annotations

import pytest

from pipeline.outputs.axis_table import axis_values, decode_rows, encode_rows


class _At:
    def error(self, message: str) -> Exception:
        return ValueError(message)


def _pick(table, i, at, *parts):
    if not isinstance(i, int) or not 0 <= i < len(table):
        raise at.error(f"position {i} outside its table")
    return table[i]


ROWS = [{"values": {"SHADOWS": True}, "key": "k1", "pipeline": "p1"},
        {"values": {"SHADOWS": False}, "key": "k0"}]


def test_rows_round_trip_through_positions():
    draws = [{"passes": {"f/forward": {"key": "k0", "axes": ROWS}, "f/depth": {"key": "k2"}}}]
    table, at = axis_values(draws)
    assert table == [{"SHADOWS": False}, {"SHADOWS": True}]
    encoded = encode_rows(draws[0]["passes"]["f/forward"], at, {"k0": 0, "k1": 1}, {"p1": 0})
    assert encoded == [[1, 1, 0], [0, 0, None]]
    assert decode_rows(encoded, table, ["k0", "k1"], ["p1"], _pick, _At()) == ROWS


def test_a_bad_row_is_an_error():
    with pytest.raises(ValueError, match="expected \\[axis values, key, pipeline\\]"):
        decode_rows([[0, 0]], [{}], ["k0"], [], _pick, _At())
    with pytest.raises(ValueError, match="outside its table"):
        decode_rows([[3, 0, None]], [{}], ["k0"], [], _pick, _At())
