"""A validated glTF document -> its draws, each with frozen :class:`DrawFacts`.

A draw is one primitive of one mesh instance (a node with ``mesh`` reachable from
a scene) with one material: the primitive's material (the glTF default material
when it has none), plus one draw per variant of each KHR_materials_variants
mapping.  A node reachable from several scenes is drawn once, in the first
scene (by index) that reaches it; that scene's index, whether it is the file's
default scene, its KHR_lights_punctual lights and aggregates over every draw it
reaches (``scene.materials``) are the draw's ``scene`` facts.  With
``scenes="default"`` (pipeline.toml) only the default scene is drawn (the glTF
``scene``, else scene 0).  Files without scenes have no draws.

Facts are built once per mesh primitive, material, node and scene and shared
between the draws that use them, so equal draws hold equal (often identical)
fact objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from pipeline import facts as F
from pipeline.scan.gltf.shared_facts import SharedFacts
from pipeline.scan.gltf.structs import Document
from pipeline.scan.gltf.reader import Gltf
from pipeline.scan.gltf.transforms import local_det_sign


class Instance(NamedTuple):
    """A node reached from a scene: its scene and whether its world matrix mirrors."""

    node: int
    scene: int
    mirrored: bool


@dataclass(frozen=True)
class FileDraw:
    """One draw of a file: source indices plus facts (chunk facts already applied)."""

    node: int
    mesh: int
    primitive: int
    material: int | None
    variant: str | None
    facts: F.DrawFacts
    signature: str | None = field(default=None, compare=False)  # facts.signature(), when known


# (instance) -> (chunk name, level); grid levels map instances to cells
ChunkOf = Callable[[Instance], tuple[str, str]]
# (mesh index, primitive index) -> optional mesh fact values
OptionalFacts = Callable[[int, int], dict]


def default_scene(doc: Document) -> int:
    """The file's default scene: the glTF ``scene``, else 0."""
    return doc.scene if getattr(doc, "scene", None) is not None else 0


def instances(doc: Document, scenes: str = "all") -> list[Instance]:
    """Every node reachable from a scene (or the default scene only), once, with its first scene and mirror state."""
    seen: set[int] = set()
    found = []
    for s, scene in enumerate(doc.scenes):
        if scenes == "default" and s != default_scene(doc):
            continue
        stack = [(root, False) for root in reversed(scene.nodes)]
        while stack:
            n, parent_mirrored = stack.pop()
            node = doc.nodes[n]
            mirrored = parent_mirrored ^ (local_det_sign(node) < 0)
            if n not in seen:
                seen.add(n)
                found.append(Instance(n, s, mirrored))
            stack.extend((c, mirrored) for c in reversed(node.get("children", ())))
    return found


LIGHT_TYPES = ("directional", "point", "spot")  # the fields of Lights, in order


def _punctual_lights(doc: Document) -> list:
    ext = doc.extensions
    return ext.KHR_lights_punctual.lights if ext and ext.KHR_lights_punctual else []


def _light_type(node: dict, lights: list) -> str | None:
    """The KHR_lights_punctual type of the light a node places, else None."""
    ref = node["extensions"].KHR_lights_punctual if "extensions" in node else None
    return lights[ref.light].type if ref is not None else None


def scene_keys(doc: Document, materials: Callable[[int], list], material_facts: Callable) -> list[tuple]:
    """Per scene, everything its :class:`SceneFacts` hold, exactly, as one tuple (:func:`scene_of` makes
    them): its index, default flag, KHR_lights_punctual counts by type and draw aggregates.
    ``materials(mesh)`` gives the material indices of a mesh's draws (variants included),
    ``material_facts(index)`` their facts."""
    lights = _punctual_lights(doc)
    out = []
    for s, scene in enumerate(doc.scenes):
        counts = dict.fromkeys(LIGHT_TYPES, 0)
        drawn: list = []  # material indices, one per draw, in the order the walk meets them
        stack, seen = list(scene.nodes), set()
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            node = doc.nodes[n]
            light = _light_type(node, lights) if lights else None
            if light is not None:
                counts[light] += 1
            if "mesh" in node:
                drawn += materials(node["mesh"])
            stack.extend(node.get("children", ()))
        used = [material_facts(m) for m in dict.fromkeys(drawn)]  # each once, first met first
        aggregates = (len(drawn), tuple(sorted({e for m in used for e in m.extensions})),
                      tuple(sorted({m.alphaMode for m in used})), any(m.transmission is not None for m in used),
                      any(m.volume is not None for m in used)) if drawn else None
        out.append((s, s == default_scene(doc), tuple(counts.values()) if any(counts.values()) else None, aggregates))
    return out


