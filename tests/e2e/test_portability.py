"""Nothing POSIX-only at import time: with ``fcntl`` unavailable (as on Windows) every
module of the package imports and a small cook runs end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.compilers import toolchain
from test_dependencies import extra_modules
from pipeline.cpus import usable_cpus
from pipeline.outputs.manifest import load_chunk_manifest, stage_hashes
from pipeline.outputs.pak import LIBRARY_NAME, PakReader
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"

MASKED = r'''
import importlib, warnings
warnings.filterwarnings("ignore", "only soft file lock")  # filelock's fallback without fcntl or msvcrt
import importlib, json, pkgutil, sys
sys.modules["fcntl"] = None          # "import fcntl" now raises ImportError
import pipeline
extras = set(sys.argv[4].split(",")) if sys.argv[4] else set()  # need an extra: their libraries' own business
names = sorted(m.name for m in pkgutil.walk_packages(pipeline.__path__, "pipeline.")
               if not m.name.endswith("__main__") and m.name not in extras)  # __main__ runs the CLI
for name in names:
    importlib.import_module(name)
assert "fcntl" not in {k for k, v in sys.modules.items() if v is not None}
from pipeline.cli import main
world, out, cache = sys.argv[1:4]
sys.argv = ["pipeline", "cook", world, "--chunk", "forest/c01", "--out", out, "--cache", cache, "--jobs", "1", "-q"]
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code or 0
print(json.dumps({"modules": len(names), "code": code}))
'''


@pytest.mark.slow
def test_every_module_imports_and_a_cook_runs_without_fcntl(tmp_path):
    out, cache = tmp_path / "build", tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Modules that import an extra at their top (the farm's Dask, the shared cache's fsspec) are left out:
    # only ever imported inside the functions that use them (test_dependencies checks that), and on
    # Windows those libraries lock through msvcrt themselves.
    extras = ",".join(sorted(extra_modules()))
    proc = subprocess.run([sys.executable, "-c", MASKED, str(SAMPLE), str(out), str(cache), extras],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["modules"] > 60 and summary["code"] == 0
    manifests = sorted(p.name for p in out.rglob("*.json"))
    assert "c01.json" in manifests, manifests
    assert list(out.rglob("*.pak")) == [out / LIBRARY_NAME]
    library = PakReader(out / LIBRARY_NAME)
    library.verify()
    assert library.chunks["forest/c01"] and library.chunks["forest/c01"] == stage_hashes(
        load_chunk_manifest(out / "forest" / "c01.json"))


def test_fcntl_really_is_masked_in_that_setup():
    proc = subprocess.run([sys.executable, "-c", 'import sys; sys.modules["fcntl"] = None; import fcntl'],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "import of fcntl halted" in proc.stderr


@pytest.mark.parametrize("platform, names, variable", [
    ("linux", ["libglslang.so"], "LD_LIBRARY_PATH"),
    ("darwin", ["libglslang.dylib", "libglslang.so"], "DYLD_LIBRARY_PATH"),
    ("win32", ["glslang.dll", "libglslang.dll"], "PATH"),
    ("freebsd14", ["libglslang.so"], "LD_LIBRARY_PATH"),
])
def test_library_names_follow_the_platform(platform, names, variable):
    found = toolchain.platform_names(platform)
    assert [p.format(name="glslang") for p in found.library_patterns] == names
    assert found.search_variable == variable
    env = toolchain.tool_env(platform)
    first = env[variable].split(os.pathsep)[0]
    assert Path(first).parent == toolchain.prefix()


def test_library_path_reports_every_name_it_tried():
    with pytest.raises(toolchain.ToolchainError, match=r"glslang\.dll, libglslang\.dll"):
        toolchain.library_path("glslang", platform="win32")


def test_usable_cpus_honours_affinity():
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert usable_cpus() == expected
    if hasattr(os, "sched_getaffinity") and len(os.sched_getaffinity(0)) > 1:
        code = ("import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
                "from pipeline.cpus import usable_cpus; print(usable_cpus())")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.stdout.strip() == "1", proc.stderr
