"""A source generator plug-in (a family ``kind`` of a studio's own), checked like the built-in ones.

The plug-in's class (or factory) is made with the shader library, as the built-in
generators are, then asked once per key.  What it returns is checked: a mapping of
stage names to :class:`~pipeline.plan.generate.GeneratedStage` whose text is a string
(or None with located problems).  Anything else, or an exception, fails that key's jobs
with one located error naming the plug-in and the key; every other key cooks.  Every
stage it made carries the plug-in's ``(name, version, code)``, so its jobs' keys change
when its code or version does.
"""

from __future__ import annotations

import inspect
import traceback
from dataclasses import replace
from pathlib import Path

from pipeline.compilers.plugins import PluginRef, load_attribute
from pipeline.errors import Diagnostic, Location
from pipeline.plan.generate import STAGE_NAMES, GeneratedStage


class PluginGenerator:
    """A :class:`~pipeline.plan.generate.SourceGenerator` plug-in behind the same checks for every key."""

    def __init__(self, ref: PluginRef, tree):
        self.ref = ref
        self.file = str(Path(ref.spec.rpartition(":")[0]).resolve()) if ref.spec.rpartition(":")[0].endswith(".py") \
            else (inspect.getsourcefile(load_attribute(ref.spec, ref.code)) or ref.spec)
        self._made = None
        self._failure: Diagnostic | None = None
        try:
            factory = load_attribute(ref.spec, ref.code)
            self._made = factory(tree) if callable(factory) else factory
        except Exception as exc:  # the plug-in's own code
            self._failure = Diagnostic(self._raised_at(exc), f"source generator '{ref.name}' cannot be made: "
                                                             f"{type(exc).__name__}: {exc}")

    def generate(self, ruleset, key) -> dict[str, GeneratedStage]:
        if self._failure is not None:
            return _failed(self._failure)
        try:
            made = self._made.generate(ruleset, key)
        except Exception as exc:
            return _failed(Diagnostic(self._raised_at(exc), f"source generator '{self.ref.name}' raised "
                                                            f"{type(exc).__name__}: {exc}"))
        problem = _garbage(made)
        if problem:
            return _failed(Diagnostic(self._defined_at(), f"source generator '{self.ref.name}' returned {problem}"))
        return {stage: replace(out, plugins=out.plugins + (self.ref.identity,)) for stage, out in made.items()}

    def _raised_at(self, exc: BaseException) -> Location:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if str(Path(f.filename).resolve()) == self.file]
        return Location(self.file, frames[-1].lineno, 1) if frames else self._defined_at()

    def _defined_at(self) -> Location:
        try:
            return Location(self.file, inspect.getsourcelines(self._made.generate)[1], 1)
        except (TypeError, OSError, AttributeError):
            return Location(self.file)


def _failed(reason: Diagnostic) -> dict[str, GeneratedStage]:
    failed = GeneratedStage(None, problems=(reason,))
    return {"vertex": failed, "fragment": failed}


def _garbage(made) -> str | None:
    """What is wrong with a generator's answer (None: nothing)."""
    if not isinstance(made, dict) or not made:
        return f"{type(made).__name__}, not a dict of stage -> GeneratedStage"
    for stage, out in made.items():
        if stage not in STAGE_NAMES:
            return f"the stage {stage!r} (stages: {', '.join(STAGE_NAMES)})"
        if not isinstance(out, GeneratedStage):
            return f"{type(out).__name__} for the {stage} stage, not GeneratedStage"
        if not isinstance(out.text, str) and not (out.text is None and out.problems):
            return f"{type(out.text).__name__} as the {stage} text, not str"
        if not all(isinstance(d, tuple) and len(d) == 2 and all(isinstance(x, str) for x in d) for d in out.defines):
            return f"defines of the {stage} stage that are not (name, value) string pairs"
    return None
