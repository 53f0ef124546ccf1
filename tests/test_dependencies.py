"""pyproject.toml declares exactly what the code, the tests and the benches import.

- every runtime dependency is imported by ``pipeline/`` (or, for the compiler
  wheels bound by C ABI, located by ``toolchain.DISTRIBUTIONS``) and has an upper
  bound when it is bound by ABI;
- everything ``pipeline/`` imports is the standard library, the package itself or
  a runtime dependency, and extras are imported only inside functions;
- everything ``tests/`` imports is declared by the runtime dependencies or the
  ``test`` extra (with the extras it names), everything ``bench/`` imports by the
  runtime dependencies or the ``bench`` extra, everything ``examples/`` imports by
  the runtime dependencies; a module no installed distribution provides fails here
  first, with the file that imports it, rather than as a collection error;
- every package of an extra is imported somewhere in the repository.

Reads source text only, and asks ``importlib.metadata`` once: it takes seconds.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

import pytest

from pipeline.compilers import toolchain

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


@functools.cache
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


@functools.cache
def _installed() -> dict[str, list[str]]:
    return md.packages_distributions()  # walks every installed distribution's file list: once


def _distributions_of(module: str) -> set[str]:
    return {_norm(d) for d in _installed().get(module, [])}


def _declared(extra: str | None) -> set[str]:
    """The distributions a suite may import: the runtime dependencies, plus ``extra`` and the
    extras it names through ``permutation-pipeline[...]``."""
    declared, todo, seen = set(RUNTIME), [extra] if extra else [], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for requirement in PYPROJECT["project"]["optional-dependencies"][name]:
            if _dist(requirement) == SELF:
                todo.extend(x.strip() for x in re.search(r"\[(.*)\]", requirement).group(1).split(","))
            else:
                declared.add(_dist(requirement))
    return declared


def _third_party(paths) -> dict[str, set[bool]]:
    return {module: {top for top, _ in uses} for module, uses in _third_party_uses(paths).items()}


def _third_party_uses(paths) -> dict[str, set[tuple[bool, Path]]]:
    """Third-party module -> (at module level?, file) of every import of it; a module that is a
    file or folder beside the importing file (tests' helpers, bench scripts) is local."""
    seen: dict[str, set[tuple[bool, Path]]] = {}
    for path in paths:
        for module, top in _imports(path):
            if module in sys.stdlib_module_names or module in ("pipeline", "__future__") or _is_local(path, module):
                continue
            seen.setdefault(module, set()).add((top, path))
    return seen


def _is_local(path: Path, module: str) -> bool:
    """A module beside ``path``, or a script of the repository's own folders (tests import bench/'s)."""
    return any((folder / f"{module}.py").exists() or (folder / module / "__init__.py").exists()
               for folder in (path.parent, *(ROOT / f for f in ("tests", "bench", "examples", ".ci"))))


PIPELINE = sorted((ROOT / "pipeline").rglob("*.py"))
EVERYWHERE = PIPELINE + sorted(p for d in ("tests", "bench", "examples") for p in (ROOT / d).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
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


SUITES = {"tests": "test", "bench": "bench", "examples": None}


@pytest.mark.parametrize("folder", sorted(SUITES))
def test_everything_the_tests_benches_and_examples_import_is_declared(folder):
    """A fresh ``pip install -e '.[test,bench]'`` must give every import its distribution:
    one the machine happens to have, but pyproject.toml does not name, fails here."""
    declared = _declared(SUITES[folder])
    problems = []
    for module, uses in sorted(_third_party_uses(sorted((ROOT / folder).rglob("*.py"))).items()):
        where = ", ".join(sorted(str(p.relative_to(ROOT)) for _, p in uses)[:3])
        dists = _distributions_of(module)
        if not dists:
            problems.append(f"{where} imports {module!r}, which no installed distribution provides")
        elif not dists & declared:
            problems.append(f"{where} imports {module!r} from {sorted(dists)}, not declared for {folder}/")
    extra = f"[{SUITES[folder]}] extra" if SUITES[folder] else "runtime dependencies"
    assert not problems, f"declare these in pyproject.toml's {extra}:\n" + "\n".join(problems)


def test_a_test_importing_an_undeclared_package_is_caught(tmp_path):
    """The check above can fail: a module no distribution provides, and one that is installed but
    not declared for the suite, are both reported."""
    (tmp_path / "test_x.py").write_text("import surely_not_a_module_here\nimport pytest\nimport helper\n")
    (tmp_path / "helper.py").write_text("")
    uses = _third_party_uses([tmp_path / "test_x.py"])
    assert set(uses) == {"surely_not_a_module_here", "pytest"}  # helper.py beside it is local
    assert not _distributions_of("surely_not_a_module_here")
    assert _distributions_of("pytest") & _declared("test") and not _distributions_of("pytest") & _declared(None)


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
