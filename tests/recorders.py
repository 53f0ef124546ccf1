"""Test doubles that record what they were given: a Progress, and draw sources to hang keys on."""

from __future__ import annotations

from pipeline.facts import DrawSource


class ProgressRecorder:
    """A :class:`~pipeline.progress.Progress` that records every call, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def start(self, phase, total):
        self.calls.append(("start", phase, total))

    def advance(self, n=1):
        self.calls.append(("advance", n))

    def finish(self):
        self.calls.append(("finish",))

    def note(self, line):
        self.calls.append(("note", line))


def draw_sources(n: int, chunk: str = "forest/c00") -> list[DrawSource]:
    """``n`` draws of one mesh in ``chunk`` (nodes 0..n-1)."""
    return [DrawSource(file="a.gltf", chunk=chunk, level=chunk.split("/")[0], node=node, mesh=0, primitive=0,
                       material=None) for node in range(n)]
