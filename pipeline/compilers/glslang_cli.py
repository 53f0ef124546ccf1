"""The fallback and reference backend: one ``glslangValidator`` process per compile.

Command: ``glslangValidator -V --target-env <env> -S <stage> -e <entry>
[-D (HLSL input)] [--P <GLSL include extension>] -D<NAME>=<VALUE>... -I<root>
-o <tmp> <relpath>``, run with the materials root as working directory, so the
top-level file is reported under its root-relative name.  Targets: OpenGL is
``--target-env opengl``; webgl2 validates without ``-V`` and takes the blob from
``-E`` (cleaned as the C API backend cleans it); ``-R`` (relaxed rules),
``--amb --aml`` (auto mapping), ``--shift-<kind>-binding`` (:func:`binding_shifts`) and
``--glsl-version`` (a source without ``#version``) follow the request.  The stage is
then finished as part of its program (:func:`~pipeline.compilers.interfaces.program_output`).  glslangValidator turns ``-D`` macros into the
same preamble the C API backend sets; its includer searches the including file's
folder, then ``-I<root>``.  It cannot resolve ``#include <...>``: when a closure
has one, the compile runs on a copy of the closure in a temporary folder whose
includes are rewritten to the including-folder-relative paths
:class:`SourceTree` resolved (line numbers kept).  Names it reports are
normalized back to root-relative paths, so diagnostics match the C API backend's.
"""

from __future__ import annotations

import functools
import posixpath
import re
import subprocess
import tempfile
from pathlib import Path

from pipeline.compilers.preamble import (
    DEFAULT_VERSION,
    INCLUDE_EXTENSION,
    VERSION_RE,
    clean_preprocessed,
    compile_output,
    default_version,
    es_version,
    request_defines,
)
from pipeline.compilers.interfaces import program_output
from pipeline.compilers.request import CompileOutput, CompileRequest, binding_shifts, target_info
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.spirv_tools import tools_version
from pipeline.compilers.toolchain import ToolchainError, executable, tool_env

STAGE_ARG = {"vertex": "vert", "fragment": "frag", "compute": "comp"}
SHIFTED = ("sampler", "texture", "image", "ubo", "ssbo", "uav")


@functools.cache
def validator_version() -> str:
    """glslangValidator's own version (``'13.1.1'`` from ``Glslang Version: 11:13.1.1``)."""
    proc = subprocess.run([str(executable("glslangValidator")), "--version"], capture_output=True,
                          text=True, env=tool_env())
    match = re.search(r"Glslang Version:\s*(?:\d+:)?([\d.]+)", proc.stdout)
    if proc.returncode or not match:
        raise ToolchainError(f"glslangValidator --version failed: {proc.stderr.strip()}")
    return match.group(1)


def command(request: CompileRequest, root: Path, output: Path | None, preprocess: bool = False) -> list[str]:
    """The glslangValidator command line for one request (``preprocess``: ``-E`` to stdout)."""
    target = target_info(request.target)
    args = [str(executable("glslangValidator"))]
    if target.client == "vulkan" and not preprocess:
        args += ["-V", "--target-env", target.name] + (["-R"] if request.relaxed else [])
    elif target.client == "opengl" and not preprocess:
        args += ["--target-env", "opengl"]
    args += ["-S", STAGE_ARG[request.stage]]
    if not target.is_spirv and not preprocess:
        args.append("-l")  # validation only: -D and --P need linking
    if target.is_spirv and not preprocess:
        args += ["-e", request.entry]
    if request.auto_map and not preprocess:
        args += ["--amb", "--aml"]
    if not preprocess:
        for resource, shift in binding_shifts(request).items():
            args += [f"--shift-{SHIFTED[resource]}-binding", str(shift)]
    if request.language == "hlsl":
        args.append("-D")
    else:
        args += ["--P", INCLUDE_EXTENSION]
    args += [f"-D{name}={value}" for name, value in request_defines(request)]
    args.append("-E" if preprocess else "")
    out = ["-o", str(output)] if output is not None and target.is_spirv and not preprocess else []
    return [a for a in args if a] + [f"-I{root}", *out, request.source]


