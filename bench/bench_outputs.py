"""Figure 17: what a cook writes against what it must write, and the cost of loading one chunk's index.

What must be written is the unique blob bytes (each compiled blob once); everything else
(chunk indexes, level manifests, the library's index and reflections, its chunk table) is
counted per draw.  ``bench/run`` measures it on every generated world; on its own::

    python bench/bench_outputs.py OUT DRAWS
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pipeline.outputs import manifest as mf
from pipeline.outputs.chunk_table import table_path
from pipeline.outputs.pak import PakReader


def output_sizes(out: Path, draws: int) -> dict:
    """Bytes on disk under ``out`` by kind, the unique blob bytes, and the bytes per draw besides the blobs."""
    library = PakReader(mf.library_path(out))
    blob_bytes = sum(len(library.get(d)) for d in library.hashes())
    kinds = {"library": 0, "chunk table": 0, "chunk indexes": 0, "level manifests": 0, "other": 0}
    table = table_path(mf.library_path(out))
    for path in out.rglob("*"):
        if not path.is_file():
            continue
        kind = ("library" if path == mf.library_path(out) else "chunk table" if path == table else "level manifests"
                if path.name.endswith(mf.LEVEL_SUFFIX + ".json") else "chunk indexes" if path.suffix == ".json"
                else "other")
        kinds[kind] += path.stat().st_size
    total = sum(kinds.values())
    return {"total": total, "blob_bytes": blob_bytes, "blobs": len(library), "draws": draws, **kinds,
            "per_draw": (total - blob_bytes) / max(draws, 1), "budget": blob_bytes + 100 * draws}


def index_load_ms(out: Path, runs: int = 3) -> float:
    """Median milliseconds to read and decode one chunk index (every index of ``out`` in turn)."""
    paths = [p for p in out.rglob("*.json") if not p.name.endswith(mf.LEVEL_SUFFIX + ".json")]
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for path in paths:
            mf.load_chunk_manifest(path)
        samples.append((time.perf_counter() - start) / max(len(paths), 1) * 1000)
    return sorted(samples)[len(samples) // 2]


def main(argv: list[str]) -> int:
    out, draws = Path(argv[0]), int(argv[1])
    sizes = output_sizes(out, draws)
    for name, value in sizes.items():
        print(f"{name:16} {value:,.1f}" if isinstance(value, float) else f"{name:16} {value:,}")
    print(f"{'index load (ms)':16} {index_load_ms(out):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
