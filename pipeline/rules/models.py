"""Rule sets: one YAML file per shader family, loaded into checked structs (:mod:`pipeline.checked`).

A rule set says which permutation axes (features) a shader family has, how the facts
of a draw set them (``derive``), how keys collapse (``normalize``), which passes
exist and what each reads, and the render state of each draw.  The format::

    shader: pbr
    sources: {vertex: pbr/pbr.vert, fragment: {file: pbr/pbr.frag, entry: main}}
    select: material.extras.shader in (None, 'pbr')     # which draws use this family
    features:
      NORMAL_MAP: {type: bool}
      ALPHA_MODE: {values: [OPAQUE, MASK, BLEND]}       # enum (type inferred)
      DOUBLE_SIDED: {type: bool, mode: specialization, constant_id: 0}
      SHADOWS: {type: bool, runtime: true, when: "not UNLIT"}  # set by the renderer, not derived
    derive:                                             # facts -> feature values
      NORMAL_MAP: material.normalTexture is not None and mesh.normals
      SKINNING:                                         # first matching case wins
        - {when: "not node.skin", value: 0}
        - {value: 4}
    normalize:                                          # applied in order to a fixed point
      - {when: UNLIT, set: {NORMAL_MAP: false}}
    passes:
      depth: {features: [ALPHA_MODE], skip_when: "ALPHA_MODE == 'BLEND'", normalize: [...]}
      forward: {features: all}
    render_state: {cull: "'none' if material.doubleSided else 'back'"}
    defines: {MAX_LIGHTS: 8, HAS_MASK: {when: "ALPHA_MODE == 'MASK'", value: 1}}

A derive value (or a case's ``value``) that is one of the feature's values is that
literal; any other string is an expression over facts.  ``normalize``,
``skip_when`` and ``defines[].when`` read features only; ``select`` and ``derive``
read facts only; ``render_state`` reads both.  YAML is read with a safe loader whose
booleans are only ``true``/``false`` (``NO`` and ``off`` stay strings), without
aliases or custom tags.

Every problem found while loading becomes a located :class:`~pipeline.errors.RuleError`
diagnostic (``rules/pbr.yaml:14:12: error: ...``); all of them are reported at once.
This module holds the models; :mod:`pipeline.rules.load` reads and compiles a file into
them (:mod:`pipeline.rules.build`, into :mod:`pipeline.rules.compiled`).
"""

# Annotations are evaluated when each class is made (no postponed annotations here): msgspec and the
# rule checker read them in every process, and strings would be parsed and evaluated there each time.

import re
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, field

from pipeline.checked import Before, Checked, doc
from pipeline.config import CompileTarget, CompileTargets  # noqa: F401  (re-exported)
from pipeline.rules.compiled import Compiled
from pipeline.rules.expr import Domain

VALUE_TOKEN = re.compile(r"^[A-Za-z0-9_]+$")
NAME_TOKEN = re.compile(r"^[A-Za-z0-9_./#:-]+$")


def _expr_text(value: Any) -> Any:
    return repr(value) if isinstance(value, (bool, int, float)) or value is None else value


Expression = Annotated[str, Before(_expr_text), doc("a rule expression")]
Value = bool | int | str


class Source(Checked, kw_only=True):
    """One stage of the family: a file under the materials folder."""

    file: Annotated[str, Meta(min_length=1, description="stage source, relative to the materials folder")]
    entry: Annotated[str, doc("entry point")] = "main"
    language: Annotated[Literal["glsl", "hlsl"], doc("source language")] = "glsl"

    @classmethod
    def shape(cls, data: Any) -> Any:
        return {"file": data} if isinstance(data, str) else data

    def __post_init__(self) -> None:
        _check_inside(self.file)


def _check_inside(file: str) -> None:
    parts = file.replace("\\", "/").split("/")
    if file.startswith(("/", "\\")) or ".." in parts or (len(parts[0]) == 2 and parts[0][1] == ":"):
        raise ValueError(f"source {file!r} leaves the materials folder "
                         "(a path relative to it, without '..', is expected)")


