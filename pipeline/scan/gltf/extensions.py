"""The glTF extensions the scanner understands.

A file whose ``extensionsRequired`` names anything else cannot be scanned (its
draws may need data we cannot interpret) and is a located error.  Compression
and image-format extensions do not change which attributes or materials exist,
so they are understood in the sense that matters here.
"""

from __future__ import annotations

MATERIALS = frozenset({
    "KHR_materials_unlit", "KHR_materials_emissive_strength", "KHR_materials_clearcoat",
    "KHR_materials_sheen", "KHR_materials_transmission", "KHR_materials_volume",
    "KHR_materials_ior", "KHR_materials_specular", "KHR_materials_iridescence",
    "KHR_materials_anisotropy", "KHR_materials_dispersion", "KHR_materials_diffuse_transmission",
    "KHR_materials_pbrSpecularGlossiness", "KHR_materials_variants",
})

READ = MATERIALS | {"KHR_texture_transform", "KHR_lights_punctual", "EXT_mesh_gpu_instancing"}

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
