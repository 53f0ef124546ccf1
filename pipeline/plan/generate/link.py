"""Linking a fragment chain into one vertex and one fragment shader.

Given the fragments a key selects, in chain order (:mod:`.fragment_file`):

1. **Resolve.**  Every import of a fragment takes the nearest *earlier* export of the
   same name in its own stage.  A fragment-stage import that no earlier
   fragment-stage export provides takes the vertex stage's last export of that name
   through an interpolator.  The types must be equal: a different type is a *type
   clash*, no export at all a *missing import*; both are located errors at the
   import in the fragment's header (``materials/chain/x.glsl:3:10: error: ...``).
2. **Drop.**  Walking back from the sinks (fragments without exports), a fragment is
   kept only when a kept fragment reads one of its exports; the others leave the
   generated text entirely, and only interpolators some kept fragment reads are made.
3. **Emit.**  Per stage: ``#version 450``, the interpolators (``layout(location = i)
   out``/``in``, ``flat`` for integer types, locations in order of first use; under
   ``GL_ES``, the webgl2 target, no location and a default precision first), each
   kept fragment's body with ``run`` renamed after its file, then a ``main`` calling
   them in order, one local variable per export.  ``#line N "path"`` directives map
   every line back to a fragment file: bodies to their own lines, each call to its
   fragment's ``run`` line, interpolators to the export (vertex side) and the import
   (fragment side) they carry, so a
   glslang error names the fragment's file and line.

The result depends only on the fragments' text and the selection, so two keys that
select the same fragments produce the same text (and share one job).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.plan.generate.fragment_file import FragmentFile, Port
from pipeline.errors import Diagnostic, Location

VERSION = "#version 450"
LINE_EXTENSION = "#extension GL_GOOGLE_cpp_style_line_directive : require"
RUN_CALL = re.compile(r"\brun\b(?=\s*\()")
INTEGER = ("int", "uint", "ivec", "uvec")
# GLSL ES (webgl2: ``GL_ES``) has no default float precision in a fragment stage and links varyings
# by name, without location qualifiers; under Vulkan these lines preprocess to nothing
ES_PRECISION = ("#ifdef GL_ES", "precision highp float;", "precision highp int;", "#endif")


@dataclass
class LinkedChain:
    """What linking gave: per-stage text, the files it came from, and the errors."""

    stages: dict[str, str] = field(default_factory=dict)
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)  # stage -> the fragment files it holds
    errors: list[Diagnostic] = field(default_factory=list)


@dataclass(frozen=True)
class _Edge:
    producer: int   # index into the chain
    varying: bool   # crosses from the vertex to the fragment stage


def link_chain(chain: list[FragmentFile], family: str = "") -> LinkedChain:
    """Link the selected fragments (chain order); errors are collected, not raised."""
    out = LinkedChain()
    edges = _resolve(chain, out.errors)
    for f in chain:
        if "#version" in f.body:
            line = f.body_line + f.body[:f.body.index("#version")].count("\n")
            out.errors.append(Diagnostic(Location(f.display, line), "a fragment has no #version line (the linker writes it)"))
    live = _live(chain, edges)
    for stage in ("vertex", "fragment"):
        if not out.errors and not any(chain[i].stage == stage for i in live):
            out.errors.append(Diagnostic(Location(family or "<chain>"),
                                         f"the chain keeps no {stage}-stage fragment for this key"))
    if out.errors:
        return out
    varyings = _varyings(chain, edges, live)
    out.stages = {"vertex": _emit(chain, edges, live, varyings, "vertex"),
                  "fragment": _emit(chain, edges, live, varyings, "fragment")}
    out.files = {stage: tuple(sorted({chain[i].path for i in live if chain[i].stage == stage}))
                 for stage in ("vertex", "fragment")}
    return out


def _resolve(chain: list[FragmentFile], errors: list[Diagnostic]) -> dict[tuple[int, str], _Edge]:
    edges: dict[tuple[int, str], _Edge] = {}
    for i, f in enumerate(chain):
        for port in f.imports:
            found = _nearest(chain, i, port, f.stage)
            varying = False
            if found is None and f.stage == "fragment":
                found, varying = _nearest(chain, len(chain), port, "vertex"), True
            if found is None:
                errors.append(Diagnostic(Location(f.display, port.line, port.col),
                                         f"missing import: no earlier fragment exports '{port}'"))
                continue
            export = chain[found].port(port.name)
            if export.type != port.type:
                errors.append(Diagnostic(Location(f.display, port.line, port.col),
                                         f"type clash: import '{port}' meets export '{export}' of "
                                         f"{chain[found].display}:{export.line}"))
                continue
            edges[(i, port.name)] = _Edge(found, varying)
    return edges


def _nearest(chain: list[FragmentFile], before: int, port: Port, stage: str) -> int | None:
    for j in range(before - 1, -1, -1):
        if chain[j].stage == stage and any(e.name == port.name for e in chain[j].exports):
            return j
    return None


def _live(chain: list[FragmentFile], edges: dict[tuple[int, str], _Edge]) -> list[int]:
    """Indexes of the kept fragments: sinks and what kept fragments read, transitively."""
    needed: set[int] = set()
    order = [i for i in range(len(chain)) if chain[i].stage == "fragment"][::-1]
    order += [i for i in range(len(chain)) if chain[i].stage == "vertex"][::-1]
    for i in order:
        if chain[i].sink or i in needed:
            needed.add(i)
            needed.update(e.producer for (j, _), e in edges.items() if j == i)
    return sorted(needed)


def _varyings(chain, edges, live) -> dict[str, tuple[int, Port, int]]:
    """name -> (location, the vertex export, the first fragment-stage importer)."""
    out: dict[str, tuple[int, Port, int]] = {}
    for i in live:
        for port in chain[i].imports:
            edge = edges[(i, port.name)]
            if edge.varying and port.name not in out:
                out[port.name] = (len(out), chain[edge.producer].port(port.name), i)
    return out


def _exporter(chain, indexes, export: Port) -> FragmentFile:
    return next(chain[i] for i in indexes if any(e is export for e in chain[i].exports))


def _line(f: FragmentFile, line: int) -> str:
    return f'#line {line} "{f.path}"'


def _run_name(f: FragmentFile) -> str:
    return re.sub(r"\W", "_", f.path.rsplit(".", 1)[0]) + "_run"


def _emit(chain, edges, live, varyings, stage: str) -> str:
    mine = [i for i in live if chain[i].stage == stage]
    lines = [VERSION, LINE_EXTENSION, *ES_PRECISION]
    direction = "out" if stage == "vertex" else "in"
    for name, (location, export, importer) in varyings.items():
        # the vertex side maps to the export, the fragment side to the import that needs it
        where = _line(_exporter(chain, live, export), export.line) if stage == "vertex" else \
            _line(chain[importer], chain[importer].port(name).line)
        flat = "flat " if export.type.startswith(INTEGER) else ""
        declared = f"{flat}{direction} {export.type} v_{name};"
        lines += [where, "#ifdef GL_ES", declared, "#else", f"layout(location = {location}) {declared}", "#endif"]
    for i in mine:
        f = chain[i]
        lines += [_line(f, f.body_line), RUN_CALL.sub(_run_name(f), f.body)]
    lines += _main(chain, edges, mine, varyings, stage)
    return "\n".join(lines) + "\n"


def _main(chain, edges, mine, varyings, stage: str) -> list[str]:
    first = chain[mine[0]]
    lines = [_line(first, first.run_line), "void main()", "{"]
    bound: dict[str, str] = {}
    if stage == "fragment":
        for name, (_, export, importer) in varyings.items():
            lines += [_line(chain[importer], chain[importer].port(name).line),
                      f"    {export.type} _{name}_in = v_{name};"]
            bound[name] = f"_{name}_in"
    for n, i in enumerate(mine):  # variables named by kept position: dropped fragments leave no trace
        f = chain[i]
        lines.append(_line(f, f.run_line))
        args = []
        for name in f.params:
            mode = f.mode(name)
            if mode == "out":
                var = f"_{name}_{n}"
                lines.append(f"    {f.port(name).type} {var};")
                bound[name] = var
            elif (i, name) in edges and edges[(i, name)].varying and name not in bound:
                bound[name] = f"_{name}_in"
            args.append(bound[name])
        lines.append(f"    {_run_name(f)}({', '.join(args)});")
    if stage == "vertex":
        for name, (_, export, _importer) in varyings.items():
            lines += [_line(_exporter(chain, mine, export), export.line), f"    v_{name} = {bound[name]};"]
    lines.append("}")
    return lines
