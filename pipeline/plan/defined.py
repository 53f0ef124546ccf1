"""A key's define-based jobs, kept across the plans of one process (``pipeline watch``, a library user).

A key's define-based jobs (:meth:`pipeline.plan.jobs.Planner.define_jobs`: its defines projected
per stage, the job keys hashed) are a function of the key, its family's rule set, the job options
and what the family's stage sources read (each source's closure: the relative path and content
hash of every file it includes, and the macros it tests).  A process that plans again and again
for mostly the same keys (``pipeline watch`` cooking a chunk on every save) made them all again
each time: a third of a recook's plan.

The jobs are kept per family *generation*: the rule set object, the options and the family's
closures as a plan found them.  A plan whose family differs in any of these (a rule file or a
shader edited, other settings) starts a new generation; the process holds one per family.  A
family whose stages go through plug-in transforms is not kept (a transform may read anything).
Past :data:`MAX_KEPT` keys a generation starts afresh, so a plan of a family's whole valid space
(``pipeline verify``) does not hold every key it saw.
"""

from __future__ import annotations

from pipeline.plan import defined_records as records

MAX_KEPT = 20_000

_GENERATIONS: dict[str, tuple] = {}  # family -> (rule set, options, closures, {key text: its jobs by target})
_UNSET = object()


def generation(ruleset, options, closures: tuple) -> dict | None:
    """The jobs kept for this generation of ``ruleset``'s family, by key text (empty for a new one); None
    when its jobs are not kept."""
    if options.plugins.chain(ruleset.shader):
        return None
    found = _GENERATIONS.get(ruleset.shader)
    if found is None or found[0] is not ruleset or len(found[3]) >= MAX_KEPT \
            or found[2] != closures or found[1] != options:
        found = _GENERATIONS[ruleset.shader] = (ruleset, options, closures, {})
    return found[3]


def forget() -> None:
    """Drop every generation."""
    _GENERATIONS.clear()


class Kept:
    """One planner's view of the generations: each family's table found once per plan (``sources``: the
    plan's :class:`~pipeline.plan.jobs.ClosureCache`); with a ``store``, also the generations' records
    (:mod:`pipeline.plan.defined_records`): :meth:`prefetch` reads a plan's keys from them, :meth:`record`
    writes the keys this plan made."""

    def __init__(self, options, sources, store=None, job_type=None):
        """``job_type``: what a recorded job is read back as (:class:`~pipeline.plan.jobs.StageJob`)."""
        self.options, self.sources, self.store, self.job_type = options, sources, store, job_type
        self._tables: dict[str, dict | None] = {}
        self._digests: dict[str, str | None] = {}  # family -> its generation's digest (None: not recorded)
        self._made: dict[tuple[str, str], dict] = {}  # (family, key text) -> jobs of a key this plan made

    def table(self, ruleset) -> dict | None:
        """Key text -> its jobs by target, of ``ruleset``'s family as this plan finds it; None: not kept."""
        found = self._tables.get(ruleset.shader, _UNSET)
        if found is _UNSET:
            closures = tuple((stage, source.file, self.sources.get(source.file))
                             for stage, source in sorted(ruleset.sources.items()))
            found = self._tables[ruleset.shader] = generation(ruleset, self.options, closures)
            self._digests[ruleset.shader] = None if found is None or self.store is None else records.generation_digest(
                ruleset, self.options, tuple((stage, file, closure) for stage, file, (_, closure) in closures))
        return found

    def add(self, ruleset, text: str, jobs: dict) -> None:
        """Keep the jobs a plan made for the key ``text`` of ``ruleset``'s family (its table is kept)."""
        self._tables[ruleset.shader][text] = jobs
        if self._digests.get(ruleset.shader) is not None and len(self._made) < MAX_KEPT:
            self._made[(ruleset.shader, text)] = jobs

    def prefetch(self, keys, rulesets) -> int:
        """Read from the records the jobs of ``keys`` (ubershader families') that no table holds; how many."""
        wanted: dict[str, tuple[dict, str]] = {}
        for key in keys if self.store is not None else ():
            ruleset = rulesets[key.shader]
            table = self.table(ruleset) if ruleset.kind == "ubershader" else None
            digest = self._digests.get(key.shader)
            if table is not None and digest is not None and key.text not in table:
                wanted[records.record_key(digest, key.text)] = (table, key.text)
        if not wanted:
            return 0
        found = records.read(self.store, {k: text for k, (_, text) in wanted.items()}, self.options, self.job_type)
        for name, jobs in found.items():
            table, text = wanted[name]
            table[text] = jobs
        return len(found)

    def record(self) -> None:
        """Write the jobs of the keys this plan made to the records."""
        if self.store is not None and self._made:
            records.write(self.store, sorted((records.record_key(self._digests[family], text), jobs)
                                             for (family, text), jobs in self._made.items()))
            self._made.clear()
