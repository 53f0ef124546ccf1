"""The glTF document as msgspec structs: what the scanner decodes every file into.

The one schema of the glTF reader: every file is decoded straight from its JSON bytes
into these types (:mod:`pipeline.scan.gltf.decode`), and a file they reject is walked
against the same declarations for its located error (``/json/pointer: error: ...``,
:mod:`pipeline.scan.gltf.walk`).  Only what a fact needs is declared; every other
property is ignored.  Validation is strict: an index is a JSON integer (not ``1.0`` or
``true``), every number finite, every index and count in 0 .. 2**32-1.

Meshes, nodes and accessors are TypedDicts (plain dicts, read with ``.get(key,
default)``).  The ``extensions`` of materials and primitives are
decoded as plain dicts first and turned into their extension structs by
:mod:`pipeline.scan.gltf.decode`, which keeps the names of the extensions it does not
model (``names()``, read by facts); elsewhere unknown extensions are ignored.
"""

# Annotations are evaluated when each class is made (no postponed annotations here): msgspec and the
# rule checker read them in every process, and strings would be parsed and evaluated there each time.

from typing import Annotated, Any, Literal

from msgspec import Meta, Struct
from typing_extensions import NotRequired, TypedDict

UINT32_MAX = 2**32 - 1
FLOAT_MAX = 1.7976931348623157e308
NonNegative = Annotated[int, Meta(ge=0, le=UINT32_MAX)]
Count = Annotated[int, Meta(ge=1, le=UINT32_MAX)]
# JSON numbers too large for a double are out of range for msgspec; NaN and Infinity
# are not JSON.  Every float the structs keep is therefore finite.
Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Vec4 = tuple[float, float, float, float]
RawExtensions = dict[str, Any]


class Model(Struct, frozen=True, kw_only=True):
    """A glTF object: unknown properties are ignored."""


class OpenExtensions(Struct, frozen=True, kw_only=True):
    """An ``extensions`` object: known blocks are typed fields; ``others`` names the rest."""

    others: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        known = [name for name in self.__struct_fields__ if name != "others" and getattr(self, name) is not None]
        return tuple(sorted(known + list(self.others)))


# ---------------------------------------------------------------- textures
class TextureTransform(Model):
    offset: Vec2 = (0.0, 0.0)
    rotation: float = 0.0
    scale: Vec2 = (1.0, 1.0)
    texCoord: NonNegative | None = None


class TextureInfoExtensions(OpenExtensions):
    KHR_texture_transform: TextureTransform | None = None


class TextureInfo(Model):
    index: NonNegative
    texCoord: NonNegative = 0
    scale: float | None = None
    strength: float | None = None
    extensions: TextureInfoExtensions | None = None  # others: not kept (only the transform is read)


# ---------------------------------------------------------------- materials
class PbrMetallicRoughness(Model):
    baseColorFactor: Vec4 = (1.0, 1.0, 1.0, 1.0)
    baseColorTexture: TextureInfo | None = None
    metallicFactor: float = 1.0
    roughnessFactor: float = 1.0
    metallicRoughnessTexture: TextureInfo | None = None


class Clearcoat(Model):
    clearcoatFactor: float = 0.0
    clearcoatTexture: TextureInfo | None = None
    clearcoatRoughnessFactor: float = 0.0
    clearcoatRoughnessTexture: TextureInfo | None = None
    clearcoatNormalTexture: TextureInfo | None = None


class Sheen(Model):
    sheenColorFactor: Vec3 = (0.0, 0.0, 0.0)
    sheenColorTexture: TextureInfo | None = None
    sheenRoughnessFactor: float = 0.0
    sheenRoughnessTexture: TextureInfo | None = None


class Transmission(Model):
    transmissionFactor: float = 0.0
    transmissionTexture: TextureInfo | None = None


class Volume(Model):
    thicknessFactor: float = 0.0
    thicknessTexture: TextureInfo | None = None
    attenuationDistance: Annotated[float, Meta(gt=0)] | None = None
    attenuationColor: Vec3 = (1.0, 1.0, 1.0)


class Specular(Model):
    specularFactor: float = 1.0
    specularTexture: TextureInfo | None = None
    specularColorFactor: Vec3 = (1.0, 1.0, 1.0)
    specularColorTexture: TextureInfo | None = None


