"""Shared fixtures: the third-party glTF corpus and a writer for generated glTF files."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import struct
import sys
import warnings
from pathlib import Path

import pytest

# A run started in the background (nohup, `cmd &` in a script) ignores SIGINT, and every process
# it starts inherits that: the Ctrl-C tests need SIGINT delivered to the processes they start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

CORPUS_ENV = "PIPELINE_CORPUS"

# PIPELINE_TEST_NO_FCNTL=1: the whole suite with ``import fcntl`` failing (as on Windows), in this
# process and in the Python subprocesses that keep the inherited PYTHONPATH.
# The build-farm tests are left out there: Dask's own lock library needs fcntl or msvcrt.
collect_ignore = []
if os.environ.get("PIPELINE_TEST_NO_FCNTL"):
    sys.modules["fcntl"] = None
    warnings.filterwarnings("ignore", "only soft file lock")  # filelock without fcntl or msvcrt
    _masking = str(Path(__file__).resolve().parent / "nofcntl")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_masking, os.environ.get("PYTHONPATH")) if p)
    collect_ignore = ["e2e/test_farm.py", "unit/compile/test_farm_trust.py", "e2e/test_farm_failures.py"]


# A skip for a part that the project's own install step provides (script/bootstrap test: the
# Debian packages, the extras) means that install step is broken: under CI (CI=true), such a
# skip is a failure, so a green CI cannot hide a missing dependency. Skips for what a machine
# may truly lack (root, a tmpfs mount, another compiler build than the pinned one) stay skips.
AVOIDABLE_SKIP = re.compile(r"not installed|cannot run here|not found|no module named", re.I)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI") and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        if AVOIDABLE_SKIP.search(reason):
            report.outcome = "failed"
            report.longrepr = f"skipped under CI, though script/bootstrap installs what it needs: {reason}"


def corpus_path() -> Path | None:
    """$PIPELINE_CORPUS when set, else the corpus/ folder of this repository (see corpus/SOURCES.md)."""
    if os.environ.get(CORPUS_ENV):
        return Path(os.environ[CORPUS_ENV])
    bundled = Path(__file__).resolve().parents[1] / "corpus"
    return bundled if bundled.is_dir() else None


@pytest.fixture(scope="session")
def corpus() -> Path:
    found = corpus_path()
    if found is None or not found.is_dir():  # the corpus ships in the repository: its absence is a broken checkout
        pytest.fail(f"glTF corpus not found at {found or 'corpus/'} (set {CORPUS_ENV} to another copy)")
    return found


def glb_bytes(document: dict, binary: bytes | None = None) -> bytes:
    """A GLB container holding ``document`` as its JSON chunk and ``binary`` as its BIN chunk."""
    text = json.dumps(document).encode()
    text += b" " * (-len(text) % 4)
    body = struct.pack("<II", len(text), 0x4E4F534A) + text
    if binary is not None:
        binary += b"\0" * (-len(binary) % 4)
        body += struct.pack("<II", len(binary), 0x004E4942) + binary
    return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    """A copy of the sample world at ``tmp_path / "world"``, with ``tmp_path`` the working folder (a test
    module with another kind of site defines its own ``site``)."""
    from paths import SAMPLE_WORLD

    shutil.copytree(SAMPLE_WORLD, tmp_path / "world")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def write_gltf():
    """write_gltf(path, document, binary=None): a .gltf (JSON) or .glb (container) file."""

    def write(path: Path, document: dict, binary: bytes | None = None) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".glb":
            path.write_bytes(glb_bytes(document, binary))
        else:
            path.write_text(json.dumps(document, indent=1))
        return path

    return write


@pytest.fixture(scope="module")
def blobs(tmp_path_factory) -> dict[str, bytes]:
    """SPIR-V the reflection tests read (tests/reflect_helpers.py): name -> blob."""
    from reflect_helpers import compiled_blobs

    return compiled_blobs(tmp_path_factory.mktemp("lib"))


# ------------------------------------------------------------------ the farm tests' shared fixtures
# (module-scoped: each farm test module gets its own; Dask is imported only when one is used)
@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The outputs of a local cook of the sample world, to compare every farm cook with."""
    from farm_helpers import reference_cook

    return reference_cook(tmp_path_factory.mktemp("local"))


@pytest.fixture(scope="module")
def farm():
    """A LocalCluster whose workers load the fault preload (tests/farm_faults.py), and the worker
    that misbehaves when told to."""
    from farm_helpers import fault_cluster

    with fault_cluster() as (client, victim):
        yield client, victim
