"""glTF material (core + KHR_materials_* + KHR_texture_transform) -> :class:`MaterialFacts`.

Extension blocks map one-to-one onto the fact models of the same field names;
every textureInfo becomes a :class:`TextureRef` telling which UV set it samples.
Texture indices are checked here, for the materials a draw uses.
"""

from __future__ import annotations

from typing import Any

import msgspec

from pipeline import facts as F
from pipeline.errors import GltfError
from pipeline.scan.gltf import structs as G
from pipeline.scan.gltf.pointer import pointer

# glTF extension name -> (MaterialFacts field, fact block model)
_BLOCKS: dict[str, tuple[str, type[F.Frozen]]] = {
    "KHR_materials_clearcoat": ("clearcoat", F.Clearcoat),
    "KHR_materials_sheen": ("sheen", F.Sheen),
    "KHR_materials_transmission": ("transmission", F.Transmission),
    "KHR_materials_volume": ("volume", F.Volume),
    "KHR_materials_specular": ("specular", F.Specular),
    "KHR_materials_iridescence": ("iridescence", F.Iridescence),
    "KHR_materials_anisotropy": ("anisotropy", F.Anisotropy),
    "KHR_materials_diffuse_transmission": ("diffuseTransmission", F.DiffuseTransmission),
    "KHR_materials_pbrSpecularGlossiness": ("pbrSpecularGlossiness", F.SpecularGlossiness),
}
# glTF extension name -> (MaterialFacts field, property holding the single value)
_SCALARS = {
    "KHR_materials_emissive_strength": ("emissiveStrength", "emissiveStrength"),
    "KHR_materials_ior": ("ior", "ior"),
    "KHR_materials_dispersion": ("dispersion", "dispersion"),
}
_NORMAL_SLOTS = {"normalTexture", "clearcoatNormalTexture"}

DEFAULT_MATERIAL = F.MaterialFacts(default=True)


def texture_ref(slot: str, info: G.TextureInfo) -> F.TextureRef:
    """One textureInfo as facts: the UV set it samples and its transform."""
    transform = info.extensions.KHR_texture_transform if info.extensions else None
    override = transform.texCoord if transform else None
    return F.TextureRef(**{
        "index": info.index,
        "texCoord": info.texCoord,
        "transform": transform is not None,
        "transformTexCoord": override,
        "uv": info.texCoord if override is None else override,
        "scale": (1.0 if info.scale is None else info.scale) if slot in _NORMAL_SLOTS else None,
        "strength": (1.0 if info.strength is None else info.strength) if slot == "occlusionTexture" else None,
    })


class _Refs(list):
    """TextureRefs of one material, checked against the document's texture count."""

    def __init__(self, textures: int, file: str, at: tuple):
        super().__init__()
        self.textures, self.file, self.at = textures, file, at

    def add(self, slot: str, info: G.TextureInfo, at: tuple) -> F.TextureRef:
        if info.index >= self.textures:
            raise GltfError.at(self.file, f"texture {info.index} does not exist",
                               pointer=pointer(*self.at, *at, slot, "index"))
        ref = texture_ref(slot, info)
        self.append(ref)
        return ref


def _fields(block: msgspec.Struct, refs: _Refs, *at: str) -> dict[str, Any]:
    """A glTF block's fields with every textureInfo turned into a TextureRef (collected in refs)."""
    out = {name: getattr(block, name) for name in block.__struct_fields__}
    for name, value in out.items():
        if type(value) is G.TextureInfo:
            out[name] = refs.add(name, value, at)
    return out


def material_facts(material: G.Material, index: int, textures: int, file: str) -> F.MaterialFacts:
    """Facts of material ``index``; raises GltfError when a texture index does not exist."""
    return _material_facts(material, index, textures, file)[0]


def _material_facts(material: G.Material, index: int, textures: int, file: str) -> tuple[F.MaterialFacts, _Refs]:
    refs = _Refs(textures, file, ("materials", index))
    values = _fields(material, refs)
    values.pop("extensions"), values.pop("extras")
    if material.pbrMetallicRoughness is not None:
        values["pbrMetallicRoughness"] = F.PbrMetallicRoughness(
            **_fields(material.pbrMetallicRoughness, refs, "pbrMetallicRoughness"))
    else:
        values.pop("pbrMetallicRoughness")
    values.update(_extension_facts(material.extensions, refs))
    values["textureTransform"] = any(r.transform for r in refs)
    values["maxUv"] = max((r.uv for r in refs), default=-1)
    values["extras"] = dict(material.extras) if isinstance(material.extras, dict) else {}
    return F.MaterialFacts(**values), refs


def _extension_facts(ext: G.MaterialExtensions | None, refs: _Refs) -> dict[str, Any]:
    if ext is None:
        return {}
    values: dict[str, Any] = {"extensions": ext.names(), "unlit": ext.KHR_materials_unlit is not None}
    for name, (field, model) in _BLOCKS.items():
        block = getattr(ext, name)
        if block is not None:
            values[field] = model(**_fields(block, refs, "extensions", name))
    for name, (field, prop) in _SCALARS.items():
        block = getattr(ext, name)
        if block is not None:
            values[field] = getattr(block, prop)
    return values


_MATERIAL_JSON = msgspec.json.Encoder().encode


class MaterialCache:
    """Material facts shared by equal materials (of any file), with their canonical bytes.

    Keyed by the validated material's exact JSON serialization (``-0.0``, ``1.0`` and
    extension names all distinct); a hit is used only when every texture index it
    references exists in the asking document, otherwise the material is rebuilt,
    which raises the located error.
    """

    def __init__(self) -> None:
        self._by_json: dict[bytes, tuple[F.MaterialFacts, bytes, int]] = {}

    def trim(self, limit: int) -> None:
        """Forget every material once more than ``limit`` are held."""
        if len(self._by_json) > limit:
            self._by_json.clear()

    def parts(self) -> list[tuple[F.MaterialFacts, bytes]]:
        """The materials held, with their canonical bytes."""
        return [(facts, raw) for facts, raw, _ in self._by_json.values()]

    def get(self, material: G.Material, index: int, textures: int, file: str) -> tuple[F.MaterialFacts, bytes]:
        try:
            key = _MATERIAL_JSON(material)
        except Exception:  # noqa: BLE001 - unserializable extras: build without sharing
            key = None
        hit = self._by_json.get(key) if key is not None else None
        if hit is not None and hit[2] < textures:
            return hit[0], hit[1]
        facts, refs = _material_facts(material, index, textures, file)
        entry = (facts, F.canonical(facts), max((r.index for r in refs), default=-1))
        if key is not None:
            self._by_json[key] = entry
        return entry[0], entry[1]
