"""pyproject.toml declares exactly what the code imports.

- every runtime dependency is imported by ``pipeline/`` (or, for the compiler
  wheels bound by C ABI, located by ``toolchain.DISTRIBUTIONS``) and has an upper
  bound when it is bound by ABI;
- everything ``pipeline/`` imports is the standard library, the package itself or
  a runtime dependency, and extras are imported only inside functions;
- every package of an extra is imported somewhere in the repository.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

import pytest

from pipeline.cook.compile import toolchain

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
ABI_BOUND = set(toolchain.DISTRIBUTIONS)


def _dist(requirement: str) -> str:
    return _norm(re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0))


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


SELF = _norm(PYPROJECT["project"]["name"])
RUNTIME = {_dist(r): r for r in PYPROJECT["project"]["dependencies"]}
EXTRAS = {extra: {_dist(r) for r in reqs} - {SELF}  # "permutation-pipeline[dask]" points at other extras
          for extra, reqs in PYPROJECT["project"]["optional-dependencies"].items()}
# Loaded by name, never imported: fsspec imports s3fs for s3:// URLs.
PLUGINS = {"s3fs": "fsspec's implementation of s3:// URLs"}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(top-level module, at module level?) for every absolute import in ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    found = []

    def visit(node, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((alias.name.split(".")[0], top) for alias in child.names)
            elif _is_importorskip(child):
                found.append((child.args[0].value.split(".")[0], top))
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.module.split(".")[0], top))
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, False)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                visit(child, False)  # typing only: never runs
            else:
                visit(child, top)

    visit(tree, True)
    return found


def _is_importorskip(node) -> bool:
    """``pytest.importorskip("moto.server")``: an import a test makes by name."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "importorskip"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str))


def _is_type_checking(test) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _distributions_of(module: str) -> set[str]:
    return {_norm(d) for d in md.packages_distributions().get(module, [])}


def _third_party(paths) -> dict[str, set[bool]]:
    seen: dict[str, set[bool]] = {}
    for path in paths:
        for module, top in _imports(path):
            if module in sys.stdlib_module_names or module == "pipeline" or module == "__future__":
                continue
            seen.setdefault(module, set()).add(top)
    return seen


PIPELINE = sorted((ROOT / "pipeline").rglob("*.py"))
EVERYWHERE = PIPELINE + sorted(p for d in ("tests", "bench", "examples") for p in (ROOT / d).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _pipeline_imports(path: Path) -> list[tuple[str, bool]]:
    """(pipeline module, at module level?) for every ``from pipeline.x import`` / ``import pipeline.x``."""
    tree = ast.parse(path.read_text(), str(path))
    found = []

    def visit(node, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom) and child.level == 0 and (child.module or "").startswith("pipeline"):
                found.append((child.module, top))
                found.extend((f"{child.module}.{a.name}", top) for a in child.names)
            elif isinstance(child, ast.Import):
                found.extend((a.name, top) for a in child.names if a.name.startswith("pipeline"))
            nested = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or \
                (isinstance(child, ast.If) and _is_type_checking(child.test))
            visit(child, top and not nested)

    visit(tree, True)
    return found


def extra_modules() -> dict[str, list[str]]:
    """Modules of pipeline/ that import an extra at module level -> the extras' modules they import."""
    found: dict[str, list[str]] = {}
    for path in PIPELINE:
        for module, top in _imports(path):
            if module in sys.stdlib_module_names or module in ("pipeline", "__future__") or not top:
                continue
            dists = _distributions_of(module)
            if dists and not dists & set(RUNTIME):
                found.setdefault(_module_name(path), []).append(module)
    return found


def test_everything_the_package_imports_is_declared():
    undeclared = {}
    for module, levels in _third_party(PIPELINE).items():
        dists = _distributions_of(module)
        assert dists, f"pipeline/ imports {module!r}, which no installed distribution provides"
        if dists & set(RUNTIME):
            continue
        if not [name for name, members in EXTRAS.items() if dists & members]:
            undeclared[module] = sorted(dists)
    assert not undeclared, f"imported by pipeline/ but not declared: {undeclared}"


def test_extras_are_imported_only_where_used():
    """A module importing an extra at its top (farm: distributed; remote: fsspec) is itself imported
    only inside functions, so ``import pipeline.<anything else>`` never needs an extra."""
    lazy = extra_modules()
    assert lazy, "expected the farm and shared-cache modules to import their extras"
    for path in PIPELINE:
        if _module_name(path) in lazy:
            continue
        for module, top in _pipeline_imports(path):
            assert not (top and module in lazy), f"{path.relative_to(ROOT)} imports {module} (needs an extra) at its top"


def test_every_runtime_dependency_is_imported_by_the_package():
    imported = set().union(*(_distributions_of(m) for m in _third_party(PIPELINE)))
    unused = set(RUNTIME) - imported - ABI_BOUND
    assert not unused, f"declared in [project.dependencies] but never imported by pipeline/: {sorted(unused)}"


def test_abi_bound_dependencies_have_upper_bounds():
    for dist in ABI_BOUND:
        assert dist in RUNTIME, dist
        assert "<" in RUNTIME[dist], f"{RUNTIME[dist]} binds by C ABI and needs an upper bound"
    library = toolchain.library_path("glslang")  # and the bound admits what is installed
    assert library.exists()


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_every_extra_package_is_imported_somewhere(extra):
    imported = set().union(*(_distributions_of(m) for m in _third_party(EVERYWHERE)))
    imported |= {"pytest", "pytest-xdist"}  # the runner itself and its -n plugin
    unused = EXTRAS[extra] - imported - set(PLUGINS)
    assert not unused, f"extra [{extra}] declares {sorted(unused)}, imported nowhere"


def test_the_import_scan_sees_nested_and_guarded_imports(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import os\nfrom a.b import c\ndef f():\n    import d\n"
                      "if TYPE_CHECKING:\n    import e\ntry:\n    import g\nexcept ImportError:\n    pass\n")
    assert sorted(_imports(source)) == [("a", True), ("d", False), ("e", False), ("g", True), ("os", True)]
