"""Folding miss logs and key lists into a cook input: valid keys added where the runtime needs them."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from rules_fixtures import draw, facts, mesh

from pipeline.keys.fold import fold, log_files
from pipeline.keys.required import AXES, required_keys
from pipeline.rules.axes import restrict
from pipeline.rules.load import load_ruleset_text

FAMILY = """\
shader: toy
sources: {vertex: pbr/pbr.vert, fragment: pbr/pbr.frag}
features:
  LIT: {type: bool}
  SHADOWS: {type: bool, runtime: true, when: LIT}
derive:
  LIT: material.unlit == False
passes:
  forward: {features: all}
"""
DRAW = {"file": "a.gltf", "node": 0, "mesh": 0, "primitive": 0, "material": 0, "variant": None}


def cook_input(rs):
    """A cook input of one chunk "c" with one lit draw, as the cook would take it."""
    found = required_keys([rs], [draw(facts(mesh("NORMAL")))])
    return SimpleNamespace(keys=dict(found.keys), by_chunk={"c": dict(found.keys)})


def write(path: Path, *records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_missed_axis_combination_is_added_to_the_draws_table(tmp_path: Path) -> None:
    [rs] = restrict([load_ruleset_text(FAMILY, "toy.yaml")], {"SHADOWS": (False,)}, "pipeline.toml")
    found = cook_input(rs)
    assert [k.text for k in found.keys] == ["toy/forward{LIT=1}"]
    log = write(tmp_path / "m.jsonl", {"chunk": "c", "draw": DRAW, "key": "toy/forward{LIT=1}",
                                       "pass": "toy/forward", "axes": {"SHADOWS": True}})
    result = fold(found, {"toy": rs}, [log])
    assert [(f.key, f.chunk, f.source, f.axes) for f in result.folded] == \
        [("toy/forward{LIT=1,SHADOWS=1}", "c", f"{log}:1", (("SHADOWS", True),))]
    [added] = [k for k in found.by_chunk["c"] if k.text == "toy/forward{LIT=1,SHADOWS=1}"]
    [(source, _, spec)] = found.by_chunk["c"][added].bindings
    assert spec[AXES] == [{"SHADOWS": True}] and source.file == "a.gltf" and added in found.keys
    assert fold(found, {"toy": rs}, [log]).folded == []  # folded once: the draw has it now


def test_a_key_list_adds_valid_keys_and_rejects_what_the_rules_never_cook(tmp_path: Path) -> None:
    rs = load_ruleset_text(FAMILY, "toy.yaml")
    found = cook_input(rs)
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": ["toy/forward{LIT=0}", {"key": "toy/forward{LIT=0,SHADOWS=1}"},
                                         "toy/forward{NOPE=1}"]}))
    result = fold(found, {"toy": rs}, [keys])
    assert [(f.key, f.chunk, f.draw) for f in result.folded] == [("toy/forward{LIT=0}", "c", None)]
    assert [str(d) for d in result.rejected] == [
        f"{keys}:1: warning: the rules never cook this key: normalize makes it toy/forward{{LIT=0}}",
        f"{keys}:1: warning: 'NOPE' is not a static feature of toy/forward"]


def test_unreadable_lines_are_located_and_the_rest_still_folds(tmp_path: Path) -> None:
    rs = load_ruleset_text(FAMILY, "toy.yaml")
    log = tmp_path / "m.jsonl"
    log.write_text('not json\n{"chunk": "c", "draw": {}, "key": "toy/forward{LIT=0}"}\n')
    result = fold(cook_input(rs), {"toy": rs}, [log])
    assert [f.key for f in result.folded] == ["toy/forward{LIT=0}"]
    assert [d.location.line for d in result.rejected] == [1]


def test_log_files_are_the_given_then_the_folders_logs_sorted(tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_text("")
    (tmp_path / "a.json").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert log_files(["x.jsonl"], tmp_path) == [Path("x.jsonl"), tmp_path / "a.json", tmp_path / "b.jsonl"]
    assert log_files([], tmp_path / "missing") == []