def scene_of(key: tuple) -> F.SceneFacts:
    """The :class:`SceneFacts` of a :func:`scene_keys` tuple."""
    values, (lights, aggregates) = {"index": key[0], "default": key[1]}, key[2:]
    if lights is not None:
        values["lights"] = F.Lights(**dict(zip(LIGHT_TYPES, lights)))
    if aggregates is not None:
        values["materials"] = F.SceneMaterials(**dict(zip(
            ("draws", "extensions", "alphaModes", "transmission", "volume"), aggregates)))
    return F.SceneFacts(**values)


def chunk_lights(doc: Document, chunk_of: ChunkOf, scenes: str = "all") -> tuple[tuple[str, int, int, int], ...]:
    """The file's KHR_lights_punctual light nodes by the chunk (or grid cell) they are placed in:
    ``(chunk, directional, point, spot)`` sorted by chunk; every node the scan reaches, once."""
    lights = _punctual_lights(doc)
    if not lights:
        return ()
    counts: dict[str, list[int]] = {}
    for inst in instances(doc, scenes):
        light = _light_type(doc.nodes[inst.node], lights)
        if light is not None:
            counts.setdefault(chunk_of(inst)[0], [0, 0, 0])[LIGHT_TYPES.index(light)] += 1
    return tuple(sorted((name, *c) for name, c in counts.items()))


