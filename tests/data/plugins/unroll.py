"""A source transform plug-in: loops between ``#pragma unroll_loop_start`` and
``#pragma unroll_loop_end`` are unrolled in the text, the loop index substituted in each
copy, the bound read from a count define of the key (``NUM_LIGHTS``), as WebGL engines
do before their shaders reach the compiler.

    #pragma unroll_loop_start
    for (int i = 0; i < NUM_LIGHTS; i++) {
        sum += lights[i].rgb;
    }
    #pragma unroll_loop_end

becomes, for ``NUM_LIGHTS 2``, ``{ sum += lights[0].rgb; } { sum += lights[1].rgb; }``.
Lines after the loop keep their numbers (a ``#line`` directive follows the copies).
"""

from __future__ import annotations

import re

LOOP = re.compile(
    r"^[ \t]*#[ \t]*pragma[ \t]+unroll_loop_start[ \t]*\n"
    r"\s*for\s*\(\s*int\s+(?P<index>\w+)\s*=\s*(?P<start>\w+)\s*;\s*(?P=index)\s*<\s*(?P<end>\w+)\s*;"
    r"\s*(?P=index)\s*\+\+\s*\)\s*\{(?P<body>.*?)\}\s*\n"
    r"[ \t]*#[ \t]*pragma[ \t]+unroll_loop_end[ \t]*$",
    re.M | re.S)


class UnrollLoops:
    name = "unroll"
    version = "1.0"

    def transform(self, family, key, stage, text, defines):
        return LOOP.sub(lambda m: self._unrolled(m, text, defines), text)

    def _unrolled(self, match, text, defines):
        start, end = (self._bound(match.group(g), defines) for g in ("start", "end"))
        index = re.compile(rf"\b{match.group('index')}\b")
        copies = " ".join("{" + index.sub(str(i), match.group("body")).replace("\n", " ") + "}"
                          for i in range(start, end))
        next_line = text.count("\n", 0, match.end()) + 2  # the number of the line after the loop
        return f"{copies}\n#line {next_line}"

    @staticmethod
    def _bound(word, defines):
        if word.isdigit():
            return int(word)
        if word not in defines:
            raise ValueError(f"unroll_loop bound {word} is no define of the key")
        return int(defines[word])
