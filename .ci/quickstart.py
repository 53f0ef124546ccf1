"""Print one of the README's two quick-start commands: `main` (cook the sample world) or `test`.

The quick-start block is the first ``sh`` code block under the README's "## Quick start"
heading; it holds exactly two commands, the first ends by cooking the sample world and the
second by running pytest. Anything else is an error: CI must run what a new user reads.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def quickstart_commands(text: str) -> list[str]:
    section = text.split("\n## Quick start", 1)
    if len(section) < 2:
        raise SystemExit("README.md: error: no '## Quick start' section")
    block = re.search(r"```sh\n(.*?)```", section[1].split("\n## ", 1)[0], re.S)
    if block is None:
        raise SystemExit("README.md: error: the quick-start section has no ```sh block")
    commands = [line.strip() for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]
    if len(commands) != 2 or "pipeline cook" not in commands[0] or "pytest" not in commands[1]:
        raise SystemExit(f"README.md: error: the quick start must be two commands, a cook then the tests: {commands}")
    return commands


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "test"
    print(quickstart_commands(README.read_text(encoding="utf-8"))[0 if which == "main" else 1])
