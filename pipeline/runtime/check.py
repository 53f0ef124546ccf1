"""``pipeline runtime check``: create every shader module and pipeline state of cooked outputs.

Every chunk manifest under the output folder (or one chunk) is loaded with
:class:`~pipeline.runtime.loader.Loader` on a device with the Khronos validation layer
on.  The result counts the pipeline states (deduplicated by id over the chunks) and
those created, and lists every validation message and failure with its chunk, pipeline
state and key.  The world root's chunk (``.root.json``) is checked like any other; a
folder with no chunk manifest (empty, not a cook's outputs) is an error, never a pass
that checked nothing.

The other targets of the keys (``webgl2``, ``webgpu``, ``metal`` ...) are then loaded by
their own client where one runs here (:mod:`pipeline.runtime.target_check`), each listed
with what it made and refused, or why no client ran.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.outputs import manifest as mf
from pipeline.errors import PipelineError
from pipeline.progress import NullProgress, Progress
from pipeline.runtime.device import Device
from pipeline.runtime.loader import Failure, Loader
from pipeline.runtime.target_check import TargetCheck, check_targets


@dataclass
class CheckResult:
    device: str
    chunks: list[str]
    pipelines: int
    created: int
    modules: int
    validation_errors: list[Failure] = field(default_factory=list)
    failed: list[Failure] = field(default_factory=list)
    targets: list[TargetCheck] = field(default_factory=list)  # the other targets, each by its client

    @property
    def ok(self) -> bool:
        return not self.validation_errors and not self.failed and self.created == self.pipelines \
            and all(t.ok for t in self.targets)

    def to_json(self) -> dict:
        return {"device": self.device, "chunks": self.chunks, "pipelines": self.pipelines, "created": self.created,
                "modules": self.modules, "validation_errors": [f.to_json() for f in self.validation_errors],
                "failed": [f.to_json() for f in self.failed], "targets": [t.to_json() for t in self.targets]}


def chunk_names(out: Path, chunk: str | None = None) -> list[str]:
    """Every chunk with a manifest under ``out`` (or just ``chunk``), by name; the world root's
    chunk (``.root.json``) is ``.``."""
    if chunk is not None:
        return [chunk]
    names = []
    for path in sorted(Path(out).rglob("*.json")):
        if path.name.endswith(mf.LEVEL_SUFFIX + ".json"):
            continue
        name = path.relative_to(out).with_suffix("").as_posix()
        if name == mf.ROOT_STEM:
            names.append(mf.ROOT)
        elif not path.name.startswith("."):
            names.append(name)
    return names


class NothingToCheck(PipelineError):
    """An outputs folder with no chunk manifest: checking it would check nothing."""


def check(out: Path | str, chunk: str | None = None, progress: Progress | None = None) -> CheckResult:
    out = Path(out)
    progress = progress or NullProgress()
    if not out.is_dir():
        raise NothingToCheck.at(str(out), "not a folder of cooked outputs: found no outputs to check")
    names = chunk_names(out, chunk)
    if not names:
        raise NothingToCheck.at(str(out), "found no outputs to check (no chunk manifest <chunk>.json in it): "
                                          "name the output folder of a cook (--out, default build)")
    failed: list[Failure] = []
    states: set[str] = set()
    with Device(validation=True) as device:
        loader = Loader(device, out)
        try:
            progress.start("creating pipelines", len(names))
            for name in names:
                try:
                    loaded = loader.load(name)
                except Exception as exc:  # noqa: BLE001 - a bad manifest or pak is reported, the rest still checked
                    failed.append(Failure(name, None, None, str(exc) if isinstance(exc, mf.ManifestError)
                                          else f"{type(exc).__name__}: {exc}"))
                else:
                    states |= set(loaded.manifest.pipelines)
                    failed += loaded.failures
                progress.advance()
            progress.finish()
            created, modules = len(loader.created), len(loader.factory.modules)
        finally:
            loader.close()
    # messages while creating a pipeline name it; any other (module creation, teardown) is listed unattributed
    messages = [m for c in loader.chunks.values() for m in c.messages]
    remaining = Counter(device.messages) - Counter(m.message for m in messages)
    messages += [Failure("", None, None, text) for text in sorted(remaining.elements())]
    return CheckResult(device.name, names, len(states), created, modules, messages, failed, check_targets(out, names))
