"""Hostile inputs to the readers of outputs and logs: ``pipeline check-log`` and ``pipeline runtime check``.

Each case runs the real command line in a subprocess with a timeout (a hang fails
instead of blocking) and, for ``check-log``, an address-space limit (an endless read
fails with a MemoryError instead of filling the machine).  A user error is one located
line and exit code 1, never a traceback; a log's good lines are still classified next
to its bad ones; a ``runtime check`` that finds nothing to check says so and fails.
The outputs are a real cook (real glslang) of a world whose one glTF file lies in its
root, so its only chunk is the root's (``.root.json``); ``runtime check`` runs on
lavapipe.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import api
from pipeline.errors import PipelineError
from pipeline.runtime.misses import MissLog

from runtime_helpers import SAMPLE, chunk_index, needs_vulkan  # noqa: E402
from paths import REPO
from robust_helpers import one_error_line

ROOT = REPO
LABEL = "pbr/forward"


@pytest.fixture(scope="module")
def cooked(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(world, cache, out) of a world whose only chunk is its root's, cooked."""
    tmp = tmp_path_factory.mktemp("root_world")
    world = tmp / "world"
    world.mkdir()
    shutil.copy(SAMPLE / "pipeline.toml", world / "pipeline.toml")
    shutil.copy(SAMPLE / "town" / "market" / "car.glb", world / "car.glb")
    result = api.cook(world, cache=tmp / "cache", out=tmp / "out", jobs=2)
    assert result.ok, result.errors
    assert sorted(p.name for p in (tmp / "out").iterdir()) == [".root.json", ".root.level.json", "shaders.chunks", "shaders.pak"]
    return world, tmp / "cache", tmp / "out"


def _limited() -> None:  # in the child: an endless read ends in a MemoryError, not in swapping
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def pipeline(*args: object, limit_memory: bool = False, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout, preexec_fn=_limited if limit_memory else None)


def check_log(cooked, log: Path, *extra: str) -> subprocess.CompletedProcess:
    world, cache, out = cooked
    return pipeline("check-log", world, log, "--out", out, "--cache", cache, *extra, limit_memory=True, timeout=60)


# ------------------------------------------------------------------ check-log: the file itself
def test_a_fifo_log_is_refused_at_once(cooked, tmp_path: Path) -> None:
    log = tmp_path / "misses.jsonl"
    os.mkfifo(log)  # opened for reading, it would block until a writer comes
    assert one_error_line(check_log(cooked, log)) == f"{log}: error: cannot read miss log: not a regular file (a FIFO)"


def test_dev_zero_as_a_log_is_refused(cooked) -> None:
    assert one_error_line(check_log(cooked, Path("/dev/zero"))) == \
        "/dev/zero: error: cannot read miss log: not a regular file (a device)"


def test_a_log_over_the_size_limit_is_refused(cooked, tmp_path: Path) -> None:
    from pipeline.runtime.misses import MAX_LOG_BYTES

    log = tmp_path / "misses.jsonl"
    with open(log, "wb") as f:  # sparse: over the limit without writing it
        f.truncate(MAX_LOG_BYTES + 1)
    assert one_error_line(check_log(cooked, log)) == \
        f"{log}: error: file is {MAX_LOG_BYTES + 1} bytes, over the limit of {MAX_LOG_BYTES}"


# ------------------------------------------------------------------ check-log: line by line
BAD_LINES = [  # (line as written, the message of its located error)
    ('{"chunk": 5, "key": "pbr/forward{}", "draw": {}}', 'not a miss record ("chunk" must be a chunk name, not a number)'),
    ('{"chunk": ".", "key": ["pbr/forward{}"], "draw": {}}', 'not a miss record ("key" must be a key or null, not a list)'),
    ('{"chunk": ".", "key": null, "draw": {"file": ["car.glb"]}, "pass": "pbr/forward"}',
     'not a miss record ("draw.file" must be a string, a number or null, not a list)'),
    ('{"chunk": ".", "key": null, "draw": {}, "pass": 3}',
     'not a miss record ("pass" must be a pass name or null, not a number)'),
    ('{"chunk": ".", "key": null, "draw": "car.glb"}', 'not a miss record ("draw" must be an object, not a string)'),
    ('[1, 2]', "not a miss record (a list, not an object)"),
    ('{"chunk": "nowhere/x", "key": null, "draw": {}, "pass": "pbr/forward"}', "no chunk 'nowhere/x' in the world"),
]


def _good_record(out: Path) -> tuple[str, dict]:
    """A key and draw the cooked root chunk holds."""
    record = next(r for r in chunk_index(out, ".").draws if r["variant"] is None and LABEL in r["passes"])
    return record["passes"][LABEL]["key"], {f: record[f] for f in ("file", "node", "mesh", "primitive", "material",
                                                                    "variant")}


def test_each_bad_line_is_located_and_the_good_lines_are_still_classified(cooked, tmp_path: Path) -> None:
    key, draw = _good_record(cooked[2])
    log = tmp_path / "misses.jsonl"
    MissLog(log).append(key=key, chunk=".", draw=draw, pass_=LABEL)               # line 1: good
    with open(log, "a") as f:
        f.write("".join(text + "\n" for text, _ in BAD_LINES))                  # lines 2..8: bad
    MissLog(log).append(key=None, chunk=".", draw=dict(draw, node=999), pass_=LABEL)  # last line: good
    last = len(BAD_LINES) + 2

    proc = check_log(cooked, log)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines() == [f"{log}:{n}: error: {message}" for n, (_, message) in enumerate(BAD_LINES, 2)]
    shown = proc.stdout.splitlines()
    assert shown[0].startswith(f"{log}:1: note: cooked: {key} for car.glb")
    assert shown[1].startswith(f"{log}:{last}: error: runtime: None for car.glb")
    assert shown[-1] == "2 misses: 1 covered, 1 not covered"

    doc = json.loads(check_log(cooked, log, "--json").stdout)
    assert [(m["line"], m["status"], m["covered"]) for m in doc["misses"]] == [(1, "cooked", True),
                                                                               (last, "runtime", False)]
    assert [(e["line"], e["message"]) for e in doc["errors"]] == [(n, m) for n, (_, m) in enumerate(BAD_LINES, 2)]


# ------------------------------------------------------------------ runtime check: never a pass that checked nothing
@needs_vulkan
def test_runtime_check_checks_the_world_roots_chunk(cooked) -> None:
    proc = pipeline("runtime", "check", cooked[2], "--json", timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["chunks"] == ["."] and doc["pipelines"] == doc["created"] > 0
    assert doc["validation_errors"] == [] and doc["failed"] == []


@needs_vulkan
@pytest.mark.parametrize("what", ["empty", "world"])
def test_runtime_check_of_a_folder_without_outputs_fails(cooked, tmp_path: Path, what: str) -> None:
    folder = cooked[0] if what == "world" else tmp_path / "empty"
    folder.mkdir(exist_ok=True)
    line = one_error_line(pipeline("runtime", "check", folder, timeout=300))
    assert line.startswith(f"{folder}: error: found no outputs to check")


@needs_vulkan
def test_runtime_check_of_dev_null_fails() -> None:
    line = one_error_line(pipeline("runtime", "check", "/dev/null", timeout=300))
    assert "/dev/null" in line and "error:" in line
    with pytest.raises(PipelineError) as caught:
        api.runtime_check("/dev/null")
    (problem,) = caught.value.diagnostics
    assert (problem.file, problem.message) == ("/dev/null", "not a folder of cooked outputs: found no outputs to check")
