"""Program-level interfaces of ``auto_map`` (and HLSL) stages on SPIR-V targets.

glslang's automatic mapping numbers one stage at a time: varyings in declaration
order, and only the resources its entry point reads get a binding (an unread
sampler keeps binding 0, where the other stage's uniform block may be).  A GL driver
links a program by name; a Vulkan pipeline needs its stages to agree by number.  So
an ``auto_map`` stage is finished as part of its program:

1. interface variables no entry point uses are removed (spirv-opt's
   ``--remove-unused-interface-variables`` and ``--eliminate-dead-variables``), so
   every resource left has its stage's binding (:data:`~pipeline.compilers.request.BINDING_BASE`);
2. a vertex and a fragment stage carry each other (``CompileRequest.link``, part of
   their job keys): each job compiles both, and both finish the pair the same way.
   A vertex output the fragment stage does not read is made a ``Private`` variable
   and removed with its stores (spirv-opt's aggressive dead-code elimination), so no
   output goes unconsumed;
3. (GLSL) the outputs left take locations by name, sorted, each after the locations
   of the one before (a ``mat3`` takes three), and each fragment input the location of
   the vertex output of its name; an input no vertex output names comes after them
   all, so it collides with none.  HLSL stages keep glslang's locations (by semantic
   order), and are matched by them.

Locations are rewritten in place (every varying has a ``Location`` decoration after
automatic mapping); :mod:`pipeline.compilers.spirv_module` reads and writes the words.
HLSL stages on a SPIR-V target are finished this way with or without ``auto_map``
(:func:`~pipeline.compilers.request.links_program`); GLSL without it is left as
glslang wrote it, explicit layouts and all.
"""

from __future__ import annotations

from collections.abc import Callable

from pipeline.compilers.request import CompileOutput, CompileRequest, links_by_name, links_program
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.spirv_module import INPUT, OUTPUT, Module
from pipeline.compilers.spirv_tools import STRIP_UNUSED, SpirvToolsError, optimize
from pipeline.errors import Diagnostic, Location

DEAD_CODE = ("--eliminate-dead-code-aggressive", *STRIP_UNUSED)


def by_name(varyings: dict[str, tuple[int, int, int]], start: int = 0) -> dict[int, int]:
    """Variable id -> location, in name order, each after the one before."""
    out, at = {}, start
    for name in sorted(varyings):
        var, _, size = varyings[name]
        out[var], at = at, at + size
    return out


def link_pair(vertex: bytes, fragment: bytes, by_names: bool,
              passes: Callable[[bytes, tuple[str, ...]], bytes]) -> tuple[bytes, bytes]:
    """The vertex and fragment stage of one program, linked (see the module doc);
    ``passes(blob, flags)`` runs spirv-opt passes."""
    vertex, fragment = passes(vertex, STRIP_UNUSED), passes(fragment, STRIP_UNUSED)
    module, inputs = Module(vertex), Module(fragment).varyings(INPUT)
    read = set(inputs) if by_names else {location for _, location, _ in inputs.values()}
    unread = {var for name, (var, location, _) in module.varyings(OUTPUT).items()
              if (name if by_names else location) not in read}
    if unread:
        module.privatize(unread)
        vertex = passes(module.to_bytes(), DEAD_CODE)
    if not by_names:
        return vertex, fragment
    module, reader = Module(vertex), Module(fragment)
    outputs = module.varyings(OUTPUT)
    module.relocate(by_name(outputs))
    located = {name: module.location[var][2] for name, (var, _, _) in outputs.items()}
    end = max((located[name] + size for name, (_, _, size) in outputs.items()), default=0)
    inputs = reader.varyings(INPUT)
    reader.relocate(by_name({name: v for name, v in inputs.items() if name not in located}, end)
                    | {var: located[name] for name, (var, _, _) in inputs.items() if name in located})
    return module.to_bytes(), reader.to_bytes()


def program_output(output: CompileOutput, request: CompileRequest, tree: SourceTree,
                   compile_raw: Callable[[CompileRequest], CompileOutput]) -> CompileOutput:
    """A backend's output of an ``auto_map`` SPIR-V stage finished as part of its program;
    ``compile_raw`` compiles a linked stage as the backend compiles any stage."""
    if not output.ok or not links_program(request):
        return output
    where = Location(tree.name(request.source))

    def passes(blob: bytes, flags: tuple[str, ...]) -> bytes:
        return optimize(blob, request.target, flags)

    partner = next((p for p in request.link if {p.stage, request.stage} == {"vertex", "fragment"}), None)
    try:
        if partner is None:
            return CompileOutput(passes(output.spirv, STRIP_UNUSED), output.diagnostics)
        linked = compile_raw(partner)
        if not linked.ok:
            failed = Diagnostic(where, f"the {partner.stage} stage it is linked with ({partner.source}, "
                                       f"{partner.entry}) does not compile")
            return CompileOutput(None, output.diagnostics + linked.errors + (failed,))
        stages = (output.spirv, linked.spirv) if request.stage == "vertex" else (linked.spirv, output.spirv)
        vertex, fragment = link_pair(*stages, links_by_name(request), passes)
    except (SpirvToolsError, ValueError) as exc:
        return CompileOutput(None, output.diagnostics + (Diagnostic(where, f"linking its interface: {exc}"),))
    return CompileOutput(vertex if request.stage == "vertex" else fragment, output.diagnostics)
