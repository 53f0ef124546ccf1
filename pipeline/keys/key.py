"""The permutation key: (shader, pass, static feature values), its canonical text and hash.

Canonical text: ``pbr/forward{ALPHA_MODE=MASK,NORMAL_MAP=1,UV_SETS=2}`` (features sorted
by name, bools as 0/1); the hash is the canonical serialization's SHA-256 of shader,
pass and features (:mod:`pipeline.digest`).  Same inputs, same key, on every machine.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Iterable

from pipeline.digest import stable_hash
from pipeline.errors import Diagnostic, Location, PipelineError
from pipeline.rules.axes import axes_of, is_default
from pipeline.rules.compiled import CompiledPass, FeatureValue, format_value, in_domain
from pipeline.checked import suggest
from pipeline.rules.models import RuleSet

KEY_TEXT = re.compile(r"^(?P<shader>[a-z][a-z0-9_]*)/(?P<pass>[A-Za-z0-9_]+)\{(?P<features>[^{}]*)\}$")


class KeyTextError(PipelineError):
    """A key's text form cannot be parsed against the loaded rule sets."""



@dataclass(frozen=True, order=True)
class PermutationKey:
    """(shader, pass, sorted static feature values): one compiled variant of a family."""

    shader: str
    pass_name: str
    features: tuple[tuple[str, FeatureValue], ...]

    @functools.cached_property
    def text(self) -> str:
        inner = ",".join(f"{name}={format_value(value)}" for name, value in self.features)
        return f"{self.shader}/{self.pass_name}{{{inner}}}"

    @functools.cached_property
    def hash(self) -> str:
        return stable_hash({"shader": self.shader, "pass": self.pass_name, "features": dict(self.features)})

    def __hash__(self) -> int:
        """The hash of its fields, as a frozen dataclass's, made once: a cook looks keys up by the hundred thousand."""
        found = self.__dict__.get("_hash")
        if found is None:
            found = self.__dict__["_hash"] = hash((self.shader, self.pass_name, self.features))
        return found

    def __getstate__(self) -> dict:
        """Pickled without the cached hash: string hashes differ from process to process."""
        return {name: value for name, value in self.__dict__.items() if name != "_hash"}

    def __str__(self) -> str:
        return self.text

    def value(self, name: str) -> FeatureValue:
        return dict(self.features)[name]  # a runtime axis at its default is not in the key (rules/axes.py)

    def to_json(self) -> dict:
        return {"key": self.text, "hash": self.hash, "shader": self.shader, "pass": self.pass_name,
                "features": dict(self.features)}

    @classmethod
    def parse(cls, text: str, rulesets: Iterable[RuleSet]) -> "PermutationKey":
        """The key whose canonical text is ``text``; every feature of the pass must be given."""
        match = KEY_TEXT.match(text.strip())
        if not match:
            raise _key_error(text, "not a key: expected shader/pass{NAME=VALUE,...}")
        by_shader = {rs.shader: rs for rs in rulesets}
        rs = by_shader.get(match["shader"])
        if rs is None:
            raise _key_error(text, f"unknown shader '{match['shader']}'{suggest(match['shader'], by_shader)}")
        passes = rs.compiled.passes
        if match["pass"] not in passes:
            raise _key_error(text, f"unknown pass '{match['pass']}' of {rs.shader}{suggest(match['pass'], passes)}")
        values = _parse_features(text, rs, passes[match["pass"]], match["features"])
        return cls(rs.shader, match["pass"], tuple(sorted(values.items())))


def _key_error(text: str, message: str) -> KeyTextError:
    return KeyTextError(Diagnostic(Location(text.strip() or "<key>"), message))


def _parse_features(text: str, rs: RuleSet, pass_: CompiledPass, body: str) -> dict[str, FeatureValue]:
    values: dict[str, FeatureValue] = {}
    for item in filter(None, body.split(",")):
        name, _, raw = item.partition("=")
        if name not in pass_.static:
            raise _key_error(text, f"'{name}' is not a static feature of {rs.shader}/{pass_.name}"
                                   f"{suggest(name, pass_.static)}")
        values[name] = _parse_value(text, rs, name, raw)
    axes = axes_of(rs)
    missing = [f for f in pass_.static if f not in values and f not in axes]
    if missing:
        raise _key_error(text, f"missing feature(s): {', '.join(missing)}")
    return {f: v for f, v in values.items() if not (f in axes and is_default(rs, f, v))}


def _parse_value(text: str, rs: RuleSet, name: str, raw: str) -> FeatureValue:
    domain = rs.domain(name)
    parsed: Any = raw
    if domain.kind == "bool":
        parsed = {"0": False, "1": True, "false": False, "true": True}.get(raw.lower(), raw)
    elif domain.kind == "int" and re.fullmatch(r"-?\d+", raw):
        parsed = int(raw)
    if not in_domain(domain, parsed):
        shown = "any integer" if domain.open else ", ".join(format_value(v) for v in domain.values)
        raise _key_error(text, f"'{raw}' is not a value of {name} (values: {shown})")
    return parsed


_INTERNED: dict[PermutationKey, PermutationKey] = {}
MAX_INTERNED = 100_000


def interned(key: PermutationKey) -> PermutationKey:
    """One object for equal keys made in this process: a dict finds a key by identity, never comparing
    its features (rule evaluations and decoded records each make their own)."""
    found = _INTERNED.get(key)
    if found is None:
        if len(_INTERNED) >= MAX_INTERNED:
            _INTERNED.clear()
        found = _INTERNED[key] = key
    return found
