"""Malformed glTF inputs as data: every kind of bad file the reader must turn into one located error.

``CASES`` holds one :class:`Case` per kind.  ``case.write(path)`` creates the bad
file (or folder, FIFO, link) at ``path``; ``case.where`` is the location expected
right after the file name in the error line (``/json/pointer``, ``:LINE:COL`` or
``""`` for the whole file) and ``case.message`` a fragment of the message.  A case
may need a ``pipeline.toml`` (``case.config``) to set a tighter limit, or an
``open`` that fails (``case.deny``: a permission error injected in-process, since
the tests may run as root).

``make_world`` lays out a small world around one bad file: two good levels and a
good file next to the bad one, so tests can check that everything else still works.

The fault and concurrency tests share the rest: a copy of the sample world, the real
``pipeline`` command line, and checks that every visible output file parses.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline import api
from pipeline.outputs.manifest import (LEVEL_SUFFIX, library_path, load_chunk_manifest, load_level_manifest,
                                       stage_hashes)
from pipeline.outputs.chunk_table import load_table, table_path
from pipeline.outputs.pak import PakReader

# ---------------------------------------------------------------- valid content
POSITIONS = struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0)
DATA_URI = "data:application/octet-stream;base64," + base64.b64encode(POSITIONS).decode()
GLB_MAGIC, CHUNK_JSON, CHUNK_BIN = b"glTF", 0x4E4F534A, 0x004E4942


def document(uri: str | None = DATA_URI) -> dict:
    """A valid glTF: root node 0 -> child node 1 drawing a red triangle."""
    buffer = {"byteLength": len(POSITIONS)} | ({"uri": uri} if uri else {})
    return {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"children": [1]}, {"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [1, 0, 0, 1]}}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]}],
        "bufferViews": [{"buffer": 0, "byteLength": len(POSITIONS)}],
        "buffers": [buffer],
    }


def gltf_text(doc: dict) -> bytes:
    return json.dumps(doc, indent=1).encode()


def chunk(kind: int, data: bytes, pad: bytes = b" ") -> bytes:
    data += pad * (-len(data) % 4)
    return struct.pack("<II", len(data), kind) + data


def glb_container(body: bytes, *, magic: bytes = GLB_MAGIC, version: int = 2, length: int | None = None) -> bytes:
    """A GLB header (with the right total length unless given) followed by ``body``."""
    total = 12 + len(body) if length is None else length
    return struct.pack("<4sII", magic, version, total) + body


def glb(doc: dict | None = None, json_bytes: bytes | None = None, **header) -> bytes:
    """A valid GLB of ``doc`` (default: the triangle with its positions in the BIN chunk)."""
    doc = doc if doc is not None else document(uri=None)
    text = json_bytes if json_bytes is not None else json.dumps(doc).encode()
    return glb_container(chunk(CHUNK_JSON, text) + chunk(CHUNK_BIN, POSITIONS, b"\0"), **header)


# ---------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    name: str
    filename: str
    write: Callable[[Path], None]
    where: str
    message: str
    config: str = ""
    deny: bool = False

    def expected_prefix(self, file: str) -> str:
        where = f": {self.where}" if self.where.startswith("/") else self.where
        return f"{file}{where}: error: "


CASES: list[Case] = []


def _add(name: str, filename: str, write: Callable[[Path], None], where: str, message: str, **extra) -> None:
    CASES.append(Case(name, filename, write, where, message, **extra))


def raw(name: str, data: bytes, where: str, message: str, filename: str = "bad.gltf", **extra) -> None:
    _add(name, filename, lambda path: path.write_bytes(data), where, message, **extra)


def edit(name: str, change: Callable[[dict], object], where: str, message: str, **extra) -> None:
    """A .gltf made from the valid document by ``change(doc)`` (which edits it in place)."""
    doc = copy.deepcopy(document())
    change(doc)
    raw(name, gltf_text(doc), where, message, **extra)


def _set(path: str, value) -> Callable[[dict], None]:
    """Set a value at a '/'-separated path (created as needed); ``_DELETE`` removes the key."""
    def change(doc: dict) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.strip("/").split("/")]
        node = doc
        for part in parents:
            node = node[part] if not isinstance(part, str) else node.setdefault(part, {})
        if value is _DELETE:
            del node[last]
        else:
            node[last] = copy.deepcopy(value)
    return change


_DELETE = object()


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


# --- containers and bytes
raw("empty_gltf", b"", ":1:1", "invalid JSON")
raw("empty_glb", b"", "", "not a GLB file", filename="bad.glb")
raw("whitespace_only", b"  \n\t ", ":2:2", "invalid JSON")
raw("binary_garbage_gltf", bytes(range(256)), ":1:1", "invalid JSON")
raw("glb_truncated_header", b"glTF\x02\x00\x00\x00", "", "GLB: truncated header", filename="bad.glb")
raw("glb_truncated_body", glb()[:60], "", "GLB: header says", filename="bad.glb")
raw("glb_wrong_magic", b"glTX" + glb()[4:], "", "missing 'glTF' magic", filename="bad.glb")
raw("glb_version_1", glb(version=1), "", "unsupported container version 1", filename="bad.glb")
raw("glb_version_huge", glb(version=2**32 - 1), "", "unsupported container version 4294967295", filename="bad.glb")
raw("glb_header_length_short", glb(length=40), "", "GLB: header says 40 bytes", filename="bad.glb")
raw("glb_chunk_length_past_end",
    glb_container(struct.pack("<II", 10_000, CHUNK_JSON) + json.dumps(document(None)).encode()),
    "", "claims 10000 bytes", filename="bad.glb")
raw("glb_chunk_length_huge", glb_container(struct.pack("<II", 2**32 - 1, CHUNK_JSON) + b"{}  "),
    "", "claims 4294967295 bytes", filename="bad.glb")
raw("glb_first_chunk_bin", glb_container(chunk(CHUNK_BIN, POSITIONS) + chunk(CHUNK_JSON, b"{}")),
    "", "expected JSON", filename="bad.glb")
raw("glb_truncated_chunk_header", glb_container(chunk(CHUNK_JSON, json.dumps(document(None)).encode()) + b"\0\0\0\0"),
    "", "truncated chunk header", filename="bad.glb")
raw("glb_json_not_utf8", glb(json_bytes=b'{"asset": {"version": "2.0\xff\xfe"}}'), ":1:27", "invalid JSON",
    filename="bad.glb")
raw("glb_invalid_json", glb(json_bytes=b'{"asset": {"version": "2.0"},}'), ":1:30", "invalid JSON", filename="bad.glb")
raw("glb_empty_json_chunk", glb_container(chunk(CHUNK_JSON, b"")), ":1:1", "invalid JSON", filename="bad.glb")

# --- JSON text
raw("json_not_utf8", b'{"asset": {"version": "2.0\xc3\x28"}}', ":1:27", "invalid JSON")
raw("json_utf16", json.dumps(document()).encode("utf-16"), ":1:1", "invalid JSON")
raw("json_trailing_comma", b'{\n "asset": {"version": "2.0"},\n}', ":3:1", "invalid JSON")
raw("json_truncated", gltf_text(document())[:200], ":", "invalid JSON")
raw("json_top_level_array", b"[]", "/", "input should be an object")
raw("json_top_level_string", b'"glTF"', "/", "input should be an object")
raw("json_nan_literal", b'{"asset": {"version": "2.0"}, "scene": NaN}', "/scene", "")
raw("json_number_overflow", gltf_text(document()).replace(b'"baseColorFactor": [\n     1,', b'"baseColorFactor": [\n     1e999,'),
    "/materials/0/pbrMetallicRoughness/baseColorFactor/0", "finite number")

# --- wrong types and missing fields
edit("missing_asset", _set("asset", _DELETE), "/asset", "required property is missing")
edit("missing_asset_version", _set("asset/version", _DELETE), "/asset/version", "required property is missing")
edit("asset_version_3", _set("asset/version", "3.0"), "/asset/version", "unsupported glTF version '3.0'")
edit("asset_version_number", _set("asset/version", 2.0), "/asset/version", "valid string")
edit("asset_min_version_3", _set("asset/minVersion", "3.0"), "/asset/minVersion", "unsupported glTF minVersion")
edit("count_is_string", _set("accessors/0/count", "3"), "/accessors/0/count", "valid integer")
edit("index_is_float", _set("nodes/1/mesh", 0.0), "/nodes/1/mesh", "valid integer")
edit("index_is_bool", _set("nodes/1/mesh", True), "/nodes/1/mesh", "valid integer")
edit("nodes_is_object", _set("nodes", {"0": {}}), "/nodes", "input should be a valid array")
edit("material_is_list", _set("materials/0", []), "/materials/0", "input should be an object")
edit("factor_is_string", _set("materials/0/pbrMetallicRoughness/baseColorFactor", "red"),
     "/materials/0/pbrMetallicRoughness/baseColorFactor", "input should be a valid array")
edit("alpha_mode_unknown", _set("materials/0/alphaMode", "CUTOUT"), "/materials/0/alphaMode", "'OPAQUE', 'MASK'")
edit("missing_primitives", _set("meshes/0/primitives", _DELETE), "/meshes/0/primitives", "required property")
edit("empty_primitives", _set("meshes/0/primitives", []), "/meshes/0/primitives", "at least 1 item")
edit("missing_attributes", _set("meshes/0/primitives/0/attributes", _DELETE), "/meshes/0/primitives/0/attributes",
     "required property")
edit("missing_accessor_type", _set("accessors/0/type", _DELETE), "/accessors/0/type", "required property")
edit("missing_buffer_byte_length", _set("buffers/0/byteLength", _DELETE), "/buffers/0/byteLength",
     "required property")
edit("primitive_mode_7", _set("meshes/0/primitives/0/mode", 7), "/meshes/0/primitives/0/mode", "less than or equal to 6")
edit("extensions_is_list", _set("materials/0/extensions", []), "/materials/0/extensions", "input should be an object")

# --- dangling and negative indices
P0 = "/meshes/0/primitives/0"
edit("dangling_accessor", _set(f"{P0}/attributes/POSITION", 9), f"{P0}/attributes/POSITION", "accessor 9 does not exist")
edit("negative_accessor", _set(f"{P0}/attributes/POSITION", -1), f"{P0}/attributes/POSITION", "greater than or equal to 0")
edit("dangling_indices", _set(f"{P0}/indices", 4), f"{P0}/indices", "accessor 4 does not exist")
edit("dangling_material", _set(f"{P0}/material", 5), f"{P0}/material", "material 5 does not exist")
edit("negative_material", _set(f"{P0}/material", -2), f"{P0}/material", "greater than or equal to 0")
edit("dangling_mesh", _set("nodes/1/mesh", 3), "/nodes/1/mesh", "mesh 3 does not exist")
edit("negative_mesh", _set("nodes/1/mesh", -1), "/nodes/1/mesh", "greater than or equal to 0")
edit("dangling_child", _set("nodes/0/children/0", 7), "/nodes/0/children/0", "node 7 does not exist")
edit("negative_child", _set("nodes/0/children/0", -7), "/nodes/0/children/0", "greater than or equal to 0")
edit("dangling_skin", _set("nodes/1/skin", 0), "/nodes/1/skin", "skin 0 does not exist")
edit("negative_skin", _set("nodes/1/skin", -1), "/nodes/1/skin", "greater than or equal to 0")
edit("dangling_skin_joint", _set("skins", [{"joints": [0, 12]}]), "/skins/0/joints/1", "node 12 does not exist")
edit("dangling_scene", _set("scene", 3), "/scene", "scene 3 does not exist")
edit("negative_scene", _set("scene", -1), "/scene", "greater than or equal to 0")
edit("dangling_scene_root", _set("scenes/0/nodes/0", 9), "/scenes/0/nodes/0", "node 9 does not exist")
edit("dangling_texture", _set("materials/0/normalTexture", {"index": 2}), "/materials/0/normalTexture/index",
     "texture 2 does not exist")
edit("dangling_light", _set("nodes/1/extensions", {"KHR_lights_punctual": {"light": 0}}),
     "/nodes/1/extensions/KHR_lights_punctual/light", "light 0 does not exist")
edit("huge_index", _set("nodes/1/mesh", 2**40), "/nodes/1/mesh", "less than or equal to 4294967295")

# --- node hierarchy
edit("node_cycle", _set("nodes/1/children", [0]), "/scenes/0/nodes/0", "not a root node")
edit("node_cycle_unreachable", lambda d: d["nodes"].extend([{"children": [3]}, {"children": [2]}]),
     "/nodes/2/children/0", "nodes [2, 3] form a cycle")
edit("node_is_own_child", _set("nodes/1/children", [1]), "/nodes/1/children/0", "node 1 already has a parent")
edit("node_two_parents", lambda d: d["nodes"].append({"children": [1]}), "/nodes/2/children/0",
     "node 1 already has a parent (node 0)")

# --- accessor formats that do not exist
edit("accessor_type_unknown", _set("accessors/0/type", "VEC5"), "/accessors/0/type", "'SCALAR', 'VEC2'")
edit("accessor_component_int32", _set("accessors/0/componentType", 5124), "/accessors/0/componentType", "5120")
edit("accessor_normalized_float", _set("accessors/0/normalized", True), "/accessors/0/normalized",
     "normalized is only defined for 8- and 16-bit integer components, not FLOAT")
edit("color_scalar", lambda d: (d["accessors"].append({"componentType": 5126, "count": 3, "type": "SCALAR"}),
                                d["meshes"][0]["primitives"][0]["attributes"].update(COLOR_0=1)),
     f"{P0}/attributes/COLOR_0", "COLOR_0 must be VEC3 or VEC4")

# --- absurd sizes
edit("absurd_count", _set("accessors/0/count", 10**30), "/accessors/0/count", "less than or equal to 4294967295")
edit("zero_count", _set("accessors/0/count", 0), "/accessors/0/count", "greater than or equal to 1")
edit("too_many_nodes", lambda d: d["nodes"].extend({} for _ in range(20)), "/nodes",
     "22 entries, over the limit of 10 (limits.max_elements)", config="[limits]\nmax_elements = 10\n")
edit("file_over_size_limit", _set("asset/extras", {"padding": "x" * 3000}), "", "over the limit of 2000 "
     "(limits.max_file_bytes)", config="[limits]\nmax_file_bytes = 2000\n")
edit("deep_nesting_extras", _set("materials/0/extras", _nested(80)), "/materials/0/extras",
     "nested deeper than 64 levels")
raw("deep_nesting_anywhere", gltf_text(document())[:-2] + b', "animations": ' + b"[" * 20_000 + b"]" * 20_000 + b"}",
    ":", "recursion limit exceeded")
edit("huge_string", _set("materials/0/extras", {"note": "x" * 100_000}), "/materials/0/extras/note",
     "string of 100000 characters, over the limit of 65536")
edit("huge_key", _set("materials/0/extras", {"k" * 70_000: 1}), "/materials/0/extras", "string of 70000 characters")
edit("huge_extension_name", _set("extensionsUsed", ["EXT_" + "x" * 70_000]), "/extensionsUsed/0", "string of 70004")
edit("huge_integer_in_extras", _set("materials/0/extras", {"n": 2**70}), "/materials/0/extras/n",
     "integer does not fit in 64 bits")

# --- extensions and versions
edit("unknown_required_extension", lambda d: d.update(extensionsUsed=["EXT_quantum"], extensionsRequired=["EXT_quantum"]),
     "/extensionsRequired/0", "required extension 'EXT_quantum' is not supported")

# --- buffer URIs
U = "/buffers/0/uri"
edit("uri_parent_escape", _set("buffers/0/uri", "../../../../etc/passwd"), U, "points outside the world root")
edit("uri_percent_escape", _set("buffers/0/uri", "%2e%2e/%2e%2e/%2e%2e/etc/passwd"), U, "points outside the world root")
edit("uri_absolute", _set("buffers/0/uri", "/etc/passwd"), U, "is not a relative file path")
edit("uri_file_scheme", _set("buffers/0/uri", "file:///etc/passwd"), U, "is not a relative file path")
edit("uri_windows_drive", _set("buffers/0/uri", "C:\\Windows\\win.ini"), U, "is not a relative file path")
edit("uri_http", _set("buffers/0/uri", "http://example.com/a.bin"), U, "is not a relative file path")
edit("uri_nul_byte", _set("buffers/0/uri", "a%00b.bin"), U, "control characters")
edit("data_uri_bad_base64", _set("buffers/0/uri", "data:application/octet-stream;base64,AAAA$$$"), U,
     "not valid base64")
edit("data_uri_not_base64", _set("buffers/0/uri", "data:application/octet-stream,AAAA"), U, "not base64-encoded")
edit("data_uri_too_short", _set("buffers/0/uri", "data:application/octet-stream;base64,AAAA"), U,
     "holds 3 bytes, fewer than the buffer's byteLength 36")
edit("data_uri_over_limit", _set("buffers/0/uri", DATA_URI + "A" * 4000), U,
     "over the limit of 1000 (limits.max_data_uri_bytes)", config="[limits]\nmax_data_uri_bytes = 1000\n")


# --- things that are not readable files
def _folder(path: Path) -> None:
    path.mkdir()
    (path / "inner.txt").write_text("not a glTF")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _broken_link(path: Path) -> None:
    path.symlink_to(path.parent / "does-not-exist.gltf")


def _link_loop(path: Path) -> None:
    path.symlink_to(path.name)


def _valid(path: Path) -> None:
    path.write_bytes(gltf_text(document()))


_add("folder_named_gltf", "bad.gltf", _folder, "", "cannot read: a folder")
_add("fifo_named_gltf", "bad.gltf", _fifo, "", "cannot read: not a regular file")
_add("broken_symlink", "bad.gltf", _broken_link, "", "cannot read: No such file or directory")
_add("symlink_loop", "bad.gltf", _link_loop, "", "cannot read: Too many levels of symbolic links")
_add("permission_denied", "bad.gltf", _valid, "", "cannot read: Permission denied", deny=True)

CASES_BY_NAME = {c.name: c for c in CASES}
assert len(CASES_BY_NAME) == len(CASES), "case names must be unique"

# ---------------------------------------------------------------- worlds
BAD_CHUNK = "broken/c00"
GOOD_FILES = {"broken/c00/fine.gltf": "gltf", "forest/c00/tree.glb": "glb", "town/c00/house.gltf": "gltf"}
GOOD_CHUNKS = ("forest/c00", "town/c00")


def write_good(root: Path, relative: str, kind: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(glb() if kind == "glb" else gltf_text(document()))


def make_world(root: Path, case: Case | None = None) -> str | None:
    """A world with three good files and (when ``case`` is given) one bad file; returns its name."""
    for relative, kind in GOOD_FILES.items():
        write_good(root, relative, kind)
    if case is None:
        return None
    if case.config:
        (root / "pipeline.toml").write_text(case.config)
    name = f"{BAD_CHUNK}/{case.filename}"
    case.write(root / name)
    return name


# ---------------------------------------------------------------- error lines
LINE = re.compile(r"^(?P<file>[^:\n]+)(?::(?P<line>\d+):(?P<col>\d+)|: (?P<pointer>/[^:\n]*))?: error: (?P<message>[^\n]+)$")


def check_error_line(text: str, file: str, case: Case) -> None:
    """``text`` is one located error line for ``file`` as ``case`` expects."""
    match = LINE.match(text)
    assert match, f"not a located error line: {text!r}"
    assert match["file"] == file, text
    assert text.startswith(case.expected_prefix(file)) or (
        case.where == ":" and match["line"] is not None), f"{case.name}: expected {case.where!r} in {text!r}"
    assert case.message in match["message"], f"{case.name}: expected {case.message!r} in {text!r}"


def deny_reading(monkeypatch, path: Path) -> None:
    """Make opening ``path`` fail with EACCES (chmod 000 does not stop root)."""
    real_open = os.open
    target = os.fspath(path)

    def fake_open(file, flags, *args, **kwargs):
        if os.fspath(file) == target:
            raise PermissionError(13, "Permission denied", target)
        return real_open(file, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)


# ---------------------------------------------------------------- cooks and their outputs
ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample_world"
PIPELINE = str(Path(sys.executable).parent / "pipeline")
TEMP_NAME = re.compile(r"^\..+\.tmp-\d+-[0-9a-f]{8,}$")


def copy_world(dest: Path) -> Path:
    shutil.copytree(SAMPLE, dest)
    return dest


def cli(*args: object) -> list[str]:
    command = [PIPELINE] if os.path.exists(PIPELINE) else [sys.executable, "-c",
                                                           "from pipeline.cli import main; main()"]
    return [*command, *map(str, args)]


def run_cli(*args: object, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the CLI; messages name files from ``cwd`` (run from the world root: world-relative paths)."""
    return subprocess.run(cli(*args), capture_output=True, text=True, timeout=timeout, cwd=cwd)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    """The one located line a failed command printed (exit 1, no traceback, nothing else on stderr)."""
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def cook(world: Path, cache: Path, out: Path, **options) -> api.CookResult:
    return api.cook(world, cache=cache, out=out, jobs=1, **options)


