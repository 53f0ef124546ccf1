"""Where a report comes from: tool version, rules hash, the world's git revision, a
timestamp; and the names the glTF files give their materials and nodes.

The timestamp honours ``SOURCE_DATE_EPOCH`` (the reproducible-builds convention), so
a report can be made byte-identical on demand.  Names are read from each file's
JSON with the scanner's own container split; they label rows and draws and never
enter a fact, so permutation keys and their hashes do not change.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from pathlib import Path

import orjson

from pipeline import __version__
from pipeline.digest import stable_hash
from pipeline.errors import PipelineError
from pipeline.scan.gltf.container import split_container


def provenance(world_root: Path, rules_dir: Path) -> dict:
    """``{"tool", "tool_version", "rules_hash", "git_revision", "timestamp"}`` of a report made now."""
    return {"tool": "pipeline", "tool_version": __version__, "rules_hash": rules_hash(rules_dir),
            "git_revision": git_revision(world_root), "timestamp": timestamp()}


def rules_hash(rules_dir: Path) -> str:
    """A hash of every rule-set file's name and bytes (what the keys were derived with)."""
    files = sorted(p for p in Path(rules_dir).rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml"))
    return stable_hash([[p.relative_to(rules_dir).as_posix(), p.read_bytes().hex()] for p in files])


def git_revision(folder: Path) -> str | None:
    """The commit checked out where ``folder`` lives (``+dirty`` with local changes), or None.

    Runs ``git`` with a fixed argument list, no shell, a short timeout and no
    prompts; no git, no repository or any failure gives None.
    """
    git = shutil.which("git")
    if git is None:
        return None
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        head = subprocess.run([git, "-C", str(folder), "rev-parse", "--verify", "-q", "HEAD"],
                              capture_output=True, text=True, timeout=10, env=env, stdin=subprocess.DEVNULL)
        if head.returncode != 0 or not head.stdout.strip():
            return None
        status = subprocess.run([git, "-C", str(folder), "status", "--porcelain", "--untracked-files=no", "--", "."],
                                capture_output=True, text=True, timeout=20, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = "+dirty" if status.returncode == 0 and status.stdout.strip() else ""
    return head.stdout.strip() + dirty


def timestamp() -> str:
    """Now in UTC (``SOURCE_DATE_EPOCH`` when set), ISO 8601 to the second."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    now = dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc) if epoch and epoch.isdigit() \
        else dt.datetime.now(dt.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


def gltf_names(world_root: Path, files: set[str]) -> dict[str, dict[str, dict[int, str]]]:
    """``{file: {"materials": {index: name}, "nodes": {index: name}}}`` for named entries."""
    names = {}
    for file in sorted(files):
        try:
            doc = orjson.loads(split_container((world_root / file).read_bytes(), file).json)
        except (OSError, PipelineError, orjson.JSONDecodeError):
            continue
        if isinstance(doc, dict):
            names[file] = {part: _named(doc.get(part)) for part in ("materials", "nodes")}
    return names


def _named(items) -> dict[int, str]:
    if not isinstance(items, list):
        return {}
    return {i: item["name"] for i, item in enumerate(items)
            if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]}
