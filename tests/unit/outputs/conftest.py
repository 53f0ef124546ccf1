"""Fixtures of the output writers' tests."""

from __future__ import annotations

import pytest

from pipeline.cache.store import Store


@pytest.fixture
def store(tmp_path):
    """A store in the test's own folder."""
    with Store(tmp_path / "cache") as s:
        yield s
