"""Draw facts: the typed, frozen description of one draw that rule sets read.

Facts are frozen msgspec structs, kept out of the cyclic collector (``gc=False``: a
fact never refers back to itself): a cook holds hundreds of thousands of draws'
facts, and builds each from values it has already checked (``Model(**values)``
does not validate).  Facts read from anywhere else (a cache record) go through
:func:`load`, which does.

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

# Annotations are evaluated when each class is made (no postponed annotations here): msgspec and the
# rule checker read them in every process, and strings would be parsed and evaluated there each time.

import functools
from typing import Annotated, Any, Literal, NamedTuple

import msgspec
from msgspec import Meta, field

from pipeline.digest import canonical_bytes, stable_hash


class Frozen(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """A fact model: immutable, unknown fields refused when loaded, not tracked by the collector."""


def Doc(description: str) -> Meta:  # noqa: N802 - reads as a type in the models below
    """A fact's meaning, as the fact reference shows it (``pipeline rules facts``): ``Annotated[int, Doc(...)]``."""
    return Meta(description=description)


# ---------------------------------------------------------------- mesh
AccessorType = Literal["SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4"]


class Attribute(Frozen, kw_only=True):
    """One vertex attribute of a primitive, as its accessor declares it."""

    type: Annotated[AccessorType, Doc("accessor type, e.g. VEC3")]
    componentType: Annotated[int, Doc("GL component type: 5120 byte .. 5126 float")]
    normalized: Annotated[bool, Doc("accessor.normalized")] = False


class MeshFacts(Frozen, kw_only=True):
    attributes: Annotated[dict[str, Attribute], Doc("every attribute of the primitive by semantic name (POSITION, TEXCOORD_1, _CUSTOM ...)")]
    mode: Annotated[int, Doc("primitive mode: 0 points .. 4 triangles .. 6 fan")] = 4
    indexed: Annotated[bool, Doc("the primitive has an index accessor")]
    vertexCount: Annotated[int, Doc("count of the POSITION accessor")]
    texcoordSets: Annotated[int, Doc("number of TEXCOORD_n attributes")]
    colorType: Annotated[Literal["VEC3", "VEC4"] | None, Doc("COLOR_0 accessor type, None when absent")] = None
    jointSets: Annotated[int, Doc("number of JOINTS_n attributes")] = 0
    weightSets: Annotated[int, Doc("number of WEIGHTS_n attributes")] = 0
    normals: Annotated[bool, Doc("NORMAL present")]
    tangents: Annotated[bool, Doc("TANGENT present")]
    morphTargets: Annotated[int, Doc("number of morph targets")] = 0
    morphAttributes: Annotated[tuple[str, ...], Doc("sorted attribute names moved by any morph target")] = ()
    morphTargetAttributes: Annotated[tuple[str, ...], Doc("attribute names moved by morph targets in file order (target 0's first, each name once)")] = ()
    morphVertexCount: Annotated[int | None, Doc("count of the accessor the first morphed attribute displaces (None without targets)")] = None
    customAttributes: Annotated[tuple[str, ...], Doc("sorted application-specific attributes (_NAME)")] = ()
    # Optional buffer facts (None = unknown or not requested)
    colorAllWhite: Annotated[bool | None, Doc("COLOR_0 present and every value is 1.0 (needs buffer data)")] = None
    maxJointInfluences: Annotated[int | None, Doc("largest number of non-zero joint weights on any vertex (needs buffer data)")] = None


# ---------------------------------------------------------------- material
class TextureRef(Frozen, kw_only=True):
    """A textureInfo: which texture, which UV set, and whether it is transformed."""

    index: Annotated[int, Doc("texture index")]
    texCoord: Annotated[int, Doc("texCoord as authored")] = 0
    transform: Annotated[bool, Doc("KHR_texture_transform present on this textureInfo")] = False
    transformTexCoord: Annotated[int | None, Doc("texCoord override of KHR_texture_transform")] = None
    uv: Annotated[int, Doc("UV set actually sampled: transformTexCoord if set, else texCoord")] = 0
    scale: Annotated[float | None, Doc("normalTexture.scale (normal maps only)")] = None
    strength: Annotated[float | None, Doc("occlusionTexture.strength (occlusion maps only)")] = None


