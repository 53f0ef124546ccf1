"""Verify a shader family: compile its valid key space, every key or a seeded sample.

Content only ever asks for the keys it uses, so a feature combination no asset
has yet can hide a compile error until an artist makes one.  ``verify_family``
closes that gap: it takes the family's *valid* canonical keys per pass
(:func:`pipeline.rules.counts.enumerate_valid`), plans their stage jobs through the
world's one job setup (:func:`pipeline.plan.setup.world_setup`: its shader library,
``allowed_roots`` and ``[cook]`` settings), so with the same projection and cache keys
as a cook, and compiles the ones the cache lacks.  A rerun is a cache lookup; a
failure is remembered and reported again.

Sampling (``sample=N``): a pass with at most :data:`ENUMERATE_LIMIT` valid keys
is enumerated and ``N`` keys are drawn uniformly with ``random.Random(seed)``.
A larger pass draws random full assignments and normalizes them (a normalized
assignment is a fixed point, so its key is valid); that sample is not uniform
(keys that many assignments normalize to are likelier) but it is seeded and
cheap.  ``sample=None`` plans every valid key, streaming, without keeping the
keys.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Iterable, Iterator

import msgspec

from pipeline.cache.store import Store
from pipeline.compilers import get_backend
from pipeline.cook.error_docs import group_errors
from pipeline.plan.jobs import JobPlan
from pipeline.plan.setup import JobSetup, record_exact, world_setup
from pipeline.compile.scheduler import JobRunner, RunResult, run_plan
from pipeline.errors import PipelineError
from pipeline.keys.key import PermutationKey
from pipeline.progress import NullProgress, Progress
from pipeline.rules.counts import OPEN, count_space, enumerate_valid
from pipeline.rules.models import RuleSet
from pipeline.rules.normalize import run_normalize
from pipeline.world import World

ENUMERATE_LIMIT = 100_000
MAX_DRAWS_PER_KEY = 50


class UnknownFamilyError(PipelineError):
    """No rule set defines the requested shader family."""


class VerifyOptions(msgspec.Struct, frozen=True):
    sample: int | None = 100          # keys per pass; None: every valid key
    seed: int = 0
    jobs: int = 1
    backend: str = "capi"
    target: str = "vulkan1.2"
    optimize: bool | None = None      # None: the world's pipeline.toml [cook] spirv_opt


class FamilyPlan(msgspec.Struct):
    """The unique jobs of the keys checked, how many keys use each, and one key per job."""

    jobs: JobPlan = msgspec.field(default_factory=JobPlan)
    users: Counter = msgspec.field(default_factory=Counter)            # job key -> keys using it
    first_key: dict[str, str] = msgspec.field(default_factory=dict)    # job key -> first key (text) using it
    checked: dict[str, int] = msgspec.field(default_factory=dict)      # pass -> keys checked

    def stage_report(self) -> dict[str, dict[str, int]]:
        report: dict[str, dict[str, int]] = {}
        for job_key, job in sorted(self.jobs.jobs.items()):
            entry = report.setdefault(job.request.stage, {"uses": 0, "jobs": 0, "max_shared": 0})
            entry["uses"] += self.users[job_key]
            entry["jobs"] += 1
            entry["max_shared"] = max(entry["max_shared"], self.users[job_key])
        return dict(sorted(report.items()))


class VerifyResult(msgspec.Struct):
    """What ``pipeline verify-family`` found; ``to_json()`` is its ``--json`` document."""

    family: str
    valid: dict[str, int]
    plan: FamilyPlan
    run: RunResult
    failures: list[dict]

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict:
        passes = {p: {"valid": n, "checked": self.plan.checked.get(p, 0)} for p, n in sorted(self.valid.items())}
        return {
            "family": self.family, "passes": passes, "keys": sum(self.plan.checked.values()),
            "jobs": len(self.plan.jobs.jobs), "stages": self.plan.stage_report(),
            "compiled": len(self.run.compiled), "cache_hits": self.run.cache_hits,
            "failed_jobs": sum(1 for r in self.run.results.values() if not r.ok), "failures": self.failures,
        }


# ------------------------------------------------------------------ keys
def find_family(rulesets: Iterable[RuleSet], name: str) -> RuleSet:
    """The rule set of family ``name``, or a :class:`UnknownFamilyError` naming the known ones."""
    by_name = {rs.shader: rs for rs in rulesets}
    if name not in by_name:
        known = ", ".join(sorted(by_name)) or "none"
        raise UnknownFamilyError.at(name, f"unknown shader family '{name}' (known: {known})")
    return by_name[name]


def family_keys(ruleset: RuleSet, pass_name: str, sample: int | None, seed: int) -> Iterator[PermutationKey]:
    """The keys of one pass to check: all valid ones, or a seeded sample of ``sample``."""
    if sample is None:
        yield from (PermutationKey(ruleset.shader, pass_name, f) for f in enumerate_valid(ruleset, pass_name))
        return
    rng = random.Random(f"{seed}:{ruleset.shader}/{pass_name}")
    valid = count_space(ruleset, pass_name).valid
    if valid == OPEN:
        list(enumerate_valid(ruleset, pass_name, 0))  # raises the located OpenSpaceError
    if valid <= ENUMERATE_LIMIT:
        keys = [PermutationKey(ruleset.shader, pass_name, f) for f in enumerate_valid(ruleset, pass_name)]
        yield from sorted(rng.sample(keys, min(sample, len(keys))))
    else:
        yield from sorted(_normalized_sample(ruleset, pass_name, sample, rng))


def _normalized_sample(ruleset: RuleSet, pass_name: str, count: int, rng: random.Random) -> set[PermutationKey]:
    """Up to ``count`` distinct keys from normalized random assignments."""
    compiled = ruleset.compiled
    pass_ = compiled.passes[pass_name]
    names = sorted(compiled.domains)
    found: set[PermutationKey] = set()
    for _ in range(count * MAX_DRAWS_PER_KEY):
        if len(found) >= count:
            break
        values = {n: rng.choice(compiled.domains[n].values) for n in names}
        normalized, _ = run_normalize(pass_.rules, values)
        if pass_.skip is not None and pass_.skip.expr(None, normalized):
            continue
        found.add(PermutationKey(ruleset.shader, pass_name, tuple((f, normalized[f]) for f in pass_.static)))
    return found


# ------------------------------------------------------------------ plan and run
def family_setup(world: World, ruleset: RuleSet, options: VerifyOptions, identity: str | None = None) -> JobSetup:
    """The job setup of one family of ``world``, as a cook of the world sets it up (its shader library,
    allowed roots and ``[cook]`` settings), with the options' target (and optimize, when given)."""
    identity = get_backend(options.backend).identity if identity is None else identity
    return world_setup(world, identity, target=options.target, optimize=options.optimize,
                       families={ruleset.shader: ruleset})


