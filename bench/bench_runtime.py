"""Cooked outputs on Vulkan (lavapipe): pipeline creation rate and chunk load time, against
the same pipelines created from SPIR-V files on disk, in one run.

    python bench/bench_runtime.py [--runs N] [--world DIR]

The world (default: the sample world) is cooked once.  Then, on one device without the
validation layer (the driver's own cost), each run creates every chunk's pipeline states
twice, each time from nothing (new modules, layouts, render passes):

- ``pak``: :class:`pipeline.runtime.loader.Loader` loads each chunk as the output format
  has it: opens the folder's shader library (``shaders.pak``), reads the chunk's index,
  takes the reflection of its blobs from the library, creates a shader module per blob
  (each checked against its SHA-256) and a pipeline per pipeline state;
- ``files``: the baseline: the blobs as ``<digest>.spv`` files in a folder, read one file
  per stage, modules and the same pipelines created with the same factory; the pipeline
  descriptions (what an engine would have compiled into its own code) are prepared
  before timing.

Reported: pipeline states created per second (creation calls only) and the wall time to
load a chunk (everything above), both as ratios pak / files.  Medians of the runs.  The
keys of the result keep the names ``pak_rate`` and ``pak_chunk_ms`` for the library path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import api  # noqa: E402
from pipeline.outputs import manifest as mf  # noqa: E402
from pipeline.outputs.read_outputs import load_chunk  # noqa: E402
from pipeline.runtime.check import chunk_names  # noqa: E402
from pipeline.runtime.device import Device  # noqa: E402
from pipeline.runtime.loader import Loader  # noqa: E402
from pipeline.runtime.pipelines import PipelineFactory  # noqa: E402

SAMPLE = ROOT / "examples" / "sample_world"


class _Timed(PipelineFactory):
    """The factory, timing its pipeline creation calls."""

    def __init__(self, device):
        super().__init__(device)
        self.create_seconds = 0.0

    def create(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return super().create(*args, **kwargs)
        finally:
            self.create_seconds += time.perf_counter() - start


def _from_pak(device: Device, out: Path, chunks: list[str]) -> tuple[float, float, int]:
    loader = Loader(device, out)
    loader.factory = _Timed(device)
    start = time.perf_counter()
    for chunk in chunks:
        loader.load(chunk)
    wall = time.perf_counter() - start
    created = len(loader.created)
    seconds = loader.factory.create_seconds
    loader.close()
    return wall, seconds, created


def _prepare_files(out: Path, chunks: list[str], folder: Path) -> list[tuple[str, dict, dict, dict]]:
    """Write every blob of the chunks as <digest>.spv; return (pipeline id, state, stage -> digest,
    stage -> reflection)."""
    plan, seen = [], set()
    for chunk in chunks:
        manifest, library = load_chunk(out, chunk)  # the index, its blobs' reflection from the library
        for digest in sorted(mf.stage_hashes(manifest)):
            (folder / f"{digest}.spv").write_bytes(library.get(digest))
        stages_of = {e.key: dict(e.stages) for e in manifest.keys.values()}
        for pid, state in sorted(manifest.pipelines.items()):
            if pid in seen:
                continue
            seen.add(pid)
            stages = stages_of[state["key"]]
            plan.append((pid, state, stages, {s: manifest.reflection[d] for s, d in stages.items()}))
    return plan


def _from_files(device: Device, folder: Path, plan) -> tuple[float, float, int]:
    factory = _Timed(device)
    start = time.perf_counter()
    for _, state, stages, reflections in plan:
        modules = {s: factory.module(d, (folder / f"{d}.spv").read_bytes()) for s, d in stages.items()}
        factory.create(state, modules, reflections)
    wall = time.perf_counter() - start
    seconds, created = factory.create_seconds, len(factory.pipelines)
    factory.close()
    return wall, seconds, created


def measure(world: Path, workdir: Path, runs: int = 5) -> dict:
    out = workdir / "out"
    api.cook(api.open_world(world), cache=workdir / "cache", out=out, jobs=2)
    chunks = chunk_names(out)
    folder = workdir / "spv"
    folder.mkdir(exist_ok=True)
    plan = _prepare_files(out, chunks, folder)
    pak, files = [], []
    with Device(validation=False) as device:
        _from_pak(device, out, chunks)  # warm-up: driver, page cache
        _from_files(device, folder, plan)
        for i in range(runs):  # alternate which path goes first, so drift on a shared machine cancels
            if i % 2:
                files.append(_from_files(device, folder, plan))
                pak.append(_from_pak(device, out, chunks))
            else:
                pak.append(_from_pak(device, out, chunks))
                files.append(_from_files(device, folder, plan))
        name = device.name
    assert pak[0][2] == files[0][2] == len(plan), (pak[0][2], files[0][2], len(plan))

    def med(rows, i):
        return statistics.median(r[i] for r in rows)

    n = len(plan)
    return {"device": name, "chunks": len(chunks), "pipelines": n, "runs": runs,
            "pak_rate": n / med(pak, 1), "files_rate": n / med(files, 1),
            "pak_chunk_ms": med(pak, 0) / len(chunks) * 1000, "files_chunk_ms": med(files, 0) / len(chunks) * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--world", type=Path, default=SAMPLE)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pipeline-bench-runtime-") as tmp:
        print(json.dumps(measure(args.world, Path(tmp), args.runs), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
