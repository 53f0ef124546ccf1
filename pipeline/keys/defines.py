"""The define convention: how a key becomes ``#define`` lines, and which of them a stage keeps.

For one stage job the compiler receives a preamble built from the key
(docs/architecture.md, "the define convention"; each feature's ``emit:`` style in
:mod:`pipeline.rules.emit`).  With the default style:

| feature kind | ``static`` | ``specialization`` | ``dynamic`` |
|---|---|---|---|
| bool | ``NAME 0``/``1`` | ``NAME_SPEC_ID <constant_id>`` | nothing |
| int | ``NAME <value>`` | ``NAME_SPEC_ID <constant_id>`` | nothing |
| enum | ``NAME_<VALUE> <i>`` for every value and ``NAME <i>`` | ``NAME_SPEC_ID`` + the ``NAME_<VALUE>`` constants | the ``NAME_<VALUE>`` constants |

plus ``PASS_<NAME> 1`` first and the pass's extra defines last.  Stage projection
(:func:`project_defines`) then keeps only the defines whose name the stage's source
closure uses anywhere (:meth:`pipeline.compilers.SourceTree.used_identifiers`): in
an ``#if``/``#ifdef``/``defined()`` condition, in a macro body, or in code such as an
array size.  A define the closure never names cannot change the compile, so keys
that differ only in fragment features share one vertex job.  (The ``FEATURE(NAME)``
pattern keeps working; it is no longer needed.)  :mod:`pipeline.plan.jobs` then
merges jobs whose preprocessed text is identical.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pipeline.keys.evaluate import run_expression
from pipeline.keys.key import PermutationKey
from pipeline.rules.compiled import default_value, format_value
from pipeline.rules.emit import feature_defines
from pipeline.rules.models import RuleSet

IDENT = re.compile(r"[A-Za-z_]\w*")


def stage_defines(ruleset: RuleSet, key: PermutationKey) -> list[tuple[str, str]]:
    """The #define preamble of a key (docs/architecture.md, "the define convention").

    ``PASS_<NAME> 1`` first, then every feature in name order (each as its ``emit:``
    style says, :mod:`pipeline.rules.emit`), then the extra defines in name order.
    Static features the pass does not read are defined to their default value (the
    pass does not care, so it gets the cheapest variant); specialization and dynamic
    features it does not read get no spec id.  A feature whose ``when:`` is false over
    the key's values emits nothing.
    """
    compiled = ruleset.compiled
    pass_ = compiled.passes[key.pass_name]
    values = {n: default_value(d) for n, d in compiled.domains.items()} | dict(key.features)
    conditions = compiled.feature_when or {}
    out = [(f"PASS_{key.pass_name.upper()}", "1")]
    for name in sorted(compiled.domains):
        condition = conditions.get(name)
        if condition is not None and not run_expression(condition, None, values):
            continue
        mode = compiled.modes[name] if name in pass_.features else _outside_mode(compiled.modes[name])
        out.extend(feature_defines(ruleset.features[name], name, compiled.domains[name], mode, values[name],
                                   compiled.constant_ids.get(name)))
    for name, define in sorted(pass_.defines.items()):
        if define.when is None or run_expression(define.when, None, values):
            out.append((name, format_value(define.value)))
    return out


def _outside_mode(mode: str) -> str:
    return "static" if mode == "static" else "dynamic"


def project_defines(defines: Iterable[tuple[str, str]], used: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """The defines whose name is used, in their original order.

    Closed through values: a kept ``ALPHAMODE ALPHAMODE_MASK`` keeps ``ALPHAMODE_MASK``
    (an ``emit: symbol`` value names another define).
    """
    defines = list(defines)
    kept, changed = set(used), True
    while changed:
        changed = False
        for name, value in defines:
            if name in kept:
                for ident in IDENT.findall(value):
                    if ident not in kept:
                        kept.add(ident)
                        changed = True
    return tuple((name, value) for name, value in defines if name in kept)
