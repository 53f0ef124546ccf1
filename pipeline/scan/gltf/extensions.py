"""The glTF extensions the scanner understands.

A file whose ``extensionsRequired`` names anything else cannot be scanned (its
draws may need data we cannot interpret) and is a located error.  Compression
and image-format extensions do not change which attributes or materials exist,
so they are understood in the sense that matters here.  The extensions read are
the ones :mod:`pipeline.scan.gltf.structs` declares.
"""

from __future__ import annotations

from pipeline.scan.gltf import structs as S


def _declared(*blocks: type[S.OpenExtensions]) -> frozenset[str]:
    return frozenset(name for block in blocks for name in block.__struct_fields__ if name != "others")


# The extensions the structs read: a field of an ``*Extensions`` struct.
MATERIALS = _declared(S.MaterialExtensions, S.PrimitiveExtensions)
READ = MATERIALS | _declared(S.TextureInfoExtensions, S.NodeExtensions, S.RootExtensions)

# Change how data is stored, not which attributes, textures or materials exist.
STORAGE = frozenset({
    "KHR_mesh_quantization", "KHR_draco_mesh_compression", "EXT_meshopt_compression",
    "KHR_meshopt_compression", "KHR_texture_basisu", "EXT_texture_webp", "EXT_texture_avif",
})

# Metadata and animation: no effect on which shader a draw needs.
HARMLESS = frozenset({
    "KHR_xmp", "KHR_xmp_json_ld", "KHR_animation_pointer", "KHR_materials_emissive_strength",
    "KHR_node_visibility", "EXT_lights_image_based", "KHR_lights_environment",
})

UNDERSTOOD = READ | STORAGE | HARMLESS


def is_understood(name: str) -> bool:
    return name in UNDERSTOOD