def outputs(out: Path) -> dict[str, bytes]:
    """Every visible output file (relative path -> bytes); hidden temp files are not outputs."""
    found = {}
    for path in sorted(out.rglob("*")) if out.is_dir() else []:
        if path.is_file() and not path.name.startswith("."):
            found[path.relative_to(out).as_posix()] = path.read_bytes()
    return found


@contextlib.contextmanager
def opened_library(out: Path) -> Iterator[tuple[PakReader, Callable[[], bool]]]:
    """The output folder's library as one open file sees it, and ``in_place()``: whether the file at
    its path is still that one.  The file stays open meanwhile, so its inode cannot be reused by
    the library that replaces it.  FileNotFoundError when there is none."""
    path = library_path(out)
    with open(path, "rb") as f:
        inode = os.fstat(f.fileno()).st_ino
        reader = PakReader(f.read())

        def in_place() -> bool:
            try:
                return os.stat(path).st_ino == inode
            except FileNotFoundError:
                return False

        yield reader, in_place


def check_manifest(path: Path, out: Path) -> None:
    """A manifest parses; every blob a chunk index names is in the library ``shaders.pak``.

    Read as docs/formats.md tells readers: the library first, the index after.  When the
    index names a blob that library lacks, the check passes only if a cook replaced the
    library meanwhile (and then reads both again): the library on disk holds every blob of
    every chunk index on disk at every instant.
    """
    if path.name.endswith(LEVEL_SUFFIX + ".json"):
        load_level_manifest(path)
        return
    for _ in range(100):
        with opened_library(out) as (library, in_place):
            missing = stage_hashes(load_chunk_manifest(path)) - set(library.hashes())
            if not missing:
                return
            assert not in_place(), f"{path} names {len(missing)} blob(s) the library lacks"
    raise AssertionError(f"{path} kept changing")


