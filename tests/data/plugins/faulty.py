"""Source transforms that fail for some keys: one raises, one returns no text."""


class RaisesOnFour:
    name = "raises-on-four"
    version = "1"

    def transform(self, family, key, stage, text, defines):
        if defines.get("NUM_LIGHTS") == "4":
            raise RuntimeError("four lights are not supported")
        return text


class ReturnsNothing:
    name = "returns-nothing"
    version = "1"

    def transform(self, family, key, stage, text, defines):
        return None if defines.get("NUM_LIGHTS") == "4" else text
