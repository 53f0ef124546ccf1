"""Golden compile errors as data: tests/golden/compile/<case>/ and the exact lines the cook prints.

Each case folder holds ``materials/`` (a shader library with one deliberate
mistake) and ``expected.txt``: every ``: error: `` line ``pipeline cook`` prints
for it, in order.  The world is shared (``world/``: one chunk, an opaque and a
MASK material, so two keys ``golden/main{MASKED=0|1}``), and so is the rule set
(``rules/golden.yaml``) unless the case brings its own ``rules/``.  The cook runs
from the case folder, so paths print as ``materials/...``, with the real compiler.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from paths import TESTS

GOLDEN = TESTS / "golden" / "compile"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "expected.txt").is_file())


def test_there_are_at_least_ten_compile_mistakes():
    assert len(CASES) >= 10


def cook(folder: Path, tmp_path: Path):
    rules = "rules" if (folder / "rules").is_dir() else "../rules"
    args = ["cook", "../world", "--rules", rules, "--materials", "materials", "--cache", str(tmp_path / "cache"),
            "--out", str(tmp_path / "out"), "--jobs", "1", "-q"]
    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("case", CASES)
def test_golden_compile_error_prints_the_expected_lines(case, tmp_path, monkeypatch):
    folder = GOLDEN / case
    monkeypatch.chdir(folder)
    expected = (folder / "expected.txt").read_text(encoding="utf-8").splitlines()
    for attempt in ("cold", "warm"):                     # compiled, then remembered: the same lines
        run = cook(folder, tmp_path)
        assert run.exit_code == 1, (attempt, run.output)
        assert "Traceback" not in run.output
        assert [line for line in run.stderr.splitlines() if ": error: " in line] == expected, attempt
        assert (tmp_path / "out" / "area.level.json").is_file(), "the outputs are still written"


def test_the_shared_world_and_rules_cook_cleanly_with_a_correct_library(tmp_path, monkeypatch):
    """The cases' errors come from their shaders: a correct library cooks both keys without one."""
    library = tmp_path / "case" / "materials"
    library.mkdir(parents=True)
    for name in ("golden.vert", "golden.frag"):
        source = (GOLDEN / "error_only_when_masked" / "materials" / name).read_text()
        library.joinpath(name).write_text(source.replace("color.a < cutoff", "color.a < 0.5"))
    (tmp_path / "world").symlink_to(GOLDEN / "world")
    (tmp_path / "rules").symlink_to(GOLDEN / "rules")
    monkeypatch.chdir(tmp_path / "case")
    run = cook(tmp_path / "case", tmp_path)
    assert run.exit_code == 0, run.output
    assert "2 draws -> 2 keys" in run.stdout and "0 errors" in run.stdout
