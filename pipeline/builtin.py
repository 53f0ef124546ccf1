"""Where the built-in rule sets and shader library live.

An installed wheel carries them inside the package (``pipeline/_builtin``); a
source checkout (editable install) reads them from the repository root.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def _builtin(name: str) -> Path:
    inside = PACKAGE_DIR / "_builtin" / name
    return inside if inside.is_dir() else PACKAGE_DIR.parent / name


def builtin_rules_dir() -> Path:
    """Folder of the built-in rule sets (one YAML per shader family)."""
    return _builtin("rules")


def builtin_materials_dir() -> Path:
    """Folder of the built-in shader library."""
    return _builtin("materials")
