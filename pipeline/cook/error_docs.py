"""How the cook's errors are written down: a :class:`~pipeline.errors.CookDiagnostic` per located
problem in the result, one JSON object each in manifests.

The cook's result and messages name shader library files from the working folder
(:func:`display_prefix`); chunk manifests name them from the world's root
(:func:`manifest_prefix`), so outputs are the same whichever folder a cook runs from.
"""

from __future__ import annotations

import os
import posixpath
from collections import defaultdict
from pathlib import Path

from pipeline.cook.jobs import JobPlan
from pipeline.cook.scheduler import RunResult
from pipeline.errors import CookDiagnostic, Diagnostic, Location
from pipeline.keys.incremental import CookInput


def display_prefix(materials_dir: Path) -> str:
    """How compile errors name the shader library: relative to the working directory when inside it."""
    path = materials_dir.resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve())) + "/"
    except ValueError:
        return str(path) + "/"


def manifest_prefix(root: Path, materials_dir: Path) -> str:
    """How chunk manifests name the shader library: relative to the world's root (``../shaders/``
    when beside it), so the outputs do not depend on the folder a cook runs from."""
    path = materials_dir.resolve()
    try:
        return Path(os.path.relpath(path, root.resolve())).as_posix() + "/"
    except ValueError:  # another drive
        return path.as_posix() + "/"


def scan_errors(found: CookInput) -> list[CookDiagnostic]:
    return [cook_error(None, d) for d in found.diagnostics if d.severity == "error"]


def cook_error(key: str | None, d: Diagnostic) -> CookDiagnostic:
    """A diagnostic as an error of the cook, with the key whose job reported it (None for scan and rule errors)."""
    return CookDiagnostic(d.location, d.message, d.severity, key=key)


def error_doc(key: str | None, d: Diagnostic) -> dict:
    """A diagnostic's one JSON shape, plus the key whose job reported it (None for scan and rule errors)."""
    return cook_error(key, d).to_json()


def compile_errors(plan: JobPlan, run: RunResult, prefix: str, first_key: dict[str, str]) -> list[CookDiagnostic]:
    """One error per (job diagnostic), naming the first key (by text) that needs the job."""
    errors = []
    for job_key, result in sorted(run.results.items()):
        errors += [cook_error(first_key.get(job_key), d) for d in result.diagnostics if d.severity == "error"]
    for job_key in run.cancelled:
        errors.append(cancelled_error(first_key.get(job_key), plan.jobs[job_key], prefix))
    return errors


def cancelled_error(key: str | None, job, prefix: str) -> CookDiagnostic:
    return cook_error(key, Diagnostic(Location(prefix + job.request.source), "not compiled: stopped by --fail-fast"))


def cancelled_doc(key: str | None, job, prefix: str) -> dict:
    return cancelled_error(key, job, prefix).to_json()


def compact(doc: dict) -> dict:
    """An error as a manifest stores it: without the empty fields (every manifest error is an error)."""
    return {k: v for k, v in doc.items() if v is not None and k != "severity"}


def errors_by_chunk(found, chunk_levels: dict[str, str]) -> dict[str, list[dict]]:
    """Scan and rule errors by the chunk folder holding their file (grid cells get none)."""
    by_chunk: dict[str, list[dict]] = defaultdict(list)
    for d in found.diagnostics:
        folder = posixpath.dirname(d.location.file) or "."
        if d.severity == "error" and folder in chunk_levels:
            by_chunk[folder].append(compact(error_doc(None, d)))
    return by_chunk


def world_named(error: dict, shown: str, named: str) -> dict:
    """A manifest error naming a shader library file as the world sees it (``named``), not as the
    working folder does (``shown``, the display prefix)."""
    file = error.get("file")
    if isinstance(file, str) and file.startswith(shown):
        return error | {"file": named + file[len(shown):]}
    return error
