"""Rule-set YAML read safely, with the line and column of every node.

The text is composed (never constructed) with a :class:`yaml.SafeLoader` subclass:
booleans are only ``true``/``false`` (the YAML 1.1 ``yes``/``no``/``on``/``off``
stay strings, so an enum value ``NO`` is not ``False``), custom tags are refused,
duplicate keys are errors.  Anchors, aliases and ``<<`` merges work, but the
expanded document is bounded (node count and depth), so an alias bomb is an error.
Positions map the problems of the checked structs and expression errors back to
``path:line:col`` (1-based).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import yaml

from pipeline.checked import Problem, did_you_mean
from pipeline.errors import Diagnostic, Location, RuleError

BOOL_TAG = "tag:yaml.org,2002:bool"
SCALAR_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null")}
MAP_TAG, SEQ_TAG = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
MAX_NODES = 100_000
MAX_DEPTH = 64
MERGE_TAG = "tag:yaml.org,2002:merge"
MERGED = object()


class MergedKey(yaml.ScalarNode):
    """A key copied in by a ``<<`` merge: a repeat of it is not a duplicate."""

    def __init__(self, node: yaml.ScalarNode):
        super().__init__(node.tag, node.value, node.start_mark, node.end_mark, node.style)


class SafeRuleLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2-style booleans."""


SafeRuleLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != BOOL_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
SafeRuleLoader.add_implicit_resolver(BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


class FastRuleLoader(getattr(yaml, "CSafeLoader", SafeRuleLoader)):
    """The same rules on libyaml's parser (several times faster) where PyYAML has it."""


FastRuleLoader.yaml_implicit_resolvers = SafeRuleLoader.yaml_implicit_resolvers


class YamlDocument(msgspec.Struct):
    """One YAML text, its node tree, and how to locate things in it."""

    path: str
    text: str
    root: yaml.Node

    @classmethod
    def parse(cls, text: str, path: str) -> "YamlDocument":
        try:
            root = _compose(text)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise RuleError(Diagnostic(_mark_location(path, mark), f"invalid YAML: {exc.problem or exc}")) from None
        except yaml.YAMLError as exc:
            raise RuleError(Diagnostic(Location(path), f"invalid YAML: {exc}")) from None
        if root is None:
            raise RuleError(Diagnostic(Location(path, 1, 1), "the rule set is empty"))
        return cls(path, text, root)

    # ---- nodes -> data
    def data(self) -> Any:
        errors: list[Diagnostic] = []
        value = self._data(self.root, errors, [0])
        if errors:
            raise RuleError(errors)
        return value

    def _data(self, node: yaml.Node, errors: list[Diagnostic], count: list[int], depth: int = 0) -> Any:
        count[0] += 1
        if count[0] > MAX_NODES or depth > MAX_DEPTH:
            raise RuleError(Diagnostic(self.location(node), f"rule set too large or too deeply nested "
                                                            f"(at most {MAX_NODES} nodes, {MAX_DEPTH} levels)"))
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, errors)
        if isinstance(node, yaml.SequenceNode):
            self._check_tag(node, SEQ_TAG, errors)
            return [self._data(item, errors, count, depth + 1) for item in node.value]
        self._check_tag(node, MAP_TAG, errors)
        return self._mapping(node, errors, count, depth)

    def _mapping(self, node: yaml.MappingNode, errors: list[Diagnostic], count: list[int], depth: int) -> dict:
        out: dict = {}
        firsts: dict[Any, yaml.Node] = {}
        for key_node, value_node in self._merged(node):
            key = self._scalar(key_node, errors) if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, (str, int, bool)):
                errors.append(Diagnostic(self.location(key_node), "mapping keys must be plain words"))
                continue
            if key in firsts:
                if firsts[key] is not MERGED:
                    first = firsts[key].start_mark.line + 1
                    errors.append(Diagnostic(self.location(key_node), f"duplicate key '{key}' (first at line {first})"))
                continue
            firsts[key] = MERGED if isinstance(key_node, MergedKey) else key_node
            out[key] = self._data(value_node, errors, count, depth + 1)
        return out

    @staticmethod
    def _merged(node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node]]:
        """Own entries first, then those of ``<<: *anchor`` merges (own entries win)."""
        own, merged = [], []
        for key_node, value_node in node.value:
            if key_node.tag != MERGE_TAG:
                own.append((key_node, value_node))
                continue
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in sources:
                if isinstance(source, yaml.MappingNode):
                    merged.extend((k, v) for k, v in source.value if k.tag != MERGE_TAG)
        own_keys = {k.value for k, _ in own if isinstance(k, yaml.ScalarNode)}  # others are refused as keys
        # a merged key that is not a word is refused where its mapping is written, not again here
        return own + [(MergedKey(k), v) for k, v in merged
                      if isinstance(k, yaml.ScalarNode) and k.value not in own_keys]

    def _scalar(self, node: yaml.ScalarNode, errors: list[Diagnostic]) -> Any:
        if node.tag not in SCALAR_TAGS:
            errors.append(Diagnostic(self.location(node), f"YAML tag '{node.tag}' is not allowed"))
            return None
        try:
            return yaml.constructor.SafeConstructor().construct_object(node)
        except yaml.YAMLError as exc:
            errors.append(Diagnostic(self.location(node), f"invalid value: {exc}"))
            return None

    def _check_tag(self, node: yaml.Node, expected: str, errors: list[Diagnostic]) -> None:
        if node.tag != expected:
            errors.append(Diagnostic(self.location(node), f"YAML tag '{node.tag}' is not allowed"))

    # ---- locating
    def location(self, node: yaml.Node) -> Location:
        return _mark_location(self.path, node.start_mark)

    def find(self, loc: tuple, *, key: bool = False) -> yaml.Node:
        """The node at a data path (a problem's ``path``); parts that are not in the YAML are skipped."""
        node = self.root
        for i, part in enumerate(loc):
            last = i == len(loc) - 1
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                        node = key_node if (key and last) else value_node
                        break
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
        return node

    def at(self, loc: tuple, *, key: bool = False) -> Location:
        return self.location(self.find(loc, key=key))

    def expr_location(self, node: yaml.Node, line: int = 1, col: int = 0) -> Location:
        """Where (``line``, ``col``) of the expression in scalar ``node`` is in the file."""
        base = node.start_mark
        if not isinstance(node, yaml.ScalarNode):
            return self.location(node)
        raw = self.text[base.index:node.end_mark.index]
        value = str(node.value).strip("\n")
        if node.style in ("|", ">"):
            lines = raw.splitlines()[1:]
            body = [ln for ln in lines if ln.strip()]
            indent = len(body[0]) - len(body[0].lstrip()) if body else 0
            skipped = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
            if node.style == "|":
                return Location(self.path, base.line + 2 + skipped + line - 1, indent + col + 1)
            return Location(self.path, base.line + 2 + skipped, indent + 1)
        quote = 1 if node.style in ("'", '"') else 0
        inner = raw[quote:len(raw) - quote] if quote else raw
        if inner == value and "\n" not in value:
            return Location(self.path, base.line + 1, base.column + quote + col + 1)
        return self.location(node)

    # ---- problems of the checked structs
    def validation_diagnostics(self, problems: list[Problem]) -> list[Diagnostic]:
        out: dict[tuple, Diagnostic] = {}
        for problem in problems:
            diagnostic = self._diagnostic(problem)
            spot = (diagnostic.location.line, diagnostic.location.col)
            out.setdefault(spot, diagnostic)
        return sorted(out.values(), key=lambda d: (d.location.line or 0, d.location.col or 0))

    def _diagnostic(self, problem: Problem) -> Diagnostic:
        loc = problem.path
        where = ".".join(str(p) for p in loc if p not in ("cases",))
        if problem.kind == "unknown":
            name = str(loc[-1])
            parent = ".".join(str(p) for p in loc[:-1]) or "the rule set"
            return Diagnostic(self.at(loc, key=True),
                              f"unknown key '{name}' in {parent}" + did_you_mean(problem.hint))
        if problem.kind == "missing":
            parent = ".".join(str(p) for p in loc[:-1]) or "the rule set"
            return Diagnostic(self.at(loc[:-1]), f"missing required key '{loc[-1]}' in {parent}")
        message = problem.message[:1].lower() + problem.message[1:]
        return Diagnostic(self.at(loc), f"{where}: {message}" if where else message)


def _mark_location(path: str, mark: Any) -> Location:
    if mark is None:
        return Location(path)
    return Location(path, mark.line + 1, mark.column + 1)


def _compose(text: str) -> yaml.Node | None:
    """The node tree, parsed by libyaml; a syntax error is re-parsed by the pure-Python
    parser so that its message and position do not depend on how PyYAML was built."""
    try:
        return yaml.compose(text, Loader=FastRuleLoader)
    except yaml.YAMLError:
        return yaml.compose(text, Loader=SafeRuleLoader)

