"""Shared pieces of the runtime tests: the skip reason and cooked outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline import api

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
