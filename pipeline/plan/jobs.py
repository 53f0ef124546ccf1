"""Stage jobs: what one compiler invocation is, and the cache key that names it.

A permutation key needs one compile per stage of its family and target.  Before a
job is made, its defines are *projected*: only the macros its source closure names
somewhere survive (:mod:`pipeline.keys.defines`), so keys that differ only in
fragment features share one vertex job.

A job's cache key hashes the whole command (the DVC habit: one canonical
serializer): the source closure by content, the projected defines, stage, entry
point, language, target and its flags (relaxed, auto_map, version), optimize flag,
the compiler identity (name and version of glslang and spirv-tools), the
optimizer's (:func:`~pipeline.compilers.spirv_tools.optimizer_version`) when it runs,
HLSL register shifts, the stages a stage is linked with (``CompileRequest.link``:
their sources and defines, and their files in the closure), for ``metal`` its MSL
version and argument-buffer choice and the SPIRV-Cross build, for ``webgpu`` the
naga-wasm that writes its WGSL (with its driver) and the wgpu-native whose naga checks
it, the cache format version, and for a job that went through plug-ins
(docs/plugins.md) each one's name, version and source hash plus the text they made.
Change any of them and the key changes; change nothing and it is the same on every
machine.

Exact sources: when glslang's C API loads in the planning process, every GLSL job
is preprocessed there (defines and includes applied, well under a compile's time:
bench/bench_preprocess.py) and the *preprocessed text* replaces the source closure
and defines in the job key.  Jobs whose preprocessed text is identical are then one
job, however their defines differ (a define named only inside a branch the others
drop).  A job whose preprocessing fails keeps its define-based key, and its compile
reports the error.  The exact key found for a define-based key is recorded in the
cache (:mod:`pipeline.plan.setup`), and a later plan reads it instead of preprocessing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

import msgspec

from pipeline.compilers import CompileRequest, SourceTree
from pipeline.compilers.plugins import NO_PLUGINS, Plugins
from pipeline.compilers.request import DEFAULT_MSL_VERSION, DEFAULT_REGISTERS, target_info
from pipeline.compilers.toolchain import ToolchainError
from pipeline.digest import bytes_hash, stable_hash
from pipeline.errors import CompileError
from pipeline.keys.defines import project_defines, stage_defines
from pipeline.keys.key import PermutationKey
from pipeline.plan.job_keys import exact_key, job_key
from pipeline.plan.defined import Kept
from pipeline.plan.links import linked_stages
from pipeline.plan.plugins import StageText, stage_texts, transformed_stages
from pipeline.structs import replace
from pipeline.checked import suggest
from pipeline.rules.models import CompileTarget, RuleSet


class JobOptions(msgspec.Struct, frozen=True):
    """Settings that are part of every job's identity.

    ``target`` is the target of a family that names none; ``compile`` gives families
    their targets over the rule set's ``compile:`` (pipeline.toml ``[cook.compile]``).
    """

    target: str = "vulkan1.2"
    optimize: bool = False
    compiler: str = ""  # Backend.identity
    compile: tuple[tuple[str, tuple[CompileTarget, ...]], ...] = ()
    plugins: Plugins = NO_PLUGINS  # the world's plug-ins (pipeline.plan.plugins.world_plugins)

    def targets(self, ruleset: RuleSet) -> tuple[CompileTarget, ...]:
        """The family's compile targets, in order (the first Vulkan one's blobs are the key's ``stages``);
        none for a family the target matrix leaves out (:mod:`pipeline.plan.matrix`)."""
        configured = dict(self.compile)
        if ruleset.shader in configured:
            return configured[ruleset.shader]
        return ruleset.compile or (CompileTarget(target=self.target),)

    def explicit(self, ruleset: RuleSet) -> bool:
        """True when the family names its targets (its keys then list blobs per target)."""
        return ruleset.shader in dict(self.compile) or bool(ruleset.compile)


class StageJob(msgspec.Struct, frozen=True):
    """One compile: a request plus the content of everything it reads."""

    request: CompileRequest
    closure: tuple[tuple[str, str], ...]  # (relpath, sha256) of the source and its includes
    options: JobOptions
    key: str = ""

    @property
    def identity(self) -> str:
        """The job without contents: what ``--explain`` compares across runs."""
        r = self.request
        return stable_hash({"source": r.source, "stage": r.stage, "entry": r.entry,
                            "language": r.language, "defines": list(map(list, r.defines))})


def blobs_of(jobs: dict[str, str], results: dict, has_blob) -> dict[str, str]:
    """Stage -> blob digest of the jobs (stage -> job key) that compiled and whose blob is there."""
    stages = {}
    for stage, name in sorted(jobs.items()):
        job = results.get(name)
        if job is not None and job.blob and has_blob(job.blob):
            stages[stage] = job.blob
    return stages


def unknown_compile_families(compile_targets: dict, families) -> list[str]:
    """pipeline.toml ``[cook.compile]`` entries naming no family (a typo would compile nothing)."""
    return [f"pipeline.toml: warning: [cook.compile] names '{name}', which is no shader family"
            f"{suggest(name, families)}" for name in sorted(compile_targets) if name not in families]


def _linked(jobs: dict[str, StageJob]) -> dict[str, StageJob]:
    """A program's stage jobs, its vertex and fragment stage carrying each other when they link (:mod:`.links`)."""
    linked = linked_stages({stage: job.request for stage, job in jobs.items()})
    if not linked:
        return jobs
    closure = tuple(sorted(set(jobs["fragment"].closure) | set(jobs["vertex"].closure)))
    options = jobs["fragment"].options
    return {**jobs, **{stage: StageJob(request, closure, options, job_key(request, closure, options))
                       for stage, request in linked.items()}}


