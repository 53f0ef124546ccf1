"""Fragment files: a GLSL body plus a small header saying what it imports and exports.

A fragment is one link of a chain (``kind: fragments``).  Its header is the run of
``//!`` lines at the top of the file (blank lines and ordinary ``//`` comments may
sit between them)::

    //! stage vertex
    //! import vec3 position, vec3 normal
    //! export vec3 worldPosition
    //! export vec3 worldNormal

* ``stage``: ``vertex`` or ``fragment``, exactly once.
* ``import`` / ``export``: typed names, comma-separated, on as many lines as wanted.
  A name both imported and exported is updated in place (an ``inout`` parameter)
  and must have one type.  Types are GLSL value types (``float``, ``vec3``, ``mat4``,
  ``int``, ``uvec2`` ...).

The body is ordinary GLSL: uniforms, vertex inputs, outputs, helper functions, and
exactly one ``void run(...)`` whose parameters are the header's names: ``in T name``
for an import, ``out T name`` for an export, ``inout T name`` for both, in any
order.  The linker renames ``run`` per fragment and calls it from the generated
``main``.  A fragment without exports is a *sink* (it writes the stage's outputs)
and is always kept; any other fragment is kept only while a later fragment reads
one of its exports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.compilers.sources import _strip_comments
from pipeline.errors import CompileError, Diagnostic, Location

HEADER_RE = re.compile(r"^//!\s*(\w+)\s*(.*?)\s*$")
TYPED_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*$")
RUN_RE = re.compile(r"\bvoid\s+run\s*\(([^)]*)\)\s*\{")
PARAM_RE = re.compile(r"^\s*(?:(in|out|inout)\s+)?(?:(?:highp|mediump|lowp)\s+)?([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*$")
VALUE_TYPES = frozenset(
    ["float", "int", "uint", "bool"]
    + [f"{p}vec{n}" for p in ("", "i", "u", "b", "d") for n in (2, 3, 4)]
    + [f"mat{n}" for n in ("2", "3", "4", "2x2", "2x3", "2x4", "3x2", "3x3", "3x4", "4x2", "4x3", "4x4")])
STAGES = ("vertex", "fragment")


@dataclass(frozen=True)
class Port:
    """One typed name of a header, and where it is written."""

    type: str
    name: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.type} {self.name}"


@dataclass(frozen=True)
class FragmentFile:
    """A parsed fragment: header, body and its ``run`` signature."""

    path: str                      # root-relative ('chain/skinning.glsl')
    display: str                   # as diagnostics name it ('materials/chain/skinning.glsl')
    stage: str
    imports: tuple[Port, ...]
    exports: tuple[Port, ...]
    body: str                      # the text after the header, verbatim
    body_line: int                 # the file line the body starts on
    params: tuple[str, ...]        # run's parameter names, in its own order
    run_line: int                  # the file line of ``void run(``

    @property
    def sink(self) -> bool:
        return not self.exports

    def mode(self, name: str) -> str:
        imported = any(p.name == name for p in self.imports)
        exported = any(p.name == name for p in self.exports)
        return "inout" if imported and exported else "in" if imported else "out"

    def port(self, name: str) -> Port:
        return next(p for p in (*self.imports, *self.exports) if p.name == name)


def parse_fragment(text: str, path: str, display: str) -> FragmentFile:
    """Parse one fragment file; every problem is a located :class:`CompileError`."""
    errors: list[Diagnostic] = []
    stage, imports, exports, body_line = None, [], [], 1
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        match = HEADER_RE.match(stripped)
        if not match:
            if stripped and not stripped.startswith("//"):
                break
            body_line = number + 1
            continue
        body_line = number + 1
        word, rest = match.groups()
        col = line.index(rest) + 1 if rest else len(line) + 1
        if word == "stage":
            if stage is not None:
                errors.append(_at(display, number, col, "the stage is declared twice"))
            elif rest not in STAGES:
                errors.append(_at(display, number, col, f"unknown stage '{rest}' (known: {', '.join(STAGES)})"))
            else:
                stage = rest
        elif word in ("import", "export"):
            ports = _ports(rest, line, number, display, errors)
            (imports if word == "import" else exports).extend(ports)
        else:
            errors.append(_at(display, number, line.index(word) + 1,
                              f"unknown header entry '{word}' (known: stage, import, export)"))
    if stage is None and not errors:
        errors.append(_at(display, 1, 1, "a fragment declares its stage: '//! stage vertex' or '//! stage fragment'"))
    errors += _duplicates(imports, display, "imported") + _duplicates(exports, display, "exported")
    errors += _inout_types(imports, exports, display)
    body = "\n".join(lines[body_line - 1:])
    params, run_line = _signature(body, body_line, display, imports, exports, errors)
    if errors:
        raise CompileError(errors)
    return FragmentFile(path, display, stage, tuple(imports), tuple(exports), body, body_line, params, run_line)


def _at(display: str, line: int, col: int | None, message: str) -> Diagnostic:
    return Diagnostic(Location(display, line, col), message)


def _ports(rest: str, line: str, number: int, display: str, errors: list) -> list[Port]:
    out, offset = [], line.index(rest) if rest else len(line)
    for item in rest.split(","):
        col = offset + len(item) - len(item.lstrip()) + 1
        offset += len(item) + 1
        match = TYPED_RE.match(item)
        if not match:
            errors.append(_at(display, number, col, f"expected 'TYPE name', found '{item.strip()}'"))
        elif match.group(1) not in VALUE_TYPES:
            errors.append(_at(display, number, col, f"'{match.group(1)}' is not a GLSL value type"))
        else:
            out.append(Port(match.group(1), match.group(2), number, col))
    return out


def _duplicates(ports: list[Port], display: str, what: str) -> list[Diagnostic]:
    seen: dict[str, Port] = {}
    out = []
    for port in ports:
        if port.name in seen:
            out.append(_at(display, port.line, port.col, f"'{port.name}' is {what} twice"))
        seen.setdefault(port.name, port)
    return out


def _inout_types(imports: list[Port], exports: list[Port], display: str) -> list[Diagnostic]:
    types = {p.name: p for p in imports}
    return [_at(display, p.line, p.col, f"'{p.name}' is imported as {types[p.name].type} and exported as {p.type}")
            for p in exports if p.name in types and types[p.name].type != p.type]


def _signature(body: str, body_line: int, display: str, imports, exports, errors) -> tuple[tuple[str, ...], int]:
    code = _strip_comments(body)
    found = list(RUN_RE.finditer(code))
    if len(found) != 1:
        errors.append(_at(display, body_line, 1, "a fragment defines exactly one 'void run(...)' "
                                                 f"(found {len(found)})"))
        return (), body_line
    match = found[0]
    line = body_line + code.count("\n", 0, match.start())
    declared = {p.name: p for p in (*imports, *exports)}
    names = []
    for raw in filter(str.strip, match.group(1).split(",")):
        param = PARAM_RE.match(raw.replace("\n", " "))
        if not param:
            errors.append(_at(display, line, None, f"run parameter '{raw.strip()}' is not 'in|out|inout TYPE name'"))
            continue
        mode, type_, name = param.group(1) or "in", param.group(2), param.group(3)
        port = declared.get(name)
        if port is None:
            errors.append(_at(display, line, None, f"run parameter '{name}' is not in the header"))
            continue
        expected = ("inout" if any(p.name == name for p in imports) and any(p.name == name for p in exports)
                    else "in" if any(p.name == name for p in imports) else "out")
        if (mode, type_) != (expected, port.type):
            errors.append(_at(display, line, None, f"run parameter '{raw.strip()}' should be "
                                                   f"'{expected} {port.type} {name}' (header line {port.line})"))
        names.append(name)
    missing = [n for n in declared if n not in names]
    if missing:
        errors.append(_at(display, line, None, f"run lacks parameter(s) for {', '.join(missing)}"))
    return tuple(names), line
