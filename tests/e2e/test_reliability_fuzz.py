"""Property-based fuzzing of the reader: mutated real files never crash the scanner.

Seeds are the bundled sample world plus small files of the third-party corpus (when
present).  Mutations are byte-level (flips, truncation, insertion) and JSON-level
(a value replaced by one of another type, a key deleted, an index moved).  Whatever
comes out, ``scan_bytes`` must return: draws with serializable facts, or diagnostics
that are one located line each.  Set PIPELINE_FUZZ_EXAMPLES to fuzz longer.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

from conftest import corpus_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robust_helpers import CHUNK_BIN, CHUNK_JSON, LINE, chunk, glb_container

from pipeline.config import Chunking, LevelConfig, WorldConfig
from pipeline.digest import canonical_bytes
from pipeline.scan.buffers import OPTIONAL_FACTS
from pipeline.scan.scanner import scan_bytes
from pipeline.facts import dump
from paths import REPO

EXAMPLES = int(os.environ.get("PIPELINE_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SAMPLE_WORLD = REPO / "examples" / "sample_world"
MAX_SEED_BYTES = 48 * 1024


def seed_files() -> list[Path]:
    seeds = sorted(SAMPLE_WORLD.rglob("*.gl[tb]*"))
    corpus = corpus_path()
    if corpus is not None:
        small = sorted(p for p in corpus.rglob("*.gl[tb]*") if p.stat().st_size <= MAX_SEED_BYTES)
        seeds += small[:: max(1, len(small) // 40)]
    return [p for p in seeds if p.suffix in (".gltf", ".glb")]


SEEDS = [(p, p.read_bytes()) for p in seed_files()]
CONFIGS = [WorldConfig(), WorldConfig(levels={"lvl": LevelConfig(chunking=Chunking(grid=8.0))})]


def scan_never_raises(path: Path, data: bytes, config: WorldConfig) -> None:
    """The property: no exception; draws serialize; every diagnostic is one located line."""
    result = scan_bytes(data, path, root=path.parent, file=path.name, chunk_name="lvl/c", level="lvl",
                        config=config, optional_facts=OPTIONAL_FACTS)
    for draw in result.draws:
        canonical_bytes(dump(draw.facts))
        draw.facts.signature()
    for diagnostic in result.diagnostics:
        text = str(diagnostic).replace(": warning: ", ": error: ")
        assert LINE.match(text), text
        assert diagnostic.location.file == path.name
    if result.diagnostics and any(d.severity == "error" for d in result.diagnostics):
        assert result.draws == [] and len(result.diagnostics) == 1


# ---------------------------------------------------------------- byte-level
seeds = st.sampled_from(range(len(SEEDS)))


@st.composite
def byte_mutations(draw) -> tuple[int, bytes]:
    index = draw(seeds)
    data = bytearray(SEEDS[index][1])
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "delete", "word"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif kind == "word" and len(data) >= at + 4:
            data[at:at + 4] = struct.pack("<I", draw(st.sampled_from([0, 1, 2**31, 2**32 - 1, len(data)])))
    return index, bytes(data)


@FUZZ
@given(byte_mutations(), st.sampled_from(CONFIGS))
def test_byte_mutations_never_crash_the_reader(mutation, config):
    index, data = mutation
    scan_never_raises(SEEDS[index][0], data, config)


# ---------------------------------------------------------------- JSON-level
def split(data: bytes) -> tuple[dict, bytes | None]:
    if data[:4] == b"glTF":
        length = struct.unpack_from("<I", data, 12)[0]
        rest = data[20 + length:]
        return json.loads(data[20:20 + length]), rest[8:] if len(rest) >= 8 else None
    return json.loads(data), None


def join(doc: dict, binary: bytes | None, glb: bool) -> bytes:
    text = json.dumps(doc).encode()
    if not glb:
        return text
    body = chunk(CHUNK_JSON, text) + (chunk(CHUNK_BIN, binary, b"\0") if binary is not None else b"")
    return glb_container(body)


def paths(value, prefix=()) -> list[tuple]:
    """Every path into a JSON value (breadth-limited so huge arrays do not dominate)."""
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += paths(child, prefix + (key,))
    elif isinstance(value, list):
        for i, child in enumerate(value[:8]):
            out += paths(child, prefix + (i,))
    return out


WEIRD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.sampled_from([0, 1, -1, 2**32, 2**64]),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
    st.lists(st.integers(-3, 3), max_size=4), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.sampled_from(["data:;base64,@@", "../../etc/passwd", "/etc/passwd", "VEC5", "BLEND", "2.0", "3.0"]),
)


@st.composite
def json_mutations(draw) -> tuple[int, bytes]:
    index = draw(seeds)
    path, data = SEEDS[index]
    doc, binary = split(data)
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(doc)[1:] or [("asset",)]))
        parent = doc
        for part in where[:-1]:
            parent = parent[part]
        key, old = where[-1], parent[where[-1]] if where[-1] in parent or isinstance(parent, list) else None
        kind = draw(st.sampled_from(["replace", "delete", "index"]))
        if kind == "delete" and isinstance(parent, dict):
            del parent[key]
        elif kind == "index" and isinstance(old, int) and not isinstance(old, bool):
            parent[key] = old + draw(st.sampled_from([-old - 1, -1, 1, 7, 2**31]))
        else:
            parent[key] = draw(WEIRD_VALUES)
    return index, join(doc, binary, path.suffix == ".glb")


@FUZZ
@given(json_mutations(), st.sampled_from(CONFIGS))
def test_json_mutations_never_crash_the_reader(mutation, config):
    index, data = mutation
    scan_never_raises(SEEDS[index][0], data, config)


def test_the_seeds_themselves_scan_cleanly():
    for path, data in SEEDS:
        scan_never_raises(path, data, WorldConfig())
    assert len(SEEDS) >= 10