def check_readable(out: Path) -> None:
    """Every output name parses (no partial file is ever visible); other names are writer temps.

    The outputs are chunk indexes, level manifests, one whole library ``shaders.pak``
    holding every blob the chunk indexes name and its chunk table; no other ``.pak`` exists.
    """
    for path in out.rglob("*") if out.is_dir() else []:
        if path.is_dir():
            continue
        if path.name.startswith(".") and not path.name.startswith(".root."):  # .root.*: the root chunk's outputs
            assert TEMP_NAME.match(path.name), f"unexpected hidden file {path}"
        elif path.suffix == ".json":
            check_manifest(path, out)
        elif path == library_path(out):
            with opened_library(out) as (library, _):
                library.verify()
        elif path == table_path(library_path(out)):
            check_table(path, out)
        else:
            raise AssertionError(f"unexpected output file {path}")


def check_table(path: Path, out: Path) -> None:
    """The library's chunk table parses whole; when it names the library on disk (its checksum), every
    position is one of that library's blobs.  A table naming another library is one a cook will
    write again (it replaced the library and has not settled yet, or was killed before)."""
    doc = json.loads(path.read_bytes())
    assert doc["format"] == 1 and isinstance(doc["chunks"], dict) and len(doc["library"]) == 64, path
    with contextlib.suppress(FileNotFoundError), opened_library(out) as (library, in_place):
        if doc["library"] == library.checksum:
            assert load_table(path, library.hashes(), library.checksum) is not None or not in_place(), path
