"""The folders tests read, by name, wherever the test file sits (tests/unit/..., tests/e2e/)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"
GOLDEN = TESTS / "golden"
SAMPLE_WORLD = REPO / "examples" / "sample_world"
