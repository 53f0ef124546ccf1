"""The shared tier's records: shapes checked on read, HMAC signatures, bounded folder reads, the team key."""

from __future__ import annotations

import hashlib
import hmac
import json
import os

import pytest

from pipeline.cache.remote_records import (
    KEY_VARIABLE,
    MAX_KEY_BYTES,
    JobRecord,
    UseRecord,
    read_entries,
    shaped,
    signature,
    signature_problem,
    signed,
    team_key,
)
from pipeline.errors import ConfigError

BLOB = "ab" * 32
JOB = {"version": 1, "key": "job-key", "blob": BLOB, "compiler": "glslang 15", "diagnostics": []}


def test_a_well_formed_job_record() -> None:
    record, why = shaped(JOB, JobRecord)
    assert why == "" and record == JobRecord(1, "job-key", BLOB, "glslang 15")
    failed, _ = shaped({**JOB, "blob": None, "diagnostics": [{"file": "a.frag", "message": "m", "line": 3}]}, JobRecord)
    assert failed.blob is None and failed.diagnostics[0].line == 3 and failed.diagnostics[0].severity == "error"


@pytest.mark.parametrize("change, where", [
    ({"blob": ["not", "a", "name"]}, "$.blob"),
    ({"blob": "AB" * 32}, "$.blob"),            # upper case
    ({"blob": "ab" * 31}, "$.blob"),            # too short
    ({"version": "1"}, "$.version"),
    ({"diagnostics": ["a line"]}, "$.diagnostics[0]"),
    ({"diagnostics": [{"file": "f", "message": "m", "severity": "fatal"}]}, "$.diagnostics[0].severity"),
])
def test_a_record_of_the_wrong_shape_is_refused_with_where(change: dict, where: str) -> None:
    record, why = shaped({**JOB, **change}, JobRecord)
    assert record is None and where in why


def test_a_record_missing_a_field_is_refused() -> None:
    record, why = shaped({"version": 1, "blob": BLOB}, JobRecord)
    assert record is None and "key" in why


def test_use_records() -> None:
    record, _ = shaped({"version": 1, "time": 12.5, "jobs": ["a", "b"]}, UseRecord)
    assert record == UseRecord(1, 12.5, ("a", "b"))
    assert shaped({"version": 1, "time": "yesterday"}, UseRecord)[0] is None


def test_the_signature_is_an_hmac_of_the_sorted_compact_record_without_its_signature() -> None:
    key = b"team secret"
    doc = {"version": 1, "key": "k", "blob": BLOB, "signature": "old"}
    body = json.dumps({"blob": BLOB, "key": "k", "version": 1}, sort_keys=True, separators=(",", ":")).encode()
    assert signature(doc, key) == hmac.new(key, body, hashlib.sha256).hexdigest()
    assert signature(doc, b"another key") != signature(doc, key)


def test_signed_records_verify_and_tampered_ones_do_not() -> None:
    key = b"k1"
    assert signed(JOB, None) is JOB
    doc = signed(JOB, key)
    assert doc["signature"] == signature(JOB, key) and signature_problem(doc, key) is None
    assert signature_problem(JOB, key) == "unsigned"
    assert signature_problem({**doc, "blob": "cd" * 32}, key) == "wrongly signed"
    assert signature_problem(doc, b"k2") == "wrongly signed"
    assert signature_problem({**doc, "signature": 42}, key) == "wrongly signed"


def test_read_entries_reads_regular_files_within_the_limit_and_warns_about_the_rest(tmp_path) -> None:
    (tmp_path / "ok").write_bytes(b"12345")
    (tmp_path / "big").write_bytes(b"123456")
    (tmp_path / "folder").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    os.mkfifo(tmp_path / "fifo")
    warnings: list[str] = []
    paths = [str(tmp_path / n) for n in ("ok", "big", "folder", "missing", "dangling", "fifo")]
    found = read_entries(paths, 5, warnings.append)
    assert found == {str(tmp_path / "ok"): b"12345"}
    assert [w.split(":", 1)[0] for w in warnings] == [str(tmp_path / n) for n in ("big", "folder", "fifo")]
    assert all(w.endswith("; ignoring it") for w in warnings)
    assert "over the limit of 5" in warnings[0] and "a FIFO" in warnings[2]


def test_team_key_from_the_environment_first(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(KEY_VARIABLE, "  from env \n")
    (tmp_path / "key").write_text("from file")
    assert team_key(tmp_path, "key") == b"from env"


def test_team_key_from_the_key_file_or_none(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(KEY_VARIABLE, raising=False)
    assert team_key(tmp_path, None) is None
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "team").write_bytes(b"\n secret \n")
    assert team_key(tmp_path, "keys/team") == b"secret"


@pytest.mark.parametrize("content, words", [(b"  \n", "is empty"), (b"x" * (MAX_KEY_BYTES + 1), "over the limit"),
                                            (None, "cannot read the team cache key")])
def test_a_bad_key_file_is_a_config_error(tmp_path, monkeypatch, content, words) -> None:
    monkeypatch.setenv(KEY_VARIABLE, "   ")  # blank: not a key
    if content is not None:
        (tmp_path / "key").write_bytes(content)
    with pytest.raises(ConfigError) as info:
        team_key(tmp_path, "key")
    d = info.value.diagnostics[0]
    assert d.location.file == str(tmp_path / "key") and words in d.message
