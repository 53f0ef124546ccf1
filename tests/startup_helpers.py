"""``pipeline`` processes run as a user runs them (this checkout's package, no cache or scheduler from the
environment), and one that reports the modules it imported: what start-up tests compare."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from paths import REPO

PROBE = ("import sys, json, atexit, os\n"
         "atexit.register(lambda: open(os.environ['MODULES_OUT'], 'w').write(json.dumps(sorted(sys.modules))))\n"
         "from pipeline.__main__ import run\n"
         "sys.argv = ['pipeline'] + sys.argv[1:]\n"
         "run()\n")
HEAVY = ("click", "pydantic", "numpy", "msgspec", "yaml", "diskcache", "pipeline.api", "pipeline.scan")


def pipeline_env(**extra: str) -> dict[str, str]:
    """This process's environment for a ``pipeline`` process of this checkout, without ``PIPELINE_CACHE`` and
    ``PIPELINE_SCHEDULER`` (a test names its cache and scheduler itself)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **extra}
    env.pop("PIPELINE_CACHE", None)
    env.pop("PIPELINE_SCHEDULER", None)
    return env


def pipeline(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    """``pipeline ARGS`` in ``cwd`` (``python -m pipeline``), its output captured as text."""
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], cwd=cwd, env=pipeline_env(),
                          capture_output=True, text=True, timeout=600)


def probe_run(args: list[str], cwd: Path, modules: Path) -> subprocess.CompletedProcess:
    """``pipeline ARGS`` in ``cwd``, writing the names of every module it imported to ``modules``."""
    return subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, env=pipeline_env(MODULES_OUT=str(modules)),
                          capture_output=True, text=True, timeout=600)


def heavy_loaded(modules: Path) -> list[str]:
    """The modules of ``HEAVY`` (and their submodules) that a probed process imported."""
    return [m for m in json.loads(modules.read_text()) if m.split(".")[0] in {h.split(".")[0] for h in HEAVY}
            and any(m == h or m.startswith(h + ".") for h in HEAVY)]
