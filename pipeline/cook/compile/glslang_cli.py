"""The fallback and reference backend: one ``glslangValidator`` process per compile.

Command: ``glslangValidator -V --target-env <env> -S <stage> -e <entry>
[-D (HLSL input)] [--P <GLSL include extension>] -D<NAME>=<VALUE>... -I<root>
-o <tmp> <relpath>``, run with the materials root as working directory, so the
top-level file is reported under its root-relative name.  glslangValidator
turns ``-D`` macros into the same preamble the C API backend sets; its includer
searches the including file's folder, then ``-I<root>`` (``#include <...>`` is
not supported by this backend).  Names it reports are normalized back to
root-relative paths, so diagnostics match the C API backend's.
"""

from __future__ import annotations

import functools
import re
import subprocess
import tempfile
from pathlib import Path

from pipeline.cook.compile.preamble import INCLUDE_EXTENSION, compile_output
from pipeline.cook.compile.request import CompileOutput, CompileRequest, target_info
from pipeline.cook.compile.sources import SourceTree
from pipeline.cook.compile.spirv_tools import tools_version
from pipeline.cook.compile.toolchain import ToolchainError, executable, tool_env

STAGE_ARG = {"vertex": "vert", "fragment": "frag", "compute": "comp"}


@functools.cache
def validator_version() -> str:
    """glslangValidator's own version (``'13.1.1'`` from ``Glslang Version: 11:13.1.1``)."""
    proc = subprocess.run([str(executable("glslangValidator")), "--version"], capture_output=True,
                          text=True, env=tool_env())
    match = re.search(r"Glslang Version:\s*(?:\d+:)?([\d.]+)", proc.stdout)
    if proc.returncode or not match:
        raise ToolchainError(f"glslangValidator --version failed: {proc.stderr.strip()}")
    return match.group(1)


def command(request: CompileRequest, root: Path, output: Path) -> list[str]:
    """The glslangValidator command line for one request."""
    args = [str(executable("glslangValidator")), "-V", "--target-env", target_info(request.target).name,
            "-S", STAGE_ARG[request.stage], "-e", request.entry]
    if request.language == "hlsl":
        args.append("-D")
    else:
        args += ["--P", INCLUDE_EXTENSION]
    args += [f"-D{name}={value}" for name, value in request.defines]
    return args + [f"-I{root}", "-o", str(output), request.source]


class GlslangCliBackend:
    """glslangValidator in a subprocess per compile."""

    name = "cli"

    def __init__(self) -> None:
        self.identity = f"glslangValidator {validator_version()}; {tools_version()}"

    def compile(self, request: CompileRequest, tree: SourceTree) -> CompileOutput:
        """Compile one request; shader errors come back as diagnostics, never raised."""
        if request.text is None:
            tree.read(request.source)  # a missing source is a located error, as with the C API
        with tempfile.TemporaryDirectory() as folder:
            output = Path(folder) / "out.spv"
            cwd = tree.root
            if request.text is not None:  # a generated stage: its text under its name, in a scratch folder
                cwd = Path(folder) / "src"
                (cwd / request.source).parent.mkdir(parents=True, exist_ok=True)
                (cwd / request.source).write_text(request.text, encoding="utf-8")
            proc = subprocess.run(command(request, tree.root, output), cwd=cwd, capture_output=True,
                                  text=True, env=tool_env())
            spirv = output.read_bytes() if proc.returncode == 0 and output.exists() else None
        return compile_output(spirv, proc.stdout + proc.stderr, request, tree)
