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
    plan's :class:`~pipeline.plan.jobs.ClosureCache`)."""

    def __init__(self, options, sources):
        self.options, self.sources = options, sources
        self._tables: dict[str, dict | None] = {}

    def table(self, ruleset) -> dict | None:
        """Key text -> its jobs by target, of ``ruleset``'s family as this plan finds it; None: not kept."""
        found = self._tables.get(ruleset.shader, _UNSET)
        if found is _UNSET:
            closures = tuple((stage, source.file, self.sources.get(source.file))
                             for stage, source in sorted(ruleset.sources.items()))
            found = self._tables[ruleset.shader] = generation(ruleset, self.options, closures)
        return found
