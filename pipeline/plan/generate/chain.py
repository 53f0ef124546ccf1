"""The ``fragments`` generator: select a key's fragments, link them, project the defines.

A family lists its fragments in chain order; each may carry ``when``, a condition
over the key's features (the same expressions as ``normalize``)::

    kind: fragments
    fragments:
      - chain/vertex_input.glsl
      - {file: chain/skinning.glsl, when: SKINNING}
      - chain/transform.glsl
      - chain/surface.glsl
      - {file: chain/light_point.glsl, when: LIGHTS_POINT > 0}
      - chain/output.glsl

The selected fragments are linked (:mod:`.link`).  The key's defines (the same
convention as an ubershader's) are then projected onto the identifiers the stage's
text (and the files its fragments ``#include``) uses, so a fragment may read
``LIGHTS_POINT`` as a loop bound, and two keys differing only in what no selected
fragment reads are one job.  A stage's closure is its kept fragments and their includes.
"""

from __future__ import annotations

from pipeline.compilers.sources import IDENT_RE, SourceTree
from pipeline.plan.generate import GeneratedStage
from pipeline.plan.generate.fragment_file import FragmentFile, parse_fragment
from pipeline.plan.generate.link import link_chain
from pipeline.errors import CompileError, Diagnostic
from pipeline.keys.defines import stage_defines
from pipeline.keys.evaluate import run_expression
from pipeline.rules.compiled import default_value


class ChainGenerator:
    """Fragment chains of the families of one materials tree."""

    def __init__(self, tree: SourceTree):
        self.tree = tree
        self._parsed: dict[tuple[str, str], FragmentFile | CompileError] = {}

    def fragment(self, relpath: str) -> FragmentFile:
        """One fragment file, parsed once per content."""
        sha = self.tree.parsed(relpath).sha256
        if (relpath, sha) not in self._parsed:
            try:
                self._parsed[(relpath, sha)] = parse_fragment(self.tree.read(relpath), relpath,
                                                              self.tree.name(relpath))
            except CompileError as exc:
                self._parsed[(relpath, sha)] = exc
        found = self._parsed[(relpath, sha)]
        if isinstance(found, CompileError):
            raise found
        return found

    def selected(self, ruleset, key) -> list[str]:
        """The fragment files a key uses, in chain order."""
        values = {n: default_value(d) for n, d in ruleset.compiled.domains.items()} | dict(key.features)
        return [file for file, when in ruleset.compiled.fragments
                if when is None or run_expression(when, None, values)]

    def generate(self, ruleset, key) -> dict[str, GeneratedStage]:
        files = self.selected(ruleset, key)
        chain, problems = [], []
        for file in files:
            try:
                chain.append(self.fragment(file))
            except CompileError as exc:
                problems += exc.diagnostics
        if problems:
            return _failed(files, problems)
        linked = link_chain(chain, ruleset.path)
        if linked.errors:
            return _failed(files, linked.errors)
        defines = stage_defines(ruleset, key)
        out = {}
        for stage, text in linked.stages.items():
            # a fragment may #include library files: they are part of the closure and may read defines too
            files = sorted({f for fragment in linked.files[stage] for f in self.tree.files(fragment)})
            used = set(IDENT_RE.findall(text)).union(*(IDENT_RE.findall(self.tree.read(f)) for f in files))
            out[stage] = GeneratedStage(text, tuple(files), tuple((n, str(v)) for n, v in defines if n in used))
        return out


def _failed(files: list[str], problems: list[Diagnostic]) -> dict[str, GeneratedStage]:
    failed = GeneratedStage(None, tuple(sorted(set(files))), problems=tuple(problems))
    return {"vertex": failed, "fragment": failed}