def default_preprocessor(tree: SourceTree) -> Callable[[CompileRequest], str | None] | None:
    """Preprocessing with glslang's C API in this process, or None when it cannot load here."""
    try:
        from pipeline.compilers.glslang_capi import GlslangCapiBackend
        backend = GlslangCapiBackend()
    except (ToolchainError, OSError):
        return None

    def preprocess(request: CompileRequest) -> str | None:
        if request.language != "glsl" or request.backend is not None or tree.include_errors(request.source):
            return None
        try:
            return backend.preprocess(request, tree)
        except CompileError:
            return None
    return preprocess


class JobPlan(msgspec.Struct):
    """Every unique job of a cook and which job each key's stages map to."""

    jobs: dict[str, StageJob] = msgspec.field(default_factory=dict)            # job key -> job
    stages: dict[PermutationKey, dict[str, str]] = msgspec.field(default_factory=dict)  # key -> stage -> job key
    stage_uses: int = 0                                                 # (key, stage) pairs before dedup
    shapes: dict[PermutationKey, str] = msgspec.field(default_factory=dict)    # key -> graph shape (materialx)
    exact: bool = False                       # jobs keyed by preprocessed text (merged when identical)
    merged: int = 0                           # define-distinct jobs merged for identical preprocessed text
    # keys of families that name their targets: key -> target label -> stage -> job key
    targets: dict[PermutationKey, dict[str, dict[str, str]]] = msgspec.field(default_factory=dict)
    preprocessed: dict[str, str] = msgspec.field(default_factory=dict)  # define-based -> exact key, preprocessed here
    # key -> stage -> its own job of ``stages`` (a merged job in ``jobs`` carries the defines of its first key)
    own: dict[PermutationKey, dict[str, StageJob]] = msgspec.field(default_factory=dict)

    def jobs_for(self, key: PermutationKey) -> dict[str, str]:
        """Stage -> job of the key's ``stages`` in the outputs (:func:`primary_stages`)."""
        return self.stages.get(key, {})

    def all_jobs_for(self, key: PermutationKey) -> list[str]:
        """Every job the key needs, over all its targets."""
        per_target = self.targets.get(key)
        if per_target is None:
            return list(self.jobs_for(key).values())
        return [job for stages in per_target.values() for job in stages.values()]

    def stage_report(self) -> dict[str, dict[str, int]]:
        """Per stage: key uses, unique jobs, and the most keys sharing one job.

        ``{"vertex": {"uses": 30, "jobs": 9, "max_shared": 8}, ...}``: 30 keys
        need a vertex stage, projection leaves 9 distinct vertex jobs, and one of
        them serves 8 keys.
        """
        users = Counter(name for key in self.stages for name in self.all_jobs_for(key))
        report: dict[str, dict[str, int]] = {}
        for name, job in sorted(self.jobs.items()):
            entry = report.setdefault(job.request.stage, {"uses": 0, "jobs": 0, "max_shared": 0})
            entry["uses"] += users[name]
            entry["jobs"] += 1
            entry["max_shared"] = max(entry["max_shared"], users[name])
        return dict(sorted(report.items()))


