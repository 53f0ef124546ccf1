"""The one job plan: which compile jobs a set of keys needs, for every command alike.

A :class:`JobSetup` is everything a plan depends on besides the keys: the families, the
shader library with the folders its sources may lead to (``allowed_roots``), and the :class:`~pipeline.plan.jobs.JobOptions` (target, optimize,
compiler identity, each family's targets: pipeline.toml ``[cook.compile]`` and the
``[platforms]`` target matrix, :mod:`pipeline.plan.matrix`).  :func:`world_setup` is the only
way to make one, always from a world (its library, allowed roots and ``[cook]``
settings); :func:`plan_for` plans a world's keys (cook, dry run, report, explain) and
:meth:`JobSetup.planner` streams keys one at a time (``verify-family``).

With a store, the plan reads the exact keys earlier plans found (``job-exact`` records,
:mod:`pipeline.cache.job_records`): a job whose define-based key (its source closure by
content, projected defines, target, flags, compiler) has a record takes its exact key
from it, so only jobs without one are preprocessed.  :func:`record_exact` writes what a
plan preprocessed (the cook does, after planning).  A key's define-based jobs are read from
the ``job-defined`` records likewise (:mod:`pipeline.plan.defined_records`), and a cook's plan
records those it made.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from pipeline.cache.job_records import JOB_EXACT
from pipeline.cache.store import Store
from pipeline.compilers import SourceTree
from pipeline.plan.ahead import preprocess_ahead
from pipeline.plan.jobs import ClosureCache, JobOptions, JobPlan, Planner
from pipeline.keys.defines import project_defines, stage_defines
from pipeline.plan.matrix import check_platform_families, family_targets
from pipeline.plan.plugins import key_stage_texts, world_plugins
from pipeline.digest import code_hash, stable_hash
from pipeline.rules.models import RuleSet

if TYPE_CHECKING:
    from pipeline.world import World


class JobSetup(msgspec.Struct, frozen=True):
    """What a job plan depends on besides its keys."""

    families: dict[str, RuleSet]
    materials_dir: Path
    options: JobOptions
    allowed_roots: tuple[Path, ...] = ()

    def tree(self) -> SourceTree:
        """The shader library as the plan reads it (and a cook compiles it)."""
        return SourceTree(self.materials_dir, self.allowed_roots)

    def planner(self, store: Store | None = None, tree: SourceTree | None = None, exact: bool = True) -> Planner:
        """A planner taking keys one at a time (``planner.plan`` is the plan so far)."""
        return Planner(self.families, tree or self.tree(), self.options, exact,
                       _recorded(store, self) if store is not None else None, store)


def world_setup(world: "World", identity: str = "", *, target: str = "vulkan1.2", optimize: bool | None = None,
                families: dict[str, RuleSet] | None = None) -> JobSetup:
    """The job setup of a world: its families (or ``families``), library, allowed roots and ``[cook]``
    settings (``optimize``: pipeline.toml's unless given); ``identity`` is the compiler's
    (:attr:`Backend.identity`)."""
    families = world.families if families is None else families
    check_platform_families(world, world.families)
    options = JobOptions(target, world.config.cook.spirv_opt if optimize is None else optimize, identity,
                         tuple(sorted(family_targets(world.config, families).items())), world_plugins(world, families))
    return JobSetup(families, world.materials_dir, options, world.allowed_roots)


def plan_for(world: "World", keys, identity: str = "", *, store: Store | None = None, record: bool = False,
             target: str = "vulkan1.2", optimize: bool | None = None, tree: SourceTree | None = None,
             workers: int = 1) -> JobPlan:
    """The stage jobs of a world's ``keys``, as every command plans them (:func:`world_setup`).

    ``store``: the exact keys it records are read instead of preprocessing again; ``record``
    writes the ones found here back to it (a cook does).  ``tree``: the shader library as the
    compiler reads it, shared with the plan.  ``workers``: processes the jobs to preprocess may
    be shared among (:mod:`pipeline.plan.ahead`); the plan is the same."""
    setup = world_setup(world, identity, target=target, optimize=optimize)
    plan = plan_jobs(setup, keys, store, tree, workers, record=record)
    if record and store is not None:
        record_exact(store, setup, plan)
    return plan


def plan_jobs(setup: JobSetup, keys, store: Store | None = None, tree: SourceTree | None = None,
              workers: int = 1, record: bool = False) -> JobPlan:
    """The unique stage jobs of ``keys`` under ``setup`` and which job each key's stages map to
    (``store``: the exact keys and define-based jobs it records are used instead of making them again,
    and ``record`` writes the define-based jobs made here to it; ``workers``: see :func:`plan_for`)."""
    planner = setup.planner(store, tree)
    ordered = sorted(keys)
    planner.kept.prefetch(ordered, setup.families)
    preprocess_ahead(planner, ordered, workers)
    for key in ordered:
        planner.add(key)
    if record:
        planner.kept.record()
    return planner.plan


def _record_key(setup: JobSetup, define_key: str) -> str:
    """A define-based job key plus what else decides the preprocessed text: the preprocessing code
    and the folders sources may lead to."""
    return stable_hash([define_key, _code(), sorted(str(p) for p in setup.allowed_roots)])


@cache
def _code() -> str:
    return code_hash("plan/jobs.py", "compilers/preamble.py", "compilers/glslang_capi.py",
                     "compilers/sources.py")


def _recorded(store: Store, setup: JobSetup):
    def recorded(define_keys: list[str]) -> dict[str, str]:  # read together: one query for many
        named = {_record_key(setup, k): k for k in define_keys}
        return {named[r]: found for r, found in store.get_many(JOB_EXACT, named).items() if isinstance(found, str)}
    return recorded


def record_exact(store: Store, setup: JobSetup, plan: JobPlan) -> None:
    """Keep the exact keys ``plan`` found by preprocessing, for the plans after it."""
    for define_key, exact in sorted(plan.preprocessed.items()):
        store.set(JOB_EXACT, _record_key(setup, define_key), exact)


def key_defines(world: "World", keys) -> dict:
    """Key text -> each key's exact defines, the whole preamble and each stage's (``pipeline keys --defines``)."""
    sources = ClosureCache(world_setup(world).tree())
    return {key.text: defines_by_stage(key, world.families[key.shader], sources) for key in keys}


def defines_by_stage(key, ruleset: RuleSet, sources: ClosureCache) -> dict[str, list[list[str]]]:
    """A key's exact defines in preamble order: the whole preamble, then each stage's projection."""
    defines = tuple((n, str(v)) for n, v in stage_defines(ruleset, key))
    out = {"preamble": [list(d) for d in defines]}
    for stage, source in sorted(ruleset.sources.items()):
        out[stage] = [list(d) for d in project_defines(defines, sources.get(source.file)[0])]
    return out


def key_texts(world: "World", keys) -> dict[str, dict[str, str]]:
    """Key text -> stage -> the stage's text after its family's source transforms, for the keys of
    ubershader families that have transforms (``pipeline keys --transformed``)."""
    setup = world_setup(world)
    tree, out = setup.tree(), {}
    for key in keys:
        ruleset = world.families[key.shader]
        texts = key_stage_texts(ruleset, key, tree, setup.options.plugins) if ruleset.kind == "ubershader" else {}
        if texts:
            out[key.text] = texts
    return out
