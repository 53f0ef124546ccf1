"""The chunk indexes of an output folder, found by one walk: every ``*.json`` file but level manifests,
temp files and hidden folders, each with its stamp as a record holds it (what a library settle compares
with the stamps it recorded, :mod:`pipeline.outputs.write_library`)."""

from __future__ import annotations

import operator
import os
from pathlib import Path

from pipeline.outputs import atomic
from pipeline.outputs import manifest as mf
from pipeline.stamps import of_stat


def index_files(out: Path) -> list[str]:
    """Every file under ``out`` that may be a chunk index (``*.json`` but not a level manifest), as sorted
    path strings; hidden folders are skipped."""
    return [path for path, _ in index_stamps(out)]


def index_stamps(out: Path) -> list[tuple[str, list[int] | None]]:
    """:func:`index_files` with the stamp of each, as a record holds it (a list; None when it cannot be
    stat'ed).  A settle walks a thousand of them at 100,000 files: one stat each, no Path made."""
    found, folders, level = [], [os.fspath(out)], mf.LEVEL_SUFFIX + ".json"
    while folders:  # as os.walk: links to folders not followed, folders it cannot list skipped
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    name = entry.name
                    try:
                        folder = entry.is_dir()
                    except OSError:
                        folder = False
                    if folder:
                        if not name.startswith(".") and not entry.is_symlink():
                            folders.append(entry.path)
                    elif name.endswith(".json") and not name.endswith(level) \
                            and not (name.startswith(".") and atomic.is_temp_name(name)):  # temp names: ".<name>..."
                        try:
                            found.append((entry.path, list(of_stat(entry.stat()))))
                        except OSError:
                            found.append((entry.path, None))
        except OSError:
            continue
    found.sort(key=operator.itemgetter(0))
    return found
