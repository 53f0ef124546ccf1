"""Stage projection: a stage job keeps only the defines its source closure tests.

A define survives when its name is in :meth:`SourceTree.tested_macros` of the
stage's source: it appears in an ``#if``/``#ifdef``/``#ifndef``/``#elif``/
``defined()`` condition anywhere in the closure, or in the body of a macro that
such a condition tests (``#define HAS_X (X != 0)`` + ``#if HAS_X`` keeps ``X``).

A define read only by ordinary code and never by a condition is dropped; the
compile then fails loudly (undeclared identifier) rather than silently, and the
fix is the ``FEATURE(NAME)`` pattern of docs/architecture.md, whose
``#elif defined(NAME)`` tests the name.
"""

from __future__ import annotations

from collections.abc import Iterable


def project_defines(defines: Iterable[tuple[str, str]], tested: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """The defines whose name is tested, in their original order."""
    return tuple((name, value) for name, value in defines if name in tested)
