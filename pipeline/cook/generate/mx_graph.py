"""MaterialX graphs: the glTF material as a ``gltf_pbr`` graph, documents, and graph shapes.

The default graph of a key (``DOCUMENT`` is ``gltf_pbr``) is built from the key's
texture features, never from the material's constants::

    BASE_COLOR_MAP          gltf_colorimage  -> base_color (outcolor), alpha (outa)
    METALLIC_ROUGHNESS_MAP  gltf_image color3 -> separate3 -> roughness (outg), metallic (outb)
    NORMAL_MAP              gltf_normalmap   -> normal
    OCCLUSION_MAP           gltf_image float -> occlusion
    EMISSIVE_MAP            gltf_image color3 -> emissive

Every other ``gltf_pbr`` input stays unconnected, so MaterialX makes it a uniform
(the shader is generated with the complete interface): a colour or factor change
is a new uniform value, not a new key or a new source.

A graph's *shape* is the canonical hash of what the generated code depends on: the
nodes upstream of the material (category and type, in traversal order), which input
connects to which upstream node and output, and which inputs are uniforms.  Names
and values are left out.
"""

from __future__ import annotations

import functools
import os
import re
import xml.etree.ElementTree as ET

import MaterialX as mx

from pipeline.digest import stable_hash
from pipeline.errors import CompileError, Diagnostic, Location

DEFAULT_DOCUMENT = "gltf_pbr"
MATERIAL = "M_gltf_pbr"
SLOTS = (  # feature, node category, node type, [(output or None, gltf_pbr input)]
    ("BASE_COLOR_MAP", "gltf_colorimage", "multioutput", [("outcolor", "base_color"), ("outa", "alpha")]),
    ("METALLIC_ROUGHNESS_MAP", "gltf_image", "color3", None),
    ("NORMAL_MAP", "gltf_normalmap", "vector3", [(None, "normal")]),
    ("OCCLUSION_MAP", "gltf_image", "float", [(None, "occlusion")]),
    ("EMISSIVE_MAP", "gltf_image", "color3", [(None, "emissive")]),
)
TEXTURE_FEATURES = tuple(s[0] for s in SLOTS)


@functools.cache
def library() -> mx.Document:
    """MaterialX's standard data libraries (they ship in the wheel), loaded once per process."""
    lib = mx.createDocument()
    mx.loadLibraries(["libraries"], search_path(), lib)
    return lib


@functools.cache
def search_path() -> mx.FileSearchPath:
    return mx.FileSearchPath(os.path.dirname(mx.__file__))


def gltf_pbr_document(textured: frozenset[str]) -> mx.Document:
    """The glTF material as a ``gltf_pbr`` graph with an image node per textured slot."""
    doc = mx.createDocument()
    doc.importLibrary(library())
    shader = doc.addNode("gltf_pbr", "SR_gltf_pbr", "surfaceshader")
    for feature, category, type_, links in SLOTS:
        if feature not in textured:
            continue
        image = doc.addNode(category, feature.lower(), type_)
        image.setInputValue("file", "", "filename")
        if links is None:  # metallic-roughness: one texture, two channels
            split = doc.addNode("separate3", "metallic_roughness_channels", "multioutput")
            split.addInput("in", "color3").setNodeName(image.getName())
            links, image = [("outg", "roughness"), ("outb", "metallic")], split
        for output, name in links:
            port = shader.addInput(name, shader.getNodeDef().getActiveInput(name).getType())
            port.setNodeName(image.getName())
            if output:
                port.setOutputString(output)
    doc.addMaterialNode(MATERIAL, shader)
    return doc


def shape_of(material: mx.Node) -> str:
    """The canonical hash of the graph upstream of a material node."""
    index: dict[str, int] = {}
    nodes: list[list] = []

    def visit(element) -> int:
        path = element.getNamePath()
        if path in index:
            return index[path]
        index[path] = len(nodes)
        entry: list = [element.getCategory(), element.getType(), []]
        nodes.append(entry)
        inputs = element.getInputs() if element.isA(mx.Node) or element.isA(mx.Output) else []
        if element.isA(mx.Output):
            upstream = element.getConnectedNode()
            entry[2].append(["", element.getType(), visit(upstream) if upstream else "uniform", ""])
        for port in sorted(inputs, key=lambda p: p.getName()):
            upstream = port.getConnectedNode()
            target = visit(upstream) if upstream is not None else "uniform"
            entry[2].append([port.getName(), port.getType(), target, port.getOutputString()])
        return index[path]

    visit(material)
    return stable_hash({"materialx_shape": nodes})[:16]


# ---------------------------------------------------------------- documents
def load_document(text: str, display: str) -> mx.Document:
    """A MaterialX document from its text, checked; problems are located :class:`CompileError`."""
    try:
        ET.fromstring(text)
    except ET.ParseError as exc:
        line, col = exc.position
        raise CompileError(Diagnostic(Location(display, line, col + 1),
                                      f"invalid MaterialX document: {_xml_message(exc)}")) from None
    doc = mx.createDocument()
    try:
        mx.readFromXmlString(doc, text)
    except Exception as exc:  # MaterialX raises its own exception types for malformed documents
        raise CompileError.at(display, f"invalid MaterialX document: {exc}") from None
    doc.importLibrary(library())
    unknown = [_at_name(text, display, e.getName(), f"unknown node '{e.getCategory()}' of type {e.getType()}: "
                                                    "no MaterialX node definition")
               for e in doc.traverseTree() if e.isA(mx.Node) and e.getNodeDef() is None]
    if unknown:
        raise CompileError(unknown[:8])
    valid, message = doc.validate()
    if not valid:
        raise CompileError([_locate(text, display, line) for line in message.strip().splitlines()[:8]])
    return doc


def _at_name(text: str, display: str, name: str, message: str) -> Diagnostic:
    line, col = locate_name(text, name)
    return Diagnostic(Location(display, line, col), message)


def find_material(doc: mx.Document, name: str, text: str, display: str) -> mx.Node:
    """The material node ``name`` of a document (its only one when ``name`` is empty)."""
    materials = doc.getMaterialNodes()
    if not name and len(materials) == 1:
        return materials[0]
    for material in materials:
        if material.getName() == name:
            return material
    known = ", ".join(m.getName() for m in materials) or "none"
    what = f"no material '{name}'" if name else "more than one material; name one after '#'"
    raise CompileError(Diagnostic(Location(display, 1, 1), f"{what} in the document (materials: {known})"))


def locate_name(text: str, name: str) -> tuple[int, int] | tuple[None, None]:
    """Line and column of the element named ``name`` in a document's text."""
    match = re.search(r'\bname="' + re.escape(name) + '"', text)
    if not match:
        return None, None
    start = text.rfind("<", 0, match.start())
    start = start if start >= 0 else match.start()
    return text.count("\n", 0, start) + 1, start - (text.rfind("\n", 0, start) + 1) + 1


def _locate(text: str, display: str, message: str) -> Diagnostic:
    """A validation message at the element it names (``<node name="x" ...>``), else the file."""
    names = re.findall(r'name="([^"]+)"', message)
    line, col = locate_name(text, names[0]) if names else (None, None)
    return Diagnostic(Location(display, line, col), f"invalid MaterialX document: {message.strip()}")


def _xml_message(exc: ET.ParseError) -> str:
    return re.sub(r":\s*line \d+, column \d+$", "", str(exc))
