"""Inputs that are not what they seem: FIFOs, devices, explosive pipeline.toml values, and
reads that would leave the world, rules or materials roots.

Every case runs the real ``pipeline`` command with a timeout: a hang fails the test, as
does a traceback or an exit code other than 0/1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest
from robust_helpers import ROOT, copy_world, document, gltf_text, run_cli

from pipeline.config import ConfigError, parse_world_config

TIMEOUT = 60


def no_crash(proc) -> None:
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr


def colored_triangle(folder: Path, uri: str) -> Path:
    """A glTF whose COLOR_0 data the rules read from the external buffer ``uri``."""
    doc = document(uri=uri)
    doc["meshes"][0]["primitives"][0]["attributes"]["COLOR_0"] = 0
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.gltf").write_bytes(gltf_text(doc))
    return folder / "a.gltf"


def zero_device(path: Path) -> None:
    """A character device node like /dev/zero (endless zeros) at ``path``."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_buffer_that_is_a_fifo_or_device_is_a_located_warning_not_a_hang(tmp_path, kind):
    if kind == "device" and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    colored_triangle(tmp_path / "world" / "lv" / "c0", "data.bin")
    target = tmp_path / "world" / "lv" / "c0" / "data.bin"
    os.mkfifo(target) if kind == "fifo" else zero_device(target)
    proc = run_cli("keys", tmp_path / "world", "--cache", tmp_path / "cache", timeout=TIMEOUT)
    no_crash(proc)
    assert proc.returncode == 0 and re.search(r"^\d+ keys for 1 draws", proc.stdout, re.M)
    assert f"lv/c0/a.gltf: /buffers/0/uri: warning: buffer file not read: cannot read: not a regular file (a {kind.replace('fifo', 'FIFO')})" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_gltf_name_that_is_a_device_or_fifo_is_a_located_error_and_the_rest_cooks(tmp_path, kind):
    if kind == "device" and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    world = copy_world(tmp_path / "world")
    bad = world / "forest" / "c00" / "zero.glb"
    os.mkfifo(bad) if kind == "fifo" else zero_device(bad)
    proc = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-q", "-j", "1",
                   timeout=TIMEOUT)
    no_crash(proc)
    assert proc.returncode == 1
    assert "forest/c00/zero.glb: error: cannot read: not a regular file" in proc.stderr
    assert (tmp_path / "out" / "town.level.json").is_file() and (tmp_path / "out" / "forest" / "c00.json").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_rule_set_pipeline_toml_and_since_that_are_not_regular_files(tmp_path, target):
    def place(path: Path) -> None:
        if path.exists():
            path.unlink()
        os.mkfifo(path) if target == "fifo" else path.symlink_to(target)

    kind = "a FIFO" if target == "fifo" else "a device"
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    place(rules / "zz.yaml")
    proc = run_cli("rules", "check", "--rules", rules, timeout=TIMEOUT)
    no_crash(proc)
    assert f"zz.yaml: error: cannot read rule set: not a regular file ({kind})" in proc.stderr

    world = copy_world(tmp_path / "world")
    place(world / "pipeline.toml")
    proc = run_cli("keys", world, "--cache", tmp_path / "cache", timeout=TIMEOUT)
    no_crash(proc)
    assert proc.returncode == 1 and f"pipeline.toml: error: cannot read: not a regular file ({kind})" in proc.stderr

    since = tmp_path / "old.json"
    place(since)
    proc = run_cli("report", ROOT / "examples" / "sample_world", "--since", since, "--cache", tmp_path / "cache",
                   timeout=TIMEOUT)
    no_crash(proc)
    assert proc.returncode == 1
    assert f"{since}: error: cannot read earlier report: not a regular file ({kind})" in proc.stderr


def test_a_configured_folder_that_is_a_fifo_is_a_located_error(tmp_path):
    world = copy_world(tmp_path / "world")
    os.mkfifo(world / "my_rules")
    (world / "pipeline.toml").write_text('rules = "my_rules"\n')
    proc = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", tmp_path / "out", timeout=TIMEOUT)
    no_crash(proc)
    assert proc.returncode == 1 and "pipeline.toml: error: rules: 'my_rules' is not a folder" in proc.stderr