class PbrMetallicRoughness(Frozen, kw_only=True):
    baseColorFactor: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    baseColorTexture: TextureRef | None = None
    metallicFactor: float = 1.0
    roughnessFactor: float = 1.0
    metallicRoughnessTexture: TextureRef | None = None


class Clearcoat(Frozen, kw_only=True):
    clearcoatFactor: float = 0.0
    clearcoatTexture: TextureRef | None = None
    clearcoatRoughnessFactor: float = 0.0
    clearcoatRoughnessTexture: TextureRef | None = None
    clearcoatNormalTexture: TextureRef | None = None


class Sheen(Frozen, kw_only=True):
    sheenColorFactor: tuple[float, float, float] = (0.0, 0.0, 0.0)
    sheenColorTexture: TextureRef | None = None
    sheenRoughnessFactor: float = 0.0
    sheenRoughnessTexture: TextureRef | None = None


class Transmission(Frozen, kw_only=True):
    transmissionFactor: float = 0.0
    transmissionTexture: TextureRef | None = None


class Volume(Frozen, kw_only=True):
    thicknessFactor: float = 0.0
    thicknessTexture: TextureRef | None = None
    attenuationDistance: Annotated[float | None, Doc("None means infinite")] = None
    attenuationColor: tuple[float, float, float] = (1.0, 1.0, 1.0)


class Specular(Frozen, kw_only=True):
    specularFactor: float = 1.0
    specularTexture: TextureRef | None = None
    specularColorFactor: tuple[float, float, float] = (1.0, 1.0, 1.0)
    specularColorTexture: TextureRef | None = None


class Iridescence(Frozen, kw_only=True):
    iridescenceFactor: float = 0.0
    iridescenceTexture: TextureRef | None = None
    iridescenceIor: float = 1.3
    iridescenceThicknessMinimum: float = 100.0
    iridescenceThicknessMaximum: float = 400.0
    iridescenceThicknessTexture: TextureRef | None = None


class Anisotropy(Frozen, kw_only=True):
    anisotropyStrength: float = 0.0
    anisotropyRotation: float = 0.0
    anisotropyTexture: TextureRef | None = None


class DiffuseTransmission(Frozen, kw_only=True):
    diffuseTransmissionFactor: float = 0.0
    diffuseTransmissionTexture: TextureRef | None = None
    diffuseTransmissionColorFactor: tuple[float, float, float] = (1.0, 1.0, 1.0)
    diffuseTransmissionColorTexture: TextureRef | None = None


class SpecularGlossiness(Frozen, kw_only=True):
    diffuseFactor: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    diffuseTexture: TextureRef | None = None
    specularFactor: tuple[float, float, float] = (1.0, 1.0, 1.0)
    glossinessFactor: float = 1.0
    specularGlossinessTexture: TextureRef | None = None


class MaterialFacts(Frozen, kw_only=True):
    default: Annotated[bool, Doc("the glTF default material (primitive has no material)")] = False
    pbrMetallicRoughness: PbrMetallicRoughness = PbrMetallicRoughness()
    normalTexture: TextureRef | None = None
    occlusionTexture: TextureRef | None = None
    emissiveTexture: TextureRef | None = None
    emissiveFactor: tuple[float, float, float] = (0.0, 0.0, 0.0)
    alphaMode: Literal["OPAQUE", "MASK", "BLEND"] = "OPAQUE"
    alphaCutoff: float = 0.5
    doubleSided: bool = False
    unlit: Annotated[bool, Doc("KHR_materials_unlit")] = False
    emissiveStrength: Annotated[float | None, Doc("KHR_materials_emissive_strength")] = None
    clearcoat: Annotated[Clearcoat | None, Doc("KHR_materials_clearcoat")] = None
    sheen: Annotated[Sheen | None, Doc("KHR_materials_sheen")] = None
    transmission: Annotated[Transmission | None, Doc("KHR_materials_transmission")] = None
    volume: Annotated[Volume | None, Doc("KHR_materials_volume")] = None
    ior: Annotated[float | None, Doc("KHR_materials_ior")] = None
    specular: Annotated[Specular | None, Doc("KHR_materials_specular")] = None
    iridescence: Annotated[Iridescence | None, Doc("KHR_materials_iridescence")] = None
    anisotropy: Annotated[Anisotropy | None, Doc("KHR_materials_anisotropy")] = None
    dispersion: Annotated[float | None, Doc("KHR_materials_dispersion")] = None
    diffuseTransmission: Annotated[DiffuseTransmission | None, Doc("KHR_materials_diffuse_transmission")] = None
    pbrSpecularGlossiness: Annotated[SpecularGlossiness | None, Doc("KHR_materials_pbrSpecularGlossiness")] = None
    textureTransform: Annotated[bool, Doc("any texture slot of the material uses KHR_texture_transform")] = False
    maxUv: Annotated[int, Doc("highest UV set any texture slot samples, -1 when untextured")] = -1
    extensions: Annotated[tuple[str, ...], Doc("sorted names of every extension on the material")] = ()
    extras: Annotated[dict[str, Any], Doc("material.extras as authored")] = field(default_factory=dict)


