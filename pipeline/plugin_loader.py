"""Plug-in references resolved and loaded: the one loader of every plug-in kind.

A plug-in is named by a *reference*: an entry-point name of its kind's group (a studio's
pip-installable package), ``module:attribute`` (an importable module) or
``path/to/file.py:attribute`` (relative to the file that names it: ``pipeline.toml``
or the rule set).  The attribute is the plug-in object, or a class made with no
arguments (a generator's class is made with the shader library, as the built-in
generators are).

:class:`PluginRef` is a resolved reference: the name, an importable ``spec`` every
process loads the same way (a pool worker, a Dask worker), the declared ``version``
and ``code``, the SHA-256 of the plug-in's module source (the whole top-level
package for a module in a package).  ``(name, version, code)`` goes into the key of
everything the plug-in touched, so editing its code redoes exactly that.

The kinds and their entry-point groups are :data:`GROUPS`; the interfaces live with
the stage that runs them (:mod:`pipeline.compilers.plugins` for transforms and
backends, :mod:`pipeline.plan.generate` for generators, :mod:`pipeline.fact_providers`
for fact providers).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

import msgspec

GROUPS = {"transform": "permutation_pipeline.transforms", "generator": "permutation_pipeline.generators",
          "backend": "permutation_pipeline.backends", "facts": "permutation_pipeline.facts"}


class PluginError(ValueError):
    """A plug-in reference that cannot be resolved or loaded (the message says why)."""


class PluginRef(msgspec.Struct, frozen=True):
    """A resolved plug-in: what every process loads, and what goes into a job key."""

    kind: str        # transform, generator, backend or facts
    name: str        # the reference as written, or the entry-point name
    spec: str        # module:attribute or /absolute/file.py:attribute
    version: str
    code: str        # SHA-256 of its module source

    @property
    def identity(self) -> tuple[str, str, str]:
        return (self.name, self.version, self.code)

    @property
    def shown(self) -> str:
        """How messages name it: ``unroll 1.0 (3f2a9c01b7de)``."""
        return f"{self.name} {self.version} ({self.code[:12]})".replace("  ", " ")


_POINTS: dict = {}  # the finder -> its entry points by group: every installed package's metadata read once


def _points(kind: str) -> tuple:
    """The entry points of a kind's group.  Every group is read at the first ask, in one pass over the
    installed packages, and once per process (a cook of ``pipeline watch`` asks on each save).
    ``importlib.metadata`` is imported here: a cook that names no installed plug-in does without it."""
    import importlib.metadata

    find = importlib.metadata.entry_points
    if find not in _POINTS:
        found = find()
        _POINTS[find] = {group: tuple(found.select(group=group)) for group in GROUPS.values()}
    return _POINTS[find][GROUPS[kind]]


def _entry_point(kind: str, name: str):
    found = [ep for ep in _points(kind) if ep.name == name]
    return found[0] if found else None


def entry_point_names(kind: str) -> dict[str, str]:
    """The installed plug-ins of a kind: entry-point name -> ``module:attribute``."""
    return {ep.name: ep.value for ep in sorted(_points(kind), key=lambda ep: ep.name)}


def resolve(kind: str, reference: str, base: Path) -> PluginRef:
    """A reference (entry-point name, ``module:attr`` or ``file.py:attr`` relative to ``base``) resolved
    and loaded once here; raises :class:`PluginError`."""
    if not isinstance(reference, str) or not reference.strip():
        raise PluginError(f"a {kind} plug-in reference must be a non-empty string, not {reference!r}")
    spec = reference
    if ":" not in reference:
        ep = _entry_point(kind, reference)
        if ep is None:
            known = ", ".join(entry_point_names(kind)) or "none installed"
            raise PluginError(f"no {kind} plug-in named '{reference}' (entry points of {GROUPS[kind]}: {known}; "
                              f"or give module:attribute or path/file.py:attribute)")
        spec = ep.value
    module_part, _, attribute = spec.rpartition(":")
    if module_part.endswith(".py"):
        path = Path(module_part) if Path(module_part).is_absolute() else Path(base) / module_part
        if not path.is_file():
            raise PluginError(f"plug-in file {module_part} does not exist")
        spec = f"{path.resolve()}:{attribute}"
    try:
        code = code_of(spec)
    except Exception as exc:  # importing a module plug-in runs its code
        raise PluginError(f"'{spec}' does not load: {type(exc).__name__}: {exc}") from None
    plugin = load_attribute(spec, code) if kind == "generator" else load(spec, code)  # a generator: per library
    version = getattr(plugin, "version", "")
    if not isinstance(version, str):
        raise PluginError(f"{kind} plug-in '{reference}': its version must be a string, not {type(version).__name__}")
    declared = getattr(plugin, "name", None)
    name = declared if isinstance(declared, str) and declared.strip() else reference
    return PluginRef(kind, name, spec, version, code)


@functools.cache
def load(spec: str, code: str = ""):
    """The transform or backend a spec names, once per process and source ``code`` (a class is made with
    no arguments): a warm process whose plug-in file was edited loads the edited code."""
    target = load_attribute(spec, code)
    try:
        return target() if isinstance(target, type) else target
    except Exception as exc:
        raise PluginError(f"'{spec}' cannot be made: {type(exc).__name__}: {exc}") from None


@functools.cache
def load_attribute(spec: str, code: str = ""):
    """The attribute a spec names, its module imported (or executed from its file) once per process and
    source ``code``."""
    module_part, _, attribute = spec.rpartition(":")
    if not module_part or not attribute:
        raise PluginError(f"'{spec}' is no plug-in reference (module:attribute or path/file.py:attribute)")
    try:
        module = _module(module_part, code)
        value = module
        for part in attribute.split("."):
            value = getattr(value, part)
        return value
    except PluginError:
        raise
    except AttributeError:
        raise PluginError(f"'{spec}': {module_part} has no attribute '{attribute}'") from None
    except Exception as exc:  # a plug-in's import is its own code: any failure is a located error
        raise PluginError(f"'{spec}' does not load: {type(exc).__name__}: {exc}") from None


_IMPORTED: dict[str, str] = {}  # module -> the source code it was imported with


def _module(module_part: str, code: str):
    if not module_part.endswith(".py"):
        module = importlib.import_module(module_part)
        if code and _IMPORTED.setdefault(module_part, code) != code:  # edited since: import it again
            module, _IMPORTED[module_part] = importlib.reload(module), code
        return module
    path = Path(module_part)
    if not path.is_file():
        raise PluginError(f"plug-in file {module_part} does not exist")
    name = "pipeline_plugin_" + hashlib.sha256(f"{path}\0{code}".encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module  # classes defined there pickle by this name within the process
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def source_paths(spec: str) -> list[Path]:
    """Where a plug-in's source is: its file, or the folders of its top-level package (or its module's file)."""
    module_part = spec.rpartition(":")[0]
    if module_part.endswith(".py"):
        return [Path(module_part)]
    top = importlib.import_module(module_part.split(".")[0])
    folders = [Path(folder) for folder in getattr(top, "__path__", ())]
    return folders or [Path(getattr(importlib.import_module(module_part), "__file__", "") or "")]


def code_of(spec: str) -> str:
    """SHA-256 of a plug-in's source: its file, or every ``.py`` file of its top-level package."""
    files = sorted(f for path in source_paths(spec) for f in (path.rglob("*.py") if path.is_dir() else [path]))
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode() + b"\0")
        try:
            digest.update(file.read_bytes())
        except OSError:
            digest.update(b"<missing>")
    return digest.hexdigest()
