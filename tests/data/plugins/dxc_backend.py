"""A compile backend plug-in for a D3D12 target: runs a DXC command line on the job's text.

The compiler is ``$DXC`` (a studio's own dxc), else the stand-in ``fake_dxc.py`` beside
this file.  Its errors (``FILE:LINE:COL: error: MESSAGE``) become located diagnostics at
the job's source.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from pipeline.compilers.plugins import BackendJob, BackendResult
from pipeline.errors import Diagnostic, Location

PROFILES = {"vertex": "vs_6_0", "fragment": "ps_6_0", "compute": "cs_6_0"}
ERROR = re.compile(r"^.*?:(\d+):(\d+): (error|warning): (.*)$")


class Dxc:
    name = "dxc"
    version = "1.0"

    def command(self) -> list[str]:
        dxc = os.environ.get("DXC")
        return [dxc] if dxc else [sys.executable, str(Path(__file__).with_name("fake_dxc.py"))]

    def compile(self, job: BackendJob) -> BackendResult:
        with tempfile.TemporaryDirectory() as scratch:
            source, out = Path(scratch) / "shader.hlsl", Path(scratch) / "shader.dxil"
            source.write_text(job.text, encoding="utf-8")
            defines = [arg for name, value in job.defines for arg in ("-D", f"{name}={value}")]
            run = subprocess.run([*self.command(), "-T", PROFILES[job.stage], "-E", job.entry, *defines,
                                  "-Fo", str(out), str(source)], capture_output=True, text=True)
            found = tuple(Diagnostic(Location(job.source, int(m[1]), int(m[2])), m[4], m[3])
                          for m in map(ERROR.match, run.stderr.splitlines()) if m)
            if run.returncode != 0:
                return BackendResult(None, found or (Diagnostic(Location(job.source), run.stderr.strip()),))
            return BackendResult(out.read_bytes(), found)
