"""The one decision whether a chunk's (or level's) outputs are current, and why not (outputs/records.py)."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.outputs.records import (
    OUTPUTS,
    as_tuple,
    changed_inputs,
    level_outputs_current,
    outputs_current,
    outputs_entry,
    record_ok,
    stat_of,
)
from pipeline.stamps import stamp_of

INPUTS = [["tool", "t1"], ["job results", "r1"], ["keys", "k1"], ["level", "l1"], ["file errors", "e1"]]


def chunk_files(tmp_path: Path) -> Path:
    json_path = tmp_path / "c00.json"
    json_path.write_bytes(b"{}\n")
    return json_path


def recorded(json_path: Path, inputs=INPUTS):
    return as_tuple(outputs_entry(inputs, json_path))


def test_the_record_is_version_4_of_inputs_and_the_index_stamp(tmp_path):
    json_path = chunk_files(tmp_path)
    assert OUTPUTS.version == 4
    assert outputs_entry(INPUTS, json_path) == [INPUTS, stamp_of(json_path)]
    assert record_ok(recorded(json_path))
    old_layout = (as_tuple(INPUTS), as_tuple(stamp_of(json_path)), "c00.0123456789abcdef.pak")  # format 3's
    assert not record_ok(old_layout) and not record_ok(None) and not record_ok([INPUTS, None])
    assert outputs_current(old_layout, INPUTS, json_path) == "recorded state absent"


def with_input(name: str, digest: str) -> list[list[str]]:
    return [[n, digest if n == name else d] for n, d in INPUTS]


def test_outputs_recorded_with_the_same_inputs_and_files_are_current(tmp_path):
    json_path = chunk_files(tmp_path)
    assert outputs_current(recorded(json_path), INPUTS, json_path) is None


def test_the_reason_names_the_inputs_that_changed(tmp_path):
    json_path = chunk_files(tmp_path)
    record = recorded(json_path)
    assert outputs_current(record, with_input("keys", "k2"), json_path) == "inputs changed: keys"
    both = [[n, d + "x" if n in ("job results", "file errors") else d] for n, d in INPUTS]
    assert outputs_current(record, both, json_path) == "inputs changed: job results, file errors"


def test_a_chunk_without_record_is_new_or_its_recorded_state_absent(tmp_path):
    json_path = tmp_path / "c00.json"
    assert outputs_current(None, INPUTS, json_path) == "new"
    chunk_files(tmp_path)
    assert outputs_current(None, INPUTS, json_path) == "recorded state absent"
    assert outputs_current(("not", "a", "record"), INPUTS, json_path) == "recorded state absent"


def test_a_deleted_index_is_a_missing_file(tmp_path):
    json_path = chunk_files(tmp_path)
    record = recorded(json_path)
    json_path.unlink()
    assert outputs_current(record, INPUTS, json_path) == "file missing: c00.json"


def test_an_edited_manifest_is_modified_on_disk_with_the_first_stamp_field_that_differs(tmp_path):
    json_path = chunk_files(tmp_path)
    record = recorded(json_path)
    st = os.stat(json_path)
    json_path.write_bytes(b"{} \n")
    os.utime(json_path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime: the size tells
    assert outputs_current(record, INPUTS, json_path) == "modified on disk (size changed): c00.json"


def test_an_index_rewritten_in_place_with_size_and_mtime_kept_is_changed_in_place(tmp_path):
    json_path = chunk_files(tmp_path)
    json_path.write_bytes(b"[1]\n")
    record = recorded(json_path)
    st = os.stat(json_path)
    for _ in range(200):  # until the clock moves the ctime on
        json_path.write_bytes(b"[2]\n")
        os.utime(json_path, ns=(st.st_atime_ns, st.st_mtime_ns))
        if os.stat(json_path).st_ctime_ns != st.st_ctime_ns:
            break
    assert outputs_current(record, INPUTS, json_path) == "modified on disk (changed in place (ctime)): c00.json"


def test_the_library_beside_the_index_is_not_the_records_business(tmp_path):
    """The blobs live in the shared library, kept by its own record: its changes leave the chunk current."""
    json_path = chunk_files(tmp_path)
    record = recorded(json_path)
    (tmp_path / "shaders.pak").write_bytes(b"another library")
    assert outputs_current(record, INPUTS, json_path) is None


def test_inputs_changed_come_before_the_files(tmp_path):
    json_path = chunk_files(tmp_path)
    record = recorded(json_path)
    json_path.unlink()
    assert outputs_current(record, with_input("level", "l2"), json_path) == "inputs changed: level"


def test_a_chunk_without_fingerprint_is_never_current_and_a_changed_file_still_says_so(tmp_path):
    json_path = chunk_files(tmp_path)
    record = recorded(json_path)
    assert outputs_current(record, None, json_path) == "inputs unknown (no fingerprint of the chunk's files)"
    json_path.unlink()
    assert outputs_current(record, None, json_path) == "file missing: c00.json"


def test_a_record_of_an_older_layout_names_every_input():
    assert changed_inputs("0" * 64, as_tuple(INPUTS)) == "tool, job results, keys, level, file errors"


def test_level_manifest_reasons(tmp_path):
    path = tmp_path / "forest.level.json"
    assert level_outputs_current(None, "s1", path) == "new"
    path.write_bytes(b"{}\n")
    record = ("s1", as_tuple(stat_of(path)))
    assert level_outputs_current(None, "s1", path) == "recorded state absent"
    assert level_outputs_current(record, "s1", path) is None
    assert level_outputs_current(record, "s2", path) == "inputs changed: chunk manifests"
    path.unlink()
    assert level_outputs_current(record, "s1", path) == "file missing: forest.level.json"
