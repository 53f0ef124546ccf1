"""A chunk's manifest built from the job records: keys, their stage blobs, errors, the runtime contract.

Nothing is read from disk but the reflections of the blobs (through the ``reflection``
callable), so a cook and its dry run build the same manifest and compare it with the
files on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import msgspec

from pipeline.compile.scheduler import RunResult
from pipeline.keys.required import KeyUses
from pipeline.keys.key import PermutationKey
from pipeline.outputs import manifest as mf
from pipeline.outputs.contract import MAX_SHARED, ContractBuilder, bindings_by_pass
from pipeline.plan.jobs import JobPlan, blobs_of

MISSING_BLOB = "a stage blob is missing from the cache"
MAX_ENTRIES = 4096  # features and specialization objects the entries of a cook's chunks share; then afresh


@dataclass(frozen=True)
class CookedJobs:
    """What the output writers read of a cook: the job plan and its results, the families, the
    fallback keys per chunk, and the located errors of a key's failed jobs (``key_errors``)."""

    plan: JobPlan
    run: RunResult
    families: Mapping
    fallbacks: Mapping[str, Mapping[str, str]]                # chunk -> shader/pass -> fallback key text
    key_errors: Callable[[PermutationKey], list[dict]]
    shared: dict = field(default_factory=dict, compare=False, repr=False)  # what its chunks' contracts share


class BuiltChunk(msgspec.Struct, frozen=True):
    """A chunk's manifest and the runtime contract's warnings found while building it."""

    manifest: mf.ChunkManifest
    warnings: tuple[str, ...] = ()


def build_chunk(jobs: CookedJobs, chunk: str, level: str, required: Mapping[PermutationKey, KeyUses],
                file_errors: list[dict], has_blob: Callable[[str], bool],
                reflection: Callable[[str], dict]) -> BuiltChunk:
    """The chunk's manifest from the job records; a stage whose blob ``has_blob`` denies is left out (an error).
    ``reflection(digest)`` gives a blob's reflection, for the runtime contract (:mod:`pipeline.outputs.contract`)."""
    plan, results = jobs.plan, jobs.run.results
    entries, errors = [], list(file_errors)
    contract = ContractBuilder(reflection, jobs.families, jobs.shared)
    fallbacks = dict(jobs.fallbacks.get(chunk, {}))
    fallback_stages, specs = {}, jobs.shared.setdefault("entries", {})
    if len(specs) >= MAX_ENTRIES:
        specs.clear()
    known = jobs.shared.setdefault("keys", {})  # id of a key -> (it, its jobs, its targets' jobs, constant ids)
    for key, info in sorted(required.items(), key=lambda kv: kv[0].text):
        found = known.get(id(key))
        if found is None or found[0] is not key:  # the chunks of a cook share their key objects
            found = known[id(key)] = (key, plan.jobs_for(key), plan.targets.get(key), _constant_ids(jobs, key.shader))
            if len(known) >= MAX_SHARED:
                known.clear()
        _, key_jobs, per_target, constant_ids = found
        stages = blobs_of(key_jobs, results, has_blob)
        targets = {label: blobs_of(j, results, has_blob) for label, j in per_target.items()} if per_target else None
        entries.append(mf.ManifestEntry.of(key, info, stages, constant_ids, targets, specs))
        vulkan = stages if targets is None or any(t.startswith("vulkan") for t in targets) else None
        if vulkan is not None:  # the runtime contract reflects the key's stages when they are Vulkan SPIR-V
            contract.add_key(key, vulkan, info.bindings)
        if fallbacks.get(f"{key.shader}/{key.pass_name}") == key.text and vulkan is not None:
            fallback_stages[key] = vulkan
        if len(stages) < len(key_jobs) or (targets and any(len(targets[t]) < len(per_target[t]) for t in targets)):
            errors += jobs.key_errors(key) or [{"key": key.text, "message": MISSING_BLOB}]
    by_pass = bindings_by_pass(required)
    for key, stages in fallback_stages.items():
        contract.add_fallback(key, stages, by_pass)
    manifest = mf.chunk_manifest(chunk, level, entries, errors, draws=contract.draw_list(),
                                 pipelines=contract.pipelines, reflection=contract.blobs, fallbacks=fallbacks)
    return BuiltChunk(manifest, tuple(dict.fromkeys(contract.warnings)))


def _constant_ids(jobs: CookedJobs, shader: str) -> dict[str, int]:
    """Feature -> specialization constant id of a family (made once per cook)."""
    made = jobs.shared.setdefault("constant ids", {})
    if shader not in made:
        made[shader] = {name: f.constant_id for name, f in jobs.families[shader].features.items()}
    return made[shader]
