"""Hostile MaterialX documents: each fails its own key with one located line, and the rest cooks.

Every case runs the real ``pipeline cook`` command line in a subprocess (bounded by a
timeout, so a hang fails instead of blocking) on a copy of the sample world's
MaterialX chunk (``forest/c03``: two documents, ``surfaces/rust.mtlx`` and
``surfaces/glaze.mtlx``, and three ``gltf_pbr`` graphs), with the real compiler.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("MaterialX", reason="the materialx extra is not installed")

from pipeline.builtin import builtin_materials_dir  # noqa: E402
from pipeline.outputs.manifest import load_chunk_manifest  # noqa: E402
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
GLAZE_KEY = "DOCUMENT=surfaces/glaze.mtlx#M_glaze"
RUST_KEY = "DOCUMENT=surfaces/rust.mtlx#M_rust"


def make_world(tmp_path: Path) -> Path:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE / "forest" / "c03", world / "shrine")
    shutil.copytree(builtin_materials_dir(), world / "materials")
    (world / "pipeline.toml").write_text('materials = "materials"\n')
    return world


def cook(world: Path, *extra: str, cwd: Path | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    """``pipeline cook WORLD --json`` (from the world's folder unless ``cwd``), outputs beside the world."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.pop("PIPELINE_SCHEDULER", None)
    return subprocess.run([sys.executable, "-m", "pipeline", "cook", str(world), "--cache", str(world.parent / "cache"),
                           "--out", str(world.parent / "out"), "-j", "1", "--json", "-q", *extra],
                          capture_output=True, text=True, cwd=cwd or world, env=env, timeout=timeout)


def failed_alone(proc: subprocess.CompletedProcess, key: str, world: Path) -> tuple[str, dict]:
    """The one located error line of a cook of ``world`` where only the key ``key`` failed, and its JSON
    document; every other MaterialX key of the chunk cooked into its manifest."""
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and key in lines[0], proc.stderr
    doc = json.loads(proc.stdout)
    assert len(doc["errors"]) == 1
    manifest = load_chunk_manifest(world.parent / "out" / "shrine.json")
    cooked = [k for k in manifest.keys if k.startswith("mtlx/") and key not in k]
    assert len(cooked) == 3 and all(set(manifest.keys[k].stages) == {"vertex", "fragment"} for k in cooked)
    return lines[0], doc


# ------------------------------------------------------------------ a bad document: that key only
def _not_utf8(path: Path, outside: Path) -> None:
    path.write_bytes(b'<?xml version="1.0"?>\n<materialx version="1.39"> \xff\xfe </materialx>\n')


def _too_big(path: Path, outside: Path) -> None:
    with open(path, "wb") as f:  # sparse: over the 16 MiB limit without writing it
        f.truncate(16 * 2**20 + 1)


def _symlink_out(path: Path, outside: Path) -> None:
    shutil.copy(path, outside / "glaze.mtlx")
    path.unlink()
    path.symlink_to(outside / "glaze.mtlx")


@pytest.mark.parametrize("spoil, message", [
    (_not_utf8, "materials/surfaces/glaze.mtlx: error: not UTF-8 text (byte 49)"),
    (_too_big, "materials/surfaces/glaze.mtlx: error: file is 16777217 bytes, over the limit of 16777216"),
    (_symlink_out, "materials/surfaces/glaze.mtlx: error: shader source leads outside the allowed roots"),
], ids=["not-utf8", "too-big", "symlink-out"])
def test_a_bad_document_fails_its_key_only(tmp_path: Path, spoil, message: str) -> None:
    world = make_world(tmp_path)
    spoil(world / "materials" / "surfaces" / "glaze.mtlx", tmp_path)
    proc = cook(world)
    line, doc = failed_alone(proc, GLAZE_KEY, world)
    assert line.startswith(message)
    assert doc["errors"][0]["file"] == "materials/surfaces/glaze.mtlx"


# ------------------------------------------------------------------ XIncludes: inside the materials folder only
def split_rust(world: Path, href: str = "rust_graph.mtlx") -> Path:
    """rust.mtlx with its node graph moved to another document it XIncludes (line 4)."""
    rust = world / "materials" / "surfaces" / "rust.mtlx"
    text = rust.read_text()
    start, end = text.index("  <nodegraph"), text.index("  <gltf_pbr")
    graph = world / "materials" / "surfaces" / "rust_graph.mtlx"
    graph.write_text('<?xml version="1.0"?>\n<materialx version="1.39">\n' + text[start:end] + "</materialx>\n")
    head = text[:start].replace('<materialx version="1.39">',
                                '<materialx version="1.39" xmlns:xi="http://www.w3.org/2001/XInclude">')
    rust.write_text(head + f'  <xi:include href="{href}" />\n' + text[end:])
    return graph


@pytest.mark.parametrize("where", ["absolute", "parent"])
def test_an_xinclude_outside_the_materials_folder_is_refused(tmp_path: Path, where: str) -> None:
    world = make_world(tmp_path)
    secret = tmp_path / "secret.mtlx"  # a valid document: reading it would make the key cook
    href = str(secret) if where == "absolute" else "../../../secret.mtlx"
    shutil.move(split_rust(world, href), secret)
    line, _ = failed_alone(cook(world), RUST_KEY, world)
    assert line.startswith(f"materials/surfaces/rust.mtlx:4:3: error: XInclude '{href}' leads outside the "
                           "materials folder")


def test_an_xinclude_naming_a_fifo_fails_at_once(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    graph = split_rust(world)
    graph.unlink()
    os.mkfifo(graph)  # opened for reading, it would block until a writer comes
    proc = cook(world, cwd=graph.parent, timeout=90)  # the name resolves from the working folder too
    line, _ = failed_alone(proc, RUST_KEY, world)
    assert line.startswith("rust.mtlx:4:3: error: XInclude 'rust_graph.mtlx' cannot be read: "  # from its folder
                           "not a regular file (a FIFO)")


@pytest.mark.slow
def test_an_xincluded_document_is_part_of_the_closure_and_the_stamp(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    graph = split_rust(world)
    here = graph.parent  # where the XInclude's name also resolves from the working folder
    first = cook(world, cwd=here)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["compiled"] == 8
    again = cook(world, cwd=here)  # nothing changed: answered from the stamp
    assert again.returncode == 0 and json.loads(again.stdout)["compiled"] == 0
    graph.write_text(graph.read_text().replace('value="8.0, 8.0"', 'value="4.0, 4.0"'))
    changed = cook(world, "--explain", cwd=here)
    assert changed.returncode == 0, changed.stderr
    doc = json.loads(changed.stdout)
    assert doc["compiled"] == 2  # rust's vertex and fragment jobs, nothing else
    assert [line["reason"] for line in doc["explain"]] == ["source changed: surfaces/rust_graph.mtlx"] * 2


def test_an_xinclude_that_is_not_there_is_located(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    split_rust(world).unlink()
    line, _ = failed_alone(cook(world), RUST_KEY, world)
    assert line.startswith("materials/surfaces/rust.mtlx:4:3: error: XInclude 'rust_graph.mtlx' not found in the "
                           "materials folder")


# ------------------------------------------------------------------ a deep graph
def deep_document(depth: int) -> str:
    """A material whose roughness is a chain of ``depth`` nodes."""
    lines = ['<?xml version="1.0"?>', '<materialx version="1.39">',
             '  <constant name="n0" type="float"><input name="value" type="float" value="0.5" /></constant>']
    lines += [f'  <add name="n{i}" type="float"><input name="in1" type="float" nodename="n{i - 1}" />'
              f'<input name="in2" type="float" value="0.001" /></add>' for i in range(1, depth)]
    lines += [f'  <gltf_pbr name="SR_glaze" type="surfaceshader"><input name="roughness" type="float" '
              f'nodename="n{depth - 1}" /></gltf_pbr>',
              '  <surfacematerial name="M_glaze" type="material"><input name="surfaceshader" '
              'type="surfaceshader" nodename="SR_glaze" /></surfacematerial>', '</materialx>']
    return "\n".join(lines) + "\n"


def test_a_graph_a_thousand_nodes_deep_cooks(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    (world / "materials" / "surfaces" / "glaze.mtlx").write_text(deep_document(1200))
    proc = cook(world)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["errors"] == [] and doc["compiled"] == 8


# ------------------------------------------------------------------ XIncludes without compiling
XI = 'xmlns:xi="http://www.w3.org/2001/XInclude"'
TOP = f"""<?xml version="1.0"?>
<materialx version="1.39" {XI}>
  <xi:include href="parts/rough.mtlx" />
  <gltf_pbr name="SR_a" type="surfaceshader">
    <input name="roughness" type="float" nodename="rough" />
  </gltf_pbr>
  <surfacematerial name="M_a" type="material">
    <input name="surfaceshader" type="surfaceshader" nodename="SR_a" />
  </surfacematerial>
</materialx>
"""
PART = f"""<?xml version="1.0"?>
<materialx version="1.39" {XI}>
  <xi:include href="../a.mtlx" />
  EXTRA<constant name="rough" type="float"><input name="value" type="float" value="0.3" /></constant>
</materialx>
"""


def _generate(materials: Path, part: str):
    from pipeline.compilers import SourceTree
    from pipeline.plan.generate.materialx import MaterialxGenerator
    from pipeline.keys.key import PermutationKey

    (materials / "surfaces" / "parts").mkdir(parents=True)
    (materials / "surfaces" / "a.mtlx").write_text(TOP)
    (materials / "surfaces" / "parts" / "rough.mtlx").write_text(part)
    key = PermutationKey("mtlx", "forward", (("DOCUMENT", "surfaces/a.mtlx#M_a"),))
    return MaterialxGenerator(SourceTree(materials)).generate(None, key)["fragment"]


def test_nested_and_circular_xincludes_are_read_once_each_into_the_closure(tmp_path: Path) -> None:
    made = _generate(tmp_path, PART.replace("EXTRA", ""))
    assert made.problems == () and made.text is not None
    assert made.files == ("surfaces/a.mtlx", "surfaces/parts/rough.mtlx")


def test_an_error_in_an_included_document_is_located_there(tmp_path: Path) -> None:
    made = _generate(tmp_path, PART.replace("EXTRA", '<sparkle name="glitter" type="color3" />\n  '))
    (problem,) = made.problems
    assert (str(problem.location), problem.message) == (
        f"{tmp_path.resolve()}/surfaces/parts/rough.mtlx:4:3", "unknown node 'sparkle' of type color3: no MaterialX node definition")
    assert made.files == ("surfaces/a.mtlx", "surfaces/parts/rough.mtlx")