class _Builder:
    """Builds and shares facts for one document."""

    def __init__(self, gltf: Gltf, chunk_of: ChunkOf, optional: OptionalFacts | None, shared: SharedFacts):
        self.doc, self.file, self.chunk_of, self.optional = gltf.doc, gltf.file, chunk_of, optional
        self.shared = shared
        self._mesh: dict[tuple[int, int], tuple] = {}
        self._primitive: dict[tuple, tuple] = {}  # _primitive_key -> mesh part: equal primitives of the file
        self._pairs: dict = {}  # (mesh, primitive) -> pairs(); mesh -> mesh_materials()
        self._material: dict[int | None, tuple] = {None: shared.default_material}
        self._chunk: dict[tuple[str, str], tuple] = {}
        ext = self.doc.extensions
        self.variant_names = [v.name for v in ext.KHR_materials_variants.variants] \
            if ext and ext.KHR_materials_variants else []
        scenes = scene_keys(self.doc, self.mesh_materials, lambda m: self.material(m)[0])
        self.scenes = [shared.scenes.get(key) or shared.part(shared.scenes, key, lambda key=key: scene_of(key))
                       for key in scenes]

    def mesh(self, m: int, p: int) -> tuple[F.MeshFacts, bytes]:
        key = (m, p)
        found = self._mesh.get(key)
        if found is None:
            prim = self.doc.meshes[m]["primitives"][p]
            local = _primitive_key(prim)
            found = self._primitive.get(local)
            if found is None:
                optional = self.optional(m, p) if self.optional else {}
                found = self._primitive[local] = self.shared.part(
                    self.shared.meshes, _mesh_key(self.doc, prim, optional),
                    lambda: F.MeshFacts(**mesh_values(self.doc, m, p, optional)))
            self._mesh[key] = found
        return found

    def material(self, index: int | None) -> tuple[F.MaterialFacts, bytes]:
        found = self._material.get(index)
        if found is None:
            found = self._material[index] = self.shared.materials.get(self.doc.materials[index], index,
                                                                      len(self.doc.textures), self.file)
            self.shared.canonical[id(found[0])] = found[1]  # the material cache holds it
        return found

    def chunk(self, inst: Instance) -> tuple[F.ChunkFacts, bytes]:
        key = self.chunk_of(inst)
        found = self._chunk.get(key)
        if found is None:
            found = self._chunk[key] = self.shared.part(
                self.shared.chunks, key, lambda: F.ChunkFacts(name=key[0], level=key[1]))
        return found

    def draws(self, inst: Instance) -> list[FileDraw]:
        node = self.doc.nodes[inst.node]
        m = node["mesh"]
        key = node_key(self.doc, node, inst.mirrored)
        node_part = self.shared.nodes.get(key) or self.shared.part(
            self.shared.nodes, key, lambda: F.NodeFacts(**dict(zip(_NODE_FIELDS, key))))
        scene, chunk = self.scenes[inst.scene], self.chunk(inst)
        out = []
        for p in range(len(self.doc.meshes[m]["primitives"])):
            mesh = self.mesh(m, p)
            for material, variant in self.pairs(m, p):
                facts, signature = self.shared.draw(mesh, self.material(material), node_part, scene, chunk, variant)
                out.append(FileDraw(inst.node, m, p, material, variant, facts, signature))
        return out

    def pairs(self, m: int, p: int) -> list[tuple[int | None, str | None]]:
        """:meth:`materials_of` primitive ``p`` of mesh ``m`` (once per primitive)."""
        found = self._pairs.get((m, p))
        if found is None:
            found = self._pairs[(m, p)] = self.materials_of(self.doc.meshes[m]["primitives"][p])
        return found

    def mesh_materials(self, m: int) -> list[int | None]:
        """The material of every draw of one instance of mesh ``m``, in draw-building order."""
        found = self._pairs.get(m)
        if found is None:
            found = self._pairs[m] = [material for p in range(len(self.doc.meshes[m]["primitives"]))
                                      for material, _ in self.pairs(m, p)]
        return found

    def materials_of(self, prim: dict) -> list[tuple[int | None, str | None]]:
        """(material, variant name) pairs: the base mapping first, then one per variant."""
        pairs = [(prim.get("material"), None)]
        ext = prim.get("extensions")
        if ext is not None and ext.KHR_materials_variants is not None:
            for mapping in ext.KHR_materials_variants.mappings:
                pairs.extend((mapping.material, self.variant_names[v]) for v in mapping.variants)
        return pairs


def _primitive_key(prim: dict) -> tuple:
    """What the mesh facts of a primitive depend on within its file, exactly: its attributes' and morph
    targets' accessor indices (names and order included), mode, whether it is indexed, and whether
    it is Draco compressed (which the optional buffer facts read)."""
    ext, targets = prim.get("extensions"), prim.get("targets")
    return (tuple(prim["attributes"].items()), prim.get("mode", 4), "indices" in prim,
            tuple(tuple(target.items()) for target in targets) if targets else (),
            ext is not None and "KHR_draco_mesh_compression" in ext.names())


def _mesh_key(doc: Document, prim: dict, optional: dict) -> tuple:
    """Everything :func:`mesh_values` reads of a primitive, exactly (attribute order included)."""
    accessors = doc.accessors
    attributes = []
    for name, i in prim["attributes"].items():
        accessor = accessors[i]
        attributes.append((name, accessor["type"], accessor["componentType"], accessor.get("normalized", False),
                           accessor["count"] if name == "POSITION" else None))
    targets = prim.get("targets", ())
    return (tuple(attributes), prim.get("mode", 4), "indices" in prim, len(targets),
            tuple(dict.fromkeys(name for target in targets for name in target)), _morph_vertex_count(doc, prim),
            tuple(optional.items()))


def _morph_vertex_count(doc: Document, prim: dict) -> int | None:
    """Count of the accessor the first morphed attribute displaces (None without targets)."""
    for target in prim.get("targets", ()):
        for name in target:
            base = prim["attributes"].get(name)
            return doc.accessors[base]["count"] if base is not None else None
    return None


