"""The README's new-user paths run as written: the quick start that CI runs, and the
from-zero walk-through for a studio's world (its shell block, executed line for line)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paths import REPO
from runtime_helpers import needs_vulkan

ROOT = REPO
README = (ROOT / "README.md").read_text(encoding="utf-8")
sys.path.insert(0, str(ROOT / ".ci"))
import quickstart  # noqa: E402  (.ci/quickstart.py: what CI reads from the README)


def test_the_quick_start_is_two_commands_and_ci_runs_the_second_verbatim() -> None:
    main, tests = quickstart.quickstart_commands(README)
    assert main.endswith("pipeline cook examples/sample_world")
    assert tests.endswith("python3 -m pytest")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "quickstart.py test" in ci and "python3 -m venv" in ci and "mktemp -d" in ci
    assert "pip install" not in ci  # everything is installed by the README's own command


@pytest.mark.parametrize("block, problem", [
    ("```sh\npip install -e .\n```", "two commands"),
    ("```sh\na && pipeline cook x\nb && python3 -m pytest\nc\n```", "two commands"),
    ("no block", "no ```sh block"),
])
def test_a_quick_start_ci_could_not_run_as_written_is_refused(block: str, problem: str) -> None:
    with pytest.raises(SystemExit, match=re.escape(problem)):
        quickstart.quickstart_commands(f"# x\n\n## Quick start\n\n{block}\n\n## Next\n")


def test_the_bootstrap_script_knows_its_two_targets() -> None:
    script = ROOT / "script" / "bootstrap"
    assert os.access(script, os.X_OK)
    shown = subprocess.run([str(script), "--help"], capture_output=True, text=True)
    assert shown.returncode == 0 and "main" in shown.stdout and "test" in shown.stdout
    wrong = subprocess.run([str(script), "everything"], capture_output=True, text=True)
    assert wrong.returncode == 1 and "unknown target 'everything'" in wrong.stderr


def walkthrough() -> str:
    found = re.search(r"<!-- walkthrough:begin -->\n```sh\n(.*?)```\n<!-- walkthrough:end -->", README, re.S)
    assert found, "README.md lost its walkthrough:begin/end block"
    return found.group(1)


@pytest.mark.slow
@needs_vulkan
def test_the_studio_walkthrough_runs_as_written(tmp_path: Path) -> None:
    for name in ("examples", "rules", "materials"):  # the block runs from the repository's root
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PIPELINE_CACHE": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this venv's `pipeline`
    done = subprocess.run(["bash", "-e", "-c", walkthrough()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    build = tmp_path / "mygame" / "build"
    manifests = sorted(p.relative_to(build).as_posix() for p in build.rglob("*.json"))
    assert manifests == ["levels/forest.level.json", "levels/forest/c00.json",
                         "levels/town.level.json", "levels/town/market.json"]
    market = json.loads((build / "levels/town/market.json").read_text())
    assert market["pipelines"], "the cook wrote no pipeline states: reflection is missing"
    assert re.search(r"(\d+) of \1 pipeline states created", done.stdout), done.stdout[-2000:]
    assert "0 validation messages, 0 failures" in done.stdout
