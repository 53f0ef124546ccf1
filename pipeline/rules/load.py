"""Loading rule sets: a folder's ``*.yaml`` files, each parsed, validated and compiled.

:func:`load_ruleset_text` reads one rule set with the located YAML loader
(:mod:`pipeline.rules.yaml_nodes`), validates it into a
:class:`~pipeline.rules.models.RuleSet` and compiles it
(:func:`~pipeline.rules.build.compile_ruleset`); :func:`load_rulesets` does so for every
file of a folder, within a size limit each, and reports every problem of every file at
once, a shader family defined twice included.  Given a cache folder, a rule file whose
text was loaded before is not parsed as YAML again: its remembered parse is validated
and compiled (:mod:`pipeline.rules.parsed`).
"""

from __future__ import annotations

from pathlib import Path

from pipeline.checked import Invalid, convert
from pipeline.errors import Diagnostic, Location, RuleError
from pipeline.fileio import read_text
from pipeline.rules.build import compile_ruleset
from pipeline.rules.models import RuleSet
from pipeline.rules.parsed import Missed, Recording, Remembered, Replay, encoded_data

MAX_RULESET_BYTES = 16 * 2**20


def load_rulesets(rules_dir: Path, *, materials_dir: Path | None = None, cache_dir: Path | None = None,
                  remember: bool = True) -> list[RuleSet]:
    """Load every ``*.yaml`` of ``rules_dir``, sorted by shader; all problems at once.  ``cache_dir``: where
    the parses of rule files are remembered (:mod:`pipeline.rules.parsed`; None: each file is parsed);
    ``remember``: a file parsed is remembered there (else remembered parses are only read)."""
    rules_dir, remembered = Path(rules_dir), Remembered(cache_dir, write=remember)
    if not rules_dir.is_dir():
        raise RuleError.at(display_path(rules_dir), "rules folder not found")
    rulesets, diagnostics = [], []
    for file in sorted(rules_dir.glob("*.yaml")):
        try:
            text = read_text(file, display_path(file), limit=MAX_RULESET_BYTES, error=RuleError, what="rule set")
            rulesets.append(load_ruleset_text(text, display_path(file), materials_dir=materials_dir,
                                              remembered=remembered, file=file))
        except RuleError as exc:
            diagnostics.extend(exc.diagnostics)
    diagnostics.extend(_duplicate_shaders(rulesets))
    if diagnostics:
        raise RuleError(diagnostics)
    return sorted(rulesets, key=lambda r: r.shader)


def display_path(path: Path) -> str:
    """A relative path as given; an absolute one relative to the working folder when inside it."""
    if path.is_absolute():
        try:
            return path.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return path.as_posix()
    return path.as_posix()


def _duplicate_shaders(rulesets: list[RuleSet]) -> list[Diagnostic]:
    seen: dict[str, RuleSet] = {}
    out = []
    for rs in rulesets:
        if rs.shader in seen:
            out.append(Diagnostic(Location(rs.path, 1, 1),
                                  f"shader '{rs.shader}' is already defined in {seen[rs.shader].path}"))
        seen.setdefault(rs.shader, rs)
    return out


def load_ruleset_text(text: str, path: str, *, materials_dir: Path | None = None,
                      remembered: Remembered | None = None, file: Path | None = None) -> RuleSet:
    """Parse, validate and compile one rule set from YAML text; ``path`` names it in messages.  With
    ``remembered`` and the ``file`` the text is from, a parse remembered for this text is compiled
    instead of the YAML, and the parse of a file that loads without a problem is remembered."""
    remember = remembered is not None and remembered.folder is not None and file is not None
    if remember:
        entry = remembered.get(file, text)
        data = None if entry is None else remembered.data(entry)
        if data is not None:
            try:
                return _compiled(data, path, Replay(path, entry), materials_dir)
            except (Missed, RuleError):
                pass  # parsed as YAML below: a problem is reported as a fresh parse reports it
    from pipeline.rules.yaml_nodes import YamlDocument  # PyYAML: imported only where a file is parsed

    doc = YamlDocument.parse(text, path)
    data = doc.data()
    if not isinstance(data, dict):
        raise RuleError(Diagnostic(doc.location(doc.root), "a rule set is a YAML mapping"))
    packed = encoded_data(data) if remember else None
    if packed is None:
        return _compiled(data, path, doc, materials_dir)
    recording = Recording(doc)
    ruleset = _compiled(data, path, recording, materials_dir)
    remembered.put(file, text, packed, recording)
    return ruleset


def _compiled(data: dict, path: str, doc, materials_dir: Path | None) -> RuleSet:
    """The rule set of a file's data, validated and compiled, located through ``doc``."""
    data["path"] = path
    try:
        ruleset = convert(data, RuleSet)
    except Invalid as exc:
        raise RuleError(doc.validation_diagnostics(exc.problems)) from None
    return ruleset.with_compiled(compile_ruleset(ruleset, doc, materials_dir))
