"""Draw facts: the typed, frozen description of one draw that rule sets read.

This is the vocabulary shared by the rule sets and the scanner: a rule set is read and
checked against these models before any content is (:mod:`pipeline.rules`), and the
scanner (:mod:`pipeline.scan`) fills them in from glTF files.

A *draw* is one primitive of one mesh instance with one material (each
KHR_materials_variants mapping is one more draw).  Everything a rule may test
lives in :class:`DrawFacts`; where a draw comes from lives in :class:`DrawSource`
and is deliberately *not* part of the facts, so that identical draws share one
fact signature and the rules run once per signature, not once per draw.

Field names follow the glTF 2.0 JSON (camelCase) so that a rule author can read
a rule next to the glTF spec.  Extension blocks are flattened to short names
(``material.clearcoat`` for ``KHR_materials_clearcoat``); each is ``None`` when
the extension is absent.

Optional facts (``Optional buffer facts`` below) need buffer data.  They are only
computed when a rule set reads them, and stay ``None`` ("unknown") when the
buffer is not available.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pipeline.digest import stable_hash


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- mesh
AccessorType = Literal["SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4"]


class Attribute(Frozen):
    """One vertex attribute of a primitive, as its accessor declares it."""

    type: AccessorType = Field(description="accessor type, e.g. VEC3")
    componentType: int = Field(description="GL component type: 5120 byte .. 5126 float")
    normalized: bool = Field(False, description="accessor.normalized")


class MeshFacts(Frozen):
    attributes: dict[str, Attribute] = Field(
        description="every attribute of the primitive by semantic name (POSITION, TEXCOORD_1, _CUSTOM ...)"
    )
    mode: int = Field(4, description="primitive mode: 0 points .. 4 triangles .. 6 fan")
    indexed: bool = Field(description="the primitive has an index accessor")
    vertexCount: int = Field(description="count of the POSITION accessor")
    texcoordSets: int = Field(description="number of TEXCOORD_n attributes")
    colorType: Literal["VEC3", "VEC4"] | None = Field(None, description="COLOR_0 accessor type, None when absent")
    jointSets: int = Field(0, description="number of JOINTS_n attributes")
    weightSets: int = Field(0, description="number of WEIGHTS_n attributes")
    normals: bool = Field(description="NORMAL present")
    tangents: bool = Field(description="TANGENT present")
    morphTargets: int = Field(0, description="number of morph targets")
    morphAttributes: tuple[str, ...] = Field((), description="sorted attribute names moved by any morph target")
    morphTargetAttributes: tuple[str, ...] = Field(
        (), description="attribute names moved by morph targets in file order (target 0's first, each name once)")
    morphVertexCount: int | None = Field(
        None, description="count of the accessor the first morphed attribute displaces (None without targets)")
    customAttributes: tuple[str, ...] = Field((), description="sorted application-specific attributes (_NAME)")
    # Optional buffer facts (None = unknown or not requested)
    colorAllWhite: bool | None = Field(None, description="COLOR_0 present and every value is 1.0 (needs buffer data)")
    maxJointInfluences: int | None = Field(
        None, description="largest number of non-zero joint weights on any vertex (needs buffer data)"
    )


# ---------------------------------------------------------------- material
class TextureRef(Frozen):
    """A textureInfo: which texture, which UV set, and whether it is transformed."""

    index: int = Field(description="texture index")
    texCoord: int = Field(0, description="texCoord as authored")
    transform: bool = Field(False, description="KHR_texture_transform present on this textureInfo")
    transformTexCoord: int | None = Field(None, description="texCoord override of KHR_texture_transform")
    uv: int = Field(0, description="UV set actually sampled: transformTexCoord if set, else texCoord")
    scale: float | None = Field(None, description="normalTexture.scale (normal maps only)")
    strength: float | None = Field(None, description="occlusionTexture.strength (occlusion maps only)")


class PbrMetallicRoughness(Frozen):
    baseColorFactor: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    baseColorTexture: TextureRef | None = None
    metallicFactor: float = 1.0
    roughnessFactor: float = 1.0
    metallicRoughnessTexture: TextureRef | None = None


class Clearcoat(Frozen):
    clearcoatFactor: float = 0.0
    clearcoatTexture: TextureRef | None = None
    clearcoatRoughnessFactor: float = 0.0
    clearcoatRoughnessTexture: TextureRef | None = None
    clearcoatNormalTexture: TextureRef | None = None


class Sheen(Frozen):
    sheenColorFactor: tuple[float, float, float] = (0.0, 0.0, 0.0)
    sheenColorTexture: TextureRef | None = None
    sheenRoughnessFactor: float = 0.0
    sheenRoughnessTexture: TextureRef | None = None


class Transmission(Frozen):
    transmissionFactor: float = 0.0
    transmissionTexture: TextureRef | None = None


class Volume(Frozen):
    thicknessFactor: float = 0.0
    thicknessTexture: TextureRef | None = None
    attenuationDistance: float | None = Field(None, description="None means infinite")
    attenuationColor: tuple[float, float, float] = (1.0, 1.0, 1.0)


class Specular(Frozen):
    specularFactor: float = 1.0
    specularTexture: TextureRef | None = None
    specularColorFactor: tuple[float, float, float] = (1.0, 1.0, 1.0)
    specularColorTexture: TextureRef | None = None


class Iridescence(Frozen):
    iridescenceFactor: float = 0.0
    iridescenceTexture: TextureRef | None = None
    iridescenceIor: float = 1.3
    iridescenceThicknessMinimum: float = 100.0
    iridescenceThicknessMaximum: float = 400.0
    iridescenceThicknessTexture: TextureRef | None = None


class Anisotropy(Frozen):
    anisotropyStrength: float = 0.0
    anisotropyRotation: float = 0.0
    anisotropyTexture: TextureRef | None = None


class DiffuseTransmission(Frozen):
    diffuseTransmissionFactor: float = 0.0
    diffuseTransmissionTexture: TextureRef | None = None
    diffuseTransmissionColorFactor: tuple[float, float, float] = (1.0, 1.0, 1.0)
    diffuseTransmissionColorTexture: TextureRef | None = None


class SpecularGlossiness(Frozen):
    diffuseFactor: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    diffuseTexture: TextureRef | None = None
    specularFactor: tuple[float, float, float] = (1.0, 1.0, 1.0)
    glossinessFactor: float = 1.0
    specularGlossinessTexture: TextureRef | None = None


class MaterialFacts(Frozen):
    default: bool = Field(False, description="the glTF default material (primitive has no material)")
    pbrMetallicRoughness: PbrMetallicRoughness = PbrMetallicRoughness()
    normalTexture: TextureRef | None = None
    occlusionTexture: TextureRef | None = None
    emissiveTexture: TextureRef | None = None
    emissiveFactor: tuple[float, float, float] = (0.0, 0.0, 0.0)
    alphaMode: Literal["OPAQUE", "MASK", "BLEND"] = "OPAQUE"
    alphaCutoff: float = 0.5
    doubleSided: bool = False
    unlit: bool = Field(False, description="KHR_materials_unlit")
    emissiveStrength: float | None = Field(None, description="KHR_materials_emissive_strength")
    clearcoat: Clearcoat | None = Field(None, description="KHR_materials_clearcoat")
    sheen: Sheen | None = Field(None, description="KHR_materials_sheen")
    transmission: Transmission | None = Field(None, description="KHR_materials_transmission")
    volume: Volume | None = Field(None, description="KHR_materials_volume")
    ior: float | None = Field(None, description="KHR_materials_ior")
    specular: Specular | None = Field(None, description="KHR_materials_specular")
    iridescence: Iridescence | None = Field(None, description="KHR_materials_iridescence")
    anisotropy: Anisotropy | None = Field(None, description="KHR_materials_anisotropy")
    dispersion: float | None = Field(None, description="KHR_materials_dispersion")
    diffuseTransmission: DiffuseTransmission | None = Field(None, description="KHR_materials_diffuse_transmission")
    pbrSpecularGlossiness: SpecularGlossiness | None = Field(None, description="KHR_materials_pbrSpecularGlossiness")
    textureTransform: bool = Field(False, description="any texture slot of the material uses KHR_texture_transform")
    maxUv: int = Field(-1, description="highest UV set any texture slot samples, -1 when untextured")
    extensions: tuple[str, ...] = Field((), description="sorted names of every extension on the material")
    extras: dict[str, Any] = Field(default_factory=dict, description="material.extras as authored")


# ---------------------------------------------------------------- node / scene / chunk
class NodeFacts(Frozen):
    skin: bool = Field(False, description="the node has a skin")
    skinJoints: int = Field(0, description="number of joints of that skin")
    instancing: bool = Field(False, description="EXT_mesh_gpu_instancing present")
    instancingAttributes: tuple[str, ...] = Field((), description="sorted attribute names of EXT_mesh_gpu_instancing")
    mirrored: bool = Field(False, description="the node's world matrix has a negative determinant")
    morphWeights: bool = Field(False, description="node or mesh declares morph weights")
    morphWeightCount: int = Field(0, description="length of node.weights, else of mesh.weights, else 0")


class Lights(Frozen):
    """KHR_lights_punctual lights by type: the one shape of light counts (per scene, per chunk)."""

    directional: int = Field(0, description="directional lights")
    point: int = Field(0, description="point lights")
    spot: int = Field(0, description="spot lights")


class SceneMaterials(Frozen):
    """Aggregates over every draw a scene reaches (variants included)."""

    draws: int = Field(0, description="draws reachable from the scene")
    extensions: tuple[str, ...] = Field((), description="sorted union of the extensions of the drawn materials")
    alphaModes: tuple[str, ...] = Field((), description="sorted alpha modes of the drawn materials")
    transmission: bool = Field(False, description="some drawn material has KHR_materials_transmission")
    volume: bool = Field(False, description="some drawn material has KHR_materials_volume")


class SceneFacts(Frozen):
    index: int = Field(0, description="index of the draw's scene in the file (its first scene reaching the node)")
    default: bool = Field(True, description="that scene is the file's default (glTF 'scene', else scene 0)")
    lights: Lights = Field(Lights(), description="KHR_lights_punctual lights among the nodes of the draw's scene")
    materials: SceneMaterials = Field(SceneMaterials(), description="aggregates over the draws of the draw's scene")


class DrawInfo(Frozen):
    variant: str | None = Field(None, description="KHR_materials_variants variant name, None for the base mapping")


class ChunkFacts(Frozen):
    name: str = Field(description="chunk name: its path from the world root, '/'-separated")
    level: str = Field(description="level the chunk belongs to")
    lights: Lights = Field(Lights(), description="KHR_lights_punctual lights placed in the chunk: every light node "
                           "the scan reaches in its files (each node once), or in the grid cell")


FactValue = bool | int | float | str | None


class ProvidedFacts(Frozen):
    """The facts of a rule set's fact providers (``ext.<provider>.<fact>``): this model has none; a rule
    set that names providers checks its expressions against one made from their declarations
    (:func:`pipeline.fact_providers.provided_model`)."""


class DrawFacts(Frozen):
    """Everything rules may read about one draw.  Source location is kept apart."""

    mesh: MeshFacts
    material: MaterialFacts
    node: NodeFacts = NodeFacts()
    scene: SceneFacts = SceneFacts()
    chunk: ChunkFacts
    draw: DrawInfo = DrawInfo()
    ext: dict[str, dict[str, FactValue]] = Field(
        default_factory=dict, exclude_if=lambda value: not value,
        description="facts of the rule set's fact providers, read as ext.<provider>.<fact> and typed by the "
                    "provider's declaration (docs/plugins.md); None when unknown")

    def signature(self) -> str:
        """Stable hash of the canonical serialization: draws with equal facts share it."""
        return stable_hash(self.model_dump(mode="json"))

    def to_json(self, parts: dict | None = None) -> dict:
        """``model_dump(mode="json")``; with ``parts`` (kept by the caller while the facts it dumps are alive),
        each part shared by many draws (their mesh, their material) is dumped once."""
        if parts is None:
            return self.model_dump(mode="json")
        doc = {}
        for name, part in self.__dict__.items():  # the fields, in field order
            if name == "ext":  # provided facts are JSON values already, and left out when there are none
                if part:
                    doc[name] = {provider: dict(values) for provider, values in part.items()}
                continue
            found = parts.get(id(part))
            if found is None:
                found = parts[id(part)] = part.model_dump(mode="json")
            doc[name] = found
        return doc


class DrawSource(Frozen):
    """Where a draw comes from; file paths are relative to the scanned root, '/'-separated."""

    file: str
    chunk: str
    level: str
    node: int
    mesh: int
    primitive: int
    material: int | None = Field(description="material index, None for the glTF default material")
    variant: str | None = Field(None, description="KHR_materials_variants variant name, None for the base mapping")


class Draw(Frozen):
    source: DrawSource
    facts: DrawFacts

