"""Fact providers run over scanned draws: each draw gets its ``ext.<provider>.<fact>`` values.

:func:`with_provided_facts` is called where draws become keys (a whole scan's, or one
chunk's on the incremental path, in this process or a forked worker alike): for every
provider the rule sets name (:mod:`pipeline.fact_providers`), each glTF file's sidecar
is read once and handed to the provider's ``read``, then each of the file's draws to
``provide``; the answers are checked against the declaration.  Draws with equal facts
and equal answers share one facts object, so rules still run once per signature.

A provider that raises, or answers a name it did not declare or a value of the wrong
type, is one located error for that file (at the sidecar's line for a sidecar that is
not valid JSON, else at the glTF file) naming the provider, its own line and the first
draw it failed on; those draws get no keys, and every other draw and file keeps its own.

:func:`sidecar_stamps` is what a chunk's fingerprint adds per glTF file: the stamp of
each sidecar (a missing one as its path alone), so editing a sidecar re-evaluates its
chunk and nothing else.
"""

from __future__ import annotations

import inspect
import json
import os
import traceback
from collections.abc import Iterable, Mapping
from pathlib import Path

from pipeline.errors import Diagnostic, Location
from pipeline.fact_providers import FactDraw, ProviderSpec, check_value
from pipeline.facts import Draw
from pipeline.plugin_loader import load_attribute
from pipeline.stamps import stamp_of
from pipeline.structs import replace

MAX_SIDECAR_BYTES = 64 * 2**20


def providers_of(rulesets: Iterable) -> tuple[ProviderSpec, ...]:
    """Every fact provider the rule sets name, once each, by name."""
    found: dict[str, ProviderSpec] = {}
    for rs in rulesets:
        for spec in rs.compiled.providers:
            found.setdefault(spec.name, spec)
    return tuple(found[name] for name in sorted(found))


def sidecar_stamps(providers: tuple[ProviderSpec, ...], root: Path | str, file: str) -> list:
    """``[path, *stamp]`` of each provider's sidecar of ``file`` (``[path]`` when it does not exist)."""
    out = []
    for spec in providers:
        path = spec.sidecar_of(file)
        out.append([path, *(stamp_of(os.path.join(root, path)) or ())])
    return out


def with_provided_facts(scanned, rulesets: Iterable):
    """``scanned`` (a :class:`~pipeline.scan.scanner.ScanResult`) with its draws' provided facts, and
    the providers' errors among its diagnostics; itself when no rule set names a provider."""
    providers = providers_of(rulesets)
    if not providers or not scanned.draws:
        return scanned
    draws, problems = provide(providers, Path(scanned.root), scanned.draws)
    return replace(scanned, draws=draws, diagnostics=[*scanned.diagnostics, *problems], _signatures={})


def provide(providers: tuple[ProviderSpec, ...], root: Path, draws: list[Draw]) -> tuple[list[Draw], list[Diagnostic]]:
    """The draws with their provided facts (failed ones left out), and one error per failing file and provider."""
    by_file: dict[str, list[int]] = {}
    for i, draw in enumerate(draws):
        by_file.setdefault(draw.source.file, []).append(i)
    values: list[dict] = [{} for _ in draws]
    failed: set[int] = set()
    problems: list[Diagnostic] = []
    for spec in providers:
        for file, indices in by_file.items():
            bad, problem = _run(spec, root, file, [draws[i] for i in indices], [values[i] for i in indices])
            failed.update(indices[j] for j in bad)
            if problem is not None:
                problems.append(problem)
    shared: dict[tuple, object] = {}
    out = []
    for i, draw in enumerate(draws):
        if i in failed:
            continue
        ext = {name: values[i][name] for name in sorted(values[i])}
        token = (id(draw.facts), repr(ext))
        facts = shared.get(token)
        if facts is None:
            facts = shared[token] = replace(draw.facts, ext={**draw.facts.ext, **ext})
        out.append(replace(draw, facts=facts))
    return out, problems


