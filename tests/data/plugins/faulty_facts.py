"""Fact providers that fail for some files: one raises on a wetness it does not support, one answers a
value of the wrong type."""

import json


class RaisesOnThree:
    name = "wetness"
    version = "1"
    facts = {"level": "int"}
    sidecar = "{stem}.material.json"

    def read(self, gltf, sidecar):
        return json.loads(sidecar) if sidecar is not None else {}

    def provide(self, data, draw):
        level = data.get("materials", {}).get(str(draw.material), {}).get("wetness", 0)
        if level == 3:
            raise ValueError("wetness 3 is not supported")
        return {"level": level}


class AnswersText:
    name = "wetness"
    version = "1"
    facts = {"level": "int"}
    sidecar = "{stem}.material.json"

    def provide(self, data, draw):
        return {"level": "two" if data else 0}
