"""Where a report comes from (tool, rules hash, git revision, timestamp) and the names glTF files give."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess

import pytest

from pipeline import __version__
from pipeline.report.provenance import git_revision, gltf_names, provenance, rules_hash, timestamp


def test_timestamp_honours_source_date_epoch(monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    assert timestamp() == "1970-01-02T00:00:00Z"


def test_timestamp_is_now_without_a_usable_epoch(monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "not a number")
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    got = dt.datetime.strptime(timestamp(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    after = dt.datetime.now(dt.timezone.utc)
    assert before <= got <= after


def test_rules_hash_covers_names_and_bytes_of_yaml_files_only(tmp_path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.yaml").write_text("x: 1\n")
    (tmp_path / "sub" / "b.yml").write_text("y: 2\n")
    first = rules_hash(tmp_path)
    (tmp_path / "notes.txt").write_text("ignored")
    assert rules_hash(tmp_path) == first
    (tmp_path / "sub" / "b.yml").write_text("y: 3\n")
    changed = rules_hash(tmp_path)
    assert changed != first
    (tmp_path / "sub" / "b.yml").rename(tmp_path / "sub" / "c.yml")
    assert rules_hash(tmp_path) != changed  # the name counts too


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


@needs_git
def test_git_revision_of_a_repository_and_its_local_changes(tmp_path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True,
                              text=True).stdout.strip()

    assert git_revision(tmp_path) is None  # not a repository
    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    assert git_revision(tmp_path) is None  # no commit yet
    (tmp_path / "a.txt").write_text("1")
    git("add", "a.txt")
    git("commit", "-qm", "one")
    head = git("rev-parse", "HEAD")
    assert git_revision(tmp_path) == head
    (tmp_path / "a.txt").write_text("2")
    assert git_revision(tmp_path) == head + "+dirty"
    (tmp_path / "untracked.txt").write_text("x")
    (tmp_path / "a.txt").write_text("1")
    assert git_revision(tmp_path) == head  # untracked files do not make it dirty


def test_provenance_fields(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    (tmp_path / "rules").mkdir()
    doc = provenance(tmp_path, tmp_path / "rules")
    assert doc == {"tool": "pipeline", "tool_version": __version__, "rules_hash": rules_hash(tmp_path / "rules"),
                   "git_revision": git_revision(tmp_path), "timestamp": "1970-01-01T00:00:00Z"}


def test_gltf_names_of_named_materials_and_nodes(tmp_path, write_gltf) -> None:
    write_gltf(tmp_path / "a.gltf", {"asset": {"version": "2.0"}, "materials": [{"name": "bark"}, {}, {"name": ""}],
                                     "nodes": [{"name": 7}, {"name": "trunk"}]})
    write_gltf(tmp_path / "b.glb", {"asset": {"version": "2.0"}, "materials": "not a list"})
    (tmp_path / "bad.gltf").write_text("{ nope")
    names = gltf_names(tmp_path, {"a.gltf", "b.glb", "bad.gltf", "missing.gltf"})
    assert names == {"a.gltf": {"materials": {0: "bark"}, "nodes": {1: "trunk"}},
                     "b.glb": {"materials": {}, "nodes": {}}}