def plan_jobs(keys, rulesets: dict[str, RuleSet], tree: SourceTree, options: JobOptions,
              exact: bool = True, recorded: Callable[[str], str | None] | None = None) -> JobPlan:
    """Project every key's defines per stage and dedup into unique jobs (by preprocessed
    text when ``exact`` and the C API loads here, or by ``recorded``: see :class:`Planner`)."""
    planner = Planner(rulesets, tree, options, exact, recorded)
    for key in sorted(keys):
        planner.add(key)
    return planner.plan


class Planner:
    """Keys in, unique stage jobs out, one key at a time (a family's whole valid space streams through).

    ``recorded(define_keys)`` gives the exact keys an earlier run found for jobs' define-based keys, by
    define-based key (those it knows); only the jobs it does not know are preprocessed (here when a key
    is added, unless :meth:`learn` was told first), glslang loaded for the first.  ``plan.preprocessed``:
    those found."""

    def __init__(self, rulesets: dict[str, RuleSet], tree: SourceTree, options: JobOptions, exact: bool = True,
                 recorded: Callable[[list[str]], Mapping[str, str]] | None = None, store=None):
        self.rulesets, self.tree, self.options = rulesets, tree, options
        self.plan = JobPlan(exact=exact)
        self._exact, self._recorded = exact, recorded or (lambda _define_keys: {})
        self._preprocess: Callable | None = None
        self._loaded = False
        self._sources = ClosureCache(tree)
        self.kept = Kept(options, self._sources, store, StageJob)  # with a store: its job-defined records too
        self._exact_keys: dict[str, str] = {}  # define-based job key -> exact key
        self._ahead: dict[str, str] = {}  # define-based job key -> exact key found before its key was added
        self._defined: dict[PermutationKey, dict] = {}  # key -> its define_jobs, made before it was added
        self._generators: dict[str, object] = {}

    def add(self, key: PermutationKey, keep: bool = True) -> dict[str, dict[str, StageJob]]:
        """Plan one key: target label -> stage -> job; ``keep=False`` leaves the key out of ``plan.stages``."""
        ruleset, plan = self.rulesets[key.shader], self.plan
        if ruleset.kind != "ubershader":  # a generated family: its generator makes the stage jobs
            made = generated_jobs(ruleset, key, self._generators, self.tree, self.options, plan if keep else None)
        else:
            made = {label: {stage: self._exact_job(job) for stage, job in jobs.items()}
                    for label, jobs in (self._defined.pop(key, None) or self.define_jobs(key)).items()}
        per_target = {label: {stage: _planned(plan, job) for stage, job in jobs.items()}
                      for label, jobs in made.items()}
        if keep:
            plan.stages[key] = primary_stages(per_target)
            plan.own[key] = primary_stages(made)
            if self.options.explicit(ruleset):
                plan.targets[key] = per_target
        return made

    def define_jobs(self, key: PermutationKey) -> dict[str, dict[str, StageJob]]:
        """Target label -> stage -> the jobs of a key of an ubershader family, under their define-based keys
        (kept for the process's later plans of the same family generation: :mod:`pipeline.plan.defined`)."""
        ruleset = self.rulesets[key.shader]
        kept = self.kept.table(ruleset)
        found = kept.get(key.text) if kept is not None else None
        if found is None:
            defines = tuple((n, str(v)) for n, v in stage_defines(ruleset, key))
            texts = stage_texts(ruleset, key, defines, self.tree, self.options.plugins)
            found = {target.label: _linked({stage: make_job(source, stage, defines, self._sources, self.options,
                                                            target, texts.get(stage))
                                            for stage, source in sorted(ruleset.sources.items())})
                     for target in self.options.targets(ruleset)}
            if kept is not None:
                self.kept.add(ruleset, key.text, found)
        return found

    def unknown_jobs(self, keys) -> list[StageJob]:
        """The jobs of ``keys`` (ubershader families') whose exact key neither this plan nor the record
        knows, each once: those :meth:`add` would preprocess (:mod:`pipeline.plan.ahead` does it first)."""
        candidates: dict[str, StageJob] = {}
        for key in [k for k in keys if self.rulesets[k.shader].kind == "ubershader"] if self._exact else []:
            made = self._defined[key] = self.define_jobs(key)  # for add(), which would make them again
            for job in (job for jobs in made.values() for job in jobs.values()):
                if job.key not in self._exact_keys and job.key not in self._ahead:
                    candidates.setdefault(job.key, job)
        recorded = self._recorded(list(candidates))  # the records read together
        self._ahead.update(recorded)
        return [job for k, job in candidates.items() if k not in recorded]

    def learn(self, define_key: str, exact: str | None) -> None:
        """A job's exact key, preprocessed (None: it did not preprocess and keeps its define-based key)."""
        self._ahead[define_key] = self._found(define_key, exact)

    def _found(self, define_key: str, exact: str | None) -> str:
        """The key a job preprocessed here or ahead goes by, ``exact`` kept in ``plan.preprocessed``."""
        if exact is not None:
            self.plan.preprocessed[define_key] = exact
        return exact or define_key

    def _exact_job(self, job: StageJob) -> StageJob:
        """The job under its exact key (preprocessed text), merged with an identical one already planned."""
        if not self._exact:
            return job
        if job.key not in self._exact_keys:
            # found ahead, else recorded by an earlier plan, else preprocessed now
            key = self._ahead.pop(job.key, None) or self._recorded([job.key]).get(job.key) \
                or self._found(job.key, self.exact_of(job))
            self._exact_keys[job.key] = key
            if key in self.plan.jobs:
                self.plan.merged += 1
        return replace(job, key=self._exact_keys[job.key])

    def load_preprocessor(self) -> bool:
        """Whether glslang's preprocessing loads here (once; else jobs not recorded keep define-based keys)."""
        if not self._loaded:
            self._preprocess, self._loaded = default_preprocessor(self.tree), True
            self.plan.exact = self._preprocess is not None
        return self._preprocess is not None

    def exact_of(self, job: StageJob) -> str | None:
        """The job's exact key from its preprocessed text (and its linked stages'), None when it does not
        preprocess; changes nothing (pool workers call it too)."""
        if not self.load_preprocessor():
            return None
        text = self._preprocess(job.request)
        linked = tuple(self._preprocess(p) for p in job.request.link) if text is not None else ()
        if text is None or None in linked:
            return None
        return exact_key(job.request, text, self.options, linked)


