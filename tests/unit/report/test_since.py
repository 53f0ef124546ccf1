"""``--since OLD.json``: keys added and removed against an earlier report, narrowed to the same scope."""

from __future__ import annotations

import json

import pytest

from pipeline.report.errors import ReportError
from pipeline.report.rows import KeyRow
from pipeline.report.since import load_old_keys, since_diff


def row(key: str, *files: str) -> KeyRow:
    return KeyRow(key, "h", "pbr", "forward", len(files), tuple(sorted({f.rsplit("/", 1)[0] for f in files})),
                  tuple(files))


def old_report(tmp_path, keys: dict[str, list[str]], scope: dict | None = None):
    path = tmp_path / "old.json"
    doc = {"keys": [{"key": k, "files": f} for k, f in keys.items()]}
    if scope is not None:
        doc["scope"] = scope
    path.write_text(json.dumps(doc))
    return path


def test_added_and_removed_keys_with_their_files(tmp_path) -> None:
    path = old_report(tmp_path, {"k1": ["a/x.gltf"], "k2": ["a/y.gltf", "b/z.gltf"]})
    diff = since_diff(path, [row("k1", "a/x.gltf"), row("k3", "b/z.gltf")])
    assert diff.added == (("k3", ("b/z.gltf",)),)
    assert diff.removed == (("k2", ("a/y.gltf", "b/z.gltf")),)
    assert diff.warning is None and diff.old == str(path)
    assert diff.by_file() == [{"file": "b/z.gltf", "added": 1, "removed": 1},
                              {"file": "a/y.gltf", "added": 0, "removed": 1}]


def test_a_whole_world_report_is_narrowed_to_the_level_now_reported(tmp_path) -> None:
    path = old_report(tmp_path, {"k1": ["forest/c1/a.gltf"], "k2": ["town/c1/b.gltf"], "k3": ["forest/c2/c.gltf"]},
                      {"level": None, "chunk": None})
    diff = since_diff(path, [row("k1", "forest/c1/a.gltf")], {"level": "forest", "chunk": None})
    assert [k for k, _ in diff.removed] == ["k3"]  # k2 is outside the level: not removed
    assert "the whole world" in diff.warning and "level forest" in diff.warning
    assert "only the 2 of its 3 keys" in diff.warning


def test_narrowed_to_a_chunk(tmp_path) -> None:
    path = old_report(tmp_path, {"k1": ["forest/c1/a.gltf"], "k2": ["forest/c2/b.gltf"]})  # no scope: whole world
    diff = since_diff(path, [], {"level": "forest", "chunk": "forest/c1"})
    assert [k for k, _ in diff.removed] == ["k1"] and "chunk forest/c1" in diff.warning


def test_the_same_scope_gives_no_warning(tmp_path) -> None:
    path = old_report(tmp_path, {"k1": ["forest/c1/a.gltf"], "k2": ["town/b.gltf"]}, {"level": "forest"})
    diff = since_diff(path, [], {"level": "forest", "chunk": None})
    assert diff.warning is None and [k for k, _ in diff.removed] == ["k1", "k2"]


def test_load_old_keys(tmp_path) -> None:
    path = old_report(tmp_path, {"k1": ["a.gltf"]})
    assert load_old_keys(path) == {"k1": ["a.gltf"]}


@pytest.mark.parametrize("text, where, words", [
    ("{ not json", None, "not a JSON report"),
    ('{"keys": "nope"}', "/keys", "not a pipeline report"),
    ('{"keys": [{"files": []}]}', "/keys", "not a pipeline report"),
    ("[]", "/keys", "not a pipeline report"),
])
def test_a_file_that_is_not_a_report_is_a_located_error(tmp_path, text: str, where, words: str) -> None:
    path = tmp_path / "old.json"
    path.write_text(text)
    with pytest.raises(ReportError) as info:
        load_old_keys(path)
    d = info.value.diagnostics[0]
    assert d.location.file == str(path) and d.location.pointer == where and words in d.message


def test_a_missing_report_is_a_located_error(tmp_path) -> None:
    with pytest.raises(ReportError) as info:
        since_diff(tmp_path / "none.json", [])
    assert info.value.diagnostics[0].location.file == str(tmp_path / "none.json")
    assert "earlier report" in info.value.diagnostics[0].message


def test_narrowing_to_a_folder_chunk_leaves_out_the_files_of_its_parent_folder(tmp_path) -> None:
    path = old_report(tmp_path, {"k1": ["forest/c1/a.gltf"], "k2": ["forest/x.gltf"]})
    diff = since_diff(path, [row("k1", "forest/c1/a.gltf")], {"level": "forest", "chunk": "forest/c1"})
    assert diff.removed == ()


def test_a_folder_chunk_holds_only_its_own_files_and_a_grid_cell_those_of_its_level_folder(tmp_path) -> None:
    path = old_report(tmp_path, {"own": ["forest/c1/a.gltf"], "below": ["forest/c1/rocks/b.gltf"],
                                 "beside": ["forest/c2/c.gltf"]})
    diff = since_diff(path, [], {"level": "forest", "chunk": "forest/c1"})
    assert [k for k, _ in diff.removed] == ["own"]  # forest/c1/rocks is a chunk of its own
    path = old_report(tmp_path, {"cell": ["open/a.gltf"], "other level": ["town/b.gltf"]})
    diff = since_diff(path, [], {"level": "open", "chunk": "open/x0_z1"}, grid_cell=True)
    assert [k for k, _ in diff.removed] == ["cell"]


def test_pipeline_states_and_bytes_a_patch_adds_and_removes(tmp_path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"keys": [
        {"key": "k1", "files": ["a/x.gltf"], "pipelines": 2, "blobs": {"v": 100, "f1": 40}},
        {"key": "k2", "files": ["a/x.gltf"], "pipelines": 3, "blobs": {"v": 100, "f2": 50}}]}))
    now = [KeyRow("k1", "h", "pbr", "forward", 1, ("a",), ("a/x.gltf",), 2, {"v": 100, "f1": 40}),
           KeyRow("k3", "h", "pbr", "forward", 1, ("a",), ("a/x.gltf",), 4, {"v": 100, "f3": 70})]
    diff = since_diff(path, now)
    assert diff.totals == {"keys": {"added": 1, "removed": 1}, "pipeline_states": {"added": 4, "removed": 3},
                           "bytes": {"added": 70, "removed": 50}}
    assert diff.to_json()["totals"] == diff.totals
    uncooked = since_diff(old_report(tmp_path, {"k1": ["a/x.gltf"]}), [row("k1", "a/x.gltf")])
    assert "bytes" not in uncooked.totals  # no compile figures in the earlier report: no byte delta
