"""The library as a studio pipeline imports it: ``pipeline.api.__all__`` (complete, documented),
``py.typed``, located :class:`~pipeline.errors.Diagnostic` objects in results, errors that name
the library's arguments (the command line names its options), and the ``format`` field of
every command's JSON document."""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cli import main
from pipeline.errors import CookDiagnostic, Diagnostic, PipelineError
from pipeline.report.funnel import REPORT_FORMAT
from paths import REPO

ROOT = REPO
BROKEN = "forest/c01/broken.gltf"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


# ------------------------------------------------------------------ the public surface
def test_py_typed_ships_in_the_package_folder():
    import pipeline

    marker = Path(pipeline.__file__).parent / "py.typed"
    assert marker.is_file() and marker.read_bytes() == b""


def _is_dataclass_autodoc(obj) -> bool:
    """A dataclass without a docstring gets its signature as ``__doc__``: that documents nothing."""
    return dataclasses.is_dataclass(obj) and (obj.__doc__ or "").startswith(obj.__name__ + "(")


def test_every_name_in_all_exists_and_is_documented():
    assert len(api.__all__) == len(set(api.__all__))
    for name in api.__all__:
        obj = getattr(api, name)  # the lazily imported result types load here
        if callable(obj):
            assert inspect.getdoc(obj) and not _is_dataclass_autodoc(obj), f"api.{name} has no docstring"
        else:  # a constant: named in the module's docstring
            assert f"``{name}``" in api.__doc__, f"api.{name} is not described in pipeline.api's docstring"


def test_no_public_looking_name_is_missing_from_all():
    public = {name for name, obj in vars(api).items()
              if not name.startswith("_") and not isinstance(obj, types.ModuleType)
              and (getattr(obj, "__module__", "") or "").startswith("pipeline")}
    public |= {name for name, obj in vars(api).items()  # constants (TYPE_CHECKING is typing's flag)
               if name.isupper() and not name.startswith("_") and not isinstance(obj, bool)}
    public |= set(api._LAZY)
    assert public - set(api.__all__) == set()
    star: dict = {}
    exec("from pipeline.api import *", star)
    assert set(api.__all__) <= set(star)


# ------------------------------------------------------------------ typed diagnostics
def test_cook_errors_are_located_diagnostics_and_to_json_keeps_its_shape(site):
    (site / "world" / BROKEN).write_text("{bad")
    result = api.cook(site / "world", cache=site / "cache", out=site / "build", jobs=1)
    (error,) = result.errors
    assert isinstance(error, Diagnostic) and isinstance(error, CookDiagnostic)
    assert (error.file, error.line, error.col, error.pointer, error.severity, error.key) == (BROKEN, 1, 2, None,
                                                                                            "error", None)
    assert error.location.file == BROKEN and "invalid JSON" in error.message
    assert str(error) == f"{BROKEN}:1:2: error: {error.message}"
    assert result.to_json()["errors"] == [{"file": BROKEN, "line": 1, "col": 2, "pointer": None,
                                           "severity": "error", "message": error.message, "key": None}]


def test_check_log_errors_are_located_diagnostics(site):
    log = site / "misses.jsonl"
    log.write_text("not json\n")
    assert run("cook", "world", "--cache", "cache", "--out", "build", "-j", "1", "-q").exit_code == 0
    result = api.check_log(site / "world", log, out=site / "build", cache=site / "cache")
    (error,) = result.errors
    assert isinstance(error, Diagnostic) and (error.file, error.line, error.severity) == (str(log), 1, "error")
    assert result.to_json()["errors"] == [{"file": str(log), "line": 1, "message": error.message}]
    shown = run("check-log", "world", str(log), "--cache", "cache", "--out", "build")
    assert shown.exit_code == 1 and f"{log}:1: error: {error.message}" in shown.stderr.splitlines()


# ------------------------------------------------------------------ errors that speak the library
@pytest.mark.parametrize("call, argument, line", [
    (lambda w: api.cook(w, chunk="forest/c9", cache="cache", out="build"), "chunk",
     "no chunk 'forest/c9' in the world; did you mean 'forest/c03', 'forest/c02', 'forest/c01'?"),
    (lambda w: api.keys(w, level="forst", cache="cache"), "level",
     "no level 'forst' in the world; did you mean 'forest'?"),
    (lambda w: api.report(w, what_if={"NO_SUCH": "dynamic"}, cache="cache"), "what_if",
     "NO_SUCH=dynamic: no family has a feature 'NO_SUCH'"),
])
def test_a_bad_argument_is_located_at_the_argument_not_an_option(site, call, argument, line):
    with pytest.raises(PipelineError) as caught:
        call(site / "world")
    assert not str(caught.value).startswith("--")
    assert str(caught.value) == f"{argument}: error: {line}"
    (d,) = caught.value.diagnostics
    assert d.location.parameter and d.file == argument


