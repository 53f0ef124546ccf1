"""Fact parts shared between the files of one scan (or of one worker's chunks), each with its canonical
bytes: equal parts are one object, and a draw's signature is assembled from its parts' bytes."""

from __future__ import annotations

from collections.abc import Callable

from pipeline import facts as F
from pipeline.digest import bytes_hash
from pipeline.scan.gltf.materials import DEFAULT_MATERIAL, MaterialCache


MAX_PARTS = 16384  # parts of one kind kept for later chunks (meshes, nodes, materials); past that, afresh


class SharedFacts:
    """Fact parts shared between the files of one scan (or one worker's chunk), each with its canonical bytes.

    Equal parts become one object, so a draw's signature is assembled from the bytes of
    its parts (the canonical form of ``{"chunk", "material", "mesh", "node", "scene"}``)
    and hashed once per distinct combination instead of dumping the whole facts per draw.
    Keys are exact (types and order included); every object keyed by ``id`` is held here, so ids
    stay unique while it lives (``canonical``: any part's bytes by its id, for the scan records).
    """

    def __init__(self) -> None:
        self.materials = MaterialCache()
        self.meshes: dict[tuple, tuple[F.MeshFacts, bytes]] = {}
        self.nodes: dict[tuple, tuple[F.NodeFacts, bytes]] = {}
        self.scenes: dict[tuple, tuple[F.SceneFacts, bytes]] = {}
        self.chunks: dict[tuple[str, str], tuple[F.ChunkFacts, bytes]] = {}
        self.draws: dict[tuple, tuple[F.DrawFacts, str]] = {}
        self.infos: dict[str | None, tuple[F.DrawInfo, bytes]] = {}
        self.default_material = (DEFAULT_MATERIAL, F.canonical(DEFAULT_MATERIAL))
        self.canonical = {id(DEFAULT_MATERIAL): self.default_material[1]}

    def end_chunk(self) -> None:
        """Done with a chunk (its records written): forget the parts no other chunk shares (its draws
        and chunk facts, which name it, and its scenes, mostly one per file), and any kind of part past
        :data:`MAX_PARTS`, with their bytes: a worker's memory does not grow with the chunks it does."""
        self.draws.clear()  # keyed by the ids of every kind of part: dropped with any of them
        self.chunks.clear()
        self.scenes.clear()
        for table in (self.meshes, self.nodes):
            if len(table) > MAX_PARTS:
                table.clear()
        self.materials.trim(MAX_PARTS)
        self.canonical = {id(made): raw for table in (self.meshes, self.nodes, self.infos)
                          for made, raw in table.values()}
        self.canonical.update((id(made), raw) for made, raw in self.materials.parts())
        self.canonical[id(DEFAULT_MATERIAL)] = self.default_material[1]

    def part(self, table: dict, key: tuple, build: Callable[[], F.Frozen]) -> tuple:
        found = table.get(key)
        if found is None:
            made = build()
            found = table[key] = (made, F.canonical(made))
            self.canonical[id(made)] = found[1]
        return found

    def draw(self, mesh: tuple, material: tuple, node: tuple, scene: tuple, chunk: tuple,
             variant: str | None = None) -> tuple[F.DrawFacts, str]:
        info = self.infos.get(variant) or self.part(self.infos, variant,
                                                    lambda: F.DrawInfo(variant=variant))
        key = (id(mesh[0]), id(material[0]), id(node[0]), id(scene[0]), id(chunk[0]), id(info[0]))
        found = self.draws.get(key)
        if found is None:
            facts = F.DrawFacts(mesh=mesh[0], material=material[0], node=node[0], scene=scene[0], chunk=chunk[0],
                                draw=info[0])
            # canonical_object() of the parts' bytes, its members in their (fixed) sorted order
            text = b"".join((b'{"chunk":', chunk[1], b',"draw":', info[1], b',"material":', material[1],
                             b',"mesh":', mesh[1], b',"node":', node[1], b',"scene":', scene[1], b"}"))
            found = self.draws[key] = (facts, bytes_hash(text))
        return found
