"""Pydantic models of the glTF 2.0 subset the scanner reads.

Only what a fact needs is modelled; every other property (animations, images,
samplers, cameras, names ...) is ignored, and the JSON parser skips it without
building Python objects.  Buffer locations (bufferViews, buffers, accessor
offsets and bounds) are parsed on demand by :mod:`pipeline.scan.gltf.bufferdoc`.  Validation is strict (an index must be a JSON integer,
not ``1.0`` or ``true``) and rejects non-finite numbers.  Extension names are
valid Python identifiers, so extension blocks are plain fields; unknown
extensions are kept as raw values (``extra="allow"``) so their names can be listed.

Cross-references (``accessor 99 does not exist``) are checked afterwards by
:mod:`pipeline.scan.gltf.refs`, which knows the JSON pointers.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, with_config
from typing_extensions import NotRequired, TypedDict

# Every index and count is a JSON integer in 0 .. 2**32-1 (glTF arrays and GPU counts are
# 32-bit): a larger value is a located error, never a number other stages cannot serialize.
UINT32_MAX = 2**32 - 1
NonNegative = Annotated[int, Field(ge=0, le=UINT32_MAX)]
Count = Annotated[int, Field(ge=1, le=UINT32_MAX)]

Vec3 = tuple[float, float, float]
Vec4 = tuple[float, float, float, float]


class Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True, allow_inf_nan=False)



class OpenExtensions(BaseModel):
    """An ``extensions`` object: known blocks are typed fields, the others are kept raw."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True, allow_inf_nan=False)

    def names(self) -> tuple[str, ...]:
        known = [name for name in type(self).model_fields if getattr(self, name) is not None]
        return tuple(sorted(known + list(self.__pydantic_extra__ or ())))


# ---------------------------------------------------------------- textures
class TextureTransform(Model):
    offset: tuple[float, float] = (0.0, 0.0)
    rotation: float = 0.0
    scale: tuple[float, float] = (1.0, 1.0)
    texCoord: NonNegative | None = None


class TextureInfoExtensions(OpenExtensions):
    KHR_texture_transform: TextureTransform | None = None


class TextureInfo(Model):
    index: NonNegative
    texCoord: NonNegative = 0
    scale: float | None = None  # normalTextureInfo
    strength: float | None = None  # occlusionTextureInfo
    extensions: TextureInfoExtensions | None = None


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
    attenuationDistance: float | None = Field(None, gt=0)
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
    emissiveStrength: float = Field(1.0, ge=0)


class Ior(Model):
    ior: float = 1.5


class Dispersion(Model):
    dispersion: float = Field(0.0, ge=0)


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
    alphaCutoff: float = Field(0.5, ge=0)
    doubleSided: bool = False
    extensions: MaterialExtensions | None = None
    extras: Any = None


# ---------------------------------------------------------------- meshes
# Meshes, nodes and accessors are the bulk of a glTF file: they are TypedDicts
# (validated by pydantic, but built as plain dicts, several times cheaper than
# model instances).  Optional keys are absent when not authored; read them with
# ``.get(key, default)`` using the glTF defaults.
_TD = ConfigDict(strict=True, allow_inf_nan=False)


class VariantMapping(Model):
    material: NonNegative
    variants: list[NonNegative] = Field(min_length=1)


class PrimitiveVariants(Model):
    mappings: list[VariantMapping] = Field(min_length=1)


class PrimitiveExtensions(OpenExtensions):
    KHR_materials_variants: PrimitiveVariants | None = None


@with_config(_TD)
class Primitive(TypedDict):
    attributes: dict[str, NonNegative]
    indices: NotRequired[NonNegative]
    material: NotRequired[NonNegative]
    mode: NotRequired[Annotated[int, Field(ge=0, le=6)]]
    targets: NotRequired[list[dict[str, NonNegative]]]
    extensions: NotRequired[PrimitiveExtensions]


@with_config(_TD)
class Mesh(TypedDict):
    primitives: Annotated[list[Primitive], Field(min_length=1)]
    weights: NotRequired[list[float]]


ComponentType = Literal[5120, 5121, 5122, 5123, 5125, 5126]
AccessorType = Literal["SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4"]


@with_config(_TD)
class Accessor(TypedDict):
    """What facts need of an accessor; buffer access has its own model (gltf/bufferdoc.py)."""

    componentType: ComponentType
    normalized: NotRequired[bool]
    count: Count
    type: AccessorType


# ---------------------------------------------------------------- nodes and scenes
class LightRef(Model):
    light: NonNegative


class GpuInstancing(Model):
    attributes: dict[str, NonNegative] = Field(min_length=1)


class NodeExtensions(OpenExtensions):
    KHR_lights_punctual: LightRef | None = None
    EXT_mesh_gpu_instancing: GpuInstancing | None = None


@with_config(_TD)
class Node(TypedDict):
    children: NotRequired[list[NonNegative]]
    mesh: NotRequired[NonNegative]
    skin: NotRequired[NonNegative]
    matrix: NotRequired[Annotated[list[float], Field(min_length=16, max_length=16)]]
    translation: NotRequired[Vec3]
    rotation: NotRequired[Vec4]
    scale: NotRequired[Vec3]
    weights: NotRequired[list[float]]
    extensions: NotRequired[NodeExtensions]


class Skin(Model):
    joints: list[NonNegative] = Field(min_length=1)


class Scene(Model):
    nodes: list[NonNegative] = Field(default_factory=list)


class Texture(Model):
    """Textures are only counted (a textureInfo index must exist)."""


class Light(Model):
    type: Literal["directional", "point", "spot"]


class Lights(Model):
    lights: list[Light] = Field(default_factory=list)


class Variant(Model):
    name: str


class Variants(Model):
    variants: list[Variant] = Field(default_factory=list)


class RootExtensions(OpenExtensions):
    KHR_lights_punctual: Lights | None = None
    KHR_materials_variants: Variants | None = None


class BufferRef(Model):
    """Where a buffer's bytes live; checked when the file is read (pipeline.scan.gltf.uris)."""

    uri: str | None = None
    byteLength: Count


class Asset(Model):
    version: str
    minVersion: str | None = None


class Document(Model):
    """The top-level glTF object, reduced to what the scanner reads."""

    asset: Asset
    extensionsUsed: list[str] = Field(default_factory=list)
    extensionsRequired: list[str] = Field(default_factory=list)
    scene: NonNegative | None = None
    scenes: list[Scene] = Field(default_factory=list)
    nodes: list[Node] = Field(default_factory=list)
    meshes: list[Mesh] = Field(default_factory=list)
    materials: list[Material] = Field(default_factory=list)
    textures: list[Texture] = Field(default_factory=list)
    accessors: list[Accessor] = Field(default_factory=list)
    skins: list[Skin] = Field(default_factory=list)
    buffers: list[BufferRef] = Field(default_factory=list)
    extensions: RootExtensions | None = None


TOP_LEVEL_ARRAYS = (
    "extensionsUsed", "extensionsRequired", "scenes", "nodes", "meshes", "materials",
    "textures", "accessors", "skins", "buffers",
)
