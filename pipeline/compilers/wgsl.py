"""The ``webgpu`` target's blob: WGSL text translated from the validated Vulkan SPIR-V by naga.

naga (gfx-rs, the shader translator inside wgpu and Firefox) comes as the npm package
``naga-wasm``: naga compiled to WebAssembly, run by Node.js.  The project installs it
with its own lock file (``tools/naga``: ``npm ci``, run by ``script/bootstrap``).  Each
compiling process starts one long-lived Node process on its first ``webgpu`` job
(:class:`Translator`, the driver ``naga_driver.mjs`` beside this module) and hands it
module after module over a pipe: naga parses the SPIR-V, validates the module and writes
WGSL.  The process ends when its compiling process does (its stdin closes).

Where the package is: ``PIPELINE_NAGA_WASM`` (the folder of an installed ``naga-wasm``),
else ``tools/naga/node_modules/naga-wasm`` of the project this module was loaded from.
A missing Node.js or package is a :class:`ToolchainError` naming what to run.

:func:`identity` (the package's version, the naga version it carries, the driver's
digest) is in every ``webgpu`` job key, so another naga recompiles.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import os
import re
import select
import shutil
import struct
import subprocess
import tempfile
import threading
from pathlib import Path

from pipeline.compilers.request import CompileRequest
from pipeline.compilers.toolchain import ToolchainError

DRIVER = Path(__file__).with_name("naga_driver.mjs")
PACKAGE = "naga-wasm"
ENV = "PIPELINE_NAGA_WASM"
PROJECT_PACKAGE = Path(__file__).resolve().parents[2] / "tools" / "naga" / "node_modules" / PACKAGE
TIMEOUT = 120  # seconds one translation may take
INSTALL = "run script/bootstrap (npm ci in tools/naga)"


class TranslateError(ValueError):
    """naga refused a module (its stage: ``parse``, ``validation`` or ``write``, and its message in one line)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def package_dir() -> Path:
    """The installed ``naga-wasm`` folder (``PIPELINE_NAGA_WASM``, else the project's ``tools/naga``)."""
    override = os.environ.get(ENV)
    found = Path(override) if override else PROJECT_PACKAGE
    if not (found / "package.json").is_file():
        where = f"{ENV}={override}" if override else str(found)
        raise ToolchainError(f"the webgpu target needs the npm package {PACKAGE} ({where} holds none): "
                             f"{INSTALL}, or set {ENV} to an installed {PACKAGE} folder", found)
    return found


def node() -> str:
    """The ``node`` executable."""
    found = shutil.which("node")
    if found is None:
        raise ToolchainError(f"the webgpu target needs Node.js on PATH to run naga ({INSTALL}; "
                             "Debian packages nodejs and npm)", "node")
    return found


@functools.cache
def identity() -> str:
    """The naga that translates: the package version, the naga version it carries and the driver's digest."""
    folder = package_dir()
    version = json.loads((folder / "package.json").read_text(encoding="utf-8")).get("version", "unknown")
    carried = re.search(r'nagaVersion\s*=\s*"([^"]+)"', _read(folder / "dist" / "version.js"))
    driver = hashlib.sha256(DRIVER.read_bytes()).hexdigest()[:16]
    return f"{PACKAGE} {version} (naga {carried.group(1) if carried else 'unknown'}); driver sha256:{driver}"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def summary(formatted: str) -> str:
    """naga's report in one line: its ``error:`` and note lines, without source frames or repeats."""
    kept: list[str] = []
    for line in formatted.splitlines():
        text = line.strip()
        if not text or text.startswith(("│", "┌", "└", "|")) or re.match(r"^\d+\s*[│|]", text):
            continue
        text = re.sub(r"^(error|= note|=)\s*:?\s*", "", text).strip()
        if text and text not in kept:
            kept.append(text)
    return "; ".join(kept) or "refused"