class Iridescence(Model):
    iridescenceFactor: float = 0.0
    iridescenceTexture: TextureInfo | None = None
    iridescenceIor: float = 1.3
    iridescenceThicknessMinimum: float = 100.0
    iridescenceThicknessMaximum: float = 400.0
    iridescenceThicknessTexture: TextureInfo | None = None


class Anisotropy(Model):
    anisotropyStrength: float = 0.0
    anisotropyRotation: float = 0.0
    anisotropyTexture: TextureInfo | None = None


class DiffuseTransmission(Model):
    diffuseTransmissionFactor: float = 0.0
    diffuseTransmissionTexture: TextureInfo | None = None
    diffuseTransmissionColorFactor: Vec3 = (1.0, 1.0, 1.0)
    diffuseTransmissionColorTexture: TextureInfo | None = None


class SpecularGlossiness(Model):
    diffuseFactor: Vec4 = (1.0, 1.0, 1.0, 1.0)
    diffuseTexture: TextureInfo | None = None
    specularFactor: Vec3 = (1.0, 1.0, 1.0)
    glossinessFactor: float = 1.0
    specularGlossinessTexture: TextureInfo | None = None


class EmissiveStrength(Model):
    emissiveStrength: Annotated[float, Meta(ge=0)] = 1.0


class Ior(Model):
    ior: float = 1.5


class Dispersion(Model):
    dispersion: Annotated[float, Meta(ge=0)] = 0.0


class Unlit(Model):
    pass


class MaterialExtensions(OpenExtensions):
    KHR_materials_unlit: Unlit | None = None
    KHR_materials_emissive_strength: EmissiveStrength | None = None
    KHR_materials_clearcoat: Clearcoat | None = None
    KHR_materials_sheen: Sheen | None = None
    KHR_materials_transmission: Transmission | None = None
    KHR_materials_volume: Volume | None = None
    KHR_materials_ior: Ior | None = None
    KHR_materials_specular: Specular | None = None
    KHR_materials_iridescence: Iridescence | None = None
    KHR_materials_anisotropy: Anisotropy | None = None
    KHR_materials_dispersion: Dispersion | None = None
    KHR_materials_diffuse_transmission: DiffuseTransmission | None = None
    KHR_materials_pbrSpecularGlossiness: SpecularGlossiness | None = None


class Material(Model):
    pbrMetallicRoughness: PbrMetallicRoughness | None = None
    normalTexture: TextureInfo | None = None
    occlusionTexture: TextureInfo | None = None
    emissiveTexture: TextureInfo | None = None
    emissiveFactor: Vec3 = (0.0, 0.0, 0.0)
    alphaMode: Literal["OPAQUE", "MASK", "BLEND"] = "OPAQUE"
    alphaCutoff: Annotated[float, Meta(ge=0)] = 0.5
    doubleSided: bool = False
    extensions: RawExtensions | None = None  # -> MaterialExtensions after decoding
    extras: Any = None


# ---------------------------------------------------------------- meshes
class VariantMapping(Model):
    material: NonNegative
    variants: Annotated[list[NonNegative], Meta(min_length=1)]


class PrimitiveVariants(Model):
    mappings: Annotated[list[VariantMapping], Meta(min_length=1)]


class PrimitiveExtensions(OpenExtensions):
    KHR_materials_variants: PrimitiveVariants | None = None


class Primitive(TypedDict):
    attributes: dict[str, NonNegative]
    indices: NotRequired[NonNegative]
    material: NotRequired[NonNegative]
    mode: NotRequired[Annotated[int, Meta(ge=0, le=6)]]
    targets: NotRequired[list[dict[str, NonNegative]]]
    extensions: NotRequired[RawExtensions]  # -> PrimitiveExtensions after decoding


class Mesh(TypedDict):
    primitives: Annotated[list[Primitive], Meta(min_length=1)]
    weights: NotRequired[list[float]]


ComponentType = Literal[5120, 5121, 5122, 5123, 5125, 5126]
AccessorType = Literal["SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4"]


class Accessor(TypedDict):
    componentType: ComponentType
    normalized: NotRequired[bool]
    count: Count
    type: AccessorType


# ---------------------------------------------------------------- nodes and scenes
class LightRef(Model):
    light: NonNegative