@pytest.mark.parametrize("args, line", [
    (["cook", "world", "--chunk", "forest/c9", "--cache", "cache", "--out", "build"],
     "--chunk: error: no chunk 'forest/c9' in the world; did you mean 'forest/c03', 'forest/c02', 'forest/c01'?"),
    (["keys", "world", "--level", "forst", "--cache", "cache"],
     "--level: error: no level 'forst' in the world; did you mean 'forest'?"),
    (["report", "world", "--what-if", "NO_SUCH=dynamic", "--cache", "cache"],
     "--what-if: error: NO_SUCH=dynamic: no family has a feature 'NO_SUCH'"),
])
def test_the_command_line_still_names_its_options(site, args, line):
    result = run(*args)
    assert result.exit_code == 1 and result.stderr.splitlines() == [line]


# ------------------------------------------------------------------ JSON documents
def test_rules_check_json_lists_rule_sets_passes_counts_and_findings(monkeypatch):
    monkeypatch.chdir(ROOT / "tests" / "golden" / "rules" / "never_derived")
    result = run("rules", "check", "--rules", "rules", "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert (doc["format"], doc["ok"], doc["errors"], doc["warnings"]) == (1, False, 1, 0)
    (ruleset,) = doc["rulesets"]
    assert (ruleset["family"], ruleset["file"], sorted(ruleset["passes"])) == ("demo", "rules/demo.yaml",
                                                                             ["depth", "forward"])
    from pipeline.rules.counts import count_space

    (rs,) = api.check_rules("rules").rulesets
    for name, counts in ruleset["passes"].items():
        space = count_space(rs, name)
        assert counts == {"possible": space.possible, "valid": space.valid}
    assert doc["diagnostics"] == [{"file": "rules/demo.yaml", "line": 6, "col": 3, "pointer": None,
                                   "severity": "error", "message": "feature 'UNLIT' is never derived (always 0)"}]
    assert result.stderr.splitlines() == ["rules/demo.yaml:6:3: error: feature 'UNLIT' is never derived (always 0)"]


def test_rules_check_json_of_good_rules_exits_0():
    result = run("rules", "check", "--json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and doc["ok"] and doc["diagnostics"] == []
    assert {"chain", "mtlx", "pbr"} <= {r["family"] for r in doc["rulesets"]}


def test_every_json_document_carries_a_format_version(site):
    (site / "log.jsonl").write_text("")
    cooked = run("cook", "world", "--cache", "cache", "--out", "build", "-j", "1", "--json")
    assert cooked.exit_code == 0, cooked.output
    doc = json.loads(cooked.stdout)
    assert doc["format"] == 1 and isinstance(doc["duration"], float) and doc["duration"] >= 0
    key = json.loads(run("keys", "world", "--cache", "cache", "--json").stdout)["keys"][0]["key"]
    commands = [["scan", "world", "--json", "--cache", "cache"], ["keys", "world", "--cache", "cache", "--json"],
                ["clean", "world", "--out", "build", "--cache", "cache", "--json"],
                ["explain", "world", key, "--cache", "cache", "--json"],
                ["cache", "stats", "--cache", "cache", "--json"],
                ["check-log", "world", "log.jsonl", "--cache", "cache", "--out", "build", "--json"],
                ["report", "world", "--cache", "cache", "--timings", "--format", "json"],
                ["rules", "facts", "--json"]]
    for args in commands:
        result = run(*args)
        assert result.exit_code == 0, (args, result.output)
        doc = json.loads(result.stdout)
        assert isinstance(doc, dict) and doc["format"] == 1, args
    report = json.loads(run("report", "world", "--cache", "cache", "--format", "json").stdout)
    assert report["format"] == REPORT_FORMAT  # its own layout version, kept
    facts = json.loads(run("rules", "facts", "--json").stdout)["facts"]
    assert {"path", "type", "meaning"} == set(facts[0])


def test_the_cook_document_is_the_same_on_a_second_run_but_for_its_duration(site):
    args = ("cook", "world", "--cache", "cache", "--out", "build", "-j", "1", "--json")
    run(*args)
    first, second = (json.loads(run(*args).stdout) for _ in range(2))
    assert {k: v for k, v in first.items() if k != "duration"} == {k: v for k, v in second.items() if k != "duration"}
    manifests = [json.loads(p.read_bytes()) for p in sorted((site / "build").rglob("*.json"))]
    assert manifests and not [m for m in manifests if "duration" in m]


def test_a_stamped_cook_answers_with_its_own_duration():
    from pipeline.cook.noop import with_duration
    from pipeline.report.render import render_json

    doc = {"format": 1, "duration": 1.25, "draws": 3, "explain": [{"duration": 7.5, "seconds": 0.5}]}
    again = json.loads(with_duration(render_json(doc), 0.0123))
    assert again == {**doc, "duration": 0.012}  # the nested field of the same name is left alone


def test_watch_json_lines_carry_a_format_and_name_the_option(site):
    import os
    import signal
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "watch", "world", "--chunk", "forest/c9", "--json",
                             "--cache", "cache", "--out", "build", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=site)
    try:
        first = json.loads(proc.stdout.readline())
        error = proc.stderr.readline().rstrip("\n")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=300)
    line = "--chunk: error: no chunk 'forest/c9' in the world; did you mean 'forest/c03', 'forest/c02', 'forest/c01'?"
    assert first["format"] == 1 and first["errors"] == [line] and error == line
