"""Reading glTF 2.0 files: containers, limits, and msgspec structs of the subset we read.

``read_gltf(path, file, limits) -> Gltf`` is the entry point;
:func:`pipeline.scan.gltf.draws.draws_of` turns a :class:`Gltf` into draws with facts.

Modules: ``container`` (.gltf/.glb bytes -> JSON + BIN), ``structs`` (the one
schema: msgspec structs of the subset read), ``decode`` (bytes -> structs),
``walk`` and ``located`` (the located error of what the structs reject), ``limits``, ``refs``
(cross-reference checks, node hierarchy), ``accessors`` (accessor formats),
``uris`` (buffer URIs: data: URIs and paths that must stay inside the world),
``extensions`` (what ``extensionsRequired`` may name),
``reader`` (all of it in order), ``materials``, ``transforms``, ``draws`` and
``grid`` (facts), ``construct`` (building fact models from validated values without
validating them again).
"""

from pipeline.scan.gltf.reader import Gltf, parse_gltf, read_bytes, read_gltf

__all__ = ["Gltf", "parse_gltf", "read_bytes", "read_gltf"]
