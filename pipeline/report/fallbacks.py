"""The fallback keys a cook of the same selection adds beside the required keys.

Each pass may declare a fallback key (:mod:`pipeline.keys.fallback`), cooked into
every chunk that has keys of its family.  The report's ``required`` counts what the
content needs; the fallbacks that no draw needs are listed apart
(``fallback_keys``), so the report's figures add up to the key count ``pipeline
cook`` prints ("36 keys (+3 fallback)").
"""

from __future__ import annotations

from pipeline.errors import Diagnostic, RuleError
from pipeline.keys.fallback import fallback_keys
from pipeline.keys.required import RequiredKeys


def fallback_rows(families, required: RequiredKeys) -> tuple[list[dict], list[Diagnostic]]:
    """The fallback keys of the families the required keys use that no draw requires, by key text
    (``{key, hash, shader, pass}``), and the errors of fallbacks that cannot be made."""
    used = sorted({key.shader for key in required.keys})
    rows, errors = {}, []
    for shader in used:
        try:
            declared = fallback_keys(families[shader])
        except RuleError as exc:
            errors += exc.diagnostics
            continue
        for key in declared.values():
            if key not in required.keys:
                rows[key.text] = {"key": key.text, "hash": key.hash, "shader": key.shader, "pass": key.pass_name}
    return [rows[text] for text in sorted(rows)], errors