class GpuInstancing(Model):
    attributes: Annotated[dict[str, NonNegative], Meta(min_length=1)]


class NodeExtensions(OpenExtensions):
    KHR_lights_punctual: LightRef | None = None
    EXT_mesh_gpu_instancing: GpuInstancing | None = None


class Node(TypedDict):
    children: NotRequired[list[NonNegative]]
    mesh: NotRequired[NonNegative]
    skin: NotRequired[NonNegative]
    matrix: NotRequired[Annotated[list[float], Meta(min_length=16, max_length=16)]]
    translation: NotRequired[Vec3]
    rotation: NotRequired[Vec4]
    scale: NotRequired[Vec3]
    weights: NotRequired[list[float]]
    extensions: NotRequired[NodeExtensions]  # others: not kept (not read)


class Skin(Model):
    joints: Annotated[list[NonNegative], Meta(min_length=1)]


class Scene(Model):
    nodes: list[NonNegative] = []


class Texture(Model):
    """Textures are only counted (a textureInfo index must exist)."""


class Light(Model):
    type: Literal["directional", "point", "spot"]


class Lights(Model):
    lights: list[Light] = []


class Variant(Model):
    name: str


class Variants(Model):
    variants: list[Variant] = []


class RootExtensions(OpenExtensions):
    KHR_lights_punctual: Lights | None = None
    KHR_materials_variants: Variants | None = None


class BufferRef(Model, kw_only=True):
    uri: str | None = None
    byteLength: Count


class Asset(Model):
    version: str
    minVersion: str | None = None


class Document(Model):
    """The top-level glTF object, reduced to what the scanner reads."""

    asset: Asset
    extensionsUsed: list[str] = []
    extensionsRequired: list[str] = []
    scene: NonNegative | None = None
    scenes: list[Scene] = []
    nodes: list[Node] = []
    meshes: list[Mesh] = []
    materials: list[Material] = []
    textures: list[Texture] = []
    accessors: list[Accessor] = []
    skins: list[Skin] = []
    buffers: list[BufferRef] = []
    extensions: RootExtensions | None = None  # others: not kept (not read)


# Objects whose ``extensions`` are decoded as plain dicts, then read as this struct
# (pipeline/scan/gltf/decode.py): names it does not declare are kept in ``others``.
RAW_EXTENSIONS: dict[type, type[OpenExtensions]] = {
    Material: MaterialExtensions,
    Primitive: PrimitiveExtensions,
}

TOP_LEVEL_ARRAYS = (
    "extensionsUsed", "extensionsRequired", "scenes", "nodes", "meshes", "materials",
    "textures", "accessors", "skins", "buffers",
)


# ---------------------------------------------------------------- buffer locations (gltf/bufferdoc.py)
class SparseIndices(TypedDict):
    bufferView: NonNegative
    byteOffset: NotRequired[NonNegative]
    componentType: Literal[5121, 5123, 5125]


class SparseValues(TypedDict):
    bufferView: NonNegative
    byteOffset: NotRequired[NonNegative]


class Sparse(TypedDict):
    count: Count
    indices: SparseIndices
    values: SparseValues


Bounds = Annotated[list[float], Meta(min_length=1, max_length=16)]


class DataAccessor(TypedDict):
    bufferView: NotRequired[NonNegative]
    byteOffset: NotRequired[NonNegative]
    componentType: ComponentType
    normalized: NotRequired[bool]
    count: Count
    type: AccessorType
    max: NotRequired[Bounds]
    min: NotRequired[Bounds]
    sparse: NotRequired[Sparse]


class BufferView(TypedDict):
    buffer: NonNegative
    byteOffset: NotRequired[NonNegative]
    byteLength: Count
    byteStride: NotRequired[Annotated[int, Meta(ge=4, le=252)]]
    extensions: NotRequired[dict[str, Any]]  # EXT/KHR_meshopt_compression: the view holds no plain data


class Buffer(TypedDict):
    uri: NotRequired[str]
    byteLength: Count


class BufferDocument(Model):
    """Accessors, bufferViews and buffers: decoded only when a buffer fact or a grid level asks."""

    accessors: list[DataAccessor] = []
    bufferViews: list[BufferView] = []
    buffers: list[Buffer] = []
