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
from dataclasses import dataclass
from xml.parsers import expat

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
    """The canonical hash of the graph upstream of a material node.

    The walk is depth-first with an explicit stack (a graph thousands of nodes deep is
    no deeper for it than a flat one); nodes are numbered in the order they are first
    reached and each port names the number of the node it connects to.
    """
    index: dict[str, int] = {}
    nodes: list[list] = []

    def enter(element) -> tuple[list, object]:
        index[element.getNamePath()] = len(nodes)
        entry: list = [element.getCategory(), element.getType(), []]
        nodes.append(entry)
        return entry, iter(_ports(element))

    stack = [enter(material)]
    while stack:
        entry, ports = stack[-1]
        for name, type_, upstream, output in ports:
            if upstream is None:
                entry[2].append([name, type_, "uniform", output])
                continue
            path = upstream.getNamePath()
            entry[2].append([name, type_, index.get(path, len(nodes)), output])
            if path not in index:
                stack.append(enter(upstream))
                break
        else:
            stack.pop()
    return stable_hash({"materialx_shape": nodes})[:16]


def _ports(element) -> list[tuple[str, str, object, str]]:
    """``(input, type, upstream node or None, output)`` of an element, in the order its shape lists them."""
    ports = []
    if element.isA(mx.Output):
        upstream = element.getConnectedNode()
        ports.append(("", element.getType(), upstream if upstream else None, ""))
    if element.isA(mx.Node) or element.isA(mx.Output):
        for port in sorted(element.getInputs(), key=lambda p: p.getName()):
            ports.append((port.getName(), port.getType(), port.getConnectedNode(), port.getOutputString()))
    return ports


# ---------------------------------------------------------------- documents
XINCLUDE_TAG = "xi:include"  # as MaterialX matches it: the prefix as written


@dataclass(frozen=True)
class XInclude:
    """One ``<xi:include href="...">`` of a document: the reference as written and where it is."""

    href: str
    line: int
    col: int


def check_xml(text: str, display: str) -> tuple[XInclude, ...]:
    """The XIncludes of a document's text, checked to be well-formed XML in the same pass.

    Prefixes are read as written (no namespace processing), as MaterialX reads them.
    """
    parser = expat.ParserCreate()
    found: list[XInclude] = []

    def start(name: str, attrs: dict[str, str]) -> None:
        if name == XINCLUDE_TAG:
            found.append(XInclude(attrs.get("href", ""), parser.CurrentLineNumber, parser.CurrentColumnNumber + 1))

    parser.StartElementHandler = start
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise CompileError(Diagnostic(Location(display, exc.lineno, exc.offset + 1),
                                      f"invalid MaterialX document: {expat.ErrorString(exc.code)}")) from None
    return tuple(found)


def _read_options() -> mx.XmlReadOptions:
    """MaterialX reads the text only: XIncludes are resolved and read by the caller (materials folder only)."""
    options = mx.XmlReadOptions()
    options.readXIncludeFunction = None
    return options


def load_document(text: str, display: str, includes: tuple[tuple[str, str], ...] = ()) -> mx.Document:
    """A MaterialX document from its text, checked; problems are located :class:`CompileError`.

    ``includes`` are ``(text, display)`` of the documents its XIncludes name, already read,
    innermost first; their elements are read before the document's own, and a name defined
    twice keeps its first definition, as MaterialX reads XIncludes.
    """
    check_xml(text, display)
    doc = mx.createDocument()
    for n, (source, where) in enumerate((*includes, (text, display))):
        part = doc if n == len(includes) else mx.createDocument()  # the document itself is read last
        try:
            mx.readFromXmlString(part, source, mx.FileSearchPath(), _read_options())
        except Exception as exc:  # MaterialX raises its own exception types for malformed documents
            raise CompileError.at(where, f"invalid MaterialX document: {exc}") from None
        if part is not doc:
            doc.importLibrary(part)
    doc.importLibrary(library())
    sources = ((text, display), *includes)
    unknown = [_at_name(sources, e.getName(), f"unknown node '{e.getCategory()}' of type {e.getType()}: "
                                              "no MaterialX node definition")
               for e in doc.traverseTree() if e.isA(mx.Node) and e.getNodeDef() is None]
    if unknown:
        raise CompileError(unknown[:8])
    valid, message = doc.validate()
    if not valid:
        raise CompileError([_locate(sources, line) for line in message.strip().splitlines()[:8]])
    return doc


def _at_name(sources, name: str, message: str) -> Diagnostic:
    """``message`` at the element named ``name`` in the first of ``sources`` that has it, else the first."""
    for text, display in sources:
        line, col = locate_name(text, name)
        if line is not None:
            return Diagnostic(Location(display, line, col), message)
    return Diagnostic(Location(sources[0][1]), message)


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


def _locate(sources, message: str) -> Diagnostic:
    """A validation message at the element it names (``<node name="x" ...>``), else the document."""
    names = re.findall(r'name="([^"]+)"', message)
    return _at_name(sources, names[0] if names else "", f"invalid MaterialX document: {message.strip()}")
