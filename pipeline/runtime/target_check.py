"""The targets other than Vulkan in ``pipeline runtime check``: each loaded by its real client where one runs here.

Every key of a family that names its compile targets lists its blobs per target label
(``targets`` of a chunk index entry).  Each distinct program (its stages' blobs) of a
target is checked once, named by the first chunk and key that use it:

- ``webgl2`` / ``es3.0``: the vertex and fragment text linked as one program by Mesa's
  GL driver through EGL (:mod:`pipeline.runtime.gl_client`);
- ``webgpu``: shader modules of the WGSL text and a render pipeline created through
  ``wgpu`` on lavapipe (:mod:`pipeline.runtime.webgpu_client`);
- ``metal``, ``opengl4.5``: no client runs here; the result says so (a Metal blob was
  only checked at cook time, for its entry point).

A client that cannot start here (no ``moderngl``, no EGL, no ``wgpu`` adapter) leaves its
targets unchecked, with the reason, rather than passed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline.outputs.read_outputs import load_chunk
from pipeline.runtime.loader import Failure

NO_CLIENT = {"metal": "no Metal compiler or device runs here: the MSL text was checked at cook time only "
                      "(SPIRV-Cross wrote it from SPIR-V that spirv-val accepted; it declares its entry point)",
             "opengl4.5": "no OpenGL SPIR-V (ARB_gl_spirv) client runs here"}


@dataclass
class TargetCheck:
    """One target label's programs and what its client made of them."""

    target: str
    client: str | None            # the client that loaded them, None when none ran
    programs: int
    created: int = 0
    failed: list[Failure] = field(default_factory=list)
    note: str | None = None       # why no client ran

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_json(self) -> dict:
        return {"target": self.target, "client": self.client, "programs": self.programs, "created": self.created,
                "failed": [f.to_json() for f in self.failed], "note": self.note}


def target_kind(label: str) -> str:
    """A target label's target name: ``webgpu-relaxed`` -> ``webgpu``."""
    return label.split("-", 1)[0]


def gather(out: Path, names: list[str]) -> dict[str, dict[tuple, tuple[str, str, dict[str, bytes]]]]:
    """Label -> program (its stages' blob digests) -> (first chunk, first key, stage -> blob), Vulkan left out."""
    found: dict[str, dict[tuple, tuple[str, str, dict[str, bytes]]]] = {}
    library = None
    for name in names:
        try:
            manifest, library = load_chunk(out, name, library)
        except Exception:  # noqa: BLE001 - an unreadable chunk is reported by the Vulkan check
            continue
        for text, entry in sorted(manifest.keys.items()):
            for label, stages in sorted((entry.targets or {}).items()):
                if target_kind(label).startswith("vulkan"):
                    continue
                program = tuple(sorted(stages.items()))
                if program in found.setdefault(label, {}) or not {"vertex", "fragment"} <= set(stages) \
                        or not all(d in library for d in stages.values()):
                    continue  # a stage that failed to compile is the cook's error, not the client's
                found[label][program] = (name, text, {s: library.get(d) for s, d in stages.items()})
    return found


def check_targets(out: Path | str, names: list[str]) -> list[TargetCheck]:
    """Every non-Vulkan target of the chunks ``names`` under ``out``, through its client."""
    found = gather(Path(out), names)
    checks = []
    for label, programs in sorted(found.items()):
        kind = target_kind(label)
        if kind in ("webgl2", "es3.0"):
            checks.append(_gl(label, programs))
        elif kind == "webgpu":
            checks.append(_webgpu(label, programs))
        else:
            checks.append(TargetCheck(label, None, len(programs), note=NO_CLIENT.get(kind, "no client runs here")))
    return checks


def _open(label: str, programs: dict, make, unavailable) -> tuple[object | None, TargetCheck]:
    """A target's client and its check, or no client and a check saying why nothing was checked."""
    try:
        client = make()
    except unavailable as exc:
        return None, TargetCheck(label, None, len(programs), note=f"not checked: {exc}")
    return client, TargetCheck(label, client.name, len(programs))


def _refused(result: TargetCheck, chunk: str, key: str, why: str | None) -> None:
    if why is None:
        result.created += 1
    else:
        result.failed.append(Failure(chunk, None, key, why))


def _gl(label: str, programs: dict) -> TargetCheck:
    from pipeline.runtime.gl_client import GlClient, GlUnavailable

    client, result = _open(label, programs, GlClient, GlUnavailable)
    if client is None:
        return result
    with client:
        for chunk, key, blobs in programs.values():
            refused = client.link(blobs["vertex"].decode(), blobs["fragment"].decode())
            _refused(result, chunk, key, refused and f"{label} {refused.stage}: GL driver: {refused.log}")
    return result


def _webgpu(label: str, programs: dict) -> TargetCheck:
    from pipeline.runtime.webgpu_client import WebGpuClient, WebGpuUnavailable

    client, result = _open(label, programs, WebGpuClient, WebGpuUnavailable)
    if client is None:
        return result
    for chunk, key, blobs in programs.values():
        refused = client.create(blobs)
        _refused(result, chunk, key, refused and f"{label} {refused[0]}: wgpu: {refused[1]}")
    return result
