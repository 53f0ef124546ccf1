"""Shared pieces of the runtime tests: the skip reason and cooked outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline import api
from pipeline.outputs import manifest as mf
from pipeline.structs import replace

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sample_world"


def vulkan_skip_reason() -> str | None:
    if shutil.which("spirv-cross") is None:
        return "spirv-cross (Debian package) is not installed: manifests carry no pipeline states"
    try:
        from pipeline.runtime.device import available
    except ImportError as exc:  # pragma: no cover - the bindings are in the test extra
        return f"the Vulkan bindings are not installed ({exc})"
    return available()


REASON = vulkan_skip_reason()
needs_vulkan = pytest.mark.skipif(REASON is not None, reason=f"Vulkan cannot run here: {REASON}")


def cook(world: Path, tmp: Path, **kwargs) -> Path:
    result = api.cook(api.open_world(world), cache=tmp / "cache", out=tmp / "out", jobs=2, **kwargs)
    assert not result.warnings, result.warnings
    return tmp / "out"


def cook_twin_chunks(tmp: Path) -> Path:
    """The outputs of two chunks, ``c02`` and ``c03``, holding the same file (the sample's ``forest/c02``):
    the same pipeline states, by id, in both."""
    for chunk in ("c02", "c03"):
        shutil.copytree(SAMPLE / "forest" / "c02", tmp / "world" / chunk)
    return cook(tmp / "world", tmp)


def chunk_index(out: Path, chunk: str) -> mf.ChunkManifest:
    """A cooked chunk's index, read as every reader reads it (its reflection is in the library)."""
    return mf.load_chunk_manifest(mf.chunk_manifest_path(out, chunk))


def fail_key(out: Path, chunk: str, key: str) -> mf.ChunkManifest:
    """Rewrite the chunk's index as a cook writes it when every stage of ``key`` failed to compile: the
    key without stage blobs, no pipeline state of it, its draws left with their pass's fallback only,
    and an error naming it.  Returns the index as it was."""
    manifest = chunk_index(out, chunk)
    gone = {pid for pid, state in manifest.pipelines.items() if state["key"] == key}
    draws = tuple({**d, "passes": {label: {k: v for k, v in use.items() if not (k == "pipeline" and v in gone)}
                                   for label, use in d["passes"].items()}} for d in manifest.draws)
    failed = replace(manifest, keys={**manifest.keys, key: replace(manifest.keys[key], stages={})},
                     pipelines={p: s for p, s in manifest.pipelines.items() if p not in gone}, draws=draws,
                     errors=(*manifest.errors, {"key": key, "message": "compile failed"}))
    mf.chunk_manifest_path(out, chunk).write_bytes(mf.dump_json(failed.to_json()))
    return manifest


def egl_skip_reason() -> str | None:
    """Why no GL context opens through EGL here (None: it does)."""
    try:
        from pipeline.runtime.gl_client import available
    except ImportError as exc:  # pragma: no cover - the module itself needs nothing outside the package
        return str(exc)
    return available()


def wgpu_skip_reason() -> str | None:
    """Why no wgpu device opens here (None: it does)."""
    from pipeline.runtime.webgpu_client import available
    return available()


def naga_skip_reason() -> str | None:
    """Why the webgpu target cannot translate to WGSL here: no Node.js or no naga-wasm (None: it can)."""
    from pipeline.compilers import wgsl
    from pipeline.compilers.toolchain import ToolchainError
    try:
        wgsl.node(), wgsl.package_dir()
    except ToolchainError as exc:
        return str(exc)
    return None


EGL_REASON, WGPU_REASON, NAGA_REASON = egl_skip_reason(), wgpu_skip_reason(), naga_skip_reason()
needs_egl = pytest.mark.skipif(EGL_REASON is not None, reason=f"no GL context through EGL here: {EGL_REASON}")
needs_wgpu = pytest.mark.skipif(WGPU_REASON is not None, reason=f"no wgpu device here: {WGPU_REASON}")
needs_naga = pytest.mark.skipif(NAGA_REASON is not None, reason=f"naga-wasm or Node.js not installed: {NAGA_REASON}")
