"""A fact provider reading an engine's material sidecar beside each glTF file (``mesh.gltf`` ->
``mesh.material.json``): per material index, how wet the surface is."""

import json


class Wetness:
    name = "wetness"
    version = "1.0"
    facts = {"level": "int", "surface": ["dry", "damp", "soaked"], "gloss": "float"}
    sidecar = "{stem}.material.json"

    def read(self, gltf, sidecar):
        return json.loads(sidecar) if sidecar is not None else {}

    def provide(self, data, draw):
        entry = data.get("materials", {}).get(str(draw.material), {})
        return {"level": entry.get("wetness", 0), "surface": entry.get("surface"), "gloss": entry.get("gloss")}
