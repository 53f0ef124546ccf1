"""A source generator plug-in: family kind ``tint``, one flat color per key.

The fragment text is written out for each key (``TINT`` is the tint's brightness in
tenths, read from the key), the vertex text is the same for every key: keys of one
tint share their jobs, and the vertex job is shared by all.
"""

from pipeline.plan.generate import GeneratedStage

VERTEX = "#version 450\nlayout(location = 0) in vec3 position;\nvoid main() { gl_Position = vec4(position, 1.0); }\n"


class TintGenerator:
    version = "1.0"

    def __init__(self, tree):
        self.tree = tree  # the shader library, as every generator is given it

    def generate(self, ruleset, key):
        tint = dict(key.features)["TINT"]
        if tint < 0:
            raise ValueError(f"a negative tint ({tint}) has no color")
        fragment = ("#version 450\nlayout(location = 0) out vec4 color;\n"
                    f"void main() {{ color = vec4(vec3({tint / 10:.1f}), 1.0); }}\n")
        return {"vertex": GeneratedStage(VERTEX), "fragment": GeneratedStage(fragment)}


class Garbage:
    version = "1"

    def __init__(self, tree):
        pass

    def generate(self, ruleset, key):
        return {"fragment": "void main() {}"}  # a str, not a GeneratedStage
