"""How the cook's errors are written down: a :class:`~pipeline.errors.CookDiagnostic` per located
problem in the result, one JSON object each in manifests.

Compile errors are grouped (:func:`group_errors`): one mistake in a file every
permutation includes is one error, not one per job, carrying how many keys it
breaks (``count``), one of them (``key``, the first by text), all of them
(``keys``) and the jobs that reported it (``jobs``, their cache keys).

The cook's result names shader library files canonically, by absolute path (the command
line shows them from the working folder); chunk manifests name them from the world's root
(:func:`manifest_prefix`), so outputs are the same whichever folder a cook runs from.
"""

from __future__ import annotations

import os
import posixpath
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from pipeline.compilers.preamble import readable
from pipeline.plan.jobs import JobPlan
from pipeline.compile.scheduler import RunResult
from pipeline.errors import CookDiagnostic, Diagnostic, Location, keys_broken
from pipeline.keys.incremental import CookInput


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


def compile_doc(key: str | None, d: Diagnostic) -> dict:
    """A compiler diagnostic's document, its message readable (a job record may predate the rewording)."""
    return error_doc(key, d) | {"message": readable(d.message)}


def job_users(keys, plan: JobPlan) -> dict[str, list[str]]:
    """Job key -> the texts of the keys that need the job, sorted."""
    users: dict[str, list[str]] = defaultdict(list)
    for key in sorted(keys, key=lambda k: k.text):
        for job_key in dict.fromkeys(plan.all_jobs_for(key)):
            users[job_key].append(key.text)
    return users


def compile_errors(plan: JobPlan, run: RunResult, library: str,
                   users: dict[str, list[str]]) -> list[CookDiagnostic]:
    """The compile errors of a run, grouped (:func:`group_errors`); ``users``: :func:`job_users`;
    ``library``: the shader library's canonical folder."""
    found = []
    for job_key, result in sorted(run.results.items()):
        found += [(job_key, d) for d in result.diagnostics if d.severity == "error"]
    for job_key in sorted(run.cancelled):
        found.append((job_key, cancelled_diagnostic(plan.jobs[job_key], library)))
    return [grouped_error(doc) for doc in group_errors(found, lambda job_key: users.get(job_key, ()))]


def grouped_error(doc: dict) -> CookDiagnostic:
    """A :func:`group_errors` document as the typed error of a cook (``to_json`` gives ``doc`` back)."""
    where = Location(doc["file"], doc.get("line"), doc.get("col"), doc.get("pointer"))
    return CookDiagnostic(where, doc["message"], doc.get("severity", "error"), key=doc.get("key"),
                          keys=tuple(doc.get("keys", ())), jobs=tuple(doc.get("jobs", ())))


def group_errors(found: Iterable[tuple[str, Diagnostic]], keys_of) -> list[dict]:
    """One error document per (file, line, message) over the ``(job key, diagnostic)`` pairs, sorted by
    file and line (on one line, in the order the compiler reported them): ``count`` keys broken
    (``keys_of(job key)`` gives a job's), ``key`` the first of them by text, ``keys`` all, ``jobs`` the
    job keys; ``col`` is the first column reported."""
    groups: dict[tuple, dict] = {}
    for job_key, d in found:
        loc = d.location
        doc = groups.setdefault((loc.file, loc.line, readable(d.message)),
                                {"diagnostic": d, "cols": set(), "keys": set(), "jobs": set()})
        doc["cols"].add(loc.col)
        doc["keys"].update(keys_of(job_key))
        doc["jobs"].add(job_key)
    errors = []
    for (file, line, message), doc in sorted(groups.items(), key=lambda kv: _order(kv[0])):
        cols = sorted(c for c in doc["cols"] if c is not None)
        keys = sorted(doc["keys"])
        errors.append(doc["diagnostic"].to_json() | {
            "col": cols[0] if cols else None, "message": message, "key": keys[0] if keys else None,
            "count": len(keys), "keys": keys, "jobs": sorted(doc["jobs"])})
    return errors


def _order(group: tuple) -> tuple:
    file, line, _ = group
    return (file, line is not None, line or 0)


def breaks(doc: dict, name=lambda key: key) -> str:
    """How an error document names the keys it breaks: `` (key K)`` for one,
    `` (breaks 37 keys, e.g. K)`` for more (``name`` shortens a key for a line)."""
    return keys_broken(doc.get("key"), doc.get("count", 1), name)


def cancelled_diagnostic(job, library: str) -> Diagnostic:
    return Diagnostic(Location(library + job.request.source), "not compiled: stopped by --fail-fast")


def cancelled_doc(key: str | None, job, library: str) -> dict:
    return error_doc(key, cancelled_diagnostic(job, library))


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


def world_named(error: dict, library: str, named: str) -> dict:
    """A manifest error naming a shader library file as the world sees it (``named``), not by its
    canonical path (under ``library``, the library's canonical folder), in its location and in its
    message (a fragment's type clash names the other fragment's file)."""
    file, message = error.get("file"), error.get("message")
    if isinstance(message, str) and library in message:
        error = error | {"message": message.replace(library, named)}
    if isinstance(file, str) and file.startswith(library):
        return error | {"file": named + file[len(library):]}
    return error