def _run(spec: ProviderSpec, root: Path, file: str, draws: list[Draw], into: list[dict]
         ) -> tuple[list[int], Diagnostic | None]:
    """One provider over one file's draws: the indices that failed, and the file's error."""
    sidecar = spec.sidecar_of(file)
    provider = spec.plugin()
    try:
        data = _sidecar_bytes(root / sidecar)
    except OSError as exc:
        return list(range(len(draws))), Diagnostic(Location(sidecar), f"fact provider '{spec.name}': cannot read "
                                                                      f"its sidecar: {exc.strerror or exc}")
    gltf = root / file
    try:
        data = provider.read(gltf, data) if callable(getattr(provider, "read", None)) else data
    except Exception as exc:  # the provider's own code: any failure is that file's located error
        return list(range(len(draws))), _raised(spec, exc, file, sidecar, "read")
    failed, first = [], None
    for j, draw in enumerate(draws):
        source = draw.source
        view = FactDraw(source.file, source.node, source.mesh, source.primitive, source.material, source.variant,
                        draw.facts)
        try:
            answer = _checked(spec, provider.provide(data, view))
        except Exception as exc:
            failed.append(j)
            first = first or _raised(spec, exc, file, sidecar, "provide", draw)
            continue
        into[j][spec.name] = answer
    if first is not None and len(failed) > 1:
        first = replace(first, message=f"{first.message} (and {len(failed) - 1} more draws of the file)")
    return failed, first


class _Answer(Exception):
    """A provider's answer that is not what it declared."""


def _checked(spec: ProviderSpec, answer) -> dict:
    if not isinstance(answer, Mapping):
        raise _Answer(f"answered {type(answer).__name__}, not a mapping of fact names to values")
    declared = dict(spec.facts)
    out = {}
    for name in sorted(answer, key=str):
        if name not in declared:
            raise _Answer(f"answered fact '{name}', which it does not declare (declared: {', '.join(declared)})")
        try:
            out[name] = check_value(declared[name], answer[name])
        except ValueError as exc:
            raise _Answer(f"answered {name} = {exc}") from None
    return {name: out.get(name) for name in declared}


def _sidecar_bytes(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_SIDECAR_BYTES:
                raise OSError(f"larger than {MAX_SIDECAR_BYTES} bytes")
            data = f.read(size + 1)  # to its size: a buffered read of the cap would reserve the whole cap first
    except FileNotFoundError:
        return None
    if len(data) > MAX_SIDECAR_BYTES:
        raise OSError(f"larger than {MAX_SIDECAR_BYTES} bytes")
    return data


def _raised(spec: ProviderSpec, exc: Exception, file: str, sidecar: str, method: str, draw: Draw | None = None
            ) -> Diagnostic:
    """The located error of a provider's failure on ``file``: at the sidecar's line when it is not valid
    JSON, else at the glTF file; the message names the provider, its line and the draw."""
    which = ""
    if draw is not None:
        s = draw.source
        which = f" on draw node {s.node} mesh {s.mesh} primitive {s.primitive}" + \
            (f" variant {s.variant}" if s.variant is not None else "")
    if isinstance(exc, _Answer):
        return Diagnostic(Location(file), f"fact provider '{spec.name}' {exc}{which} ({_where(spec, exc, 'provide')})")
    what = f"fact provider '{spec.name}' raised {type(exc).__name__}: {exc}{which} ({_where(spec, exc, method)})"
    if isinstance(exc, json.JSONDecodeError):
        return Diagnostic(Location(sidecar, exc.lineno, exc.colno), what)
    return Diagnostic(Location(file), what)


def _where(spec: ProviderSpec, exc: Exception, method: str) -> str:
    """``path:line`` of the provider's own line that raised (else of its ``method``)."""
    spec_file = spec.ref.spec.rpartition(":")[0]
    try:
        target = load_attribute(spec.ref.spec, spec.ref.code)
        source = inspect.getsourcefile(target if isinstance(target, type) else type(target)) or spec_file
    except TypeError:
        source = spec_file
    source = str(Path(source).resolve())
    if not isinstance(exc, _Answer):
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if str(Path(f.filename).resolve()) == source]
        if frames:
            return f"{source}:{frames[-1].lineno}"
    try:
        return f"{source}:{inspect.getsourcelines(getattr(spec.plugin(), method))[1]}"
    except (TypeError, OSError, AttributeError):
        return source