class Translator:
    """One Node process running the driver: :meth:`translate` a module at a time, as many as asked."""

    def __init__(self) -> None:
        entry = package_dir() / "dist" / "node.js"
        self.errors = tempfile.TemporaryFile()  # node's own messages: a file, so no pipe fills up unread
        self.process = subprocess.Popen([node(), str(DRIVER), str(entry)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.errors)
        self.lock = threading.Lock()
        self.translations = 0
        status, text = self._receive()
        if status != 0:
            raise ToolchainError(f"naga's driver did not start: {text}", PACKAGE)
        self.naga_version = text

    def translate(self, spirv: bytes) -> str:
        """The WGSL of a SPIR-V module; :class:`TranslateError` when naga refuses it."""
        with self.lock:
            try:
                self.process.stdin.write(struct.pack("<I", len(spirv)) + bytes(spirv))
                self.process.stdin.flush()
            except (BrokenPipeError, OSError):
                self._ended("stopped")
            status, text = self._receive()
            self.translations += 1
        if status == 0:
            return text
        if status == 1:
            kind, _, message = text.partition("\t")
            raise TranslateError(kind, summary(message))
        self.close()
        raise TranslateError("internal", f"naga failed: {text.splitlines()[0] if text else 'no message'}")

    def _receive(self) -> tuple[int, str]:
        head = self._read(5)
        status, size = struct.unpack("<BI", head)
        return status, self._read(size).decode("utf-8")

    def _read(self, size: int) -> bytes:
        out = self.process.stdout
        data = b""
        while len(data) < size:
            ready, _, _ = select.select([out], [], [], TIMEOUT)
            if not ready:
                self.close()
                raise ToolchainError(f"naga's driver gave no answer in {TIMEOUT} s", PACKAGE)
            chunk = os.read(out.fileno(), size - len(data))
            if not chunk:
                self._ended("ended")
            data += chunk
        return data

    def _ended(self, how: str):
        self.process.wait(timeout=TIMEOUT)
        self.errors.seek(0)
        err = self.errors.read().decode(errors="replace").strip().splitlines()
        raise ToolchainError(f"naga's driver (node) {how}, exit {self.process.returncode}: "
                             f"{err[-1] if err else 'no message'}", PACKAGE)

    def release(self) -> None:
        """Close this process's ends of the pipes (a dead driver's unsent bytes are dropped)."""
        for pipe in (self.process.stdin, self.process.stdout, self.errors):
            with contextlib.suppress(OSError):
                pipe.close()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """End the process (its stdin closed: it exits) and wait for it."""
        self.release()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_TRANSLATORS: dict[int, Translator] = {}  # process id -> its translator
_START = threading.Lock()


def translator() -> Translator:
    """This process's translator, started on first use (a forked compile worker starts its own: the one it
    inherited answers its parent)."""
    pid = os.getpid()
    with _START:
        current = _TRANSLATORS.get(pid)
        if current is None or not current.alive:
            for stale in _TRANSLATORS.values():
                stale.release()  # only this process's copies: a parent keeps its own
            _TRANSLATORS.clear()
            current = _TRANSLATORS[pid] = Translator()
    return current


def close() -> None:
    """End this process's translator (at exit)."""
    current = _TRANSLATORS.pop(os.getpid(), None)
    if current is not None:
        current.close()


def text_problem(request: CompileRequest, text: str) -> str | None:
    """Why ``text`` is not the WGSL of ``request``'s stage (None: it can be): it must declare the stage's
    entry point (``@vertex fn main(``), under the request's entry name or ``main``."""
    names = {m.group(1) for m in re.finditer(rf"@{request.stage}\s+fn\s+(\w+)\s*\(", text)}
    if request.entry not in names and "main" not in names:
        return f"the WGSL text declares no @{request.stage} function {request.entry!r}"
    return None


def to_wgsl(spirv: bytes) -> str:
    """The WGSL text of a SPIR-V module, by this process's translator."""
    return translator().translate(spirv)


atexit.register(close)