def _mirror(tree: SourceTree, request: CompileRequest, folder: Path) -> None:
    """Copy the request's closure under ``folder``, every include rewritten to the path
    :class:`SourceTree` resolves, relative to the including file's folder, and the
    ``#version`` line a source without one takes put first (``#line 1`` after it)."""
    for relpath in tree.files(request.source):
        lines = tree.read(relpath).split("\n")
        for include in tree.parsed(relpath).includes:
            found = tree.resolve(include.name, relpath, include.system)
            if found is not None:
                target = posixpath.relpath(found, posixpath.dirname(relpath) or ".")
                lines[include.line - 1] = re.sub(r'(?:"[^"]+"|<[^>]+>)', f'"{target}"', lines[include.line - 1], 1)
        path = folder / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "\n".join(lines)
        path.write_text(_versioned(request, text) if relpath == request.source else text)


def _versioned(request: CompileRequest, text: str) -> str:
    version, profile = default_version(request, False)
    if request.language != "glsl" or VERSION_RE.search(text) or (version, profile) == (DEFAULT_VERSION, None):
        return es_version(request, text)
    return f"#version {version} {profile or ''}".rstrip() + f"\n#line 1\n{text}"


class _Root:
    """Where a compile ran (a mirror's folder), naming files as the tree does."""

    def __init__(self, root: Path, tree: SourceTree):
        self.root, self.name = root, tree.name


class GlslangCliBackend:
    """glslangValidator in a subprocess per compile."""

    name = "cli"

    def __init__(self) -> None:
        self.identity = f"glslangValidator {validator_version()}; {tools_version()}"

    def compile(self, request: CompileRequest, tree: SourceTree) -> CompileOutput:
        """Compile one request; shader errors come back as diagnostics, never raised."""
        return program_output(self._raw(request, tree), request, tree, lambda linked: self._raw(linked, tree))

    def _raw(self, request: CompileRequest, tree: SourceTree) -> CompileOutput:
        """One stage as glslangValidator compiles it (before its program's interfaces are linked)."""
        if request.text is None:
            text = tree.read(request.source)  # a missing source is a located error, as with the C API
            system = any(i.system for f in tree.files(request.source) for i in tree.parsed(f).includes)
        else:
            text, system = request.text, False
        with tempfile.TemporaryDirectory() as folder:
            root: SourceTree | _Root = tree
            if request.text is None and (system or _versioned(request, text) != text):
                _mirror(tree, request, Path(folder) / "src")
                root = _Root(Path(folder) / "src", tree)
            output = Path(folder) / "out.spv"
            include, cwd, named = root.root, root.root, root
            if request.text is not None:  # a generated stage: its text under its name, in a scratch folder
                cwd, include, named = Path(folder) / "gen", tree.root, tree
                (cwd / request.source).parent.mkdir(parents=True, exist_ok=True)
                (cwd / request.source).write_text(_versioned(request, request.text), encoding="utf-8")
            proc = self._run(command(request, include, output), cwd)
            blob = output.read_bytes() if proc.returncode == 0 and output.exists() else None
            if proc.returncode == 0 and not target_info(request.target).is_spirv:
                blob = self._text(request, include, cwd)
        return compile_output(blob, proc.stdout + proc.stderr, request, named)

    def _run(self, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=tool_env())

    def _text(self, request: CompileRequest, root: Path, cwd: Path) -> bytes | None:
        """The GLSL ES blob: ``-E`` output, cleaned as the C API backend cleans it."""
        proc = self._run(command(request, root, None, preprocess=True), cwd)
        if proc.returncode:
            return None
        version, profile = default_version(request, False)
        return clean_preprocessed(proc.stdout, f"{version} {profile}" if profile else str(version)).encode()
