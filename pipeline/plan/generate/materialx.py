"""The ``materialx`` generator: a key's graph, through MaterialX's own GLSL generators.

A ``materialx`` family's key names its graph with the ``DOCUMENT`` feature (type
``name``): ``gltf_pbr`` for the glTF material as a ``gltf_pbr`` graph built from the
key's texture features (:mod:`.mx_graph`), or ``<file>.mtlx#<material>`` for a
document in the materials folder (what a glTF material's ``extras.materialx``
names).  The graph is generated with ``VkShaderGenerator`` (complete shader
interface: every unconnected input is a uniform), giving a Vulkan GLSL vertex and
fragment shader that compile through the same glslang path, cache and outputs as
any other stage.  The same graph by MaterialX's WGSL-ready and ESSL generators joins
it under the ``PIPELINE_TARGET_WEBGPU`` and ``GL_ES`` guards (:mod:`.mx_targets`):
one text per stage serves vulkan1.2, metal, webgpu and webgl2, and the Vulkan branch
is exactly the Vulkan generator's text.  The MaterialX version is written into the
text (a new version, new jobs).

A document's ``<xi:include href="...">`` names another document of the materials
folder (relative to the including document's folder, else to the materials folder);
the pipeline reads it, never MaterialX, the same way as the document: a regular file
within the size limit, inside the allowed roots.  Every document read is part of the
key's jobs' closure, so editing an included document makes new jobs.

Problems with a document (unreadable, not XML, invalid: an unknown node, a bad
connection; an XInclude that leaves the materials folder or cannot be read; no such
material; generation failing) are located errors naming the ``.mtlx`` file; they fail
that key's jobs and nothing else.
"""

from __future__ import annotations

import os
import posixpath

import MaterialX as mx

from pipeline.compilers.sources import ParsedFile, SourceTree
from pipeline.plan.generate import GeneratedStage
from pipeline.plan.generate.mx_graph import (
    DEFAULT_DOCUMENT,
    MATERIAL,
    TEXTURE_FEATURES,
    check_xml,
    find_material,
    gltf_pbr_document,
    load_document,
    locate_name,
    shape_of,
)
from pipeline.plan.generate.mx_targets import GUARDED, VULKAN, generate_stages, portable_text
from pipeline.errors import CompileError, Diagnostic, Location

MAX_XINCLUDES = 64  # documents one document may XInclude, transitively


def materialx_version() -> str:
    return mx.getVersionString()


