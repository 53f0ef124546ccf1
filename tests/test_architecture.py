"""The house rules of the package: stages import only earlier stages, no import circles, small modules.

The stages follow the data flow (docs/architecture.md):

    base (errors, config, digest, builtin, progress, fileio, cache, facts, plugin_loader, fact_providers) -> rules
    -> world (world, chunks)
    -> scan -> keys -> compilers -> plan -> compile -> outputs -> cook -> report -> runtime -> api -> cli

A rule set is read before any content, so the fact vocabulary the rules read (``facts``) is
base and the scanner only fills it in; the world (config, rules, chunk layout) comes before
the scan that walks it.  A record-kind module of ``pipeline/cache/`` belongs to the stage
whose data it holds.  An import under ``if TYPE_CHECKING:`` is an arrow like any other: it
may point back up only to name the World (``from pipeline.world import World``), which every
stage takes, and it counts in the search for circles.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pipeline"
MAX_LINES = 400

STAGES = [
    ("base", ["pipeline", "pipeline.errors", "pipeline.config", "pipeline.digest", "pipeline.builtin",
              "pipeline.progress", "pipeline.fileio", "pipeline.heap", "pipeline.stamps", "pipeline.cache", "pipeline.facts",
              "pipeline.plugin_loader", "pipeline.fact_providers"]),
    ("rules", ["pipeline.rules"]),
    ("world", ["pipeline.world", "pipeline.chunks"]),
    ("scan", ["pipeline.scan"]),
    ("keys", ["pipeline.keys"]),
    ("compilers", ["pipeline.compilers"]),
    ("plan", ["pipeline.plan"]),
    ("compile", ["pipeline.compile"]),
    ("outputs", ["pipeline.outputs"]),
    ("cook", ["pipeline.cook"]),
    ("report", ["pipeline.report"]),
    ("runtime", ["pipeline.runtime"]),
    ("api", ["pipeline.api", "pipeline.watch"]),
    ("cli", ["pipeline.cli", "pipeline.__main__"]),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def stage_of(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(STAGES):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank is not None, f"{module} belongs to no stage: add it to STAGES and docs/architecture.md"
    return rank


def imports(path: Path) -> list[tuple[str, bool, int, tuple[str, ...]]]:
    """(imported pipeline module, type-only, line, names imported from it) for every import in the file."""
    tree = ast.parse(path.read_text(), str(path))
    type_only_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                type_only_lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    found = []
    for node in ast.walk(tree):
        names: list[tuple[str, str]] = []  # (module, name imported from it, '' for the module itself)
        if isinstance(node, ast.Import):
            names = [(a.name, "") for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [(f"{node.module}.{a.name}", "") if f"{node.module}.{a.name}" in MODULES
                     else (node.module, a.name) for a in node.names]
        by_module: dict[str, list[str]] = {}
        for name, imported in names:
            if name.split(".")[0] == "pipeline" and name in MODULES:
                by_module.setdefault(name, []).append(imported)
        for name, imported_names in by_module.items():
            found.append((name, node.lineno in type_only_lines, node.lineno, tuple(imported_names)))
    return found


def names_the_world(target: str, type_only: bool, imported: tuple[str, ...]) -> bool:
    """A type-only ``from pipeline.world import World``: the one arrow allowed back up."""
    return type_only and target == "pipeline.world" and imported == ("World",)


def test_stages_import_only_earlier_stages() -> None:
    wrong = []
    for module, path in MODULES.items():
        mine = stage_of(module)
        for target, type_only, line, imported in imports(path):
            theirs = stage_of(target)
            if theirs > mine and not names_the_world(target, type_only, imported):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} ({STAGES[mine][0]}) imports "
                             f"{target} ({STAGES[theirs][0]})")
    assert wrong == []


def test_no_import_circles() -> None:
    graph = {m: {t for t, *_ in imports(p) if t != m} for m, p in MODULES.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycles.append(trail[trail.index(target):] + [target] if target in trail else [module, target])
            elif target not in state:
                visit(target, trail + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # a package importing its own submodules (re-exports in __init__) is not a circle
    cycles = [c for c in cycles if not all(c[0] == m or m.startswith(c[0] + ".") or c[0].startswith(m + ".")
                                           for m in c)]
    assert cycles == [], cycles


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module: str) -> None:
    lines = MODULES[module].read_text().count("\n")
    assert lines <= MAX_LINES, f"{module}: {lines} lines"


def test_architecture_page_lists_every_module() -> None:
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    missing = [m for m, p in MODULES.items() if p.name != "__init__.py" and p.name != "__main__.py"
               and f"`{p.relative_to(PACKAGE).as_posix()}`" not in page and f"`{p.stem}`" not in page]
    assert missing == []


# ------------------------------------------------------------------ every module has its test file
def _holds_code(tree: ast.Module) -> bool:
    """More than a docstring, imports and ``__all__``/``__version__``: a module with behaviour to test."""
    for node in tree.body[1 if ast.get_docstring(tree) is not None else 0:]:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) and t.id.startswith("__") and t.id.endswith("__") for t in targets):
                continue
        return True
    return False


def _unit_test_file(path: Path) -> Path:
    """pipeline/outputs/pak.py -> tests/unit/outputs/test_pak.py; a package's __init__.py -> test_package.py."""
    relative = path.relative_to(PACKAGE)
    name = "test_package.py" if path.name == "__init__.py" else f"test_{path.stem}.py"
    return PACKAGE.parent / "tests" / "unit" / relative.parent / name


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports anywhere in it (``from a import b``: both ``a`` and ``a.b``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_every_module_has_its_test_file() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if not _holds_code(ast.parse(path.read_text(), str(path))):
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if path.name == "__init__.py" else parts)
        test = _unit_test_file(path)
        where = test.relative_to(PACKAGE.parent).as_posix()
        if not test.is_file():
            problems.append(f"{module}: no {where}")
        elif module not in _imported(test):
            problems.append(f"{module}: {where} does not import it")
    assert problems == [], "\n".join(problems)