def plan_family(ruleset: RuleSet, setup: JobSetup, options: VerifyOptions, progress: Progress,
                store: Store | None = None) -> FamilyPlan:
    """Stream the keys to check into unique stage jobs through the one job plan (keys are not kept)."""
    planner = setup.planner(store)
    plan = FamilyPlan(jobs=planner.plan)
    for pass_name in sorted(ruleset.compiled.passes):
        progress.note(f"{ruleset.shader}/{pass_name}: planning")
        count = 0
        for key in family_keys(ruleset, pass_name, options.sample, options.seed):
            for per_stage in planner.add(key, keep=False).values():
                for job in per_stage.values():
                    plan.users[job.key] += 1
                    plan.first_key.setdefault(job.key, key.text)
            count += 1
        plan.checked[pass_name] = count
    return plan


def verify_family(world: World, ruleset: RuleSet, store: Store, options: VerifyOptions, *,
                  progress: Progress | None = None,
                  compiler: JobRunner | None = None) -> VerifyResult:
    """Plan the keys to check of ``ruleset`` (a family of ``world``), compile the jobs the cache lacks,
    collect the failures."""
    progress = progress or NullProgress()
    setup = family_setup(world, ruleset, options, compiler.identity if compiler else None)
    plan = plan_family(ruleset, setup, options, progress, store)
    record_exact(store, setup, plan.jobs)
    compiler = compiler or JobRunner(setup.materials_dir, options.backend, options.jobs, setup.allowed_roots)
    run = run_plan(plan.jobs, store, compiler, progress=progress)
    valid = {p: count_space(ruleset, p).valid for p in sorted(ruleset.compiled.passes)}
    return VerifyResult(ruleset.shader, valid, plan, run, _failures(plan, run, ruleset, setup, options, store))


def _failures(plan: FamilyPlan, run: RunResult, ruleset: RuleSet, setup: JobSetup, options: VerifyOptions,
              store: Store | None = None) -> list[dict]:
    """The failed jobs' errors grouped as a cook groups them (:func:`~pipeline.cook.error_docs.group_errors`):
    one per (file, line, message), with the keys checked that it breaks (``count``, ``key`` the first by
    text; the keys are walked again rather than kept), the stages and the jobs."""
    found = [(job_key, d) for job_key, result in sorted(run.results.items()) if not result.ok
             for d in result.diagnostics if d.severity == "error"]
    if not found:
        return []
    failures = group_errors(found, lambda job_key: ())
    groups_of: dict[str, set[int]] = {}
    for index, failure in enumerate(failures):
        failure.pop("keys")
        failure["stages"] = sorted({plan.jobs.jobs[job].request.stage for job in failure["jobs"]})
        for job in failure["jobs"]:
            groups_of.setdefault(job, set()).add(index)
    planner = setup.planner(store)  # the exact keys were recorded by the first walk: not preprocessed again
    for pass_name in sorted(ruleset.compiled.passes):
        for key in family_keys(ruleset, pass_name, options.sample, options.seed):
            jobs = [job for per_stage in planner.add(key, keep=False).values() for job in per_stage.values()]
            for index in set().union(*(groups_of.get(job.key, ()) for job in jobs)):
                failure = failures[index]
                failure["count"] += 1
                failure["key"] = min(failure["key"] or key.text, key.text)
    return failures
