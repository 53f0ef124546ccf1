"""Cross-reference checks: every index the scanner follows must exist.

Run after model validation, before facts are built, so the fact builder can
index freely.  The first problem raises a :class:`GltfError` located by the JSON
pointer of the bad reference, e.g. ``/meshes/3/primitives/0/attributes/POSITION:
accessor 99 does not exist``.  The node hierarchy must be disjoint strict trees:
one parent per node, scene roots have none, and no cycle (not even one that no
scene reaches).
Texture indices are checked where materials are read (:mod:`pipeline.scan.gltf.materials`).
"""

from __future__ import annotations

from pipeline.errors import GltfError
from pipeline.scan.gltf.structs import Document
from pipeline.scan.gltf.pointer import pointer


class _Refs:
    def __init__(self, doc: Document, file: str):
        self.doc, self.file = doc, file
        ext = doc.extensions
        self.lights = len(ext.KHR_lights_punctual.lights) if ext and ext.KHR_lights_punctual else 0
        self.variants = len(ext.KHR_materials_variants.variants) if ext and ext.KHR_materials_variants else 0

    def need(self, index: int, count: int, what: str, *at: object) -> None:
        if index >= count:
            raise GltfError.at(self.file, f"{what} {index} does not exist", pointer=pointer(*at))


def check_refs(doc: Document, file: str) -> None:
    """Raise GltfError at the first dangling reference or malformed node hierarchy."""
    refs = _Refs(doc, file)
    parents = _check_nodes(refs)
    _check_scenes(refs, parents)
    _check_cycles(refs, parents)
    _check_meshes(refs)
    for s, skin in enumerate(doc.skins):
        for j, joint in enumerate(skin.joints):
            refs.need(joint, len(doc.nodes), "node", "skins", s, "joints", j)


def _check_nodes(refs: _Refs) -> dict[int, int]:
    """Check node references; return the parent of every child node."""
    doc, parents = refs.doc, {}
    for n, node in enumerate(doc.nodes):
        for c, child in enumerate(node.get("children", ())):
            refs.need(child, len(doc.nodes), "node", "nodes", n, "children", c)
            if child in parents or child == n:
                raise GltfError.at(refs.file, f"node {child} already has a parent (node {parents.get(child, n)})",
                                   pointer=pointer("nodes", n, "children", c))
            parents[child] = n
        _check_node_links(refs, n, node)
    return parents


def _check_cycles(refs: _Refs, parents: dict[int, int]) -> None:
    """One parent per node still allows a loop no scene reaches (0 -> 1 -> 0): find it."""
    settled: set[int] = set()  # nodes whose ancestor chain ends at a root
    for start in parents:
        chain: list[int] = []
        seen: set[int] = set()
        node = start
        while node in parents and node not in settled:
            if node in seen:
                cycle = sorted(chain[chain.index(node):])
                parent = parents[node]
                raise GltfError.at(refs.file, f"nodes {cycle} form a cycle",
                                   pointer=pointer("nodes", parent, "children",
                                                   refs.doc.nodes[parent]["children"].index(node)))
            seen.add(node)
            chain.append(node)
            node = parents[node]
        settled.update(chain)


def _check_node_links(refs: _Refs, n: int, node: dict) -> None:
    doc = refs.doc
    if "mesh" in node:
        refs.need(node["mesh"], len(doc.meshes), "mesh", "nodes", n, "mesh")
    if "skin" in node:
        refs.need(node["skin"], len(doc.skins), "skin", "nodes", n, "skin")
    ext = node.get("extensions")
    if ext is None:
        return
    if ext.KHR_lights_punctual is not None:
        refs.need(ext.KHR_lights_punctual.light, refs.lights, "light", "nodes", n, "extensions", "KHR_lights_punctual", "light")
    if ext.EXT_mesh_gpu_instancing is not None:
        for name, accessor in ext.EXT_mesh_gpu_instancing.attributes.items():
            refs.need(accessor, len(doc.accessors), "accessor",
                      "nodes", n, "extensions", "EXT_mesh_gpu_instancing", "attributes", name)


def _check_scenes(refs: _Refs, parents: dict[int, int]) -> None:
    doc = refs.doc
    if doc.scene is not None:
        refs.need(doc.scene, len(doc.scenes), "scene", "scene")
    for s, scene in enumerate(doc.scenes):
        for k, root in enumerate(scene.nodes):
            refs.need(root, len(doc.nodes), "node", "scenes", s, "nodes", k)
            if root in parents:
                raise GltfError.at(refs.file, f"node {root} is not a root node (it is a child of node {parents[root]})",
                                   pointer=pointer("scenes", s, "nodes", k))


def _check_meshes(refs: _Refs) -> None:
    doc = refs.doc
    for m, mesh in enumerate(doc.meshes):
        for p, prim in enumerate(mesh["primitives"]):
            at = ("meshes", m, "primitives", p)
            _check_attributes(refs, prim["attributes"], *at, "attributes")
            for t, target in enumerate(prim.get("targets", ())):
                _check_attributes(refs, target, *at, "targets", t)
            if "indices" in prim:
                refs.need(prim["indices"], len(doc.accessors), "accessor", *at, "indices")
            if "material" in prim:
                refs.need(prim["material"], len(doc.materials), "material", *at, "material")
            _check_variants(refs, prim, at)


def _check_attributes(refs: _Refs, attributes: dict[str, int], *at: object) -> None:
    accessors = refs.doc.accessors
    for name, accessor in attributes.items():
        refs.need(accessor, len(accessors), "accessor", *at, name)
        if name == "COLOR_0" and accessors[accessor]["type"] not in ("VEC3", "VEC4"):
            raise GltfError.at(refs.file, f"COLOR_0 must be VEC3 or VEC4, accessor {accessor} is "
                                          f"{accessors[accessor]['type']}", pointer=pointer(*at, name))


def _check_variants(refs: _Refs, prim: dict, at: tuple) -> None:
    ext = prim.get("extensions")
    if ext is None or ext.KHR_materials_variants is None:
        return
    base = (*at, "extensions", "KHR_materials_variants", "mappings")
    for k, mapping in enumerate(ext.KHR_materials_variants.mappings):
        refs.need(mapping.material, len(refs.doc.materials), "material", *base, k, "material")
        for v, variant in enumerate(mapping.variants):
            refs.need(variant, refs.variants, "variant", *base, k, "variants", v)
