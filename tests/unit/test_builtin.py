"""Where the built-in rule sets and shader library live: inside an installed wheel, else the checkout's root."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import builtin
from pipeline.builtin import builtin_materials_dir, builtin_rules_dir
from paths import REPO


@pytest.fixture()
def package(tmp_path: Path, monkeypatch) -> Path:
    """A package folder of its own inside a fake checkout, with both folders at the checkout's root."""
    folder = tmp_path / "checkout" / "pipeline"
    folder.mkdir(parents=True)
    for name in ("rules", "materials"):
        (tmp_path / "checkout" / name).mkdir()
    monkeypatch.setattr(builtin, "PACKAGE_DIR", folder)
    return folder


def test_a_source_checkout_reads_the_folders_at_the_repository_root() -> None:
    assert builtin_rules_dir() == REPO / "rules"
    assert builtin_materials_dir() == REPO / "materials"


def test_the_checkout_s_folders_hold_rule_sets_and_shaders() -> None:
    assert sorted(p.name for p in builtin_rules_dir().glob("*.yaml"))  # one YAML per shader family
    assert any(builtin_materials_dir().rglob("*.frag")) and any(builtin_materials_dir().rglob("*.vert"))


def test_an_installed_wheel_reads_the_folders_inside_the_package(package: Path) -> None:
    for name in ("rules", "materials"):
        (package / "_builtin" / name).mkdir(parents=True)
    assert builtin_rules_dir() == package / "_builtin" / "rules"
    assert builtin_materials_dir() == package / "_builtin" / "materials"


def test_each_folder_is_looked_up_on_its_own(package: Path) -> None:
    (package / "_builtin" / "rules").mkdir(parents=True)  # only the rules carried inside
    assert builtin_rules_dir() == package / "_builtin" / "rules"
    assert builtin_materials_dir() == package.parent / "materials"


def test_a_file_named_like_the_folder_inside_the_package_is_not_the_folder(package: Path) -> None:
    (package / "_builtin").mkdir()
    (package / "_builtin" / "rules").write_text("not a folder\n")
    assert builtin_rules_dir() == package.parent / "rules"


def test_the_answers_are_absolute_wherever_the_process_runs(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert builtin_rules_dir().is_absolute() and builtin_rules_dir().is_dir()
    assert builtin_materials_dir().is_absolute() and builtin_materials_dir().is_dir()
