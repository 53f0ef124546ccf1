"""Failing inputs as data: tests/golden/gltf/<case>/input.* and the exact expected error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import WorldConfig
from pipeline.scan.scanner import scan_file
from paths import TESTS

CASES = sorted(p for p in (TESTS / "golden" / "gltf").iterdir() if p.is_dir())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_error_line(case: Path) -> None:
    source = next(p for p in case.iterdir() if p.name.startswith("input."))
    draws, diagnostics = scan_file(source, root=case, chunk_name=".", level=".", config=WorldConfig())
    assert draws == []
    assert [str(d) for d in diagnostics] == [(case / "expected.txt").read_text().strip()]