# ---------------------------------------------------------------- pipeline.toml
@pytest.mark.parametrize("text, message", [
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ("level_depth = 1" + "0" * 5000 + "\n", "invalid TOML"),
    ("level_depth = 10000000000000000000000\n", "level_depth: expected int <= 64, got 10000000000000000000000"),
    ("[limits]\nmax_file_bytes = 99999999999999999999\n", "limits.max_file_bytes"),
])
def test_pipeline_toml_deep_nesting_and_huge_integers_are_located_errors(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        parse_world_config(text)
    world = copy_world(tmp_path / "world")
    (world / "pipeline.toml").write_text(text)
    proc = run_cli("keys", world, "--cache", tmp_path / "cache", timeout=TIMEOUT)
    no_crash(proc)
    assert proc.returncode == 1 and proc.stderr.startswith("pipeline.toml") and message in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and len(proc.stderr) < 600


# ---------------------------------------------------------------- reads outside the roots
def test_a_gltf_symlink_leaving_the_world_is_a_located_error_unless_allowed(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(ROOT / "examples" / "sample_world" / "forest" / "c00" / "terrain.gltf", outside / "terrain.gltf")
    world = copy_world(tmp_path / "world")
    (world / "forest" / "c00" / "env.gltf").symlink_to("/proc/self/environ")
    (world / "forest" / "c00" / "far.gltf").symlink_to(outside / "terrain.gltf")
    (world / "forest" / "c00" / "near.gltf").symlink_to("../c01/rocks.gltf")  # stays inside: fine
    proc = run_cli("scan", world, "--cache", tmp_path / "cache", "--json", timeout=TIMEOUT)
    no_crash(proc)
    assert proc.returncode == 1
    errors = {(e["file"], e["message"].split(" (to ")[0]) for e in json.loads(proc.stdout)["errors"]}
    assert errors == {("forest/c00/env.gltf", "glTF file leads outside the allowed roots"),
                      ("forest/c00/far.gltf", "glTF file leads outside the allowed roots")}
    files = {d["file"] for d in json.loads(proc.stdout)["draws"]}
    assert "forest/c00/near.gltf" in files and "forest/c00/far.gltf" not in files

    (world / "pipeline.toml").write_text('allowed_roots = ["../elsewhere"]\n')
    proc = run_cli("scan", world, "--cache", tmp_path / "cache", "--json", timeout=TIMEOUT)
    errors = {e["file"] for e in json.loads(proc.stdout)["errors"]}
    assert errors == {"forest/c00/env.gltf"}
    assert "forest/c00/far.gltf" in {d["file"] for d in json.loads(proc.stdout)["draws"]}


@pytest.mark.parametrize("source", ["../../../etc/passwd", "/etc/passwd", "pbr/../../outside.frag"])
def test_a_rule_set_source_leaving_the_materials_folder_is_a_located_error(tmp_path, source):
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    text = (rules / "pbr.yaml").read_text().replace("fragment: pbr/pbr.frag", f"fragment: {source}")
    (rules / "pbr.yaml").write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if source in t)
    proc = run_cli("rules", "check", "--rules", rules, timeout=TIMEOUT)
    no_crash(proc)
    assert proc.returncode == 1
    assert f"pbr.yaml:{line}:" in proc.stderr and "leaves the materials folder" in proc.stderr


@pytest.mark.slow
def test_a_shader_symlink_leaving_materials_fails_its_jobs_unless_allowed(tmp_path):
    materials, shared = tmp_path / "materials", tmp_path / "shared"
    shutil.copytree(ROOT / "materials", materials)
    shared.mkdir()
    shutil.move(materials / "pbr" / "pbr.frag", shared / "pbr.frag")
    (materials / "pbr" / "pbr.frag").symlink_to(shared / "pbr.frag")
    world = copy_world(tmp_path / "world")
    (world / "pipeline.toml").write_text(f'materials = "{materials}"\n')
    proc = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-q", "-j", "1",
                   timeout=TIMEOUT)
    no_crash(proc)
    assert proc.returncode == 1
    assert "pbr/pbr.frag: error: shader source leads outside the allowed roots" in proc.stderr
    (world / "pipeline.toml").write_text(f'materials = "{materials}"\nallowed_roots = ["{shared}"]\n')
    proc = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-q", "-j", "1",
                   timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