class Feature(Checked, kw_only=True):
    """One permutation axis: a finite (or open) domain, a mode, and how it becomes defines."""

    type: Annotated[Literal["bool", "int", "enum", "set", "name"], doc(
        "bool, int (listed values, or `values: open`), enum of strings, set (one define per "
        "element of a set-valued fact), or name: an open set of references "
        "(a MaterialX document#material; the listed values are its defaults, any other name is "
        "allowed; a name makes no #define, a source generator reads it)")]
    values: Annotated[tuple[Value, ...] | Literal["open"], doc(
        "the domain, in order (the first value is the default); 'open' for an int computed from facts")]
    default: Annotated[int, doc("default of an open int feature")] = 0
    mode: Annotated[Literal["static", "specialization", "dynamic"], doc(
        "static: a #define in the key; specialization: a Vulkan specialization "
        "constant; dynamic: a runtime branch")] = "static"
    constant_id: Annotated[Annotated[int, Meta(ge=0)] | None, doc(
        "specialization constant id (specialization only)")] = None
    emit: Annotated[Literal["value", "ifdef", "symbol"], doc(
        "value: `NAME v` always; ifdef: a define only when the value is not the default; "
        "symbol (enums): `NAME NAME_<VALUE>` beside `NAME_<VALUE> i` for every value")] = "value"
    define: Annotated[Annotated[str, Meta(min_length=1)] | None, doc(
        "the define's name (default: the feature's name); for a set feature a template such as "
        "HAS_{key}_{type}")] = None
    key_name: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$", description=(
        "set features over a mapping: the template name of an entry's key"))] = field(default="key", name="as")
    when: Annotated[Expression | None, doc(
        "condition over features: otherwise the feature takes its default and emits no define")] = None
    runtime: Annotated[bool, doc(
        "a runtime axis: the renderer sets its value (no derive); every content key is cooked for each "
        "allowed value (pipeline.toml [axes] may restrict them)")] = False
    description: Annotated[str, doc("what the feature means")] = ""

    @classmethod
    def shape(cls, data: Any) -> Any:
        """The type follows from the values when it is left out (none: bool; integers or open: int; else enum)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        values = data.get("values")
        if "type" not in data:
            if values is None:
                data["type"] = "bool"
            elif values == "open" or (isinstance(values, list)
                                      and all(isinstance(v, int) and not isinstance(v, bool) for v in values)):
                data["type"] = "int"
            else:
                data["type"] = "enum"
        if data["type"] == "bool" and values is None:
            data["values"] = [False, True]
        if data["type"] == "set" and values is None:
            data["values"] = "open"
        return data

    @property
    def open(self) -> bool:
        return self.values == "open"

    def __post_init__(self) -> None:
        if self.open:
            if self.type not in ("int", "set"):
                raise ValueError("only int and set features may have open values")
        else:
            if self.type == "set":
                raise ValueError("a set feature's values are open (leave 'values' out)")
            _check_values(self.type, self.values)
        if self.type == "set" and not self.define:
            raise ValueError("a set feature needs a define template, e.g. define: HAS_{key}_{type}")
        if self.type == "set" and self.mode != "static":
            raise ValueError("a set feature is static (its defines are its value)")
        if self.emit == "symbol" and self.type != "enum":
            raise ValueError("emit: symbol is for enum features (NAME NAME_<VALUE>)")
        if self.runtime and (self.open or self.type in ("set", "name")):
            raise ValueError("a runtime axis lists its values (bool, int or enum)")
        if (self.mode == "specialization") != (self.constant_id is not None):
            raise ValueError("constant_id is required with mode specialization, and only there")


def _check_values(kind: str, values: tuple) -> None:
    if not values:
        raise ValueError("a feature needs at least one value")
    if len(set(map(repr, values))) != len(values):
        raise ValueError("feature values must be distinct")
    if kind == "bool" and not (len(values) == 2 and values[0] is False and values[1] is True):
        raise ValueError("a bool feature has the values [false, true]")
    if kind == "int" and not all(type(v) is int for v in values):
        raise ValueError("an int feature needs integer values")
    if kind == "name" and not all(isinstance(v, str) and NAME_TOKEN.match(v) for v in values):
        raise ValueError("name values are references of letters, digits and '_./#:-'")
    if kind == "enum" and not all(isinstance(v, str) and VALUE_TOKEN.match(v) for v in values):
        raise ValueError("enum values must be words of letters, digits and '_' (they become NAME_<VALUE> defines)")


class Case(Checked, kw_only=True):
    """One derive case: when ``when`` holds (or is absent), the feature takes ``value``."""

    when: Annotated[Expression | None, doc("condition over facts; absent means always")] = None
    value: Annotated[Value, doc("a feature value, or an expression over facts")]


class Derive(Checked, kw_only=True):
    """How facts set one feature: the first case that holds wins."""

    cases: Annotated[tuple[Case, ...], Meta(min_length=1, description="ordered cases")]

    @classmethod
    def shape(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"cases": data}
        if isinstance(data, (str, bool, int)):
            return {"cases": [{"value": data}]}
        return data


class NormalizeRule(Checked, kw_only=True):
    """When ``when`` holds, set the given features (canonicalization, Specialize())."""

    when: Annotated[Expression, doc("condition over feature values")]
    set: Annotated[dict[str, Value], Meta(min_length=1, description="feature -> value to set")]
    description: Annotated[str, doc("why the rule exists")] = ""


class Define(Checked, kw_only=True):
    """An extra #define: always, or only when ``when`` holds over the key's features."""

    value: Annotated[Value, doc("the define's value")] = 1
    when: Annotated[Expression | None, doc("condition over feature values")] = None

    @classmethod
    def shape(cls, data: Any) -> Any:
        return {"value": data} if isinstance(data, (str, bool, int)) else data


