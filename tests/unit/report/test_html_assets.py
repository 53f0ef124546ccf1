"""The report page's inline CSS and JS: well formed, and naming the classes and ids the page uses."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from pipeline.report.html_action import action_section, explanations_section, filter_box, history_section
from pipeline.report.html_assets import CSS, JS


def css_rules(css: str) -> list[tuple[str, str]]:
    """(selector, body) of every rule, at-rules opened; raises on unbalanced braces."""
    rules, depth, start, selector = [], 0, 0, []
    for i, ch in enumerate(css):
        if ch == "{":
            selector.append(css[start:i].strip())
            depth += 1
            start = i + 1
        elif ch == "}":
            assert depth > 0, f"unbalanced '}}' at {i}"
            depth -= 1
            rules.append((selector.pop(), css[start:i].strip()))
            start = i + 1
    assert depth == 0, "unclosed '{'"
    return rules


def classes_and_ids(html: str) -> tuple[set[str], set[str]]:
    classes = {c for value in re.findall(r'class="([^"]*)"', html) for c in value.split()}
    return classes, set(re.findall(r'id="([^"]*)"', html))


def page_parts() -> str:
    def section(title, intro, *parts, ident=""):
        return "".join(parts)

    doc = {"format": 1, "errors": [{"severity": "error"}], "totals": [{"required": 2}], "keys": [{}, {}],
           "budgets": [{"scope": "world", "name": "w", "required": 5, "budget": 3, "over": True},
                       {"scope": "level", "name": "l", "required": 1, "budget": 3, "over": False}],
           "since": {"old": "o.json", "added": [], "removed": [], "warning": "w"},
           "history": [{"label": "a", "required": 1, "binaries": 1, "bytes": 1},
                       {"label": "b", "required": 2, "binaries": 2, "bytes": 2}],
           "explanations": {"h": {"key": "k{A=1}", "hash": "0" * 64, "draws": [{"file": "f", "node": 0,
                                                                                 "material": None}] * 9,
                                  "rules": [], "normalize": []}}}
    return filter_box() + action_section(doc) + history_section(doc, section) + explanations_section(doc, section)


def test_css_is_balanced_and_every_rule_has_declarations() -> None:
    rules = css_rules(CSS)
    assert rules
    for selector, body in rules:
        assert selector, "a rule without a selector"
        assert body or selector.startswith("@"), f"{selector}: empty rule"


def test_css_styles_every_class_the_page_parts_use() -> None:
    classes, ids = classes_and_ids(page_parts())
    selectors = " ".join(s for s, _ in css_rules(CSS))
    styled = set(re.findall(r"\.([A-Za-z][\w-]*)", selectors))
    assert classes and classes - styled == set()
    assert {"filter", "filter-box", "filter-count"} <= ids
    assert {"filter", "filter-box", "filter-count"} <= set(re.findall(r"#([A-Za-z][\w-]*)", selectors))


def test_the_script_finds_the_filter_box_and_hides_with_a_styled_class() -> None:
    _, ids = classes_and_ids(filter_box())
    wanted = set(re.findall(r"getElementById\('([^']+)'\)", JS))
    assert wanted and wanted <= ids
    hidden = set(re.findall(r"toggle\('([^']+)'", JS))
    assert hidden == {"hidden-by-filter"} and ".hidden-by-filter" in CSS


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js on this machine to parse the script with")
def test_the_script_is_valid_javascript(tmp_path) -> None:
    path = tmp_path / "report.js"
    path.write_text(JS)
    run = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