def draws_of(gltf: Gltf, chunk_of: ChunkOf, optional: OptionalFacts | None = None,
             shared: SharedFacts | None = None, scenes: str = "all") -> list[FileDraw]:
    """All draws of a document, in (node, mesh, primitive, variant) order.

    ``shared`` lets the files of one scan share equal fact objects (and their signatures);
    ``scenes``: "all" draws every scene, "default" the default scene only.
    """
    builder = _Builder(gltf, chunk_of, optional, shared if shared is not None else SharedFacts())
    out = []
    for inst in instances(gltf.doc, scenes):
        if "mesh" in gltf.doc.nodes[inst.node]:
            out.extend(builder.draws(inst))
    out.sort(key=lambda d: (d.node, d.mesh, d.primitive, d.variant is not None, d.variant or ""))
    return out


def mesh_values(doc: Document, m: int, p: int, optional: dict) -> dict:
    """The :class:`MeshFacts` field values of one mesh primitive (in field order)."""
    prim = doc.meshes[m]["primitives"][p]
    attributes = {name: _attribute(doc.accessors[i]) for name, i in prim["attributes"].items()}
    targets = prim.get("targets", ())
    moved = sorted({name for target in targets for name in target})
    position = prim["attributes"].get("POSITION")
    texcoords = joints = weights = 0
    for name in attributes:
        if name[-1:].isdigit():
            if name.startswith("TEXCOORD_") and name[9:].isdigit():
                texcoords += 1
            elif name.startswith("JOINTS_") and name[7:].isdigit():
                joints += 1
            elif name.startswith("WEIGHTS_") and name[8:].isdigit():
                weights += 1
    return {
        "attributes": attributes,
        "mode": prim.get("mode", 4),
        "indexed": "indices" in prim,
        "vertexCount": doc.accessors[position]["count"] if position is not None else 0,
        "texcoordSets": texcoords,
        "colorType": attributes["COLOR_0"].type if "COLOR_0" in attributes else None,
        "jointSets": joints,
        "weightSets": weights,
        "normals": "NORMAL" in attributes,
        "tangents": "TANGENT" in attributes,
        "morphTargets": len(targets),
        "morphAttributes": tuple(moved),
        "morphTargetAttributes": tuple(dict.fromkeys(name for target in targets for name in target)),
        "morphVertexCount": _morph_vertex_count(doc, prim),
        "customAttributes": tuple(sorted(n for n in attributes if n.startswith("_"))),
        **optional,
    }


_ATTRIBUTES: dict[tuple, F.Attribute] = {}


def _attribute(accessor: dict) -> F.Attribute:
    key = (accessor["type"], accessor["componentType"], accessor.get("normalized", False))
    found = _ATTRIBUTES.get(key)
    if found is None:
        found = _ATTRIBUTES[key] = F.Attribute(**dict(zip(("type", "componentType", "normalized"), key)))
    return found


_NODE_FIELDS = ("skin", "skinJoints", "instancing", "instancingAttributes", "mirrored", "morphWeights",
                "morphWeightCount")


def node_values(doc: Document, node: dict, mirrored: bool) -> dict:
    """The :class:`NodeFacts` field values of a mesh node (in field order)."""
    return dict(zip(_NODE_FIELDS, node_key(doc, node, mirrored)))


def node_key(doc: Document, node: dict, mirrored: bool) -> tuple:
    """:func:`node_values`' values, as a tuple."""
    ext = node.get("extensions")
    instancing = ext.EXT_mesh_gpu_instancing if ext is not None else None
    skin = node.get("skin")
    weights = node["weights"] if "weights" in node else doc.meshes[node["mesh"]].get("weights")
    return (skin is not None, len(doc.skins[skin].joints) if skin is not None else 0,
            instancing is not None, tuple(sorted(instancing.attributes)) if instancing else (),
            mirrored, weights is not None, len(weights) if weights is not None else 0)
