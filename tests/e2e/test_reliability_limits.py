"""Reader limits: sane defaults, settable in pipeline.toml, and a tighter limit is a located error."""

from __future__ import annotations

import base64
import copy

import pytest
from robust_helpers import GOOD_FILES, POSITIONS, document, gltf_text, make_world

from pipeline import api
from pipeline.checked import field_docs
from pipeline.config import Limits, parse_world_config
from pipeline.errors import ConfigError

BAD = "broken/c00/limited.gltf"


def test_defaults_are_generous_for_real_content_and_bounded():
    limits = Limits()
    assert 64 * 2**20 <= limits.max_file_bytes <= 2**31
    assert 32 <= limits.max_json_depth <= 256
    assert 100_000 <= limits.max_elements <= 100_000_000
    assert 2**20 <= limits.max_data_uri_bytes <= limits.max_file_bytes
    assert 1024 <= limits.max_string_length <= 2**20


def test_every_limit_is_a_pipeline_toml_key():
    text = "[limits]\n" + "".join(f"{name} = 7\n" for name in field_docs(Limits))
    assert parse_world_config(text).limits == Limits(**{name: 7 for name in field_docs(Limits)})


@pytest.mark.parametrize("text, line", [
    ("[limits]\nmax_file_bytes = 0\n", 2),
    ("[limits]\nmax_json_depth = -1\n", 2),
    ("[limits]\nmax_elemnts = 10\n", 2),
    ("[limits]\nmax_string_length = 'long'\n", 2),
])
def test_a_bad_limit_is_a_located_config_error(tmp_path, text, line):
    make_world(tmp_path)
    (tmp_path / "pipeline.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        api.scan(tmp_path, cache=tmp_path / ".cache")
    assert str(info.value).startswith(f"pipeline.toml:{line}:1: error: limits.")


def limited_document() -> dict:
    doc = copy.deepcopy(document())
    doc["nodes"].append({})
    doc["materials"][0]["extras"] = {"note": "x" * 40, "deep": [[[["x"]]]]}
    padded = base64.b64encode(POSITIONS + bytes(60)).decode()  # longer than the good files' URIs
    doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + padded
    return doc


LIMITS = [
    ("max_file_bytes", 1000, "", "over the limit of 1000 (limits.max_file_bytes)"),
    ("max_json_depth", 3, ": /materials/0/extras", "nested deeper than 3 levels (limits.max_json_depth)"),
    ("max_elements", 2, ": /nodes", "3 entries, over the limit of 2 (limits.max_elements)"),
    ("max_data_uri_bytes", 120, ": /buffers/0/uri", "over the limit of 120 (limits.max_data_uri_bytes)"),
    ("max_string_length", 30, ": /materials/0/extras/note", "40 characters, over the limit of 30"),
]


@pytest.mark.parametrize("name, value, where, message", LIMITS, ids=[limit[0] for limit in LIMITS])
def test_a_tighter_limit_in_pipeline_toml_is_a_located_error(tmp_path, name, value, where, message):
    world = tmp_path / "world"
    make_world(world)
    (world / BAD).write_bytes(gltf_text(limited_document()))
    before = api.scan(world, cache=tmp_path / "cache")
    assert not before.errors, "the file is fine under the default limits"
    (world / "pipeline.toml").write_text(f"[limits]\n{name} = {value}\n")
    after = api.scan(world, cache=tmp_path / "cache")  # same cache: a changed limit is not a cache hit
    assert [str(e) for e in after.errors] == [f"{BAD}{where}: error: " + after.errors[0].message]
    assert message in after.errors[0].message
    assert {d.source.file for d in after.draws} == set(GOOD_FILES)