def _planned(plan: JobPlan, job: StageJob) -> str:
    plan.jobs.setdefault(job.key, job)
    plan.stage_uses += 1
    return job.key


def primary_stages(per_target: dict[str, dict[str, str]]) -> dict[str, str]:
    """The stages a key's outputs name as its ``stages``: its first Vulkan target's, else its first target's."""
    return next((stages for label, stages in per_target.items() if label.startswith("vulkan")),
                next(iter(per_target.values()), {}))


STAGE_SUFFIX = {"vertex": "vert", "fragment": "frag", "compute": "comp"}


def generated_jobs(ruleset: RuleSet, key: PermutationKey, generators: dict, tree: SourceTree,
                   options: JobOptions, plan: JobPlan | None = None) -> dict[str, dict[str, StageJob]]:
    """The stage jobs of a key of a generated family (:mod:`pipeline.plan.generate`), per
    compile target of the family: target label -> stage -> job.

    The text is generated once per key.  A stage's source is named after its text
    (``generated/<sha256[:16]>.frag``), so keys generating the same text (and
    defines) are one job per target; the closure is the files the text was made from.
    """
    from pipeline.plan.generate import generator_for  # the generator modules load on first use

    if ruleset.kind not in generators:
        generators[ruleset.kind] = generator_for(ruleset, tree, options.plugins)
    made_stages = sorted(transformed_stages(generators[ruleset.kind].generate(ruleset, key), ruleset, key,
                                            options.plugins).items())
    if plan is not None:
        shapes = [made.shape for _, made in made_stages if made.shape is not None]
        if shapes:
            plan.shapes[key] = shapes[-1]
    stages = []  # per stage, what every target shares: the job's stage, source name and closure
    for stage, made in made_stages:
        stage_of_job = "fragment" if made.problems else stage  # a failed generation: one job, not one per stage
        name = f"generated/{bytes_hash((made.text or '').encode())[:16]}.{STAGE_SUFFIX[stage_of_job]}"
        closure = tuple(sorted((f, tree.parsed(f).sha256) for f in made.files if tree.has_file(f)))
        stages.append((stage, made, stage_of_job, name, closure))
    out: dict[str, dict[str, StageJob]] = {}
    for target in options.targets(ruleset):
        per_stage = out[target.label] = {}
        for stage, made, stage_of_job, name, closure in stages:
            fields = _target_fields(target, options, made.plugins)
            request = CompileRequest(source=name, stage=stage_of_job, defines=made.defines, text=made.text,
                                     problems=made.problems, **fields)
            per_stage[stage] = StageJob(request, closure, options, job_key(request, closure, options))
        out[target.label] = _linked(per_stage)
    return out


