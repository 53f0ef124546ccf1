"""Stage jobs: what one compiler invocation is, and the cache key that names it.

A permutation key needs one compile per stage of its family.  Before a job is
made, its defines are *projected*: only the macros its source closure tests in a
preprocessor condition survive, so keys that differ only in fragment features
share one vertex job.

A job's cache key hashes the whole command (the DVC habit: one canonical
serializer): the source closure by content, the projected defines, stage, entry
point, language, target, optimize flag, the compiler identity (name and version
of glslang and spirv-tools) and the cache format version.  Change any of them and
the key changes; change nothing and it is the same on every machine.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pipeline.cache.store import FORMAT_VERSION
from pipeline.cook.compile import CompileRequest, SourceTree
from pipeline.digest import bytes_hash, stable_hash
from pipeline.keys.defines import project_defines, stage_defines
from pipeline.keys.key import PermutationKey
from pipeline.rules.models import RuleSet


@dataclass(frozen=True)
class JobOptions:
    """Settings that are part of every job's identity."""

    target: str = "vulkan1.2"
    optimize: bool = False
    compiler: str = ""  # Backend.identity


@dataclass(frozen=True)
class StageJob:
    """One compile: a request plus the content of everything it reads."""

    request: CompileRequest
    closure: tuple[tuple[str, str], ...]  # (relpath, sha256) of the source and its includes
    options: JobOptions
    key: str = field(default="")

    @property
    def identity(self) -> str:
        """The job without contents: what ``--explain`` compares across runs."""
        r = self.request
        return stable_hash({"source": r.source, "stage": r.stage, "entry": r.entry,
                            "language": r.language, "defines": list(map(list, r.defines))})


def job_key(request: CompileRequest, closure, options: JobOptions) -> str:
    extra = {"problems": [d.to_json() for d in request.problems]} if request.problems else {}
    return stable_hash(extra | {
        "format": FORMAT_VERSION,
        "source": request.source,
        "stage": request.stage,
        "language": request.language,
        "entry": request.entry,
        "defines": [list(d) for d in request.defines],
        "target": request.target,
        "optimize": request.optimize,
        "closure": [list(c) for c in closure],
        "compiler": options.compiler,
    })


@dataclass
class JobPlan:
    """Every unique job of a cook and which job each key's stages map to."""

    jobs: dict[str, StageJob] = field(default_factory=dict)            # job key -> job
    stages: dict[PermutationKey, dict[str, str]] = field(default_factory=dict)  # key -> stage -> job key
    stage_uses: int = 0                                                 # (key, stage) pairs before dedup
    shapes: dict[PermutationKey, str] = field(default_factory=dict)    # key -> graph shape (materialx)

    def jobs_for(self, key: PermutationKey) -> dict[str, str]:
        return self.stages.get(key, {})

    def stage_report(self) -> dict[str, dict[str, int]]:
        """Per stage: key uses, unique jobs, and the most keys sharing one job.

        ``{"vertex": {"uses": 30, "jobs": 9, "max_shared": 8}, ...}``: 30 keys
        need a vertex stage, projection leaves 9 distinct vertex jobs, and one of
        them serves 8 keys.
        """
        users = Counter(job_key for per_stage in self.stages.values() for job_key in per_stage.values())
        report: dict[str, dict[str, int]] = {}
        for job_key, job in sorted(self.jobs.items()):
            entry = report.setdefault(job.request.stage, {"uses": 0, "jobs": 0, "max_shared": 0})
            entry["uses"] += users[job_key]
            entry["jobs"] += 1
            entry["max_shared"] = max(entry["max_shared"], users[job_key])
        return dict(sorted(report.items()))


def plan_jobs(keys, rulesets: dict[str, RuleSet], tree: SourceTree, options: JobOptions) -> JobPlan:
    """Project every key's defines per stage and dedup into unique jobs."""
    plan = JobPlan()
    sources = ClosureCache(tree)
    generators: dict[str, object] = {}
    for key in sorted(keys):
        ruleset = rulesets[key.shader]
        if ruleset.kind != "ubershader":
            jobs = generated_jobs(ruleset, key, generators, tree, options, plan)
        else:
            defines = tuple((n, str(v)) for n, v in stage_defines(ruleset, key))
            jobs = {stage: make_job(source, stage, defines, sources, options)
                    for stage, source in sorted(ruleset.sources.items())}
        per_stage: dict[str, str] = {}
        for stage, job in jobs.items():
            plan.jobs.setdefault(job.key, job)
            per_stage[stage] = job.key
            plan.stage_uses += 1
        plan.stages[key] = per_stage
    return plan


STAGE_SUFFIX = {"vertex": "vert", "fragment": "frag", "compute": "comp"}


def generated_jobs(ruleset: RuleSet, key: PermutationKey, generators: dict, tree: SourceTree,
                   options: JobOptions, plan: JobPlan | None = None) -> dict[str, StageJob]:
    """The stage jobs of a key of a generated family (:mod:`pipeline.cook.generate`).

    A stage's source is named after its text (``generated/<sha256[:16]>.frag``), so
    keys generating the same text (and defines) are one job; the closure is the
    files the text was made from.
    """
    from pipeline.cook.generate import generator_for  # the generator modules load on first use

    if ruleset.kind not in generators:
        generators[ruleset.kind] = generator_for(ruleset, tree)
    out = {}
    for stage, made in sorted(generators[ruleset.kind].generate(ruleset, key).items()):
        text = made.text or ""
        stage_of_job = "fragment" if made.problems else stage  # a failed generation: one job, not one per stage
        name = f"generated/{bytes_hash(text.encode())[:16]}.{STAGE_SUFFIX[stage_of_job]}"
        closure = tuple(sorted((f, tree.parsed(f).sha256) for f in made.files if tree.has_file(f)))
        request = CompileRequest(source=name, stage=stage_of_job, defines=made.defines, target=options.target,
                                 optimize=options.optimize, text=made.text, problems=made.problems)
        out[stage] = StageJob(request, closure, options, job_key(request, closure, options))
        if plan is not None and made.shape is not None:
            plan.shapes[key] = made.shape
    return out


class ClosureCache:
    """A source file's closure and tested macros, read from the tree once per plan."""

    def __init__(self, tree: SourceTree):
        self.tree = tree
        self._seen: dict[str, tuple[frozenset[str], tuple[tuple[str, str], ...]]] = {}

    def get(self, relpath: str) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
        """``(tested macros, closure)`` of one stage source."""
        if relpath not in self._seen:
            self._seen[relpath] = (self.tree.tested_macros(relpath), self.tree.closure(relpath))
        return self._seen[relpath]


def make_job(source, stage: str, defines, sources: SourceTree | ClosureCache, options: JobOptions) -> StageJob:
    """The stage job of one key: its defines projected onto what the source closure tests."""
    closures = sources if isinstance(sources, ClosureCache) else ClosureCache(sources)
    tested, closure = closures.get(source.file)
    projected = project_defines(defines, tested)
    request = CompileRequest(source=source.file, stage=stage, language=source.language,
                             entry=source.entry, defines=projected, target=options.target,
                             optimize=options.optimize)
    return StageJob(request, closure, options, job_key(request, closure, options))