# ---------------------------------------------------------------- node / scene / chunk
class NodeFacts(Frozen, kw_only=True):
    skin: Annotated[bool, Doc("the node has a skin")] = False
    skinJoints: Annotated[int, Doc("number of joints of that skin")] = 0
    instancing: Annotated[bool, Doc("EXT_mesh_gpu_instancing present")] = False
    instancingAttributes: Annotated[tuple[str, ...], Doc("sorted attribute names of EXT_mesh_gpu_instancing")] = ()
    mirrored: Annotated[bool, Doc("the node's world matrix has a negative determinant")] = False
    morphWeights: Annotated[bool, Doc("node or mesh declares morph weights")] = False
    morphWeightCount: Annotated[int, Doc("length of node.weights, else of mesh.weights, else 0")] = 0


class Lights(Frozen, kw_only=True):
    """KHR_lights_punctual lights by type: the one shape of light counts (per scene, per chunk)."""

    directional: Annotated[int, Doc("directional lights")] = 0
    point: Annotated[int, Doc("point lights")] = 0
    spot: Annotated[int, Doc("spot lights")] = 0


class SceneMaterials(Frozen, kw_only=True):
    """Aggregates over every draw a scene reaches (variants included)."""

    draws: Annotated[int, Doc("draws reachable from the scene")] = 0
    extensions: Annotated[tuple[str, ...], Doc("sorted union of the extensions of the drawn materials")] = ()
    alphaModes: Annotated[tuple[str, ...], Doc("sorted alpha modes of the drawn materials")] = ()
    transmission: Annotated[bool, Doc("some drawn material has KHR_materials_transmission")] = False
    volume: Annotated[bool, Doc("some drawn material has KHR_materials_volume")] = False


class SceneFacts(Frozen, kw_only=True):
    index: Annotated[int, Doc("index of the draw's scene in the file (its first scene reaching the node)")] = 0
    default: Annotated[bool, Doc("that scene is the file's default (glTF 'scene', else scene 0)")] = True
    lights: Annotated[Lights, Doc("KHR_lights_punctual lights among the nodes of the draw's scene")] = Lights()
    materials: Annotated[SceneMaterials, Doc("aggregates over the draws of the draw's scene")] = SceneMaterials()


class DrawInfo(Frozen, kw_only=True):
    variant: Annotated[str | None, Doc("KHR_materials_variants variant name, None for the base mapping")] = None


class ChunkFacts(Frozen, kw_only=True):
    name: Annotated[str, Doc("chunk name: its path from the world root, '/'-separated")]
    level: Annotated[str, Doc("level the chunk belongs to")]
    lights: Annotated[Lights, Doc("KHR_lights_punctual lights placed in the chunk: every light node "
                           "the scan reaches in its files (each node once), or in the grid cell")] = Lights()


FactValue = bool | int | float | str | None


class ProvidedFacts(Frozen, kw_only=True):
    """The facts of a rule set's fact providers (``ext.<provider>.<fact>``): this model has none; a rule
    set that names providers checks its expressions against one made from their declarations
    (:func:`pipeline.fact_providers.provided_model`)."""


