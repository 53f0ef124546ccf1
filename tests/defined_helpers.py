"""A small ubershader family and its shader library, for the tests of a key's define-based jobs (plan/defined.py,
plan/defined_records.py): the family, its keys, and fixtures that write the library and count the jobs made."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.keys.key import PermutationKey
from pipeline.plan import defined
from pipeline.plan import jobs as _jobs

FAMILY = """shader: t
sources: {vertex: m/a.vert, fragment: m/a.frag}
features:
  TINT: {type: bool}
  LIGHTS: {values: [1, 2]}
passes: {main: {}}
"""
VERT = "#version 450\nlayout(location = 0) in vec3 p;\nvoid main() { gl_Position = vec4(p, 1); }\n"
FRAG = '#version 450\n#include "light.glsl"\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(light()); }\n'
# EXTRA: a define no key sets, which a rule set's `defines:` may add
LIGHT = ("float light() {\n#ifdef EXTRA\n  return 3.0;\n#endif\n#if TINT\n  return 0.5;\n#else\n"
         "  return float(LIGHTS);\n#endif\n}\n")
KEYS = [PermutationKey("t", "main", (("LIGHTS", n), ("TINT", t))) for n in (1, 2) for t in (False, True)]


@pytest.fixture(autouse=True)
def no_generations():
    """Each test starts as a new process does: no generation kept."""
    defined.forget()
    yield
    defined.forget()


@pytest.fixture
def materials(tmp_path: Path) -> Path:
    """The family's shader library: two stages, the fragment one including light.glsl."""
    for name, text in {"m/a.vert": VERT, "m/a.frag": FRAG, "m/light.glsl": LIGHT}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.fixture
def made(monkeypatch) -> list:
    """The jobs make_job makes, as they are made."""
    calls: list = []
    real = _jobs.make_job
    monkeypatch.setattr(_jobs, "make_job", lambda *a, **k: calls.append(a[0].file) or real(*a, **k))
    return calls
