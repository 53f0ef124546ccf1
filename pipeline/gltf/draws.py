"""A validated glTF document -> its draws, each with frozen :class:`DrawFacts`.

A draw is one primitive of one mesh instance (a node with ``mesh`` reachable from
a scene) with one material: the primitive's material (the glTF default material
when it has none), plus one draw per variant of each KHR_materials_variants
mapping.  A node reachable from several scenes is drawn once, in the first
scene (by index) that reaches it; that scene's KHR_lights_punctual lights are
the draw's ``scene.lights``.  Files without scenes have no draws.

Facts are built once per mesh primitive, material, node and scene and shared
between the draws that use them, so equal draws hold equal (often identical)
fact objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipeline import facts as F
from pipeline.gltf.materials import DEFAULT_MATERIAL, material_facts
from pipeline.gltf.models import Document
from pipeline.gltf.reader import Gltf
from pipeline.gltf.transforms import local_det_sign


@dataclass(frozen=True)
class Instance:
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


# (instance) -> (chunk name, level); grid levels map instances to cells
ChunkOf = Callable[[Instance], tuple[str, str]]
# (mesh index, primitive index) -> optional mesh fact values
OptionalFacts = Callable[[int, int], dict]


def instances(doc: Document) -> list[Instance]:
    """Every node reachable from a scene, once, with its first scene and mirror state."""
    seen: set[int] = set()
    found = []
    for s, scene in enumerate(doc.scenes):
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


def scene_lights(doc: Document) -> list[F.SceneFacts]:
    """KHR_lights_punctual counts by type among the nodes of each scene."""
    ext = doc.extensions
    lights = ext.KHR_lights_punctual.lights if ext and ext.KHR_lights_punctual else []
    out = []
    for scene in doc.scenes:
        counts = {"directional": 0, "point": 0, "spot": 0}
        stack = list(scene.nodes)
        while stack:
            node = doc.nodes[stack.pop()]
            ref = node["extensions"].KHR_lights_punctual if "extensions" in node else None
            if ref is not None:
                counts[lights[ref.light].type] += 1
            stack.extend(node.get("children", ()))
        out.append(F.SceneFacts(lights=F.Lights(**counts)) if any(counts.values()) else F.SceneFacts())
    return out


class _Builder:
    """Builds and shares facts for one document."""

    def __init__(self, gltf: Gltf, chunk_of: ChunkOf, optional: OptionalFacts | None):
        self.doc, self.file, self.chunk_of, self.optional = gltf.doc, gltf.file, chunk_of, optional
        self._draw: dict[tuple, F.DrawFacts] = {}
        self.scenes = scene_lights(self.doc)
        self._mesh: dict[tuple[int, int], F.MeshFacts] = {}
        self._material: dict[int, F.MaterialFacts] = {}
        self._chunk: dict[tuple[str, str], F.ChunkFacts] = {}
        ext = self.doc.extensions
        self.variant_names = [v.name for v in ext.KHR_materials_variants.variants] \
            if ext and ext.KHR_materials_variants else []

    def mesh(self, m: int, p: int) -> F.MeshFacts:
        key = (m, p)
        if key not in self._mesh:
            self._mesh[key] = mesh_facts(self.doc, m, p, self.optional(m, p) if self.optional else {})
        return self._mesh[key]

    def material(self, index: int | None) -> F.MaterialFacts:
        if index is None:
            return DEFAULT_MATERIAL
        if index not in self._material:
            self._material[index] = material_facts(self.doc.materials[index], index, len(self.doc.textures),
                                                   self.file)
        return self._material[index]

    def chunk(self, inst: Instance) -> F.ChunkFacts:
        key = self.chunk_of(inst)
        if key not in self._chunk:
            self._chunk[key] = F.ChunkFacts(name=key[0], level=key[1])
        return self._chunk[key]

    def draws(self, inst: Instance) -> list[FileDraw]:
        node = self.doc.nodes[inst.node]
        m = node["mesh"]
        node_facts = node_facts_of(self.doc, node, inst.mirrored)
        base = dict(node=node_facts, scene=self.scenes[inst.scene], chunk=self.chunk(inst))
        out = []
        for p, prim in enumerate(self.doc.meshes[m]["primitives"]):
            mesh = self.mesh(m, p)
            for material, variant in self.materials_of(prim):
                out.append(FileDraw(inst.node, m, p, material, variant, self.facts(mesh, material, base)))
        return out

    def facts(self, mesh: F.MeshFacts, material: int | None, base: dict) -> F.DrawFacts:
        """DrawFacts, one object per distinct combination of shared parts."""
        key = (id(mesh), material, *(id(v) for v in base.values()))
        found = self._draw.get(key)
        if found is None:
            found = self._draw[key] = F.DrawFacts(mesh=mesh, material=self.material(material), **base)
        return found

    def materials_of(self, prim: dict) -> list[tuple[int | None, str | None]]:
        """(material, variant name) pairs: the base mapping first, then one per variant."""
        pairs = [(prim.get("material"), None)]
        ext = prim.get("extensions")
        if ext is not None and ext.KHR_materials_variants is not None:
            for mapping in ext.KHR_materials_variants.mappings:
                pairs.extend((mapping.material, self.variant_names[v]) for v in mapping.variants)
        return pairs


def draws_of(gltf: Gltf, chunk_of: ChunkOf, optional: OptionalFacts | None = None) -> list[FileDraw]:
    """All draws of a document, in (node, mesh, primitive, variant) order."""
    builder = _Builder(gltf, chunk_of, optional)
    out = []
    for inst in instances(gltf.doc):
        if "mesh" in gltf.doc.nodes[inst.node]:
            out.extend(builder.draws(inst))
    out.sort(key=lambda d: (d.node, d.mesh, d.primitive, d.variant is not None, d.variant or ""))
    return out


def mesh_facts(doc: Document, m: int, p: int, optional: dict) -> F.MeshFacts:
    """Facts of one mesh primitive from its accessors."""
    mesh = doc.meshes[m]
    prim = mesh["primitives"][p]
    attributes = {name: _attribute(doc.accessors[i]) for name, i in prim["attributes"].items()}
    targets = prim.get("targets", ())
    moved = sorted({name for target in targets for name in target})
    position = prim["attributes"].get("POSITION")
    return F.MeshFacts(
        attributes=attributes,
        mode=prim.get("mode", 4),
        indexed="indices" in prim,
        vertexCount=doc.accessors[position]["count"] if position is not None else 0,
        texcoordSets=_sets(attributes, "TEXCOORD_"),
        colorType=attributes["COLOR_0"].type if "COLOR_0" in attributes else None,
        jointSets=_sets(attributes, "JOINTS_"),
        weightSets=_sets(attributes, "WEIGHTS_"),
        normals="NORMAL" in attributes,
        tangents="TANGENT" in attributes,
        morphTargets=len(targets),
        morphAttributes=tuple(moved),
        customAttributes=tuple(sorted(n for n in attributes if n.startswith("_"))),
        **optional,
    )


_ATTRIBUTES: dict[tuple, F.Attribute] = {}


def _attribute(accessor: dict) -> F.Attribute:
    key = (accessor["type"], accessor["componentType"], accessor.get("normalized", False))
    found = _ATTRIBUTES.get(key)
    if found is None:
        found = _ATTRIBUTES[key] = F.Attribute(type=key[0], componentType=key[1], normalized=key[2])
    return found


def _sets(attributes: dict, prefix: str) -> int:
    return sum(1 for name in attributes if name.startswith(prefix) and name[len(prefix):].isdigit())


def node_facts_of(doc: Document, node: dict, mirrored: bool) -> F.NodeFacts:
    ext = node.get("extensions")
    instancing = ext.EXT_mesh_gpu_instancing if ext is not None else None
    skin = node.get("skin")
    return F.NodeFacts(
        skin=skin is not None,
        skinJoints=len(doc.skins[skin].joints) if skin is not None else 0,
        instancing=instancing is not None,
        instancingAttributes=tuple(sorted(instancing.attributes)) if instancing else (),
        mirrored=mirrored,
        morphWeights="weights" in node or "weights" in doc.meshes[node["mesh"]],
    )