def _target_fields(target: CompileTarget, options: JobOptions, plugins: tuple = ()) -> dict:
    """The fields of a compile request that its target decides (optimizing is for SPIR-V only); a plug-in
    target names its compile backend, whose identity joins the ``plugins`` the job went through."""
    fields = {"target": target.target, "relaxed": target.relaxed, "auto_map": target.auto_map,
              "version": target.version, "plugins": tuple(plugins),
              "registers": target.registers if target.registers is not None else DEFAULT_REGISTERS}
    backend = options.plugins.backend(target.target) if target.plugin else None
    if backend is not None:
        return fields | {"optimize": False, "backend": backend.spec, "plugins": fields["plugins"] + (backend.identity,)}
    return fields | {"optimize": options.optimize and target_info(target.target).is_spirv,
                     "msl_version": target.msl_version or DEFAULT_MSL_VERSION,
                     "argument_buffers": target.argument_buffers}


class ClosureCache:
    """A source file's closure and tested macros, read from the tree once per plan."""

    def __init__(self, tree: SourceTree):
        self.tree = tree
        self._seen: dict[str, tuple[frozenset[str], tuple[tuple[str, str], ...]]] = {}

    def get(self, relpath: str) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
        """``(identifiers used anywhere, closure)`` of one stage source."""
        if relpath not in self._seen:
            self._seen[relpath] = (self.tree.used_identifiers(relpath), self.tree.closure(relpath))
        return self._seen[relpath]


def make_job(source, stage: str, defines, sources: SourceTree | ClosureCache, options: JobOptions,
             target: CompileTarget | None = None, text: StageText | None = None) -> StageJob:
    """The stage job of one key: its defines projected onto what the source closure uses (``text``: the
    stage's text after its family's transforms, whose names projection keeps too)."""
    closures = sources if isinstance(sources, ClosureCache) else ClosureCache(sources)
    used, closure = closures.get(source.file)
    projected = project_defines(defines, used | text.identifiers if text is not None else used)
    target = target or CompileTarget(target=options.target)
    changed = {"text": text.text, "problems": text.problems} if text is not None else {}
    request = CompileRequest(source=source.file, stage=stage, language=source.language, entry=source.entry,
                             defines=projected, **changed, **_target_fields(target, options, text.plugins if text else ()))
    return StageJob(request, closure, options, job_key(request, closure, options))