class Pass(Checked, kw_only=True):
    """A technique of the family with its own features, state and skips."""

    features: Annotated[tuple[str, ...] | Literal["all"], doc("features the pass reads, or 'all'")] = "all"
    skip_when: Annotated[Expression | None, doc("condition over features: no key for this pass")] = None
    normalize: Annotated[tuple[NormalizeRule, ...], doc("extra normalize rules for this pass")] = ()
    render_state: Annotated[dict[str, Expression], doc("render state overrides (facts and features)")] = {}
    defines: Annotated[dict[str, Define], doc("extra #defines of this pass")] = {}
    fallback: Annotated[dict[str, Value] | None, doc(
        "static feature values of a key always cooked for this pass (others take their "
        "default); the runtime draws with it when a draw's own key is missing")] = None
    description: Annotated[str, doc("what the pass draws")] = ""


class Fragment(Checked, kw_only=True):
    """One link of a fragment chain: a GLSL fragment file, used when ``when`` holds over the key."""

    file: Annotated[str, Meta(min_length=1, description="fragment file, relative to the materials folder")]
    when: Annotated[Expression | None, doc("condition over feature values; absent means always")] = None

    @classmethod
    def shape(cls, data: Any) -> Any:
        return {"file": data} if isinstance(data, str) else data

    def __post_init__(self) -> None:
        _check_inside(self.file)


_NAME = r"^[a-z][a-z0-9_]*$"


class RuleSet(Checked, kw_only=True):
    """One shader family: features, derive, normalize, passes, render state."""

    shader: Annotated[str, Meta(pattern=_NAME, description="family name (rules/<shader>.yaml)")]
    description: Annotated[str, doc("what the family renders")] = ""
    kind: Annotated[str, Meta(pattern=_NAME, description=(
        "how a key becomes source text: ubershader (sources + #defines), fragments (a linked chain of "
        "fragment files), materialx (a generated graph), or a source generator plug-in's kind"))] = "ubershader"
    transforms: Annotated[tuple[str, ...], doc(
        "source transform plug-ins run on this family's stage text, in order, after pipeline.toml's "
        "(entry-point names, module:attr, or path.py:attr relative to this file)")] = ()
    fact_providers: Annotated[tuple[str, ...], doc(
        "fact provider plug-ins whose facts (ext.<provider>.<fact>) this family's expressions read "
        "(entry-point names, module:attr, or path.py:attr relative to this file)")] = ()
    sources: Annotated[dict[Literal["vertex", "fragment"], Source], doc("stage -> source (ubershader)")] = {}
    fragments: Annotated[tuple[Fragment, ...], doc("fragment files in chain order (kind fragments)")] = ()
    select: Annotated[Expression, doc("which draws use this family (facts)")] = "True"
    features: Annotated[dict[str, Feature], doc("permutation axes, by NAME")]
    derive: Annotated[dict[str, Derive], doc("feature -> how facts set it")] = {}
    normalize: Annotated[tuple[NormalizeRule, ...], doc("ordered canonicalization rules")] = ()
    passes: Annotated[dict[str, Pass], Meta(min_length=1, description="pass name -> pass")]
    render_state: Annotated[dict[str, Expression], doc("render state (facts and features)")] = {}
    defines: Annotated[dict[str, Define], doc("extra #defines of every pass")] = {}
    instance_inputs: Annotated[tuple[int, ...], doc("vertex input locations fed per instance")] = ()
    compile: Annotated[CompileTargets, doc(
        "compile targets (none: the cook's target); several give each key one set of blobs per target")] = ()
    path: Annotated[str, doc("where the rule set was loaded from (set by the loader)")] = ""
    _compiled: Compiled | None = None  # set by the loader (pipeline.rules.load), never read from the file

    def __post_init__(self) -> None:
        labels = [t.label for t in self.compile]
        if len(set(labels)) != len(labels):
            raise ValueError(f"compile targets must differ (by target and relaxed): {', '.join(labels)}")
        if self.kind == "ubershader" and not self.sources:
            raise ValueError("an ubershader family needs 'sources' (stage -> file)")
        if self.kind == "fragments" and not self.fragments:
            raise ValueError("a fragments family needs 'fragments' (the chain, in order)")
        if self.kind != "ubershader" and self.sources:
            raise ValueError(f"'sources' is for ubershader families; a {self.kind} family generates its sources")
        if self.kind != "fragments" and self.fragments:
            raise ValueError("'fragments' is for kind fragments")

    @property
    def compiled(self) -> "Compiled":
        return self._compiled

    def with_compiled(self, compiled: Compiled) -> "RuleSet":
        """This rule set with its compiled form (the loader's, or one with more axes)."""
        return msgspec.structs.replace(self, _compiled=compiled)

    def domain(self, name: str) -> Domain:
        return self.compiled.domains[name]