class DrawFacts(Frozen, kw_only=True):
    """Everything rules may read about one draw.  Source location is kept apart."""

    mesh: MeshFacts
    material: MaterialFacts
    node: NodeFacts = NodeFacts()
    scene: SceneFacts = SceneFacts()
    chunk: ChunkFacts
    draw: DrawInfo = DrawInfo()
    ext: Annotated[dict[str, dict[str, FactValue]], Doc("facts of the rule set's fact providers, read as ext.<provider>.<fact> and typed by the "
                    "provider's declaration (docs/plugins.md); None when unknown")] = field(default_factory=dict)

    def signature(self) -> str:
        """Stable hash of the canonical serialization: draws with equal facts share it."""
        return stable_hash(dump(self))

    def to_json(self, parts: dict | None = None) -> dict:
        """:func:`dump`; with ``parts`` (kept by the caller while the facts it dumps are alive), each part
        shared by many draws (their mesh, their material) is dumped once."""
        if parts is None:
            return dump(self)
        doc = {}
        for name in self.__struct_fields__:
            part = getattr(self, name)
            if name == "ext":  # provided facts are JSON values already, and left out when there are none
                if part:
                    doc[name] = {provider: dict(values) for provider, values in part.items()}
                continue
            found = parts.get(id(part))
            if found is None:
                found = parts[id(part)] = dump(part)
            doc[name] = found
        return doc


class DrawSource(Frozen, kw_only=True):
    """Where a draw comes from; file paths are relative to the scanned root, '/'-separated."""

    file: str
    chunk: str
    level: str
    node: int
    mesh: int
    primitive: int
    material: Annotated[int | None, Doc("material index, None for the glTF default material")]
    variant: Annotated[str | None, Doc("KHR_materials_variants variant name, None for the base mapping")] = None


class Draw(Frozen, kw_only=True):
    source: DrawSource
    facts: DrawFacts


# ---------------------------------------------------------------- the models as data
class FactField(NamedTuple):
    """A field of a fact model: its type (``| None`` kept, the description taken off), meaning, default."""

    annotation: Any
    description: str
    default: Any  # msgspec.NODEFAULT: required (a factory's product when it has one)


@functools.cache
def fact_fields(model: type) -> dict[str, FactField]:
    """A fact model's fields, in order."""
    out = {}
    for info in msgspec.structs.fields(model):
        annotation, description = info.type, ""
        if getattr(annotation, "__metadata__", None) is not None:  # Annotated[T, Doc(...)]
            description = next((m.description or "" for m in annotation.__metadata__ if isinstance(m, Meta)), "")
            annotation = annotation.__origin__
        default = info.default_factory() if info.default_factory is not msgspec.NODEFAULT else info.default
        out[info.name] = FactField(annotation, description, default)
    return out


def is_model(value: Any) -> bool:
    """``value`` is a fact model class."""
    return isinstance(value, type) and issubclass(value, Frozen)


def dump(model: Frozen, *, defaults: bool = True) -> dict:
    """A fact model as JSON data (tuples as lists); the provided facts (``ext``) are left out when there are
    none; ``defaults=False`` leaves out every field at its default, at every depth."""
    doc = _DECODE(_ENCODE(model))
    if not doc.get("ext", True):
        del doc["ext"]
    return doc if defaults else _changed(doc, model)


_ENCODE, _DECODE = msgspec.json.Encoder().encode, msgspec.json.Decoder().decode


def _changed(doc: Any, value: Any) -> Any:
    """``doc`` (the dump of ``value``) without the fields at their defaults."""
    if isinstance(value, Frozen):
        fields = fact_fields(type(value))
        return {name: _changed(item, getattr(value, name)) for name, item in doc.items()
                if fields[name].default is msgspec.NODEFAULT or getattr(value, name) != fields[name].default}
    if isinstance(value, (list, tuple)):
        return [_changed(d, v) for d, v in zip(doc, value)]
    if isinstance(value, dict):
        return {k: _changed(d, value[k]) for k, d in doc.items()}
    return doc


def canonical(model: Frozen) -> bytes:
    """Canonical bytes (:mod:`pipeline.digest`) of a fact model's :func:`dump`."""
    return canonical_bytes(dump(model))


class FactsError(ValueError):
    """Data that is not a fact model's (the message says where)."""


def load(model: type, data: Any):
    """A fact model from JSON data, checked: every type, no unknown field (:class:`FactsError` otherwise)."""
    try:
        return msgspec.convert(data, model)
    except msgspec.ValidationError as exc:
        raise FactsError(str(exc)) from None


def replace(model: Frozen, **changes: Any):
    """A copy of a fact model with ``changes`` (not checked: values of the declared types)."""
    return msgspec.structs.replace(model, **changes)
