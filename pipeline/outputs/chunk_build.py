"""A chunk's manifest built from the job records: keys, their stage blobs, errors, the runtime contract.

Nothing is read from disk but the reflections of the blobs (through the ``reflection``
callable), so a cook and its dry run build the same manifest and compare it with the
files on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pipeline.compile.scheduler import RunResult
from pipeline.keys.required import KeyUses
from pipeline.keys.key import PermutationKey
from pipeline.outputs import manifest as mf
from pipeline.outputs.contract import ContractBuilder, bindings_by_pass
from pipeline.plan.jobs import JobPlan, blobs_of

MISSING_BLOB = "a stage blob is missing from the cache"


@dataclass(frozen=True)
class CookedJobs:
    """What the output writers read of a cook: the job plan and its results, the families, the
    fallback keys per chunk, and the located errors of a key's failed jobs (``key_errors``)."""

    plan: JobPlan
    run: RunResult
    families: Mapping
    fallbacks: Mapping[str, Mapping[str, str]]                # chunk -> shader/pass -> fallback key text
    key_errors: Callable[[PermutationKey], list[dict]]


@dataclass(frozen=True)
class BuiltChunk:
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
    contract = ContractBuilder(reflection, jobs.families)
    fallbacks = dict(jobs.fallbacks.get(chunk, {}))
    fallback_stages, shader_ids = {}, {}
    for key, info in sorted(required.items(), key=lambda kv: kv[0].text):
        key_jobs = plan.jobs_for(key)
        stages = blobs_of(key_jobs, results, has_blob)
        per_target = plan.targets.get(key)
        targets = {label: blobs_of(j, results, has_blob) for label, j in per_target.items()} if per_target else None
        constant_ids = shader_ids.get(key.shader)
        if constant_ids is None:
            constant_ids = shader_ids[key.shader] = {name: f.constant_id
                                                     for name, f in jobs.families[key.shader].features.items()}
        entries.append(mf.ManifestEntry.of(key, info, stages, constant_ids, targets))
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