class MaterialxGenerator:
    """Generated stages of MaterialX graphs, made once per graph shape and document content."""

    def __init__(self, tree: SourceTree):
        self.tree = tree
        self._made: dict[tuple, dict[str, GeneratedStage]] = {}

    def generate(self, ruleset, key) -> dict[str, GeneratedStage]:
        values = dict(key.features)
        ref = str(values.get("DOCUMENT", DEFAULT_DOCUMENT))
        if ref == DEFAULT_DOCUMENT:
            textured = frozenset(f for f in TEXTURE_FEATURES if values.get(f) is True)
            memo = ("gltf_pbr", textured)
            if memo not in self._made:
                doc = gltf_pbr_document(textured)
                self._made[memo] = _generate(doc.getChild(MATERIAL), (), "materialx gltf_pbr graph", None)
            return self._made[memo]
        path, _, name = ref.partition("#")
        display = self.tree.name(path)
        if not path.endswith(".mtlx") or not os.path.lexists(self.tree.path(path)):
            return _failed((), Diagnostic(Location(display), f"MaterialX document '{path}' not found in the "
                                                             "materials folder (extras.materialx names "
                                                             "'<file>.mtlx#<material>')"))
        try:
            parsed = self.tree.parsed(path)  # a regular file of the materials folder, within its size limit
        except CompileError as exc:
            return _failed((), *exc.diagnostics)  # unreadable: no file to hash into the jobs' closure
        read: list[tuple[str, ParsedFile]] = []
        try:
            self._includes(path, parsed.text, {path}, read)
        except CompileError as exc:
            return _failed((path, *(f for f, _ in read)), *exc.diagnostics)
        memo = (path, parsed.sha256, name, tuple((f, p.sha256) for f, p in read))
        if memo not in self._made:
            self._made[memo] = self._document(path, name, parsed.text, display, read)
        return self._made[memo]

    def _includes(self, path: str, text: str, seen: set[str], read: list[tuple[str, ParsedFile]]) -> None:
        """The documents ``path`` XIncludes, transitively, into ``read`` (innermost first).

        An XInclude names a file relative to the including document's folder, else to the
        materials folder, and may not leave it; it is read like the document (a regular
        file within the size limit, symlinks resolved inside the allowed roots).  A document
        included twice is read once.
        """
        display = self.tree.name(path)
        for include in check_xml(text, display):
            where = Location(display, include.line, include.col)
            found = self._resolve(include.href, path, where)
            if found in seen:
                continue
            if len(seen) > MAX_XINCLUDES:
                raise CompileError(Diagnostic(where, f"more than {MAX_XINCLUDES} documents XIncluded"))
            seen.add(found)
            try:
                parsed = self.tree.parsed(found)
            except CompileError as exc:
                reason = exc.diagnostics[0].message.removeprefix("cannot read shader source: ")
                raise CompileError(Diagnostic(where, f"XInclude '{include.href}' cannot be read: {reason}")) from None
            self._includes(found, parsed.text, seen, read)
            read.append((found, parsed))

    def _resolve(self, href: str, includer: str, where: Location) -> str:
        """The materials-relative path an XInclude names (the includer's folder first, then the root)."""
        name = href.replace("\\", "/")
        folders = () if not name or posixpath.isabs(name) else dict.fromkeys((posixpath.dirname(includer), ""))
        inside = [c for c in (posixpath.normpath(posixpath.join(f, name)) for f in folders)
                  if c != ".." and not c.startswith("../")]
        for candidate in inside:
            if os.path.lexists(self.tree.path(candidate)):
                return candidate
        if not inside:
            raise CompileError(Diagnostic(where, f"XInclude '{href}' leads outside the materials folder"))
        raise CompileError(Diagnostic(where, f"XInclude '{href}' not found in the materials folder"))

    def _document(self, path: str, name: str, text: str, display: str,
                  read: list[tuple[str, ParsedFile]]) -> dict[str, GeneratedStage]:
        files = (path, *(f for f, _ in read))
        try:
            doc = load_document(text, display, tuple((p.text, self.tree.name(f)) for f, p in read))
            material = find_material(doc, name, text, display)
        except CompileError as exc:
            return _failed(files, *exc.diagnostics)
        return _generate(material, files, display, text)


def _generate(material: mx.Node, files: tuple[str, ...], display: str, text: str | None
              ) -> dict[str, GeneratedStage]:
    shader_nodes = mx.getShaderNodes(material)
    if not shader_nodes:
        return _failed(files, _at(display, text, material.getName(), "the material has no surface shader"))
    shader_node = shader_nodes[0]
    shape = shape_of(material)
    name = "materialx_" + shape
    try:
        vulkan = generate_stages(VULKAN, shader_node, name)
    except Exception as exc:  # MaterialX's generator errors (unsupported node, missing implementation)
        return _failed(files, _at(display, text, shader_node.getName(), f"MaterialX cannot generate GLSL: {exc}"))
    guarded: dict[str, dict[str, str] | Exception] = {}
    for _, _, generator in GUARDED:
        try:
            guarded[generator] = generate_stages(generator, shader_node, name)
        except Exception as exc:  # that generator's targets fail alone (an #error in their branch)
            guarded[generator] = exc
    return {stage: GeneratedStage(portable_text(source, {g: m if isinstance(m, Exception) else m[stage]
                                                         for g, m in guarded.items()}), files, shape=shape)
            for stage, source in vulkan.items()}


def _at(display: str, text: str | None, name: str, message: str) -> Diagnostic:
    line, col = locate_name(text, name) if text else (None, None)
    return Diagnostic(Location(display, line, col), message)


def _failed(files: tuple[str, ...], *problems: Diagnostic) -> dict[str, GeneratedStage]:
    failed = GeneratedStage(None, files, problems=tuple(problems))
    return {"vertex": failed, "fragment": failed}
